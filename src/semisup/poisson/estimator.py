"""PoissonLearning and PoissonMBO: graph learning at very low label rates.

Calder, Cook, Thorpe & Slepčev (2020), "Poisson Learning: Graph Based Semi-Supervised
Learning at Very Low Label Rates", ICML. Both estimators take the shared graph parameters
(:mod:`semisup.graph.frontend`); the solvers are :func:`semisup.poisson.solve.poisson_solve`
and :func:`semisup.poisson.mbo.poisson_mbo`.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import SemiSupervisedMixin, _fit_context, _store_init_params
from .._progress import log
from .._validation import check_semisup_labels, divide, warn_convergence
from ..graph import connected_components
from ..graph.frontend import GRAPH_PARAMETER_CONSTRAINTS, GraphMixin
from .mbo import poisson_mbo
from .solve import PoissonResult, poisson_solve, poisson_source

__all__ = ["PoissonLearning", "PoissonMBO"]


def _class_priors(class_priors, label_fractions):
    """The class fractions ``b`` from the ``class_priors`` parameter."""
    K = label_fractions.size
    if isinstance(class_priors, str):
        return label_fractions.copy() if class_priors == "labels" else np.full(K, 1.0 / K)
    b = np.asarray(class_priors, dtype=np.float64).ravel()
    if b.size != K:
        raise ValueError(f"class_priors has {b.size} entries but y has {K} classes; give "
                         "one prior per class, in the order of classes_.")
    if not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError("class_priors must be positive and finite.")
    return b / b.sum()


class _PoissonBase(SemiSupervisedMixin, GraphMixin, ClassifierMixin, BaseEstimator):
    """Shared fit steps and the out-of-sample rule of the two Poisson estimators."""

    _parameter_constraints = {
        **GRAPH_PARAMETER_CONSTRAINTS,
        "class_priors": [StrOptions({"labels", "uniform"}), "array-like"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    def _poisson(self, X, y):
        """Validate, build the graph, solve the Poisson equation; set the common attributes.

        Returns ``(W, res, labeled_idx, y_idx)``.
        """
        name = type(self).__name__
        y = check_semisup_labels(self._host_labels(y), estimator=name)[0]  # before the graph
        t0 = time.perf_counter()
        W, _ = self._fit_graph(X)
        n = W.shape[0]
        y, classes, labeled = check_semisup_labels(y, n, estimator=name)
        log(f"[{name}] graph: {n} points, {W.nnz // 2} edges "
            f"({time.perf_counter() - t0:.2f} s)", self.verbose)
        K = classes.size
        labeled_idx = np.flatnonzero(labeled)
        y_idx = np.searchsorted(classes, y[labeled_idx])
        fractions = np.bincount(y_idx, minlength=K) / labeled_idx.size
        self.classes_ = classes
        self.class_priors_ = _class_priors(self.class_priors, fractions)
        solve = getattr(self._engine(), "poisson_solve", None)
        if solve is None:
            res = poisson_solve(W, labeled_idx, y_idx, K, tol=self.tol,
                                max_iter=self.max_iter)
        else:   # the engine's CG where the graph lives (e.g. on the GPU)
            U, n_iter, converged, unreached = solve(W, labeled_idx, y_idx, K, tol=self.tol,
                                                    max_iter=self.max_iter)
            res = PoissonResult(U, unreached, n_iter, converged, None)
        log(f"[{name}] Poisson solve: {res.n_iter} CG iterations, converged="
            f"{res.converged} ({time.perf_counter() - t0:.2f} s)", self.verbose)
        if not res.converged:
            at = "" if res.residual is None else f" at relative residual {res.residual:.2g}"
            warn_convergence(f"{name}: CG stopped after {res.n_iter} iterations{at} before "
                             f"reaching tol={self.tol:g}; increase max_iter or tol.",
                             stacklevel=4)
        if res.unreached.size:
            warnings.warn(f"{res.unreached.size} unlabeled point(s) lie in graph components "
                          "without any labeled point (isolated points included); their "
                          "scores are zero and they get the first class. Increase "
                          "n_neighbors or label a point in each component.", UserWarning,
                          stacklevel=4)
        self.n_iter_ = int(res.n_iter)
        self.converged_ = bool(res.converged)
        self.n_unreached_ = int(res.unreached.size)
        return W, res, labeled_idx, y_idx

    def _set_transduction(self, scores, labeled_idx, y_idx):
        engine = self._engine()
        xp = engine.xp
        self.scores_ = scores
        pred = xp.argmax(scores, axis=1)
        pred[xp.asarray(labeled_idx)] = xp.asarray(y_idx)   # labelled points keep theirs
        self.transduction_ = engine.take_labels(self.classes_, pred)

    def _query_scores(self, X):
        """``z(x) = sum_j w_j s_j / sum_j w_j``: training scores averaged with the graph's
        affinities of ``x`` (a plain neighbour average where they underflow to zero), in
        the fitted engine's array type."""
        check_is_fitted(self, "scores_")
        Wq = self._query_affinity(X)
        xp = self._engine().xp
        s, num = self._affinity_average(Wq, self.scores_)
        empty = s <= 0
        if bool(empty.any()):
            warnings.warn(f"{int(empty.sum())} new point(s) have no affinity to any training "
                          "point; their scores are zero.", UserWarning, stacklevel=3)
        return xp.where(s[:, None] > 0, num / xp.where(s > 0, s, 1.0)[:, None], 0.0)

    def decision_function(self, X):
        """Scores of new points: the training scores averaged with the graph's affinities.

        ``z(x) = sum_j w_j s_j / sum_j w_j`` over the training points ``j`` with the
        affinities ``w_j`` of ``x`` (its ``n_neighbors`` nearest training points for
        ``affinity="knn"``; with ``affinity="precomputed"``, ``X`` is the
        ``N_new x N_train`` affinity). Shape ``(n_new, K)``, or for two classes
        ``(n_new,)``: ``z_1 - z_0`` (positive means ``classes_[1]``).
        """
        Z = self._query_scores(X)
        return self._in_input_type(Z[:, 1] - Z[:, 0] if Z.shape[1] == 2 else Z, X)

    def predict(self, X):
        """Class of new points: ``classes_[argmax]`` of their scores."""
        Z = self._query_scores(X)
        engine = self._engine()
        return self._in_input_type(engine.take_labels(self.classes_,
                                                      engine.xp.argmax(Z, axis=1)), X)


class PoissonLearning(_PoissonBase):
    """Poisson learning on a sparse graph: graph learning that stays informative at one
    label per class.

    Solves the graph Poisson equation (Calder, Cook, Thorpe & Slepčev 2020, eq. 5 and
    Algorithm 1)

    .. math:: L U = \\sum_{j=1}^m (y_j - \\bar y)\\, \\delta_{x_j}^T,
              \\qquad \\textstyle\\sum_i d_i U_{ik} = 0,

    with ``L = D - W``, ``y_j`` the one-hot labels of the ``m`` labelled points and ``ybar``
    their mean, by Jacobi-preconditioned conjugate gradient (O(nnz(W) K) per iteration),
    and labels every point by ``argmax_k (b_k / ybar_k) U_ik`` with ``b`` the class priors
    (Algorithm 1, line 10). Where Laplace learning (:class:`~semisup.HarmonicFunction`)
    degenerates to a near-constant solution as the number of points grows with the labels
    fixed, the Poisson solution keeps its shape (their §2).

    Parameters
    ----------
    affinity, n_neighbors, weights, graph_sigma, threshold, metric, knn_method, n_jobs, \
random_state :
        The graph parameters, shared by every graph-based estimator
        (:mod:`semisup.graph.frontend`). The paper's graphs are ``weights="self_tuning"``.
    class_priors : {"labels", "uniform"} or array-like of shape (K,), default="labels"
        Class fractions ``b`` of the decision: those of the labelled points (no rescaling:
        the plain ``argmax`` of GraphLearning's ``poisson``), equal, or given (in the order
        of ``classes_``; normalised to sum to one).
    tol : float, default=1e-4
        Relative residual tolerance of CG on the Jacobi-scaled system
        ``D^{-1/2} L D^{-1/2} Z = D^{-1/2} B``, all class columns together. GraphLearning
        stops at an absolute ``1e-3`` on the same residual, a relative 1e-4 to 2e-4 on its
        10-NN graph of 20 000 MNIST digits; there 1e-4 gives its accuracy to 0.05 points
        at 1, 3 and 5 labels per class in about 60 iterations (1e-3: 0.3 points, 45).
    max_iter : int, optional
        CG iteration cap (default ten times the number of points).
    verbose : bool, default=False
        Report the graph and the solve on stderr.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    class_priors_ : ndarray of shape (K,)
        The class fractions ``b`` used.
    scores_ : ndarray of shape (n_samples, K)
        ``U diag(b / ybar)``: the Poisson scores of the training points, scaled.
    transduction_ : ndarray of shape (n_samples,)
        ``classes_[argmax]`` of ``scores_``; labelled points keep their labels.
    affinity_matrix_ : scipy.sparse.csr_matrix
        The graph used.
    graph_sigma_ : float or None
        Heat-kernel width used (``weights="heat"``).
    n_iter_ : int
        CG iterations.
    converged_ : bool
        Whether CG reached ``tol``.
    n_unreached_ : int
        Points in components without labels (zero scores).

    Notes
    -----
    Each connected component with labels is its own Poisson problem (sources centred by its
    labels' mean); a component whose labels are all of one class takes that class, and one
    without labels gets zero scores, with a warning. The solution's free constant is fixed
    by a degree-weighted mean of zero in each column, as in the paper's iteration and
    GraphLearning's solver. Cost: the graph, then O(nnz(W) K) per CG iteration; memory
    O(nnz(W) + n K), never an ``n x n`` dense matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import PoissonLearning
    >>> X, y = make_moons(300, noise=0.05, random_state=0)
    >>> y_train = np.full_like(y, -1)                  # -1: unlabeled
    >>> y_train[[np.flatnonzero(y == c)[0] for c in (0, 1)]] = (0, 1)   # one label each
    >>> pl = PoissonLearning(weights="self_tuning").fit(X, y_train)
    >>> float((pl.transduction_ == y).mean()) > 0.9
    True
    """

    _device_fit = True     # a CuPy X: graph and CG on the device (semisup.engines.cupy)

    def __init__(self, *, affinity="knn", n_neighbors=10, weights="heat", graph_sigma=None,
                 threshold=None, metric="euclidean", knn_method="auto", n_jobs=None,
                 random_state=None, class_priors="labels", tol=1e-4, max_iter=None,
                 verbose=False):
        _store_init_params(self, locals())

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit Poisson learning.

        Parameters
        ----------
        X : array-like or sparse of shape (n_samples, n_features), or (n_samples, n_samples)
            Training points, or the affinity ``W`` when ``affinity="precomputed"``.
        y : array-like of shape (n_samples,)
            Labels of any type; ``-1`` marks unlabeled points.

        Returns
        -------
        self
        """
        _, res, labeled_idx, y_idx = self._poisson(X, y)
        ybar = np.bincount(y_idx, minlength=self.classes_.size) / labeled_idx.size
        scale = self._engine().xp.asarray(self.class_priors_ / ybar)
        self._set_transduction(res.U * scale, labeled_idx, y_idx)
        return self


class PoissonMBO(_PoissonBase):
    """Poisson-MBO: Poisson learning refined by graph MBO under class-size constraints.

    Starts from :class:`PoissonLearning`'s labels and alternates ``n_inner`` explicit steps
    of the heat equation forced by the Poisson sources,
    ``U <- U - dt (L U - mu B)`` with ``dt = 1 / max_i d_i`` (Calder et al. 2020, eq. 12),
    with a thresholding to labels ``argmax_k s_k S_ik`` whose class weights ``s`` are
    adjusted until every class holds the fraction ``b_k`` of the points given by
    ``class_priors`` within ``volume_tol`` (Algorithm 2), ``n_outer`` times.

    Parameters
    ----------
    affinity, n_neighbors, weights, graph_sigma, threshold, metric, knn_method, n_jobs, \
random_state :
        The graph parameters (:mod:`semisup.graph.frontend`).
    class_priors : {"labels", "uniform"} or array-like of shape (K,), default="labels"
        Class fractions ``b`` the labels are constrained to: those of the labelled points,
        equal, or given (in the order of ``classes_``; normalised to sum to one). The
        constraint is met exactly, so the priors matter: on MNIST the true class fractions
        gave 1 to 3 points more than equal ones at 1 to 5 labels per class; give them when
        the class sizes are known.
    mu : float, default=1.0
        Weight of the Poisson forcing term in the heat steps.
    n_inner : int, default=40
        Heat steps between two thresholdings (GraphLearning's ``Ns``).
    n_outer : int, default=20
        Thresholdings (GraphLearning's ``T``).
    volume_tol : float, default=1e-3
        Largest allowed ``|class fraction - b_k|`` of each thresholding (at least
        ``1 / n_samples``, the step of a fraction).
    tol, max_iter :
        CG tolerance and cap of the Poisson solve (see :class:`PoissonLearning`).
    verbose : bool, default=False

    Attributes
    ----------
    classes_, class_priors_, affinity_matrix_, graph_sigma_, n_iter_, converged_, \
n_unreached_ :
        As in :class:`PoissonLearning` (``n_iter_``, ``converged_``: the Poisson solve).
    scores_ : ndarray of shape (n_samples, K)
        The last heat step's scores, scaled to ``[0, 1]`` and weighted by the class weights
        (their ``argmax`` gives the labels).
    transduction_ : ndarray of shape (n_samples,)
        Labels after the last thresholding; labelled points keep their labels.
    class_weights_ : ndarray of shape (K,)
        The class weights ``s`` of the last thresholding.
    volume_error_ : float
        ``max_k |class fraction - b_k|`` of the last thresholding.

    Notes
    -----
    Cost: the Poisson solve, then ``n_outer * n_inner`` products of ``W`` with an ``n x K``
    block and the thresholdings' sweeps of exact class-weight updates
    (:func:`~semisup.poisson.mbo.volume_projection`, O(n K^2) each, a few per thresholding
    where GraphLearning's fixed gradient steps take thousands of O(n K) iterations). The
    defaults are GraphLearning 1.7.5's ``poisson_mbo``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from semisup import PoissonMBO
    >>> X, y = make_blobs(300, centers=3, cluster_std=1.0, random_state=0)
    >>> y_train = np.full_like(y, -1)
    >>> y_train[[np.flatnonzero(y == c)[0] for c in range(3)]] = range(3)
    >>> mbo = PoissonMBO(weights="self_tuning", class_priors="uniform").fit(X, y_train)
    >>> float((mbo.transduction_ == y).mean()) > 0.9
    True
    """

    _parameter_constraints = {
        **_PoissonBase._parameter_constraints,
        "mu": [Interval(Real, 0, None, closed="left")],
        "n_inner": [Interval(Integral, 1, None, closed="left")],
        "n_outer": [Interval(Integral, 1, None, closed="left")],
        "volume_tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, affinity="knn", n_neighbors=10, weights="heat", graph_sigma=None,
                 threshold=None, metric="euclidean", knn_method="auto", n_jobs=None,
                 random_state=None, class_priors="labels", mu=1.0, n_inner=40, n_outer=20,
                 volume_tol=1e-3, tol=1e-4, max_iter=None, verbose=False):
        _store_init_params(self, locals())

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit Poisson-MBO (same inputs as :meth:`PoissonLearning.fit`).

        Returns
        -------
        self
        """
        # a device X is refused by the front-end (_device_fit is False here)
        t0 = time.perf_counter()
        W, res, labeled_idx, y_idx = self._poisson(X, y)
        n, K = res.U.shape
        # the start is the plain Poisson decision, as in GraphLearning's poisson_mbo
        comp = connected_components(W)[1]
        B = poisson_source(n, labeled_idx, y_idx, K, comp)
        if W.nnz and not 1e-150 < W.data.max() < 1e150:
            # degrees near the float64 limits overflow the time step 1 / max d (as the
            # Poisson solve, which rescales the same way)
            W = divide(W, W.data.max())
        out = poisson_mbo(W, np.argmax(res.U, axis=1), B, self.class_priors_, mu=self.mu,
                          n_inner=self.n_inner, n_outer=self.n_outer,
                          volume_tol=self.volume_tol)
        log(f"[PoissonMBO] MBO: {self.n_outer} x {self.n_inner} heat steps, "
            f"{out.n_projection_iter} projection sweeps, volume error "
            f"{out.volume_error:.2g} ({time.perf_counter() - t0:.2f} s)", self.verbose)
        if out.volume_error > max(self.volume_tol, 1.0 / n):
            warn_convergence(f"PoissonMBO: the class fractions are {out.volume_error:.2g} "
                             f"from class_priors (volume_tol={self.volume_tol:g}) after the "
                             "projection's iteration cap; the priors may be unreachable on "
                             "this graph (ties), or increase volume_tol.")
        self.class_weights_ = out.weights
        self.volume_error_ = float(out.volume_error)
        self._set_transduction(out.scores, labeled_idx, y_idx)
        return self
