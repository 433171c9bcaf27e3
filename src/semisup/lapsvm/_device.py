"""LapRLS with the full kernel on an engine that keeps its arrays off the host (a GPU).

A CuPy ``X`` (or a CuPy / ``cupyx`` affinity ``W``) picks the engine of its type
(:func:`semisup.engines.engine_for`); when that engine provides ``laprls_fit``
(:meth:`semisup.engines.cupy.CupyEngine.laprls_fit`), :meth:`LapRLS.fit` hands the fit to
:func:`fit`: the graph is built, the RBF kernel held and the primal system solved by linear
PCG where ``X`` lives, and the coefficients stay there. The estimator's host path is left
untouched; the settings this path cannot honour are refused with an error naming the
parameter.

What it solves: the LapRLS problem of :class:`semisup.LapRLS` (Melacci & Belkin 2011,
eq. 14) with the full RBF kernel (``n_basis="auto"`` keeps every point: the device holds
the kernel), ``laplacian_power=1``, to the relative tolerance ``stop_tol`` (default
``1e-6``) of the preconditioned gradient norm, or ``max_iter`` iterations (default 1000),
without early stopping: the minimiser, as ``solver="auto"`` gives on the host.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._validation import check_semisup_labels, warn_convergence
from ..engines import engine_for
from ..graph.degeneracy import warn_if_flat
from ..kernels import scale_sigma

__all__ = ["on_device", "fit", "decision_function"]

#: default relative tolerance of the device PCG (``stop_tol=None``)
DEFAULT_TOL = 1e-6
#: working memory of a block of query rows in the decision function (float64 kernel rows)
_QUERY_BLOCK_BYTES = 2 ** 29


def on_device(engine) -> bool:
    """Whether the fit's ``engine`` (of ``X`` and ``W``, looked up once by the estimator:
    :func:`semisup.engines.engine_for_types`) keeps its arrays off the host."""
    return not engine.host_arrays


def _refuse_unsupported(est, engine, X_val):
    name, where = type(est).__name__, f"on the {engine.name} engine"
    if getattr(engine, "laprls_fit", None) is None or est._hinge:
        raise ValueError(f"{name} has no fit {where} (only LapRLS with the full kernel "
                         "runs there); pass X in memory (e.g. cupy.asnumpy(X)).")
    # solver="auto" is the minimiser on the host (a direct solve); here PCG run to stop_tol
    # gives it, so the default early_stopping (which applies to solver="pcg") is not used
    checks = [("kernel", est.kernel == "rbf", "use kernel='rbf'"),
              ("solver", est.solver in ("auto", "pcg"), "use solver='auto' or 'pcg'"),
              ("n_basis", est.n_basis in ("auto", None),
               "the device holds the full kernel; use n_basis='auto' or None"),
              ("laplacian_power", est.laplacian_power == 1, "use laplacian_power=1"),
              ("early_stopping", est.solver == "auto" or est.early_stopping is None,
               "its PCG runs to stop_tol; pass early_stopping=None or solver='auto'"),
              ("warm_start", not est.warm_start, "use warm_start=False"),
              ("keep_path", not est.keep_path, "use keep_path=False")]
    for param, ok, advice in checks:
        if not ok:
            raise ValueError(f"{name}({param}={getattr(est, param)!r}) is not available "
                             f"{where}: {advice}, or pass X in memory.")
    if X_val is not None:
        raise ValueError(f"{name}: a validation set (X_val) is not available {where}; "
                         "pass early_stopping=None and no X_val.")


def fit(est, X, y, *, W=None, X_val=None, y_val=None, engine=None):
    """:meth:`LapRLS.fit` where ``X`` lives (see the module docstring), on ``engine`` (of
    ``X`` and ``W``; looked up if not given). Returns ``est``."""
    name = type(est).__name__
    engine = engine_for(X, W) if engine is None else engine
    _refuse_unsupported(est, engine, X_val)
    y = check_semisup_labels(est._host_labels(y), estimator=name)[0]
    if est.affinity == "precomputed" and W is None:
        raise ValueError("affinity='precomputed' needs the graph: fit(X, y, W=W).")
    if est.affinity != "precomputed" and W is not None:
        raise ValueError(f"W is ignored unless affinity='precomputed' (here affinity="
                         f"{est.affinity!r} builds the graph from X); pass "
                         "affinity='precomputed' to use W, or drop W.")
    t0 = time.perf_counter()
    if est.affinity == "precomputed":
        W, _ = est._fit_graph(W, name="W")
        X = engine.check_points(est, X)
        if W.shape[0] != X.shape[0]:
            raise ValueError(f"W has shape {W.shape} but X has {X.shape[0]} samples.")
        # the model lives on the device of X (W, if validated in memory, is moved there)
        est._graph_state = (engine.name, None)
    else:
        W, X = est._fit_graph(X, engine=engine)
    n = X.shape[0]
    y, classes, labeled = check_semisup_labels(y, n, estimator=name)
    est.classes_ = classes
    est.X_fit_ = X
    est.kernel_sigma_ = (scale_sigma(X) if est.kernel_sigma == "scale"
                         else float(est.kernel_sigma))
    Y = est._encode(y, classes, labeled)
    est.setup_time_ = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = engine.laprls_fit(X, Y, W, kernel_sigma=est.kernel_sigma_, gamma_A=est.gamma_A,
                            gamma_I=est.gamma_I, laplacian=est.laplacian,
                            use_bias=est.use_bias, kernel_dtype=np.dtype(est.kernel_dtype).name,
                            tol=DEFAULT_TOL if est.stop_tol is None else est.stop_tol,
                            max_iter=1000 if est.max_iter is None else est.max_iter)
    est.fit_time_ = time.perf_counter() - t0
    if not res.converged:
        warn_convergence(f"{name}: PCG stopped after {res.n_iter} iterations before reaching "
                         "stop_tol on the device; raise max_iter or loosen stop_tol.")
    est.alpha_ = res.alpha
    est.intercept_ = res.b
    est.n_iter_ = int(res.n_iter)
    est.n_iter_per_class_ = np.array([est.n_iter_])
    est.converged_ = bool(res.converged)
    est.stop_reason_ = "converged" if res.converged else "max_iter"
    est.history_ = {}
    est.transduction_ = labels(est, res.decision)
    warn_if_flat(res.decision.reshape(n, -1), labeled, name)
    return est


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
