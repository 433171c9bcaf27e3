"""Shared input checks: labels with -1, affinities, finiteness, memory estimates.

Every estimator validates through these functions so that bad input fails the same way
everywhere: a ``ValueError`` (or ``MemoryError``) whose message says what is wrong and,
where possible, what to do instead.
"""

from __future__ import annotations

import numbers
import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning, DataConversionWarning

__all__ = [
    "ConvergenceWarning",
    "check_finite",
    "check_semisup_labels",
    "check_multilabel_target",
    "check_affinity",
    "check_square",
    "check_memory",
    "available_memory",
    "warn_convergence",
]

UNLABELED = -1


def check_finite(X, name: str = "X") -> None:
    """Raise ValueError if a dense or sparse array holds NaN or inf."""
    data = X.data if sp.issparse(X) else np.asarray(X)
    if data.dtype.kind in "fc" and not np.isfinite(data).all():
        n_bad = int((~np.isfinite(data)).sum())
        raise ValueError(f"{name} contains {n_bad} NaN or infinite value(s); "
                         "remove or impute them first.")


def _labeled_mask(y):
    if y.dtype.kind in "OUS":
        return np.array([not (v == UNLABELED or v == str(UNLABELED)) for v in y], dtype=bool)
    return y != UNLABELED


def check_semisup_labels(y, n_samples: int | None = None, *, min_classes: int = 2,
                         name: str = "y", estimator: str | None = None):
    """Validate a semi-supervised target vector where -1 marks unlabeled points.

    This is the library's one label convention (every estimator validates through it):
    class labels of any type, ``-1`` (or the string ``"-1"``) for an unlabeled point.
    Inputs that look like another convention are refused with a message that says what was
    understood: ``None`` (as ``y`` or as an entry), continuous targets, NaN, and targets
    that leave fewer than ``min_classes`` classes once ``-1`` is removed (e.g. ``{-1, +1}``
    with ``-1`` meant as a class).

    Returns
    -------
    y : ndarray of shape (n,)
        The input as an array (not a copy unless needed).
    classes : ndarray
        Sorted distinct labels of the labeled points.
    labeled : ndarray of bool
        Mask of labeled points.

    Raises
    ------
    ValueError
        If ``y`` is None, not 1-D, has the wrong length, holds NaN or None, is continuous,
        has no labeled point, or fewer than ``min_classes`` classes among the labeled
        points.
    """
    who = f"{estimator} " if estimator else ""
    if y is None:
        raise ValueError(f"{who}requires y to be passed, but the target y is None; give the "
                         "class of every labeled point and -1 for unlabeled points.")
    if sp.issparse(y):
        raise ValueError(f"{name} must be a 1-D array of class labels, got a sparse matrix.")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(f"A column-vector {name} was passed when a 1d array was expected; "
                      "it is raveled.", DataConversionWarning, stacklevel=3)
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}.")
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} entries but there are {n_samples} samples.")
    if y.dtype.kind == "O":
        if any(v is None for v in y):
            raise ValueError(f"{name} contains None; mark unlabeled points with -1.")
        if all(isinstance(v, (numbers.Real, np.number)) and not isinstance(v, (bool, np.bool_))
               for v in y):
            y = y.astype(np.float64)
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise ValueError(f"{name} contains NaN or inf; mark unlabeled points with -1.")
        if np.any(y != np.round(y)):
            raise ValueError(f"Unknown label type: continuous. {who}is a classifier: {name} "
                             "must hold class labels, with -1 for unlabeled points.")
    labeled = _labeled_mask(y)
    if not labeled.any():
        raise ValueError(f"{name} has no labeled point (all entries are -1); "
                         "at least one labeled point per class is needed.")
    classes = np.unique(y[labeled])
    if classes.size < min_classes:
        msg = (f"{name} has only {classes.size} class among its labeled points "
               f"({classes.tolist()}) once the -1 entries (unlabeled points) are removed; "
               f"at least {min_classes} are needed.")
        if (~labeled).any() and y.dtype.kind in "iuf":
            msg += (" If -1 is a class label here (a {-1, +1} coding), recode it, e.g. "
                    "y = (y + 1) // 2, and mark unlabeled points with -1.")
        raise ValueError(msg)
    if (y.dtype.kind in "iuf" and (~labeled).any() and classes.size == 2 and classes[0] == 0
            and classes[1] > 0):
        n_zero = int(np.count_nonzero(y == 0))
        if n_zero > y.size - n_zero:
            # {-1, 0, +1} with 0 the majority: the convention where 0 marks unlabelled
            # points and -1 / +1 are the classes, read here as -1 = unlabelled, 0 a class
            warnings.warn(
                f"{name} codes its labels as {{-1, 0, {classes[1]:g}}} with 0 the most "
                f"frequent ({n_zero} of {y.size}): read here as -1 = unlabeled and 0 a "
                f"class. If 0 marks unlabeled points and -1 is a class (another library's "
                f"convention), recode it: y = np.where(y == 0, -1, (y > 0).astype(int)).",
                UserWarning, stacklevel=3)
    return y, classes, labeled


def check_multilabel_target(Y, n_samples: int | None = None, *, name: str = "Y"):
    """Validate a multi-label target: an (n, t) indicator matrix, -1 for unobserved entries.

    The library's label convention for several binary tasks, as scikit-learn's indicator
    format (``{0, 1}``) with ``-1`` marking an unobserved entry. A 1-D ``Y`` is one task.

    Returns
    -------
    Y : ndarray of int8, shape (n, t)
    observed : ndarray of bool, shape (n, t)

    Raises
    ------
    ValueError
        For None, NaN, values other than ``{-1, 0, 1}`` (with the recoding that fits when
        the values look like a ``{-1, +1}`` or ``{0, 1}``-with-0-unobserved convention), or
        a task with no observed entry.
    """
    if Y is None:
        raise ValueError(f"the target {name} is None; give a {{0, 1}} indicator matrix with -1 "
                         "marking unobserved entries.")
    Yd = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    if Yd.dtype.kind == "O":
        if any(v is None for v in Yd.ravel()):
            raise ValueError(f"{name} contains None; mark unobserved entries with -1.")
        Yd = Yd.astype(np.float64)
    if Yd.ndim == 1:
        Yd = Yd[:, None]
    if Yd.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (samples x tasks), got shape {Yd.shape}.")
    if n_samples is not None and Yd.shape[0] != n_samples:
        raise ValueError(f"{name} has {Yd.shape[0]} rows but there are {n_samples} samples.")
    if Yd.dtype.kind == "b":
        Yd = Yd.astype(np.int8)
    if Yd.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numeric ({{0, 1}} with -1 for unobserved), got dtype "
                         f"{Yd.dtype}.")
    if Yd.dtype.kind == "f" and not np.isfinite(Yd).all():
        raise ValueError(f"{name} contains NaN or inf; mark unobserved entries with -1.")
    bad = ~np.isin(Yd, (-1, 0, 1))
    if bad.any():
        vals = np.unique(Yd[bad])[:5].tolist()
        raise ValueError(f"{name} holds values other than 0, 1 and -1 (e.g. {vals}); entries "
                         "are 1 (positive), 0 (negative) or -1 (unobserved).")
    Yd = Yd.astype(np.int8)
    observed = Yd != UNLABELED
    for j in range(Yd.shape[1]):
        vals = np.unique(Yd[observed[:, j], j])
        if vals.size == 0:
            raise ValueError(f"task {j} of {name} has no observed entry (all -1): there is no "
                             "information to predict it; drop that column.")
        if vals.size == 1 and (~observed[:, j]).any():
            hint = (" If -1 marks negatives here (a {-1, +1} coding), recode: "
                    "Y01 = (Y + 1) // 2 with unobserved entries set to -1."
                    if vals[0] == 1 else
                    " If 0 marks unobserved entries here, set them to -1 instead.")
            # a warning, not an error: sparse protocols (the matrix-completion paper's) do
            # produce tasks whose few observed labels are all of one class
            warnings.warn(f"task {j} of {name} has only the value {int(vals[0])} among its "
                          f"observed entries (-1 = unobserved); it is learned as a "
                          f"one-class task.{hint}", UserWarning, stacklevel=3)
    return Yd, observed


def check_square(A, name: str = "W") -> None:
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {A.shape}.")


def _as_numeric_matrix(A, name):
    """A dense 2-D float array from array-like input (object dtype holding numbers allowed)."""
    try:
        A = np.asarray(A)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(f"{name} must be a 2-D numeric matrix: {exc}") from None
    if A.dtype.kind == "O":
        try:
            A = A.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numeric, got dtype object holding non-numbers."
                             ) from None
    if A.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {A.dtype}.")
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got {A.ndim} dimension(s).")
    return A


def check_affinity(W, name: str = "W", *, allow_self_loops: bool = False,
                   symmetric_tol: float = 1e-10, copy: bool = False) -> sp.csr_matrix:
    """Validate an affinity (adjacency) matrix and return it as canonical float64 CSR.

    The matrix must be square, non-empty, finite, non-negative and symmetric (to
    ``symmetric_tol`` relative to its largest entry). The result is canonical: sorted
    indices, duplicates summed, no stored zeros (a stored zero is not an edge). Self-loops
    are removed (with a warning) unless ``allow_self_loops``. The input, including the index
    arrays of a sparse matrix, is never modified.
    """
    if sp.issparse(W):
        if W.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric, got dtype {W.dtype}.")
        if W.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got {W.ndim} dimension(s).")
        check_square(W, name)
        # always a copy: canonicalising a CSR in place would rewrite the caller's arrays
        W = sp.csr_matrix(W, dtype=np.float64, copy=True)
    else:
        W = _as_numeric_matrix(W, name)
        check_square(W, name)
        W = sp.csr_matrix(W, dtype=np.float64)
    if W.shape[0] == 0:
        raise ValueError(f"{name} is empty (shape {W.shape}); at least one point is needed.")
    W.sum_duplicates()   # also sorts the indices
    check_finite(W, name)
    W.eliminate_zeros()
    if W.nnz and W.data.min() < 0:
        raise ValueError(f"{name} has negative entries (min {W.data.min():.3g}); "
                         "affinities must be non-negative.")
    scale = W.data.max() if W.nnz else 0.0
    if W.nnz:
        asym = abs(W - W.T).max()
        if asym > symmetric_tol * max(scale, 1.0):
            raise ValueError(f"{name} is not symmetric (max |W - W.T| = {asym:.3g}); "
                             "symmetrize it, e.g. (W + W.T) / 2 or W.maximum(W.T).")
    if not allow_self_loops and W.diagonal().any():
        warnings.warn(f"{name} has non-zero diagonal entries (self-loops); they are ignored.",
                      UserWarning, stacklevel=2)
        W = drop_diagonal(W)
    return W


def divide(A, s: float):
    """``A / s`` entrywise, for a dense or sparse ``A`` and any positive finite ``s``.

    scipy's ``sparse / s`` (and ``A * (1 / s)``) multiply by ``1 / s``, which overflows to
    inf when ``s`` is subnormal (below ~5.6e-309): scaling points or weights of 1e-310 by
    their largest magnitude then gave inf and NaN (issue #30). A sparse ``A`` is copied
    and its stored values divided; a dense one is divided as an array (numpy or CuPy).
    """
    if hasattr(A, "tocsr") and hasattr(A, "data"):
        A = A.copy()
        A.data = A.data / s
        return A
    return A / s


def drop_diagonal(W) -> sp.csr_matrix:
    """``W`` (CSR) without its diagonal, canonical (sorted indices, no stored zeros).

    Subtracts the diagonal rather than ``setdiag(0)``, which some scipy versions (1.12)
    warn about as a change of the sparsity structure.
    """
    W = sp.csr_matrix(W)
    if W.diagonal().any():
        W = (W - sp.diags(W.diagonal(), format="csr")).tocsr()
    W.eliminate_zeros()
    W.sort_indices()
    return W


def available_memory() -> int:
    """Bytes of memory available to this process (MemAvailable on Linux, else 8 GiB)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 * 1024 ** 3


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def memory_budget(fraction: float = 0.8) -> float:
    """Bytes an allocation may take: ``fraction`` of the available memory, or the
    environment variable ``SEMISUP_MAX_MEMORY`` (bytes) when set."""
    limit = os.environ.get("SEMISUP_MAX_MEMORY")
    return float(limit) if limit else fraction * available_memory()


def check_memory(nbytes: float, what: str, hint: str = "", fraction: float = 0.8) -> None:
    """Refuse an allocation that would not fit, with the size estimate in the message.

    Raises ``MemoryError`` if ``nbytes`` exceeds ``fraction`` of the available memory.
    The limit can be overridden with the environment variable ``SEMISUP_MAX_MEMORY``
    (bytes), which tests use to exercise the refusal on small inputs.
    """
    budget = memory_budget(fraction)
    if nbytes > budget:
        msg = (f"{what} needs about {_fmt_bytes(nbytes)} but only {_fmt_bytes(budget)} "
               "is available.")
        if hint:
            msg += " " + hint
        raise MemoryError(msg)


def warn_convergence(msg: str, stacklevel: int = 3) -> None:
    """Emit a ConvergenceWarning (scikit-learn's class) with advice on what to change."""
    warnings.warn(msg, ConvergenceWarning, stacklevel=stacklevel)
