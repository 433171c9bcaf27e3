"""Objective, Lagrange multipliers and KKT residuals of the LASS problem (spec §2-3).

Problem (Carreira-Perpiñán & Wang 2014, eq. 1)::

    min_Z  F(Z) = lam * tr(Z^T L Z) - tr(G^T Z)   s.t.  Z 1_K = 1_N,  Z >= 0

Lagrangian convention (paper §2.4, "minus" signs): ``F(Z) - mu^T (Z 1 - 1) - <Xi, Z>``, so
the KKT conditions (paper eq. 4) are

    (a) 2 lam L Z - G - mu 1^T - Xi = 0     (b) Z 1 = 1     (c) Z >= 0
    (d) Xi >= 0                              (e) Xi o Z = 0

cvxpy's dual of ``sum(Z, 1) == 1`` is ``-mu``; its dual of ``Z >= 0`` is ``Xi``.
"""

from __future__ import annotations

import numpy as np

from ..linalg.xp import array_modules


def _dense(G, xp=np):
    """``G`` dense float64 in ``xp`` (the module of ``Z``: numpy, or CuPy on a device)."""
    G = G.toarray() if hasattr(G, "toarray") else G
    return xp.asarray(G, dtype=xp.float64)


def objective(Z, L, G, lam: float) -> float:
    """``F(Z) = lam tr(Z^T L Z) - tr(G^T Z)`` (paper eq. 1a). O(nnz(L) K)."""
    xp, _ = array_modules(Z)
    Z = xp.asarray(Z, dtype=xp.float64)
    return float(lam * xp.einsum("ij,ij->", Z, L @ Z) - xp.einsum("ij,ij->", _dense(G, xp), Z))


def lass_multipliers(Z, L, G, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form multipliers ``(mu, Xi)`` of a feasible ``Z`` (paper §2.4, spec §3.1).

    Solves, row by row in the least-squares sense, ``(I - 11^T/K) xi_n = q_n`` together with
    ``diag(z_n) xi_n = 0``, where ``q_n = 2 lam (L Z)_n - g_n + (g_n^T 1 / K) 1``; with
    ``d = 1 / (1 + z_n^2)`` the normal equations give

        xi_n = d o q_n + d (d^T q_n) / (K - 1^T d),   mu_n = -(g_n^T 1 + xi_n^T 1) / K.

    If ``Z`` is optimal these are its exact (unique) multipliers; otherwise
    :func:`kkt_residual` reveals it. O(nnz(L) K + N K).

    Parameters
    ----------
    Z : ndarray (N, K), rows on the simplex (project first if needed)
    L : sparse or dense (N, N) unnormalised Laplacian
    G : ndarray or sparse (N, K)
    lam : float >= 0

    Returns
    -------
    mu : ndarray (N,)
    Xi : ndarray (N, K)
    """
    xp, _ = array_modules(Z)
    Z = xp.asarray(Z, dtype=xp.float64)
    G = _dense(G, xp)
    K = Z.shape[1]
    gsum = G.sum(axis=1)
    Q = 2.0 * lam * xp.asarray(L @ Z) - G + (gsum / K)[:, None]
    D = 1.0 / (1.0 + Z * Z)
    denom = K - D.sum(axis=1)
    # A feasible row has some z_nk > 0, so 1^T d < K; guard rows that are all zero anyway.
    denom = xp.where(denom > 0, denom, np.finfo(float).tiny)
    Xi = D * Q + D * (xp.einsum("ij,ij->i", D, Q) / denom)[:, None]
    mu = -(gsum + Xi.sum(axis=1)) / K
    return mu, Xi


def kkt_residual(Z, L, G, lam: float, mu=None, Xi=None) -> dict:
    """KKT-based optimality certificate of ``Z`` (spec §3.1).

    Multipliers default to :func:`lass_multipliers`. Returns the max-norm violations

    ``stationarity``  max abs(2 lam L Z - G - mu 1^T - Xi)       (a)
    ``equality``      max abs(Z 1 - 1)                           (b)
    ``bounds``        max(0, -min Z)                             (c)
    ``dual``          max(0, -min Xi)                            (d)
    ``complementarity`` max abs(Xi o Z)                          (e)
    ``max``           the largest of these.

    All are 0 exactly at a solution; compare against ``tol * max(1, max|G|)``.
    """
    xp, _ = array_modules(Z)
    Z = xp.asarray(Z, dtype=xp.float64)
    Gd = _dense(G, xp)
    if mu is None or Xi is None:
        mu, Xi = lass_multipliers(Z, L, Gd, lam)

    def top(a):   # max(a, initial=0) of either module (CuPy's max has no initial)
        return max(0.0, float(a.max())) if a.size else 0.0

    stat = 2.0 * lam * xp.asarray(L @ Z) - Gd - mu[:, None] - Xi
    out = {
        "stationarity": top(xp.abs(stat)),
        "equality": top(xp.abs(Z.sum(axis=1) - 1.0)),
        "bounds": top(-Z),
        "dual": top(-Xi),
        "complementarity": top(xp.abs(Xi * Z)),
    }
    out["max"] = max(out.values())
    return out
