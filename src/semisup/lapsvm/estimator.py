"""Scikit-learn estimators ``LapSVM`` and ``LapRLS`` (Melacci & Belkin 2011).

Both minimise, over ``f(x) = sum_i alpha_i k(x_i, x) + b`` on all n training points,

    1/2 ( sum_{labelled} loss(y_i, f_i) + gamma_A alpha^T K alpha + gamma_I f^T L^p f )

with the squared hinge ``max(0, 1 - y f)^2`` (LapSVM, eq. 7) or the squared loss (LapRLS,
eq. 14). Multi-class problems are solved one-vs-all, the binary problems sharing one kernel
matrix and one Laplacian (and, with PCG, every kernel product).
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_array
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import _num_samples, check_is_fitted

from .._base import SemiSupervisedMixin, _fit_context, _store_init_params
from .._validation import _fmt_bytes, check_semisup_labels
from ..graph import laplacian
from ..graph.degeneracy import warn_if_flat
from ..graph.frontend import GRAPH_PARAMETER_CONSTRAINTS, GraphMixin
from ..engines import engine_for_types
from ..kernels import check_kernel_memory, make_kernel, scale_sigma
from . import _device
from .dual import dual_lapsvm
from .newton import newton
from .objective import laplacian_operator
from .pcg import pcg
from .reduced import (AUTO_DIRECT_N, AUTO_FULL_N, AUTO_MEMORY_SHARE, BASES, auto_n_basis,
                      basis_transform, feature_budget, gram_block, reduced_newton,
                      reduced_pcg, select_basis)
from .stopping import RULES, make_rule

__all__ = ["LapSVM", "LapRLS"]


def _gather_rows(X, idx):
    """Rows ``X[idx]`` in memory (numpy or CSR), whatever array ``X`` is (a dask one is
    computed: the m basis points are small)."""
    rows = X[idx]
    return rows if hasattr(rows, "tocsr") else np.asarray(rows, dtype=np.float64)

_KERNELS = ("rbf", "polynomial", "linear", "precomputed")


class _LaplacianKernelClassifier(SemiSupervisedMixin, GraphMixin, ClassifierMixin,
                                 BaseEstimator):
    """Shared machinery: kernel, graph, label coding, validation set, prediction."""

    _device_fit = True     # a CuPy X: graph, kernel and solver on the device (lapsvm/_device.py)

    _parameter_constraints = {
        **GRAPH_PARAMETER_CONSTRAINTS,
        "gamma_A": [Interval(Real, 0, None, closed="left")],
        "gamma_I": [Interval(Real, 0, None, closed="left")],
        "kernel": [StrOptions(set(_KERNELS))],
        "kernel_sigma": [Interval(Real, 0, None, closed="neither"), StrOptions({"scale"})],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "laplacian": [StrOptions({"normalized", "unnormalized"})],
        "laplacian_power": [Interval(Integral, 1, None, closed="left")],
        "use_bias": ["boolean"],
        "early_stopping": [StrOptions(set(RULES)), list, tuple, None],
        "stop_tol": [Interval(Real, 0, None, closed="neither"), None],
        "stop_every": [Interval(Integral, 1, None, closed="left"), None],
        "joint_stopping": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "refresh_every": [Interval(Integral, 1, None, closed="left"), None],
        "kernel_dtype": [StrOptions({"float64", "float32"}),
                         Options(type, {np.float64, np.float32})],
        "warm_start": ["boolean"],
        "keep_path": ["boolean"],
        "verbose": ["verbose"],
        "n_basis": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "basis": [StrOptions(set(BASES))],
    }

    # One signature for LapSVM and LapRLS (scikit-learn reads it for get_params).
    def __init__(self, gamma_A=1e-6, gamma_I=0.1, *, kernel="rbf", kernel_sigma="scale",
                 degree=3, coef0=0.0, affinity="knn", n_neighbors=10, weights="heat",
                 graph_sigma=None, threshold=None, metric="euclidean", knn_method="auto",
                 n_jobs=None, random_state=None, laplacian="normalized", laplacian_power=1,
                 use_bias=False, solver="auto", early_stopping="stability", stop_tol=None,
                 stop_every=None, joint_stopping=True, max_iter=None, refresh_every=50,
                 kernel_dtype="float64", warm_start=False, keep_path=False, verbose=False,
                 n_basis="auto", basis="uniform"):
        _store_init_params(self, locals())

    _hinge = True

    # -- building blocks -------------------------------------------------------------------
    def _rule_names(self):
        if self.early_stopping is None:
            return []
        names = ([self.early_stopping] if isinstance(self.early_stopping, str)
                 else list(self.early_stopping))
        bad = [nm for nm in names if nm not in RULES]
        if bad or not names:
            raise ValueError(f"early_stopping must be None, one of {RULES} or a non-empty "
                             f"list of them, got {self.early_stopping!r}.")
        return names

    def _kernel(self, X, Y=None, *, training=None, dtype=None, engine=None):
        """``(K, sigma)`` from the one kernel entry point (:func:`~semisup.kernels.make_kernel`:
        width, dtype, dense / sparse / precomputed / dask, its checks); ``engine``: the fit's,
        when known."""
        return make_kernel(X, Y, kernel=self.kernel,
                           sigma=self.kernel_sigma if Y is None else self.kernel_sigma_,
                           degree=self.degree, coef0=self.coef0,
                           dtype=self.kernel_dtype if dtype is None else dtype,
                           training=training, random_state=self.random_state,
                           owner=type(self).__name__, checked=True, engine=engine)

    def _prediction_kernel(self, X):
        """The kernel between new points and the training points (a precomputed one in
        float64, as the coefficients)."""
        return self._kernel(self._validate_points(X, reset=False), self.X_fit_,
                            training=False,
                            dtype=np.float64 if self.kernel == "precomputed" else None)[0]

    def _basis_size(self, n, engine=None):
        """``m`` of the reduced expansion, or ``None`` for the full one.

        ``n_basis="auto"`` is the full expansion where it is the natural one: a precomputed
        kernel (its columns are the training points), the dual solver, and where
        :meth:`_direct_full` solves it directly (there faster than the reduced model and
        as accurate or more); otherwise
        :func:`~semisup.lapsvm.reduced.auto_n_basis` (``min(n, clip(sqrt(W / n), 1000,
        4000))``, shrunk with a warning where its features would not fit).
        """
        if self.n_basis is None:
            return None
        if self.kernel == "precomputed":
            if self.n_basis == "auto":
                return None
            raise ValueError("n_basis needs the kernel computed from points; with "
                             "kernel='precomputed' use n_basis=None (or 'auto').")
        if self.n_basis != "auto":
            return min(int(self.n_basis), n)
        if self.solver == "dual" or self._direct_full(n):
            return None
        itemsize, budget = np.dtype(self.kernel_dtype).itemsize, feature_budget()
        m, wanted = auto_n_basis(n, itemsize, budget), auto_n_basis(n)
        if m < wanted:
            warnings.warn(
                f"n_basis='auto': {wanted} basis points on {n} points need "
                f"{_fmt_bytes(float(n) * wanted * itemsize)} of kernel features, more than "
                f"{AUTO_MEMORY_SHARE:.0%} of the available memory; using n_basis={m}"
                + ("" if itemsize == 4 else " (kernel_dtype='float32' halves the features)")
                + ". Set n_basis to choose.", UserWarning, stacklevel=3)
        return m

    def _direct_full(self, n):
        """Whether ``solver="auto"`` solves the full expansion of ``n`` points directly: up
        to 2000 points, and up to :data:`~.reduced.AUTO_FULL_N` (8000) where the kernel and
        the direct solve's float64 workspace take at most half of the available memory."""
        if n <= AUTO_DIRECT_N:
            return True
        kernel = float(n) * n * np.dtype(self.kernel_dtype).itemsize
        return n <= AUTO_FULL_N and kernel + self._direct_workspace(n) <= feature_budget()

    def _direct_workspace(self, n):
        """Bytes a direct solve adds to the kernel: its float64 copy (if float32), ``L K``,
        and the ``(n+1)^2`` system and its factors."""
        return 3.0 * (n + 1) ** 2 * 8 + (
            float(n) * n * 8 if np.dtype(self.kernel_dtype) != np.float64 else 0.0)

    def _solver_for(self, m, n):
        """The solver ``solver`` names: ``"auto"`` is the direct solve (the minimiser, which
        does not depend on an iteration path, hence neither on the BLAS threads nor on the
        engine) with a reduced expansion or where :meth:`_direct_full` holds, PCG above."""
        if self.solver == "dual" and m is not None:
            raise ValueError("solver='dual' trains the full expansion only: use "
                             "n_basis=None, or another solver.")
        if self.solver != "auto":
            return self.solver
        if m is None and not self._direct_full(n):
            return "pcg"
        return "newton" if self._hinge else "closed_form"

    def _check_solver_memory(self, n, m=None, solver="pcg"):
        """Refuse before building anything (graph, kernel) when the kernel plus the solver's
        dense float64 workspace cannot fit (Newton and the dual form ``L K`` and factorise
        an n x n matrix in float64, whatever ``kernel_dtype``); for a reduced expansion,
        the n x m features and the m x m systems."""
        dtype = np.dtype(self.kernel_dtype)
        if m is not None:
            check_kernel_memory(n, m, dtype=dtype, workspace=3.0 * (m + 1) ** 2 * 8
                                + 24.0 * n * gram_block(n), what=(
                                    f"{type(self).__name__}(n_basis={m}) on n={n} points "
                                    f"(the {n}x{m} kernel features)"), hint=(
                                    "Use a smaller n_basis" + (
                                        "" if dtype == np.float32 else
                                        " or kernel_dtype='float32'") + "."))
            return
        if solver == "pcg":
            if self.kernel != "precomputed":  # (a sparse precomputed K: when densified)
                check_kernel_memory(n, dtype=dtype, hint=(
                    ("" if dtype == np.float32 else "Use kernel_dtype='float32' to halve "
                     "it. ") + f"{type(self).__name__} needs the n x n kernel in memory: "
                    "use fewer unlabeled points, or a sparse precomputed kernel."))
            return
        kernel_bytes = float(n) * n * dtype.itemsize
        check_kernel_memory(n, dtype=dtype, workspace=self._direct_workspace(n), what=(
            f"{type(self).__name__}(solver={solver!r}) on n={n} points (the kernel and "
            "an O(n^2) float64 workspace)"), hint=(
            f"Use solver='pcg', which needs only the kernel ({_fmt_bytes(kernel_bytes)}"
            + ("" if dtype == np.float32 else
               f"; {_fmt_bytes(kernel_bytes / 2)} with kernel_dtype='float32'") + ")."))

    def _fit_reduced(self, X, m, solver, apply_L, Y, labeled, X_val, y_val, names, prev,
                     record, t0):
        """Fit the reduced expansion over ``m`` basis points (:mod:`~.reduced`): choose ``B``,
        factor ``K_BB``, compute the features ``Phi = K_nB T`` in row blocks (on the workers
        for a dask ``X``), solve for ``beta``, keep ``alpha = T beta`` and ``B`` only."""
        # the width from all the training points, as the full expansion's
        sigma = scale_sigma(X) if self.kernel_sigma == "scale" else float(self.kernel_sigma)
        kw = dict(kernel=self.kernel, sigma=sigma, degree=self.degree, coef0=self.coef0,
                  owner=type(self).__name__)

        def features(points, T):
            return make_kernel(X, points, dtype=self.kernel_dtype, training=False,
                               transform=T, **kw)[0]

        def pilot_features(idx):
            Xp = _gather_rows(X, idx)
            return features(Xp, basis_transform(make_kernel(Xp, **kw)[0]))

        idx = select_basis(X, m, self.basis, random_state=self.random_state,
                           features=pilot_features)
        Xb = _gather_rows(X, idx)
        K_BB = make_kernel(Xb, **kw)[0]
        T = basis_transform(K_BB)
        Phi = features(Xb, T)
        self.kernel_sigma_ = sigma
        self.X_fit_ = Xb                       # the basis: predictions need it only
        self.basis_indices_ = idx
        self._graph_state = None               # (the training points: never queried)
        K_val, Y_val = self._validation_targets(X_val, y_val, Xb.shape[1])
        Phi_val = None if K_val is None else np.asarray(K_val, dtype=np.float64) @ T
        self.setup_time_ = time.perf_counter() - t0
        t0 = time.perf_counter()
        warm = {}
        if prev is not None and prev[2] is not None and np.array_equal(prev[2], idx):
            # alpha = T beta and T^T K_BB T = I: beta = T^T K_BB alpha
            warm = dict(beta0=T.T @ (K_BB @ prev[0]), b0=prev[1])
        callback = None if record is None else (
            lambda t, beta, b, F: record(t, T @ beta, b, F))
        common = dict(gamma_A=self.gamma_A, gamma_I=self.gamma_I, use_bias=self.use_bias,
                      hinge=self._hinge, callback=callback, **warm)
        if solver in ("newton", "closed_form"):
            res = reduced_newton(Phi, apply_L, Y, max_iter=1 if not self._hinge else (
                50 if self.max_iter is None else self.max_iter),
                _advice="raise max_iter.", **common)
        else:
            rules = self._rules(names, ~labeled, Y_val, 1 if Y.ndim == 1 else Y.shape[1])
            res = reduced_pcg(Phi, apply_L, Y,
                              max_iter=1000 if self.max_iter is None else self.max_iter,
                              stopping=rules, refresh_every=self.refresh_every,
                              Phi_val=Phi_val, verbose=self.verbose,
                              _advice=self._pcg_advice(rules), **common)
        res.alpha = T @ res.alpha
        self.fit_time_ = time.perf_counter() - t0
        return res

    def _validation_targets(self, X_val, y_val, n_features):
        if X_val is None and y_val is None:
            return None, None
        if X_val is None or y_val is None:
            raise ValueError("pass both X_val and y_val, or neither.")
        X_val = check_array(X_val, accept_sparse="csr", dtype=[np.float64, np.float32],
                            input_name="X_val")
        if X_val.shape[1] != n_features:
            raise ValueError(f"X_val has {X_val.shape[1]} columns but X has {n_features}.")
        Y_val = self._validation_labels(y_val, X_val.shape[0])
        return self._kernel(X_val, self.X_fit_, training=False)[0], Y_val

    def _validation_labels(self, y_val, n_rows):
        """The one-vs-all targets of ``y_val`` (on the host, whatever its array type): one
        label per validation row, each among the training classes."""
        y_val = np.asarray(self._host_labels(y_val))
        if y_val.ndim != 1 or y_val.shape[0] != n_rows:
            raise ValueError(f"X_val has {n_rows} rows but y_val has shape {y_val.shape}.")
        unknown = np.setdiff1d(np.unique(y_val), self.classes_)
        if unknown.size:
            raise ValueError(f"y_val has labels {unknown.tolist()} that are not among the "
                             f"training classes {self.classes_.tolist()}.")
        return self._encode(y_val, self.classes_)

    @staticmethod
    def _encode(y, classes, labeled=None):
        """One-vs-all targets: +1 / -1 on labelled points, 0 on unlabelled ones."""
        lab = np.ones(y.shape[0], dtype=bool) if labeled is None else labeled
        if classes.size == 2:
            out = np.zeros(y.shape[0])
            out[lab] = np.where(y[lab] == classes[1], 1.0, -1.0)
            return out
        out = np.zeros((y.shape[0], classes.size))
        for j, cl in enumerate(classes):
            out[lab, j] = np.where(y[lab] == cl, 1.0, -1.0)
        return out

    def _rules(self, names, unlabeled, Y_val, n_cols):
        if not names:
            return []
        if not unlabeled.any() and any(nm in ("stability", "mixed") for nm in names):
            warnings.warn("every training point is labelled, so the stability check cannot "
                          "run; it is ignored (PCG runs until convergence or max_iter).",
                          UserWarning, stacklevel=5)
            names = [nm for nm in names if nm != "stability"]
            names = ["validation" if nm == "mixed" else nm for nm in names]
        groups = [None] if (self.joint_stopping or n_cols == 1) else [[j] for j in range(n_cols)]
        return [make_rule(name, unlabeled=unlabeled, Y_val=Y_val, tol=self.stop_tol,
                          columns=g, every=self.stop_every)
                for name in names for g in groups]

    def _pcg_advice(self, rules):
        """The max_iter warning's advice, consistent with the stopping settings in use."""
        if not rules:
            return ("the line search returned 0 (early_stopping=None); raise max_iter, or "
                    "stop early with early_stopping='stability' (the paper's rule).")
        names = sorted({rule.name for rule in rules})
        advice = (f"any stopping condition held (early_stopping={self.early_stopping!r}); "
                  "raise max_iter")
        if any(nm in ("grad", "pgrad", "mixed_grad", "obj") for nm in names):
            advice += ", or loosen stop_tol"
        if any(nm in ("stability", "validation", "mixed") for nm in names):
            advice += ", or check less often (a larger stop_every)"
        return advice + "."

    def _path_recorder(self):
        """``(path, callback)``: the solvers' per-iteration callback filling ``path`` with
        copies of ``alpha``, ``b`` and ``F = K alpha + b`` (``keep_path``), or
        ``(None, None)``."""
        if not self.keep_path:
            return None, None
        path = {"alpha": [], "intercept": [], "scores": []}

        def record(t, alpha, b, F):
            path["alpha"].append(np.array(alpha, dtype=np.float64, copy=True))
            path["intercept"].append(float(b) if np.ndim(b) == 0
                                     else np.array(b, dtype=np.float64, copy=True))
            path["scores"].append(np.array(F[:, 0] if np.ndim(alpha) == 1 else F,
                                           dtype=np.float64, copy=True))
        return path, record

    def _staged_path(self):
        check_is_fitted(self, "alpha_")
        if "alpha" not in self.history_:
            raise ValueError(f"{type(self).__name__} was fitted with keep_path=False: refit "
                             "with keep_path=True to record the iterates.")
        return zip(self.history_["alpha"], self.history_["intercept"])

    def _labels(self, f):
        if not isinstance(f, np.ndarray):         # decision values on a device
            return _device.labels(self, f)
        if f.ndim == 1:
            return self.classes_[(f >= 0).astype(int)]
        return self.classes_[np.argmax(f, axis=1)]

    # -- public API ------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, W=None, X_val=None, y_val=None):
        """Fit on labelled and unlabelled points.

        Parameters
        ----------
        X : array-like or sparse of shape (n_samples, n_features)
            Training points, or the ``(n, n)`` training kernel if ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels of any type, ``-1`` for unlabelled points.
        W : sparse or dense (n, n), optional
            The graph's affinity matrix; only with ``affinity="precomputed"`` (required
            then, and refused otherwise: the other affinities build the graph from ``X``).
        X_val, y_val : optional
            Validation set (labels among the training classes), used by the
            ``"validation"`` and ``"mixed"`` stopping rules. With ``kernel="precomputed"``,
            ``X_val`` is the (m, n) kernel to the training points.

        Returns
        -------
        self
        """
        engine = engine_for_types(type(X), type(W))    # once per fit: the types decide
        if _device.on_device(engine):      # e.g. a CuPy X: the fit where X lives
            return _device.fit(self, X, y, W=W, X_val=X_val, y_val=y_val, engine=engine)
        name = type(self).__name__
        y = check_semisup_labels(y, estimator=name)[0]  # before any O(n^2) work
        names = self._rule_names()
        try:
            n_samples = _num_samples(X)
        except TypeError:
            n_samples = None              # not array-like: validation explains below
        m = self._basis_size(n_samples, engine) if n_samples else None
        solver = self._solver_for(m, n_samples or 0)
        needs_val = [nm for nm in names if nm in ("validation", "mixed")]
        if needs_val and X_val is None and solver == "pcg":
            raise ValueError(f"early_stopping={needs_val[0]!r} needs a validation set "
                             "(fit(..., X_val=..., y_val=...)).")
        if self.solver == "dual" and not self.gamma_A > 0:
            raise ValueError("solver='dual' needs gamma_A > 0: its matrix "
                             "G = 2 gamma_A I + 2 gamma_I L K is singular with gamma_A=0 "
                             "(L 1 = 0). Use a positive gamma_A, or solver='newton' / 'pcg'.")
        if self.affinity == "precomputed":
            if W is None:
                raise ValueError("affinity='precomputed' needs the graph: fit(X, y, W=W).")
        else:
            if W is not None:
                raise ValueError(f"W is ignored unless affinity='precomputed' (here "
                                 f"affinity={self.affinity!r} builds the graph from X); "
                                 "pass affinity='precomputed' to use W, or drop W.")
            if self.kernel == "precomputed":
                raise ValueError("with kernel='precomputed' the graph cannot be built from X; "
                                 "pass affinity='precomputed' and fit(K, y, W=W).")
        if engine.name == "dask":  # the kernel as row blocks on the workers: K @ V only
            if m is None and solver not in ("pcg", "closed_form", "newton"):
                raise ValueError(f"a dask array X needs solver='pcg' (or a direct one) with "
                                 f"the full expansion, got solver={self.solver!r}.")
            if m is not None and self.basis == "kmeans++":
                raise ValueError("basis='kmeans++' needs X in memory; with a dask X use "
                                 "basis='uniform' or 'leverage'.")
            if m is None and solver != "pcg":   # the kernel comes to memory for the solve
                self._check_solver_memory(n_samples, None, solver)
        elif n_samples:
            self._check_solver_memory(n_samples, m, solver)
        t0 = time.perf_counter()
        if self.affinity == "precomputed":
            W, _ = self._fit_graph(W, name="W")
            X = self._validate_points(X, reset=True)     # n_features_in_ from X, not W
            if W.shape[0] != X.shape[0]:
                raise ValueError(f"W has shape {W.shape} but X has {X.shape[0]} samples.")
        else:
            W, X = self._fit_graph(X, engine=engine)
        n = X.shape[0]
        y, classes, labeled = check_semisup_labels(y, n, estimator=name)
        self._warn_unreached(W, labeled, "the graph term carries no label to them: their "
                             "predictions rest on the kernel alone.")
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError("with kernel='precomputed' X must be the square n x n training "
                             f"kernel, got shape {X.shape}.")
        prev = (getattr(self, "alpha_", None), getattr(self, "intercept_", None),
                getattr(self, "basis_indices_", None))
        same_problem = (self.warm_start and prev[0] is not None
                        and np.array_equal(getattr(self, "classes_", None), classes))
        self.classes_ = classes
        L0 = laplacian(W, kind=self.laplacian, check=False)
        apply_L = laplacian_operator(L0, self.laplacian_power)
        Y = self._encode(y, classes, labeled)
        path, record = self._path_recorder()
        self.n_basis_ = n if m is None else m
        if m is not None:
            res = self._fit_reduced(X, m, solver, apply_L, Y, labeled, X_val, y_val, names,
                                    prev if same_problem else None, record, t0)
        else:
            self.basis_indices_ = None
            self.X_fit_ = None if self.kernel == "precomputed" else X
            # the validated X lives where the graph does (in memory if W was precomputed)
            K, self.kernel_sigma_ = self._kernel(X, engine=self._engine())
            if solver != "pcg" and not isinstance(K, np.ndarray):
                # a direct solve of a dask X's kernel: its row blocks (bit for bit the
                # in-memory kernel's) gathered, so numpy and dask give one minimiser
                K = np.asarray(K.rows(np.arange(K.shape[0])))
            K_val, Y_val = self._validation_targets(X_val, y_val, X.shape[1])
            self.setup_time_ = time.perf_counter() - t0
            t0 = time.perf_counter()
            warm = (dict(alpha0=prev[0], b0=prev[1])
                    if same_problem and prev[0].shape[0] == n and prev[2] is None else {})
            res = self._solve(K, apply_L, Y, ~labeled, K_val, Y_val, warm, names, record,
                              solver)
            self.fit_time_ = time.perf_counter() - t0
        self.alpha_ = res.alpha
        self.intercept_ = res.b
        self.n_iter_ = int(res.n_iter)
        self.n_iter_per_class_ = (np.atleast_1d(np.asarray(res.n_iter_per_column, dtype=int))
                                  if res.n_iter_per_column is not None
                                  else np.array([self.n_iter_]))
        self.converged_ = bool(res.converged)
        self.stop_reason_ = res.stop_reason
        self.history_ = res.history
        if path is not None:
            if not path["alpha"]:      # the dual solver: its solution only
                record(res.n_iter, res.alpha, res.b, np.asarray(
                    res.decision, dtype=np.float64).reshape(np.shape(res.alpha)[0], -1))
            self.history_.update(path)
        self.transduction_ = self._labels(np.asarray(res.decision, dtype=np.float64))
        warn_if_flat(np.asarray(res.decision, dtype=np.float64).reshape(n, -1), labeled, name)
        return self

    def decision_function(self, X):
        """``f(x) = sum_i alpha_i k(x_i, x) + b``: (m,) for two classes (positive means
        ``classes_[1]``), else (m, n_classes).

        With ``kernel="precomputed"``, ``X`` is the (m, n) kernel to the training points.
        """
        check_is_fitted(self, "alpha_")
        if _device.fitted_on_device(self):
            return _device.decision_function(self, X)
        Kx = self._prediction_kernel(X)
        return np.asarray(Kx @ self.alpha_, dtype=np.float64) + self.intercept_

    def predict(self, X):
        """Class labels: ``sign(f)`` (0 counted as positive) or the one-vs-all argmax."""
        return self._labels(self.decision_function(X))

    def staged_decision_function(self, X):
        """Decision values of ``X`` after each solver iteration (needs ``keep_path=True``).

        Yields :meth:`decision_function` of the iterate ``history_["alpha"][i]``,
        ``history_["intercept"][i]`` for ``i = 0, 1, ...``, as scikit-learn's
        ``staged_decision_function`` of boosting; the last equals
        ``decision_function(X)``. The kernel to the training points is computed once.

        Parameters
        ----------
        X : array-like or sparse of shape (m, n_features)
            Points, or the (m, n) kernel to the training points if ``kernel="precomputed"``.

        Yields
        ------
        ndarray of shape (m,) or (m, n_classes)
        """
        path = self._staged_path()
        Kx = self._prediction_kernel(X)
        for alpha, b in path:
            yield np.asarray(Kx @ alpha, dtype=np.float64) + b

    def staged_predict(self, X):
        """Class labels of ``X`` after each solver iteration (needs ``keep_path=True``);
        see :meth:`staged_decision_function`.

        Yields
        ------
        ndarray of shape (m,)
        """
        for f in self.staged_decision_function(X):
            yield self._labels(f)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # X is the kernel when it is precomputed (the affinity then comes as W=)
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


_PARAMS_DOC = """
    Parameters
    ----------
    gamma_A : float >= 0, default=1e-6
        Weight of the ambient (RKHS) norm ``alpha^T K alpha`` (lapsvmp's default).
    gamma_I : float >= 0, default=0.1
        Weight of the intrinsic norm ``f^T L^p f``. The default was 1.0 until 2026-11-26:
        0.1 was as good or better in 14 of 16 cells of ``semisup bench defaults``' matrix
        (moons, wine, breast cancer, digits; raw and standardised; 1 and 3 labels per
        class; mean accuracy over three draws 0.839 -> 0.856 for LapRLS and LapSVM alike,
        the two others 0.002 lower) and on all of MNIST with 100 labels per class (reduced,
        m = 1912: error 6.82 -> 5.75 %%; 10 per class 17.29 -> 17.44 %%). At 1.0 the graph
        term over all points outweighed the labelled losses: no labelled point reached the
        margin, so LapSVM's Newton stopped at LapRLS's solution.
    kernel : {"rbf", "polynomial", "linear", "precomputed"}, default="rbf"
        ``rbf``: ``exp(-||x - x'||^2 / (2 kernel_sigma^2))``; ``polynomial``:
        ``(x^T x' + coef0)^degree`` (the paper's MNIST kernel is ``degree=9, coef0=0`` on
        unit-norm vectors); ``precomputed``: ``X`` is the kernel matrix (then the graph
        must be given: ``affinity="precomputed"`` and ``fit(K, y, W=W)``).
    kernel_sigma : float > 0 or "scale", default="scale"
        RBF kernel width (not the graph's heat width, which is ``graph_sigma``). "scale"
        adapts it to the data as scikit-learn's ``gamma="scale"``: ``sigma^2 = d Var(X) / 2``
        (``kernel_sigma_`` holds the value used). A warning says when the kernel is
        numerically zero away from the training points (a width far below the data's
        distances).
    degree : int >= 1, default=3
    coef0 : float, default=0.0
        Polynomial kernel parameters.
    affinity, n_neighbors, weights, graph_sigma, threshold, metric, knn_method, n_jobs, \
random_state :
        The graph parameters, shared by every graph-based estimator
        (:mod:`semisup.graph.frontend`): ``affinity="knn"`` (default) builds the symmetric
        ``n_neighbors``-NN graph of ``X`` (default 10; lapsvmp's protocol uses 6) with heat
        weights of width ``graph_sigma`` (None: the mean kNN distance, lapsvmp's ``t = 0``
        rule); ``"precomputed"`` takes the affinity ``W`` passed to ``fit``. A ``W`` given
        with another affinity is refused. ``random_state`` also seeds the random principal
        submatrix of the PSD check of a precomputed kernel (above 1000 points).
    laplacian : {"normalized", "unnormalized"}, default="normalized"
        The paper used the normalised Laplacian.
    laplacian_power : int >= 1, default=1
        Laplacian power ``p`` (``L^p`` is applied lazily, never formed).
    use_bias : bool, default=False
        Include a bias ``b`` (lapsvmp's default is no bias).
%(solver)s
    early_stopping : str, list of str or None, default="stability"
        PCG goal condition(s): ``"stability"``, ``"validation"``, ``"mixed"`` (the paper's,
        checked every ``stop_every`` iterations) or the classical ``"grad"``, ``"pgrad"``,
        ``"mixed_grad"``, ``"obj"``. ``None`` runs PCG until the line search returns 0 or
        ``max_iter``. Ignored by the direct solvers.
    stop_tol : float > 0 or None, default=None
        Threshold of the classical rules (1e-8 for norms, 1e-6 for the objective).
    stop_every : int >= 1 or None, default=None
        Check interval ``theta``; ``None`` is ``round(sqrt(n) / 2)``.
    joint_stopping : bool, default=True
        For more than two classes, check the data-based rules on the joint one-vs-all
        decision (the paper's suggestion for COIL20) instead of per binary problem.
    max_iter : int >= 1 or None, default=None
        Newton steps (default 50) or PCG iterations (default 1000); for the dual solver,
        libsvm's iterations (default 100 000).
    refresh_every : int >= 1 or None, default=50
        PCG: recompute ``K alpha`` and ``K d`` every this many iterations (2 extra products).
    kernel_dtype : {"float64", "float32"}, default="float64"
        float32 halves the memory of ``K`` (or of the reduced features) and the time of
        its products (PCG); direct solvers compute in float64 anyway. On the host PCG
        multiplies in float32, whose rounding PCG amplifies by about ``1 / gamma_A``: at a
        small ``gamma_A`` it can keep the iterate moving so that the stability stop never
        holds. On a GPU the float32 kernel is multiplied in float64 arithmetic
        (:func:`semisup.linalg.xp.product_f64`): all of MNIST at the default ``gamma_A``
        ran 1000 iterations without a stop (0.84 accuracy) with float32 products, and
        stops at 396 iterations (0.91, as the float64 kernel) with these
        (``docs/benchmarks/gpu.md``).
    warm_start : bool, default=False
        Start from the previous solution when refitting the same points and classes
        (e.g. along a ``gamma_A, gamma_I`` grid).
    keep_path : bool, default=False
        Record the iterates: after each PCG iteration or Newton step, copies of the
        coefficients and of the decision values on the training points go to
        ``history_["alpha"]``, ``history_["intercept"]`` and ``history_["scores"]`` (one
        entry per iteration, the last one the fitted ``alpha_``, ``intercept_`` and
        decision values; the dual solver records its solution only).
        :meth:`staged_decision_function` and :meth:`staged_predict` evaluate them on new
        points. Costs two ``n x n_classes`` arrays per iteration; the fit is unchanged.
    verbose : bool, default=False
        Print PCG's progress.
    n_basis : int, "auto" or None, default="auto"
        The reduced expansion ``f(x) = sum_{j in B} alpha_j k(x, b_j) + b`` over ``m``
        basis points ``B`` of the training set (the objective keeps ``f^T L^p f`` over all
        n points, with ``gamma_A alpha^T K_BB alpha``), trained on the Nyström features
        ``K_nB K_BB^{-1/2}`` (:mod:`semisup.lapsvm.reduced`): time ``O(n m^2)``, memory
        ``n m``, predictions ``m`` kernel values per point. ``None``: the full expansion
        over every training point (the paper's model; the n x n kernel). ``"auto"``: the
        full expansion for a precomputed kernel, the dual solver, up to 2000 points, and up
        to 8000 points where the direct solve's memory takes at most half the available
        memory (solved directly there: on MNIST subsets faster than the reduced model, or
        as fast, and as accurate or more); else
        ``m = min(n, clip(sqrt(16 000 * 4000^2 / n), 1000, 4000))`` (the work ``n m^2`` of
        m = 4000 at n = 16 000, where MNIST's error was 2.9 points above the full model's,
        in a third of its time; 1912 on all of MNIST, 1000 from 256 000 points), shrunk
        with a warning to the largest m whose features take at most half the available
        memory.
        On a GPU (a CuPy ``X``), ``"auto"`` keeps the full kernel while it takes at most
        half of the free device memory (all of MNIST in float64 on an 80 GB card), and
        above that takes this rule with a warning.
    basis : {"uniform", "kmeans++", "leverage"}, default="uniform"
        How ``B`` is drawn (seeded by ``random_state``): uniformly, by k-means++ seeding,
        or by approximate ridge leverage scores. On MNIST (n = 4000, 10 classes, 10 labels
        per class, m = 1000, two draws, LapRLS and LapSVM) the mean errors were 16.3%%
        (uniform), 16.4%% (k-means++) and 16.6%% (leverage), within the draws' spread, so
        uniform (the cheapest) is the default.

    Attributes
    ----------
    classes_ : ndarray
    kernel_sigma_ : float
        The RBF width used (from ``kernel_sigma``, or the data for ``"scale"``).
    n_iter_per_class_ : ndarray of int
        Iterations of each one-vs-all problem (one entry for two classes); ``n_iter_`` is
        their maximum.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points from their decision values ``K alpha + b`` (the
        same rule as :meth:`predict`; no extra kernel product).
    X_fit_ : ndarray or sparse (n, d) or (m, d), or None
        The points of the expansion, needed for out-of-sample predictions: the training
        points, or the basis points of a reduced expansion (None with
        ``kernel="precomputed"``).
    n_basis_ : int
        Points in the expansion (``n`` for the full one).
    basis_indices_ : ndarray of int (m,) or None
        Indices of the basis points among the training points (None: full expansion).
    alpha_ : ndarray (n,) or (n, n_classes), (m, ...) for a reduced expansion
    intercept_ : float or ndarray (n_classes,)
    n_iter_ : int
        Newton steps, PCG iterations, or 1 (dual).
    converged_ : bool
    stop_reason_ : str
    history_ : dict
        Per-iteration records of the solver and of every stopping rule (PCG: ``"obj"``,
        ``"grad_norm"``, ... with entry ``t`` after iteration ``t``, 0 the start; Newton:
        ``"obj"``, ``"n_errors"`` per step); with ``keep_path`` also the iterates
        ``"alpha"``, ``"intercept"`` and ``"scores"`` (decision values on the training
        points), entry ``i`` after iteration ``i + 1``.
    affinity_matrix_ : scipy.sparse.csr_matrix
        The graph used.
    graph_sigma_ : float or None
        Heat width of the graph (``weights="heat"``, built from ``X``).
    n_features_in_ : int
    setup_time_, fit_time_ : float
        Seconds spent building K and L, and in the solver.

    Raises
    ------
    MemoryError
        Before any O(n^2) work, when the kernel (and, for the direct solvers, their
        O(n^2) float64 workspace) cannot fit; the message gives the estimate and the
        option that would fit.
"""

_EXAMPLE = """
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import %(name)s
    >>> X, t = make_moons(100, noise=0.05, random_state=0)
    >>> y = np.full(100, -1)                           # -1: unlabeled
    >>> y[[np.flatnonzero(t == 0)[0], np.flatnonzero(t == 1)[0]]] = [0, 1]
    >>> clf = %(name)s(kernel_sigma=0.35, n_neighbors=6, gamma_A=1e-2,
    ...               laplacian="unnormalized", use_bias=True%(extra)s).fit(X, y)
    >>> float((clf.transduction_ == t).mean()) > 0.9
    True
"""


class LapSVM(_LaplacianKernelClassifier):
    __doc__ = """Laplacian SVM trained in the primal (Melacci & Belkin 2011).

    Minimises eq. 7, the squared-hinge LapSVM objective, by Newton's method (eq. 10,
    ``O(n^3)``), by preconditioned conjugate gradient with the exact line search and
    early stopping (Algorithm 1, ``O(k n^2)``), or — as a baseline — the original
    L1-hinge LapSVM through its dual (eq. 5–6, libsvm).
""" + _PARAMS_DOC % dict(solver="""\
    solver : {"auto", "pcg", "newton", "dual"}, default="auto"
        ``"pcg"`` (with ``early_stopping``, the paper's recommendation), ``"newton"``
        (exact, ``O(n^3)``, or ``O(n m^2)`` reduced) or ``"dual"`` (the original L1-hinge
        LapSVM, always with a bias, ``O(n^3)``, needs ``gamma_A > 0``; ``early_stopping``
        and ``use_bias`` are ignored; full expansion only). ``"auto"``: Newton with a
        reduced expansion or up to 8000 points (where its memory fits), PCG above: the
        minimiser where it is cheap, which (unlike an early-stopped PCG iterate, whose path
        amplifies rounding at small ``gamma_A``) does not move with the BLAS threads or the
        engine.""") + \
        _EXAMPLE % dict(name="LapSVM", extra=', solver="newton"')

    _parameter_constraints = {
        **_LaplacianKernelClassifier._parameter_constraints,
        "solver": [StrOptions({"auto", "pcg", "newton", "dual"})],
    }
    _hinge = True

    def _solve(self, K, apply_L, Y, unlabeled, K_val, Y_val, warm, names, callback,
               solver):
        common = dict(gamma_A=self.gamma_A, gamma_I=self.gamma_I)
        if solver == "dual":
            return dual_lapsvm(K, apply_L, Y, max_iter=self.max_iter, **common)
        if solver == "newton":
            return newton(K, apply_L, Y, use_bias=self.use_bias, hinge=self._hinge,
                          max_iter=50 if self.max_iter is None else self.max_iter,
                          callback=callback, _advice="raise max_iter.", **warm, **common)
        rules = self._rules(names, unlabeled, Y_val, 1 if Y.ndim == 1 else Y.shape[1])
        return pcg(K, apply_L, Y, use_bias=self.use_bias, hinge=self._hinge,
                   max_iter=1000 if self.max_iter is None else self.max_iter,
                   stopping=rules, refresh_every=self.refresh_every, K_val=K_val,
                   callback=callback, verbose=self.verbose, _advice=self._pcg_advice(rules),
                   **warm, **common)


class LapRLS(_LaplacianKernelClassifier):
    __doc__ = """Laplacian regularised least squares (eq. 14) — LapSVM with the squared loss.

    Solved in closed form (one dense ``O(n^3)`` system, eq. 14) or by the same PCG as
    LapSVM, whose line search is then a single closed-form step.
""" + _PARAMS_DOC % dict(solver="""\
    solver : {"auto", "pcg", "closed_form"}, default="auto"
        PCG with the closed-form step (and ``early_stopping``) or one dense solve
        (``O(n^3)``, or ``O(n m^2)`` reduced). ``"auto"``: the closed form with a reduced
        expansion or up to 8000 points (where its memory fits), PCG above: the minimiser
        where it is cheap, which does not move with the BLAS threads or the engine.""") + \
        _EXAMPLE % dict(name="LapRLS", extra="")

    _parameter_constraints = {
        **_LaplacianKernelClassifier._parameter_constraints,
        "solver": [StrOptions({"auto", "pcg", "closed_form"})],
    }
    _hinge = False

    def _solve(self, K, apply_L, Y, unlabeled, K_val, Y_val, warm, names, callback,
               solver):
        common = dict(gamma_A=self.gamma_A, gamma_I=self.gamma_I, use_bias=self.use_bias,
                      hinge=False)
        if solver == "closed_form":
            return newton(K, apply_L, Y, max_iter=1, callback=callback, **common)
        rules = self._rules(names, unlabeled, Y_val, 1 if Y.ndim == 1 else Y.shape[1])
        return pcg(K, apply_L, Y, max_iter=1000 if self.max_iter is None else self.max_iter,
                   stopping=rules, refresh_every=self.refresh_every, K_val=K_val,
                   callback=callback, verbose=self.verbose, _advice=self._pcg_advice(rules),
                   **warm, **common)
