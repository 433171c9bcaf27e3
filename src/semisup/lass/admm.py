"""ADMM solver for the Laplacian assignment (LASS) problem.

Solves (Carreira-Perpiñán & Wang 2014, eq. 1)::

    min_Z  lam * tr(Z^T L Z) - tr(G^T Z)   s.t.  Z 1_K = 1_N,  Z >= 0

with the ADMM iteration of the paper's eq. (17) (spec §5)::

    nu = (rho/K) (Y - U) 1 - h,        h = (rho 1 - G 1) / K
    Z  = (2 lam L + rho I)^{-1} (rho (Y - U) + G - nu 1^T)
    Y  = max(Z + U, 0)
    U  = U + Z - Y

Implementation choices (each documented where it is made):

* ``solver="apg"`` (and ``"auto"`` unless a numeric ``rho`` asks for ADMM) replaces ADMM by the
  accelerated projected gradient of :mod:`semisup.lass.apg`, sharing this module's
  validation, closed forms, component handling and multipliers.

* ``lam = 0`` and isolated items are solved in closed form (no iterations).
* The problem splits over connected components (paper Remark 2.3). All components are
  iterated *together* with a per-item penalty ``rho_n`` that is constant on each component
  (``A = 2 lam L + diag(rho)`` is block diagonal, so the iterates of different components
  never interact); ``rho="auto"`` picks Ghadimi et al.'s ``rho* = 2 lam sqrt(mu_2 mu_N)``
  per component. This equals separate solves, vectorised.
* The Z-update's K right-hand sides use :class:`semisup.linalg.spd.SPDSolver`: a cached
  factorisation when the matrix is small or fills little, else warm-started Jacobi-PCG with
  an *inexact* tolerance tied to the ADMM progress. Because ``A`` is a diagonally dominant
  M-matrix with ``A 1 = rho``, ``||A^{-1}||_inf = 1 / min(rho)``, so stopping CG when the
  max-norm residual is below ``rho_min * eps`` bounds the max-norm error of ``Z`` by ``eps``.
  ``eps = 0.1 * max(progress of the previous iteration, tol)``, which decreases linearly with
  the ADMM iterates (summable errors, as inexact-ADMM theory requires).
* On a device (CuPy / ``cupyx`` input) the same loop runs on the device's arrays with the
  block-CG Z-update (the only one there); ``A``, the components and ``rho="auto"`` are
  computed from a host copy of ``L`` once per solve, and ``A`` is moved to the device.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from threadpoolctl import threadpool_limits

from .._progress import log
from .._validation import check_memory, divide, warn_convergence
from ..graph import connected_components
from ..linalg.psd import arpack_start
from ..linalg.simplex import project_simplex_rows
from ..linalg.spd import SPDSolver
from ..linalg.xp import array_modules, check_free_memory, degrees, to_host
from .apg import apg
from .kkt import kkt_residual, lass_multipliers

#: inexact Z-updates: the max-norm error of each CG solve is at most this fraction of the
#: previous iteration's progress ``max(max|Z - Zold|, max|Z - Y|)`` (floored at ``tol``).
CG_FORCING = 0.1
#: cap on CG iterations per Z-update (inexact ADMM tolerates unfinished solves).
CG_MAXITER = 500
#: ``rho="auto"``: components up to this size get their eigenvalues from a dense solver.
DENSE_EIG_MAX = 500
#: ``rho="auto"``: LOBPCG iterations for the Fiedler value of a large component; the
#: Rayleigh quotient it returns is an upper bound on mu_2 and enters rho* under a square
#: root, so a rough value is enough (measured on a 100 000-node 10-NN graph: 0.1758 after
#: 100 iterations, 10 s, against 0.1778 after 300, 30 s).
FIEDLER_MAXITER = 40
#: ``lam * max degree / max|G|`` below this is solved as ``lam = 0`` (with a warning): the
#: Laplacian term is below the rounding of the expert term.
LAM_MIN = 1e-12

#: ``rho="auto"``: floor of ``mu_2 / mu_N`` (caps the condition number of ``A`` at 1e8).
RHO_MIN_RATIO = 1e-8

#: ADMM's two-part test holds on its iterates; it is accepted as convergence only when the
#: KKT residual of the projected point is at most ``KKT_FACTOR * tol`` (in units of max|G|).
KKT_FACTOR = 100.0

#: ``solver="auto"``: problems with at least this many (non-isolated) items use the
#: accelerated projected gradient of :mod:`semisup.lass.apg` instead of ADMM (measured on
#: the 10-NN Gaussian-cluster benchmark, N = 10 000, K = 10, one thread: APG 1 000
#: iterations at 4 ms to a certified 1e-5 gap, ADMM-CG 1 767 iterations at 10 ms).
APG_MIN_N = 5000
#: number of N x K float64 arrays the solver holds at once (memory estimate).
N_WORK_ARRAYS = 9


@dataclass
class LassResult:
    """Result of :func:`solve` (one record for every branch).

    Attributes
    ----------
    Z : ndarray (N, K)
        Assignments (rows projected onto the simplex if ``project=True``).
    Z_raw : ndarray (N, K)
        The last ADMM iterate before projection (row sums 1 up to round-off).
    mu, Xi : ndarray (N,), (N, K)
        Multipliers of ``Z`` in the spec's convention (KKT (a): ``2 lam L Z - G - mu 1^T -
        Xi = 0``, ``Xi >= 0``), from the closed form of paper §2.4 applied to ``Z``.
    Y, U, nu : ndarray
        ADMM state for warm starts (``U`` is the scaled dual; ADMM's own multiplier
        estimates are ``mu ~ -nu`` and ``Xi ~ -rho U``).
    rho : ndarray (N,)
        Penalty used for each item (constant per connected component).
    n_iter : int
        ADMM iterations (0 for closed-form solutions).
    converged : bool
    history : dict of ndarray
        ``"change"`` = max|Z - Zold|, ``"primal"`` = max|Z - Y| and ``"objective"`` = F at
        the raw iterate, one entry per check; APG: ``"objective"`` and ``"gap"`` (the
        certified bound on ``F - F*``).
    solver : str
        "closed-form", "dense-cholesky", "splu", "cg" (ADMM Z-update) or "apg".
    cg_iter : int
        Total CG iterations over all Z-updates (CG path).
    n_components : int
        Connected components of the graph (isolated items included).
    active : ndarray of bool (N,)
        The items the iterations ran on (and the callback saw); the others (isolated
        items, components solved as ``lam = 0``) have closed-form rows.
    timings : dict
        Seconds spent choosing rho (``"rho"``), factoring / preparing the Z-update solver
        (``"setup"``) and iterating (``"iterations"``).
    """
    Z: np.ndarray
    Z_raw: np.ndarray
    mu: np.ndarray
    Xi: np.ndarray
    Y: np.ndarray
    U: np.ndarray
    nu: np.ndarray
    rho: np.ndarray
    n_iter: int = 0
    converged: bool = True
    history: dict = field(default_factory=dict)
    solver: str = "closed-form"
    cg_iter: int = 0
    n_components: int = 1
    timings: dict = field(default_factory=dict)
    active: np.ndarray | None = None


# ----------------------------------------------------------------------------- validation

def _check_finite(A, name: str) -> None:
    """:func:`semisup._validation.check_finite` in ``A``'s array module (host or device)."""
    xp, xsp = array_modules(A)
    data = A.data if xsp.issparse(A) else A
    if data.dtype.kind in "fc" and data.size and not bool(xp.isfinite(data).all()):
        n_bad = int((~xp.isfinite(data)).sum())
        raise ValueError(f"{name} contains {n_bad} NaN or infinite value(s); "
                         "remove or impute them first.")


def _check_laplacian(L):
    """``L`` as a canonical float64 CSR copy of its module (scipy, or cupyx on a device).

    A device matrix is validated on a host copy (O(nnz), once per solve) and moved back:
    the checks' sparse-sparse differences are cuSPARSE's csrgeam2 there, which failed with
    a kernel launch failure on an H200 (CUDA 13, CuPy 14) and left the device unusable."""
    xp, xsp = array_modules(L)
    if xp is not np:
        return xsp.csr_matrix(_check_laplacian(to_host(L)))
    if not xsp.issparse(L):
        L = xp.asarray(L)
        if L.ndim != 2 or L.dtype.kind not in "biuf":
            raise ValueError(f"L must be a numeric 2-D matrix, got shape {L.shape}.")
    if L.shape[0] != L.shape[1]:
        raise ValueError(f"L must be square, got shape {L.shape}.")
    # a float64 copy (astype copies): eliminate_zeros below works in place
    L = (L.tocsr() if xsp.issparse(L) else xsp.csr_matrix(L)).astype(xp.float64)
    _check_finite(L, "L")
    L.eliminate_zeros()
    if L.nnz == 0:
        return L
    scale = float(xp.abs(L.data).max())
    off = L - xsp.diags([L.diagonal()], [0], format="csr")
    if off.nnz and float(off.data.max()) > 0:
        raise ValueError("L has positive off-diagonal entries; pass the unnormalised "
                         "Laplacian D - W of a non-negative affinity W "
                         "(semisup.graph.laplacian).")
    asym = L - L.T.tocsr()
    if asym.nnz and float(xp.abs(asym.data).max()) > 1e-10 * scale:
        raise ValueError("L is not symmetric; symmetrise the affinity W first.")
    rows = float(xp.abs(degrees(L)).max())
    if rows > 1e-8 * scale * max(1, L.shape[0]) ** 0.5:
        raise ValueError(f"L's rows do not sum to zero (max |L 1| = {rows:.3g}); LASS needs "
                         "the unnormalised Laplacian D - W (spec pitfall 8).")
    return L


def _check_G(G, n: int, xp=np):
    """``G`` as a dense float64 copy in the array module ``xp`` (``L``'s: numpy, or CuPy on
    a device, where its working arrays are refused when they do not fit)."""
    if hasattr(G, "toarray") and hasattr(G, "nnz"):      # scipy or cupyx sparse
        shape = G.shape
    else:
        G = xp.asarray(G) if xp is not np else np.asarray(to_host(G))
        if G.dtype.kind not in "biuf":
            raise ValueError(f"G must be numeric, got dtype {G.dtype}.")
        shape = G.shape
    if len(shape) != 2 or shape[0] != n or shape[1] < 1:
        raise ValueError(f"G must have shape (n_items, n_categories) = ({n}, K>=1), "
                         f"got {shape}.")
    what = f"LASS on {shape[0]} items x {shape[1]} categories"
    hint = "Reduce the number of categories or split the items into batches."
    if xp is np:
        check_memory(N_WORK_ARRAYS * 8.0 * shape[0] * shape[1], what, hint)
    else:
        check_free_memory(xp, N_WORK_ARRAYS * 8.0 * shape[0] * shape[1], what, hint)
    if hasattr(G, "toarray") and hasattr(G, "nnz"):
        G = G.toarray()
        G = to_host(G) if xp is np else xp.asarray(G)
    _check_finite(G, "G")
    return xp.array(G, dtype=xp.float64)


def _check_scalar(value, name: str, *, positive: bool) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}.") from None
    if not np.isfinite(v) or v < 0 or (positive and v == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'} and finite, "
                         f"got {value!r}.")
    return v


# ----------------------------------------------------------------------------- pieces

def closed_form_lam0(G) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact solution for ``lam = 0`` (or isolated items): the LP separates per item.

    ``z_n`` is uniform over the categories attaining ``max_k g_nk`` (any mixture of tied
    maxima is optimal; the uniform one is the symmetric choice, and gives 1/K for ``g_n = 0``).
    Multipliers (vertex rows, spec §3.1): ``mu_n = -max_k g_nk``, ``xi_n = max_k g_nk - g_n``.

    Returns ``(Z, mu, Xi)``.
    """
    xp, _ = array_modules(G)
    G = xp.asarray(G, dtype=xp.float64)
    gmax = G.max(axis=1)
    Xi = gmax[:, None] - G
    tie = Xi <= 1e-12 * xp.maximum(1.0, xp.abs(gmax))[:, None]
    Z = tie / tie.sum(axis=1, keepdims=True)
    Xi[tie] = 0.0
    return Z, -gmax, Xi


#: ADMM drops an edge whose weight is below this fraction of both endpoints' degrees
INVISIBLE_EDGE = 1e-20


def _drop_invisible_edges(L) -> sp.csr_matrix:
    """``L`` without the edges that float64 cannot see, with a warning when there are any.

    An edge with ``w_ij < INVISIBLE_EDGE min(d_i, d_j)`` changes neither degree nor any
    solve with ``A = 2 lam L + rho I`` beyond rounding, but it joins components whose
    scales differ by that much: ``rho*`` of the joint component then rests on a Fiedler
    value below rounding, and ADMM does not converge (issue #30: a path with edges 1,
    1e-241, 1 ended on a wrong assignment after max_iter). Dropped, the parts are solved as
    the separate components they are in floating point.
    """
    d = L.diagonal()
    C = sp.coo_matrix(L)
    off = (C.row != C.col) & (-C.data < INVISIBLE_EDGE * np.minimum(d[C.row], d[C.col]))
    if not off.any():
        return L
    warnings.warn(f"{int(off.sum()) // 2} edge(s) of W weigh less than {INVISIBLE_EDGE:g} x "
                  "the degrees at both their ends: the graph is numerically disconnected "
                  "there, and ADMM solves the parts as separate components (a part without "
                  "expert information gets the uniform assignment). Use solver='apg' to keep "
                  "them, or rescale W.", UserWarning, stacklevel=4)
    keep = ~off
    return sp.csr_matrix((C.data[keep], (C.row[keep], C.col[keep])), shape=L.shape)


def _negligible_components(L, G, lam, labels, n_comp, silent) -> np.ndarray:
    """Components (mask over ``n_comp``) solved as ``lam = 0`` (closed form).

    A component whose ``lam x`` largest degree is below :data:`LAM_MIN` ``x max|G|`` on it
    has its Laplacian term below the rounding of its expert term (as :func:`solve` decides
    for the whole graph), e.g. a component of weights 1e-241 beside one of weights 1 (its
    ADMM penalty then was ~1e-244 against G ~ 1: no convergence, or "not positive
    definite"; issue #30). From a cold start (``silent``) a component without expert
    information (G = 0 on it) too: ADMM returns its uniform rows ``1/K`` exactly (``A 1 =
    rho``), and at weights of 1e-241 block CG's curvatures underflowed on the way there.
    """
    # per-item maxima on the host (N numbers each; labels are host component labels)
    dmax = np.zeros(n_comp)
    np.maximum.at(dmax, labels, to_host(L.diagonal()))
    gmax = np.zeros(n_comp)
    np.maximum.at(gmax, labels, to_host(abs(G).max(axis=1)) if G.shape[1] else 0.0)
    small = lam * dmax < LAM_MIN * gmax
    if small.any():
        warnings.warn(f"{int(small.sum())} connected component(s) have Laplacian weights "
                      f"negligible against G in float64 (lam x degree < {LAM_MIN:g} x max|G|): "
                      "solved as lam = 0 there. Rescale W or G, or increase lam.",
                      UserWarning, stacklevel=4)
    return small | (silent & (gmax == 0))


def _component_eigs(Lc) -> tuple[float, float]:
    """(mu_2, mu_N) of a connected component's Laplacian (see :data:`FIEDLER_MAXITER`)."""
    n = Lc.shape[0]
    if n <= DENSE_EIG_MAX:
        ev = sla.eigvalsh(Lc.toarray())
        return float(ev[1]), float(ev[-1])
    # a fixed start: with ARPACK's random one rho* moved in its 6th digit between two fits
    mu_n = float(spla.eigsh(Lc, k=1, which="LA", tol=1e-3, v0=arpack_start(n, seed=1),
                            return_eigenvectors=False)[0])
    rng = np.random.default_rng(0)
    d = Lc.diagonal()
    x0 = rng.standard_normal((n, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LOBPCG warns when it stops at maxiter: intended
        w, _ = spla.lobpcg(Lc, x0, M=sp.diags(1.0 / d), Y=np.ones((n, 1)), tol=1e-3,
                           maxiter=FIEDLER_MAXITER, largest=False)
    return float(w[0]), mu_n


def auto_rho(L, lam: float, labels=None) -> np.ndarray:
    """Per-item penalty ``rho* = 2 lam sqrt(mu_2 mu_N)`` of each connected component.

    Ghadimi et al. (2013) for QPs with Hessian ``2 lam L`` (spec §5.3; the ``2 lam`` factor
    keeps rho consistent when (lam, G) are rescaled). ``mu_2`` is the Fiedler value and
    ``mu_N`` the largest eigenvalue of the component's Laplacian. Isolated items get
    ``rho = 1`` (they need no ADMM).

    Returns ``rho`` of shape (N,). Cost: dense eigenvalues for components of at most
    :data:`DENSE_EIG_MAX` items, Lanczos + a few LOBPCG iterations above.
    """
    L = sp.csr_matrix(L)
    n = L.shape[0]
    if labels is None:
        _, labels = connected_components(L)
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    Lp = L[order][:, order].tocsr()
    rho = np.ones(n)
    for c in np.nonzero(counts > 1)[0]:
        s, e = bounds[c], bounds[c + 1]
        mu2, mun = _component_eigs(Lp[s:e, s:e])
        # Floor mu_2 at RHO_MIN_RATIO mu_N: a numerically disconnected component (mu_2
        # rounding to ~0, e.g. heat weights far below the point spacing) would otherwise
        # make rho underflow and A = 2 lam L + rho I singular (issue #16 items 2 and 8).
        # sqrt(a) sqrt(b), not sqrt(a b): the product underflows to 0 for a component of
        # weights ~1e-241 (rho = 0 left A singular: "not positive definite", issue #30)
        rho[order[s:e]] = 2.0 * lam * np.sqrt(max(mu2, RHO_MIN_RATIO * mun)) * np.sqrt(mun)
    return rho


def _principal_submatrix(L, idx):
    """``L[idx][:, idx]`` (CSR, sorted indices) in ``L``'s sparse module; a device matrix is
    sliced on a host copy (cupyx has no fancy indexing of a sparse matrix, and the product
    ``P L P^T`` that would do it is a sparse-sparse product, avoided there as in
    :func:`_check_laplacian`)."""
    xp, xsp = array_modules(L)
    S = sp.csr_matrix(to_host(L))[idx][:, idx].tocsr()
    S.sort_indices()
    return S if xp is np else xsp.csr_matrix(S)


# ----------------------------------------------------------------------------- ADMM loop

def _system_matrix(L, lam, rho, device):
    """``A = 2 lam L + diag(rho)`` (CSR) in ``L``'s sparse module. On a device it is built on
    a host copy (O(nnz), once per solve) and moved: the sum is a sparse-sparse one, cuSPARSE's
    csrgeam2 there (see :func:`_check_laplacian`)."""
    if not device:
        return ((2.0 * lam) * L + sp.diags(rho)).tocsr()
    _, xsp = array_modules(L)
    A = ((2.0 * lam) * sp.csr_matrix(to_host(L)) + sp.diags(to_host(rho))).tocsr()
    A.sort_indices()
    return xsp.csr_matrix(A)


def _admm(L, G, lam, rho, Y, U, *, tol, max_iter, solver, stopping, check_every,
          track_objective, warm, verbose, callback, device=False):
    """ADMM iterations (paper eq. 17) on a graph without isolated items.

    Array-module code: the iterates stay in ``G``'s module (numpy, or CuPy on a device).
    On a device (``device``) the Z-updates are block CG (``solver`` "auto" or "cg"; a sparse
    factorisation is host-only) and the stopping test reads a few scalars per check."""
    xp, _ = array_modules(G)
    N, K = G.shape
    rho_c = rho[:, None]
    t_start = time.perf_counter()
    A = _system_matrix(L, lam, rho, device)
    spd = SPDSolver(A, method="cg" if device else solver, rtol=0.0, maxiter=CG_MAXITER)
    t_setup = time.perf_counter()
    h = (rho - G.sum(axis=1)) / K
    rho_min = float(rho.min())
    Zold = Y.copy() if warm else xp.zeros((N, K))
    X0 = Zold if warm else xp.full((N, K), 1.0 / K)
    hist = {"change": [], "primal": [], "objective": []}
    err, cg_iter, converged, t = 1.0, 0, False, 0
    for t in range(1, max_iter + 1):
        B = Y - U
        nu = (rho / K) * B.sum(axis=1) - h
        B *= rho_c
        B += G
        B -= nu[:, None]
        err_used = err
        Z = spd.solve(B, X0=X0, rtol=0.0, atol=CG_FORCING * rho_min * max(err, tol),
                      norm="inf")
        check = t % check_every == 0 or t == max_iter
        if check and track_objective:
            AZ = B
            if spd.method_ == "cg":
                AZ -= spd.last_info_.residual_block
            # lam tr(Z^T L Z) = (1/2) <Z, A Z - rho Z>: no extra product with L.
            AZ -= rho_c * Z
            hist["objective"].append(float(0.5 * xp.einsum("ij,ij->", Z, AZ)
                                           - xp.einsum("ij,ij->", G, Z)))
        if spd.method_ == "cg":
            cg_iter += spd.last_info_.n_iter
        T = Z + U
        Y = xp.maximum(T, 0.0)
        U = xp.minimum(T, 0.0)  # = U + Z - Y
        if callback is not None:
            callback(t, Z, Y, U)
        if check:
            change = float(xp.abs(Z - Zold).max())
            primal = float(xp.abs(Z - Y).max())
            hist["change"].append(change)
            hist["primal"].append(primal)
            err = max(change, primal)
            if verbose and (t % 50 == 0 or t == 1):
                log(f"[lass] iter {t}: max|dZ| = {change:.3g}, max|Z-Y| = {primal:.3g}",
                    verbose)
            # With inexact (CG) Z-updates the test is meaningful only once the solve was
            # accurate to the tolerance itself (its error is at most CG_FORCING max(err, tol)
            # in the inf-norm): a loose early solve can return its starting point and fake
            # a zero change (issue #16 item 16). Then solve once more, tightly, and re-test.
            exact = spd.method_ != "cg" or err_used <= tol
            if change < tol and (stopping == "change" or primal < tol) and exact:
                converged = True
                Zold = Z
                break
        Zold = Z
        X0 = Z
    timings = {"setup": t_setup - t_start, "iterations": time.perf_counter() - t_setup}
    return Zold, Y, U, nu, t, converged, hist, spd.method_, cg_iter, timings


def solve(L, G, lam: float, *, rho="auto", Y0=None, U0=None, tol: float = 1e-5,
          max_iter: int = 1000, solver: str = "auto", stopping: str = "two-part",
          check_every: int = 1, project: bool = True, track_objective: bool = True,
          warn_nonunique: bool = True, verbose: bool = False, callback=None,
          backend: str = "auto") -> LassResult:
    """Solve the LASS problem by ADMM (paper §3, eq. 17; spec §5).

    ``min_Z lam tr(Z^T L Z) - tr(G^T Z)  s.t.  Z 1 = 1, Z >= 0``  (paper eq. 1).

    Parameters
    ----------
    L : sparse (N, N)
        Unnormalised graph Laplacian ``D - W`` of a symmetric non-negative affinity.
    G : ndarray or sparse (N, K)
        Item-category affinities, any sign (> 0 associate, < 0 dissociate, 0 unknown); the
        paper recommends scaling them into [-1, 1] and tuning only ``lam``.
    lam : float >= 0
        Weight of the Laplacian term. ``lam = 0`` is solved in closed form.
    rho : float > 0 or "auto"
        ADMM penalty. ``"auto"``: ``2 lam sqrt(mu_2 mu_N)`` per connected component
        (:func:`auto_rho`); the authors' code uses 1.
    Y0, U0 : ndarray (N, K), optional
        Warm start (the ``Y``, ``U`` of a previous result with the same ``rho``).
    tol : float
        ADMM: stop when ``max|Z - Zold| < tol`` and ``max|Z - Y| < tol`` (spec §5.2). APG:
        stop when the Frank-Wolfe gap, an upper bound on ``F(Z) - F*``, is at most
        ``tol |F(Z)|``.
    max_iter : int
        ADMM iteration cap; reaching it emits a ConvergenceWarning with the residuals.
    solver : {"auto", "direct", "cg", "apg"}
        ``"direct"``/``"cg"``: ADMM with that Z-update linear solver (see
        :class:`semisup.linalg.spd.SPDSolver`; ``"cg"`` makes inexact, warm-started
        Jacobi-PCG solves). ``"apg"``: accelerated projected gradient instead of ADMM
        (:mod:`semisup.lass.apg`; one product with ``L`` per iteration, no ``rho``), which
        stops on a *certified* objective gap: ``tol`` then bounds ``(F(Z) - F*) / |F(Z)|``;
        from :data:`semisup.lass.apg.NUMBA_MIN_N` items it runs on parallel compiled
        kernels when numba (``[fast]`` extra) is installed. ``"auto"``: APG, unless ``rho``
        is a number (then ADMM below :data:`APG_MIN_N` items, with the linear solver
        ``SPDSolver`` picks); see ``docs/benchmarks/lass.md`` ("solver='auto'").
    stopping : {"two-part", "change"}
        ``"change"`` is the paper's test alone (can stop early, spec pitfall 1).
    check_every : int
        Evaluate the stopping test (and the histories) every this many iterations.
    project : bool
        Project the rows of the final iterate onto the simplex (paper §3.6).
    track_objective : bool
        Record ``F`` of each checked iterate (O(NK), no extra sparse product). APG always
        records ``"objective"`` and its certified ``"gap"`` (it needs them to stop).
    warn_nonunique : bool
        Warn when a connected component has no expert information (all its rows of G are
        0), whose solution set is every constant row (spec pitfall 7).
    verbose : bool
        Print progress every 50 iterations.
    callback : callable, optional
        ``callback(t, Z, Y, U)`` after each iteration, with the arrays of the items that
        ADMM iterates over (all items unless some are isolated); must not modify them.
        With ``solver="apg"``: ``callback(t, Z, Z, None)`` (no scaled dual).
    backend : {"auto", "numpy", "numba", "xp"}
        APG's loop (:func:`semisup.lass.apg.apg`). ``"xp"`` is the device path: array-module
        code only, in ``L``'s module (the one a ``cupyx`` ``L`` takes under ``"auto"``):
        APG with a Lanczos step of its own, results in ``L``'s module. ADMM (``solver="cg"``,
        or ``"auto"`` with a numeric ``rho`` below :data:`APG_MIN_N` items) runs there too,
        with warm-started block-CG Z-updates (``solver="auto"`` picks CG there, where the
        host may factor) and ``A = 2 lam L + diag(rho)``, components and ``rho="auto"``'s
        eigenvalues built on a host copy of ``L``; ``solver="direct"`` (a sparse Cholesky)
        is host-only and refused.

    Returns
    -------
    LassResult

    Notes
    -----
    Per iteration O(NK) plus the Z-update: K pairs of triangular solves with a cached
    factor, or a few sparse products ``A @ P`` (O(nnz(L) K) each) on the CG path. Memory:
    about nine N x K float64 arrays plus the graph (and the factor, if direct).
    """
    # The minimiser is invariant under (G, lam) -> (G / s, lam / s) and (L, lam) ->
    # (L / c, lam c). Solve the problem with max|G| and the largest degree scaled to about
    # 1 (powers of two: exact in floating point), so that neither G * 1e300 nor heat weights
    # of 1e-200 overflow or underflow the solvers (issue #16 items 2, 8 and 12).
    L = _check_laplacian(L)
    G = _check_G(G, L.shape[0], array_modules(L)[0])
    lam = _check_scalar(lam, "lam", positive=False)
    gmax = float(abs(G).max()) if G.size else 0.0
    dmax = float(L.diagonal().max()) if L.shape[0] else 0.0
    sG = 2.0 ** np.ceil(np.log2(gmax)) if gmax > 0 else 1.0
    sL = 2.0 ** np.ceil(np.log2(dmax)) if dmax > 0 else 1.0
    lam_s = lam * (sL / sG)
    if lam > 0 and not LAM_MIN < lam_s < np.inf:
        if lam_s == np.inf:
            raise ValueError(f"lam * L (largest degree {dmax:.3g}, lam={lam:g}) overflows "
                             f"against G (max |G| = {gmax:.3g}): rescale W or G.")
        lam_s = 0.0
        warnings.warn(f"lam * L (largest degree {dmax:.3g}, lam={lam:g}) is negligible "
                      f"against G (max |G| = {gmax:.3g}) in float64: solved as lam = 0. "
                      "Rescale W or G, or increase lam.", UserWarning, stacklevel=2)
    if not isinstance(rho, str):
        rho = _check_scalar(rho, "rho", positive=True) / sG
    res = _solve(divide(L, sL), divide(G, sG), lam_s, rho=rho,
                 Y0=Y0, U0=U0, tol=tol, max_iter=max_iter, solver=solver, stopping=stopping,
                 check_every=check_every, project=project, track_objective=track_objective,
                 warn_nonunique=warn_nonunique, verbose=verbose, callback=callback,
                 backend=backend)
    if sG != 1.0:      # multipliers and objectives back in the units of G
        for name in ("mu", "Xi", "nu", "rho"):
            setattr(res, name, getattr(res, name) * sG)
        for key in ("objective", "gap"):
            if key in res.history:
                res.history[key] = np.asarray(res.history[key]) * sG
    return res


def _solve(L, G, lam: float, *, rho, Y0, U0, tol, max_iter, solver, stopping, check_every,
           project, track_objective, warn_nonunique, verbose, callback,
           backend="auto") -> LassResult:
    """:func:`solve` on a problem scaled to max|G| ~ 1 and largest degree ~ 1.

    The bookkeeping (components, isolated items, which rows iterate) runs on the host from
    N-vectors; the N x K arrays and the iterations stay in ``L``'s module."""
    L = _check_laplacian(L)
    xp, xsp = array_modules(L)
    N = L.shape[0]
    G = _check_G(G, N, xp)
    K = G.shape[1]
    lam = _check_scalar(lam, "lam", positive=False)
    tol = _check_scalar(tol, "tol", positive=True)
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}.")
    if int(check_every) != check_every or check_every < 1:
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}.")
    if solver not in ("auto", "direct", "cg", "apg"):
        raise ValueError(f"solver must be 'auto', 'direct', 'cg' or 'apg', got {solver!r}.")
    if stopping not in ("two-part", "change"):
        raise ValueError(f"stopping must be 'two-part' or 'change', got {stopping!r}.")
    auto = isinstance(rho, str)
    if auto and rho != "auto":
        raise ValueError(f"rho must be a positive number or 'auto', got {rho!r}.")
    rho_value = None if auto else _check_scalar(rho, "rho", positive=True)
    warm = Y0 is not None or U0 is not None
    if backend not in ("auto", "numpy", "numba", "xp"):
        raise ValueError(f"backend must be 'auto', 'numpy', 'numba' or 'xp', got {backend!r}.")
    device = backend == "xp" or xp is not np
    if device and solver == "direct":
        raise ValueError("solver='direct' (ADMM with a sparse Cholesky factor) is not "
                         "available for arrays on a device; use solver='cg' (ADMM with "
                         "block-CG Z-updates there), 'auto' or 'apg'.")
    if warm:
        Y0 = xp.zeros((N, K)) if Y0 is None else xp.array(Y0, dtype=xp.float64)
        U0 = xp.zeros((N, K)) if U0 is None else xp.array(U0, dtype=xp.float64)
        for name, M in (("Y0", Y0), ("U0", U0)):
            if M.shape != (N, K):
                raise ValueError(f"{name} must have shape {(N, K)}, got {M.shape}.")
            _check_finite(M, name)

    # the host's copy of L on a device (O(nnz), once): components, edge pruning and
    # auto_rho's eigenvalues are host computations on N-vectors and the graph
    L_host = sp.csr_matrix(to_host(L)) if device else L
    if solver in ("direct", "cg") or (solver == "auto" and not auto):
        pruned = _drop_invisible_edges(L_host)   # ADMM only; see there
        if pruned is not L_host:
            L_host = pruned
            L = xsp.csr_matrix(pruned) if device else pruned
    n_comp, labels = connected_components(L_host)
    sizes = np.bincount(labels)
    isolated = sizes[labels] == 1
    if lam == 0:
        isolated[:] = True
    else:
        isolated |= _negligible_components(L, G, lam, labels, n_comp, not warm)[labels]
    n_active = int((~isolated).sum())
    # "auto" is APG unless a numeric rho asks for ADMM: measured (docs/benchmarks/lass.md,
    # "auto"), APG reached an equal or lower objective than ADMM on every graph and lam
    # tried, and was faster wherever ADMM converged slowly (kNN graphs of 2 000 / 4 000
    # points at lam = 1: 0.65 / 2.0 s against 4.8 / 12.7 s for ADMM-CG); where ADMM stopped
    # early at lam = 100 its KKT residual flagged a worse point
    use_apg = solver == "apg" or (solver == "auto" and (n_active >= APG_MIN_N or auto))
    t0 = time.perf_counter()
    if use_apg:
        rho_vec = np.ones(N)  # APG has no penalty; 1 keeps U = -Xi / rho meaningful
    elif auto and lam > 0:
        with threadpool_limits(1):   # see the ADMM loop below
            rho_vec = auto_rho(L_host, lam, labels)
    elif auto:
        rho_vec = np.ones(N)
    else:
        rho_vec = np.full(N, rho_value)

    Z = xp.empty((N, K))
    Y = xp.empty((N, K))
    U = xp.empty((N, K))
    mu = xp.empty(N)
    Xi = xp.empty((N, K))
    nu = xp.empty(N)
    if isolated.any():
        iso = xp.asarray(isolated)
        Zc, muc, Xic = closed_form_lam0(G[iso])
        Z[iso], Y[iso], mu[iso], Xi[iso] = Zc, Zc, muc, Xic
        U[iso] = -Xic / xp.asarray(rho_vec[isolated, None])
        nu[iso] = -muc
    Z_raw = Z.copy()
    res = LassResult(Z=Z, Z_raw=Z_raw, mu=mu, Xi=Xi, Y=Y, U=U, nu=nu, rho=rho_vec,
                     n_components=int(n_comp),
                     timings={"rho": time.perf_counter() - t0, "setup": 0.0, "iterations": 0.0})
    act = np.nonzero(~isolated)[0]
    res.active = ~isolated
    if warn_nonunique and lam > 0:
        silent = np.bincount(labels, weights=to_host(abs(G).sum(axis=1)),
                             minlength=n_comp) == 0
        silent &= sizes > 1
        if silent.any():
            warnings.warn(f"{int(silent.sum())} connected component(s) have no expert "
                          "information (all their rows of G are 0): any constant assignment "
                          "is optimal there, and the returned one depends on the "
                          "initialisation (uniform 1/K from a cold start).", UserWarning,
                          stacklevel=2)
    if act.size == 0:
        return res

    full = act.size == N
    La = L if full else _principal_submatrix(L, act)
    act_x = xp.asarray(act)
    Ga = G if full else G[act_x]
    ra = xp.asarray(rho_vec if full else rho_vec[act])
    Ya = (Y0 if full else Y0[act_x]) if warm else xp.zeros_like(Ga)
    Ua = (U0 if full else U0[act_x]) if warm else xp.zeros_like(Ga)
    # One BLAS thread: the BLAS work here is small dense solves (and, in auto_rho, small
    # eigenproblems and LOBPCG's tall-skinny products); on a busy 2-core machine
    # oversubscribed OpenBLAS threads made them 6x slower (measured: eigvalsh of 600 x 600,
    # 0.6 s with 2 threads against 0.08 s with 1).
    if use_apg:
        Z0 = project_simplex_rows(Ya) if warm else closed_form_lam0(Ga)[0]
        with threadpool_limits(1):
            Za, _, t, conv, hist, timings = apg(
                La, Ga, lam, Z0, tol=tol, max_iter=int(max_iter),
                check_every=int(check_every), verbose=verbose, callback=callback,
                backend="xp" if device else backend)
        mua, Xia = lass_multipliers(Za, La, Ga, lam)
        Z_raw[act_x], Z[act_x], Y[act_x], nu[act_x] = Za, Za, Za, -mua
        U[act_x] = -Xia / ra[:, None]
        mu[act_x], Xi[act_x] = mua, Xia
        res.n_iter, res.converged, res.solver = t, conv, "apg"
        res.history = {k: np.asarray(v) for k, v in hist.items() if k != "restarts"}
        res.timings.update(timings)
        if not conv:
            gap = hist["gap"][-1] if hist["gap"] else float("nan")
            F = hist["objective"][-1] if hist["objective"] else float("nan")
            warn_convergence(
                f"LASS APG did not converge in {t} iterations: certified objective gap "
                f"{gap:.3g} = {gap / max(abs(F), 1e-300):.3g} |F| (tol = {tol:g}). Increase "
                "max_iter or loosen tol.")
        return res
    with threadpool_limits(1):
        Za, Ya, Ua, nua, t, conv, hist, method, cg_iter, timings = _admm(
            La, Ga, lam, ra, Ya, Ua, tol=tol, max_iter=int(max_iter), solver=solver,
            stopping=stopping, check_every=int(check_every),
            track_objective=track_objective, warm=warm, verbose=verbose, callback=callback,
            device=device)
    Zp = project_simplex_rows(Za) if project else Za
    mua, Xia = lass_multipliers(Zp, La, Ga, lam)
    kkt = kkt_residual(Zp, La, Ga, lam, mua, Xia)["max"] if conv else 0.0
    if kkt > KKT_FACTOR * tol:
        # the iterates stopped moving, but the point is not optimal (slow ADMM progress
        # looks like convergence on hard graphs): not reported as converged
        conv = False
        warn_convergence(
            f"LASS ADMM stopped changing after {t} iterations (tol = {tol:g}) but the KKT "
            f"residual of the result is {kkt:.3g} (x max|G|), above {KKT_FACTOR * tol:g}: "
            "the assignments are not optimal to tol. Use solver='apg' (certified objective "
            "gap) or a smaller tol.")
    Z_raw[act_x], Z[act_x], Y[act_x], U[act_x], nu[act_x] = Za, Zp, Ya, Ua, nua
    mu[act_x], Xi[act_x] = mua, Xia
    res.n_iter, res.converged, res.solver, res.cg_iter = t, conv, method, cg_iter
    res.history = {k: np.asarray(v) for k, v in hist.items()}
    res.timings.update(timings)
    if not conv and not kkt:
        change = hist["change"][-1] if hist["change"] else float("nan")
        primal = hist["primal"][-1] if hist["primal"] else float("nan")
        warn_convergence(
            f"LASS ADMM did not converge in {t} iterations: max|Z - Zold| = {change:.3g}, "
            f"max|Z - Y| = {primal:.3g} (tol = {tol:g}). Increase max_iter, loosen tol, "
            f"or change rho (now {'auto' if auto else rho_value}; rho='auto' is usually "
            "good for long runs, a smaller rho for a rough answer).")
    return res
