"""LapSVM / LapRLS with a reduced kernel expansion over m basis points (issue #31).

The model is ``f(x) = sum_{j in B} alpha_j k(x, b_j) + b`` over a basis ``B`` of ``m``
training points, and the objective keeps the intrinsic term over all ``n`` points
(Melacci & Belkin 2011, eq. 7 with the expansion restricted, their §8 "sparser kernel
expansion"; Keerthi, Chapelle & DeCoste 2006)::

    1/2 ( sum_{i in E} (f_i - y_i)^2 + gamma_A alpha^T K_BB alpha + gamma_I f^T L^p f ),
    f = K_nB alpha + 1 b.

It is solved in the coordinates of Falkon's preconditioner (Rudi, Carratino & Rosasco 2017):
with ``K_BB = U S U^T`` (eigenvalues below the numerical rank ``m eps max(S)`` dropped: their
directions of ``K_nB U`` are rounding noise) and ``alpha = T beta``, ``T = U_r S_r^{-1/2}``,

    f = Phi beta + 1 b,   Phi = K_nB T   (n x r),   alpha^T K_BB alpha = ||beta||^2,

a linear model on the Nyström features ``Phi`` with a plain ridge. ``Phi`` is computed in row
blocks by :func:`semisup.kernels.make_kernel` (``transform=T``): the n x m kernel is never
held, memory ``n r``. With ``B`` = every point, ``T T^T = K^{-1}`` and PCG in ``beta`` is the
paper's PCG with ``P = diag(1, K)`` (Algorithm 1), iterate for iterate.

Solvers, both on ``Phi`` and the Laplacian only:

* :func:`reduced_newton` — the minimiser by direct solves of the ``(r+1)`` normal
  equations (LapRLS: one; LapSVM: Newton on the error-vector set, eq. 10's rule). The
  Laplacian part ``Phi^T L^p Phi`` is formed once, ``O(n r^2 + p nnz(L) r)``; a Newton step
  costs ``O(|E| r^2 + r^3)``. Its result does not depend on an iteration path, so it moves
  with the BLAS threads or the engine only by rounding.
* :func:`reduced_pcg` — nonlinear PCG with the exact line search and the paper's stopping
  rules (:mod:`~semisup.lapsvm.stopping`); two products by ``Phi`` per iteration,
  ``O(n r)``.

:func:`select_basis` draws ``B``: uniformly, by k-means++ seeding, or by approximate ridge
leverage scores.

Array modules: :func:`basis_transform`, :func:`reduced_newton` and :func:`reduced_pcg` run in
the module of their ``K_BB`` / ``Phi`` (numpy, or CuPy on a GPU: the estimators' device path,
:mod:`semisup.lapsvm._device`); the bookkeeping (error-vector sets, stopping rules, the exact
line search on the labelled rows) reads small host copies.
"""

from __future__ import annotations

import math
import os

import numpy as np
import scipy.linalg as sla
from sklearn.utils import check_random_state

from .._validation import available_memory
from ..linalg.xp import array_modules, to_host
from .newton import _NewtonSteps
from .objective import laplacian_operator
from .pcg import _as_columns, _ColumnStops, _line_search_step, _start
from .result import SolverResult
from .stopping import Iterate

__all__ = ["BASES", "AUTO_DIRECT_N", "AUTO_FULL_N", "AUTO_WORK", "auto_n_basis", "feature_budget",
           "select_basis", "basis_transform", "reduced_newton", "reduced_pcg"]

#: names accepted by :func:`select_basis` (and the estimators' ``basis``)
BASES = ("uniform", "kmeans++", "leverage")

#: ``solver="auto"``: the direct solve (Newton, the closed form) up to this many points
AUTO_DIRECT_N = 2000
#: ``n_basis="auto"`` and ``solver="auto"``: the full expansion by its direct solve (LapRLS's
#: closed form, LapSVM's Newton) up to this many points where the direct solve's workspace
#: fits in ``AUTO_MEMORY_SHARE`` of the memory. MNIST subsets, 10 labels per class
#: (``semisup bench reduced --only crossover``): faster than the reduced rule below there
#: (LapRLS 2.3 s against 11.5 s at 4 000, 11.3 s against 14.5 s at 8 000; LapSVM 1.9 s
#: against 22 s, 11.5 s against 17 s) and as accurate (m = n) or more (1.4 points at 6 000,
#: 3.6 at 8 000), at 2.3 GiB against 1.3 at 8 000; above, the reduced one is the faster,
#: the full one 2-3 points more accurate (at 16 000: 19 s against 62 s). A direct solve, not
#: the early-stopped PCG (as fast, as accurate), because a minimiser does not move with the
#: BLAS threads (PCG's iterate moved 7e-4 at 2 500 points)
AUTO_FULL_N = 8000
#: ``n_basis="auto"``: the work ``n m^2`` of m = 4000 at n = 16 000 (MNIST: 2.9 points above
#: the full model's error there, in a third of its time), kept as n grows, m between the two
#: bounds below
AUTO_WORK = 16_000 * 4000 ** 2
AUTO_MAX_BASIS = 4000
AUTO_MIN_WORK_BASIS = 1000
#: ``n_basis="auto"``: the share of the available memory the n x m features may take
AUTO_MEMORY_SHARE = 0.5
#: ``n_basis="auto"``: the smallest m it shrinks to for memory (below, the fit is refused)
AUTO_MIN_BASIS = 200


def feature_budget() -> float:
    """Bytes the ``"auto"`` features may take: ``AUTO_MEMORY_SHARE`` of the available
    memory (``SEMISUP_MAX_MEMORY``, when set, replaces the available memory)."""
    limit = os.environ.get("SEMISUP_MAX_MEMORY")
    return AUTO_MEMORY_SHARE * (float(limit) if limit else available_memory())


def auto_n_basis(n: int, itemsize: int = 8, budget: float | None = None) -> int:
    """The ``"auto"`` basis size: ``m = min(n, clip(sqrt(W / n), 1000, 4000))``, shrunk to fit
    ``budget`` bytes of features.

    ``W = 16 000 * 4000^2``: the Gram ``Phi^T L Phi`` and the features cost ``O(n m^2)``, and
    the rule keeps that work at its value for m = 4000 at n = 16 000, where MNIST (10
    classes, 10 labels per class, LapRLS, uniform basis) measured 15.18 % error against
    14.96 % for the full model (m = 3000: 16.02 %, 1000: 18.12 %) at ``gamma_I = 1``, the
    default then (at 0.1, the default since 2026-11-26: 11.53 % full, 14.48 % at m = 4000:
    the smaller weight helps the full model more); m = 1912 on all of MNIST,
    1000 from n = 256 000 on (then the time grows linearly in n). Every point up to
    n = 4000 (at n = 4000, m = 2000 lost 0.7 to 2 points). On all of MNIST with 100 labels
    per class, the span of the features bounds the error: the least-squares projection of
    ``HarmonicFunction``'s solution (4.66 %) onto it errs 5.77 % at m = 1912, 5.40 % at 3000
    and 4.99 % at 6000; LapRLS at its best measured ``gamma_I = 0.1`` and ``kernel_sigma``
    0.7 of ``"scale"`` erred 5.49 % (m = 1912), 4.98 % (3000), 4.74 % (4000) and 4.58 %
    (6000: ten times the ``n m^2`` work this rule keeps; issue #31). Where the ``n x m``
    features of ``itemsize`` bytes would exceed ``budget``, ``m`` is the largest that fits,
    but not below ``AUTO_MIN_BASIS`` (200; the memory check then refuses).

    Examples
    --------
    >>> from semisup.lapsvm.reduced import auto_n_basis
    >>> auto_n_basis(500), auto_n_basis(16000), auto_n_basis(70000), auto_n_basis(10**6)
    (500, 4000, 1912, 1000)
    >>> auto_n_basis(10**6, 4, budget=2e9)
    500
    """
    m = min(int(n), int(np.clip(round(math.sqrt(AUTO_WORK / max(n, 1))), AUTO_MIN_WORK_BASIS,
                                AUTO_MAX_BASIS)))
    if budget is not None:
        m = min(m, max(int(budget // (float(n) * itemsize)), min(int(n), AUTO_MIN_BASIS)))
    return m


def select_basis(X, n_basis: int, method: str = "uniform", *, random_state=None,
                 features=None) -> np.ndarray:
    """Indices of ``n_basis`` distinct training points for the reduced expansion.

    Parameters
    ----------
    X : ndarray or sparse (n, d)
        Training points (``"uniform"`` reads only ``n``, so any array, a dask one
        included).
    n_basis : int
        ``m``; ``m >= n`` returns every index.
    method : {"uniform", "kmeans++", "leverage"}
        ``"uniform"``: a uniform sample without replacement. ``"kmeans++"``: k-means++
        seeding (D^2 sampling, Arthur & Vassilvitskii 2007), which spreads the centres over
        the data. ``"leverage"``: sampling without replacement proportionally to
        approximate ridge leverage scores ``l_i = 1 - ||phi_i||^2`` (the part of
        ``k(x_i, .)`` a uniform pilot basis of ``2m`` points does not explain, for an RBF
        kernel with ``k(x, x) = 1``) plus their mean, so that well-covered regions keep
        points.
    random_state : int, RandomState or None
    features : callable, optional
        ``features(pilot_indices) -> (n, s)`` Nyström features of the pilot basis
        (``K_nS K_SS^{-1/2}``); needed by ``"leverage"``.

    Returns
    -------
    idx : ndarray of int, sorted
    """
    n = X.shape[0]
    m = int(n_basis)
    if m >= n:
        return np.arange(n)
    rng = check_random_state(random_state)
    if method == "uniform":
        return np.sort(rng.choice(n, m, replace=False))
    if method == "kmeans++":
        from sklearn.cluster import kmeans_plusplus
        _, idx = kmeans_plusplus(X, m, random_state=rng)
        idx = np.unique(idx)
        if idx.size < m:   # duplicate points: fill up uniformly
            rest = np.setdiff1d(np.arange(n), idx)
            idx = np.union1d(idx, rng.choice(rest, m - idx.size, replace=False))
        return idx
    if method == "leverage":
        pilot = np.sort(rng.choice(n, min(n, 2 * m), replace=False))
        Phi = features(pilot)
        score = np.clip(1.0 - np.einsum("ij,ij->i", Phi, Phi), 0.0, None)
        p = score + score.mean() + 1e-12
        return np.sort(rng.choice(n, m, replace=False, p=p / p.sum()))
    raise ValueError(f"basis must be one of {BASES}, got {method!r}.")


def basis_transform(K_BB, rtol: float | None = None) -> np.ndarray:
    """``T = U_r S_r^{-1/2}`` with ``K_BB = U S U^T``: ``T^T K_BB T = I_r``.

    Eigenvalues at or below ``rtol * max(S)`` (default ``m * eps``, the numerical rank) are
    dropped: ``K_nB u`` along them is rounding noise.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.lapsvm.reduced import basis_transform
    >>> K = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> T = basis_transform(K)
    >>> np.allclose(T.T @ K @ T, np.eye(2))
    True
    """
    xp, _ = array_modules(K_BB)
    K_BB = xp.asarray(K_BB, dtype=xp.float64)
    m = K_BB.shape[0]
    if xp is np:
        s, U = sla.eigh(0.5 * (K_BB + K_BB.T), check_finite=False)
    else:       # CuPy's (cuSOLVER's) symmetric eigensolver
        s, U = xp.linalg.eigh(0.5 * (K_BB + K_BB.T))
    top = float(s[-1]) if m else 0.0
    if not top > 0:
        raise ValueError("the kernel of the basis points is zero: no expansion is possible "
                         "(check kernel_sigma and the scale of X).")
    tol = (m * np.finfo(np.float64).eps if rtol is None else rtol) * top
    keep = s > tol
    return U[:, keep] / xp.sqrt(s[keep])


def gram_block(n: int) -> int:
    """Columns per block of :func:`_laplacian_gram`: about 1 GiB of float64 work
    (``24 n`` bytes a column), between 16 and 256."""
    return int(min(256, max(16, 2 ** 30 // (24 * max(n, 1)))))


def _laplacian_gram(Phi, apply_L, use_bias, block: int | None = None,
                    rows: int = 8192):
    """``Z^T L^p Z`` with ``Z = [1, Phi]`` (or ``Phi``), in column blocks of ``Phi``:
    ``O(n r^2 + p nnz(L) r)`` time. A column block holds about 1 GiB of float64 work
    (``L Phi_j`` and its temporaries: 256 columns up to n = 175 000, 44 at 10^6; fewer
    columns read ``Phi`` more often); a float32 ``Phi`` is cast to float64 ``rows`` rows at
    a time, never whole."""
    xp, _ = array_modules(Phi)
    n, r = Phi.shape
    block = gram_block(n) if block is None else block
    off = 1 if use_bias else 0
    G = xp.empty((r + off, r + off))
    for j in range(0, r, block):
        LP = apply_L(xp.asarray(Phi[:, j:j + block], dtype=xp.float64))
        cols = slice(off + j, off + j + LP.shape[1])
        if Phi.dtype == np.float64:
            G[off:, cols] = Phi.T @ LP
        else:
            G[off:, cols] = 0.0
            for i in range(0, n, rows):
                G[off:, cols] += Phi[i:i + rows].T.astype(np.float64) @ LP[i:i + rows]
        if use_bias:
            G[0, cols] = LP.sum(axis=0)
    if use_bias:
        L1 = apply_L(xp.ones(n))
        G[0, 0] = L1.sum()
        G[1:, 0] = G[0, 1:]
    return 0.5 * (G + G.T)


def _products(Phi, V):
    """``Phi @ V`` in float64 (``Phi`` may be float32: the small ``V`` is cast instead)."""
    if Phi.dtype == np.float32:
        return (Phi @ V.astype(np.float32)).astype(np.float64)
    return Phi @ V


def _rproducts(Phi, U):
    """``Phi^T @ U`` in float64."""
    if Phi.dtype == np.float32:
        return (Phi.T @ U.astype(np.float32)).astype(np.float64)
    return Phi.T @ U


def _setup(Phi, y, beta0, b0, use_bias):
    """``(xp, Y (n, c), squeeze, A (r, c), B (c,))`` in ``Phi``'s array module: the targets
    as columns and the start (zeros, or the warm start)."""
    xp, _ = array_modules(Phi)
    if xp is np:
        Y, squeeze = _as_columns(y)
        return (xp, Y, squeeze) + _start(beta0, b0, Phi.shape[1], Y.shape[1], use_bias)
    Y = xp.asarray(y, dtype=xp.float64)
    Y, squeeze = (Y[:, None], True) if Y.ndim == 1 else (Y, False)
    A, B = _start(None if beta0 is None else to_host(beta0),
                  None if b0 is None else to_host(b0), Phi.shape[1], Y.shape[1], use_bias)
    return xp, Y, squeeze, xp.asarray(A), xp.asarray(B)


def reduced_newton(Phi, L, y, *, gamma_A: float, gamma_I: float, power: int = 1,
                   use_bias: bool = False, hinge: bool = True, max_iter: int = 50,
                   beta0=None, b0=None, callback=None, _advice: str | None = None
                   ) -> SolverResult:
    """The reduced LapSVM (or LapRLS, ``hinge=False``) minimiser by direct solves.

    With ``Z = [1, Phi]`` (``Phi`` without a bias) and ``E`` the error vectors, each step
    solves the normal equations of the quadratic with ``E`` frozen (the generalised Newton
    step of eq. 10, in the reduced coordinates)::

        (Z_E^T Z_E + gamma_I Z^T L^p Z + gamma_A diag(0, I)) z = Z_E^T y_E,

    by a Cholesky factorisation (a least-squares solve if it is singular: ``gamma_A = 0``).
    From ``z = 0`` every labelled point is in ``E``, so the first step is the LapRLS
    solution; the steps stop when ``E`` no longer changes.

    Parameters
    ----------
    Phi : ndarray (n, r)
        Features ``K_nB T`` (:func:`basis_transform`).
    L : sparse matrix, ndarray or callable
        Laplacian ``L0`` (applied ``power`` times) or ``v -> L v``.
    y : ndarray (n,) or (n, c)
        ``+1/-1`` labelled, ``0`` unlabelled.
    gamma_A, gamma_I : float
        Weights of ``||beta||^2 = alpha^T K_BB alpha`` and ``f^T L^p f``.
    power, use_bias, hinge, max_iter :
        As in :func:`semisup.lapsvm.newton.newton`.
    beta0, b0 : optional warm start (``E`` is computed from it).
    callback : callable, optional
        ``callback(t, beta, b, F)`` after every step.

    Returns
    -------
    SolverResult
        ``alpha`` holds ``beta`` (``alpha = T beta``).

    Complexity
    ----------
    ``O(n r^2 + p nnz(L) r)`` once, then ``O(|E| r^2 + r^3)`` per step; memory ``Phi``
    plus ``O(n 256 + r^2)``.
    """
    apply_L = L if callable(L) else laplacian_operator(L, power)
    xp, Y, squeeze, A, B = _setup(Phi, y, beta0, b0, use_bias)
    n, c = Y.shape
    r = Phi.shape[1]
    off = 1 if use_bias else 0
    H0 = gamma_I * _laplacian_gram(Phi, apply_L, use_bias)
    H0[xp.arange(off, r + off), xp.arange(off, r + off)] += gamma_A
    # the error-vector sets are kept on the host (an n x c copy of F per step)
    run = _NewtonSteps(to_host(Y), hinge, max_iter, callback, squeeze)
    for t in range(max_iter + 1):
        F = _products(Phi, A) + B
        E, groups = run.groups(t, to_host(F), A, B)
        if not groups:
            break
        for cols in groups:
            rows = xp.asarray(np.flatnonzero(E[:, cols[0]]))
            ZE = xp.asarray(Phi[rows], dtype=xp.float64)
            if use_bias:
                ZE = xp.hstack([xp.ones((rows.size, 1)), ZE])
            H = H0 + ZE.T @ ZE
            cx = xp.asarray(cols)
            Z = _spd_solve(H, ZE.T @ Y[rows][:, cx])
            if not bool(xp.isfinite(Z).all()):
                raise ValueError("the reduced Newton system gave non-finite coefficients: "
                                 "the kernel or the Laplacian is too badly scaled; increase "
                                 "gamma_A.")
            A[:, cx] = Z[off:]
            if use_bias:
                B[cx] = Z[0]
        F0 = _products(Phi, A[:, :1])[:, 0] + B[0]
        # E of the step; the next F re-derives it
        r0 = xp.where(xp.asarray(E[:, 0]), F0 - Y[:, 0], 0.0)
        run.hist["obj"].append(float(0.5 * (r0 @ r0 + gamma_A * A[:, 0] @ A[:, 0]
                                            + gamma_I * F0 @ apply_L(F0))))
    return run.result(A, B, F, _advice or "raise max_iter.")


def _spd_solve(H, rhs):
    """``H z = rhs`` for a symmetric PSD ``H``: Cholesky, else least squares (in ``H``'s
    array module; CuPy's Cholesky of a matrix that is not positive definite raises no
    error: its factor is not finite, or, for a singular PSD ``H``, has a zero pivot, which
    the H200 showed; so the solution itself is checked)."""
    xp, _ = array_modules(H)
    if xp is not np:
        from cupyx.scipy.linalg import solve_triangular
        C = xp.linalg.cholesky(H)
        if bool(xp.isfinite(C).all()) and bool((xp.diagonal(C) > 0).all()):
            z = solve_triangular(C.T, solve_triangular(C, rhs, lower=True), lower=False)
            if bool(xp.isfinite(z).all()):
                return z
        return xp.linalg.lstsq(H, rhs, rcond=None)[0]
    try:
        return sla.cho_solve(sla.cho_factor(H, check_finite=False), rhs, check_finite=False)
    except np.linalg.LinAlgError:
        return sla.lstsq(H, rhs, lapack_driver="gelsy", check_finite=False)[0]


def reduced_pcg(Phi, L, y, *, gamma_A: float, gamma_I: float, power: int = 1,
                use_bias: bool = False, hinge: bool = True, max_iter: int = 1000,
                stopping=(), refresh_every: int | None = 50, beta0=None, b0=None,
                Phi_val=None, callback=None, verbose: bool = False,
                _advice: str | None = None) -> SolverResult:
    """Reduced LapSVM (or LapRLS) by nonlinear PCG in Falkon's coordinates (Algorithm 1).

    Minimises the reduced objective over ``z = [b, beta]`` by Polak–Ribière (PR+) conjugate
    gradients with the exact piecewise line search of §3.2.1
    (:func:`~semisup.lapsvm.pcg.exact_line_search`) and the paper's goal conditions. The
    preconditioner is ``T T^T`` in ``alpha`` (Falkon's, from ``K_BB``): with ``B`` = every
    point it is ``K^{-1}``, and the iterates are those of
    :func:`~semisup.lapsvm.pcg.pcg`. The gradient is
    ``g_beta = Phi^T (I_E (f - y) + gamma_I L^p f) + gamma_A beta``,
    ``g_b = 1^T (I_E (f - y) + gamma_I L^p f)``.

    Parameters
    ----------
    Phi : ndarray (n, r), float64 or float32
        Features ``K_nB T``.
    Phi_val : ndarray (|V|, r), optional
        Features of the validation points, for the validation rules.
    Others :
        As in :func:`~semisup.lapsvm.pcg.pcg` (``beta0`` for ``alpha0``).

    Returns
    -------
    SolverResult
        ``alpha`` holds ``beta``. ``grad_norm``, ``pgrad_norm`` and ``mixed_norm`` all
        record ``||g||`` (the preconditioned and the plain gradient coincide in these
        coordinates; ``||g||^2 = grad^T P grad`` is the paper's mixed product).

    Complexity
    ----------
    ``O(n r c)`` per iteration (two products by ``Phi``) plus ``p`` Laplacian products.
    """
    apply_L = L if callable(L) else laplacian_operator(L, power)
    xp, Y, squeeze, A, B = _setup(Phi, y, beta0, b0, use_bias)
    n, c = Y.shape
    labeled = Y != 0
    lab_rows = xp.flatnonzero(labeled.any(axis=1))
    Yl = to_host(Y[lab_rows])      # the line searches run on host copies of these rows
    F = _products(Phi, A) + B
    LF = apply_L(F)

    def gradient():
        E = labeled & ((Y * F < 1.0) if hinge else True)
        u = xp.where(E, F - Y, 0.0) + gamma_I * LF
        return (u.sum(axis=0) if use_bias else xp.zeros(c)), _rproducts(Phi, u) + gamma_A * A

    gb, ga = gradient()
    D_a, D_b = -ga, -gb
    stops = _ColumnStops(stopping, n, c)

    def val_scores():
        return to_host(_products(Phi_val, A) + B)

    def record(t, pieces, steps):
        E = labeled & ((Y * F < 1.0) if hinge else True)
        res = xp.where(E, F - Y, 0.0)
        obj = 0.5 * ((res * res).sum(0) + gamma_A * (A * A).sum(0) + gamma_I * (F * LF).sum(0))
        gsq = (ga * ga).sum(0) + gb * gb
        # the rules and the history read c numbers per iteration (host copies), and F only
        # where a periodic rule checks it (the rule copies it then)
        return stops.record(Iterate(t=t, F=F, obj=to_host(obj),
                                    grad_sq=to_host(gsq), ghat_sq=to_host(gsq),
                                    mixed_sq=to_host(gsq), f_val=val_scores), pieces, steps)

    stops.check(record(0, 0, 0.0))
    for t, act in stops.iterations(max_iter):
        act = xp.asarray(act)      # (host bookkeeping; the columns of device arrays)
        FD = _products(Phi, D_a[:, act]) + D_b[act]
        LFD = apply_L(FD)
        sa, pieces = _line_search_step(stops, t, act, A, B, F, LF, D_a, D_a, D_b, FD, LFD,
                                       Yl, lab_rows, gamma_A=gamma_A, gamma_I=gamma_I,
                                       hinge=hinge)
        if refresh_every is not None and t % refresh_every == 0:
            F[:, act] = _products(Phi, A[:, act]) + B[act]
            LF[:, act] = apply_L(F[:, act])
        gb_new, ga_new = gradient()
        if not use_bias:
            gb_new = xp.zeros(c)
        # Polak–Ribière with restart (PR+), identity preconditioner in these coordinates
        num = (ga_new * (ga_new - ga)).sum(0) + gb_new * (gb_new - gb)
        den = (ga * ga).sum(0) + gb * gb
        with np.errstate(divide="ignore", invalid="ignore"):
            beta = xp.where(den > 0, xp.maximum(num / den, 0.0), 0.0)
        ga[:, act], gb[act] = ga_new[:, act], gb_new[act]
        D_a[:, act] = -ga[:, act] + beta[act] * D_a[:, act]
        D_b[act] = -gb[act] + beta[act] * D_b[act]
        stops.end_iteration(record(t, pieces, float(np.mean(sa))), A, B, squeeze, callback,
                            verbose, "reduced pcg")
    return stops.result(max_iter, _advice, A, B, F, squeeze)
