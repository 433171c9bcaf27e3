"""The one graph front-end of every graph-based estimator.

Every estimator that learns on a graph (``HarmonicFunction``, ``LaplacianAssignment``,
``LapSVM``, ``LapRLS``, ``SPORE``, ``MultiGraphSPORE``, ``GraphKernelSVM``) takes the same
graph parameters, with the same names, meanings and defaults, and builds its training graph
and the affinities of new points through :class:`GraphMixin`. The mixin validates the
parameters and keeps the fitted state; the graphs themselves are built by the engine of the
input's type (:mod:`semisup.engines`): :mod:`semisup.graph.engine` for numpy and
scipy.sparse input, the Dask engine for a dask array.

=================  =====================================================================
parameter          meaning
=================  =====================================================================
``affinity``       ``"knn"`` (default): symmetric kNN graph of ``X``; ``"precomputed"``:
                   ``X`` is the ``n x n`` affinity (and, for new points, the ``m x n``
                   affinities to the training points); ``"rbf_threshold"`` /
                   ``"cosine_threshold"``: an edge where the RBF / cosine similarity
                   exceeds ``threshold`` (the SPORE paper's graphs).
``n_neighbors``    neighbours per point of the kNN graph and of the out-of-sample mapping.
``weights``        ``"heat"`` (default) ``exp(-d^2 / (2 graph_sigma^2))``, ``"binary"``
                   (1), ``"distance"`` (``d``, kNN only) or ``"self_tuning"``
                   ``exp(-4 d_ij^2 / (d_k(x_i) d_k(x_j)))``, ``d_k`` the distance to the
                   ``n_neighbors``-th neighbour (kNN only; new points use their own
                   ``d_k`` among the training points). Thresholded graphs: ``"heat"``
                   keeps the similarity, ``"binary"`` gives a 0/1 adjacency.
``graph_sigma``    width of the graph's heat weights (never a kernel width); ``None``: the
                   mean directed kNN distance (lapsvmp's ``t = 0`` rule), or for
                   ``"rbf_threshold"`` the mean pairwise distance.
``threshold``      similarity threshold of the thresholded graphs; ``None``: the mean
                   off-diagonal similarity (``"rbf_threshold"``) or 0.6
                   (``"cosine_threshold"``, the paper's MNIST graphs).
``metric``         ``"euclidean"`` or ``"cosine"``: distance of the kNN search.
``knn_method``     ``"auto"``, ``"exact"`` or ``"approx"`` (NN-descent, extra ``[fast]``).
``n_jobs``         parallel jobs of the neighbour searches.
``random_state``   seed of every random choice, the approximate kNN search included.
=================  =====================================================================
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from .._validation import _as_numeric_matrix, check_affinity, check_finite
from ..engines import DEFAULT_ENGINE, engine_for, engine_for_types, get_engine
from .components import connected_components

__all__ = ["GRAPH_PARAMS", "GRAPH_DEFAULTS", "GRAPH_PARAMETER_CONSTRAINTS", "GraphMixin",
           "check_query_affinity"]

AFFINITIES = ("knn", "precomputed", "rbf_threshold", "cosine_threshold")

#: the graph parameters, their defaults (the same in every estimator) and constraints
GRAPH_DEFAULTS = {
    "affinity": "knn",
    "n_neighbors": 10,
    "weights": "heat",
    "graph_sigma": None,
    "threshold": None,
    "metric": "euclidean",
    "knn_method": "auto",
    "n_jobs": None,
    "random_state": None,
}
GRAPH_PARAMS = tuple(GRAPH_DEFAULTS)

GRAPH_PARAMETER_CONSTRAINTS = {
    "affinity": [StrOptions(set(AFFINITIES))],
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "weights": [StrOptions({"heat", "binary", "distance", "self_tuning"})],
    "graph_sigma": [Interval(Real, 0, None, closed="neither"), None],
    "threshold": [Interval(Real, None, None, closed="neither"), None],
    "metric": [StrOptions({"euclidean", "cosine"})],
    "knn_method": [StrOptions({"auto", "exact", "approx"})],
    "n_jobs": [Integral, None],
    "random_state": ["random_state"],
}


def check_query_affinity(W_new, n_train: int, name: str = "X") -> sp.csr_matrix:
    """Validate the ``m x n_train`` affinities of new points to the training points."""
    if sp.issparse(W_new):
        W_new = sp.csr_matrix(W_new, dtype=np.float64, copy=True)
    else:
        W_new = sp.csr_matrix(_as_numeric_matrix(W_new, name), dtype=np.float64)
    if W_new.shape[1] != n_train:
        raise ValueError(f"{name} has {W_new.shape[1]} columns but the model was trained on "
                         f"{n_train} points; with affinity='precomputed' pass the "
                         f"(n_new, {n_train}) affinities of the new points to the training "
                         "points.")
    W_new.sum_duplicates()
    check_finite(W_new, name)
    W_new.eliminate_zeros()
    if W_new.nnz and W_new.data.min() < 0:
        raise ValueError(f"{name} has negative affinities (min {W_new.data.min():.3g}); "
                         "affinities must be non-negative.")
    return W_new


def _warn_if_coincident(X, name="X") -> None:
    """Warn when every point of an in-memory ``X`` is the same: its graph joins them all
    alike and carries no information (every unlabeled point gets the same prediction)."""
    if X.shape[0] < 2:
        return
    if sp.issparse(X):
        same = (X.max(axis=0) != X.min(axis=0)).nnz == 0      # O(nnz)
    elif isinstance(X, np.ndarray):
        same = bool((X == X[:1]).all())
    else:   # other engines' arrays (dask, CuPy): not read back for a warning
        return
    if same:
        warnings.warn(f"all {X.shape[0]} points of {name} are identical: the graph joins "
                      "them all alike and carries no information (every unlabeled point gets "
                      "the same prediction). Check the features (constant columns, a failed "
                      "preprocessing step).", UserWarning, stacklevel=4)


#: the estimators whose ``_device_fit`` is set (named by the refusal of the others)
DEVICE_ESTIMATORS = "HarmonicFunction, PoissonLearning, LaplacianAssignment, LapRLS and LapSVM"


class GraphMixin:
    """Builds the training graph and the query affinities from the graph parameters.

    Estimators list the names of :data:`GRAPH_PARAMS` in their ``__init__`` (with the
    defaults of :data:`GRAPH_DEFAULTS`) and merge :data:`GRAPH_PARAMETER_CONSTRAINTS` into
    their ``_parameter_constraints``. ``_fit_graph`` asks the engine of ``X``'s type for
    the graph and sets ``affinity_matrix_``, ``graph_sigma_`` and ``_graph_state`` (the
    engine's name and what its ``query_affinity`` needs for new points); engines never
    write the estimator.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # a precomputed affinity is an n x n (or, for new points, m x n) pairwise input
        tags.input_tags.pairwise = self.affinity == "precomputed"
        return tags

    def _check_graph_options(self):
        if self.affinity in ("rbf_threshold", "cosine_threshold") and \
                self.weights in ("distance", "self_tuning"):
            raise ValueError(f"weights={self.weights!r} applies to affinity='knn' only; with "
                             f"affinity={self.affinity!r} use 'binary' or 'heat'.")

    def _validate_points(self, X, reset=True, name="X"):
        return validate_data(self, X, reset=reset, accept_sparse="csr",
                             dtype=[np.float64, np.float32],
                             ensure_min_samples=2 if reset else 1)

    #: whether the estimator's fit runs where a device engine's arrays live (a GPU); the
    #: others refuse such an input before any work, naming those that fit there
    #: (:data:`DEVICE_ESTIMATORS`, checked against the flags by tests/engines)
    _device_fit = False

    def _check_engine(self, engine):
        """``engine``, or a clear error when it keeps its arrays off the host and this
        estimator has no fit there (naming those that have)."""
        if not engine.host_arrays and not self._device_fit:
            raise ValueError(f"{type(self).__name__} runs on the host and cannot take input "
                             f"of the {engine.name} engine (e.g. a CuPy array); pass it in "
                             f"memory (e.g. cupy.asnumpy(X)). {DEVICE_ESTIMATORS} fit "
                             "there.")
        return engine

    def _fit_graph(self, X, *, name="X", engine=None):
        """The symmetric training affinity ``W`` (canonical float64 CSR, zero diagonal; of
        the engine's sparse type).

        With ``affinity="precomputed"`` ``X`` is validated as the affinity (where it lives
        when its engine checks affinities itself, e.g. a CuPy or ``cupyx`` matrix on the
        GPU, else in memory); otherwise ``X`` is validated as points (``n_features_in_`` is
        set) and the graph is built by the engine of ``X``'s type (``engine``, when the
        estimator looked it up already, else :func:`semisup.engines.engine_for_types`: in
        process, on the Dask workers for a dask array, on the GPU for a CuPy array). Sets
        ``affinity_matrix_``, ``graph_sigma_`` and what ``_query_affinity`` needs. Returns
        ``(W, X)`` with ``X`` the validated points (``None`` if precomputed).
        """
        self._check_graph_options()
        self.graph_sigma_ = None
        self._graph_state = None
        engine = self._check_engine(engine_for_types(type(X)) if engine is None else engine)
        if self.affinity == "precomputed":
            check = getattr(engine, "check_affinity", None)
            if check is None:            # validated (and held) in memory
                engine, check = get_engine(DEFAULT_ENGINE), check_affinity
            W = check(X, f"{name} (precomputed affinity)")
            self.n_features_in_ = W.shape[1]
            self.affinity_matrix_ = W
            self._graph_state = (engine.name, None)
            return W, None
        # in-memory points are validated here (the default Engine.check_points would only
        # call back); an engine's own arrays where they live
        X = (self._validate_points(X, reset=True) if engine.name == DEFAULT_ENGINE
             else engine.check_points(self, X))
        self.n_features_in_ = X.shape[1]
        _warn_if_coincident(X, name)
        fit = engine.fit_graph(self, X)
        self.affinity_matrix_ = fit.W
        self.graph_sigma_ = fit.graph_sigma
        self._graph_state = (engine.name, fit.state)
        return fit.W, fit.X

    def _engine(self):
        """The engine of the fitted graph: where its arrays live and, through its optional
        solvers (``getattr(engine, "harmonic_solve", None)``, ...), where the fit runs."""
        state = getattr(self, "_graph_state", None)
        return get_engine(state[0] if state else DEFAULT_ENGINE)

    def _for_engine(self, x, engine):
        """``x`` as ``engine`` takes it: an array of another engine's kind is brought to the
        host first (e.g. a CuPy ``X`` for a model fitted in memory)."""
        other = engine_for(x)
        return x if other.name == engine.name else other.to_host(x)

    def _in_input_type(self, out, X):
        """``out`` (an array of the fitted engine's kind) in the kind of the input ``X``:
        predictions answer in the input's type (on the host for an in-memory ``X``)."""
        src, dst = self._engine(), engine_for(X)
        return out if src.name == dst.name else dst.from_host(src.to_host(out))

    @staticmethod
    def _host_labels(y):
        """``y`` on the host (labels are small; a CuPy ``y`` is copied), for validation."""
        return y if y is None else engine_for(y).to_host(y)

    def _affinity_average(self, Wq, F):
        """``(s, num)``: the affinity sums ``s = Wq 1`` and ``num = Wq F`` of new points,
        where the fitted arrays live; with ``affinity="knn"``, rows whose weights all
        underflowed to zero (heat weights far from the data) take the plain average of
        their stored neighbours instead (``s`` their count)."""
        xp = self._engine().xp
        s = xp.asarray(Wq.sum(axis=1)).ravel()
        num = xp.asarray(Wq @ F)
        empty = s <= 0
        if self.affinity == "knn" and bool(empty.any()):
            pattern = Wq.copy()
            pattern.data[:] = 1.0
            num = xp.where(empty[:, None], xp.asarray(pattern @ F), num)
            s = xp.where(empty, xp.asarray(pattern.sum(axis=1)).ravel(), s)
        return s, num
    def _warn_unreached(self, W, labeled, consequence: str, n_unreached=None) -> int:
        """Warn when unlabeled points lie in components of ``W`` without a labeled point
        (isolated points included), saying what the estimator does with them
        (``consequence``); return their number (``n_unreached`` if already counted)."""
        if n_unreached is None:
            if not sp.issparse(W):      # a device (CuPy) graph is not copied back for this
                return 0
            n_comp, comp = connected_components(W)
            has_label = np.bincount(comp[labeled], minlength=n_comp) > 0
            n_unreached = int((~np.asarray(labeled) & ~has_label[comp]).sum())
        if n_unreached:
            warnings.warn(f"{n_unreached} unlabeled point(s) lie in graph components without "
                          f"any labeled point (isolated points included); {consequence} "
                          "Increase n_neighbors or label a point in each component.",
                          UserWarning, stacklevel=3)
        return int(n_unreached)

    def _query_affinity(self, X_new, name="X"):
        """``m x n_train`` affinities of new points to the training points (sparse CSR of
        the fitted engine's kind)."""
        n_train = self.affinity_matrix_.shape[0]
        engine = self._engine()
        X_new = self._for_engine(X_new, engine)
        if self.affinity == "precomputed":
            check = getattr(engine, "check_query_affinity", None)
            return (check_query_affinity if check is None else check)(X_new, n_train, name)
        X_new = engine.check_query_points(self, X_new)
        return engine.query_affinity(self, self._graph_state[1], X_new)

