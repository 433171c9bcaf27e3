"""The small record every LapSVM solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class SolverResult:
    """Output of :func:`~semisup.lapsvm.newton.newton`, :func:`~semisup.lapsvm.pcg.pcg` and
    :func:`~semisup.lapsvm.dual.dual_lapsvm`.

    Attributes
    ----------
    alpha : ndarray (n,) or (n, c)
        Expansion coefficients, ``f(x) = sum_i alpha_i k(x_i, x) + b``.
    b : float or ndarray (c,)
        Bias (0 when the problem has none).
    n_iter : int
        Newton steps (linear solves) or PCG iterations (the largest over the columns).
    converged : bool
        Newton: the error-vector set stopped changing. PCG: every column stopped by the
        line search returning 0 or by a stopping rule (not by ``max_iter``).
    stop_reason : str
        Why the solver stopped (``"line search step 0"``, a rule's name, ``"max_iter"``, ...).
    history : dict of lists
        Per-iteration records: ``obj``, ``grad_norm``, ``pgrad_norm``, ``mixed_norm``
        (PCG, summed over columns), ``ls_pieces`` (average line-search pieces), ``n_errors``
        (Newton: size of E), and for each stopping rule the values it checked.
    n_iter_per_column : ndarray of int
        Iteration at which each one-vs-all column stopped.
    info : dict
        Anything else worth reporting (e.g. a ridge added to K).
    decision : ndarray (n,) or (n, c), optional
        ``f = K alpha + b`` on the training points as the solver last evaluated it (no
        extra kernel product); the estimators read ``transduction_`` from it.
    """

    alpha: np.ndarray
    b: np.ndarray | float
    n_iter: int
    converged: bool
    stop_reason: str
    history: dict = field(default_factory=dict)
    n_iter_per_column: np.ndarray | None = None
    info: dict = field(default_factory=dict)
    decision: np.ndarray | None = None
