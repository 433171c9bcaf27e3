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

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from .._validation import check_affinity, check_semisup_labels
from ..graph import knn_graph, laplacian
from ..kernels import kernel_matrix
from .dual import dual_lapsvm
from .newton import newton
from .objective import laplacian_operator
from .pcg import pcg
from .stopping import make_rule

__all__ = ["LapSVM", "LapRLS"]

_KERNELS = ("rbf", "polynomial", "linear", "precomputed")


def _check_data(X, name="X"):
    """2-D finite float array or CSR matrix (scikit-learn's messages for bad input)."""
    return check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32],
                       input_name=name)


def _check_target(y):
    if y is None:
        raise ValueError("LapSVM requires y to be passed, but the target y is None "
                         "(mark unlabelled points with -1).")
    y = np.asarray(y)
    if y.dtype.kind == "f" and np.isfinite(y).all() and np.any(y != np.round(y)):
        raise ValueError("Unknown label type: continuous. LapSVM/LapRLS are classifiers; "
                         "pass class labels with -1 for unlabelled points.")
    return y


def _warn_if_not_psd(K, random_state=0, max_size=1000):
    """Warn when a precomputed kernel is not symmetric PSD.

    Checks the smallest eigenvalue of a random principal submatrix (of a PSD matrix every
    principal submatrix is PSD), so the cost stays ``O(max_size^3)``.
    """
    n = K.shape[0]
    idx = np.random.default_rng(random_state).choice(n, size=min(n, max_size), replace=False)
    S = np.asarray(K[np.ix_(idx, idx)], dtype=np.float64)
    if not np.allclose(S, S.T, rtol=1e-5, atol=1e-8 * max(abs(S).max(), 1.0)):
        warnings.warn("the precomputed kernel is not symmetric; LapSVM's objective is only "
                      "convex for a symmetric PSD kernel.", UserWarning, stacklevel=3)
        return
    lam = np.linalg.eigvalsh(0.5 * (S + S.T))
    if lam[0] < -1e-8 * max(abs(lam[-1]), 1.0):
        warnings.warn(f"the precomputed kernel is not positive semi-definite (eigenvalue "
                      f"{lam[0]:.3g}); the objective may be non-convex and the solvers may "
                      "fail. Add a ridge or use a valid kernel.", UserWarning, stacklevel=3)


class _LaplacianKernelClassifier(ClassifierMixin, BaseEstimator):
    """Shared machinery: kernel, graph, label coding, validation set, prediction."""

    # One signature for LapSVM and LapRLS (scikit-learn reads it for get_params).
    def __init__(self, gamma_A=1e-6, gamma_I=1.0, *, kernel="rbf", sigma=1.0, degree=3,
                 coef0=0.0, affinity="knn", n_neighbors=6, weights="heat", graph_sigma=None,
                 laplacian="normalized", p=1, use_bias=False, solver="pcg",
                 early_stopping="stability", stop_tol=None, stop_every=None,
                 joint_stopping=True, max_iter=None, refresh_every=50,
                 kernel_dtype="float64", warm_start=False, verbose=False):
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.coef0 = coef0
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.graph_sigma = graph_sigma
        self.laplacian = laplacian
        self.p = p
        self.use_bias = use_bias
        self.solver = solver
        self.early_stopping = early_stopping
        self.stop_tol = stop_tol
        self.stop_every = stop_every
        self.joint_stopping = joint_stopping
        self.max_iter = max_iter
        self.refresh_every = refresh_every
        self.kernel_dtype = kernel_dtype
        self.warm_start = warm_start
        self.verbose = verbose

    _hinge = True
    _solvers: tuple = ()

    def _validate_params(self):
        if self.kernel not in _KERNELS:
            raise ValueError(f"kernel must be one of {_KERNELS}, got {self.kernel!r}.")
        if self.affinity not in ("knn", "precomputed"):
            raise ValueError(f"affinity must be 'knn' or 'precomputed', got {self.affinity!r}.")
        if self.solver not in self._solvers:
            raise ValueError(f"solver must be one of {self._solvers}, got {self.solver!r}.")
        for name in ("gamma_A", "gamma_I"):
            v = getattr(self, name)
            if not (np.isscalar(v) and np.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}.")
        if self.kernel_dtype not in ("float64", "float32", np.float64, np.float32):
            raise ValueError(f"kernel_dtype must be 'float64' or 'float32', "
                             f"got {self.kernel_dtype!r}.")

    # -- building blocks -------------------------------------------------------------------
    def _kernel(self, X, Y=None):
        kw = dict(kernel=self.kernel, sigma=self.sigma, degree=self.degree,
                  coef0=self.coef0, dtype=np.dtype(self.kernel_dtype))
        try:
            return kernel_matrix(X, Y, **kw)
        except MemoryError as exc:
            raise MemoryError(f"{exc} LapSVM needs the n x n kernel matrix in memory; use "
                              "kernel_dtype='float32' (PCG accepts it), fewer unlabelled "
                              "points, or a sparse precomputed kernel.") from None

    def _train_kernel(self, X):
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError("with kernel='precomputed' X must be the square n x n "
                                 f"training kernel, got shape {X.shape}.")
            K = X.toarray() if sp.issparse(X) else X
            _warn_if_not_psd(K)
            return np.asarray(K, dtype=np.dtype(self.kernel_dtype))
        return self._kernel(X)

    def _laplacian(self, X, W):
        n = X.shape[0]
        if self.affinity == "precomputed":
            if W is None:
                raise ValueError("affinity='precomputed' needs the graph: fit(X, y, W=W).")
            W = check_affinity(W)
            if W.shape[0] != n:
                raise ValueError(f"W has shape {W.shape} but there are {n} samples.")
        else:
            if self.kernel == "precomputed":
                raise ValueError("with kernel='precomputed' the graph cannot be built from X; "
                                 "pass affinity='precomputed' and fit(K, y, W=W).")
            W = knn_graph(X, self.n_neighbors, weights=self.weights, sigma=self.graph_sigma)
        return laplacian(W, kind=self.laplacian, check=False)

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

    def _validation_targets(self, X_val, y_val, n_features):
        if X_val is None and y_val is None:
            return None, None
        if X_val is None or y_val is None:
            raise ValueError("pass both X_val and y_val, or neither.")
        X_val = _check_data(X_val, "X_val")
        y_val = np.asarray(y_val)
        if y_val.ndim != 1 or y_val.shape[0] != X_val.shape[0]:
            raise ValueError(f"X_val has {X_val.shape[0]} rows but y_val has shape "
                             f"{y_val.shape}.")
        if X_val.shape[1] != n_features:
            raise ValueError(f"X_val has {X_val.shape[1]} columns but X has {n_features}.")
        unknown = np.setdiff1d(np.unique(y_val), self.classes_)
        if unknown.size:
            raise ValueError(f"y_val has labels {unknown.tolist()} that are not among the "
                             f"training classes {self.classes_.tolist()}.")
        Y_val = self._encode(y_val, self.classes_)
        K_val = (np.asarray(X_val, dtype=np.dtype(self.kernel_dtype))
                 if self.kernel == "precomputed" else self._kernel(X_val, self.X_fit_))
        return K_val, Y_val

    def _rules(self, unlabeled, Y_val, n_cols):
        if self.early_stopping is None:
            return []
        names = ([self.early_stopping] if isinstance(self.early_stopping, str)
                 else list(self.early_stopping))
        if not unlabeled.any() and any(nm in ("stability", "mixed") for nm in names):
            warnings.warn("every training point is labelled, so the stability check cannot "
                          "run; it is ignored (PCG runs until convergence or max_iter).",
                          UserWarning, stacklevel=3)
            names = [nm for nm in names if nm != "stability"]
            names = ["validation" if nm == "mixed" else nm for nm in names]
        groups = [None] if (self.joint_stopping or n_cols == 1) else [[j] for j in range(n_cols)]
        return [make_rule(name, unlabeled=unlabeled, Y_val=Y_val, tol=self.stop_tol,
                          columns=g, every=self.stop_every)
                for name in names for g in groups]

    # -- public API ------------------------------------------------------------------------
    def fit(self, X, y, *, W=None, X_val=None, y_val=None):
        """Fit on labelled and unlabelled points.

        Parameters
        ----------
        X : array-like or sparse (n, d), or the (n, n) kernel if ``kernel="precomputed"``
        y : array-like (n,)
            Class labels, ``-1`` for unlabelled points. Any other labels are accepted.
        W : sparse or dense (n, n), optional
            Affinity matrix, required with ``affinity="precomputed"``.
        X_val, y_val : optional validation set (labels among the training classes), used by
            the ``"validation"`` and ``"mixed"`` stopping rules. With
            ``kernel="precomputed"``, ``X_val`` is the (m, n) kernel to the training points.

        Returns
        -------
        self
        """
        self._validate_params()
        X = _check_data(X)
        y, classes, labeled = check_semisup_labels(_check_target(y), X.shape[0])
        prev = (getattr(self, "alpha_", None), getattr(self, "intercept_", None))
        same_problem = (self.warm_start and prev[0] is not None
                        and prev[0].shape[0] == X.shape[0]
                        and np.array_equal(getattr(self, "classes_", None), classes))
        self.classes_ = classes
        self.X_fit_ = None if self.kernel == "precomputed" else X
        self.n_features_in_ = X.shape[1]
        t0 = time.perf_counter()
        K = self._train_kernel(X)
        L0 = self._laplacian(X, W)
        apply_L = laplacian_operator(L0, self.p)
        Y = self._encode(y, classes, labeled)
        K_val, Y_val = self._validation_targets(X_val, y_val, X.shape[1])
        self.setup_time_ = time.perf_counter() - t0
        t0 = time.perf_counter()
        warm = dict(alpha0=prev[0], b0=prev[1]) if same_problem else {}
        res = self._solve(K, apply_L, Y, ~labeled, K_val, Y_val, warm)
        self.fit_time_ = time.perf_counter() - t0
        self.alpha_ = res.alpha
        self.intercept_ = res.b
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        self.stop_reason_ = res.stop_reason
        self.history_ = res.history
        return self

    def decision_function(self, X):
        """``f(x) = sum_i alpha_i k(x_i, x) + b``: (m,) for two classes (positive means
        ``classes_[1]``), else (m, n_classes)."""
        check_is_fitted(self, "alpha_")
        X = _check_data(X)
        if self.kernel == "precomputed":
            if X.shape[1] != self.alpha_.shape[0]:
                raise ValueError(f"with kernel='precomputed' X must be the (m, "
                                 f"{self.alpha_.shape[0]}) kernel to the training points, "
                                 f"got shape {X.shape}.")
            Kx = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        else:
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} "
                                 f"is expecting {self.n_features_in_} features as input.")
            Kx = self._kernel(X, self.X_fit_)
        return np.asarray(Kx @ self.alpha_, dtype=np.float64) + self.intercept_

    def predict(self, X):
        """Class labels: ``sign(f)`` (0 counted as positive) or the one-vs-all argmax."""
        f = self.decision_function(X)
        if f.ndim == 1:
            return self.classes_[(f >= 0).astype(int)]
        return self.classes_[np.argmax(f, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


_COMMON_DOC = """
    Parameters
    ----------
    gamma_A : float, default=1e-6
        Weight of the ambient (RKHS) norm ``alpha^T K alpha`` (lapsvmp's default).
    gamma_I : float, default=1.0
        Weight of the intrinsic norm ``f^T L^p f``.
    kernel : {"rbf", "polynomial", "linear", "precomputed"}, default="rbf"
        ``rbf``: ``exp(-||x - x'||^2 / (2 sigma^2))``; ``polynomial``:
        ``(x^T x' + coef0)^degree`` (the paper's MNIST kernel is ``degree=9, coef0=0`` on
        unit-norm vectors); ``precomputed``: ``X`` is the kernel matrix.
    sigma : float, default=1.0
        RBF kernel width.
    degree : int, default=3
    coef0 : float, default=0.0
        Polynomial kernel parameters.
    affinity : {"knn", "precomputed"}, default="knn"
        Build a kNN graph from ``X``, or take ``W`` passed to ``fit``.
    n_neighbors : int, default=6
        Neighbours of the kNN graph (lapsvmp's default).
    weights : {"heat", "binary", "distance"}, default="heat"
        Edge weights; ``heat`` uses ``exp(-d^2 / (2 t^2))``.
    graph_sigma : float or None, default=None
        Heat width ``t``; ``None`` is lapsvmp's ``t = 0`` rule (the mean kNN distance).
    laplacian : {"normalized", "unnormalized"}, default="normalized"
        The paper used the normalised Laplacian.
    p : int, default=1
        Laplacian power (``L^p`` is applied lazily, never formed).
    use_bias : bool, default=False
        Include a bias ``b`` (lapsvmp's default is no bias).
    early_stopping : str, list of str or None
        PCG goal condition(s): ``"stability"``, ``"validation"``, ``"mixed"`` (the paper's,
        checked every ``stop_every`` iterations) or the classical ``"grad"``, ``"pgrad"``,
        ``"mixed_grad"``, ``"obj"``. ``None`` runs PCG until the line search returns 0 or
        ``max_iter``. Ignored by the direct solvers.
    stop_tol : float or None
        Threshold of the classical rules (1e-8 for norms, 1e-6 for the objective).
    stop_every : int or None
        Check interval ``theta``; ``None`` is ``round(sqrt(n) / 2)``.
    joint_stopping : bool, default=True
        For more than two classes, check the data-based rules on the joint one-vs-all
        decision (the paper's suggestion for COIL20) instead of per binary problem.
    max_iter : int or None
        Newton steps (default 50) or PCG iterations (default 1000).
    refresh_every : int or None, default=50
        PCG: recompute ``K alpha`` and ``K d`` every this many iterations (2 extra products).
    kernel_dtype : {"float64", "float32"}, default="float64"
        float32 halves the memory of ``K`` and the time of its products (PCG);
        direct solvers compute in float64 anyway.
    warm_start : bool, default=False
        Start from the previous solution when refitting the same points and classes
        (e.g. along a ``gamma_A, gamma_I`` grid).
    verbose : bool, default=False

    Attributes
    ----------
    classes_ : ndarray
    X_fit_ : ndarray or sparse (n, d)
        Training points (or the training kernel), needed for out-of-sample predictions.
    alpha_ : ndarray (n,) or (n, n_classes)
    intercept_ : float or ndarray (n_classes,)
    n_iter_ : int
        Newton steps or PCG iterations.
    converged_ : bool
    stop_reason_ : str
    history_ : dict
        Per-iteration records of the solver and of every stopping rule.
    setup_time_, fit_time_ : float
        Seconds spent building K and L, and in the solver.
"""


class LapSVM(_LaplacianKernelClassifier):
    __doc__ = """Laplacian SVM trained in the primal (Melacci & Belkin 2011).

    Minimises eq. 7, the squared-hinge LapSVM objective, by Newton's method (eq. 10,
    ``O(n^3)``), by preconditioned conjugate gradient with the exact line search and
    early stopping (Algorithm 1, ``O(k n^2)``), or — as a baseline — the original
    L1-hinge LapSVM through its dual (eq. 5–6, libsvm).

    solver : {"pcg", "newton", "dual"}, default="pcg"
        ``"pcg"`` (with ``early_stopping``, the paper's recommendation), ``"newton"``
        (exact, ``O(n^3)``) or ``"dual"`` (the original L1-hinge LapSVM, always with a bias,
        ``O(n^3)``; ``early_stopping`` and ``use_bias`` are ignored).
""" + _COMMON_DOC

    _hinge = True
    _solvers = ("pcg", "newton", "dual")

    def _solve(self, K, apply_L, Y, unlabeled, K_val, Y_val, warm):
        common = dict(gamma_A=self.gamma_A, gamma_I=self.gamma_I)
        if self.solver == "dual":
            return dual_lapsvm(K, apply_L, Y, **common)
        if self.solver == "newton":
            return newton(K, apply_L, Y, use_bias=self.use_bias, hinge=self._hinge,
                          max_iter=50 if self.max_iter is None else self.max_iter,
                          **warm, **common)
        rules = self._rules(unlabeled, Y_val, 1 if Y.ndim == 1 else Y.shape[1])
        return pcg(K, apply_L, Y, use_bias=self.use_bias, hinge=self._hinge,
                   max_iter=1000 if self.max_iter is None else self.max_iter,
                   stopping=rules, refresh_every=self.refresh_every, K_val=K_val,
                   verbose=self.verbose, **warm, **common)


class LapRLS(_LaplacianKernelClassifier):
    __doc__ = """Laplacian regularised least squares (eq. 14) — LapSVM with the squared loss.

    Solved in closed form (one dense ``O(n^3)`` system, eq. 14) or by the same PCG as
    LapSVM, whose line search is then a single closed-form step.

    solver : {"pcg", "closed_form"}, default="pcg"
        PCG with the closed-form step (and ``early_stopping``) or one dense solve.
""" + _COMMON_DOC

    _hinge = False
    _solvers = ("pcg", "closed_form")

    def _solve(self, K, apply_L, Y, unlabeled, K_val, Y_val, warm):
        common = dict(gamma_A=self.gamma_A, gamma_I=self.gamma_I, use_bias=self.use_bias,
                      hinge=False)
        if self.solver == "closed_form":
            return newton(K, apply_L, Y, max_iter=1, **common)
        rules = self._rules(unlabeled, Y_val, 1 if Y.ndim == 1 else Y.shape[1])
        return pcg(K, apply_L, Y, max_iter=1000 if self.max_iter is None else self.max_iter,
                   stopping=rules, refresh_every=self.refresh_every, K_val=K_val,
                   verbose=self.verbose, **warm, **common)
