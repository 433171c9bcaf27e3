"""LapSVM and LapRLS on an engine that keeps its arrays off the host (a GPU).

A CuPy ``X`` (or a CuPy / ``cupyx`` affinity ``W``) picks the engine of its type
(:func:`semisup.engines.engine_for`) and :meth:`LapSVM.fit` / :meth:`LapRLS.fit` hand the
fit to :func:`fit`: the graph is built, the RBF kernel held (``kernel_dtype``, its memory
checked against the device's) and the primal problem solved where ``X`` lives, by the very
PCG of the host (:func:`semisup.lapsvm.pcg.pcg`, whose arrays then are CuPy's: exact line
search, the hinge's active set for LapSVM, the closed-form step for LapRLS) or by Newton's
dense solves; the coefficients stay there and :func:`decision_function` answers in the
input's type.

What it solves: eq. 7 (LapSVM) or eq. 14 (LapRLS) of Melacci & Belkin (2011) with the full
expansion over the n training points (``n_basis=None``, or ``"auto"`` while the device
holds the kernel: :func:`_basis_size`), with the host's solver semantics:

* ``solver="auto"`` where the host solves directly (up to 8000 points, the kernel and the
  solve's float64 workspace within half of the free device memory), and ``"newton"`` /
  ``"closed_form"`` by name: Newton's method (LapRLS: its single step, eq. 14) by dense
  LU solves on the device (:func:`_direct`: one per step and group of columns sharing an
  error set, where the host solves later steps through Woodbury updates of its first
  factorisation): the same steps, decision values to rounding (the tests: 1e-8 of their
  scale, 1e-6 at ``gamma_A = 1e-6``). ``early_stopping`` is ignored there, as by the host.
* ``solver="pcg"``, and ``"auto"`` above: PCG with the estimator's ``early_stopping``
  (every rule of the host: ``"stability"`` by default, the paper's Alg. 2, checked every
  ``stop_every`` iterations, default ``round(sqrt(n)/2)``; the data-based rules read a host
  copy of the decision values at their checks only), ``joint_stopping``, ``stop_tol``,
  ``max_iter`` (default 1000) and ``refresh_every``, as on the host: same stopping
  iteration, decision values to rounding. A float32 kernel is multiplied in float64
  arithmetic (:func:`semisup.linalg.xp.product_f64`; the host multiplies in float32).
* ``solver="auto"`` with ``gamma_A = 0`` (the host's Newton then solves the singular
  system by least squares) up to 2000 points: PCG run to the minimiser, until the relative
  gradient norm ``sqrt(ghat^T grad)`` (the ``"mixed_grad"`` rule) falls below ``stop_tol``
  (default ``1e-10`` with a float64 kernel, ``1e-6`` with a float32 one), the line search
  returns 0, or ``max_iter`` (default 3000) runs out; also where a dense solve is not
  finite.

Refused with an error naming the parameter: kernels other than ``"rbf"``, the dual solver
(``"dual"``), ``warm_start`` and ``keep_path``.

An integer ``n_basis`` (LapRLS and LapSVM) fits the reduced expansion over ``m`` basis
points there (:func:`_fit_reduced`, the functions of :mod:`semisup.lapsvm.reduced` with
CuPy arrays): the basis drawn uniformly with ``random_state`` (the host fit's indices), the
features ``K_nB T`` on the device, the direct solves (``solver="auto"``) or the reduced PCG
with the ``"stability"`` or a classical stopping rule. ``n_basis="auto"`` keeps the full
kernel while it takes at most half of the free device memory, and above takes the host's
reduced rule.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._validation import _fmt_bytes, check_semisup_labels
from ..engines import engine_for
from ..engines._base import Engine
from ..graph.degeneracy import warn_if_flat
from ..kernels import scale_sigma
from ..linalg import xp as xp_helpers
from ..linalg.xp import (array_modules, check_free_memory, laplacian_apply, product_f64,
                         rbf_kernel, to_host)
from .newton import _NewtonSteps, _newton_matrix
from .objective import objective
from .pcg import _start, pcg
from .reduced import (AUTO_DIRECT_N, AUTO_FULL_N, AUTO_MEMORY_SHARE, AUTO_MIN_BASIS,
                      auto_n_basis, basis_transform, gram_block, reduced_newton, reduced_pcg,
                      select_basis)
from .stopping import make_rule

__all__ = ["on_device", "fit", "decision_function"]

#: the minimiser's default relative gradient tolerance (``solver="auto"``, n <= 2000)
MINIMISER_TOL = {"float64": 1e-10, "float32": 1e-6}
#: ... and its default iteration cap
MINIMISER_MAX_ITER = 3000
#: working memory of a block of query rows in the decision function (float64 kernel rows)
_QUERY_BLOCK_BYTES = 2 ** 29


def on_device(engine) -> bool:
    """Whether the fit's ``engine`` (of ``X`` and ``W``, looked up once by the estimator:
    :func:`semisup.engines.engine_for_types`) keeps its arrays off the host."""
    return not engine.host_arrays


def _refuse_unsupported(est, engine, X_val=None, reduced=False):
    """A ValueError naming the first setting the device path cannot honour (the full
    expansion's, or with ``reduced`` the reduced expansion's)."""
    name, where = type(est).__name__, f"on the {engine.name} engine"
    if (getattr(engine, "xp", None) is None or getattr(engine, "sparse", None) is None
            if reduced else type(engine).kernel is Engine.kernel):
        raise ValueError(f"{name} has no fit {where}; pass X in memory (e.g. "
                         "cupy.asnumpy(X)).")
    checks = [("kernel", est.kernel == "rbf", "use kernel='rbf'"),
              ("warm_start", not est.warm_start, "use warm_start=False"),
              ("keep_path", not est.keep_path, "use keep_path=False")]
    if reduced:
        checks += [("basis", est.basis == "uniform",
                    "its reduced expansion draws the basis uniformly; use basis='uniform'"),
                   ("early_stopping", est.solver != "pcg" or not any(
                       nm in ("validation", "mixed") for nm in est._rule_names()),
                    "a validation set is not available there; use 'stability', a "
                    "classical rule or None")]
    else:
        checks += [("solver", est.solver in ("auto", "pcg", "newton", "closed_form"),
                    "use solver='auto', 'pcg' or 'newton'")]
    for param, ok, advice in checks:
        if not ok:
            raise ValueError(f"{name}({param}={getattr(est, param)!r}) is not available "
                             f"{where}: {advice}, or pass X in memory.")
    if reduced and X_val is not None:
        raise ValueError(f"{name}: a validation set (X_val) is not available {where} with "
                         "the reduced expansion; pass no X_val.")


def _basis_size(est, engine, X):
    """``m`` of the reduced expansion on the device, or ``None`` for the full kernel.

    An integer ``n_basis`` is the reduced expansion (``min(n_basis, n)``). ``"auto"`` keeps
    the full kernel where the device holds it: up to 2000 points, or while the n x n kernel
    (``kernel_dtype``) takes at most half of the free device memory (all of MNIST in
    float64 on an 80 GB card); above, the host's rule
    (:func:`~semisup.lapsvm.reduced.auto_n_basis`, its features within that half), with a
    warning that says so.
    """
    if est.n_basis is None:
        return None
    n = X.shape[0]
    if est.n_basis != "auto":
        return min(int(est.n_basis), n)
    itemsize = np.dtype(est.kernel_dtype).itemsize
    free = xp_helpers.free_memory(array_modules(X)[0])
    budget = AUTO_MEMORY_SHARE * free
    if n <= AUTO_DIRECT_N or float(n) * n * itemsize <= budget:
        return None
    m = auto_n_basis(n, itemsize, budget)
    # ... and the reduced fit's whole workspace within what its memory check allows
    while m > AUTO_MIN_BASIS and _reduced_bytes(n, m, itemsize) > 0.9 * free:
        m = max(AUTO_MIN_BASIS, int(0.9 * m))
    warnings.warn(f"n_basis='auto': the full {n}x{n} {np.dtype(est.kernel_dtype).name} "
                  f"kernel ({_fmt_bytes(float(n) * n * itemsize)}) would take more than "
                  f"{AUTO_MEMORY_SHARE:.0%} of the free device memory; using the reduced "
                  f"expansion with n_basis={m}. Set n_basis to choose.", UserWarning,
                  stacklevel=4)
    return m


def _solver(est, n, xp):
    """How the device solves the full expansion of ``n`` points: ``"direct"`` (Newton's
    dense solves, :func:`_direct`) for ``solver="newton"`` / ``"closed_form"``, and for
    ``"auto"`` where the host solves directly (up to ``AUTO_FULL_N`` = 8000 points, with
    the kernel and the solve's workspace in half of the free device memory) while
    ``gamma_A > 0``; ``"minimiser"`` (PCG to tolerance) for ``"auto"`` up to 2000 points
    otherwise (``gamma_A = 0``, whose singular systems the host solves by least squares);
    ``"pcg"`` (with ``early_stopping``) else."""
    if est.solver in ("newton", "closed_form"):
        return "direct"
    if est.solver != "auto":
        return "pcg"
    need = float(n) * n * np.dtype(est.kernel_dtype).itemsize + est._direct_workspace(n)
    if (est.gamma_A > 0 and n <= AUTO_FULL_N
            and need <= AUTO_MEMORY_SHARE * xp_helpers.free_memory(xp)):
        return "direct"
    return "minimiser" if n <= AUTO_DIRECT_N else "pcg"


def fit(est, X, y, *, W=None, X_val=None, y_val=None, engine=None):
    """:meth:`LapSVM.fit` / :meth:`LapRLS.fit` where ``X`` lives (see the module
    docstring), on ``engine`` (of ``X`` and ``W``; looked up if not given). Returns ``est``."""
    name = type(est).__name__
    engine = engine_for(X, W) if engine is None else engine
    m = _basis_size(est, engine, X)
    reduced = m is not None
    _refuse_unsupported(est, engine, X_val, reduced)
    y = check_semisup_labels(est._host_labels(y), estimator=name)[0]
    names = est._rule_names()
    if not reduced and _solver(est, X.shape[0], engine.xp) == "direct":
        _check_direct_memory(est, engine.xp, X.shape[0])
    t0 = time.perf_counter()
    X, W, y, classes, labeled = _prepare(est, X, y, W, engine)
    n = X.shape[0]
    est.classes_ = classes
    est.kernel_sigma_ = (scale_sigma(X) if est.kernel_sigma == "scale"
                         else float(est.kernel_sigma))
    Y = engine.xp.asarray(est._encode(y, classes, labeled))
    apply_L = _laplacian(est, engine.asarray(W))
    if reduced:
        res, alpha = _fit_reduced(est, engine, X, apply_L, Y, labeled, names, t0, m)
    else:
        solver = _solver(est, n, engine.xp)
        needs_val = [nm for nm in names if nm in ("validation", "mixed")]
        if needs_val and X_val is None and solver == "pcg":
            raise ValueError(f"early_stopping={needs_val[0]!r} needs a validation set "
                             "(fit(..., X_val=..., y_val=...)).")
        res = _fit_full(est, engine, X, apply_L, Y, labeled, X_val, y_val, names, solver, t0)
        alpha = res.alpha
    est.alpha_ = alpha
    est.intercept_ = res.b
    est.n_iter_ = int(res.n_iter)
    est.n_iter_per_class_ = (np.atleast_1d(np.asarray(res.n_iter_per_column, dtype=int))
                             if res.n_iter_per_column is not None else np.array([est.n_iter_]))
    est.converged_ = bool(res.converged)
    est.stop_reason_ = res.stop_reason
    est.history_ = res.history
    est.transduction_ = labels(est, res.decision)
    warn_if_flat(res.decision.reshape(n, -1), labeled, name)
    return est


def _fit_full(est, engine, X, apply_L, Y, labeled, X_val, y_val, names, solver, t0):
    """The full expansion on the device: the kernel of the training points ``X``, then
    PCG with the host's rules, or to the minimiser (see the module docstring). Sets the
    expansion's attributes and the times; returns PCG's result."""
    est.n_basis_, est.basis_indices_ = X.shape[0], None
    est.X_fit_ = X
    K = _SymmetricProducts(engine.kernel(X, None, "rbf", dtype=np.dtype(est.kernel_dtype).name,
                                         sigma=est.kernel_sigma_))
    K_val, Y_val = _validation_targets(est, engine, X_val, y_val)
    est.setup_time_ = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = _solve_full(est, K, apply_L, Y, ~labeled, K_val, Y_val, names, solver)
    est.fit_time_ = time.perf_counter() - t0
    return res


class _SymmetricProducts:
    """The training kernel ``K`` (symmetric) for PCG and its products ``K V``.

    A float64 ``K`` multiplies as ``(V^T K)^T``: on an H200 the product of the 70 000 x
    70 000 float32 kernel with 10 columns took 7.7 ms in that layout against 16.2 ms as
    ``K @ V`` (``semisup bench gpu``, ``product_*_ms``), and PCG makes one per iteration.
    A float32 ``K`` multiplies in float64 arithmetic (:func:`semisup.linalg.xp.product_f64`,
    ``float64_products``): float32 products, whose rounding PCG amplifies by about
    ``1 / gamma_A``, kept the paper's stability stop from ever holding on all of MNIST
    (``docs/benchmarks/gpu.md``). PCG reads only ``shape``, ``dtype``,
    ``float64_products`` and the products (:func:`semisup.lapsvm.pcg.pcg`)."""

    def __init__(self, K):
        self.K, self.shape, self.dtype = K, K.shape, K.dtype
        self.float64_products = K.dtype == np.float32
        self._xp = array_modules(K)[0]

    def __matmul__(self, V):
        if self.float64_products:
            return product_f64(self.K, V)
        if V.ndim == 1:
            return V @ self.K
        return (self._xp.ascontiguousarray(V.T) @ self.K).T


def _solve_full(est, K, apply_L, Y, unlabeled, K_val, Y_val, names, solver):
    """:func:`~semisup.lapsvm.pcg.pcg` on the device arrays with the estimator's rules, to
    the minimiser (``solver="minimiser"``), or Newton's dense solves (``"direct"``; PCG to
    the minimiser where its system is singular)."""
    common = dict(gamma_A=est.gamma_A, gamma_I=est.gamma_I, use_bias=est.use_bias,
                  hinge=est._hinge)
    if solver == "direct":
        res = _direct(K.K, apply_L, Y, max_iter=1 if not est._hinge else (
            50 if est.max_iter is None else est.max_iter), **common)
        if res is not None:
            return res
        solver = "minimiser"
    common.update(refresh_every=est.refresh_every, verbose=est.verbose)
    if solver == "minimiser":
        tol = MINIMISER_TOL[np.dtype(K.dtype).name] if est.stop_tol is None else est.stop_tol
        return pcg(K, apply_L, Y, stopping=[make_rule("mixed_grad", tol=tol)],
                   max_iter=MINIMISER_MAX_ITER if est.max_iter is None else est.max_iter,
                   _advice=f"the relative gradient norm fell below stop_tol={tol:g} "
                           "(solver='auto' runs PCG to the minimiser on the device up to "
                           f"{AUTO_DIRECT_N} points where it cannot solve directly); raise "
                           "max_iter or loosen stop_tol.",
                   **common)
    rules = est._rules(names, unlabeled, Y_val, Y.shape[1] if Y.ndim == 2 else 1)
    return pcg(K, apply_L, Y, stopping=rules, K_val=K_val,
               max_iter=1000 if est.max_iter is None else est.max_iter,
               _advice=est._pcg_advice(rules), **common)


def _check_direct_memory(est, xp, n):
    """Refuse a direct solve whose kernel and Newton system (``est._direct_workspace``)
    would not fit in the free device memory, before the graph and the kernel are built."""
    check_free_memory(xp, float(n) * n * np.dtype(est.kernel_dtype).itemsize
                      + est._direct_workspace(n),
                      f"{type(est).__name__}'s direct solve on n={n} points (the kernel and "
                      "the Newton system)", "Use solver='pcg', which needs only the kernel.")


def _direct(K, apply_L, Y, *, gamma_A, gamma_I, use_bias, hinge, max_iter):
    """Newton's method (eq. 10; LapRLS's eq. 14 is its single step) on the device: the
    host's :func:`~semisup.lapsvm.newton.newton` with one dense solve
    (``xp.linalg.solve``, LU) per step and group of columns sharing an error set, in
    place of its Woodbury updates; ``L K`` formed once, the kernel widened to float64
    (memory: :func:`_check_direct_memory`, before the fit). ``None`` where a solve is not
    finite (an exactly singular system): the caller then
    runs PCG to the minimiser."""
    xp = array_modules(K)[0]
    squeeze = Y.ndim == 1
    Y2 = Y[:, None] if squeeze else Y
    n, c = Y2.shape
    off = int(use_bias)
    Kd = K.astype(xp.float64, copy=False)
    LK = apply_L(Kd)
    L1 = apply_L(xp.ones(n)) if use_bias else None
    A, B = _start(None, None, n, c, use_bias, xp)
    run = _NewtonSteps(to_host(Y2), hinge, max_iter, None, squeeze)
    for t in range(max_iter + 1):
        F = Kd @ A + B
        E, groups = run.groups(t, to_host(F), A, B)
        if not groups:
            break
        for cols in groups:
            Ej, cx = E[:, cols[0]], xp.asarray(cols)
            rhs = xp.where(xp.asarray(Ej)[:, None], Y2[:, cx], 0.0)
            if use_bias:
                rhs = xp.vstack([xp.zeros((1, len(cols))), rhs])
            try:
                Z = xp.linalg.solve(
                    _newton_matrix(Kd, LK, L1, Ej, gamma_A, gamma_I, use_bias), rhs)
            except np.linalg.LinAlgError:   # numpy's exactly singular system (CuPy: NaN)
                return None
            if not bool(xp.isfinite(Z).all()):
                return None
            A[:, cx] = Z[off:]
            if use_bias:
                B[cx] = Z[0]
        run.hist["obj"].append(objective(Kd, apply_L, Y2[:, 0], A[:, 0],
                                         B[0] if use_bias else None, gamma_A=gamma_A,
                                         gamma_I=gamma_I, hinge=hinge))
    return run.result(A, B, F, "raise max_iter.")


def _laplacian(est, W):
    """``V -> L^p V`` on the device (:func:`semisup.linalg.xp.laplacian_apply`,
    applied ``laplacian_power`` times; never formed)."""
    apply = laplacian_apply(W, est.laplacian)
    power = int(est.laplacian_power)
    if power == 1:
        return apply

    def apply_power(V):
        for _ in range(power):
            V = apply(V)
        return V
    return apply_power


def _validation_targets(est, engine, X_val, y_val):
    """``(K_val, Y_val)``: the kernel of the validation points to the training points on
    the device (``kernel_dtype``) and their one-vs-all targets on the host, or ``None``s."""
    if X_val is None and y_val is None:
        return None, None
    if X_val is None or y_val is None:
        raise ValueError("pass both X_val and y_val, or neither.")
    Xv = engine.check_query_points(est, est._for_engine(X_val, engine))
    Y_val = est._validation_labels(y_val, Xv.shape[0])
    K_val = engine.kernel(Xv, est.X_fit_, "rbf", dtype=np.dtype(est.kernel_dtype).name,
                          sigma=est.kernel_sigma_)
    return K_val, Y_val


def fitted_on_device(est) -> bool:
    """Whether ``est`` was fitted by :func:`fit` (its arrays off the host)."""
    return not est._engine().host_arrays


def labels(est, f):
    """Class labels of decision values ``f`` where they live (``sign`` or the argmax)."""
    engine = est._engine()
    xp = engine.xp
    index = (f >= 0).astype(xp.int64) if f.ndim == 1 else xp.argmax(f, axis=1)
    return engine.take_labels(est.classes_, index)


def decision_function(est, X):
    """``f(x) = sum_i alpha_i k(x_i, x) + b`` of new points on the fitted engine, in
    blocks of query rows (kernel rows in float64 whatever ``kernel_dtype``: they are
    small); the answer in the input's type."""
    check_is_fitted(est, "alpha_")
    engine = est._engine()
    xp = engine.xp
    Xq = engine.check_query_points(est, est._for_engine(X, engine))
    n = est.X_fit_.shape[0]
    m = Xq.shape[0]
    step = int(max(1, _QUERY_BLOCK_BYTES // (8 * max(n, 1))))
    out = xp.empty((m,) + tuple(est.alpha_.shape[1:]))
    for lo in range(0, m, step):
        Kx = engine.kernel(Xq[lo:lo + step], est.X_fit_, "rbf", dtype=np.float64,
                           sigma=est.kernel_sigma_)
        out[lo:lo + step] = Kx @ est.alpha_ + est.intercept_
    return est._in_input_type(out, X)


# -- the reduced expansion ---------------------------------------------------------------------

#: working memory of a block of feature rows (their float64 kernel rows to the basis)
_FEATURE_BLOCK_BYTES = 2 ** 28


def _prepare(est, X, y, W, engine):
    """The device fit's common start: labels checked, the graph built (or validated) where
    ``X`` lives. Returns ``(X, W, y, classes, labeled)``."""
    name = type(est).__name__
    if est.affinity == "precomputed" and W is None:
        raise ValueError("affinity='precomputed' needs the graph: fit(X, y, W=W).")
    if est.affinity != "precomputed" and W is not None:
        raise ValueError(f"W is ignored unless affinity='precomputed' (here affinity="
                         f"{est.affinity!r} builds the graph from X); pass "
                         "affinity='precomputed' to use W, or drop W.")
    if est.affinity == "precomputed":
        W, _ = est._fit_graph(W, name="W")
        X = engine.check_points(est, X)
        if W.shape[0] != X.shape[0]:
            raise ValueError(f"W has shape {W.shape} but X has {X.shape[0]} samples.")
        est._graph_state = (engine.name, None)
    else:
        W, X = est._fit_graph(X, engine=engine)
    y, classes, labeled = check_semisup_labels(y, X.shape[0], estimator=name)
    return X, W, y, classes, labeled


def _features(X, Xb, T, sigma, dtype):
    """``Phi = K(X, B) T`` (n x r, ``dtype``) in row blocks: each block's kernel rows in
    float64 and their product by ``T`` in float64, as the host's
    :func:`~semisup.kernels.make_kernel` (``transform=T``); the n x m kernel is never held."""
    xp, _ = array_modules(X)
    n, m = X.shape[0], Xb.shape[0]
    Phi = xp.empty((n, T.shape[1]), dtype=dtype)
    step = int(max(1, _FEATURE_BLOCK_BYTES // (8 * max(m, 1))))
    for lo in range(0, n, step):
        Kb = rbf_kernel(X[lo:lo + step], sigma, Y=Xb, dtype="float64")
        Phi[lo:lo + step] = (Kb @ T).astype(dtype)
    return Phi


def _reduced_bytes(n, m, itemsize):
    """The reduced fit's device memory: the n x m features, the n x 256 float64 blocks of
    their Laplacian Gram and the m x m systems."""
    return float(n) * m * itemsize + 24.0 * n * gram_block(n) + 3.0 * (m + 1) ** 2 * 8


def _fit_reduced(est, engine, X, apply_L, Y, labeled, names, t0, m):
    """The reduced expansion over ``m`` basis points (:func:`_basis_size`), where ``X`` lives
    (the host's :meth:`~semisup.lapsvm.estimator._LaplacianKernelClassifier._fit_reduced`).
    Returns the solver's result and ``alpha`` (the basis' coefficients).

    The basis indices are drawn on the host (uniformly, by ``random_state``: those of the
    host fit), the basis points gathered on the device; ``K_BB``'s eigendecomposition gives
    ``T`` (:func:`~semisup.lapsvm.reduced.basis_transform`), the features ``Phi = K_nB T``
    are computed in row blocks, and :func:`~semisup.lapsvm.reduced.reduced_newton` (LapSVM's
    Newton, LapRLS's closed form) or :func:`~semisup.lapsvm.reduced.reduced_pcg` solves
    there. The model keeps the basis points (``X_fit_``, on the device) and
    ``alpha_ = T beta``: a prediction costs ``m`` kernel values per point.
    """
    name = type(est).__name__
    xp = engine.xp
    n = X.shape[0]
    solver = est._solver_for(m, n)
    dtype = np.dtype(est.kernel_dtype)
    check_free_memory(xp, _reduced_bytes(n, m, dtype.itemsize),
                      f"{name}(n_basis={m}) on n={n} points (the {n}x{m} kernel features)",
                      "Use a smaller n_basis" + ("" if dtype == np.float32 else
                                                 " or kernel_dtype='float32'") + ".")
    sigma = est.kernel_sigma_
    idx = select_basis(X, m, "uniform", random_state=est.random_state)   # host indices
    Xb = X[xp.asarray(idx)]
    T = basis_transform(rbf_kernel(Xb, sigma, dtype="float64"))
    Phi = _features(X, Xb, T, sigma, dtype)
    est.X_fit_ = Xb                  # the basis: predictions need it only
    est.basis_indices_ = idx
    est.n_basis_ = m
    est._graph_state = (engine.name, None)   # the training points are never queried
    est.setup_time_ = time.perf_counter() - t0
    t0 = time.perf_counter()
    common = dict(gamma_A=est.gamma_A, gamma_I=est.gamma_I, use_bias=est.use_bias,
                  hinge=est._hinge)
    if solver in ("newton", "closed_form"):
        res = reduced_newton(Phi, apply_L, Y, max_iter=1 if not est._hinge else (
            50 if est.max_iter is None else est.max_iter), _advice="raise max_iter.",
            **common)
    else:
        rules = est._rules(names, ~labeled, None, 1 if Y.ndim == 1 else Y.shape[1])
        res = reduced_pcg(Phi, apply_L, Y,
                          max_iter=1000 if est.max_iter is None else est.max_iter,
                          stopping=rules, refresh_every=est.refresh_every,
                          verbose=est.verbose, _advice=est._pcg_advice(rules), **common)
    del Phi
    est.fit_time_ = time.perf_counter() - t0
    return res, T @ res.alpha
