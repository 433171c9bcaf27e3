"""Baselines of the paper's tables (spec §6): LS, LSK, Oracle, OSCAR, Lasso, IHT, RC.

All functions fit ``y ~ X w`` without intercept (centre X and y first when one is wanted),
with the squared loss scaled as ``(1/(2n)) ||X w - y||^2``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator
# scipy's (>= 1.12) has no per-call validation: 16x faster than scikit-learn's at d = 100
from scipy.optimize import isotonic_regression
from sklearn.linear_model import Lasso
from sklearn.utils import check_random_state

from .._validation import warn_convergence
from ..linalg.kmeans1d import kmeans1d
from ..linalg.lowrank import spectral_norm_sq
from .alternating import expert_errors
from .frank_wolfe import indicator, ridge_per_group
from .projected_gradient import projected_gradient
from .projections import Projection

__all__ = ["least_squares", "lsk", "oracle_features", "oracle_experts", "oscar_penalty",
           "prox_oscar", "oscar", "lasso", "iht", "RCResult", "regression_clustering"]


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def _operand(X):
    """X for products only: sparse matrices and ``LinearOperator``s (e.g. an implicitly
    centred sparse design, :meth:`CenteredDesign.operator`) as they are, else dense."""
    return X if sp.issparse(X) or isinstance(X, LinearOperator) else \
        np.asarray(X, dtype=np.float64)


def least_squares(X, y, lam=0.0, *, center=False):
    """Ridge ``argmin (1/(2n))||Xw - y||^2 + (lam/2)||w||^2``; minimum-norm LS when lam = 0.

    Solves in the smaller of the two dimensions: O(min(n, d)^2 max(n, d)). ``center=True``
    uses the column-centred ``Xc = X - 1 m^T`` instead of X (``y`` is taken as given: centre
    it too for a model with intercept). A sparse X with n < d and lam > 0 never forms Xc:
    ``Xc Xc^T = X X^T - u 1^T - 1 u^T + (m^T m) 1 1^T`` with ``u = X m`` from the sparse
    product, O(nnz(X)^2 / d + n^2) instead of O(n^2 d).
    """
    n, d = X.shape
    if center and sp.issparse(X) and n < d and lam > 0:
        m = np.asarray(X.mean(axis=0)).ravel()
        u = np.asarray(X @ m).ravel()
        G = (X @ X.T).toarray() - u[:, None] - u[None, :] + float(m @ m)
        G.flat[:: n + 1] += lam * n
        a = sla.solve(G, y, assume_a="pos", check_finite=False)
        return np.asarray(X.T @ a).ravel() - m * a.sum()
    X = _dense(X)
    if center:
        X = X - X.mean(axis=0)
    if lam == 0:
        return np.linalg.lstsq(X, y, rcond=None)[0]
    if n >= d:
        return np.linalg.solve(X.T @ X + lam * n * np.eye(d), X.T @ y)
    return X.T @ np.linalg.solve(X @ X.T + lam * n * np.eye(n), y)


def lsk(X, y, n_clusters, lam=0.0, *, center=False):
    """LS then exact 1-D k-means of the weights; the centres are the predictor (spec §6).

    Returns ``(w, labels)``.
    """
    w = least_squares(X, y, lam, center=center)
    res = kmeans1d(w, n_clusters)
    return res.centers[res.labels], res.labels


def oracle_features(X, y, labels, lam=0.0):
    """LS restricted to a known feature partition: ``w = Z argmin_v ||X Z v - y||``."""
    Z = indicator(np.asarray(labels))
    XZ = np.asarray(X @ Z)
    return Z @ least_squares(XZ, y, lam)


def oracle_experts(X, y, labels, n_clusters, lam=0.0):
    """Per-group (ridge) least squares on a known sample partition, experts (Q, d, K)."""
    return ridge_per_group(np.asarray(X, dtype=np.float64), y, np.asarray(labels), lam, n_clusters)


def _oscar_weights(d, lam1, lam2):
    # sum_{i<j} max(|w_i|, |w_j|) = sum_r (d - r) |w|_(r) with |w|_(1) >= |w|_(2) >= ...
    return lam1 + lam2 * np.arange(d - 1, -1, -1, dtype=np.float64)


def oscar_penalty(w, lam1, lam2):
    """``lam1 ||w||_1 + lam2 sum_{i<j} max(|w_i|, |w_j|)`` (Bondell & Reich 2008)."""
    a = np.sort(np.abs(w))[::-1]
    return float(_oscar_weights(w.size, lam1, lam2) @ a)


def prox_oscar(v, t, lam1, lam2):
    """Proximal operator of ``t * oscar_penalty``: an ordered-weighted-l1 prox.

    Sort |v| decreasingly, subtract the weights, project onto non-increasing sequences
    (pool adjacent violators), clip at 0, restore order and signs. O(d log d).
    """
    order = np.argsort(-np.abs(v), kind="stable")
    z = np.abs(v)[order] - t * _oscar_weights(v.size, lam1, lam2)
    z = np.maximum(isotonic_regression(z, increasing=False).x, 0.0)
    out = np.empty_like(v, dtype=np.float64)
    out[order] = z
    return np.sign(v) * out


def oscar(X, y, lam1, lam2, *, max_iter=2000, tol=1e-8, w0=None):
    """OSCAR regression by FISTA with the exact OWL proximal step.

    ``min (1/(2n))||Xw - y||^2 + lam1 ||w||_1 + lam2 sum_{i<j} max(|w_i|, |w_j|)``.
    Stops when the relative change of w falls below ``tol``. O(nnz(X)) per iteration: X may
    be dense, sparse or a ``LinearOperator``.
    """
    X = _operand(X)
    n, d = X.shape
    L = spectral_norm_sq(X) / n
    w = np.zeros(d) if w0 is None else np.asarray(w0, dtype=np.float64).copy()
    z, t = w.copy(), 1.0
    for _ in range(max_iter):
        g = X.T @ (X @ z - y) / n
        w_new = prox_oscar(z - g / L, 1.0 / L, lam1, lam2)
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        z = w_new + (t - 1) / t_new * (w_new - w)
        change = np.linalg.norm(w_new - w) / max(np.linalg.norm(w_new), 1e-12)
        w, t = w_new, t_new
        if change < tol:
            return w
    warn_convergence(f"OSCAR (FISTA) did not converge in max_iter={max_iter}; increase max_iter.")
    return w


def lasso(X, y, alpha, *, max_iter=5000, center=False):
    """scikit-learn's Lasso ``(1/(2n))||Xw - y||^2 + alpha ||w||_1`` (no intercept).

    ``center=True`` solves it on the column-centred ``Xc = X - 1 m^T`` (``y`` is taken as
    given, as in :func:`least_squares`). For a sparse X, scikit-learn's coordinate descent
    centres implicitly (``fit_intercept=True`` on a centred y gives the same w, to its
    tolerance; it centres y too, which leaves w unchanged because Xc's columns sum to 0): on
    the movie reviews (3 204 x 5 623) 5x faster than the dense Xc.
    """
    if center and sp.issparse(X):
        return Lasso(alpha=alpha, max_iter=max_iter).fit(X, y).coef_
    if center:
        X = _dense(X)
        X = X - X.mean(axis=0)
    return Lasso(alpha=alpha, fit_intercept=False, max_iter=max_iter).fit(X, y).coef_


def iht(X, y, n_nonzero, lam=0.0, *, w0=None, max_iter=500, tol=1e-10):
    """Iterative hard thresholding: projected gradient onto k-sparse vectors (spec §6).

    Same backtracking as Algorithm 3; the projection keeps the k largest |w_i|. X may be
    dense, sparse or a ``LinearOperator`` (then ``w0`` is required: the default start is the
    ridge solution, which needs the matrix).
    """
    Xd = _operand(X)
    n, d = X.shape
    if w0 is None and isinstance(Xd, LinearOperator):
        raise ValueError("iht needs w0 when X is a LinearOperator (the default start, "
                         "least_squares(X, y, lam), needs the matrix).")

    def objective(w):
        r = np.asarray(Xd @ w) - y
        return 0.5 * float(r @ r) / n + 0.5 * lam * float(w @ w)

    def gradient(w):
        return np.asarray(Xd.T @ (np.asarray(Xd @ w) - y)) / n + lam * w

    def project(w):
        keep = np.argpartition(-np.abs(w), min(n_nonzero, d) - 1)[:n_nonzero]
        out = np.zeros_like(w)
        out[keep] = w[keep]
        labels = np.full(d, -1)
        labels[keep] = 0
        return Projection(out, labels, np.zeros(0))

    L = spectral_norm_sq(Xd) / n + lam
    w0 = least_squares(X, y, max(lam, 1e-6)) if w0 is None else w0
    return projected_gradient(objective, gradient, project, w0, 1.0 / L, max_iter=max_iter,
                              tol=tol).W


class RCResult(NamedTuple):
    """Hard assignments (closest expert), experts V (Q, d, K) and iterations."""

    labels: np.ndarray
    V: np.ndarray
    n_iter: int


def regression_clustering(X, Y, n_clusters, lam=1e-6, *, p=3.5, max_iter=100, tol=1e-6,
                          random_state=None) -> RCResult:
    """Regression clustering with K-harmonic means (Zhang 2003).

    Minimises the harmonic average of the residuals, ``sum_i Q / sum_q e_iq^{-p}`` with
    ``e_iq = ||y_i - x_i^T V_q||``, by iteratively re-weighted ridge fits: sample i enters
    expert q with weight ``m_iq a_i``, ``m_iq = e_iq^{-p-2} / sum_l e_il^{-p-2}`` (soft
    membership), ``a_i = sum_l e_il^{-p-2} / (sum_l e_il^{-p})^2`` (boosts badly fitted
    points). O(Q (n d^2 + d^3)) per iteration.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y[:, None] if Y.ndim == 1 else Y
    n, d = X.shape
    rng = check_random_state(random_state)
    V = ridge_per_group(X, Y, rng.randint(n_clusters, size=n), lam, n_clusters)
    it = 0
    for it in range(1, max_iter + 1):
        E = np.sqrt(expert_errors(X, Y, V)) + 1e-12
        r = E / E.min(axis=1, keepdims=True)  # scale-free ratios >= 1 avoid overflow
        sp2, sp0 = np.sum(r ** (-p - 2), axis=1), np.sum(r ** (-p), axis=1)
        m = r ** (-p - 2) / sp2[:, None]
        a = E.min(axis=1) ** (p - 2) * sp2 / sp0 ** 2
        V_new = np.empty_like(V)
        for q in range(n_clusters):
            w = m[:, q] * a
            w *= m[:, q].sum() / w.sum()  # scale so that the ridge matches n lam s_q
            Xw = X * w[:, None]
            V_new[q] = np.linalg.solve(Xw.T @ X + n * lam * m[:, q].sum() * np.eye(d), Xw.T @ Y)
        change = np.linalg.norm(V_new - V) / max(np.linalg.norm(V), 1e-12)
        V = V_new
        if change < tol:
            break
    labels = np.argmin(expert_errors(X, Y, V), axis=1)
    return RCResult(labels, V, it)
