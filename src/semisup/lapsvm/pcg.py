"""Preconditioned nonlinear conjugate gradient for the primal LapSVM (Algorithm 1, §3.2).

Minimises eq. 7 (or LapRLS's eq. 14 objective with ``hinge=False``) with the preconditioner
``P = diag(1, K)``, Polak–Ribière updates with automatic restart (PR+), and the exact piecewise
line search of §3.2.1. Each iteration costs **one** kernel product ``K ghat`` (all one-vs-all
columns in a single matrix product), ``p`` sparse Laplacian products and ``O(l log l)`` for the
line search: ``O(k n^2)`` in total for ``k`` iterations, with memory ``K`` plus ``O(n c)``.
The Hessian, ``L K`` and ``K L K`` are never formed.

One code for two array modules: the iteration runs in the module of ``y`` and ``K`` (numpy,
or CuPy for a kernel held on a GPU, :mod:`semisup.lapsvm._device`); what is small comes to
the host each iteration (the labelled rows of ``f`` and ``f_d`` for the line search, whose
``O(l log l)`` sort is no work for a device, and the ``c``-vectors of the history), and the
stopping rules read host copies of ``f`` at their check iterations only.
"""

from __future__ import annotations

import numpy as np

from .._progress import log
from .._validation import warn_convergence
from ..linalg.xp import array_modules, to_host
from .objective import kernel_matvec, laplacian_operator, preconditioned_gradient
from .result import SolverResult
from .stopping import Iterate

__all__ = ["exact_line_search", "pcg"]


def exact_line_search(f, fd, y, a_reg: float, c_reg: float, hinge: bool = True
                      ) -> tuple[float, int]:
    """Exact minimiser of ``phi(s) = obj(z + s d)`` over ``s >= 0`` (§3.2.1).

    ``psi = phi'`` is continuous, piecewise linear and non-decreasing, with a breakpoint where
    a labelled point crosses the margin (``s_i = (y_i - f_i) / fd_i``). On a piece with active
    set ``E_j``, ``psi(s) = a_j + c_j s`` with

    ``a_j = sum_{E_j} (f_i - y_i) fd_i + a_reg``, ``c_j = sum_{E_j} fd_i^2 + c_reg``,

    where ``a_reg = gamma_A alpha^T K d_a + gamma_I fd^T L f`` and
    ``c_reg = gamma_A d_a^T K d_a + gamma_I fd^T L fd``.

    Parameters
    ----------
    f, fd : ndarray
        ``f`` and ``f_d = K d_a + d_b`` on the labelled points (unlabelled entries, with
        ``y = 0``, are ignored).
    y : ndarray
        ``+1/-1`` labels (0 = ignored).
    a_reg, c_reg : float
        Regularisation parts of ``psi``'s intercept and slope.
    hinge : bool
        ``False`` for LapRLS: E is fixed and ``s* = -a_1 / c_1`` in closed form.

    Returns
    -------
    s : float
        The step; ``0`` when ``psi(0) >= 0`` — the guard of the spec's pitfall 1: near the
        optimum round-off can make ``psi(0)`` slightly positive, and without the guard the
        search would skip every piece and return a spurious huge step.
    pieces : int
        Linear pieces visited (the paper's "LS iters").

    Notes
    -----
    Vectorised: the breakpoints are sorted once and the running ``(a_j, c_j)`` are cumulative
    sums, so the cost is ``O(l log l)``.
    """
    lab = y != 0
    inE = lab & (y * f < 1.0) if hinge else lab
    r = f - y
    a = a_reg + float(np.dot(r[inE], fd[inE]))
    c = c_reg + float(np.dot(fd[inE], fd[inE]))
    if not a < 0.0:
        return 0.0, 1
    if not hinge:
        return (-a / c if c > 0 else 0.0), 1
    yfd = y * fd
    # a point in E whose margin grows leaves E (v = -1); one outside whose margin shrinks
    # enters (v = +1); every such point has a breakpoint s_i >= 0, the others never switch.
    cross = lab & ((inE & (yfd > 0)) | (~inE & (yfd < 0)))
    if not cross.any():
        return (-a / c if c > 0 else 0.0), 1
    s_br = r[cross] / -fd[cross]
    v = np.where(inE[cross], -1.0, 1.0)
    order = np.argsort(s_br, kind="stable")
    s_br = s_br[order]
    fdc = fd[cross][order]
    A = a + np.concatenate([[0.0], np.cumsum(v[order] * r[cross][order] * fdc)])
    C = c + np.concatenate([[0.0], np.cumsum(v[order] * fdc * fdc)])
    psi_end = A[:-1] + C[:-1] * s_br
    hit = np.flatnonzero(psi_end >= 0.0)
    j = int(hit[0]) if hit.size else s_br.size
    lo = s_br[j - 1] if j > 0 else 0.0
    if C[j] <= 0.0:  # psi flat and negative on the last piece: only for a degenerate d
        return float(lo), j + 1
    s = -A[j] / C[j]
    hi = s_br[j] if j < s_br.size else np.inf
    return float(min(max(s, lo), hi)), j + 1


def _as_columns(y):
    xp = array_modules(y)[0]
    y = xp.asarray(y, dtype=xp.float64)
    return (y[:, None], True) if y.ndim == 1 else (y, False)


def pcg(K, L, y, *, gamma_A: float, gamma_I: float, power: int = 1, use_bias: bool = False,
        hinge: bool = True, max_iter: int = 1000, stopping=(), refresh_every: int | None = 50,
        alpha0=None, b0=None, K_val=None, callback=None, verbose: bool = False,
        _advice: str | None = None) -> SolverResult:
    """Train LapSVM (or LapRLS) in the primal by PCG, Algorithm 1.

    Parameters
    ----------
    K : ndarray (n, n), float64 or float32, or a kernel operator
        Gram matrix of the training points. PCG reads only ``K.shape`` and the products
        ``K @ V`` (``V`` of shape (n,) or (n, c)), so any object providing those works, e.g.
        :class:`semisup.distributed.DaskKernel`, whose row blocks stay on Dask workers
        (likewise ``K_val``, of shape (m, n)). No diagonal, row or entry of ``K`` is read.
    L : sparse matrix, ndarray or callable
        Laplacian ``L0`` (applied ``power`` times) or a callable ``v -> L v``.
    y : ndarray (n,) or (n, c)
        ``+1/-1`` on labelled points, ``0`` on unlabelled ones; a matrix trains the ``c``
        one-vs-all problems together, sharing every kernel product. Its array module is
        that of the computation: a CuPy ``y`` (with a CuPy ``K``, a callable ``L`` on CuPy
        arrays, and a CuPy ``K_val``) runs PCG on the GPU, and the result's arrays stay there.
    gamma_A, gamma_I : float
        Weights of ``alpha^T K alpha`` and ``f^T L f`` in eq. 7.
    power : int
        Laplacian power ``p`` (``L = L0^p``, applied lazily).
    use_bias : bool
        Include the bias ``b`` (its preconditioner entry is 1).
    hinge : bool
        Squared hinge (LapSVM); ``False`` gives LapRLS with the closed-form step.
    max_iter : int
        Iteration cap ``t_max``.
    stopping : sequence of :class:`~semisup.lapsvm.stopping.StoppingRule`
        Goal conditions; a rule stops the columns it covers (all by default).
    refresh_every : int or None
        Recompute ``f = K alpha + b`` and ``K d`` from scratch every this many iterations
        (two extra kernel products); ``None`` never does. A cheap safety net for long runs;
        the line-search guard is what keeps PCG monotone.
    alpha0, b0 : ndarray, optional
        Warm start (E and the gradient are then computed from it: two kernel products).
    K_val : ndarray (m, n), optional
        Kernel between validation and training points, for validation-based rules.
    callback : callable, optional
        ``callback(t, alpha, b, F)`` after every iteration (``F`` = f on training points).
    verbose : bool
        Print progress.
    _advice : str, optional
        What the ConvergenceWarning at ``max_iter`` advises (the estimators word it with
        their own parameter names); by default it is derived from ``stopping``.

    Returns
    -------
    SolverResult
        ``history`` holds per iteration ``obj``, ``grad_norm``, ``pgrad_norm``,
        ``mixed_norm`` (over all columns) and ``ls_pieces``; each rule keeps its own
        ``history``.

    Complexity
    ----------
    ``O(n^2 c)`` per iteration (one ``K`` product for all columns), ``O(k n^2 c)`` overall.
    """
    apply_L = L if callable(L) else laplacian_operator(L, power)
    Y, squeeze = _as_columns(y)
    xp = array_modules(Y)[0]
    n, c = Y.shape
    if K.shape != (n, n):
        raise ValueError(f"K has shape {K.shape} but y has {n} entries.")
    labeled = Y != 0
    lab_rows = xp.flatnonzero(labeled.any(axis=1))
    Yl = to_host(Y[lab_rows])

    A, B = _start(alpha0, b0, n, c, use_bias, xp)
    warm = alpha0 is not None
    F = (kernel_matvec(K, A) + B) if warm else xp.zeros((n, c))
    LF = apply_L(F) if warm else xp.zeros((n, c))
    gb, ga = preconditioned_gradient(F, Y, A, LF, gamma_A=gamma_A, gamma_I=gamma_I,
                                     use_bias=use_bias, hinge=hinge)
    grad_a = kernel_matvec(K, ga)
    D_a, KD = -ga, -grad_a
    D_b = -gb if use_bias else xp.zeros(c)

    def val_scores():
        return kernel_matvec(K_val, A) + B

    stops = _ColumnStops(stopping, n, c)

    def record(t, pieces, steps):
        E = labeled & ((Y * F < 1.0) if hinge else True)
        r = xp.where(E, F - Y, 0.0)
        obj = 0.5 * ((r * r).sum(0) + gamma_A * (A * (F - B)).sum(0)
                     + gamma_I * (F * LF).sum(0))
        gsq = (grad_a * grad_a).sum(0)
        hsq = (ga * ga).sum(0)
        msq = (ga * grad_a).sum(0)
        if use_bias:
            gsq, hsq, msq = gsq + gb * gb, hsq + gb * gb, msq + gb * gb
        # the c-vectors to the host in one copy (the rules and the history read them)
        obj, gsq, hsq, msq = to_host(xp.stack([obj, gsq, hsq, msq]))
        return stops.record(Iterate(t=t, F=F, obj=obj, grad_sq=gsq, ghat_sq=hsq,
                                    mixed_sq=msq, f_val=val_scores), pieces, steps)

    stops.check(record(0, 0, 0.0))
    for t, act in stops.iterations(max_iter):
        act = xp.asarray(act)      # (the columns index the arrays where they live)
        FD = KD[:, act] + D_b[act]
        LFD = apply_L(FD)
        sa, pieces = _line_search_step(stops, t, act, A, B, F, LF, D_a, KD, D_b, FD, LFD, Yl,
                                       lab_rows, gamma_A=gamma_A, gamma_I=gamma_I,
                                       hinge=hinge)
        refresh = refresh_every is not None and t % refresh_every == 0
        if refresh:
            F[:, act] = kernel_matvec(K, A[:, act]) + B[act]
            LF[:, act] = apply_L(F[:, act])
        gb_new, ga_new = preconditioned_gradient(F, Y, A, LF, gamma_A=gamma_A,
                                                 gamma_I=gamma_I, use_bias=use_bias,
                                                 hinge=hinge)
        grad_new = grad_a.copy()
        grad_new[:, act] = kernel_matvec(K, ga_new[:, act])
        # Polak–Ribière with restart (PR+): beta = max(grad'(ghat_new - ghat)/(grad'ghat), 0)
        num = (grad_new * (ga_new - ga)).sum(0)
        den = (grad_a * ga).sum(0)
        if use_bias:
            num += gb_new * (gb_new - gb)
            den += gb * gb
        beta = xp.where(den > 0, xp.maximum(num / xp.where(den > 0, den, 1.0), 0.0), 0.0)
        ga, grad_a = ga_new, grad_new
        gb = gb_new if use_bias else gb
        D_a[:, act] = -ga[:, act] + beta[act] * D_a[:, act]
        KD[:, act] = -grad_a[:, act] + beta[act] * KD[:, act]
        if use_bias:
            D_b[act] = -gb[act] + beta[act] * D_b[act]
        if refresh:
            KD[:, act] = kernel_matvec(K, D_a[:, act])
        stops.end_iteration(record(t, pieces, float(np.mean(sa))), A, B, squeeze, callback,
                            verbose, "pcg")
    return stops.result(max_iter, _advice, A, B, F, squeeze)


def _line_search_step(stops, t, act, A, B, F, LF, D_a, KD, D_b, FD, LFD, Yl, lab_rows, *,
                      gamma_A, gamma_I, hinge):
    """One PCG step of the active columns ``act`` along their directions, in place.

    The exact line search (:func:`exact_line_search`) of each column, whose regulariser
    terms are ``gamma_A a' K d + gamma_I f' L fd`` and ``gamma_A d' K d + gamma_I fd' L fd``
    (``KD = K D_a``; the identity Gram of the reduced expansion's coordinates passes
    ``KD = D_a``); a column whose step is 0 stops. Returns the steps of ``act`` and the mean
    number of pieces the searches visited (host arrays; ``Yl`` is on the host, the others
    in the arrays' module: the searches run on host copies of the labelled rows and of
    the regularisers, one copy per iteration).
    """
    act_h = to_host(act)
    regs = _search_terms(act, act_h, A, LF, D_a, KD, FD, LFD, gamma_A, gamma_I)
    xp = array_modules(A)[0]
    Fl, FDl = to_host(F[lab_rows]), to_host(FD[lab_rows])
    s = np.zeros(A.shape[1])
    pieces = []
    for k, j in enumerate(act_h):
        s[j], npc = exact_line_search(Fl[:, j], FDl[:, k], Yl[:, j], regs[k, 0], regs[k, 1],
                                      hinge)
        pieces.append(npc)
    stops.stop(act_h[s[act_h] == 0.0], t - 1, "line search step 0")
    sa = s[act_h]
    sa_x = xp.asarray(sa)
    A[:, act] += sa_x * D_a[:, act]
    B[act] += sa_x * D_b[act]
    F[:, act] += sa_x * FD
    LF[:, act] += sa_x * LFD
    return sa, float(np.mean(pieces))


def _search_terms(act, act_h, A, LF, D_a, KD, FD, LFD, gamma_A, gamma_I, batched=None):
    """The line searches' regulariser terms of the active columns, a host array (k, 2):
    ``gamma_A a'K d + gamma_I f'L fd`` and ``gamma_A d'K d + gamma_I fd'L fd``.

    On the host four dot products per column (the numbers the paper reproductions in
    ``docs/results`` were made with); on a GPU (``batched``, by default where the arrays
    are not numpy's) the same sums for all columns in a few array operations and one copy
    to the host: the per-column products cost 5 ms of kernel launches per iteration of the
    float32 LapRLS on all of MNIST (``docs/benchmarks/gpu.md``). The two agree to rounding.
    """
    xp = array_modules(A)[0]
    if batched is None:
        batched = xp is not np
    if not batched:
        return np.array([[gamma_A * (A[:, j] @ KD[:, j]) + gamma_I * (FD[:, k] @ LF[:, j]),
                          gamma_A * (D_a[:, j] @ KD[:, j]) + gamma_I * (FD[:, k] @ LFD[:, k])]
                         for k, j in enumerate(act_h)])
    KDa = KD[:, act]
    return to_host(xp.stack([
        gamma_A * (A[:, act] * KDa).sum(0) + gamma_I * (FD * LF[:, act]).sum(0),
        gamma_A * (D_a[:, act] * KDa).sum(0) + gamma_I * (FD * LFD).sum(0)], axis=1))


def _start(alpha0, b0, r, c, use_bias, xp=np):
    """The coefficients ``(A (r, c), B (c,))`` of module ``xp`` to start from: zeros, or the
    warm start ``alpha0`` / ``b0`` (copied; ``b0`` ignored without a bias)."""
    A = xp.zeros((r, c)) if alpha0 is None else xp.array(alpha0, dtype=xp.float64).reshape(r, c)
    B = xp.zeros(c) if (b0 is None or not use_bias) else \
        xp.array(b0, dtype=xp.float64).reshape(c)
    return A, B


class _ColumnStops:
    """Which one-vs-all columns of a PCG run still iterate, and when and why each stopped.

    Shared by :func:`pcg` and the reduced expansion's PCG: the goal conditions ``rules``
    (reset for ``n`` points) are checked after each iteration on the columns they govern; a
    column stops at the first rule that holds, or when its exact line search returns 0.
    """

    def __init__(self, rules, n, c):
        self.rules = list(rules)
        for rule in self.rules:
            rule.reset(n)
        self.active = np.ones(c, dtype=bool)
        self.stopped_at = np.full(c, -1)
        self.reason = np.array(["max_iter"] * c, dtype=object)
        self.hist = {k: [] for k in ("obj", "grad_norm", "pgrad_norm", "mixed_norm",
                                     "ls_pieces", "step")}
        self.t = 0

    def iterations(self, max_iter):
        """``(t, active columns)`` for ``t = 1 .. max_iter`` while a column is active;
        ``self.t`` is the last iteration run."""
        for t in range(1, max_iter + 1):
            if not self.active.any():
                return
            self.t = t
            yield t, np.flatnonzero(self.active)

    def end_iteration(self, it, A, B, squeeze, callback, verbose, name):
        """After iteration ``it.t``: the goal conditions, the ``callback(t, alpha, b, F)``
        and, every 10 iterations with ``verbose``, a progress line ``[name] ...``."""
        self.check(it)
        if callback is not None:
            callback(it.t, A[:, 0] if squeeze else A, B[0] if squeeze else B, it.F)
        if verbose and it.t % 10 == 0:
            log(f"[{name}] t={it.t} obj={self.hist['obj'][-1]:.6g} "
                f"active={int(self.active.sum())}", True)

    def record(self, it, pieces, steps):
        """Log the iterate ``it`` (objective and gradient norms over all columns, the line
        search's pieces and step) in the history; returns it."""
        h = self.hist
        h["obj"].append(float(it.obj.sum()))
        h["grad_norm"].append(float(np.sqrt(it.grad_sq.sum())))
        h["pgrad_norm"].append(float(np.sqrt(it.ghat_sq.sum())))
        h["mixed_norm"].append(float(np.sqrt(max(it.mixed_sq.sum(), 0.0))))
        h["ls_pieces"].append(pieces)
        h["step"].append(steps)
        return it

    def stop(self, cols, t, why):
        self.active[cols] = False
        self.stopped_at[cols] = t
        self.reason[cols] = why

    def check(self, it):
        """Apply each rule to the still-active columns it governs after iterate ``it``."""
        c = self.active.size
        for rule in self.rules:
            cols = np.arange(c) if rule.columns is None else rule.columns
            if self.active[cols].any() and rule(it):
                self.stop(cols[self.active[cols]], it.t, rule.name)

    def result(self, max_iter, advice, A, B, F, squeeze):
        """The :class:`SolverResult` after the last iteration (a max_iter warning when a
        column never stopped: ``advice``, default :func:`_default_advice`)."""
        self.stopped_at[self.stopped_at < 0] = self.t
        converged = not self.active.any()
        if not converged:
            warn_convergence(f"PCG reached max_iter={max_iter} before " + (
                advice if advice is not None else _default_advice(self.rules)),
                stacklevel=4)   # at the solver's caller
        history = dict(self.hist)
        for rule in self.rules:
            history[rule.name if rule.columns is None
                    else f"{rule.name}{list(rule.columns)}"] = list(rule.history)
        return SolverResult(alpha=A[:, 0] if squeeze else A,
                            b=float(B[0]) if squeeze else B,
                            n_iter=int(self.stopped_at.max()), converged=bool(converged),
                            stop_reason=", ".join(sorted(set(self.reason.tolist()))),
                            history=history, n_iter_per_column=self.stopped_at,
                            decision=F[:, 0].copy() if squeeze else F.copy())


def _default_advice(rules) -> str:
    """The rest of the max_iter warning of :func:`pcg`, consistent with the rules in use."""
    names = sorted({rule.name for rule in rules})
    if not names:
        return ("the line search returned 0 (no stopping rule was given); raise max_iter, "
                "or pass a goal condition, e.g. stopping=[make_rule('stability', "
                "unlabeled=...)] (the paper's rule).")
    return (f"any stopping condition held (rules in use: {', '.join(names)}); raise "
            "max_iter, or use a looser rule (a larger tol for the classical rules).")
