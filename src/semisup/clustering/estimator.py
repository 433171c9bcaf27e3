"""``ClusteredRegressor`` and ``ClusteredClassifier``: linear models with clustering constraints.

``cluster="features"`` (paper §2.1, eq. (2)): the weights take at most ``n_clusters``
distinct values (optionally with at most ``sparsity`` non-zeros, §5), so features are
grouped (e.g. synonyms in text). ``cluster="samples"`` (§2.2, eq. (3)): the training samples
are split into ``n_clusters`` groups, each with its own linear "expert"; at test time the
model returns the Q answers (the features alone do not tell which expert applies).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, lsqr
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_memory
from .alternating import alternating_minimization
from .frank_wolfe import cg_feature_clustering, cg_sample_clustering
from .problems import CenteredDesign, FeatureProblem, SampleProblem
from .projected_gradient import feature_projector, pg_feature_clustering, pg_sample_clustering
from .projections import project_clustered, project_kmeans

__all__ = ["ClusteredRegressor", "ClusteredClassifier"]

_SOLVERS = ("pg", "cg", "cgpg", "am")


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
    """Renumber clusters by increasing value (first column) so labels_ are reproducible."""
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


class _ClusteredBase(BaseEstimator):
    """Shared parameters, validation and the two fitting paths."""

    def __init__(self, n_clusters=5, *, cluster="features", sparsity=None, solver="pg",
                 alpha=1e-3, fit_intercept=True, max_iter=500, tol=1e-8, cg_max_iter=200,
                 refine=True, n_init=3, random_state=None, verbose=False):
        self.n_clusters = n_clusters
        self.cluster = cluster
        self.sparsity = sparsity
        self.solver = solver
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.cg_max_iter = cg_max_iter
        self.refine = refine
        self.n_init = n_init
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ validation
    def _check_params(self, n_samples, n_features):
        if self.cluster not in ("features", "samples"):
            raise ValueError(f"cluster must be 'features' or 'samples', got {self.cluster!r}.")
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}, got {self.solver!r}.")
        Q = self.n_clusters
        if not isinstance(Q, numbers.Integral) or Q < 1:
            raise ValueError(f"n_clusters must be a positive integer, got {Q!r}.")
        m, what = (n_features, "features") if self.cluster == "features" else (n_samples, "samples")
        if Q > m:
            raise ValueError(f"n_clusters={Q} exceeds the number of {what} ({m}); "
                             f"at most {m} clusters of {what} exist.")
        if not isinstance(self.alpha, numbers.Real) or self.alpha < 0:
            raise ValueError(f"alpha must be a non-negative number, got {self.alpha!r}.")
        if self.solver in ("cg", "cgpg") and self.alpha <= 0:
            raise ValueError("solver='cg'/'cgpg' needs alpha > 0 (the relaxation divides by it).")
        if self.sparsity is not None:
            k = self.sparsity
            if self.cluster != "features":
                raise ValueError("sparsity applies to cluster='features' only.")
            if not isinstance(k, numbers.Integral) or k < Q:
                raise ValueError(f"sparsity={k!r} must be an integer >= n_clusters={Q} "
                                 "(k non-zeros cannot take more than k values).")
            if k > n_features:
                raise ValueError(f"sparsity={k} exceeds n_features={n_features}.")
            if self.solver == "am":
                raise ValueError("solver='am' applies to cluster='samples' only.")
        if self.cluster == "features" and self.solver == "am":
            raise ValueError("solver='am' (alternating minimisation) applies to "
                             "cluster='samples'; use 'pg', 'cg' or 'cgpg' for features.")

    def _validate_X(self, X, reset):
        sparse = ["csr", "csc"] if self.cluster == "features" else False
        return validate_data(self, X, accept_sparse=sparse, dtype=np.float64, reset=reset)

    def _validate_Xy(self, X, y):
        sparse = ["csr", "csc"] if self.cluster == "features" else False
        return validate_data(self, X, y, accept_sparse=sparse, dtype=np.float64, reset=True,
                             y_numeric=self._y_numeric)

    # ------------------------------------------------------------------ features
    def _fit_features(self, X, Y, loss):
        """Fit W (d, K) and b (K,) with the rows of W clustered."""
        Q, lam, k = self.n_clusters, float(self.alpha), self.sparsity
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
                     sparsity=k, random_state=self.random_state)
        Yr = Yp if loss == "squared" else Y - Y.mean(axis=0)  # squared-loss relaxation for CG
        W0 = _ridge_init(A, Yr, lam)
        self.n_iter_ = 0
        if self.solver in ("cg", "cgpg"):
            labels0 = project_kmeans(W0, Q, random_state=self.random_state).labels \
                if W0.shape[1] > 1 else project_clustered(W0[:, 0], Q).labels
            cg = cg_feature_clustering(X, Yr, Q, lam, labels0=labels0,
                                       max_iter=self.cg_max_iter, center=self.fit_intercept,
                                       random_state=self.random_state, verbose=self.verbose)
            self.cg_result_ = cg
            W0 = cg.V[cg.labels]
            self.n_iter_ = cg.n_iter
        if intercept:
            W0 = np.vstack([W0, np.zeros((1, Y.shape[1]))])
        if self.solver == "cg":
            if k is not None:  # CG output is not sparse: project it onto the sparse set
                W0 = feature_projector(Q, k, intercept)(W0).point
            W, labels = W0, None
        else:
            res = pg_feature_clustering(problem, Q, W0, **pg_kw)
            self.pg_result_ = res
            W, labels = res.W, res.labels
            self.n_iter_ += res.n_iter
        if intercept:  # the intercept was fitted on the centred design
            W, b = W[:-1], W[-1] - A.mean @ W[:-1]
        else:
            b = y_mean - A.mean @ W if loss == "squared" else np.zeros(Y.shape[1])
        if labels is None or k is not None:
            labels = self._labels_from_weights(W, k)
        self.labels_, self.cluster_values_ = _sorted_clusters(W, labels)
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
    def _design(self, X):
        X = X.toarray() if sp.issparse(X) else X
        return np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X

    def _fit_samples(self, X, Y, loss):
        """Fit Q experts V (Q, d [+1], K) and the assignment of the training samples."""
        Q, lam = self.n_clusters, float(self.alpha)
        n, d = X.shape
        check_memory(8.0 * n * (d + 1) * Y.shape[1] * 4, "per-sample predictors",
                     "use fewer samples or solver='am'.")
        Xa = self._design(X)
        Yr = Y if loss == "squared" else 2.0 * Y - 1.0  # squared relaxation of the labels
        am_kw = dict(max_iter=self.max_iter, random_state=self.random_state)
        self.n_iter_ = 0
        if self.solver == "am":
            rng = check_random_state(self.random_state)
            best = None
            for _ in range(max(1, self.n_init)):  # random starts: keep the best training loss
                res = alternating_minimization(Xa, Yr, Q, lam, max_iter=self.max_iter,
                                               random_state=rng)
                if best is None or res.loss < best.loss:
                    best = res
            self.n_iter_ = best.n_iter
            return best.V, best.labels
        if self.solver in ("cg", "cgpg"):
            cg = cg_sample_clustering(Xa, Yr, Q, lam, max_iter=self.cg_max_iter,
                                      random_state=self.random_state, verbose=self.verbose)
            self.cg_result_ = cg
            V, labels = cg.V, cg.labels
            self.n_iter_ = cg.n_iter
        if self.solver in ("pg", "cgpg"):
            W0 = (np.zeros((n, Xa.shape[1], Y.shape[1])) if self.solver == "pg"
                  else V[labels])
            problem = SampleProblem(Xa, Yr if loss == "squared" else Y, lam, loss)
            scale = max(problem.objective(np.zeros_like(W0)), 1e-300)
            res = pg_sample_clustering(problem, Q, W0, random_state=self.random_state,
                                       max_iter=self.max_iter, tol=self.tol * scale,
                                       verbose=self.verbose)
            self.pg_result_ = res
            labels, V = res.labels, res.centers
            self.n_iter_ += res.n_iter
        if V.shape[0] < Q:  # fewer distinct predictors than Q: pad with copies
            V = np.concatenate([V, np.repeat(V[:1], Q - V.shape[0], axis=0)])
        if self.refine:
            am = alternating_minimization(Xa, Yr, Q, lam, labels0=labels, **am_kw)
            V, labels = am.V, am.labels
            self.n_iter_ += am.n_iter
        return V, labels

    def _expert_scores(self, X):
        """Scores of every expert, shape (n, Q, K)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        Xa = self._design(X)
        return np.einsum("id,qdk->iqk", Xa, self.experts_)

    def _store_experts(self, V, labels):
        self.experts_ = V
        self.labels_ = np.asarray(labels, dtype=np.int64)
        W = V[:, :-1] if self.fit_intercept else V
        b = V[:, -1] if self.fit_intercept else np.zeros((V.shape[0], V.shape[2]))
        sizes = np.bincount(self.labels_, minlength=V.shape[0])
        self.cluster_sizes_ = sizes
        self.default_expert_ = int(np.argmax(sizes))
        return W, b


class ClusteredRegressor(RegressorMixin, _ClusteredBase):
    """Least-squares regression with clustered features or clustered samples.

    Features (paper eq. (2)): ``min (1/(2n))||y - Xw - b||^2 + (alpha/2)||w||^2`` subject to
    w taking at most ``n_clusters`` distinct values (and at most ``sparsity`` non-zeros).
    Samples (paper eq. (3)): ``min (1/(2n)) sum_q sum_{i in G_q} (y_i - v_q^T x_i - c_q)^2
    + (alpha/2) sum_q s_q ||v_q||^2`` over partitions G of the training samples; prediction
    returns the Q experts' answers.

    Parameters
    ----------
    n_clusters : int, default=5
        Q, the number of distinct weights (features) or of experts (samples). Must not
        exceed the number of features / samples (ValueError).
    cluster : {"features", "samples"}, default="features"
    sparsity : int or None, default=None
        k: at most k non-zero weights (features only, k >= Q); exact projection of §5.1.
    solver : {"pg", "cg", "cgpg", "am"}, default="pg"
        "pg" projected gradient with backtracking (Algorithm 3) started from LSK;
        "cg" Frank–Wolfe on equivalence matrices (Algorithm 2), rounded to the visited
        partition with the smallest relaxed objective (the paper's last-oracle rounding is
        ``cg_feature_clustering(..., rounding="last")``);
        "cgpg" CG then PG; "am" alternating minimisation from random starts (samples only).
    alpha : float, default=1e-3
        lambda, weight of the ridge term (alpha/2)||w||^2 (> 0 for "cg"/"cgpg").
    fit_intercept : bool, default=True
        Features: centre X and y (X implicitly, sparse stays sparse). Samples: one
        intercept per expert (a column of ones, penalised with the rest).
    max_iter : int, default=500
        Accepted PG steps / AM iterations.
    tol : float, default=1e-8
        PG stops when an accepted step changes the objective by less than tol times its
        value at 0.
    cg_max_iter : int, default=200
        Frank–Wolfe iterations (it stops earlier when the duality gap is below 1e-8).
    refine : bool, default=True
        Samples: refine PG/CG output by alternating minimisation (as in the paper).
    n_init : int, default=3
        Samples: random starts of AM; k-means++ restarts of the sample projections.
    random_state : int, RandomState or None
    verbose : bool

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) for features, (n_clusters, n_features) for samples
    intercept_ : float (features) or ndarray of shape (n_clusters,) (samples)
    labels_ : ndarray
        Cluster of each feature (-1 for a zero weight under ``sparsity``), or of each
        training sample; clusters of features are numbered by increasing value.
    cluster_values_ : ndarray
        Features: the distinct non-zero weight values (ascending). Samples: the experts'
        coefficients (same as ``coef_``).
    n_iter_ : int

    Notes
    -----
    Constant features have zero centred columns: they never affect predictions and receive
    the value of whichever cluster the projection puts them in (0 when ``sparsity`` is set
    and the budget binds). Cost per PG iteration: O(nnz(X)) plus the exact projection
    O(Q d log d) (features) or k-means of n points in R^d (samples).
    """

    _y_numeric = True

    def fit(self, X, y):
        """Fit the clustered model; ``y`` of shape (n_samples,)."""
        X, y = self._validate_Xy(X, y)
        self._check_params(*X.shape)
        Y = np.asarray(y, dtype=np.float64).reshape(-1, 1)
        if self.cluster == "features":
            W, b = self._fit_features(X, Y, "squared")
            self.coef_, self.intercept_ = W[:, 0], float(b[0])
            self.cluster_values_ = self.cluster_values_[:, 0]
        else:
            W, b = self._store_experts(*self._fit_samples(X, Y, "squared"))
            self.coef_, self.intercept_ = W[:, :, 0], b[:, 0]
            self.cluster_values_ = self.coef_
        return self

    def predict(self, X, return_all=False, y=None):
        """Predict targets.

        Features: ``X @ coef_ + intercept_``. Samples: the Q experts' answers with
        ``return_all=True`` (n, Q); with ``y`` given, the answer of the best expert per
        sample (the evaluation rule (16)); otherwise the expert of the largest training
        group (the features alone do not identify the expert).
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
            return F[np.arange(F.shape[0]), np.argmin((F - y[:, None]) ** 2, axis=1)]
        return F[:, self.default_expert_]

    def best_of_q_mse(self, X, y, half=True):
        """Best-of-Q mean squared error (paper eq. (16)); ``half`` includes the factor 1/2."""
        F = self.predict(X, return_all=True)
        err = np.min((F - np.asarray(y, dtype=np.float64)[:, None]) ** 2, axis=1)
        return float((0.5 if half else 1.0) * err.mean())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.cluster == "features"
        return tags


class ClusteredClassifier(ClassifierMixin, _ClusteredBase):
    """Classification with clustered features or clustered samples (paper appendix 7.1).

    Features: binary problems use one weight vector (exact 1-D projection); K >= 3 classes
    use W (d x K) whose d rows take at most Q values (k-means++ projection in R^K).
    Samples: Q experts, each a d x K (or d x 1) classifier.

    Parameters
    ----------
    loss : {"logistic", "squared"}, default="logistic"
        Logistic (binary or multinomial) or squared loss on {0,1} indicators. "cg" needs the
        squared loss; "cgpg" runs CG on the squared-loss relaxation, then PG on ``loss``.
    Other parameters are those of :class:`ClusteredRegressor`.

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray of shape (1 or K, n_features) (features) or (Q, 1 or K, n_features)
    intercept_ : ndarray of shape (1 or K,) or (Q, 1 or K)
    labels_, cluster_values_ (Q, 1 or K), n_iter_ : as in :class:`ClusteredRegressor`.
    """

    _y_numeric = False

    def __init__(self, n_clusters=5, *, cluster="features", loss="logistic", sparsity=None,
                 solver="pg", alpha=1e-3, fit_intercept=True, max_iter=500, tol=1e-8,
                 cg_max_iter=200, refine=True, n_init=3, random_state=None, verbose=False):
        super().__init__(n_clusters, cluster=cluster, sparsity=sparsity, solver=solver,
                         alpha=alpha, fit_intercept=fit_intercept, max_iter=max_iter, tol=tol,
                         cg_max_iter=cg_max_iter, refine=refine, n_init=n_init,
                         random_state=random_state, verbose=verbose)
        self.loss = loss

    def fit(self, X, y):
        """Fit the clustered classifier; ``y`` holds at least two classes."""
        X, y = self._validate_Xy(X, y)
        self._check_params(*X.shape)
        if self.loss not in ("logistic", "squared"):
            raise ValueError(f"loss must be 'logistic' or 'squared', got {self.loss!r}.")
        if self.solver == "cg" and self.loss != "squared" and self.cluster == "features":
            raise ValueError("solver='cg' solves the squared loss only; use loss='squared' or "
                             "solver='cgpg' (CG on the squared relaxation, then logistic PG).")
        check_classification_targets(y)
        enc = LabelEncoder().fit(y)
        self.classes_ = enc.classes_
        if self.classes_.size < 2:
            raise ValueError(f"y has only one class ({self.classes_[0]!r}); a classifier needs "
                             "at least two.")
        codes = enc.transform(y)
        K = self.classes_.size
        if self.sparsity is not None and K > 2:
            raise ValueError("sparsity needs a single weight vector: binary classification "
                             f"only (got {K} classes).")
        Y = codes.reshape(-1, 1).astype(np.float64) if K == 2 else np.eye(K)[codes]
        if self.cluster == "features":
            W, b = self._fit_features(X, Y, self.loss)
            self.coef_, self.intercept_ = W.T, b
        else:
            W, b = self._store_experts(*self._fit_samples(X, Y, self.loss))
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.cluster == "features"
        return tags
