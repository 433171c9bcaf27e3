"""Sparse (CSR) times dense products, on all cores when numba is installed.

scipy's CSR x dense product is single-threaded. With the optional ``[fast]`` extra the
product runs over rows in parallel (:mod:`._sparse_numba`, compiled once and cached); the
arithmetic per entry is the same float64 sum, so both paths agree to rounding.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._optional import available

#: below this many multiply-adds (``nnz(A) * X.shape[1]``) scipy's product is as fast
NUMBA_MIN_WORK = 500_000


def csr_dense_matmul(A, X, out=None, *, backend: str = "auto") -> np.ndarray:
    """``A @ X`` for a sparse ``A`` and a dense 2-D ``X``, O(nnz(A) * X.shape[1]).

    Parameters
    ----------
    A : scipy sparse matrix (converted to CSR if needed)
    X : ndarray of shape (A.shape[1], k)
    out : ndarray of shape (A.shape[0], k), optional
        Written in place by the compiled path.
    backend : {"auto", "numba", "scipy"}
        ``auto`` uses numba when it is installed and the product is large enough.
    """
    if backend not in ("auto", "numba", "scipy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'scipy', got {backend!r}.")
    X = np.asarray(X)
    use_numba = backend == "numba" or (
        backend == "auto" and X.ndim == 2 and A.nnz * X.shape[1] >= NUMBA_MIN_WORK
        and X.dtype == np.float64 and available("numba"))
    if not use_numba:
        R = A @ X
        if out is not None:
            out[...] = R
            return out
        return np.asarray(R)
    from ._sparse_numba import check_csr_operands, csr_matmul
    A = A if sp.isspmatrix_csr(A) or isinstance(A, sp.csr_array) else sp.csr_matrix(A)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != A.shape[1]:
        raise ValueError(f"X must have shape ({A.shape[1]}, k) to multiply A of shape "
                         f"{A.shape}, got {X.shape}.")
    if out is None:
        out = np.empty((A.shape[0], X.shape[1]), dtype=np.float64)
    elif out.shape != (A.shape[0], X.shape[1]) or out.dtype != np.float64:
        raise ValueError(f"out must be a float64 array of shape "
                         f"{(A.shape[0], X.shape[1])}, got {out.dtype} {out.shape}.")
    data = np.asarray(A.data, dtype=np.float64)
    check_csr_operands(A.indptr, A.indices, data, X, out)
    return csr_matmul(A.indptr, A.indices, data, X, out)
