"""Newton's method for the primal LapSVM (eq. 10) and LapRLS in closed form (eq. 14).

With the generalised Hessian ``H = A B`` (§3.1), a Newton step solves the non-symmetric system

    [[0,                       1^T                           ]   z_new = [0    ]
     [I_E 1 + gamma_I L 1,     I_E K + gamma_A I + gamma_I L K]]          [I_E y]

(without a bias: ``(I_E K + gamma_A I + gamma_I L K) alpha = I_E y``), which needs
``gamma_A > 0``. Starting from ``z = 0`` every labelled point is an error vector, so the first
step is the LapRLS solution; the method stops when the error-vector set ``E`` no longer
changes (the paper never needed more than 5 steps).

This is the ``O(n^3)`` baseline the paper times: it forms ``L K`` once (a sparse-dense
product, ``O(p nnz(L0) n)``) and factorises the dense ``(n+1) x (n+1)`` system of the first
step (every labelled point in ``E``). A later step's ``E`` lies inside the labelled set, so
its system differs from the first by the rows of the labelled points that left ``E``: it
is solved through the first factorisation by the Sherman–Morrison–Woodbury identity
(:class:`_LabelledBase`), in ``O(n l + l^3)`` for ``l`` labelled points, where the paper's
method refactorises per step (and here per one-vs-all column: all of them with 10 classes;
LapSVM on 8 000 MNIST points, 10 classes, took 97 s that way and 11.5 s this way, graph
included). For large ``n`` use
:func:`semisup.lapsvm.pcg.pcg`, which never forms ``L K``.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

from .._validation import check_memory, warn_convergence
from ..linalg.xp import array_modules
from .objective import error_mask, laplacian_operator, objective
from .pcg import _start, exact_line_search
from .result import SolverResult

__all__ = ["newton", "laprls_closed_form"]


def _newton_matrix(K, LK, L1, E, gamma_A, gamma_I, use_bias):
    """The Newton system of the module docstring for the error set ``E`` (a boolean (n,)
    array), in ``K``'s array module (numpy, or CuPy on the device path), formed once."""
    xp = array_modules(K)[0]
    n, off = K.shape[0], int(use_bias)
    M = xp.empty((n + off, n + off))
    xp.multiply(LK, gamma_I, out=M[off:, off:])
    rows = xp.flatnonzero(xp.asarray(E))
    M[off + rows, off:] += K[rows]
    diag = xp.arange(off, n + off)
    M[diag, diag] += gamma_A
    if use_bias:
        M[0, 0], M[0, 1:] = 0.0, 1.0
        M[1:, 0] = xp.asarray(E, dtype=xp.float64) + gamma_I * L1
    return M


def _newton_apply(Kd, LK, L1, E, Z, gamma_A, gamma_I, use_bias):
    """``M_E Z`` for the matrix of :func:`_newton_matrix`, without forming it (``O(n^2)``
    per column)."""
    A = Z[1:] if use_bias else Z
    out = gamma_I * (LK @ A) + gamma_A * A
    out[E] += Kd[E] @ A
    if not use_bias:
        return out
    out += (E.astype(np.float64) + gamma_I * L1)[:, None] * Z[:1]
    return np.vstack([A.sum(axis=0, keepdims=True), out])


class _LabelledBase:
    """The Newton matrix of the whole labelled set ``lab`` (the first step's, LapRLS's),
    factorised once; a later step's matrix for an error set ``E`` inside ``lab`` differs
    from it by the rows of ``D = lab \\ E`` only (``M_E = M_lab - U_D V_D``, ``V_D`` the rows
    ``[1, K_D]``), so it is solved by the Sherman–Morrison–Woodbury identity: with
    ``W = M_lab^{-1} U_lab`` and ``C = V_lab W`` (``l`` solves and an ``l x l`` product,
    once), the step for right-hand sides supported on ``E`` is
    ``x = W_E r_E + W_D (I - C_DD)^{-1} C_DE r_E``: ``O(n l + l^3)`` instead of a new
    ``O(n^3)`` factorisation per one-vs-all column and step. ``W`` and ``C`` are made at
    the first such step (LapRLS, one step, never needs them). Each solution's backward
    error is checked (``M_E x`` by :func:`_newton_apply`); one that fails goes to a dense
    solve.
    """

    def __init__(self, M, lab, Kd, use_bias):
        self.lab, self.off, self.Kd = np.flatnonzero(lab), int(use_bias), Kd
        self.norm = float(np.abs(M).sum(axis=1).max())
        self.lu = sla.lu_factor(M, check_finite=False)
        gecon = sla.get_lapack_funcs("gecon", (self.lu[0],))
        self.rcond = float(gecon(self.lu[0], self.norm, norm="I")[0])
        self.W = self.C = None

    def _woodbury_factors(self):
        U = np.zeros((self.lu[0].shape[0], self.lab.size))
        U[self.lab + self.off, np.arange(self.lab.size)] = 1.0
        self.W = sla.lu_solve(self.lu, U, check_finite=False)
        self.C = self.Kd[self.lab] @ self.W[self.off:]
        if self.off:
            self.C += self.W[0][None, :]

    def solve(self, rhs):
        """``M_lab^{-1} [0; rhs]`` (the first step)."""
        top = [np.zeros((1, rhs.shape[1]))] if self.off else []
        return sla.lu_solve(self.lu, np.vstack(top + [rhs]), check_finite=False)

    def solve_subset(self, E, rhs):
        """``M_E^{-1} [0; rhs]`` for ``E`` inside the labelled set, or ``None``."""
        if self.W is None:
            self._woodbury_factors()
        if not (np.isfinite(self.W).all() and np.isfinite(self.C).all()):
            return None
        inE = E[self.lab]
        pE, pD = np.flatnonzero(inE), np.flatnonzero(~inE)
        rE = rhs[self.lab[pE]]
        Z = self.W[:, pE] @ rE
        if pD.size:
            S = np.eye(pD.size) - self.C[np.ix_(pD, pD)]
            try:
                Z += self.W[:, pD] @ np.linalg.solve(S, self.C[np.ix_(pD, pE)] @ rE)
            except np.linalg.LinAlgError:
                return None
        return Z


def _full_hessian_step(K, apply_L, LK, E, y, gamma_I, use_bias):
    """Solve ``H z = c`` by least squares (``gamma_A = 0``, where eq. 10 is invalid).

    ``y`` is an n x m block of right-hand sides already restricted to E.
    Squares K's condition number (products ``K I_E K`` and ``K L K``), so it is only a
    fallback; see the spec's pitfall 2.
    """
    n = K.shape[0]
    J = np.hstack([np.ones((n, 1)), K]) if use_bias else K
    LJ = np.hstack([apply_L(np.ones((n, 1))), LK]) if use_bias else LK
    H = J[E].T @ J[E] + gamma_I * (J.T @ LJ)
    Z = sla.lstsq(H, J.T @ y, lapack_driver="gelsy")[0]  # y is already zero off E
    return (Z[0], Z[1:]) if use_bias else (np.zeros(y.shape[1]), Z)



def newton_groups(E, E_prev, converged):
    """The one-vs-all columns still to step, and them grouped by error-vector set.

    A column has converged (``converged`` is updated in place) once its error-vector set
    ``E[:, j]`` is that of the previous step ``E_prev`` (the paper's Newton stopping rule);
    columns with the same set share the Newton matrix (every column at the first step, every
    LapRLS step): one solve, many right-hand sides. Returns ``(active, [columns, ...])``.
    """
    if E_prev is not None:
        converged |= (E == E_prev).all(axis=0)
    active = np.flatnonzero(~converged)
    groups: dict[bytes, list[int]] = {}
    for j in active:
        groups.setdefault(np.packbits(E[:, j]).tobytes(), []).append(j)
    return active, list(groups.values())

class _NewtonSteps:
    """The bookkeeping both Newton solvers share (full and reduced expansion): which
    one-vs-all columns still step (:func:`newton_groups`), their step counts, the history,
    the callback and the result."""

    def __init__(self, Y, hinge, max_iter, callback, squeeze):
        self.Y, self.hinge, self.max_iter = Y, hinge, max_iter
        self.callback, self.squeeze = callback, squeeze
        self.iters = np.zeros(Y.shape[1], dtype=int)
        self.converged = np.zeros(Y.shape[1], dtype=bool)
        self.E_prev = None
        self.hist = {"n_errors": [], "obj": []}

    def groups(self, t, F, A, B):
        """After the decision values ``F`` of step ``t`` (and the ``callback``): the error
        sets ``E`` and the groups of columns that take step ``t + 1`` (none once every
        column's set repeats, or at ``max_iter``)."""
        if self.callback is not None and t > 0:
            self.callback(t, A[:, 0] if self.squeeze else A, B[0] if self.squeeze else B, F)
        E = error_mask(F, self.Y, self.hinge)
        active, groups = newton_groups(E, self.E_prev, self.converged)
        if t == self.max_iter or active.size == 0:
            return E, []
        self.iters[active] += 1
        self.E_prev = E
        self.hist["n_errors"].append(int(E[:, 0].sum()))
        return E, groups

    def result(self, A, B, F, advice, info=None):
        """The :class:`SolverResult` (a ConvergenceWarning ending in ``advice`` when a
        column's error set still changed at ``max_iter``)."""
        done = bool(self.converged.all())
        if not done:
            warn_convergence(f"Newton's method reached max_iter={self.max_iter} with the "
                             "error-vector set still changing; " + advice,
                             stacklevel=4)   # at the solver's caller, as before
        sq = self.squeeze
        return SolverResult(alpha=A[:, 0] if sq else A, b=float(B[0]) if sq else B,
                            n_iter=int(self.iters.max()), converged=done,
                            stop_reason="error vectors unchanged" if done else "max_iter",
                            history=self.hist, n_iter_per_column=self.iters,
                            info=info or {}, decision=F[:, 0].copy() if sq else F.copy())


def newton(K, L, y, *, gamma_A: float, gamma_I: float, power: int = 1,
           use_bias: bool = False, hinge: bool = True, max_iter: int = 50,
           line_search: bool = False, alpha0=None, b0=None, LK=None, callback=None,
           _advice: str | None = None) -> SolverResult:
    """Primal LapSVM by Newton's method (eq. 10); LapRLS with ``hinge=False``.

    Parameters
    ----------
    K : ndarray (n, n)
        Gram matrix (computed in float64 here whatever its dtype).
    L : sparse matrix, ndarray or callable
        Laplacian ``L0`` (applied ``power`` times) or a callable ``v -> L v``.
    y : ndarray (n,) or (n, c)
        ``+1/-1`` labelled, ``0`` unlabelled; columns are independent one-vs-all problems
        sharing ``L K``.
    gamma_A, gamma_I : float
        Regularisation weights of eq. 7. ``gamma_A = 0`` falls back to a least-squares
        solve of the full Newton system (less accurate).
    power : int
        Laplacian power ``p``.
    use_bias : bool
        Include the bias ``b``; every stationary point then has ``sum(alpha) = 0``.
    hinge : bool
        Squared hinge (LapSVM) or squared loss (LapRLS: one step).
    max_iter : int
        Cap on Newton steps (default 50).
    line_search : bool
        Take the exact line-search step along ``z_new - z`` instead of the full step
        (the paper found the full step never caused problems).
    alpha0, b0 : optional warm start (``E`` is computed from it).
    LK : ndarray (n, n), optional
        Precomputed ``L K`` (e.g. shared along a parameter grid).
    callback : callable, optional
        ``callback(t, alpha, b, F)`` after every Newton step ``t`` (``F`` = f on the training
        points, shape (n, c)), as :func:`~semisup.lapsvm.pcg.pcg`'s; the arrays are the
        solver's own: copy them to keep them.
    _advice : str, optional
        What the ConvergenceWarning at ``max_iter`` advises (the estimators word it with
        their own parameter names).

    Returns
    -------
    SolverResult
        ``n_iter`` is the number of linear solves; ``history["n_errors"]`` the size of E
        and ``history["obj"]`` the objective after each step (first column).

    Complexity
    ----------
    ``O(n^3)`` for the first step, ``O(n l (c + l) + l^3)`` per later step and column (``l``
    labelled points; a dense ``O(n^3)`` solve where an error set leaves the labelled set or
    the Woodbury solution's backward error exceeds 1e-10); memory three dense n x n
    matrices.
    """
    apply_L = L if callable(L) else laplacian_operator(L, power)
    y2 = np.asarray(y, dtype=np.float64)
    squeeze = y2.ndim == 1
    Y = y2[:, None] if squeeze else y2
    n, c = Y.shape
    check_memory(3.0 * (n + 1) ** 2 * 8, f"Newton's method on n={n} points",
                 "Use the PCG solver (solver='pcg'), which needs only the kernel matrix.")
    Kd = np.asarray(K, dtype=np.float64)
    if LK is None:
        LK = apply_L(Kd)
    L1 = apply_L(np.ones(n)) if use_bias else None
    A, B = _start(alpha0, b0, n, c, use_bias)
    run = _NewtonSteps(Y, hinge, max_iter, callback, squeeze)
    fallback = gamma_A <= 0
    ill_conditioned = False
    lab = (Y != 0).any(axis=1)
    base = None            # the labelled set's factorised matrix (:class:`_LabelledBase`)
    for t in range(max_iter + 1):
        F = Kd @ A + B
        E, groups = run.groups(t, F, A, B)
        if not groups:
            break
        for cols in groups:
            Ej = E[:, cols[0]]
            rhs = np.where(E[:, cols], Y[:, cols], 0.0)
            Z = None
            if gamma_A > 0 and (base is not None or np.array_equal(Ej, lab)):
                Z = _base_step(base, Ej, lab, rhs, Kd, LK, L1, gamma_A, gamma_I, use_bias)
                if base is None and Z is not None:
                    base, Z = Z
                    ill_conditioned |= base.rcond < np.finfo(float).eps
            if gamma_A > 0 and Z is None:
                M = _newton_matrix(Kd, LK, L1, Ej, gamma_A, gamma_I, use_bias)
                try:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always", sla.LinAlgWarning)
                        Z = sla.solve(M, np.vstack([np.zeros((1, len(cols))), rhs])
                                      if use_bias else rhs, check_finite=False)
                    for w in caught:
                        if issubclass(w.category, sla.LinAlgWarning):
                            ill_conditioned = True
                        else:
                            warnings.warn_explicit(w.message, w.category, w.filename,
                                                   w.lineno)
                except np.linalg.LinAlgError:
                    Z = None
                if Z is not None and not np.isfinite(Z).all():
                    Z = None
            if Z is not None:
                b_new, a_new = (Z[0], Z[1:]) if use_bias else (np.zeros(len(cols)), Z)
            else:
                # gamma_A = 0, or the bordered system is exactly singular (e.g. gamma_I = 0
                # with the bias column zero, duplicate points): a least-squares step on the
                # full Hessian system is still a Newton step
                fallback = True
                b_new, a_new = _full_hessian_step(Kd, apply_L, LK, Ej, rhs, gamma_I, use_bias)
            if not (np.isfinite(a_new).all() and np.isfinite(b_new).all()):
                raise ValueError("Newton's method produced non-finite coefficients: the "
                                 "kernel or the Laplacian is too badly scaled (check the "
                                 "magnitudes of X and of the kernel); increase gamma_A.")
            for k, j in enumerate(cols):
                s = 1.0
                if line_search:
                    da, db = a_new[:, k] - A[:, j], b_new[k] - B[j]
                    Kda = Kd @ da
                    fd = Kda + db
                    a_reg = gamma_A * (A[:, j] @ Kda) + gamma_I * (fd @ apply_L(F[:, j]))
                    c_reg = gamma_A * (da @ Kda) + gamma_I * (fd @ apply_L(fd))
                    s, _ = exact_line_search(F[:, j], fd, Y[:, j], a_reg, c_reg, hinge)
                A[:, j] += s * (a_new[:, k] - A[:, j])
                B[j] += s * (b_new[k] - B[j])
        run.hist["obj"].append(objective(Kd, apply_L, Y[:, 0], A[:, 0],
                                         B[0] if use_bias else None, gamma_A=gamma_A,
                                         gamma_I=gamma_I, hinge=hinge))
    if ill_conditioned:
        # scipy's LinAlgWarning, said once and with the parameters that control it
        warnings.warn("the Newton system (I_E K + gamma_A I + gamma_I L K) is numerically "
                      f"ill-conditioned (gamma_A={gamma_A:g}, largest |K| entry "
                      f"{float(np.abs(Kd).max()):.3g}): the coefficients alpha may be "
                      "inaccurate. Increase gamma_A, or rescale the kernel (e.g. X to unit "
                      "norm for a polynomial or linear kernel).", UserWarning, stacklevel=3)
    return run.result(A, B, F, _advice if _advice is not None else "raise max_iter" + (
        "" if line_search else " or pass line_search=True") + ".",
        info={"full_hessian_fallback": fallback})


def _base_step(base, E, lab, rhs, Kd, LK, L1, gamma_A, gamma_I, use_bias):
    """A Newton step through the labelled set's factorisation: ``(base, Z)`` when ``base``
    is ``None`` and ``E`` is the labelled set (the factorisation made here), ``Z`` for an
    ``E`` inside the labelled set with a ``base``, ``None`` where the Woodbury solution's
    backward error is above ``1e-10`` (then the caller solves densely)."""
    if base is None:
        M = _newton_matrix(Kd, LK, L1, E, gamma_A, gamma_I, use_bias)
        # an exactly singular M (duplicate points, gamma_I = 0) gives non-finite factors:
        # refused below, and the caller's dense solve takes its own fallback
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", sla.LinAlgWarning)
            new = _LabelledBase(M, lab, Kd, use_bias)
            Z = new.solve(rhs)
        del M
        return (new, Z) if np.isfinite(Z).all() else None
    if (E & ~lab).any():
        return None
    with np.errstate(all="ignore"):
        Z = base.solve_subset(E, rhs)
    if Z is None or not np.isfinite(Z).all():
        return None
    r = np.vstack([np.zeros((1, rhs.shape[1])), rhs]) if use_bias else rhs
    res = _newton_apply(Kd, LK, L1, E, Z, gamma_A, gamma_I, use_bias) - r
    ok = np.abs(res).max() <= 1e-10 * (base.norm * np.abs(Z).max() + np.abs(r).max())
    return Z if ok else None


def laprls_closed_form(K, L, y, *, gamma_A: float, gamma_I: float, power: int = 1,
                       use_bias: bool = False, LK=None) -> SolverResult:
    """LapRLS by solving eq. 14 (``B_L z = [0; y]``, one dense solve): ``O(n^3)``."""
    return newton(K, L, y, gamma_A=gamma_A, gamma_I=gamma_I, power=power,
                  use_bias=use_bias, hinge=False, max_iter=1, LK=LK)
