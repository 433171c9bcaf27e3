"""Kernels with the papers' conventions, computed blockwise with bounded memory.

* RBF: ``k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))`` (the LapSVM / SPORE width convention).
* Polynomial: ``k(x, x') = (gamma x^T x' + coef0)^degree``; the LapSVM paper's MNIST 3-vs-8
  kernel is the homogeneous ``(x^T x')^9`` on unit-norm vectors (``gamma=1, coef0=0``).
* Linear: ``x^T x'``.

The full matrix is built in row blocks so that the temporary memory stays at about
``block_bytes`` on top of the output, which can be float32 to halve memory. A request that
would not fit raises ``MemoryError`` with the estimate. Parameters are validated
declaratively (an error names the parameter and its allowed values); a kernel whose values
overflow the output dtype raises ``ValueError`` instead of returning inf or NaN.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ._validation import _as_numeric_matrix, check_finite, check_memory

_KERNELS = ("rbf", "polynomial", "linear")

#: magnitudes beyond which squared norms could overflow (or vanish): the RBF is then
#: computed on rescaled points (distances are scale-covariant, the width is rescaled too)
_SAFE_MAGNITUDE = 1e100


def _as_data(X, name):
    if sp.issparse(X):
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric, got dtype {X.dtype}.")
        X = sp.csr_matrix(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {X.shape}.")
    else:
        try:
            X = np.asarray(X)
        except ValueError as exc:  # ragged nested lists
            raise ValueError(f"{name} must be 2-D numeric: {exc}") from None
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {X.shape}.")
        X = np.asarray(_as_numeric_matrix(X, name), dtype=np.float64)
    check_finite(X, name)
    return X


def _sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _max_abs(X):
    data = X.data if sp.issparse(X) else X
    return float(np.abs(data).max()) if data.size else 0.0


def _block(Xb, Y, kernel, params, y_norms):
    G = Xb @ Y.T
    G = G.toarray() if sp.issparse(G) else np.asarray(G)
    if kernel == "linear":
        return G
    if kernel == "polynomial":
        return (params["gamma"] * G + params["coef0"]) ** params["degree"]
    d2 = _sq_norms(Xb)[:, None] + y_norms[None, :] - 2.0 * G
    np.maximum(d2, 0.0, out=d2)
    if not params["rescaled"]:
        return np.exp(-d2 / (2.0 * params["sigma"] ** 2))
    # rescaled points: sigma may be tiny, so (d / sigma)^2 rather than d^2 / sigma^2; it may
    # overflow to inf for far-apart points, whose kernel value 0 is then exact
    with np.errstate(over="ignore"):
        return np.exp(-0.5 * (np.sqrt(d2) / params["sigma"]) ** 2)


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "Y": ["array-like", "sparse matrix", None],
        "kernel": [StrOptions(set(_KERNELS))],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, None, None, closed="neither")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "block_bytes": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
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
    sigma : float > 0
        RBF width (``exp(-||x-y||^2 / (2 sigma^2))``).
    degree : int >= 1
        Polynomial degree.
    gamma, coef0 : float
        Polynomial ``(gamma <x, y> + coef0)^degree`` (finite).
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
    ValueError
        For invalid parameters or input, and when a polynomial or linear kernel overflows
        the output dtype (rescale the data). The RBF is computed on rescaled points when
        the magnitudes are extreme, so it is finite for every finite input.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.kernels import kernel_matrix
    >>> kernel_matrix(np.array([[0.0], [1.0]]), sigma=1.0).round(3)
    array([[1.   , 0.607],
           [0.607, 1.   ]])
    """
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}.") from None
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
    params = dict(sigma=float(sigma), degree=int(degree), gamma=float(gamma),
                  coef0=float(coef0), rescaled=False)
    if kernel == "rbf":
        # ||x||^2 overflows float64 from |x| ~ 1e154 (inf - inf = NaN where k = 0) and
        # vanishes below 1e-154: rescale points and width together (k is unchanged)
        top = max(_max_abs(X), 0.0 if symmetric else _max_abs(Y))
        if top > _SAFE_MAGNITUDE or 0.0 < top < 1.0 / _SAFE_MAGNITUDE:
            X = X * (1.0 / top)
            Y = X if symmetric else Y * (1.0 / top)
            params["sigma"] = params["sigma"] / top
            params["rescaled"] = True
    y_norms = _sq_norms(Y) if kernel == "rbf" else None
    rows = max(1, int(block_bytes // (8 * 3 * max(m, 1))))
    K = np.empty((n, m), dtype=dtype)
    for start in range(0, n, rows):
        with np.errstate(over="ignore", invalid="ignore"):
            K[start:start + rows] = _block(X[start:start + rows], Y, kernel, params, y_norms)
        if kernel != "rbf" and not np.isfinite(K[start:start + rows]).all():
            raise ValueError(f"the {kernel} kernel overflows {dtype.name} on this input "
                             f"(largest |x| = {max(_max_abs(X), _max_abs(Y)):.3g}); rescale "
                             "X (and Y), e.g. to unit norm, or use the rbf kernel.")
    if symmetric and kernel == "rbf":
        np.fill_diagonal(K, 1.0)
    return K


@validate_params({"X": ["array-like", "sparse matrix"],
                  "Y": ["array-like", "sparse matrix", None],
                  "sigma": [Interval(Real, 0, None, closed="neither")]},
                 prefer_skip_nested_validation=False)
def rbf_kernel(X, Y=None, sigma: float = 1.0, **kw) -> np.ndarray:
    """RBF kernel ``exp(-||x - y||^2 / (2 sigma^2))``; see :func:`kernel_matrix`.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.kernels import rbf_kernel
    >>> float(rbf_kernel(np.array([[0.0, 0.0]]), np.array([[0.0, 2.0]]), sigma=2.0)[0, 0])
    0.6065306597126334
    """
    return kernel_matrix(X, Y, "rbf", sigma=sigma, **kw)


@validate_params({"X": ["array-like", "sparse matrix"],
                  "Y": ["array-like", "sparse matrix", None],
                  "degree": [Interval(Integral, 1, None, closed="left")],
                  "gamma": [Interval(Real, None, None, closed="neither")],
                  "coef0": [Interval(Real, None, None, closed="neither")]},
                 prefer_skip_nested_validation=False)
def polynomial_kernel(X, Y=None, degree: int = 3, gamma: float = 1.0, coef0: float = 0.0,
                      **kw) -> np.ndarray:
    """Polynomial kernel ``(gamma <x, y> + coef0)^degree``; see :func:`kernel_matrix`.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.kernels import polynomial_kernel
    >>> polynomial_kernel(np.array([[1.0, 2.0]]), degree=2, coef0=1.0)
    array([[36.]])
    """
    return kernel_matrix(X, Y, "polynomial", degree=degree, gamma=gamma, coef0=coef0, **kw)


@validate_params({"X": ["array-like", "sparse matrix"],
                  "Y": ["array-like", "sparse matrix", None]},
                 prefer_skip_nested_validation=False)
def linear_kernel(X, Y=None, **kw) -> np.ndarray:
    """Linear kernel ``<x, y>``; see :func:`kernel_matrix`.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.kernels import linear_kernel
    >>> linear_kernel(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[11.]])
    """
    return kernel_matrix(X, Y, "linear", **kw)
