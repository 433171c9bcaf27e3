"""Compiled CSR x dense product (optional ``[fast]`` extra, numba); see :mod:`.sparse`."""

from __future__ import annotations

import numpy as np
from numba import njit, prange


def check_csr_operands(indptr, indices, data, X, out) -> None:
    """Bounds of :func:`csr_matmul`'s operands, checked before the compiled loop runs.

    The loop reads ``X[indices[p]]`` and writes ``out[i]`` without bounds checks (a wrong
    index would read or write outside the arrays and may corrupt memory): ``indptr`` must
    have ``out.shape[0] + 1`` non-decreasing entries from 0 to at most ``len(indices)`` (=
    ``len(data)``), every index lie in ``[0, X.shape[0])``, and ``X``, ``out`` be 2-D with
    as many columns. O(nnz + n). Raises ``ValueError``.
    """
    if X.ndim != 2 or out.ndim != 2 or X.shape[1] != out.shape[1]:
        raise ValueError(f"csr_matmul: X and out must be 2-D with as many columns, got "
                         f"shapes {X.shape} and {out.shape}.")
    if indptr.ndim != 1 or indptr.shape[0] != out.shape[0] + 1:
        raise ValueError(f"csr_matmul: indptr has {indptr.shape[0]} entries for "
                         f"{out.shape[0]} rows of out (expected {out.shape[0] + 1}).")
    if indices.shape[0] != data.shape[0]:
        raise ValueError(f"csr_matmul: {indices.shape[0]} indices for {data.shape[0]} values.")
    if indptr[0] != 0 or indptr[-1] > indices.shape[0] or np.any(np.diff(indptr) < 0):
        raise ValueError("csr_matmul: indptr must rise from 0 to at most nnz.")
    used = indices[:indptr[-1]]
    if used.size and (used.min() < 0 or used.max() >= X.shape[0]):
        raise ValueError(f"csr_matmul: column indices must lie in [0, {X.shape[0]}), got "
                         f"[{used.min()}, {used.max()}].")


@njit(parallel=True, cache=True, fastmath=False)
def csr_matmul(indptr, indices, data, X, out):
    """``out = A @ X`` for a CSR matrix ``A`` (``indptr, indices, data``) and dense C-ordered
    ``X``; rows of ``out`` in parallel. O(nnz(A) K). Unchecked: callers validate the
    operands with :func:`check_csr_operands` first."""
    n = out.shape[0]
    k = X.shape[1]
    for i in prange(n):
        for j in range(k):
            out[i, j] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            col = indices[p]
            v = data[p]
            for j in range(k):
                out[i, j] += v * X[col, j]
    return out
