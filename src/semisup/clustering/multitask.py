"""Clustered multi-task learning (paper appendix 7.2, after Jacob et al. 2009; spec §2.4).

K tasks share the design X (n x d); task k has targets Y[:, k] and weights W[:, k]. The
tasks are grouped into Q clusters with centroids V (d x Q), ``W~ = V Z^T``, and

    min  (1/(2n)) ||X W - Y||_F^2 + (lam/2) ||W||_F^2
         + (lam_m/2) tr(W~ (I - Pi) W~^T) + (lam_b/2) tr(W~ Pi W~^T) + (lam_w/2) ||W - W~||_F^2

with ``Pi = I_K - 11^T/K``. The paper gives no solver; we use projected gradient on
(W, W~) jointly, projecting W~ by k-means on its K columns (spec §2.4 suggestion).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, validate_params

from ..linalg.lowrank import spectral_norm_sq
from .projected_gradient import PGResult, projected_gradient
from .projections import Projection, project_kmeans

__all__ = ["multitask_penalty", "pg_clustered_multitask"]


def multitask_penalty(W, V, labels, lam_m, lam_b, lam_w):
    """Omega_mean + Omega_between + Omega_within for tasks W (d, K), centroids V (d, Q).

    Uses the cluster form of spec §2.4: ``(lam_m/2) K ||vbar||^2
    + (lam_b/2) sum_q s_q ||v_q - vbar||^2 + (lam_w/2) sum_k ||w_k - v_{q(k)}||^2``.
    """
    W, V = np.asarray(W, dtype=np.float64), np.asarray(V, dtype=np.float64)
    labels = np.asarray(labels)
    K = W.shape[1]
    s = np.bincount(labels, minlength=V.shape[1])
    vbar = (V * s).sum(axis=1) / K
    mean = 0.5 * lam_m * K * float(vbar @ vbar)
    between = 0.5 * lam_b * float(np.sum(s * np.sum((V - vbar[:, None]) ** 2, axis=0)))
    within = 0.5 * lam_w * float(np.sum((W - V[:, labels]) ** 2))
    return mean + between + within


@validate_params({"X": ["array-like"], "Y": ["array-like"],
                  "n_clusters": [Interval(Integral, 1, None, closed="left")],
                  "lam": [Interval(Real, 0, None, closed="left")],
                  "lam_m": [Interval(Real, 0, None, closed="left")],
                  "lam_b": [Interval(Real, 0, None, closed="left")],
                  "lam_w": [Interval(Real, 0, None, closed="left")],
                  "random_state": ["random_state"]}, prefer_skip_nested_validation=True)
def pg_clustered_multitask(X, Y, n_clusters, lam, lam_m, lam_b, lam_w, *, random_state=None,
                           **kw) -> PGResult:
    """Fit clustered multi-task least squares by projected gradient on (W, W~).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (n, K)
    n_clusters : int
        Q <= K task clusters.
    lam, lam_m, lam_b, lam_w : float
        Ridge, mean, between-cluster and within-cluster weights (all >= 0).
    random_state : seed of the k-means++ projection.
    kw : passed to :func:`~semisup.clustering.projected_gradient.projected_gradient`.

    Returns
    -------
    PGResult
        ``W`` of shape (2d, K): the task weights on top, W~ = V Z^T below; ``labels`` are
        the task clusters and ``centers`` the centroids (Q, d).
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    n, d = X.shape
    K = Y.shape[1]
    if n_clusters > K:
        raise ValueError(f"n_clusters={n_clusters} exceeds the number of tasks K={K}.")
    P = np.eye(K) - 1.0 / K  # Pi
    C = lam_m * (np.eye(K) - P) + lam_b * P

    def objective(T):
        W, Wt = T[:d], T[d:]
        R = X @ W - Y
        return (0.5 * float(np.sum(R * R)) / n + 0.5 * lam * float(np.sum(W * W))
                + 0.5 * float(np.sum((Wt @ C) * Wt)) + 0.5 * lam_w * float(np.sum((W - Wt) ** 2)))

    def gradient(T):
        W, Wt = T[:d], T[d:]
        gW = X.T @ (X @ W - Y) / n + lam * W + lam_w * (W - Wt)
        gWt = Wt @ C - lam_w * (W - Wt)
        return np.vstack([gW, gWt])

    state = {"centers": None}

    def project(T):
        p = project_kmeans(T[d:].T, n_clusters, random_state=random_state,
                           n_init=10 if state["centers"] is None else 0, init=state["centers"])
        state["centers"] = p.centers
        return Projection(np.vstack([T[:d], p.point.T]), p.labels, p.centers)

    L = spectral_norm_sq(X) / n + lam + 2 * lam_w + max(lam_m, lam_b)
    W0 = np.linalg.lstsq(X.T @ X / n + (lam + 1e-12) * np.eye(d), X.T @ Y / n, rcond=None)[0]
    return projected_gradient(objective, gradient, project, np.vstack([W0, W0]), 1.0 / L, **kw)
