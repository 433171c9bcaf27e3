"""The original (dual) LapSVM of Belkin, Niyogi & Sindhwani (2006), eq. 5–6 — a baseline.

Primal problem (L1 hinge, bias in ``f``, Laplacian term on ``K alpha``)::

    min  sum_{i in L} max(0, 1 - y_i f_i) + gamma_A alpha^T K alpha + gamma_I alpha^T K L K alpha

Its dual is an SVM dual ``max 1^T beta - 1/2 beta^T Q beta`` s.t. ``y^T beta = 0``,
``0 <= beta <= 1`` with ``Q = Y J_L K G^{-1} J_L^T Y`` and ``G = 2 gamma_A I + 2 gamma_I L K``;
then ``alpha = G^{-1} J_L^T Y beta``. The QP is solved by libsvm (scikit-learn's
``SVC(kernel="precomputed", C=1)``, as lapsvmp does).

Cost: ``O(n^3)`` for the LU factorisation of ``G`` (shared by all one-vs-all columns),
``O(n^2 l)`` for ``K G^{-1} J_L^T``; memory three dense n x n matrices. This forms ``L K``:
that is the method being compared against.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from .._validation import check_memory, warn_convergence
from .objective import laplacian_operator
from .result import SolverResult

__all__ = ["dual_lapsvm"]


#: libsvm's iteration cap: its own default (10^7) let a degenerate four-point problem run
#: for minutes; well-posed problems of the paper's sizes converge in far fewer iterations
LIBSVM_MAX_ITER = 100_000


def dual_lapsvm(K, L, y, *, gamma_A: float, gamma_I: float, power: int = 1,
                tol: float = 1e-6, LK=None, max_iter: int | None = None) -> SolverResult:
    """Train the original LapSVM through its dual (eq. 5–6).

    Parameters
    ----------
    K : ndarray (n, n)
    L : sparse matrix, ndarray or callable
        Laplacian ``L0`` (applied ``power`` times) or ``v -> L v``.
    y : ndarray (n,) or (n, c)
        ``+1/-1`` labelled, ``0`` unlabelled (columns: one-vs-all problems).
    gamma_A, gamma_I : float
        Weights of the L1-hinge problem above. ``gamma_A`` must be positive: ``L`` is
        singular (``L 1 = 0``), so ``G`` is singular without the ``2 gamma_A I`` term.
    tol : float
        libsvm's stopping tolerance.
    LK : ndarray, optional
        Precomputed ``L K``.
    max_iter : int, optional
        Cap on libsvm's iterations (default :data:`LIBSVM_MAX_ITER`; ``-1``: libsvm's own
        cap of ``max(10^7, 100 l)``, as before the cap existed); reaching it gives
        ``converged=False`` and a ConvergenceWarning.

    Returns
    -------
    SolverResult
        ``alpha``, ``b`` (the SVC intercept) and ``info["beta"]`` (dual variables on the
        labelled points, n_labeled x c).

    Raises
    ------
    ValueError
        If ``gamma_A <= 0`` or ``G`` is numerically singular.
    """
    if not gamma_A > 0:
        raise ValueError(f"the dual LapSVM needs gamma_A > 0, got gamma_A={gamma_A!r}: "
                         "G = 2 gamma_A I + 2 gamma_I L K is singular otherwise (L 1 = 0). "
                         "Use a positive gamma_A, or the primal solvers.")
    max_iter = LIBSVM_MAX_ITER if max_iter is None else int(max_iter)
    apply_L = L if callable(L) else laplacian_operator(L, power)
    y2 = np.asarray(y, dtype=np.float64)
    squeeze = y2.ndim == 1
    Y = y2[:, None] if squeeze else y2
    n, c = Y.shape
    check_memory(3.0 * n * n * 8, f"the dual LapSVM on n={n} points",
                 "Use the primal PCG solver (solver='pcg').")
    Kd = np.asarray(K, dtype=np.float64)
    if LK is None:
        LK = apply_L(Kd)
    G = 2.0 * gamma_I * LK
    G[np.diag_indices(n)] += 2.0 * gamma_A
    lab = np.flatnonzero((Y != 0).any(axis=1))
    rhs = np.zeros((n, lab.size))
    rhs[lab, np.arange(lab.size)] = 1.0
    with warnings.catch_warnings():
        # an exactly singular G is reported below, with the parameters to change
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        X = sla.lu_solve(sla.lu_factor(G, check_finite=False), rhs, check_finite=False)
    if not np.isfinite(X).all():
        raise ValueError(f"the dual LapSVM's matrix G = 2 gamma_A I + 2 gamma_I L K is "
                         f"numerically singular (gamma_A={gamma_A:g}, gamma_I={gamma_I:g}); "
                         "increase gamma_A or use the primal solvers.")
    Kp = Kd[lab] @ X  # J_L K G^{-1} J_L^T, symmetric in exact arithmetic
    Kp = 0.5 * (Kp + Kp.T)
    alphas, bs = np.zeros((n, c)), np.zeros(c)
    betas = np.zeros((lab.size, c))
    converged = True
    for j in range(c):
        yl = Y[lab, j]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            try:
                svc = SVC(kernel="precomputed", C=1.0, tol=tol, max_iter=max_iter).fit(Kp, yl)
            except ValueError as exc:  # libsvm's NaN/inf from a Gram matrix near overflow
                raise ValueError(
                    "libsvm failed on the dual LapSVM's QP, whose Gram matrix "
                    f"J_L K G^-1 J_L^T has entries up to {np.abs(Kp).max():.3g} "
                    f"(gamma_A={gamma_A:g}, gamma_I={gamma_I:g}): rescale X or the kernel, "
                    f"increase gamma_A, or use the primal solvers. libsvm said: {exc}"
                ) from None
        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                converged = False
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        coef = np.zeros(lab.size)
        # sklearn orders classes as [-1, +1] and signs dual_coef_ so that the decision is
        # positive for +1: dual_coef_ = y_i beta_i.
        coef[svc.support_] = svc.dual_coef_[0]
        alphas[:, j] = X @ coef
        bs[j] = svc.intercept_[0]
        betas[:, j] = coef * yl
    if not converged:
        warn_convergence(f"libsvm stopped at max_iter={max_iter} iterations before solving "
                         "the dual LapSVM's QP: the problem is degenerate or badly scaled "
                         f"(gamma_A={gamma_A:g}, gamma_I={gamma_I:g}; a tiny gamma_A makes "
                         "the dual Gram matrix huge). Increase gamma_A, or use the primal "
                         "solvers.")
    F = Kd @ alphas + bs
    return SolverResult(alpha=alphas[:, 0] if squeeze else alphas,
                        b=float(bs[0]) if squeeze else bs, n_iter=1, converged=converged,
                        stop_reason="libsvm" if converged else "libsvm max_iter",
                        info={"beta": betas[:, 0] if squeeze else betas},
                        decision=F[:, 0] if squeeze else F)
