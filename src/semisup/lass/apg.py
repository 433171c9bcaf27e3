"""Accelerated projected gradient (FISTA with adaptive restart) for LASS.

Solves the same problem as the ADMM of :mod:`semisup.lass.admm` (paper eq. 1)::

    min_Z  F(Z) = lam * tr(Z^T L Z) - tr(G^T Z)   s.t.  Z 1_K = 1_N,  Z >= 0

by Nesterov/FISTA steps (Beck & Teboulle 2009) on the product of row simplices::

    V      = Z_k + beta_k (Z_k - Z_{k-1})                       (extrapolation)
    Z_k+1  = Pi( V - (2 lam L V - G) / Lip )                     (row-wise projection)

with ``Lip = 2 lam lambda_max(L)`` the Lipschitz constant of ``grad F = 2 lam L Z - G``
(``lambda_max(L) <= 2 max degree`` by Gershgorin, so ``Lip <= 4 lam max degree``), and the
gradient restart of O'Donoghue & Candès (2015): momentum is reset when
``<V - Z_k+1, Z_k+1 - Z_k> > 0``.

Why it is faster than ADMM at large N: each iteration is *one* sparse product with ``L``
(on ``Z``; the product at the extrapolated point follows by linearity,
``L V = (1 + beta) L Z_k - beta L Z_k-1``) plus the projection; ADMM needs a linear solve
with ``2 lam L + rho I`` per iteration (several CG products) and more iterations.

Stopping rule: a *certified* objective gap. With ``S = grad F(Z)``, the Frank-Wolfe (linear
minimisation) gap ``sum_n (<s_n, z_n> - min_k s_nk)`` is an upper bound on ``F(Z) - F*`` for
every feasible ``Z`` (convexity), and it comes free with the gradient at ``Z``. The solver
stops when it is at most ``tol * |F(Z)|``.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse.linalg as spla

from .._optional import available
from .._progress import log
from ..linalg.psd import arpack_start, lanczos_max
from ..linalg.xp import array_modules

#: safety factor on the Lanczos estimate of lambda_max(L) (Lanczos approaches it from below;
#: a step slightly shorter than 1/Lip costs little, a longer one can diverge).
LIP_SAFETY = 1.02
#: graphs up to this size use the Gershgorin bound instead of Lanczos (cheap either way).
LANCZOS_MIN_N = 2000
#: ``backend="auto"``: problems with at least this many items use the compiled kernels of
#: :mod:`semisup.lass._apg_numba` when numba is installed. They are 8-9x faster per
#: iteration from N = 500 (numpy-call overhead dominates the numpy path at these sizes:
#: 0.65 s against 0.07 s at N = 1 000, lam = 1, quiet machine); loading their cache costs
#: ~0.6 s once per process, about one numpy-path fit at N = 1 000, so smaller problems keep
#: the numpy path (docs/benchmarks/lass.md, 2026-11-24).
NUMBA_MIN_N = 1_000


def lipschitz_constant(L, lam: float, *, lanczos: str = "arpack") -> float:
    """``2 lam lambda_max(L)``: Lanczos estimate times :data:`LIP_SAFETY`, capped by the
    Gershgorin bound ``4 lam max degree`` (which is used alone for small graphs).

    ``lanczos="arpack"``: scipy's ``eigsh`` (host matrices); ``"xp"``:
    :func:`semisup.linalg.psd.lanczos_max` in ``L``'s array module (the device path; same
    start vector, same tolerance).
    """
    xp, _ = array_modules(L)
    d = L.diagonal()
    bound = 2.0 * float(d.max()) if d.size else 0.0
    lmax = bound
    if L.shape[0] >= LANCZOS_MIN_N:
        # a fixed start, so that the same data give the same step sizes
        v0 = arpack_start(L.shape[0])
        if lanczos == "xp":
            lmax = min(bound, LIP_SAFETY * lanczos_max(L, xp.asarray(v0), tol=1e-3))
        else:
            try:
                est = float(spla.eigsh(L, k=1, which="LA", tol=1e-3, v0=v0,
                                       return_eigenvectors=False)[0])
                lmax = min(bound, LIP_SAFETY * est)
            except (spla.ArpackNoConvergence, spla.ArpackError):
                pass
    return 2.0 * lam * max(lmax, np.finfo(float).tiny)


def project_rows_michelot(V: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Row-wise projection onto the simplex by Michelot's (1986) active-set iteration.

    ``tau = (sum_{v_k > tau} v_k - 1) / #{v_k > tau}`` increases monotonically and stops at
    the exact threshold after at most K passes; near-feasible rows (every APG iterate after
    the first few) need two or three, which makes it about 2x faster than sorting at
    K = 20 (measured: 41 ms against 76 ms for 100 000 x 20). Same result as
    :func:`semisup.linalg.simplex.project_simplex_rows`.
    """
    xp, _ = array_modules(V)
    n, k = V.shape
    tau = (V.sum(axis=1) - 1.0) / k
    for _ in range(k):
        act = V > tau[:, None]
        new = (xp.where(act, V, 0.0).sum(axis=1) - 1.0) / act.sum(axis=1)
        if bool(xp.array_equal(new, tau)):
            break
        tau = new
    out = xp.subtract(V, tau[:, None], out=out)
    xp.maximum(out, 0.0, out=out)
    return out


def fw_gap(Z: np.ndarray, S: np.ndarray) -> float:
    """Frank-Wolfe gap ``sum_n (<s_n, z_n> - min_k s_nk)``: bounds ``F(Z) - F*`` from above
    when ``S = grad F(Z)`` and ``Z`` is feasible."""
    xp, _ = array_modules(Z)
    return float(xp.einsum("ij,ij->", S, Z) - S.min(axis=1).sum())


def _use_numba(backend: str, n: int) -> bool:
    if backend not in ("auto", "numpy", "numba", "xp"):
        raise ValueError(f"backend must be 'auto', 'numpy', 'numba' or 'xp', got {backend!r}.")
    if backend == "numba":
        from .._optional import require
        require("numba", "the compiled APG kernels")
        return True
    return backend == "auto" and n >= NUMBA_MIN_N and available("numba")


def apg(L, G, lam: float, Z0, *, tol: float, max_iter: int, check_every: int = 1,
        verbose=False, callback=None, backend: str = "auto"):
    """FISTA iterations with gradient restart on a graph without isolated items.

    Parameters are those of :func:`semisup.lass.solve` (``Z0`` feasible), plus ``backend``:
    ``"numpy"`` (numpy/scipy), ``"numba"`` (the parallel compiled kernels of
    :mod:`semisup.lass._apg_numba`, optional ``[fast]`` extra; same iterates up to
    rounding), ``"xp"`` (the array-module loop in the arrays' module, e.g. CuPy on a GPU,
    with :func:`~semisup.linalg.psd.lanczos_max` for the step: the device path) or
    ``"auto"`` (``"xp"`` for arrays off the host, else numba from :data:`NUMBA_MIN_N` items
    when installed). The numpy and xp paths run the same loop; they differ in the Lanczos
    estimate of the step (ARPACK or :func:`~semisup.linalg.psd.lanczos_max`, from
    :data:`LANCZOS_MIN_N` items). Returns
    ``(Z, LZ, n_iter, converged, history, timings)`` where ``history`` has the objective
    ``"objective"`` and the certified gap ``"gap"`` (absolute) of each checked iterate.

    Complexity per iteration: one sparse product ``L @ Z`` (O(nnz(L) K)) and the row
    projection (O(N K log K)).
    """
    t0 = time.perf_counter()
    xp, _ = array_modules(G)
    if xp is not np:
        if backend == "numba":
            raise ValueError("backend='numba' runs on the host; arrays of "
                             f"{xp.__name__} take backend='auto' or 'xp'.")
        backend = "xp"
    lip = lipschitz_constant(L, lam, lanczos="xp" if backend == "xp" else "arpack")
    step = 1.0 / lip
    if _use_numba(backend, G.shape[0]):
        return _apg_numba(L, G, lam, Z0, step, t0, tol=tol, max_iter=max_iter,
                          check_every=check_every, verbose=verbose, callback=callback)
    t_setup = time.perf_counter()
    two_lam = 2.0 * lam
    c = two_lam * step
    stepG = step * G
    Z = Z0
    LZ = L @ Z
    LZp, dZ = LZ, xp.zeros_like(Z)
    tmp = xp.empty_like(Z)
    theta = 1.0
    hist = {"objective": [], "gap": [], "restarts": 0}
    converged, k = False, 0
    for k in range(1, max_iter + 1):
        theta_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * theta * theta))
        beta = (theta - 1.0) / theta_new
        # W = V - step grad F(V) with V = Z + beta dZ and, by linearity,
        # L V = (1 + beta) L Z - beta L Zp: no product with L at the extrapolated point.
        W = xp.multiply(LZ, -c * (1.0 + beta))
        W += stepG
        W += Z
        if beta > 0:
            W += xp.multiply(LZp, c * beta, out=tmp)
            W += xp.multiply(dZ, beta, out=tmp)
        Zn = project_rows_michelot(W, out=W)
        dZn = xp.subtract(Zn, Z, out=tmp if beta == 0 else None)
        # gradient restart (O'Donoghue & Candes): <V - Zn, Zn - Z> > 0, where
        # V - Zn = beta dZ - dZn (one scalar read back a step on a device)
        if beta > 0 and float(beta * xp.einsum("ij,ij->", dZ, dZn)
                              - xp.einsum("ij,ij->", dZn, dZn)) > 0:
            theta_new = 1.0
            hist["restarts"] += 1
        if dZn is tmp:
            dZn, tmp = tmp, dZ
        else:
            tmp = dZ
        dZ, Z, LZp = dZn, Zn, LZ
        LZ = L @ Z
        theta = theta_new
        if callback is not None:
            callback(k, Z, Z, None)  # same signature as the ADMM callback; no U here
        if k % check_every == 0 or k == max_iter:
            S = xp.multiply(LZ, two_lam, out=tmp)
            S -= G
            F = 0.5 * (float(xp.einsum("ij,ij->", Z, S)) - float(xp.einsum("ij,ij->", G, Z)))
            gap = fw_gap(Z, S)
            hist["objective"].append(F)
            hist["gap"].append(gap)
            if verbose and (k % 50 == 0 or k == 1):
                log(f"[lass apg] iter {k}: F = {F:.10g}, certified gap = {gap:.3g}", verbose)
            if gap <= tol * abs(F):
                converged = True
                break
    timings = {"setup": t_setup - t0, "iterations": time.perf_counter() - t_setup}
    return Z, LZ, k, converged, hist, timings


def _apg_numba(L, G, lam, Z0, step, t0, *, tol, max_iter, check_every, verbose, callback):
    """The loop of :func:`apg` on the compiled kernels (same iterates up to rounding; each
    kernel one parallel pass over the N x K arrays, no temporaries). ``timings["compile"]``
    is the time to compile the kernels, or to load them from numba's cache."""
    import scipy.sparse as sp

    from . import _apg_numba as nb
    t_c = time.perf_counter()
    L = sp.csr_matrix(L, dtype=np.float64)
    indptr, indices, data = L.indptr, L.indices, L.data
    Z = np.array(Z0, dtype=np.float64, order="C")
    G = np.ascontiguousarray(G, dtype=np.float64)
    # the kernels index every (N, K) array by Z's shape and L's indices, unchecked
    if G.shape != Z.shape or L.shape != (Z.shape[0],) * 2:
        raise ValueError(f"apg: L {L.shape}, G {G.shape} and Z0 {Z.shape} do not match.")
    nb.check_csr_operands(indptr, indices, data, Z, Z)
    # compile (first process ever) or load from the cache, on a tiny problem
    e = np.zeros((1, 1))
    nb.csr_matmul(np.zeros(2, indptr.dtype), np.zeros(0, indices.dtype), np.zeros(0), e, e)
    nb.fista_step(e, e, e, e, e, 0.0, 0.0, e.copy(), e.copy())
    nb.objective_gap(e, e, e, 0.0)
    t_setup = time.perf_counter()
    two_lam = 2.0 * lam
    c = two_lam * step
    stepG = step * G
    LZ = nb.csr_matmul(indptr, indices, data, Z, np.empty_like(Z))
    LZp, dZ = np.empty_like(Z), np.zeros_like(Z)
    Zn, dZn = np.empty_like(Z), np.empty_like(Z)
    theta = 1.0
    hist = {"objective": [], "gap": [], "restarts": 0}
    converged, k = False, 0
    for k in range(1, max_iter + 1):
        theta_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * theta * theta))
        beta = (theta - 1.0) / theta_new
        if k == 1:
            LZp[:] = LZ  # beta = 0: LZp unused, but keep it defined
        a, b = nb.fista_step(Z, dZ, LZ, LZp, stepG, c, beta, Zn, dZn)
        # gradient restart (O'Donoghue & Candes), as in the numpy loop
        if beta > 0 and beta * a - b > 0:
            theta_new = 1.0
            hist["restarts"] += 1
        # rotate buffers: (Z, dZ, LZp) <- (Zn, dZn, LZ); LZ <- L Zn into the old LZp
        Z, Zn = Zn, Z
        dZ, dZn = dZn, dZ
        LZp, LZ = LZ, nb.csr_matmul(indptr, indices, data, Z, LZp)
        theta = theta_new
        if callback is not None:
            Zc = Z.copy()  # Z's buffer is reused by the next step
            callback(k, Zc, Zc, None)
        if k % check_every == 0 or k == max_iter:
            zs, gz, smin = nb.objective_gap(Z, LZ, G, two_lam)
            F, gap = 0.5 * (zs - gz), zs - smin
            hist["objective"].append(F)
            hist["gap"].append(gap)
            if verbose and (k % 50 == 0 or k == 1):
                log(f"[lass apg] iter {k}: F = {F:.10g}, certified gap = {gap:.3g}", verbose)
            if gap <= tol * abs(F):
                converged = True
                break
    t_end = time.perf_counter()
    timings = {"setup": t_setup - t0, "compile": t_setup - t_c, "iterations": t_end - t_setup}
    return Z, LZ, k, converged, hist, timings
