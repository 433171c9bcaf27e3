"""Compiled CSR x dense product (optional ``[fast]`` extra, numba); see :mod:`.sparse`."""

from __future__ import annotations

from numba import njit, prange


@njit(parallel=True, cache=True, fastmath=False)
def csr_matmul(indptr, indices, data, X, out):
    """``out = A @ X`` for a CSR matrix ``A`` (``indptr, indices, data``) and dense C-ordered
    ``X``; rows of ``out`` in parallel. O(nnz(A) K)."""
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
