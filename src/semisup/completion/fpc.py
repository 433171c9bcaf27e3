"""Fixed point continuation (FPC) for transduction by matrix completion.

Goldberg, Zhu, Recht, Xu & Nowak (NIPS 2010). With ``Z`` stacking label rows over
feature rows (spec ``matrix_completion.md`` §4, rows ``0..t-1`` labels, ``t..t+d-1``
features, MC-1 adds a last all-ones row):

MC-b (paper eq. 3)::

    min_{Z, b}  mu ||Z||_* + lam/|Omega_Y| sum_{Omega_Y} log(1 + exp(-y_ij (Z_ij + b_i)))
                           + 1/|Omega_X| sum_{Omega_X} 0.5 (Z_{t+k,j} - x_kj)^2

MC-1 (paper eq. 4): the same without ``b``, over a ``(t+d+1) x n`` matrix ``Z`` whose last
row is constrained to ``1^T``.

Both are solved by proximal gradient steps (gradient step, then singular value shrinkage,
then for MC-1 resetting the last row to ones: paper Algorithms 1 and 2) along a decreasing
sequence of ``mu`` values, each stage warm-started from the previous one. The whole path
is returned (or streamed to a callback) so that cross-validation needs one run per ``lam``.
With no labels (``Y=None``) the same code is plain FPC on ``X`` alone (the FPC+SVM
baseline), step ``|Omega_X|``.

The MC-1 iteration is not a proximal-gradient method for the constrained problem; its fixed
point lies slightly above the constrained optimum (spec §6.7). It is implemented exactly
as the paper describes.

``solver="apg"`` applies the same step (same operator, same step sizes for MC-1, same
stopping rule and continuation) at a Nesterov-extrapolated point, FISTA with the
gradient-based adaptive restart of O'Donoghue & Candès (2015). Its limit is the same:
the MC-b optimum and the MC-1 fixed point of the paper's iteration. On problems whose
feature loss is weighted far below the label loss (many observed features, few labels:
``tau_Z / |Omega_X| << 1``) the plain iteration moves the feature rows by a factor
``1 - tau_Z / |Omega_X|`` per step and needs thousands of iterations per stage; the
accelerated one needs about the square root of that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from .._optional import available, require
from .._threads import one_blas_thread_when
from .._validation import warn_convergence
from ..linalg.lowrank import (GRAM_MIN_REL_TAU, RANDOMIZED_MIN_DIM, ShrinkResult, shrink,
                              shrink_lowrank_plus_sparse, svd_thin)

__all__ = ["FPCPath", "continuation_grid", "fpc_path", "objective", "smooth_part",
           "initial_point", "step_sizes", "accelerated_step_scale", "SOLVERS"]

#: ``"fpc"``: the paper's fixed point iteration; ``"apg"``: the same step taken at an
#: extrapolated point (FISTA with adaptive restart), same limit
SOLVERS = ("fpc", "apg")

#: ``fpc_path`` runs with one BLAS thread below this many entries of the stacked matrix:
#: on 2 cores one shrinkage (warm randomized SVD, rank 10) took 6.1 ms with one thread and
#: 16.9 ms with two at 306 x 2 400, 125 and 198 ms at 506 x 20 000, and 693 and 280 ms at
#: 1 006 x 50 000; a default MC fit on a 2 400 x 300 problem took 39 s with one thread and
#: 155 s with two (docs/benchmarks/defaults.md, 2026-11-25)
ONE_THREAD_MAX_ENTRIES = 25_000_000


@dataclass
class FPCPath:
    """Result of :func:`fpc_path`.

    Attributes
    ----------
    mus : ndarray
        The ``mu`` of every stage that was run, decreasing.
    grid_index : ndarray of int
        Position of each stage's ``mu`` in the grid passed as ``mus`` (or the generated one).
    n_iter, objective, rank, converged : ndarray
        Per stage: iterations, final objective ``F`` at that stage's ``mu``, rank of ``Z``,
        whether the relative-change test was met before ``max_inner``.
    Z, b : ndarray
        Final iterate (``b`` is ``None`` for MC-1 and feature-only FPC).
    models : list of (Z, b) or None
        Iterate at the end of every stage when ``store_path=True``.
    sigma1 : float
        Largest singular value of the observed-entries matrix (sets ``mu_1``).
    tau_Z, tau_b : float
        Step sizes used.
    history : ndarray
        Objective after every iteration, all stages concatenated.
    svd_methods : dict
        How many shrinkage calls used each SVD method.
    n_restarts : int
        Momentum restarts of ``solver="apg"`` (0 for ``"fpc"``).
    """

    mus: np.ndarray
    grid_index: np.ndarray
    n_iter: np.ndarray
    objective: np.ndarray
    rank: np.ndarray
    converged: np.ndarray
    Z: np.ndarray
    b: np.ndarray | None
    models: list | None
    sigma1: float
    tau_Z: float
    tau_b: float
    history: np.ndarray
    svd_methods: dict = field(default_factory=dict)
    n_restarts: int = 0


def continuation_grid(sigma1: float, mu_final: float = 1e-5, eta: float = 0.25
                      ) -> np.ndarray:
    """``mu_1 = eta sigma1``, ``mu_{k+1} = max(eta mu_k, mu_final)`` until ``mu_final``.

    If ``eta sigma1 <= mu_final`` the grid is the single value ``mu_final``.
    """
    if not 0 < eta < 1:
        raise ValueError(f"eta must lie in (0, 1), got {eta}.")
    if mu_final <= 0:
        raise ValueError(f"mu_final must be positive, got {mu_final}.")
    mus = []
    mu = eta * sigma1
    while mu > mu_final:
        mus.append(mu)
        mu *= eta
    mus.append(mu_final)
    return np.asarray(mus)


def step_sizes(n_obs_y: int, n_obs_x: int, lam: float, n: int, c: float = 3.8):
    """Spec §6.2: ``tau_Z = min(c |Omega_Y| / lam, |Omega_X|)``, ``tau_b = c |Omega_Y| / (lam n)``.

    Without labels (``n_obs_y == 0``) ``tau_Z = |Omega_X|`` (plain FPC on ``X``).
    """
    if n_obs_y == 0:
        return float(n_obs_x), 0.0
    return min(c * n_obs_y / lam, float(n_obs_x)), c * n_obs_y / (lam * n)


def accelerated_step_scale(MY, n_obs_y: int, n_obs_x: int, lam: float, tau_Z: float,
                           tau_b: float, use_b: bool) -> float:
    """Factor (``<= 1``) applied to the step sizes by ``solver="apg"``.

    An accelerated step needs the gradient's Lipschitz constant in the step's metric
    ``diag(1/tau_Z, 1/tau_b)`` to be at most 1, where the plain iteration only needs 2.
    Label row ``i`` of MC-b couples ``n_i`` entries of ``Z`` with ``b_i``; the logistic
    curvature is at most ``1/4``, so that constant is
    ``max_i lam/(4|Omega_Y|) (tau_Z + n_i tau_b)`` for the labels and ``tau_Z/|Omega_X|``
    for the features. MC-1 (no ``b``) gives ``lam tau_Z/(4|Omega_Y|) <= c/4 < 1``: its steps,
    which define its fixed point, are never changed. MC-b with the paper's ``c = 3.8``
    is scaled only when a label row has more than ``n/19`` observed entries; its optimum
    does not depend on the steps.
    """
    L = tau_Z / n_obs_x if n_obs_x else 0.0
    if n_obs_y:
        n_i = int(np.asarray(MY).sum(axis=1).max()) if use_b else 0
        L = max(L, lam / (4.0 * n_obs_y) * (tau_Z + n_i * tau_b))
    return 1.0 if L <= 1.0 else 1.0 / L


class _Problem:
    """Data of one completion problem in the stacked orientation, plus loss evaluation."""

    def __init__(self, X, MX, Y, MY, lam, variant):
        self.MX = np.asarray(MX, dtype=bool)
        self.Xo = np.where(self.MX, X, 0.0)
        self.d, self.n = self.Xo.shape
        if Y is None:
            self.t = 0
            self.MY = np.zeros((0, self.n), dtype=bool)
            self.Yo = np.zeros((0, self.n))
        else:
            self.MY = np.asarray(MY, dtype=bool)
            self.Yo = np.where(self.MY, Y, 0.0)   # zero where unobserved kills those terms
            self.t = self.Yo.shape[0]
        self.variant = variant if self.t else "x"
        self.lam = float(lam)
        self.nY = int(self.MY.sum())
        self.nX = int(self.MX.sum())
        self.MXf = self.MX.astype(float)
        self.all_x = bool(self.MX.all())
        self.MYf = self.MY.astype(float)
        self.cy = self.lam / self.nY if self.nY else 0.0
        self.m = self.t + self.d + (1 if self.variant == "mc1" else 0)

    def observed_matrix(self):
        M = np.vstack([self.Yo, self.Xo])
        if self.variant == "mc1":
            M = np.vstack([M, np.ones((1, self.n))])
        return M

    def smooth(self, Z, b, out=None):
        """Value and gradient of the two loss terms (spec §5); the gradient is written into
        ``out`` when given (no full-size temporary: see ``fpc_path``'s notes on memory)."""
        t, d = self.t, self.d
        G = np.empty_like(Z) if out is None else out
        f = 0.0
        gb = None
        if t:
            ZL = Z[:t] if b is None else Z[:t] + b[:, None]
            margin = self.Yo * ZL
            f += self.cy * float(np.vdot(self.MYf, np.logaddexp(0.0, -margin)))
            np.multiply(expit(-margin), self.Yo, out=G[:t])
            G[:t] *= -self.cy
            if b is not None:
                gb = G[:t].sum(axis=1)
        R = G[t:t + d]
        np.subtract(Z[t:t + d], self.Xo, out=R)
        if not self.all_x:
            R *= self.MXf
        f += 0.5 * float(np.vdot(R, R)) / self.nX
        R *= 1.0 / self.nX
        if G.shape[0] > t + d:
            G[t + d:] = 0.0
        return f, G, gb


def smooth_part(Z, b, X, MX, Y, MY, lam):
    """Loss terms of MC-b / MC-1 and their gradient (spec §5); returns ``(f, G, g_b)``.

    ``Z`` is the stacked matrix; pass ``b=None`` for MC-1 (the gradient of its last row
    is zero).
    """
    variant = "mcb" if b is not None else "mc1"
    Z = np.asarray(Z, dtype=float)
    prob = _Problem(X, MX, Y, MY, lam, variant)
    return prob.smooth(Z, None if b is None else np.asarray(b, dtype=float))


def objective(Z, b, mu, X, MX, Y, MY, lam) -> float:
    """``F_b`` (paper eq. 3) or, with ``b=None``, ``F_1`` (eq. 4, constraint not checked)."""
    f, _, _ = smooth_part(Z, b, X, MX, Y, MY, lam)
    return f + mu * float(np.linalg.svd(Z, compute_uv=False).sum())


def initial_point(M):
    """Best rank-1 approximation ``sigma1 u1 v1^T`` of ``M`` and ``sigma1`` (spec §6.3).

    Lanczos (ARPACK, deterministic start) for matrices whose smaller side is at least
    200, where a full SVD would cost more than the first FPC iterations.
    """
    if min(M.shape) >= 200:
        from scipy.sparse.linalg import svds
        v0 = np.ones(min(M.shape)) / np.sqrt(min(M.shape))
        U, s, Vt = svds(M, k=1, v0=v0, tol=0, solver="arpack")
    else:
        U, s, Vt = svd_thin(M)
    return s[0] * np.outer(U[:, 0], Vt[0]), float(s[0]), Vt[:1]


def _projected_core_svals(res: ShrinkResult, n: int):
    """Singular values of the MC-1 iterate (shrunk, then last row reset to ones).

    With ``Z_s = U S V^T`` the shrunk matrix and ``e`` the last unit vector, the projected
    iterate is ``D + e 1^T`` with ``D = (I - e e^T) Z_s = P V^T``, ``P = (I - e e^T) U S``,
    i.e. ``A B^T`` with ``A = [P, e]``, ``B = [V, 1]``. Its squared singular values are the
    eigenvalues of ``(A^T A)(B^T B)``, two ``(r+1) x (r+1)`` Gram matrices (``B^T B`` in
    closed form since ``V`` is orthonormal, ``V^T 1`` from the shrink's row sums):
    ``O(m r^2)`` instead of a second SVD.
    """
    r = res.rank
    P = res.U[:-1] * res.sigma
    Ga = np.zeros((r + 1, r + 1))
    Ga[:r, :r] = P.T @ P
    Ga[r, r] = 1.0
    Gb = np.empty((r + 1, r + 1))
    Gb[:r, :r] = np.eye(r)
    c = res.right_sums()
    Gb[:r, r] = c
    Gb[r, :r] = c
    Gb[r, r] = n
    ev = np.linalg.eigvals(Ga @ Gb).real
    return np.sort(np.sqrt(np.clip(ev, 0.0, None)))[::-1]


class _FactoredIterate:
    """Feature-only FPC iterate kept as ``Z = U diag(s) Vt``, never formed densely.

    The gradient of the squared loss lives on ``Omega_X``, so the gradient step is
    low rank plus sparse and its shrinkage needs only products with the factors and a
    sparse matrix (:func:`shrink_lowrank_plus_sparse`): ``O(|Omega_X| k + (d + n) k^2)`` per
    iteration instead of ``O(d n min(d, n))``.
    """

    def __init__(self, prob, U, s, Vt):
        oi, oj = np.nonzero(prob.MX)                # row-major: the CSR data order
        self.flat = np.flatnonzero(prob.MX)
        self.x = prob.Xo.ravel()[self.flat]
        self.nX = prob.nX
        self.S = sp.csr_matrix((np.ones(oi.size), (oi, oj)), shape=prob.MX.shape)
        # transpose with the same entries: St.data = S.data[perm]
        T = sp.csr_matrix((np.arange(oi.size, dtype=float), (oj, oi)),
                          shape=prob.MX.shape[::-1])
        self.perm = T.data.astype(np.int64)
        self.St = T
        self._set(U, s, Vt)

    def _set(self, U, s, Vt):
        self.U, self.s, self.Vt = U, s, Vt
        # a dense product and one gather beat gathering factor rows per observed entry
        z = ((U * s) @ Vt).ravel()[self.flat]
        self.R = z - self.x
        self.f = 0.5 * float(self.R @ self.R) / self.nX

    @property
    def rank(self):
        return int(self.s.size)

    def step(self, tau_Z, thresh, rng) -> bool:
        """One gradient + shrink step; False (state unchanged) if the rank got too large."""
        self.S.data[:] = self.R * (-tau_Z / self.nX)
        self.St.data[:] = self.S.data[self.perm]
        res = shrink_lowrank_plus_sparse(self.U, self.s, self.Vt, self.S, thresh,
                                         St=self.St, rank_estimate=self.rank,
                                         random_state=rng)
        if res is None:
            return False
        self._set(*res)
        return True

    def dense(self):
        return (self.U * self.s) @ self.Vt


def _rank(svals) -> int:
    return int((svals > 1e-10 * max(svals[0], 1e-300)).sum()) if svals.size else 0


def _small(X, MX, Y=None, MY=None, **kwargs):
    """Fewer than :data:`ONE_THREAD_MAX_ENTRIES` entries in the stacked matrix."""
    rows = np.shape(X)[0] + (0 if Y is None else np.shape(Y)[0]) + 1
    return rows * np.shape(X)[1] < ONE_THREAD_MAX_ENTRIES


@one_blas_thread_when(_small)
def fpc_path(X, MX, Y=None, MY=None, *, variant: str = "mcb", lam: float = 1.0,
             mus=None, mu_final: float = 1e-5, eta: float = 0.25, tol: float = 1e-5,
             c: float = 3.8, max_inner: int = 10_000, svd: str = "auto",
             store_path: bool = False, callback=None, random_state=None,
             warn: bool = True, backend: str = "auto", solver: str = "fpc",
             verbose: bool = False) -> FPCPath:
    """Run FPC with continuation for MC-b, MC-1 or (``Y=None``) features only.

    Parameters
    ----------
    X : ndarray of shape (d, n)
        Features, items as columns (spec orientation); entries outside ``MX`` are ignored.
    MX : ndarray of bool, shape (d, n)
        Observed feature entries (``Omega_X``).
    Y : ndarray of shape (t, n), optional
        Labels in {-1, +1}; entries outside ``MY`` are ignored.
    MY : ndarray of bool, shape (t, n), optional
        Observed label entries (``Omega_Y``).
    variant : {"mcb", "mc1"}
        Explicit bias (eq. 3) or all-ones row (eq. 4).
    lam : float
        Label-loss weight ``lambda``.
    mus : array-like, optional
        Decreasing ``mu`` grid (e.g. shared across CV folds, spec §7). Stages whose ``mu``
        exceeds this problem's own start ``eta sigma1`` are skipped (the run "starts lower
        on the same grid"); the last grid value is always run. Default:
        :func:`continuation_grid` ``(sigma1, mu_final, eta)``.
    mu_final, eta : float
        Continuation end point and decay (spec §6.4) when ``mus`` is not given.
    tol : float
        Stage ends when ``|F_k - F_{k-1}| < tol |F_{k-1}|`` (spec §6.5).
    c : float
        Step-size factor, ``< 4`` (spec §6.2).
    max_inner : int
        Iteration cap per stage (a safeguard not in the paper).
    svd : {"auto", "exact", "gram", "randomized"}
        Shrinkage method, see :func:`semisup.linalg.lowrank.shrink`. With ``"auto"``,
        feature-only FPC on a matrix whose sides are both at least 200 keeps the iterate
        in factored form (low rank plus sparse gradient, see ``_FactoredIterate``) while
        its rank stays below a fifth of the smaller side, then continues densely.
    store_path : bool
        Keep ``(Z, b)`` of every stage in ``models``.
    callback : callable, optional
        ``callback(k, mu, Z, b)`` after stage ``k`` (index into the grid); a true return
        value ends the path there (the rest of the grid is not run, e.g. once a held-out
        error has stopped improving).
    random_state : None, int or Generator
        Seeds the randomized SVD.
    warn : bool
        Emit a ConvergenceWarning when a stage hits ``max_inner``.
    backend : {"auto", "numba", "numpy"}
        ``"auto"`` runs whole stages in one compiled loop (:mod:`._fpc_numba`, the
        ``[fast]`` extra) when the stacked matrix is wide and its smaller side is below
        ``RANDOMIZED_MIN_DIM`` (where ``svd="auto"`` always takes the Gram route and numpy
        call overhead dominates each iteration: whole paths on the paper's synthetic
        problems run about 2x faster); ``"numpy"`` never does. Both give the same
        iterates up to summation order.
    solver : {"fpc", "apg"}
        ``"fpc"``: the paper's iteration. ``"apg"``: the same step taken at the
        extrapolated point ``Z_k + beta_k (Z_k - Z_{k-1})`` (FISTA momentum, reset whenever
        ``<Y_k - Z_{k+1}, Z_{k+1} - Z_k> > 0``, O'Donoghue & Candès 2015), same stopping rule;
        it converges to the same MC-b optimum / MC-1 fixed point, in far fewer iterations
        when the problem is ill-conditioned (see the module docstring). MC-b steps are
        scaled by :func:`accelerated_step_scale` when needed. Feature-only runs keep their
        factored iterate only with ``"fpc"``.
    verbose : bool
        Print one line per stage (``mu``, iterations, objective, rank, seconds) to stderr.

    Returns
    -------
    FPCPath

    Notes
    -----
    Per iteration: one shrinkage of a ``(t+d[+1]) x n`` matrix (``O((t+d)^2 n)`` exact, or
    ``O((t+d) n k)`` randomized at rank ``k``) plus ``O((t+d) n)`` for the losses.

    The loop reuses its full-size work arrays (gradient, extrapolated point) instead of
    allocating new ones every iteration. A first call in a fresh process is slower than the
    next one mainly because of the compiled kernels (``backend="auto"`` with numba): about
    0.4 s to load them from numba's on-disk cache, and about 14 s to compile them when that
    cache is missing or stale (first use after installing or editing the package); page
    faults on fresh memory are not the cause (measured in docs/benchmarks/completion.md).

    Problems of fewer than :data:`ONE_THREAD_MAX_ENTRIES` stacked entries run with one BLAS
    thread: their per-iteration products are too small to share, and numpy's and SciPy's
    two OpenBLAS pools take turns spinning on the two cores. With two threads a default
    ``MatrixCompletionTransducer`` fit on 2 400 x 300 took 59 s, first and second fit in
    one process alike, against 20 s with one (2026-11-25).
    """
    prob = _Problem(np.asarray(X, dtype=float), MX, None if Y is None else
                    np.asarray(Y, dtype=float), MY, lam, variant)
    if prob.variant not in ("mcb", "mc1", "x"):
        raise ValueError(f"variant must be 'mcb' or 'mc1', got {variant!r}.")
    if solver not in SOLVERS:
        raise ValueError(f"solver must be 'fpc' or 'apg', got {solver!r}.")
    if prob.nX == 0:
        raise ValueError("no observed feature entry (|Omega_X| = 0).")
    rng = np.random.default_rng(random_state)
    tau_Z, tau_b = step_sizes(prob.nY, prob.nX, prob.lam, prob.n, c)
    use_b = prob.variant == "mcb"
    mc1 = prob.variant == "mc1"
    accel = solver == "apg"
    if accel:
        scale = accelerated_step_scale(prob.MY, prob.nY, prob.nX, prob.lam, tau_Z, tau_b,
                                       use_b)
        tau_Z, tau_b = tau_Z * scale, tau_b * scale

    Z, sigma1, Vt = initial_point(prob.observed_matrix())
    if mc1:
        Z[-1] = 1.0
        sv = np.linalg.svd(Z, compute_uv=False)
        nuc, rank_out = float(sv.sum()), _rank(sv)
        Vt = None
    else:
        nuc, rank_out = sigma1, 1
    b = np.zeros(prob.t) if use_b else None
    rank = 1

    grid = continuation_grid(sigma1, mu_final, eta) if mus is None else \
        np.asarray(mus, dtype=float)
    if grid.ndim != 1 or grid.size == 0 or np.any(grid <= 0) or np.any(np.diff(grid) > 0):
        raise ValueError("mus must be a non-empty, non-increasing sequence of positive "
                         "values.")
    start = eta * sigma1 * (1 + 1e-12)
    run_idx = [k for k in range(grid.size) if grid[k] <= start] or [grid.size - 1]

    f, G, gb = prob.smooth(Z, b)
    if backend not in ("auto", "numba", "numpy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {backend!r}.")
    dense_stage = None
    if backend != "numpy" and svd in ("auto", "gram") and Z.shape[0] <= Z.shape[1] and (
            svd == "gram" or min(Z.shape) < RANDOMIZED_MIN_DIM):
        if backend == "numba":
            require("numba", "the compiled FPC stage (backend='numba')")
        if available("numba"):
            from ._fpc_numba import dense_stage
            gb_buf = np.zeros(prob.t) if gb is None else gb
            b_buf = np.zeros(0) if b is None else b
            hist_buf = np.empty(max_inner)
            work = np.empty((3,) + Z.shape) if accel else np.empty((3, 0, 0))
            bwork = np.empty((2, b_buf.size))
    fact = None
    if (prob.t == 0 and svd == "auto" and not accel
            and min(Z.shape) >= RANDOMIZED_MIN_DIM):
        fact = _FactoredIterate(prob, Z @ Vt.T / sigma1, np.array([sigma1]), Vt)
    stats = {"n_iter": [], "objective": [], "rank": [], "converged": []}
    history, models, methods = [], [] if store_path else None, {}
    n_restart = 0
    Ybuf = None
    # compiled passes for the dense loop (large problems; the small ones run whole stages
    # compiled above)
    kern = None
    if dense_stage is None and backend != "numpy" and available("numba"):
        from . import _fpc_numba as kern
    no_b = np.zeros(0)
    done = []
    if verbose:
        import time
        from .._progress import log
        t_path = time.perf_counter()
    for k in run_idx:
        mu = float(grid[k])
        F_prev = f + mu * nuc
        converged = False
        it = 0
        if dense_stage is not None:
            (f, nuc, rank_out, rank, it, converged, n_gram, n_exact, h, n_rs) = dense_stage(
                Z, b_buf, use_b, mc1, prob.Yo, prob.MYf, prob.Xo, prob.MXf, prob.cy,
                float(prob.nX), tau_Z, tau_b, mu, tol, max_inner, F_prev, G, gb_buf,
                GRAM_MIN_REL_TAU, hist_buf, 0, accel, work, bwork)
            n_restart += n_rs
            history.extend(hist_buf[:h].tolist())
            for key, cnt in (("gram", n_gram), ("exact", n_exact)):
                if cnt:
                    methods[key] = methods.get(key, 0) + cnt
        else:
            theta, Z_old, b_old = 1.0, None, None
            if fact is None and G.shape != Z.shape:
                G = np.empty_like(Z)
            for it in range(1, max_inner + 1):
                stepped = False
                if fact is not None:
                    stepped = fact.step(tau_Z, tau_Z * mu, rng)
                    if stepped:
                        methods["lowrank+sparse"] = methods.get("lowrank+sparse", 0) + 1
                        f, nuc, rank_out = fact.f, float(fact.s.sum()), fact.rank
                    else:
                        # the spectrum above the threshold outgrew a small block: go dense
                        Z, Vt, rank = fact.dense(), fact.Vt, fact.rank
                        fact = None
                        f, G, gb = prob.smooth(Z, b, out=G if G.shape == Z.shape else None)
                if not stepped:
                    # the step is taken at Yk (= Z, or the extrapolated point for "apg")
                    beta = 0.0
                    if accel:
                        theta_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * theta * theta))
                        beta = (theta - 1.0) / theta_next
                        theta = theta_next
                    extrap = beta > 0.0 and Z_old is not None
                    if kern is not None:
                        # one compiled pass: G <- Y - tau_Z grad f(Y), Y never formed
                        b_new = np.zeros(prob.t) if use_b else no_b
                        kern.step_input(Z, Z_old if extrap else Z, beta,
                                        b if use_b else no_b,
                                        b_old if extrap and use_b else (b if use_b else no_b),
                                        use_b, prob.Yo, prob.Xo, prob.MXf, prob.all_x,
                                        prob.cy, float(prob.nX), tau_Z, tau_b, G, b_new)
                        if not use_b:
                            b_new = None
                        Yk, yb = None, None
                    else:
                        # G, gb hold the gradient at Z from the previous step
                        Yk, yb = Z, b
                        if extrap:
                            if Ybuf is None:
                                Ybuf = np.empty_like(Z)
                            Yk = np.subtract(Z, Z_old, out=Ybuf)
                            Yk *= beta
                            Yk += Z
                            yb = None if b is None else b + beta * (b - b_old)
                            _, G, gb = prob.smooth(Yk, yb, out=G)
                        b_new = None if b is None else yb - tau_b * gb
                        G *= -tau_Z
                        G += Yk                    # G now holds the gradient step Y - tau_Z G
                    res = shrink(G, tau_Z * mu, method=svd,
                                 rank_estimate=rank if Vt is not None else None, V0=Vt,
                                 random_state=rng)
                    methods[res.method] = methods.get(res.method, 0) + 1
                    Z_new, rank = res.Z, res.rank
                    # warm start for a randomized next step; only worth forming when rank
                    # is small
                    Vt = res.Vt if rank <= min(Z.shape) // 5 else None
                    if mc1:
                        Z_new[-1] = 1.0
                        sv = _projected_core_svals(res, Z.shape[1])
                        nuc, rank_out = float(sv.sum()), _rank(sv)
                    else:
                        nuc, rank_out = res.nuclear_norm, rank
                    # (G, the shrinkage's input, is free again: Vt and the MC-1 row sums
                    # have been read from it)
                    if kern is not None:
                        f, g = kern.value_and_restart(
                            Z_new, b_new if use_b else no_b, Z, Z_old if extrap else Z, beta,
                            b if use_b else no_b,
                            b_old if extrap and use_b else (b if use_b else no_b), use_b,
                            extrap, prob.Yo, prob.MYf, prob.Xo, prob.MXf, prob.all_x,
                            prob.cy, float(prob.nX), tau_Z, tau_b)
                        restart = extrap and g > 0.0
                    else:
                        restart = extrap and _restart(Yk, yb, Z_new, b_new, Z, b, tau_Z,
                                                      tau_b, G)
                    if restart:
                        theta = 1.0
                        n_restart += 1
                    Z_old, b_old, Z, b = Z, b, Z_new, b_new
                    if kern is None:
                        f, G, gb = prob.smooth(Z, b, out=G)
                F = f + mu * nuc
                history.append(F)
                if abs(F_prev - F) < tol * abs(F_prev):
                    converged = True
                    break
                F_prev = F
        if not converged and warn:
            warn_convergence(f"FPC stage mu={mu:.3g} did not reach the relative objective "
                             f"change {tol:g} in max_inner={max_inner} iterations; "
                             "increase max_inner or tol.")
        stats["n_iter"].append(it)
        stats["objective"].append(f + mu * nuc)
        stats["rank"].append(rank_out)
        stats["converged"].append(converged)
        if verbose:
            log(f"[fpc_path] stage {len(done) + 1}/{len(run_idx)} mu={mu:.3g}: {it} "
                f"iterations, objective {f + mu * nuc:.6g}, rank {rank_out}"
                f"{'' if converged else ' (max_inner reached)'} "
                f"[{time.perf_counter() - t_path:.1f}s]")
        if fact is not None and (store_path or callback is not None):
            Z = fact.dense()
        if store_path:
            models.append((Z.copy(), None if b is None else b.copy()))
        done.append(k)
        if callback is not None and callback(k, mu, Z, b):
            break
    run_idx = done
    if fact is not None:
        Z = fact.dense()
    return FPCPath(mus=grid[run_idx], grid_index=np.asarray(run_idx),
                   n_iter=np.asarray(stats["n_iter"]),
                   objective=np.asarray(stats["objective"]),
                   rank=np.asarray(stats["rank"]), converged=np.asarray(stats["converged"]),
                   Z=Z, b=b, models=models, sigma1=sigma1, tau_Z=tau_Z, tau_b=tau_b,
                   history=np.asarray(history), svd_methods=methods,
                   n_restarts=n_restart)


def _restart(Yk, yb, Z_new, b_new, Z, b, tau_Z, tau_b, work) -> bool:
    """Gradient restart test ``<Y - Z_new, Z_new - Z> > 0`` in the step's metric.

    Overwrites ``Yk`` and ``work`` (no full-size temporary)."""
    Yk -= Z_new
    g = float(np.vdot(Yk, np.subtract(Z_new, Z, out=work))) / tau_Z
    if b is not None and tau_b > 0:
        g += float(np.dot(yb - b_new, b_new - b)) / tau_b
    return g > 0.0
