"""Reference SDPs through cvxpy (tests and benchmarks only; O(n^6), n up to a few hundred).

SPORE (eq. 5) as one SDP (spore.md §5). Dualising the SVM box QP gives
``omega_C(K) = min_{nu, delta >= 0} 1/2 u^T G^+ u + C 1^T delta`` with ``u = 1 + nu - delta``
and ``G = Y_S K_SS Y_S``; the epigraph of the quadratic term is a Schur complement::

    minimise tau + beta * s
    s.t. K psd, diag(K) = 1, K_ij = 0 on non-edges, s I - K psd,
         [[G, u], [u^T, 2 (tau - C 1^T delta)]] psd

Also the exact Frobenius projection onto the elliptope K(G), the oracle for the FISTA
projection.
"""

from __future__ import annotations

import numpy as np

from .._optional import require
from ..linalg.psd import project_psd
from ..linalg.svm_dual import svm_dual
from .iip import edge_mask

__all__ = ["spore_sdp", "mkl_spore_sdp_fixed_eta", "elliptope_projection_sdp"]


def _affine_constraints(cp, K, mask):
    n = mask.shape[0]
    cons = [cp.diag(K) == 1]
    iu, ju = np.triu_indices(n, 1)
    non = ~mask[iu, ju]
    if non.any():
        idx = np.ravel_multi_index((iu[non], ju[non]), (n, n), order="F")
        cons.append(cp.vec(K, order="F")[idx] == 0)
    return cons


def spore_sdp(A, y, labeled, C: float, beta: float, solver: str = "CLARABEL", **kw):
    """Solve SPORE exactly as an SDP.

    Returns ``(value, K, info)`` with ``info = {"omega", "lambda1", "seconds", "status"}``
    (``omega``/``lambda1`` recomputed from the returned K).
    """
    cp = require("cvxpy", "the reference SPORE SDP")
    mask = edge_mask(A)
    n = mask.shape[0]
    labeled = np.asarray(labeled)
    m = labeled.size
    yS = np.asarray(y, dtype=np.float64)[labeled]
    K = cp.Variable((n, n), PSD=True)
    H = cp.Variable((m + 1, m + 1), PSD=True)
    s = cp.Variable()
    tau = cp.Variable()
    nu = cp.Variable(m, nonneg=True)
    delta = cp.Variable(m, nonneg=True)
    P = np.zeros((n, m))
    P[labeled, np.arange(m)] = 1.0
    Ys = np.diag(yS)
    G = Ys @ P.T @ K @ P @ Ys
    u = 1.0 + nu - delta
    cons = _affine_constraints(cp, K, mask)
    cons += [s * np.eye(n) - K >> 0,
             H[:m, :m] == G, H[:m, m] == u, H[m, m] == 2 * (tau - C * cp.sum(delta))]
    prob = cp.Problem(cp.Minimize(tau + beta * s), cons)
    prob.solve(solver=solver, **kw)
    Kv = 0.5 * (K.value + K.value.T)
    # the solver's K can be indefinite at its accuracy; the SVM needs a PSD kernel
    om = svm_dual(project_psd(Kv), np.asarray(y, float), labeled, C).value
    lam = float(np.linalg.eigvalsh(Kv)[-1])
    info = {"omega": om, "lambda1": lam, "status": prob.status,
            "seconds": prob.solver_stats.solve_time}
    return float(prob.value), Kv, info


def elliptope_projection_sdp(V, A, solver: str = "CLARABEL", **kw) -> np.ndarray:
    """Exact Frobenius projection of the symmetric matrix V onto K(G), by cvxpy."""
    cp = require("cvxpy", "the exact elliptope projection")
    mask = edge_mask(A)
    n = mask.shape[0]
    K = cp.Variable((n, n), PSD=True)
    V = 0.5 * (np.asarray(V, float) + np.asarray(V, float).T)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(K - V)), _affine_constraints(cp, K, mask))
    prob.solve(solver=solver, **kw)
    return 0.5 * (K.value + K.value.T)


def mkl_spore_sdp_fixed_eta(As, y, labeled, C: float, beta: float, eta,
                            solver: str = "CLARABEL", **kw) -> float:
    """MKL-SPORE (eq. 17) for fixed simplex weights ``eta`` as one SDP; returns the value.

    For fixed eta the problem is convex: the SVM sees ``sum_k eta_k K^(k)`` and the penalty
    ``beta * s`` with ``s I - K^(k) psd`` for every k.
    """
    cp = require("cvxpy", "the reference MKL-SPORE SDP")
    masks = [edge_mask(A) for A in As]
    n = masks[0].shape[0]
    labeled = np.asarray(labeled)
    m = labeled.size
    yS = np.asarray(y, dtype=np.float64)[labeled]
    Ks = [cp.Variable((n, n), PSD=True) for _ in As]
    H = cp.Variable((m + 1, m + 1), PSD=True)
    s, tau = cp.Variable(), cp.Variable()
    nu = cp.Variable(m, nonneg=True)
    delta = cp.Variable(m, nonneg=True)
    P = np.zeros((n, m))
    P[labeled, np.arange(m)] = 1.0
    Ys = np.diag(yS)
    Ksum = sum(float(e) * K for e, K in zip(eta, Ks))
    cons = []
    for K, mask in zip(Ks, masks):
        cons += _affine_constraints(cp, K, mask) + [s * np.eye(n) - K >> 0]
    cons += [H[:m, :m] == Ys @ P.T @ Ksum @ P @ Ys, H[:m, m] == 1.0 + nu - delta,
             H[m, m] == 2 * (tau - C * cp.sum(delta))]
    prob = cp.Problem(cp.Minimize(tau + beta * s), cons)
    prob.solve(solver=solver, **kw)
    return float(prob.value)
