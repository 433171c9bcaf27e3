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


def _dense(G) -> np.ndarray:
    return G.toarray() if hasattr(G, "toarray") else np.asarray(G, dtype=np.float64)


def objective(Z, L, G, lam: float) -> float:
    """``F(Z) = lam tr(Z^T L Z) - tr(G^T Z)`` (paper eq. 1a). O(nnz(L) K)."""
    Z = np.asarray(Z, dtype=np.float64)
    return float(lam * np.einsum("ij,ij->", Z, L @ Z) - np.einsum("ij,ij->", _dense(G), Z))


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
    Z = np.asarray(Z, dtype=np.float64)
    G = _dense(G)
    K = Z.shape[1]
    gsum = G.sum(axis=1)
    Q = 2.0 * lam * np.asarray(L @ Z) - G + (gsum / K)[:, None]
    D = 1.0 / (1.0 + Z * Z)
    denom = K - D.sum(axis=1)
    # A feasible row has some z_nk > 0, so 1^T d < K; guard rows that are all zero anyway.
    denom = np.where(denom > 0, denom, np.finfo(float).tiny)
    Xi = D * Q + D * (np.einsum("ij,ij->i", D, Q) / denom)[:, None]
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
    Z = np.asarray(Z, dtype=np.float64)
    Gd = _dense(G)
    if mu is None or Xi is None:
        mu, Xi = lass_multipliers(Z, L, Gd, lam)
    stat = 2.0 * lam * np.asarray(L @ Z) - Gd - mu[:, None] - Xi
    out = {
        "stationarity": float(np.abs(stat).max(initial=0.0)),
        "equality": float(np.abs(Z.sum(axis=1) - 1.0).max(initial=0.0)),
        "bounds": float(max(0.0, -Z.min(initial=0.0))),
        "dual": float(max(0.0, -np.min(Xi, initial=0.0))),
        "complementarity": float(np.abs(Xi * Z).max(initial=0.0)),
    }
    out["max"] = max(out.values())
    return out
