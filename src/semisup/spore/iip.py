"""IIP (Algorithm 1 of Shivanna et al. 2015) for SPORE, with the FISTA inexact projection.

SPORE (eq. 5):  ``min_{K in K(G)} g(K) = omega_C(K, y_S) + beta * lambda_1(K)`` over the
elliptope ``K(G) = {K psd, K_ii = 1, K_ij = 0 on non-edges} = A ∩ B`` (A the PSD cone, B the
affine set P(G)). IIP is a projected subgradient method whose projection onto ``A ∩ B`` is
replaced by ``V - prox_{sigma_X}(V)`` (Moreau), with the prox of the support function of the
intersection approximated by a few FISTA steps on the split problem (eq. 16)::

    min_{a, b}  1/2 ||a + b - V||_F^2 + sigma_A(a) + sigma_B(b)

``prox_{sigma_A / 2}`` is the negative-semidefinite part, ``prox_{sigma_B / 2}`` sets edge
entries to 0 and subtracts 1/2 from the diagonal (spore.md §4.1).

Cost: every FISTA step and the PSD clean-up need one dense ``eigh``: O(n_outer * (n_inner + 1)
* n^3) time, O(n^2) memory. The top eigenpair of each new iterate comes for free from the
clean-up's eigendecomposition; Lanczos is used only for ``K0``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from sklearn.utils import check_random_state

from .._progress import log
from .._threads import one_blas_thread_when
from ..linalg.psd import (LANCZOS_MIN_N, min_eigenvalue, nsd_part, psd_part, symmetrize,
                          top_eigpair)
from ..linalg.svm_dual import svm_dual, svm_scores

#: graphs of at most this many vertices are solved with one BLAS thread (the eigensolvers'
#: tridiagonal reductions are memory-bound): on 2 cores a 2 000-node Table 2 fit took
#: 20.6 s with one thread and 27.1 s with two, a 1 000-node 5 x 20 fit 3.6 s and 9.1 s,
#: breast cancer's 569-node default fit 1.7 s and 3.8 s (docs/benchmarks/spore.md,
#: defaults.md); larger graphs keep the BLAS's own threads (not measured here)
ONE_THREAD_MAX_N = 2000

__all__ = ["IIPResult", "lanczos_start", "edge_mask", "project_affine", "infeasibility",
           "fista_prox", "approx_projection", "default_K0", "step_length", "default_n_inner",
           "spore_objective", "iip_spore"]


def edge_mask(A) -> np.ndarray:
    """Dense boolean n x n mask of the edges of a (sparse or dense) adjacency, zero diagonal."""
    if sp.issparse(A):
        M = sp.csr_matrix(A).toarray() != 0
    else:
        M = np.asarray(A) != 0
    M = M | M.T
    np.fill_diagonal(M, False)
    return M


def project_affine(M, mask) -> np.ndarray:
    """Projection onto ``P(G)``: diagonal set to 1, non-edges to 0, edge entries kept."""
    P = np.where(mask, M, 0).astype(M.dtype, copy=False)
    np.fill_diagonal(P, 1)
    return P


def infeasibility(K, mask) -> float:
    """``||K - P_B(K)||_F``: distance of K to the affine set P(G) (diagonal and non-edges)."""
    off = np.where(mask, 0, K).astype(np.float64)
    np.fill_diagonal(off, 0.0)
    diag = np.diag(K).astype(np.float64) - 1.0
    return float(math.sqrt(float(np.sum(off * off)) + float(diag @ diag)))


def fista_prox(V, mask, steps: int, timer=None, symmetric: bool = False, counts=None):
    """FISTA on (★) from a cold start ``a = b = 0``; step 1/2 (Lipschitz constant 2).

    Returns ``(a, b)``; ``V - a - b`` is the approximate projection of ``V`` onto K(G).
    O(steps * n^3). ``timer``: optional one-element list that accumulates eigh seconds.

    Each step's NSD part (``prox_{sigma_A / 2}``) computes only the negative eigenpairs
    (:func:`semisup.linalg.psd.nsd_part`, LAPACK ``syevr`` on ``(-inf, 0]``), expecting as
    many as the previous step had; the n x n updates run in place in preallocated buffers.
    The arithmetic of every entry is the same as in the plain transcription of spore.md §4.2
    (``r = ya + yb - V``, ``ya - r/2``, ``a_new + mom (a_new - a)``, ...), and the iterates
    agree with the full-``syevd`` version to rounding. ``symmetric``: ``V`` is exactly
    symmetric (then so is every iterate, and no symmetrization is needed before ``eigh``);
    otherwise its symmetric part is used. ``counts``: optional list that receives the number
    of negative eigenvalues of each step.
    """
    V = np.asarray(V)
    if V.dtype not in (np.float32, np.float64):
        V = V.astype(np.float64)
    if not symmetric:
        V = symmetrize(V)
    a, b = np.zeros_like(V), np.zeros_like(V)
    if steps <= 0:
        return a, b
    ya, yb = np.zeros_like(V), np.zeros_like(V)        # the extrapolated points
    R, W = np.empty_like(V), np.empty_like(V)           # r / 2 and the NSD input (scratch)
    diag = np.diag_indices_from(V)
    t, k = 1.0, None
    for step in range(steps):
        np.add(ya, yb, out=R)                           # r = ya + yb - V
        R -= V
        R *= 0.5                                        # r / 2 (as 0.5 * r: same rounding)
        np.subtract(ya, R, out=W)                       # ya - r/2
        try:
            a_new, k = nsd_part(W, timer, expected=k, symmetric=True, overwrite=True)
        except np.linalg.LinAlgError:
            # syevr failed (clustered eigenvalues) after destroying W: rebuild it and let
            # nsd_part fall back to syevd, which needs W intact
            np.subtract(ya, R, out=W)
            a_new, k = nsd_part(W, timer, expected=k, symmetric=True)
        if a_new is W:                                  # formed in the scratch (S - P)
            W = np.empty_like(V)
        if counts is not None:
            counts.append(k)
        b_new = np.subtract(yb, R, out=yb)              # yb - r/2 -> prox_{sigma_B / 2}:
        b_new[mask] = 0                                 # edges -> 0,
        b_new[diag] -= 0.5                              # diagonal -> u_ii - 1/2
        if step == steps - 1:
            break
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        mom = (t - 1.0) / t_new
        # y = x_new + mom * (x_new - x), into the buffer of x (no longer needed)
        np.subtract(a_new, a, out=a)
        a *= mom
        a += a_new
        np.subtract(b_new, b, out=b)
        b *= mom
        b += b_new
        ya, a = a, a_new
        yb, b = b, b_new
        t = t_new
    return a_new, b_new


def approx_projection(V, mask, steps: int, timer=None, symmetric: bool = False,
                      counts=None) -> np.ndarray:
    """Approximate (possibly infeasible) projection of ``V`` onto K(G): ``V - a - b``."""
    a, b = fista_prox(V, mask, steps, timer, symmetric, counts)
    out = np.subtract(V, a, out=a)                      # a is fista_prox's own array
    out -= b
    return out


def default_K0(A, dtype=np.float64, v0=None):
    """``K0 = I + A / |lambda_min(A)|`` (spore.md §3.1), or ``I`` for an edgeless graph.

    This lies in K(G): its diagonal is 1, non-edges are 0 and ``lambda_min(K0) = 0``.
    ``v0`` (length n) is the Lanczos start vector used for ``n >= 400`` (None: ARPACK's
    own random start, not reproducible). Returns ``(K0, coupled)`` where ``coupled`` is
    False when K0 = I.
    """
    n = A.shape[0]
    Ad = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    Ad = (Ad != 0).astype(np.float64)
    np.fill_diagonal(Ad, 0.0)
    if not Ad.any():
        return np.eye(n, dtype=dtype), False
    if n >= LANCZOS_MIN_N and v0 is not None:
        S = sp.csr_matrix(Ad)
        lam_min = float(spla.eigsh((S + S.T) * 0.5, k=1, which="SA", tol=1e-10,
                                   v0=np.asarray(v0, dtype=np.float64))[0][0])
    else:
        lam_min = min_eigenvalue(sp.csr_matrix(Ad) if n >= LANCZOS_MIN_N else Ad)
    K0 = np.eye(n) + Ad / abs(lam_min)
    return K0.astype(dtype), True


def lanczos_start(n: int, random_state):
    """Start vector of the Lanczos (ARPACK) eigensolves on ``n`` vertices, or None.

    None (``random_state=None``, or ``n`` below the size where Lanczos is used) leaves
    ARPACK its own random start; a seed makes the eigenpairs bit-reproducible.
    """
    if random_state is None or n < LANCZOS_MIN_N:
        return None
    return check_random_state(random_state).uniform(-1.0, 1.0, n)


def default_n_inner(n_outer: int) -> int:
    """``ceil(sqrt(T))`` FISTA steps per outer iteration (Theorem 5's S = sqrt(T))."""
    return int(math.ceil(math.sqrt(n_outer)))


def step_length(step, n: int, n_outer: int) -> float:
    """Subgradient step length s.

    ``None`` or ``"default"``: ``n / sqrt(T)`` (R/sqrt(T) with the paper's R = n; spore.md §4.4);
    ``"theory"``: ``sqrt(R^2 + Rhat^2) / sqrt(T)`` with ``Rhat = n^2.5`` (Theorem 6; too long in
    practice); a positive float is used as is.
    """
    if step is None or step == "default":
        return n / math.sqrt(n_outer)
    if step == "theory":
        return math.sqrt(n ** 2 + n ** 5) / math.sqrt(n_outer)
    s = float(step)
    if not s > 0:
        raise ValueError(f"step must be positive, 'default' or 'theory', got {step!r}.")
    return s


def spore_objective(K, y, labeled, C, beta):
    """``g(K) = omega_C(K, y_S) + beta * lambda_1(K)`` (eq. 5). Returns ``(g, omega, lambda_1)``."""
    lam, _ = top_eigpair(K)
    om = svm_dual(K, y, labeled, C).value
    return om + beta * lam, om, lam


@dataclass
class IIPResult:
    """Result of :func:`iip_spore`.

    Attributes
    ----------
    K, alpha, scores : final iterate K_T, its SVM alpha (on S) and soft predictions.
    K_best, alpha_best, scores_best, best_iter : the iterate with the smallest g.
    history : dict of lists, one entry per iterate t = 0..T: ``objective`` (g), ``omega``,
        ``lambda1``, ``infeasibility`` (||K - P_B(K)||_F), ``seconds`` (cumulative), and
        ``scores`` (soft predictions) when ``keep_path``.
    n_iter : outer iterations done; ``eig_seconds`` time spent in dense eigendecompositions,
        ``seconds`` in total.
    """

    K: np.ndarray
    alpha: np.ndarray
    scores: np.ndarray
    K_best: np.ndarray
    alpha_best: np.ndarray
    scores_best: np.ndarray
    best_iter: int
    history: dict = field(default_factory=dict)
    n_iter: int = 0
    step: float = 0.0
    n_inner: int = 0
    eig_seconds: float = 0.0
    seconds: float = 0.0


@one_blas_thread_when(lambda A, *args, **kwargs: np.shape(A)[0] <= ONE_THREAD_MAX_N)
def iip_spore(A, y, labeled, C: float, beta: float, n_outer: int = 5, n_inner=None,
              step=None, K0=None, dtype=np.float64, keep_path: bool = False,
              verbose: bool = False, random_state=None) -> IIPResult:
    """Solve SPORE (eq. 5) by IIP (Algorithm 1) with FISTA inexact projections.

    Parameters
    ----------
    A : array or sparse matrix of shape (n, n)
        Adjacency; only its pattern (non-zeros off the diagonal) is used.
    y : array of shape (n,)
        Labels in {-1, +1} on ``labeled`` (other entries ignored).
    labeled : array of int
        Labelled vertices S.
    C, beta : float
        SVM box bound (C > 0) and spectral-norm weight (beta >= 0).
    n_outer : int
        Outer (subgradient) iterations T.
    n_inner : int, optional
        FISTA steps per projection; default ``ceil(sqrt(T))``.
    step : None, "theory" or float
        Step length s; see :func:`step_length`.
    K0 : array of shape (n, n), optional
        Start; default :func:`default_K0`.
    dtype : numpy float dtype
        Precision of the n x n iterates; float32 halves memory and runs LAPACK about 3x
        faster (used for n > 1000 by the estimator); the SVM always runs in float64.
    keep_path : bool
        Record the soft predictions of every iterate in ``history["scores"]``.
    verbose : bool
        Print one line per outer iteration.
    random_state : None, int or RandomState
        Seed of the Lanczos start vectors (``n >= 400``: the default ``K0`` and the top
        eigenpair of the start); None keeps ARPACK's own random start.

    Graphs of at most :data:`ONE_THREAD_MAX_N` vertices are solved with one BLAS thread
    (measured faster on two cores); the caller's limits are restored on return.

    Returns
    -------
    IIPResult
    """
    t_start = time.perf_counter()
    y = np.asarray(y, dtype=np.float64)
    labeled = np.asarray(labeled)
    mask = edge_mask(A)
    n = mask.shape[0]
    if n_inner is None:
        n_inner = default_n_inner(n_outer)
    s = step_length(step, n, n_outer)
    v0 = lanczos_start(n, random_state)
    K = (default_K0(A, dtype, v0)[0] if K0 is None else np.array(K0, dtype=dtype))
    K = 0.5 * (K + K.T)
    lam, v = top_eigpair(K, v0=v0)
    yS = y[labeled]
    # a float32 kernel is only known to ~1e-7: ask the SVM for what its entries support
    svm_tol = 1e-10 if np.dtype(dtype) == np.float64 else 1e-6
    hist = {k: [] for k in ("objective", "omega", "lambda1", "infeasibility", "seconds")}
    if keep_path:
        hist["scores"] = []
    best = None
    alpha = None
    eig_timer = [0.0]
    t_done, k_neg = 0, None
    for t in range(n_outer + 1):
        res = svm_dual(K, y, labeled, C, alpha0=alpha, tol=svm_tol)
        alpha = res.alpha
        g = res.value + beta * lam
        hist["objective"].append(g)
        hist["omega"].append(res.value)
        hist["lambda1"].append(lam)
        hist["infeasibility"].append(infeasibility(K, mask))
        hist["seconds"].append(time.perf_counter() - t_start)
        if keep_path:
            hist["scores"].append(svm_scores(K, y, labeled, alpha))
        if best is None or g < best[0]:
            best = (g, t, K.copy(), alpha.copy())
        log(f"IIP {t:4d}/{n_outer}: g = {g:.8g} (omega {res.value:.6g}, lambda1 {lam:.6g}), "
            f"infeasibility {hist['infeasibility'][-1]:.3g}", verbose)
        if t == n_outer:
            break
        u = np.zeros(n)
        u[labeled] = yS * alpha
        # ||h||_F^2 = ||u||^4 / 4 + beta^2 - beta (u.v)^2, without forming h twice
        uv = float(u @ v)
        hnorm = math.sqrt(max(0.25 * float(u @ u) ** 2 + beta ** 2 - beta * uv * uv, 0.0))
        if hnorm == 0.0:
            break                                        # zero subgradient: K is optimal
        c = s / hnorm
        V = (K + (0.5 * c) * np.outer(u, u).astype(dtype)
             - (c * beta) * np.outer(v, v).astype(dtype))
        Kt = approx_projection(V, mask, n_inner, eig_timer, symmetric=True)
        K, k_neg, lam, v = psd_part(Kt, eig_timer, expected=k_neg, symmetric=True,
                                    overwrite=True, v0=v)
        t_done = t + 1
    g_best, t_best, K_best, alpha_best = best
    return IIPResult(
        K=K, alpha=alpha, scores=svm_scores(K, y, labeled, alpha),
        K_best=K_best, alpha_best=alpha_best,
        scores_best=svm_scores(K_best, y, labeled, alpha_best), best_iter=t_best,
        history=hist, n_iter=t_done, step=s, n_inner=n_inner, eig_seconds=eig_timer[0],
        seconds=time.perf_counter() - t_start)
