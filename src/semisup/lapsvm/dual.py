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

import numpy as np
import scipy.linalg as sla
from sklearn.svm import SVC

from .._validation import check_memory
from .objective import laplacian_operator
from .result import SolverResult

__all__ = ["dual_lapsvm"]


def dual_lapsvm(K, L, y, *, gamma_A: float, gamma_I: float, power: int = 1,
                tol: float = 1e-6, LK=None) -> SolverResult:
    """Train the original LapSVM through its dual (eq. 5–6).

    Parameters
    ----------
    K : ndarray (n, n)
    L : sparse matrix, ndarray or callable
        Laplacian ``L0`` (applied ``power`` times) or ``v -> L v``.
    y : ndarray (n,) or (n, c)
        ``+1/-1`` labelled, ``0`` unlabelled (columns: one-vs-all problems).
    gamma_A, gamma_I : float
        Weights of the L1-hinge problem above (``gamma_A > 0`` unless ``L K`` is
        nonsingular).
    tol : float
        libsvm's stopping tolerance.
    LK : ndarray, optional
        Precomputed ``L K``.

    Returns
    -------
    SolverResult
        ``alpha``, ``b`` (the SVC intercept) and ``info["beta"]`` (dual variables on the
        labelled points, n_labeled x c).
    """
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
    X = sla.lu_solve(sla.lu_factor(G, check_finite=False), rhs, check_finite=False)
    Kp = Kd[lab] @ X  # J_L K G^{-1} J_L^T, symmetric in exact arithmetic
    Kp = 0.5 * (Kp + Kp.T)
    alphas, bs = np.zeros((n, c)), np.zeros(c)
    betas = np.zeros((lab.size, c))
    for j in range(c):
        yl = Y[lab, j]
        svc = SVC(kernel="precomputed", C=1.0, tol=tol).fit(Kp, yl)
        coef = np.zeros(lab.size)
        # sklearn orders classes as [-1, +1] and signs dual_coef_ so that the decision is
        # positive for +1: dual_coef_ = y_i beta_i.
        coef[svc.support_] = svc.dual_coef_[0]
        alphas[:, j] = X @ coef
        bs[j] = svc.intercept_[0]
        betas[:, j] = coef * yl
    return SolverResult(alpha=alphas[:, 0] if squeeze else alphas,
                        b=float(bs[0]) if squeeze else bs, n_iter=1, converged=True,
                        stop_reason="libsvm", info={"beta": betas[:, 0] if squeeze else betas})
