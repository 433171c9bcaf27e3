"""``ClusteredRegressor`` and ``ClusteredClassifier``: linear models with clustering constraints.

``cluster="features"`` (paper §2.1, eq. (2)): the weights take at most ``n_clusters``
distinct values (optionally with at most ``sparsity`` non-zeros, §5), so features are
grouped (e.g. synonyms in text). ``cluster="samples"`` (§2.2, eq. (3)): the training samples
are split into ``n_clusters`` groups, each with its own linear "expert"; at test time the
model returns the Q answers (the features alone do not tell which expert applies).

Both are supervised, but follow the library's label convention so that they can be fitted on
partially labeled data: ``ClusteredClassifier`` ignores the points labeled ``-1`` and
``ClusteredRegressor`` the points whose target is NaN (``-1`` is a valid regression target).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, lsqr
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import r2_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .._base import _fit_context, _store_init_params, labeled_accuracy
from .._validation import _labeled_mask, check_memory, check_semisup_labels
from .alternating import alternating_minimization
from .frank_wolfe import (fw_feature_clustering, fw_features_nbytes, fw_sample_clustering,
                          fw_samples_nbytes)
from .problems import CenteredDesign, FeatureProblem, SampleProblem
from .projected_gradient import feature_projector, pg_feature_clustering, pg_sample_clustering
from .projections import project_clustered, project_kmeans

__all__ = ["ClusteredRegressor", "ClusteredClassifier"]

# Inputs whose largest magnitude lies outside [_TINY, _HUGE] are rescaled by a power of two
# before fitting (exact in floating point): beyond it, X^T X or X X^T over/underflows.
_TINY, _HUGE = 1e-100, 1e100


def _ridge_init(A: CenteredDesign, Y, lam):
    """Ridge weights on the implicitly centred design, one LSQR run per output (spec §6 LS).

    LSQR minimises ||Xc w - y||^2 + lam n ||w||^2, i.e. (1/(2n))||Xc w - y||^2 + (lam/2)||w||^2;
    with lam = 0 it returns the minimum-norm least-squares solution.
    """
    op = LinearOperator((A.n, A.d), dtype=np.float64,
                        matvec=lambda v: A.matmat(v.reshape(-1, 1)).ravel(),
                        rmatvec=lambda v: A.rmatmat(v.reshape(-1, 1)).ravel())
    damp = np.sqrt(lam * A.n)
    return np.column_stack([lsqr(op, Y[:, k], damp=damp, atol=1e-10, btol=1e-10,
                                 iter_lim=max(1000, 2 * min(A.n, A.d)))[0]
                            for k in range(Y.shape[1])])


def _sorted_clusters(W, labels):
    """Renumber clusters by increasing value (first column) so cluster_labels_ are
    reproducible."""
    labels = np.asarray(labels)
    valid = labels >= 0
    ids = np.unique(labels[valid])
    if ids.size == 0:
        return labels, np.zeros((0, W.shape[1]))
    values = np.array([W[labels == i][0] for i in ids])
    order = np.lexsort(values.T[::-1])
    new = np.full(labels.shape, -1, dtype=np.int64)
    for rank, i in enumerate(ids[order]):
        new[labels == i] = rank
    return new, values[order]


def _max_abs(A):
    data = A.data if sp.issparse(A) else np.asarray(A)
    return float(np.max(np.abs(data))) if data.size else 0.0


def _scale_exponent(max_abs):
    """e with max_abs / 2**e in [0.5, 1) when max_abs is outside [_TINY, _HUGE], else 0."""
    if max_abs == 0.0 or _TINY <= max_abs <= _HUGE:
        return 0
    return int(np.frexp(max_abs)[1])


def _ldexp(A, e):
    """A * 2**e, exact (sparse matrices keep their structure)."""
    if e == 0:
        return A
    if sp.issparse(A):
        A = A.copy()
        A.data = np.ldexp(A.data, e)
        return A
    return np.ldexp(A, e)


def _column_scale_ratio(X):
    """max / min standard deviation over the non-constant columns of X (1 if fewer than 2)."""
    if sp.issparse(X):
        mean = np.asarray(X.mean(axis=0)).ravel()
        var = np.asarray(X.multiply(X).mean(axis=0)).ravel() - mean ** 2
    else:
        var = np.var(X, axis=0)
    std = np.sqrt(np.maximum(var, 0.0))
    std = std[std > 1e-12 * max(float(std.max(initial=0.0)), 1e-300)]
    return float(std.max() / std.min()) if std.size > 1 else 1.0


def _check_regression_target(y, n_samples, estimator):
    """Float targets of shape (n,); NaN marks an unlabeled sample. Returns (y, labeled)."""
    if y is None:
        raise ValueError(f"{estimator} requires y to be passed, but the target y is None; "
                         "give the target of every labeled sample and NaN for unlabeled ones.")
    if sp.issparse(y):
        raise ValueError("y must be a 1-D array of targets, got a sparse matrix.")
    y = np.asarray(y)
    if y.dtype.kind == "O" and any(v is None for v in y.ravel()):
        raise ValueError("y contains None; mark unlabeled targets with NaN.")
    y = check_array(y, ensure_2d=False, dtype=np.float64, ensure_all_finite="allow-nan",
                    ensure_min_samples=0, input_name="y")
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected; it is "
                      "raveled.", DataConversionWarning, stacklevel=3)
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one target per sample), got shape {y.shape}.")
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n_samples} samples.")
    labeled = ~np.isnan(y)
    if not labeled.any():
        raise ValueError("y has no labeled target (all are NaN; NaN marks an unlabeled "
                         "sample): at least one target is needed.")
    return y, labeled


class _ClusteredBase(BaseEstimator):
    """Shared parameters, validation and the two fitting paths."""

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "cluster": [StrOptions({"features", "samples"})],
        "sparsity": [Interval(Integral, 1, None, closed="left"), None],
        "solver": [StrOptions({"pg", "fw", "fwpg", "am"})],
        "alpha": [Interval(Real, 0, None, closed="left")],  # refuses NaN and inf
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "fw_max_iter": [Interval(Integral, 1, None, closed="left")],
        "refine": ["boolean"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_clusters=5, *, cluster="features", sparsity=None, solver="pg",
                 alpha=1e-3, fit_intercept=True, max_iter=5000, tol=1e-8, fw_max_iter=200,
                 refine=True, n_init=3, random_state=None, verbose=False):
        _store_init_params(self, locals())

    # ------------------------------------------------------------------ validation
    def _check_combination(self, n_samples, n_features):
        """Rules that tie several parameters (or a parameter and the data) together."""
        Q = self.n_clusters
        # n_clusters >= n_features is allowed: d weights take at most d values, so the
        # constraint is void and the fit is the unconstrained one (see _fit_features)
        if self.cluster == "samples" and Q > n_samples:
            raise ValueError(f"n_clusters={Q} exceeds the number of labeled samples "
                             f"({n_samples}); at most {n_samples} clusters of samples exist.")
        if self.sparsity is not None:
            k = self.sparsity
            if self.cluster != "features":
                raise ValueError("sparsity applies to cluster='features' only.")
            if k < Q:
                raise ValueError(f"sparsity={k} must be >= n_clusters={Q} "
                                 "(k non-zeros cannot take more than k values).")
            if k > n_features:
                raise ValueError(f"sparsity={k} exceeds n_features={n_features}.")
        if self.cluster == "features" and self.solver == "am":
            raise ValueError("solver='am' (alternating minimisation) applies to "
                             "cluster='samples'; use 'pg', 'fw' or 'fwpg' for features.")

    def _validate_X(self, X, reset):
        sparse = ["csr", "csc"] if self.cluster == "features" else False
        return validate_data(self, X, accept_sparse=sparse, dtype=np.float64, reset=reset)

    def _rescale(self, X, Y):
        """Power-of-two rescaling of X (and of regression targets) whose magnitude would
        overflow or underflow the products X^T X / X X^T: fitting ``X / 2**ex`` and
        ``Y / 2**ey`` with ``alpha / 4**ex`` is the same problem, exactly (the weights are
        ``2**(ey - ex)`` times the fitted ones; see the Notes of ClusteredRegressor for the
        experts' intercepts). Sets ``self._ex, self._ey``."""
        max_x = _max_abs(X)
        self._ex = _scale_exponent(max_x)
        self._ey = _scale_exponent(_max_abs(Y)) if self._y_numeric else 0
        with np.errstate(over="ignore", under="ignore"):  # both are checked/intended below
            alpha = float(np.ldexp(self.alpha, -2 * self._ex))
        if not np.isfinite(alpha):
            raise ValueError(f"X is too small for alpha={self.alpha!r}: its largest entry is "
                             f"{max_x:.3g}, so the ridge term outweighs the data by more "
                             "than 1e308 and the fit underflows to 0; rescale X (e.g. "
                             "StandardScaler) or scale alpha with max|X|**2.")
        if self.solver in ("fw", "fwpg"):
            # the relaxation divides by alpha n; relative to ||X||^2 it must not vanish
            rel = alpha / max(np.ldexp(max_x, -self._ex) ** 2, 1e-300)
            if not rel > 1e-200:
                raise ValueError(
                    f"solver={self.solver!r} needs alpha > 0, and not negligible against "
                    f"the scale of X (the Frank-Wolfe relaxation divides by alpha): got "
                    f"alpha={self.alpha!r} with max |X| = {max_x:.3g}; use solver='pg' or a "
                    "larger alpha.")
        return _ldexp(X, -self._ex), _ldexp(Y, -self._ey), alpha

    def _pg_advice(self, X):
        """What a ConvergenceWarning of PG advises: on badly scaled columns (the raw
        breast cancer or digits data) standardizing converges in a few hundred steps where
        thousands are needed otherwise."""
        ratio = _column_scale_ratio(X)
        if ratio > 10.0:
            return (f"the columns of X have standard deviations differing by a factor "
                    f"{ratio:.2g}, which makes the problem ill-conditioned: standardize X "
                    "(e.g. StandardScaler; the clusters are then of the standardized "
                    "weights) or increase max_iter.")
        return "increase max_iter or tol."

    # ------------------------------------------------------------------ features
    def _fit_features(self, X, Y, loss, lam):
        """Fit W (d, K) and b (K,) with the rows of W clustered (X, Y, lam rescaled)."""
        Q, k = min(self.n_clusters, X.shape[1]), self.sparsity  # Q >= d: no constraint
        A = CenteredDesign(X, center=self.fit_intercept)
        intercept = loss == "logistic" and self.fit_intercept
        if loss == "squared":
            y_mean = Y.mean(axis=0) if self.fit_intercept else np.zeros(Y.shape[1])
            Yp = Y - y_mean
        else:
            Yp = Y
        problem = FeatureProblem(X, Yp, lam, loss, intercept, center=self.fit_intercept)
        scale = max(problem.objective(np.zeros((X.shape[1] + intercept, Y.shape[1]))), 1e-300)
        pg_kw = dict(max_iter=self.max_iter, tol=self.tol * scale, verbose=self.verbose,
                     sparsity=k, random_state=self.random_state, advice=self._pg_advice(X))
        Yr = Yp if loss == "squared" else Y - Y.mean(axis=0)  # squared-loss relaxation for FW
        if self.solver in ("fw", "fwpg"):  # refuse before the ridge start, not after
            check_memory(fw_features_nbytes(X.shape[0], Q, self.fw_max_iter),
                         f"{type(self).__name__}(solver={self.solver!r}): Frank-Wolfe on "
                         f"feature clusters (n = {X.shape[0]}, up to fw_max_iter="
                         f"{self.fw_max_iter} atoms of {Q} columns)",
                         "Lower fw_max_iter or use solver='pg'.")
        W0 = _ridge_init(A, Yr, lam)
        n_iter = 0
        if self.solver in ("fw", "fwpg"):
            labels0 = project_kmeans(W0, Q, random_state=self.random_state).labels \
                if W0.shape[1] > 1 else project_clustered(W0[:, 0], Q).labels
            fw = fw_feature_clustering(X, Yr, Q, lam, labels0=labels0,
                                       max_iter=self.fw_max_iter, center=self.fit_intercept,
                                       random_state=self.random_state, verbose=self.verbose)
            self.fw_result_ = fw
            W0 = fw.V[fw.labels]
            n_iter = fw.n_iter
        if intercept:
            W0 = np.vstack([W0, np.zeros((1, Y.shape[1]))])
        if self.solver == "fw":
            if k is not None:  # FW output is not sparse: project it onto the sparse set
                W0 = feature_projector(Q, k, intercept)(W0).point
            W, labels = W0, None
        else:
            res = pg_feature_clustering(problem, Q, W0, **pg_kw)
            self.pg_result_ = res
            W, labels = res.W, res.labels
            n_iter += res.n_iter
        self.n_iter_ = int(n_iter)
        if intercept:  # the intercept was fitted on the centred design
            W, b = W[:-1], W[-1] - A.mean @ W[:-1]
        else:
            b = y_mean - A.mean @ W if loss == "squared" else np.zeros(Y.shape[1])
        W, b = np.ldexp(W, self._ey - self._ex), np.ldexp(b, self._ey)  # undo _rescale
        if labels is None or k is not None:
            labels = self._labels_from_weights(W, k)
        self.cluster_labels_, self.cluster_values_ = _sorted_clusters(W, labels)
        return W, b

    @staticmethod
    def _labels_from_weights(W, k):
        _, labels = np.unique(W, axis=0, return_inverse=True)
        labels = labels.ravel()
        if k is not None:  # the zero value is not a cluster under a sparsity constraint
            zero = np.all(W == 0, axis=1)
            labels = np.where(zero, -1, labels)
        return labels

    # ------------------------------------------------------------------ samples
    def _design(self, X, ones=1.0):
        X = X.toarray() if sp.issparse(X) else X
        return np.hstack([X, np.full((X.shape[0], 1), ones)]) if self.fit_intercept else X

    def _check_samples_memory(self, n, d, K):
        """Refuse, before any work, a solver whose n x n or per-sample arrays do not fit."""
        pg = 4.0 * 8.0 * n * (d + 1) * K  # W, its gradient, the trial point, its projection
        need = {"am": 0.0, "pg": pg, "fw": fw_samples_nbytes(n),
                "fwpg": max(pg, fw_samples_nbytes(n))}[self.solver]
        what = {"pg": "projected gradient with one predictor per sample",
                "fw": f"Frank-Wolfe on sample clusters (n x n matrices, n = {n})",
                "fwpg": f"Frank-Wolfe (n x n matrices, n = {n}) then projected gradient"}
        if need:
            check_memory(need, f"{type(self).__name__}(cluster='samples', "
                         f"solver={self.solver!r}): {what[self.solver]}",
                         "Use solver='am' (alternating minimisation, O(n d) memory) or "
                         "fewer samples.")

    def _fit_samples(self, X, Y, loss, lam):
        """Fit Q experts V (Q, d [+1], K) and the assignment of the training samples
        (X, Y, lam rescaled; the returned experts are in the caller's units)."""
        Q = self.n_clusters
        n, d = X.shape
        self._check_samples_memory(n, d, Y.shape[1])
        # The ones column is rescaled with X (2**-ex), which keeps the intercepts' ridge
        # weight, when X was scaled up (tiny X: the ridge term then dominates the slopes and
        # keeps the solves well posed). Scaled down (huge X) it stays 1: a column 2**-ex
        # times smaller than the rest would look rank deficient to the solves; the
        # intercepts' ridge weight becomes alpha / 4**ex like the slopes'.
        self._ones_scaled = self._ex < 0 and lam > 0
        Xa = self._design(X, np.ldexp(1.0, -self._ex) if self._ones_scaled else 1.0)
        Yr = Y if loss == "squared" else 2.0 * Y - 1.0  # squared relaxation of the labels
        n_iter = 0
        if self.solver == "am":
            rng = check_random_state(self.random_state)
            best = None
            for _ in range(self.n_init):  # random starts: keep the best training loss
                res = alternating_minimization(Xa, Yr, Q, lam, max_iter=self.max_iter,
                                               random_state=rng)
                if best is None or res.loss < best.loss:
                    best = res
            self.n_iter_ = int(best.n_iter)
            return self._unscale_experts(best.V), best.labels
        if self.solver in ("fw", "fwpg"):
            fw = fw_sample_clustering(Xa, Yr, Q, lam, max_iter=self.fw_max_iter,
                                      random_state=self.random_state, verbose=self.verbose)
            self.fw_result_ = fw
            V, labels = fw.V, fw.labels
            n_iter = fw.n_iter
        if self.solver in ("pg", "fwpg"):
            W0 = (np.zeros((n, Xa.shape[1], Y.shape[1])) if self.solver == "pg"
                  else V[labels])
            problem = SampleProblem(Xa, Yr if loss == "squared" else Y, lam, loss)
            scale = max(problem.objective(np.zeros_like(W0)), 1e-300)
            res = pg_sample_clustering(problem, Q, W0, random_state=self.random_state,
                                       max_iter=self.max_iter, tol=self.tol * scale,
                                       verbose=self.verbose)
            self.pg_result_ = res
            labels, V = res.labels, res.centers
            n_iter += res.n_iter
        if V.shape[0] < Q:  # fewer distinct predictors than Q: pad with copies
            V = np.concatenate([V, np.repeat(V[:1], Q - V.shape[0], axis=0)])
        if self.refine:
            am = alternating_minimization(Xa, Yr, Q, lam, labels0=labels,
                                          max_iter=self.max_iter,
                                          random_state=self.random_state)
            V, labels = am.V, am.labels
            n_iter += am.n_iter
        self.n_iter_ = int(n_iter)
        return self._unscale_experts(V), labels

    def _unscale_experts(self, V):
        """Experts fitted on (X / 2**ex, ones) and Y / 2**ey, in the units of (X, 1), Y."""
        V = np.ldexp(V, self._ey)
        if self.fit_intercept and not self._ones_scaled:
            V[:, :-1] = np.ldexp(V[:, :-1], -self._ex)
        else:
            V = np.ldexp(V, -self._ex)
        return V

    def _expert_scores(self, X):
        """Scores of every expert, shape (n, Q, K)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        Xa = self._design(X)
        return np.einsum("id,qdk->iqk", Xa, self.experts_)

    def _store_experts(self, V, labels):
        self.experts_ = V
        self.cluster_labels_ = np.asarray(labels, dtype=np.int64)
        W = V[:, :-1] if self.fit_intercept else V
        b = V[:, -1] if self.fit_intercept else np.zeros((V.shape[0], V.shape[2]))
        sizes = np.bincount(self.cluster_labels_, minlength=V.shape[0])
        self.cluster_sizes_ = sizes
        self.default_expert_ = int(np.argmax(sizes))
        return W, b

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.cluster == "features"
        return tags


class ClusteredRegressor(RegressorMixin, _ClusteredBase):
    """Least-squares regression with clustered features or clustered samples.

    Features (paper eq. (2)): ``min (1/(2n))||y - Xw - b||^2 + (alpha/2)||w||^2`` subject to
    w taking at most ``n_clusters`` distinct values (and at most ``sparsity`` non-zeros).
    Samples (paper eq. (3)): ``min (1/(2n)) sum_q sum_{i in G_q} (y_i - v_q^T x_i - c_q)^2
    + (alpha/2) sum_q s_q ||v_q||^2`` over partitions G of the training samples; prediction
    returns the Q experts' answers.

    Samples whose target is NaN are unlabeled: they are dropped from the fit (the method is
    supervised), so ``fit`` accepts the partially labeled data of a semi-supervised problem.
    ``-1`` is an ordinary target here.

    Parameters
    ----------
    n_clusters : int, default=5
        Q, the number of distinct weights (features) or of experts (samples). Features:
        ``n_clusters >= n_features`` leaves the weights unconstrained (ridge regression).
        Samples: must not exceed the number of labeled samples (ValueError).
    cluster : {"features", "samples"}, default="features"
    sparsity : int or None, default=None
        k: at most k non-zero weights (features only, k >= Q); exact projection of §5.1.
    solver : {"pg", "fw", "fwpg", "am"}, default="pg"
        "pg" projected gradient with backtracking (Algorithm 3) started from LSK;
        "fw" Frank–Wolfe (conditional gradient, the paper's "CG") on equivalence matrices
        (Algorithm 2), rounded to the visited partition with the smallest relaxed objective
        (the paper's last-oracle rounding is ``fw_feature_clustering(..., rounding="last")``);
        "fwpg" Frank–Wolfe then projected gradient (the paper's "CGPG"); "am" alternating
        minimisation from random starts (samples only).
    alpha : float, default=1e-3
        lambda, weight of the ridge term (alpha/2)||w||^2 (> 0 for "fw"/"fwpg"), >= 0 and
        finite.
    fit_intercept : bool, default=True
        Features: centre X and y (X implicitly, sparse stays sparse). Samples: one
        intercept per expert (a column of ones, penalised with the rest).
    max_iter : int, default=5000
        Accepted PG steps / AM iterations.
    tol : float, default=1e-8
        PG stops when an accepted step changes the objective by less than tol times its
        value at 0.
    fw_max_iter : int, default=200
        Frank–Wolfe iterations (it stops earlier when the duality gap is below 1e-8).
    refine : bool, default=True
        Samples: refine PG/FW output by alternating minimisation (as in the paper).
    n_init : int, default=3
        Samples: random starts of AM; k-means++ restarts of the sample projections.
    random_state : int, RandomState instance or None, default=None
        Seed of the random starts and of the k-means++ projections.
    verbose : bool or int, default=False
        Report the solvers' progress on stderr.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) for features, (n_clusters, n_features) for samples
    intercept_ : float (features) or ndarray of shape (n_clusters,) (samples)
    cluster_labels_ : ndarray of int
        Cluster of each feature (-1 for a zero weight under ``sparsity``), or of each
        labeled training sample; clusters of features are numbered by increasing value.
    cluster_values_ : ndarray
        Features: the distinct non-zero weight values (ascending). Samples: the experts'
        coefficients (same as ``coef_``).
    experts_ : ndarray of shape (n_clusters, n_features [+ 1], 1)
        Samples: the experts, the intercept last when ``fit_intercept``.
    cluster_sizes_ : ndarray of shape (n_clusters,)
        Samples: training samples per expert.
    default_expert_ : int
        Samples: the expert of the largest group, used by ``predict`` without ``y``.
    n_iter_ : int
        Iterations of all the solver stages run.
    fw_result_, pg_result_ : FWResult, PGResult
        Raw solver outputs (solvers "fw"/"fwpg", "pg"/"fwpg"), in the internal units of a
        rescaled problem when X or y had magnitudes beyond 1e100 (see Notes).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has feature names that are all strings.

    Notes
    -----
    Constant features have zero centred columns: they never affect predictions and receive
    the value of whichever cluster the projection puts them in (0 when ``sparsity`` is set
    and the budget binds). Cost per PG iteration: O(nnz(X)) plus the exact projection
    O(Q d log d) (features) or k-means of n points in R^d (samples). Frank–Wolfe keeps
    n x n matrices (samples; ``solver="am"`` needs O(n d)) or, for features beyond 1500
    samples, up to ``fw_max_iter`` blocks of n x Q; a solver whose memory does not fit is
    refused with a ``MemoryError`` before any work.

    X (and y) whose largest magnitude is above 1e100 or below 1e-100 is rescaled internally
    by a power of two, with alpha rescaled to keep the same problem: the fit is that of the
    data as given, without the overflow of ``X^T X`` (with ``cluster="samples"`` and X
    above 1e100 the experts' intercepts keep their unit scale, so their ridge weight is
    rescaled with alpha, to a negligible value). An alpha that becomes negligible at the
    scale of X acts as 0 (Frank–Wolfe then refuses it); one that overflows (tiny X) is
    refused with a ValueError.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.clustering import ClusteredRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 6))
    >>> y = X @ np.array([2.0, 2.0, 2.0, -1.0, -1.0, -1.0]) + 0.01 * rng.standard_normal(100)
    >>> y[::4] = np.nan                                   # NaN: unlabeled, ignored
    >>> reg = ClusteredRegressor(n_clusters=2).fit(X, y)
    >>> reg.cluster_labels_
    array([1, 1, 1, 0, 0, 0])
    >>> np.round(reg.cluster_values_, 1)
    array([-1.,  2.])
    """

    _y_numeric = True
    # read by semisup.model_selection.labeled_scorer (scikit-learn >= 1.8 dropped it)
    _estimator_type = "regressor"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the clustered model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input is accepted with ``cluster="features"``.
        y : array-like of shape (n_samples,)
            Targets; NaN marks an unlabeled sample (dropped from the fit).

        Returns
        -------
        self
        """
        X = self._validate_X(X, reset=True)
        y, labeled = _check_regression_target(y, X.shape[0], "ClusteredRegressor")
        if not labeled.all():
            X, y = X[labeled], y[labeled]
        self._check_combination(*X.shape)
        X, Y, lam = self._rescale(X, y.reshape(-1, 1))
        if self.cluster == "features":
            W, b = self._fit_features(X, Y, "squared", lam)
            self.coef_, self.intercept_ = W[:, 0], float(b[0])
            self.cluster_values_ = self.cluster_values_[:, 0]
        else:
            W, b = self._store_experts(*self._fit_samples(X, Y, "squared", lam))
            self.coef_, self.intercept_ = W[:, :, 0], b[:, 0]
            self.cluster_values_ = self.coef_
        return self

    def predict(self, X, return_all=False, y=None):
        """Predict targets.

        Features: ``X @ coef_ + intercept_``. Samples: the Q experts' answers with
        ``return_all=True`` (n, Q); with ``y`` given, the answer of the best expert per
        sample (the evaluation rule (16); the default expert where ``y`` is NaN); otherwise
        the expert of the largest training group (the features alone do not identify the
        expert).
        """
        if self.cluster == "features":
            check_is_fitted(self)
            X = self._validate_X(X, reset=False)
            return np.asarray(X @ self.coef_).ravel() + self.intercept_
        F = self._expert_scores(X)[:, :, 0]
        if return_all:
            return F
        if y is not None:
            y = np.asarray(y, dtype=np.float64)
            known = ~np.isnan(y)
            best = np.argmin((F - np.where(known, y, 0.0)[:, None]) ** 2, axis=1)
            return F[np.arange(F.shape[0]), np.where(known, best, self.default_expert_)]
        return F[:, self.default_expert_]

    def score(self, X, y, sample_weight=None):
        """R^2 of ``predict(X)`` over the labeled samples (NaN targets are ignored)."""
        y = np.asarray(y, dtype=np.float64)
        known = ~np.isnan(y)
        if not known.any():
            raise ValueError("y has no labeled target to score (all are NaN).")
        y_pred = self.predict(X)
        w = None if sample_weight is None else np.asarray(sample_weight)[known]
        return float(r2_score(y[known], y_pred[known], sample_weight=w))

    def best_of_q_mse(self, X, y, half=True):
        """Best-of-Q mean squared error (paper eq. (16)) over the labeled samples (NaN
        targets ignored); ``half`` includes the factor 1/2."""
        y = np.asarray(y, dtype=np.float64)
        known = ~np.isnan(y)
        F = self.predict(X, return_all=True)[known]
        err = np.min((F - y[known][:, None]) ** 2, axis=1)
        return float((0.5 if half else 1.0) * err.mean())


class ClusteredClassifier(ClassifierMixin, _ClusteredBase):
    """Classification with clustered features or clustered samples (paper appendix 7.1).

    Features: binary problems use one weight vector (exact 1-D projection); K >= 3 classes
    use W (d x K) whose d rows take at most Q values (k-means++ projection in R^K).
    Samples: Q experts, each a d x K (or d x 1) classifier.

    Points labeled ``-1`` are unlabeled (the library's convention): they are dropped from
    the fit (the method is supervised) and ignored by ``score``.

    Parameters
    ----------
    n_clusters : int, default=5
        Q, the number of distinct weight rows (features; ``n_clusters >= n_features``
        leaves them unconstrained) or of experts (samples).
    cluster : {"features", "samples"}, default="features"
    loss : {"logistic", "squared"}, default="logistic"
        Logistic (binary or multinomial) or squared loss on {0,1} indicators. "fw" needs the
        squared loss; "fwpg" runs Frank–Wolfe on the squared-loss relaxation, then PG on
        ``loss``.
    sparsity, solver, alpha, fit_intercept, max_iter, tol, fw_max_iter, refine, n_init, \
random_state, verbose :
        As in :class:`ClusteredRegressor` (``sparsity`` needs two classes).

    Attributes
    ----------
    classes_ : ndarray
        Classes of the labeled points.
    coef_ : ndarray of shape (1 or K, n_features) (features) or (Q, 1 or K, n_features)
    intercept_ : ndarray of shape (1 or K,) or (Q, 1 or K)
    cluster_labels_, cluster_values_ (Q, 1 or K), experts_, cluster_sizes_, \
default_expert_, n_iter_, fw_result_, pg_result_, n_features_in_, feature_names_in_ :
        As in :class:`ClusteredRegressor`.

    Notes
    -----
    On badly scaled X (column scales differing by orders of magnitude, e.g. the raw breast
    cancer or digits data) projected gradient converges slowly (thousands of steps) and
    stops at ``max_iter`` with a ConvergenceWarning that says so; standardizing X is the
    remedy (60 and 300 steps on those data sets). It is not done internally: the weights,
    hence their clusters, are not invariant to the scale of each feature.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.clustering import ClusteredClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 6))
    >>> y = (X @ np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]) > 0).astype(int)
    >>> y[100:] = -1                                     # -1: unlabeled, ignored
    >>> clf = ClusteredClassifier(n_clusters=2).fit(X, y)
    >>> clf.cluster_labels_
    array([1, 1, 1, 0, 0, 0])
    >>> clf.score(X, y) > 0.9                            # over the labeled points
    True
    """

    _y_numeric = False
    _estimator_type = "classifier"  # as ClusteredRegressor's

    _parameter_constraints: dict = {
        **_ClusteredBase._parameter_constraints,
        "loss": [StrOptions({"logistic", "squared"})],
    }

    def __init__(self, n_clusters=5, *, cluster="features", loss="logistic", sparsity=None,
                 solver="pg", alpha=1e-3, fit_intercept=True, max_iter=5000, tol=1e-8,
                 fw_max_iter=200, refine=True, n_init=3, random_state=None, verbose=False):
        super().__init__(n_clusters, cluster=cluster, sparsity=sparsity, solver=solver,
                         alpha=alpha, fit_intercept=fit_intercept, max_iter=max_iter, tol=tol,
                         fw_max_iter=fw_max_iter, refine=refine, n_init=n_init,
                         random_state=random_state, verbose=verbose)
        self.loss = loss

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the clustered classifier.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input is accepted with ``cluster="features"``.
        y : array-like of shape (n_samples,)
            Class labels, at least two classes; ``-1`` marks an unlabeled point (dropped).

        Returns
        -------
        self
        """
        X = self._validate_X(X, reset=True)
        y, classes, labeled = check_semisup_labels(y, X.shape[0],
                                                   estimator="ClusteredClassifier")
        if not labeled.all():
            X, y = X[labeled], y[labeled]
        self._check_combination(*X.shape)
        if self.solver == "fw" and self.loss != "squared" and self.cluster == "features":
            raise ValueError("solver='fw' solves the squared loss only; use loss='squared' or "
                             "solver='fwpg' (Frank-Wolfe on the squared relaxation, then "
                             "logistic PG).")
        self.classes_ = classes
        K = classes.size
        if self.sparsity is not None and K > 2:
            raise ValueError("sparsity needs a single weight vector: binary classification "
                             f"only (got {K} classes).")
        codes = np.searchsorted(classes, y)
        Y = codes.reshape(-1, 1).astype(np.float64) if K == 2 else np.eye(K)[codes]
        X, Y, lam = self._rescale(X, Y)
        if self.cluster == "features":
            W, b = self._fit_features(X, Y, self.loss, lam)
            self.coef_, self.intercept_ = W.T, b
        else:
            W, b = self._store_experts(*self._fit_samples(X, Y, self.loss, lam))
            self.coef_, self.intercept_ = np.transpose(W, (0, 2, 1)), b
            self.cluster_values_ = self.coef_
        return self

    def decision_function(self, X, return_all=False):
        """Scores (n,) or (n, K); samples: the default expert's, or (n, Q[, K]) when ``return_all``."""
        if self.cluster == "features":
            check_is_fitted(self)
            X = self._validate_X(X, reset=False)
            F = np.asarray(X @ self.coef_.T) + self.intercept_
        else:
            F = self._expert_scores(X)
            if not return_all:
                F = F[:, self.default_expert_]
        return F[..., 0] if F.shape[-1] == 1 else F

    def _to_class(self, F):
        if self.classes_.size == 2:
            thr = 0.0 if self.loss == "logistic" else 0.5
            return self.classes_[(F > thr).astype(int)]
        return self.classes_[np.argmax(F, axis=-1)]

    def predict(self, X, return_all=False, y=None):
        """Class labels; samples: all Q experts' labels (n, Q) with ``return_all``, the
        correct one when any expert is right and ``y`` is given, else the default expert's."""
        if self.cluster == "features":
            return self._to_class(self.decision_function(X))
        P = self._to_class(self.decision_function(X, return_all=True))
        if return_all:
            return P
        if y is not None:
            hit = P == np.asarray(y)[:, None]
            pick = np.where(hit.any(axis=1), np.argmax(hit, axis=1), self.default_expert_)
            return P[np.arange(P.shape[0]), pick]
        return P[:, self.default_expert_]

    def score(self, X, y, sample_weight=None):
        """Accuracy of ``predict(X)`` over the labeled entries of ``y`` (``-1`` ignored)."""
        y = np.asarray(y)
        y_pred = self.predict(X)
        if sample_weight is None:
            return labeled_accuracy(y, y_pred)
        mask = _labeled_mask(y)
        if not mask.any():
            raise ValueError("y has no labeled entry to score (all are -1).")
        w = np.asarray(sample_weight, dtype=np.float64)[mask]
        return float(np.average(y[mask] == y_pred[mask], weights=w))

    def _has_proba(self):
        return self.loss == "logistic" and self.cluster == "features"

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities of the logistic model (features only)."""
        F = self.decision_function(X)
        if F.ndim == 1:
            p = expit(F)
            return np.column_stack([1 - p, p])
        return softmax(F, axis=1)
