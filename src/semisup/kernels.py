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

:func:`make_kernel` is the one entry point of the kernel methods (LapSVM, LapRLS): the
width from the data, the dtype, dense / sparse / precomputed / Dask input, the memory
check, and the PSD, degeneracy and magnitude checks, the last two read from the row blocks
as they are written (no pass over the kernel, no n x n temporary beside it).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ._validation import _as_numeric_matrix, check_finite, check_memory
from .engines import DEFAULT_ENGINE, engine_for_types

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
    # in place on two block-sized arrays, rounded as exp(-(|x|^2 + |y|^2 - 2 x.y)^+ / 2s^2)
    d2 = np.add.outer(_sq_norms(Xb), y_norms)
    G *= 2.0
    d2 -= G
    del G
    np.maximum(d2, 0.0, out=d2)
    if not params["rescaled"]:
        np.negative(d2, out=d2)
        d2 /= 2.0 * params["sigma"] ** 2
        return np.exp(d2, out=d2)
    # rescaled points: sigma may be tiny, so (d / sigma)^2 rather than d^2 / sigma^2; it may
    # overflow to inf for far-apart points, whose kernel value 0 is then exact
    np.sqrt(d2, out=d2)
    d2 /= params["sigma"]
    with np.errstate(over="ignore"):
        np.square(d2, out=d2)
    d2 *= -0.5
    return np.exp(d2, out=d2)


def _prepare(X, Y, kernel, sigma, degree, gamma, coef0):
    """``(X, Y, params)`` for :func:`_fill` (``Y is X`` for the symmetric kernel)."""
    params = dict(sigma=float(sigma), degree=int(degree), gamma=float(gamma),
                  coef0=float(coef0), rescaled=False)
    if kernel == "rbf":
        # ||x||^2 overflows float64 from |x| ~ 1e154 (inf - inf = NaN where k = 0) and
        # vanishes below 1e-154: rescale points and width together (k is unchanged)
        symmetric = Y is X
        top = max(_max_abs(X), 0.0 if symmetric else _max_abs(Y))
        if top > _SAFE_MAGNITUDE or 0.0 < top < 1.0 / _SAFE_MAGNITUDE:
            # X / top, not X * (1 / top): 1 / top overflows for a subnormal top
            X = X / top
            Y = X if symmetric else Y / top
            params["sigma"] = params["sigma"] / top
            params["rescaled"] = True
    return X, Y, params


def _fill(X, Y, kernel, params, dtype, block_bytes, stats=False):
    """The kernel written in row blocks; with ``stats`` also what the checks need.

    Returns ``(K, top, row_top)``: ``top`` is the largest ``|K_ij|`` and ``row_top`` each
    row's largest entry off the diagonal (RBF), both read from each block as it is written,
    so the checks cost no pass over ``K`` and no n x n temporary (``None`` without
    ``stats``).
    """
    symmetric = Y is X
    n, m = X.shape[0], Y.shape[0]
    y_norms = _sq_norms(Y) if kernel == "rbf" else None
    rows = max(1, int(block_bytes // (8 * 3 * max(m, 1))))
    K = np.empty((n, m), dtype=dtype)
    top = 0.0
    row_top = np.zeros(n, dtype=dtype) if stats and kernel == "rbf" else None
    for start in range(0, n, rows):
        Kb = K[start:start + rows]
        with np.errstate(over="ignore", invalid="ignore"):
            Kb[...] = _block(X[start:start + rows], Y, kernel, params, y_norms)
        if kernel != "rbf":
            if not np.isfinite(Kb).all():
                raise ValueError(f"the {kernel} kernel overflows {dtype.name} on this input "
                                 f"(largest |x| = {max(_max_abs(X), _max_abs(Y)):.3g}); "
                                 "rescale X (and Y), e.g. to unit norm, or use the rbf "
                                 "kernel.")
            if stats and Kb.size:
                top = max(top, float(Kb.max()), -float(Kb.min()))
        elif stats and Kb.size:
            if symmetric:       # the diagonal (set to exactly 1 below) is no neighbour
                r = np.arange(Kb.shape[0])
                Kb[r, start + r] = 0.0
            row_top[start:start + rows] = Kb.max(axis=1)
    if kernel == "rbf":
        top = 1.0 if K.size else 0.0
        if symmetric:
            np.fill_diagonal(K, 1.0)
    return (K, top, row_top) if stats else (K, None, None)


def _fill_product(X, Y, kernel, params, T, dtype, block_bytes):
    """``k(X, Y) @ T`` in row blocks (the n x m kernel is never held), and each row's
    largest kernel value (RBF, for the degeneracy warning)."""
    n, m = X.shape[0], Y.shape[0]
    y_norms = _sq_norms(Y) if kernel == "rbf" else None
    rows = max(1, int(block_bytes // (8 * 3 * max(m, 1))))
    out = np.empty((n, T.shape[1]), dtype=dtype)
    row_top = np.zeros(n) if kernel == "rbf" else None
    for start in range(0, n, rows):
        with np.errstate(over="ignore", invalid="ignore"):
            Kb = _block(X[start:start + rows], Y, kernel, params, y_norms)
        if not np.isfinite(Kb).all():
            raise ValueError(f"the {kernel} kernel overflows float64 on this input (largest "
                             f"|x| = {max(_max_abs(X), _max_abs(Y)):.3g}); rescale X (and "
                             "Y), e.g. to unit norm, or use the rbf kernel.")
        if row_top is not None and Kb.size:
            row_top[start:start + rows] = Kb.max(axis=1)
        out[start:start + rows] = Kb @ T
    return out, row_top


def check_kernel_memory(n: int, m: int | None = None, *, dtype=np.float64, copies: int = 1,
                        workspace: float = 0.0, what: str | None = None,
                        hint: str | None = None) -> None:
    """Refuse, before any work, ``copies`` n x m kernels plus ``workspace`` bytes that
    would not fit in memory.

    The ``MemoryError`` gives the estimate, ``what`` needs it (default: the kernel) and
    ``hint`` (default: use float32); the budget is
    :func:`semisup._validation.check_memory`'s (``SEMISUP_MAX_MEMORY`` overrides it).

    Examples
    --------
    >>> from semisup.kernels import check_kernel_memory
    >>> check_kernel_memory(100)                 # 80 kB fits
    """
    m = n if m is None else m
    dtype = np.dtype(dtype)
    if what is None:
        what = f"a {n}x{m} {dtype.name} kernel matrix"
    if hint is None:
        hint = "" if dtype == np.float32 else "Pass dtype=np.float32 to halve it."
    check_memory(float(copies) * n * m * dtype.itemsize + workspace, what, hint)


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
    dtype = _check_dtype(dtype)
    X = _as_data(X, "X")
    Y = X if Y is None else _as_data(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}.")
    check_kernel_memory(X.shape[0], Y.shape[0], dtype=dtype)
    X, Y, params = _prepare(X, Y, kernel, sigma, degree, gamma, coef0)
    return _fill(X, Y, kernel, params, dtype, block_bytes)[0]


def _check_dtype(dtype):
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}.") from None
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}.")
    return dtype


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


# -- the entry point of the kernel methods -------------------------------------------------

def scale_sigma(X) -> float:
    """RBF width matching scikit-learn's ``gamma="scale"``: ``sigma^2 = d Var(X) / 2``.

    Then ``k = exp(-||x - x'||^2 / (2 sigma^2))`` is ``exp(-2)`` at the mean squared distance
    between two points (``2 d Var(X)``), whatever the units of ``X``. ``Var(X)`` is the
    variance of all entries (``np.var(X)``), for a dense, sparse or dask ``X`` alike (a
    dask one is reduced on the workers, to the bit of the numpy value).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.kernels import scale_sigma
    >>> scale_sigma(np.array([[0.0, 0.0], [2.0, 2.0]]))
    1.0
    """
    top = float(abs(X).max()) if X.shape[0] * X.shape[1] else 0.0
    if not top > 0:
        return 1.0          # X = 0: any width gives the same (all-ones) kernel
    # values whose squares would overflow or vanish: computed on X / max|X| (otherwise on X
    # itself, so that a dask X gives the numpy result to the bit)
    scale = top if (top > 1e150 or top < 1e-150) else 1.0
    Xs = X / scale if scale != 1.0 else X
    if sp.issparse(Xs):
        # np.var of the dense matrix (the variance of all entries, one rule for dense and
        # sparse X), two-pass: stored entries, then the implicit zeros at distance mean
        size = Xs.shape[0] * Xs.shape[1]
        data = sp.csr_matrix(Xs).data
        mean = float(data.sum()) / size
        var = (float(((data - mean) ** 2).sum()) + (size - data.size) * mean ** 2) / size
    else:
        var = float(np.var(Xs))
    if not var > 0:
        return 1.0          # constant X: any width gives the same (all-ones) kernel
    return scale * float(np.sqrt(X.shape[1] * var / 2.0))


def make_kernel(X, Y=None, *, kernel: str = "rbf", sigma="scale", degree: int = 3,
                gamma: float = 1.0, coef0: float = 0.0, dtype=np.float64,
                training: bool | None = None, random_state=None, owner: str = "the model",
                checked: bool = False, transform=None, engine=None):
    """The kernel a kernel method trains or predicts with, with the checks it needs.

    One call per kernel: the RBF width from the data (``sigma="scale"``, see
    :func:`scale_sigma`), the output dtype, the memory check, and

    * points (dense or sparse): ``K[i, j] = k(x_i, y_j)`` by :func:`kernel_matrix`'s row
      blocks; an RBF kernel numerically zero off the diagonal (training) or to every
      training point (``Y``) for most rows warns (the width is far below the distances);
    * ``kernel="precomputed"``: ``X`` is the kernel (a sparse one densified after the
      memory check); a training kernel is checked symmetric PSD on a principal submatrix
      of at most 1000 rows (random above, seeded by ``random_state``: a principal
      submatrix of a PSD matrix is PSD, so the cost stays ``O(1000^3)``);
    * a dask ``X``: :class:`semisup.distributed.DaskKernel`, the row blocks on the workers
      (an operator with ``@``; no memory check in this process);
    * ``transform`` (an (m, r) matrix, with ``Y``): the product ``K @ transform`` instead of
      ``K``, each row block of ``k(X, Y)`` multiplied as it is computed, so the n x m
      kernel is never held (the reduced expansion's features ``K_nB T`` of LapSVM /
      LapRLS: memory ``n r`` plus one block); for a dask ``X`` the row blocks and their
      products stay on the workers and only the (n, r) product is gathered.

    A training kernel whose entries exceed 1e100 (float64) or 1e15 (float32) is refused:
    the solvers' products ``K alpha``, ``L K`` would overflow. The degeneracy and magnitude
    checks read the row blocks as they are written: no n x n temporary beside ``K``.

    Parameters
    ----------
    X : array-like, sparse or dask array of shape (n, d), or the (n, m) kernel
    Y : array-like, sparse or dask array of shape (m, d), optional
        The training points for a kernel between new points and them; ``None``: ``k(X, X)``.
    kernel : {"rbf", "polynomial", "linear", "precomputed"}
    sigma : float > 0 or "scale"
        RBF width; ``"scale"`` computes it from ``X`` (training).
    degree, gamma, coef0 :
        Polynomial kernel ``(gamma <x, y> + coef0)^degree``.
    dtype : {float64, float32}
        The kernel's dtype.
    training : bool, optional
        Whether this is the training kernel (checked PSD / for magnitude); default:
        ``Y is None``.
    random_state : int, RandomState or None
        Seeds the PSD check's principal submatrix.
    owner : str
        The estimator, named in the messages.
    checked : bool
        ``X`` (and ``Y``) were validated already (numeric, 2-D, finite): not again.
    transform : ndarray of shape (m, r), optional
        Return ``K @ transform`` (in ``dtype``; each block product in float64), computed
        row block by row block. Needs ``Y``.
    engine : Engine, optional
        The engine serving ``X`` and ``Y``, when the caller looked it up already (an
        estimator does once per fit); default: :func:`semisup.engines.engine_for_types` of
        their types.

    Returns
    -------
    K : ndarray of shape (n, m) (``(n, r)`` with ``transform``), or a kernel operator for a
        dask ``X`` (without ``transform``)
    sigma : float
        The RBF width used (1.0 for the other kernels, unless given).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.kernels import make_kernel
    >>> K, sigma = make_kernel(np.array([[0.0], [2.0]]))
    >>> sigma, K.round(3).tolist()
    (0.7071067811865476, [[1.0, 0.018], [0.018, 1.0]])
    """
    dtype = _check_dtype(dtype)
    training = Y is None if training is None else training
    if transform is not None:
        if Y is None or kernel == "precomputed":
            raise ValueError("transform needs the column points Y (K(X, Y) @ transform) "
                             "and a kernel computed from points.")
        transform = np.asarray(transform, dtype=np.float64)
        if transform.ndim != 2 or transform.shape[0] != Y.shape[0]:
            raise ValueError(f"transform must have shape ({Y.shape[0]}, r), got "
                             f"{transform.shape}.")
    if kernel == "precomputed":
        K = _dense(X, dtype, owner)
        if training:
            _warn_if_not_psd(K, random_state)
            _check_magnitude(K, max(float(K.max()), -float(K.min())) if K.size else 0.0)
        return K, (1.0 if sigma == "scale" else float(sigma))
    sigma = scale_sigma(X) if sigma == "scale" else float(sigma)
    kw = dict(sigma=sigma, degree=degree, gamma=gamma, coef0=coef0)
    if engine is None:
        engine = engine_for_types(type(X), type(Y))
    if engine.name != DEFAULT_ENGINE:   # e.g. row blocks on the Dask workers
        K = engine.kernel(X, Y, kernel, dtype=dtype, **kw)
        if training:
            _check_magnitude(K, K.max_abs())
        if transform is not None:
            # the row blocks' products on the workers; only the (n, r) result comes back
            return np.asarray(K @ transform, dtype=dtype), sigma
        return K, sigma
    if not checked:
        X = _as_data(X, "X")
        Y = None if Y is None else _as_data(Y, "Y")
    X = _float64(X)
    Y = X if Y is None else _float64(Y)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}.")
    n, m = X.shape[0], Y.shape[0]
    if transform is not None:
        check_kernel_memory(n, transform.shape[1], dtype=dtype, what=(
            f"the {n}x{transform.shape[1]} {dtype.name} kernel features"))
        X, Y, params = _prepare(X, Y, kernel, sigma, degree, gamma, coef0)
        out, row_top = _fill_product(X, Y, kernel, params, transform, dtype, 64 * 2 ** 20)
        if row_top is not None:
            _warn_if_degenerate(row_top, training)
        return out, sigma
    check_kernel_memory(n, m, dtype=dtype, hint=(
        ("" if dtype == np.float32 else "Use kernel_dtype='float32' to halve it (PCG "
         "accepts it). ") + f"{owner} needs the kernel in memory: use fewer unlabeled "
        "points, or a sparse precomputed kernel."))
    X, Y, params = _prepare(X, Y, kernel, sigma, degree, gamma, coef0)
    K, top, row_top = _fill(X, Y, kernel, params, dtype, 64 * 2 ** 20, stats=True)
    if row_top is not None:
        _warn_if_degenerate(row_top, training)
    if training:
        _check_magnitude(K, top)
    return K, sigma


def _float64(X):
    if sp.issparse(X):
        return X if (X.format == "csr" and X.dtype == np.float64) else \
            sp.csr_matrix(X, dtype=np.float64)
    return np.asarray(X, dtype=np.float64)


def _dense(K, dtype, owner):
    """A precomputed (possibly sparse) kernel as a dense array, memory checked first."""
    if sp.issparse(K):
        m, n = K.shape
        check_kernel_memory(m, n, dtype=dtype, what=(
            f"densifying the sparse {m}x{n} precomputed kernel"), hint=(
            ("" if dtype == np.float32 else "Use kernel_dtype='float32' to halve it. ")
            + f"{owner}'s solvers need the dense kernel: use fewer points or a low-rank "
            "kernel approximation."))
        return K.toarray().astype(dtype, copy=False)
    return np.asarray(K, dtype=dtype)


def _warn_if_not_psd(K, random_state=None, max_size=1000):
    """Warn when a precomputed kernel is not symmetric PSD, from the smallest eigenvalue of
    a (random, when ``n > max_size``) principal submatrix: ``O(max_size^3)``."""
    n = K.shape[0]
    idx = (np.arange(n) if n <= max_size else
           np.sort(check_random_state(random_state).choice(n, size=max_size, replace=False)))
    S = np.asarray(K[np.ix_(idx, idx)], dtype=np.float64)
    if not np.allclose(S, S.T, rtol=1e-5, atol=1e-8 * max(abs(S).max(), 1.0)):
        warnings.warn("the precomputed kernel is not symmetric; the objective is only "
                      "convex for a symmetric PSD kernel.", UserWarning, stacklevel=4)
        return
    lam = np.linalg.eigvalsh(0.5 * (S + S.T))
    if lam[0] < -1e-8 * max(abs(lam[-1]), 1.0):
        warnings.warn(f"the precomputed kernel is not positive semi-definite (eigenvalue "
                      f"{lam[0]:.3g}); the objective may be non-convex and the solvers may "
                      "fail. Add a ridge or use a valid kernel.", UserWarning, stacklevel=4)


def _warn_if_degenerate(row_top, training):
    """Warn when an RBF kernel is numerically zero off the diagonal (``training``) or to
    every training point, for most rows: no information reaches those points."""
    lost = row_top < np.finfo(row_top.dtype).eps * 10
    if lost.size and lost.mean() > 0.5:
        what, where = (("the training kernel", "between training points") if training else
                       ("the kernel between these points and the training points",
                        "to any training point"))
        warnings.warn(f"{what} is numerically zero for {lost.mean():.0%} of the points "
                      f"(largest value {float(row_top.max()):.3g} {where}): kernel_sigma is "
                      "far below the distances in X, so the predictions there carry no "
                      "information. Use kernel_sigma='scale' (the default) or a larger "
                      "kernel_sigma, or kernel_dtype='float64'.", UserWarning, stacklevel=4)


def _check_magnitude(K, top):
    """Refuse a kernel whose entries would overflow the solvers' products (``K alpha``,
    ``L K``, ``K^T K``) rather than give inf / NaN coefficients."""
    limit = 1e100 if K.dtype == np.float64 else 1e15
    if top > limit:
        raise ValueError(f"the kernel has entries up to {top:.3g}, too large for the "
                         f"solvers' products in {K.dtype.name} (limit {limit:g}): rescale "
                         "X (e.g. to unit norm for the polynomial and linear kernels) or "
                         "the precomputed kernel.")
