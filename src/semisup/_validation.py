"""Shared input checks: labels with -1, affinities, finiteness, memory estimates.

Every estimator validates through these functions so that bad input fails the same way
everywhere: a ``ValueError`` (or ``MemoryError``) whose message says what is wrong and,
where possible, what to do instead.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "ConvergenceWarning",
    "check_finite",
    "check_semisup_labels",
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


def check_semisup_labels(y, n_samples: int | None = None, *, min_classes: int = 2,
                         name: str = "y"):
    """Validate a semi-supervised target vector where -1 marks unlabeled points.

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
        If ``y`` is not 1-D, has the wrong length, holds NaN, has no labeled point,
        or fewer than ``min_classes`` classes among the labeled points.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}.")
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} entries but there are {n_samples} samples.")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or inf; mark unlabeled points with -1.")
    if y.dtype.kind in "OUS":
        labeled = np.array([v != UNLABELED and v != str(UNLABELED) for v in y], dtype=bool)
    else:
        labeled = y != UNLABELED
    if not labeled.any():
        raise ValueError(f"{name} has no labeled point (all entries are -1); "
                         "at least one labeled point per class is needed.")
    classes = np.unique(y[labeled])
    if classes.size < min_classes:
        raise ValueError(f"{name} has only {classes.size} class among its labeled points "
                         f"({classes.tolist()}); at least {min_classes} are needed.")
    return y, classes, labeled


def check_square(A, name: str = "W") -> None:
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {A.shape}.")


def check_affinity(W, name: str = "W", *, allow_self_loops: bool = False,
                   symmetric_tol: float = 1e-10, copy: bool = False) -> sp.csr_matrix:
    """Validate an affinity (adjacency) matrix and return it as float64 CSR.

    The matrix must be square, finite, non-negative and symmetric (to ``symmetric_tol``
    relative to its largest entry). Self-loops are removed (with a warning) unless
    ``allow_self_loops``. The input is never modified.
    """
    if not sp.issparse(W):
        W = np.asarray(W)
        if W.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric, got dtype {W.dtype}.")
        if W.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got {W.ndim} dimension(s).")
    check_square(W, name)
    W = sp.csr_matrix(W, dtype=np.float64, copy=copy or not sp.issparse(W))
    check_finite(W, name)
    if W.nnz and W.data.min() < 0:
        raise ValueError(f"{name} has negative entries (min {W.data.min():.3g}); "
                         "affinities must be non-negative.")
    scale = abs(W).max() if W.nnz else 0.0
    if W.nnz:
        asym = abs(W - W.T).max()
        if asym > symmetric_tol * max(scale, 1.0):
            raise ValueError(f"{name} is not symmetric (max |W - W.T| = {asym:.3g}); "
                             "symmetrize it, e.g. (W + W.T) / 2 or W.maximum(W.T).")
    if not allow_self_loops and W.diagonal().any():
        warnings.warn(f"{name} has non-zero diagonal entries (self-loops); they are ignored.",
                      UserWarning, stacklevel=2)
        W = W.tolil(copy=True)
        W.setdiag(0)
        W = W.tocsr()
        W.eliminate_zeros()
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


def check_memory(nbytes: float, what: str, hint: str = "", fraction: float = 0.8) -> None:
    """Refuse an allocation that would not fit, with the size estimate in the message.

    Raises ``MemoryError`` if ``nbytes`` exceeds ``fraction`` of the available memory.
    The limit can be overridden with the environment variable ``SEMISUP_MAX_MEMORY``
    (bytes), which tests use to exercise the refusal on small inputs.
    """
    limit = os.environ.get("SEMISUP_MAX_MEMORY")
    budget = float(limit) if limit else fraction * available_memory()
    if nbytes > budget:
        msg = (f"{what} needs about {_fmt_bytes(nbytes)} but only {_fmt_bytes(budget)} "
               "is available.")
        if hint:
            msg += " " + hint
        raise MemoryError(msg)


def warn_convergence(msg: str, stacklevel: int = 3) -> None:
    """Emit a ConvergenceWarning (scikit-learn's class) with advice on what to change."""
    warnings.warn(msg, ConvergenceWarning, stacklevel=stacklevel)
