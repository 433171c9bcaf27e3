"""The kernel SVM dual value omega_C(K, y_S) (SPORE, eq. 3) and its maximiser alpha.

Shared by SPORE (:mod:`semisup.spore`) and the graph-kernel SVM baselines
(:mod:`semisup.baselines.graph_kernels`).

``omega_C(K, y_S) = max_{0 <= alpha_i <= C, i in S}  sum_S alpha_i - 1/2 alpha^T G alpha``
with ``G = Y_S K_SS Y_S``: a hinge-loss SVM dual **without** the bias equality constraint
(the paper's eq. 3). libsvm (scikit-learn's ``SVC``) always solves the version with a bias
(``sum_i y_i alpha_i = 0``), so it cannot be used here; we solve the box-constrained QP by
projected Newton with an epsilon-active set (Bertsekas 1982), which is exact up to the
projected-gradient tolerance and is tested against cvxpy and the spec's vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from .._validation import warn_convergence

__all__ = ["SVMDualResult", "solve_box_qp", "svm_dual", "svm_scores", "sign_predictions"]


@dataclass
class SVMDualResult:
    """Result of :func:`svm_dual`.

    Attributes
    ----------
    alpha : ndarray of shape (m,)
        Maximiser on the labelled vertices (in the order of ``labeled``).
    value : float
        ``omega_C(K, y_S)``.
    n_iter : int
        Projected-Newton iterations.
    converged : bool
        Whether the largest projected-gradient violation fell below ``tol``.
    """

    alpha: np.ndarray
    value: float
    n_iter: int
    converged: bool


def solve_box_qp(G, C: float, alpha0=None, tol: float = 1e-10, max_iter: int = 500):
    """Maximise ``1^T a - 1/2 a^T G a`` over ``0 <= a <= C`` (G symmetric PSD).

    Projected Newton: at each step the epsilon-active bounds are fixed, a Newton step is
    taken on the free coordinates (Cholesky of ``G_FF`` plus a 1e-12 relative ridge, which
    only matters for a singular ``G_FF``), and an Armijo search runs along the projection
    arc. O(m^3) per iteration; typically fewer than 15 iterations. Should it stall (badly
    conditioned G), cyclic coordinate ascent (spore.md §2) polishes the answer.
    Convergence: largest projected-gradient violation ``<= tol * max(1, C max_i G_ii)``.

    Returns ``(alpha, value, n_iter, converged)``.
    """
    G = np.asarray(G, dtype=np.float64)
    m = G.shape[0]
    a = np.zeros(m) if alpha0 is None else np.clip(np.asarray(alpha0, float), 0.0, C)
    gmax = float(np.abs(np.diag(G)).max(initial=0.0))
    ridge = 1e-12 * max(gmax, 1.0)
    tol = tol * max(1.0, C * gmax)
    Ga = G @ a
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        grad = Ga - 1.0                                  # gradient of the minimised -objective
        viol = np.abs(a - np.clip(a - grad, 0.0, C))
        vmax = float(viol.max(initial=0.0))
        if vmax <= tol:
            converged = True
            it -= 1
            break
        eps = min(vmax, 1e-3 * C)
        fixed = ((a <= eps) & (grad > 0)) | ((a >= C - eps) & (grad < 0))
        free = ~fixed
        d = -grad.copy()                                 # scaled-gradient part on fixed set
        if free.any():
            GF = G[np.ix_(free, free)]
            GF[np.diag_indices_from(GF)] += ridge
            try:
                d[free] = -sla.cho_solve(sla.cho_factor(GF, check_finite=False),
                                         grad[free], check_finite=False)
            except np.linalg.LinAlgError:
                d[free] = -np.linalg.lstsq(GF, grad[free], rcond=None)[0]
        t = 1.0
        for _ in range(60):
            a_new = np.clip(a + t * d, 0.0, C)
            delta = a_new - a
            Gd = G @ delta
            decrease = grad @ delta + 0.5 * delta @ Gd
            if decrease <= 1e-4 * (grad @ delta):
                break
            t *= 0.5
        else:
            break                                        # no decrease along the arc: stalled
        a = a_new
        Ga = Ga + Gd
    if not converged:
        a, Ga, converged = _coordinate_ascent(G, C, a, tol)
    value = float(a.sum() - 0.5 * a @ Ga)
    return a, value, it, converged


def _coordinate_ascent(G, C, a, tol, max_sweeps=2000):
    """Cyclic exact coordinate ascent ``a_i <- clip(a_i + (1 - (Ga)_i) / G_ii, 0, C)``."""
    a = a.copy()
    Ga = G @ a
    diag = np.diag(G).copy()
    for _ in range(max_sweeps):
        for i in range(a.size):
            if diag[i] <= 0:
                new = C if Ga[i] < 1.0 else 0.0
            else:
                new = min(max(a[i] + (1.0 - Ga[i]) / diag[i], 0.0), C)
            if new != a[i]:
                Ga += (new - a[i]) * G[:, i]
                a[i] = new
        Ga = G @ a                                       # refresh against drift
        if np.abs(a - np.clip(a - (Ga - 1.0), 0.0, C)).max(initial=0.0) <= tol:
            return a, Ga, True
    return a, Ga, False


def svm_dual(K, y, labeled, C: float, alpha0=None, tol: float = 1e-10,
             max_iter: int = 500) -> SVMDualResult:
    """``omega_C(K, y_S)`` and its alpha (SPORE eq. 3).

    Parameters
    ----------
    K : array of shape (n, n)
        Kernel; only the labelled block ``K_SS`` is read.
    y : array of shape (n,) or (m,)
        Labels in {-1, +1}; if of length n only ``y[labeled]`` is used.
    labeled : array of int of shape (m,)
        Indices of the labelled vertices S.
    C : float
        Box bound, ``C > 0``.
    alpha0 : array of shape (m,), optional
        Warm start (e.g. the previous IIP iteration's alpha).
    tol : float
        Stop when the largest projected-gradient violation is below ``tol``.
    max_iter : int
        Cap on projected-Newton iterations; a ``ConvergenceWarning`` is emitted on reaching it.

    Returns
    -------
    SVMDualResult
    """
    labeled = np.asarray(labeled)
    y = np.asarray(y, dtype=np.float64)
    yS = y[labeled] if y.shape[0] != labeled.shape[0] else y
    KSS = np.asarray(K)[np.ix_(labeled, labeled)].astype(np.float64)
    G = (yS[:, None] * KSS) * yS[None, :]
    G = 0.5 * (G + G.T)
    a, value, it, ok = solve_box_qp(G, C, alpha0, tol, max_iter)
    if not ok:
        warn_convergence(f"SVM dual (projected Newton) did not reach tol={tol:g} in "
                         f"{max_iter} iterations; the kernel block may be badly scaled "
                         "or indefinite.")
    return SVMDualResult(alpha=a, value=value, n_iter=it, converged=ok)


def svm_scores(K, y, labeled, alpha) -> np.ndarray:
    """Soft predictions ``yhat_i = sum_{j in S} K_ij alpha_j y_j`` for every vertex i."""
    labeled = np.asarray(labeled)
    y = np.asarray(y, dtype=np.float64)
    yS = y[labeled] if y.shape[0] != labeled.shape[0] else y
    return np.asarray(K)[:, labeled].astype(np.float64) @ (np.asarray(alpha) * yS)


def sign_predictions(scores, y, labeled) -> np.ndarray:
    """Signed predictions ``sign(yhat)`` in {-1, +1}; exact ties (score 0) go to the class
    with more labelled vertices (ties are common: spore.md §3.1).

    The one prediction rule of the SPORE estimators, the graph-kernel baselines and the
    reproductions. ``y`` holds {-1, +1} on ``labeled`` (other entries ignored); labelled
    vertices are *not* clamped to their labels here.
    """
    y = np.asarray(y, dtype=np.float64)
    yl = y[np.asarray(labeled)]
    major = 1.0 if (yl > 0).sum() >= (yl < 0).sum() else -1.0
    s = np.sign(np.asarray(scores, dtype=np.float64))
    s[s == 0] = major
    return s
