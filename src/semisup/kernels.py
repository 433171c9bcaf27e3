"""Kernels with the papers' conventions, computed blockwise with bounded memory.

* RBF: ``k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))`` (the LapSVM / SPORE width convention).
* Polynomial: ``k(x, x') = (gamma x^T x' + coef0)^degree``; the LapSVM paper's MNIST 3-vs-8
  kernel is the homogeneous ``(x^T x')^9`` on unit-norm vectors (``gamma=1, coef0=0``).
* Linear: ``x^T x'``.

The full matrix is built in row blocks so that the temporary memory stays at about
``block_bytes`` on top of the output, which can be float32 to halve memory. A request that
would not fit raises ``MemoryError`` with the estimate.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._validation import check_finite, check_memory

_KERNELS = ("rbf", "polynomial", "linear")


def _as_data(X, name):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {X.shape}.")
    check_finite(X, name)
    return X


def _sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _block(Xb, Y, kernel, params, y_norms):
    G = Xb @ Y.T
    G = G.toarray() if sp.issparse(G) else np.asarray(G)
    if kernel == "linear":
        return G
    if kernel == "polynomial":
        return (params["gamma"] * G + params["coef0"]) ** params["degree"]
    d2 = _sq_norms(Xb)[:, None] + y_norms[None, :] - 2.0 * G
    np.maximum(d2, 0.0, out=d2)
    return np.exp(-d2 / (2.0 * params["sigma"] ** 2))


def kernel_matrix(X, Y=None, kernel: str = "rbf", *, sigma: float = 1.0, degree: int = 3,
                  gamma: float = 1.0, coef0: float = 0.0, dtype=np.float64,
                  block_bytes: int = 64 * 2 ** 20) -> np.ndarray:
    """Kernel matrix ``K[i, j] = k(x_i, y_j)`` computed in row blocks.

    Parameters
    ----------
    X : array-like or sparse of shape (n, d)
    Y : array-like or sparse of shape (m, d), optional
        Defaults to ``X`` (then the result is exactly symmetric).
    kernel : {"rbf", "polynomial", "linear"}
    sigma : float
        RBF width (``exp(-||x-y||^2 / (2 sigma^2))``).
    degree, gamma, coef0 : polynomial ``(gamma <x, y> + coef0)^degree``.
    dtype : numpy dtype
        float64 (default) or float32 for the output; blocks are computed in float64.
    block_bytes : int
        Bound on the temporary memory of one block.

    Returns
    -------
    K : ndarray of shape (n, m) and the requested dtype

    Raises
    ------
    MemoryError
        If the n x m output would not fit; the message gives the size and suggests float32.
    """
    if kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of {_KERNELS}, got {kernel!r}.")
    if kernel == "rbf" and not sigma > 0:
        raise ValueError(f"sigma must be positive, got {sigma}.")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}.")
    X = _as_data(X, "X")
    symmetric = Y is None
    Y = X if symmetric else _as_data(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}.")
    n, m = X.shape[0], Y.shape[0]
    hint = "" if dtype == np.float32 else "Pass dtype=np.float32 to halve it."
    check_memory(float(n) * m * dtype.itemsize, f"a {n}x{m} {dtype.name} kernel matrix", hint)
    params = dict(sigma=float(sigma), degree=degree, gamma=gamma, coef0=coef0)
    y_norms = _sq_norms(Y) if kernel == "rbf" else None
    rows = max(1, int(block_bytes // (8 * 3 * max(m, 1))))
    K = np.empty((n, m), dtype=dtype)
    for start in range(0, n, rows):
        K[start:start + rows] = _block(X[start:start + rows], Y, kernel, params, y_norms)
    if symmetric and kernel == "rbf":
        np.fill_diagonal(K, 1.0)
    return K


def rbf_kernel(X, Y=None, sigma: float = 1.0, **kw) -> np.ndarray:
    """RBF kernel ``exp(-||x - y||^2 / (2 sigma^2))``; see :func:`kernel_matrix`."""
    return kernel_matrix(X, Y, "rbf", sigma=sigma, **kw)


def polynomial_kernel(X, Y=None, degree: int = 3, gamma: float = 1.0, coef0: float = 0.0,
                      **kw) -> np.ndarray:
    """Polynomial kernel ``(gamma <x, y> + coef0)^degree``; see :func:`kernel_matrix`."""
    return kernel_matrix(X, Y, "polynomial", degree=degree, gamma=gamma, coef0=coef0, **kw)


def linear_kernel(X, Y=None, **kw) -> np.ndarray:
    """Linear kernel ``<x, y>``; see :func:`kernel_matrix`."""
    return kernel_matrix(X, Y, "linear", **kw)
