"""MKL-SPORE (eq. 17): one orthonormal embedding per graph, combined with simplex weights.

``Phi = min_{K^(k) in K(G^(k))} min_{eta in simplex} omega_C(sum_k eta_k K^(k), y_S)
+ beta * max_k lambda_1(K^(k))``; prediction with ``K = sum_k eta_k K^(k)``.

The paper's algorithm (its supplementary F) is unavailable; this is the joint projected
subgradient method that spore.md §6 reconstructs: a subgradient step on every K^(k) with
the joint Frobenius norm, the FISTA inexact projection per graph, PSD clean-up, and an exact
simplex projection for eta. The problem is convex in K for fixed eta but not jointly convex in
(eta, K) (bilinear eta_k K^(k)), so the method finds a stationary point, not a certified optimum.
Cost per outer iteration: M * (n_inner + 1) dense eigendecompositions, O(M n_inner n^3), each
computing only the side of the spectrum it needs (as in :mod:`.iip`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .._progress import log
from .._threads import one_blas_thread_when
from ..linalg.psd import psd_part, top_eigpair
from ..linalg.simplex import project_simplex_rows
from ..linalg.svm_dual import svm_dual, svm_scores
from .iip import (ONE_THREAD_MAX_N, approx_projection, default_K0, default_n_inner,
                  edge_mask, infeasibility, lanczos_start, step_length)

__all__ = ["MKLResult", "mkl_objective", "mkl_spore"]


def mkl_objective(Ks, eta, y, labeled, C: float, beta: float):
    """Eq. 17's objective at given kernels and weights. Returns ``(Phi, omega, max lambda_1)``."""
    Ksum = sum(e * np.asarray(K, dtype=np.float64) for e, K in zip(eta, Ks))
    om = svm_dual(Ksum, y, labeled, C).value
    lam = max(top_eigpair(K)[0] for K in Ks)
    return om + beta * lam, om, lam


@dataclass
class MKLResult:
    """Result of :func:`mkl_spore`.

    Attributes
    ----------
    Ks, eta, alpha, scores : final kernels, weights, SVM alpha and soft predictions.
    Ks_best, eta_best, scores_best, best_iter : the iterate with the smallest objective.
    history : per iterate: ``objective``, ``omega``, ``lambda1`` (max over graphs),
        ``infeasibility`` (max over graphs), ``eta``, ``seconds``; ``scores`` if ``keep_path``.
    """

    Ks: list
    eta: np.ndarray
    alpha: np.ndarray
    scores: np.ndarray
    Ks_best: list
    eta_best: np.ndarray
    scores_best: np.ndarray
    best_iter: int
    history: dict = field(default_factory=dict)
    n_iter: int = 0


@one_blas_thread_when(lambda As, *args, **kwargs: np.shape(As[0])[0] <= ONE_THREAD_MAX_N)
def mkl_spore(As, y, labeled, C: float, beta: float, n_outer: int = 5, n_inner=None,
              step=None, step_eta=None, K0s=None, dtype=np.float64, keep_path: bool = False,
              verbose: bool = False, random_state=None) -> MKLResult:
    """Solve MKL-SPORE (eq. 17) by joint projected subgradient with IIP projections.

    Parameters
    ----------
    As : list of M adjacency matrices of shape (n, n)
    y, labeled, C, beta, n_outer, n_inner, step, dtype, keep_path, verbose, random_state :
        as in :func:`semisup.spore.iip.iip_spore`; ``step`` applies to the kernels
        (default ``n / sqrt(T)``).
    step_eta : float, optional
        Step on eta; default ``1 / sqrt(T)``.
    K0s : list of M arrays, optional
        Starts; default :func:`semisup.spore.iip.default_K0` per graph. eta starts at 1/M.

    Graphs of at most :data:`semisup.spore.iip.ONE_THREAD_MAX_N` vertices are solved with
    one BLAS thread, as in :func:`semisup.spore.iip.iip_spore`.

    Returns
    -------
    MKLResult
    """
    t_start = time.perf_counter()
    y = np.asarray(y, dtype=np.float64)
    labeled = np.asarray(labeled)
    masks = [edge_mask(A) for A in As]
    M, n = len(As), masks[0].shape[0]
    if n_inner is None:
        n_inner = default_n_inner(n_outer)
    s_K = step_length(step, n, n_outer)
    s_eta = 1.0 / math.sqrt(n_outer) if step_eta is None else float(step_eta)
    v0 = lanczos_start(n, random_state)
    if K0s is None:
        Ks = [default_K0(A, dtype, v0)[0] for A in As]
    else:
        Ks = [np.array(K, dtype=dtype) for K in K0s]
    # exactly symmetric iterates: the eigensolvers then read them as they are
    Ks = [0.5 * (K + K.T) for K in Ks]
    k_negs = [None] * M
    eig = [top_eigpair(K, v0=v0) for K in Ks]
    eta = np.full(M, 1.0 / M)
    yS = y[labeled]
    # a float32 kernel is only known to ~1e-7: ask the SVM for what its entries support
    svm_tol = 1e-10 if np.dtype(dtype) == np.float64 else 1e-6
    hist = {k: [] for k in ("objective", "omega", "lambda1", "infeasibility", "eta",
                            "seconds")}
    if keep_path:
        hist["scores"] = []
    best, alpha, t_done = None, None, 0
    for t in range(n_outer + 1):
        Ksum = sum(e * K for e, K in zip(eta, Ks))
        res = svm_dual(Ksum, y, labeled, C, alpha0=alpha, tol=svm_tol)
        alpha = res.alpha
        lams = np.array([lam for lam, _ in eig])
        kstar = int(np.argmax(lams))
        g = res.value + beta * lams[kstar]
        for key, val in (("objective", g), ("omega", res.value), ("lambda1", lams[kstar]),
                         ("infeasibility", max(infeasibility(K, mk)
                                               for K, mk in zip(Ks, masks))),
                         ("eta", eta.copy()), ("seconds", time.perf_counter() - t_start)):
            hist[key].append(val)
        if keep_path:
            hist["scores"].append(svm_scores(Ksum, y, labeled, alpha))
        if best is None or g < best[0]:
            best = (g, t, [K.copy() for K in Ks], eta.copy(), alpha.copy())
        log(f"MKL-IIP {t:4d}/{n_outer}: objective {g:.8g}, eta {np.round(eta, 3)}", verbose)
        if t == n_outer:
            break
        u = np.zeros(n)
        u[labeled] = yS * alpha
        uu = float(u @ u)
        v = eig[kstar][1]
        uv = float(u @ v)
        # ||h_k||^2 = eta_k^2 ||u||^4 / 4 (+ beta^2 - beta eta_k (u.v)^2 for k = k*)
        sq = (eta ** 2) * uu * uu / 4.0
        sq[kstar] += beta ** 2 - beta * eta[kstar] * uv * uv
        hnorm = math.sqrt(max(float(sq.sum()), 0.0))
        h_eta = np.array([-0.5 * float(u @ (K @ u)) for K in Ks])
        new_Ks, new_eig = [], []
        for k, (K, mk) in enumerate(zip(Ks, masks)):
            V = K.copy()
            if hnorm > 0:
                c = s_K / hnorm
                V += (0.5 * c * eta[k]) * np.outer(u, u).astype(dtype)
                if k == kstar:
                    V -= (c * beta) * np.outer(v, v).astype(dtype)
            Kt = approx_projection(V, mk, n_inner, symmetric=True)
            Kp, k_negs[k], lam_k, v_k = psd_part(Kt, expected=k_negs[k], symmetric=True,
                                                 overwrite=True, v0=eig[k][1])
            new_Ks.append(Kp)
            new_eig.append((lam_k, v_k))
        Ks, eig = new_Ks, new_eig
        heta_norm = float(np.linalg.norm(h_eta))
        if heta_norm > 0:
            eta = project_simplex_rows(eta - s_eta * h_eta / heta_norm)
        t_done = t + 1
    _, t_best, Ks_best, eta_best, alpha_best = best
    K_best_sum = sum(e * K for e, K in zip(eta_best, Ks_best))
    return MKLResult(
        Ks=Ks, eta=eta, alpha=alpha, scores=svm_scores(Ksum, y, labeled, alpha),
        Ks_best=Ks_best, eta_best=eta_best,
        scores_best=svm_scores(K_best_sum, y, labeled, alpha_best), best_iter=t_best,
        history=hist, n_iter=t_done)
