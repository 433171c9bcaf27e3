"""scikit-learn estimators for SPORE and MKL-SPORE (Shivanna et al., NIPS 2015).

Transductive: ``fit(X, y)`` learns labels for every vertex of the graph; ``predict`` and
``decision_function`` answer only for the ``X`` passed to ``fit`` (there is no out-of-sample
rule). See spore.md §3.1 before relying on the predictions: the exact SPORE optimum carries
no information about unlabelled vertices, so the scores come from the early-stopped IIP path
and depend on ``K0`` and ``n_outer``.
"""

from __future__ import annotations

import copy
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import TransductiveMixin, _fingerprint, _fit_context, _store_init_params
from .._transductive import (n_tasks, n_vertices, one_vs_rest, ovr_labels, transduce,
                             warn_unreached)
from .._threads import n_workers
from .._validation import _as_numeric_matrix, check_memory, memory_budget
from ..graph.frontend import GRAPH_PARAMETER_CONSTRAINTS, GraphMixin
from .iip import ONE_THREAD_MAX_N, iip_spore, lanczos_start, step_length
from .mkl import mkl_spore
from .start import distance_step, hop_start, resolve_hops

__all__ = ["SPORE", "MultiGraphSPORE"]

#: float32 iterates above this many vertices (LAPACK ~3x faster, half the memory)
FLOAT32_MIN_N = 1000


# ------------------------------------------------------------------ shared by the estimators
def _dtype_for(dtype, n):
    if dtype == "auto":
        return np.float32 if n > FLOAT32_MIN_N else np.float64
    return np.dtype(dtype).type


#: bytes of a worker process before its task (interpreter, numpy, SciPy, the library;
#: scaling.md's growth record: 160-270 MiB before a fit)
WORKER_BYTES = 250 * 2 ** 20


def _dense_bytes(n, n_graphs, dtype, n_tasks=1, n_jobs=1):
    """Bytes of a fit's dense n x n arrays: per running task K, V, the FISTA variables (a,
    b, ya, yb, new copies), eigenvectors and the best iterate; the kernels one-vs-rest
    keeps of the other tasks (and their sum over the graphs); with ``n_jobs`` worker
    processes also two kernels per extra worker (its result on its way to the stack) and
    the workers' own :data:`WORKER_BYTES`."""
    kept = (n_tasks - 1 + 2 * (n_jobs - 1)) * (n_graphs + (n_graphs > 1))
    return ((14.0 * n_graphs * n_jobs + kept) * n * n * np.dtype(dtype).itemsize
            + (n_jobs - 1) * WORKER_BYTES)


def _check_dense_memory(n, n_graphs, dtype, name="SPORE", n_tasks=1):
    # one-vs-rest solves one task at a time at the least (_ovr_jobs runs more if they fit)
    nbytes = _dense_bytes(n, n_graphs, dtype, n_tasks)
    what = (f"{name} on {n} vertices (dense {n}x{n} kernels"
            + (f", {n_graphs} graphs" if n_graphs > 1 else "")
            + (f", {n_tasks} one-vs-rest tasks" if n_tasks > 1 else "") + ")")
    hint = ("SPORE learns a dense n x n kernel per graph; subsample the graph or split it "
            "into connected components.")
    if np.dtype(dtype) == np.float64:
        hint = "dtype='float32' halves the memory. " + hint
    check_memory(nbytes, what, hint)


#: one-vs-rest tasks run side by side from this many vertices; below, a task takes about as
#: long as starting the worker processes (~1 s): 3 classes of 400 digits 2.7 s one after the
#: other, 3.0 s on two workers; 5 classes of 600 digits 11.8 s and 8.1 s
OVR_JOBS_MIN_N = 500


def _ovr_jobs(n_jobs, n, n_tasks, n_graphs, dtype):
    """Processes for the one-vs-rest tasks (:func:`semisup._transductive.one_vs_rest`).

    ``n_workers(n_jobs)`` (None: the BLAS pool's size) for several tasks on
    :data:`OVR_JOBS_MIN_N` to :data:`semisup.spore.iip.ONE_THREAD_MAX_N` vertices, as many
    as the memory holds: there every task runs under one BLAS thread, so the other cores
    would idle, and a worker computes what this process would, to the bit. Otherwise 1
    (above, the tasks use the BLAS's threads one after the other).
    """
    if n_tasks < 2 or not OVR_JOBS_MIN_N <= n <= ONE_THREAD_MAX_N:
        return 1
    jobs = min(n_tasks, n_workers(n_jobs))
    budget = memory_budget()
    while jobs > 1 and _dense_bytes(n, n_graphs, dtype, n_tasks, jobs) > budget:
        jobs -= 1
    return jobs


def _check_K0(K0, n):
    """A user start kernel: numeric, (n, n), finite and symmetric (named K0 in errors)."""
    K = _as_numeric_matrix(K0.toarray() if sp.issparse(K0) else K0, "K0")
    if K.shape != (n, n):
        raise ValueError(f"K0 has shape {K.shape} but the graph has {n} vertices; give an "
                         f"({n}, {n}) start kernel or K0='coupled'.")
    K = K.astype(np.float64, copy=False)
    bad = ~np.isfinite(K)
    if bad.any():
        raise ValueError(f"K0 contains {int(bad.sum())} NaN or infinite value(s); the start "
                         "kernel must be finite.")
    asym = float(np.abs(K - K.T).max()) if n else 0.0
    if asym > 1e-8 * max(1.0, float(np.abs(K).max())):
        raise ValueError(f"K0 is not symmetric (max |K0 - K0.T| = {asym:.3g}); give a "
                         "symmetric start kernel, e.g. (K0 + K0.T) / 2.")
    return K


def _pattern(W):
    """0/1 adjacency with the edges of a canonical CSR affinity (no stored zeros)."""
    return sp.csr_matrix((np.ones(W.nnz), W.indices.copy(), W.indptr.copy()), shape=W.shape)


#: warn when more than this fraction of the unlabelled vertices has no labelled neighbour
FAR_FROM_LABELS_WARN = 0.3


def _warn_far_from_labels(A, labeled, name, stacklevel=4):
    """Warn when most unlabelled vertices have no labelled neighbour; return the fraction.

    The prediction ``yhat_i = sum_{j in S} K_ij alpha_j y_j`` reads row ``i`` of ``K`` on the
    labelled vertices, and ``K(G)`` is zero on non-edges: at the optimum a vertex with no
    labelled neighbour scores 0, so its prediction rests only on the infeasibility of the
    early-stopped iterates, whose values off the edges come from the subgradient steps and
    are not evidence (measured on two moons, 10-NN graph without hops, 5 labels per class:
    70 % of the unlabelled vertices, whose scores were anti-correlated with the truth).
    """
    unlabeled = ~labeled
    if not unlabeled.any():
        return 0.0
    reach = np.asarray(A[unlabeled][:, labeled].sum(axis=1)).ravel()
    frac = float(np.mean(reach == 0))
    if frac > FAR_FROM_LABELS_WARN:
        warnings.warn(f"{frac:.0%} of the unlabeled vertices have no labeled neighbour in "
                      f"this graph. {name}'s kernel is zero on non-edges, so their "
                      "predictions rest only on the early-stopped iterates and may be near "
                      "chance. Use a denser graph (more hops, more n_neighbors, or "
                      "affinity='rbf_threshold', the paper's) or more labels; "
                      "HarmonicFunction propagates labels along paths instead.", UserWarning,
                      stacklevel=stacklevel)
    return frac


#: FISTA steps per projection when ``n_inner=None``: the paper's large-scale setting (T = 5,
#: 20 inner). Theorem 5's ``ceil(sqrt(T))`` (3 for T = 5) leaves the iterates so infeasible
#: that the objective falls by leaving ``K(G)`` (measured on breast cancer, 4 hops: g 9.3 ->
#: 2.6 with 3 steps, -> 3.7 with 20) and the predictions with it (accuracy 0.54 vs 0.89).
DEFAULT_N_INNER = 20


def _n_inner(n_inner):
    return DEFAULT_N_INNER if n_inner is None else n_inner


def _step(step, K0s, n_labeled, n_outer):
    """The step length for the estimators' ``step`` parameter: ``"distance"`` (None) from
    :func:`.start.distance_step`, ``"paper"`` ``n / sqrt(T)``, ``"theory"`` or a number as
    :func:`.iip.step_length` reads them."""
    if step is None or step == "distance":
        return distance_step(K0s, n_labeled, n_outer)
    return step_length(None if step == "paper" else step, K0s[0].shape[0], n_outer)


def _collect(est, results):
    """The per-task fit records as attributes: scalars for one task, one entry per class
    (``history_`` a list, ``best_iter_`` / ``n_iter_`` arrays) for one-vs-rest."""
    one = len(results) == 1
    est.history_ = results[0].history if one else [r.history for r in results]
    est.best_iter_ = (int(results[0].best_iter) if one
                      else np.array([r.best_iter for r in results]))
    est.n_iter_ = int(results[0].n_iter) if one else np.array([r.n_iter for r in results])


class _Kept:
    """The arrays one-vs-rest keeps per task: ``value`` is the one task's array, or the
    tasks' arrays on a new first axis, written in place as they come (no stacked copy)."""

    def __init__(self, n_tasks):
        self.n_tasks, self.count, self.value = n_tasks, 0, None

    def add(self, a):
        if self.n_tasks == 1:
            self.value = a
        else:
            if self.value is None:
                self.value = np.empty((self.n_tasks,) + a.shape, dtype=a.dtype)
            self.value[self.count] = a
        self.count += 1


_SPORE_CONSTRAINTS = {
    **GRAPH_PARAMETER_CONSTRAINTS,
    "C": [Interval(Real, 0, None, closed="neither")],
    "beta": [Interval(Real, 0, None, closed="left")],
    "n_outer": [Interval(Integral, 1, None, closed="left")],
    "n_inner": [Interval(Integral, 1, None, closed="left"), None],
    "hops": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
    "step": [StrOptions({"distance", "paper", "theory"}),
             Interval(Real, 0, None, closed="neither"), None],
    "iterate": [StrOptions({"final", "best"})],
    "dtype": [StrOptions({"auto", "float64", "float32"})],
    "keep_path": ["boolean"],
    "verbose": ["verbose"],
}


class _SPOREBase(TransductiveMixin, GraphMixin, ClassifierMixin, BaseEstimator):
    """TransductiveMixin first: its predict/score (fitted X only, labeled-only accuracy)
    take precedence over ClassifierMixin's."""


class SPORE(_SPOREBase):
    """Spectral-norm regularised orthonormal embedding for graph transduction (SPORE).

    Solves (eq. 5) ``min_{K in K(G)} omega_C(K, y_S) + beta * lambda_1(K)`` by IIP
    (Algorithm 1) with FISTA inexact projections, and predicts
    ``yhat_i = sum_{j in S} K_ij alpha_j y_j``. ``K(G)`` is the elliptope of the graph: PSD,
    unit diagonal, zero on non-edges.

    SPORE is a binary method: more than two classes are solved one-vs-rest inside the
    estimator (one IIP run per class on the graph, start kernel and step built once), and
    a vertex takes the class of the largest score. Do not wrap it in scikit-learn's
    ``OneVsRestClassifier``: that reads the unlabelled marker -1 as a class, fits every
    binary problem as if all points were labelled, and predicts -1 for most points.

    Parameters
    ----------
    C : float, default=1.0
        SVM box bound (eq. 3), ``C = 1 / (2 lambda m)`` in terms of the regularised loss.
    beta : float, default=0.01
        Weight of the spectral norm lambda_1(K) (the paper's large-scale runs use 0.01).
    n_outer : int, default=5
        IIP outer iterations T (the paper's large-scale run uses 5).
    n_inner : int or None, default=None
        FISTA steps per projection; None = 20, the paper's large-scale setting (with
        Theorem 5's ``ceil(sqrt(T))`` = 3 the iterates leave ``K(G)`` far enough for the
        objective to fall below what any feasible kernel reaches, and the predictions
        degrade with it: :data:`DEFAULT_N_INNER`).
    hops : "auto" or int, default="auto"
        SPORE runs on ``G^hops``: vertices at most ``hops`` steps apart in the graph are
        adjacent. Its kernel is zero on non-edges and its prediction reads only the
        labelled neighbours of a vertex, so it needs a dense graph (the paper's have about
        half of all pairs as edges); a kNN graph gives most vertices no labelled neighbour.
        "auto" is :data:`semisup.spore.start.KNN_HOPS` = 4 for ``affinity="knn"`` and 1
        (the graph as given) for a precomputed graph and the paper's thresholded graphs.
    K0 : {"coupled", "identity"} or array of shape (n, n), default="coupled"
        Start. "coupled" is the unit-diagonal power ``D^-1/2 B^hops D^-1/2`` of
        ``B = I + A / |lambda_min(A)|`` (:func:`semisup.spore.start.hop_start`; with
        ``hops=1`` simply ``B``, spore.md §3.1), which lies in ``K(G^hops)``; "identity"
        keeps the labelled/unlabelled blocks decoupled, so unlabelled scores are 0, or
        arbitrary where an eigensolver mixes the blocks at the repeated top eigenvalue of I
        (measured: chance-level accuracy either way; a warning says so). An array must be
        finite and symmetric.
    step : None, "distance", "paper", "theory" or float, default=None
        Subgradient step length ``R / sqrt(T)`` (Theorem 5). None (= "distance"): ``R =
        ||K0 - I||_F + sqrt(m (m - 1))``, a bound on the distance from ``K0`` to an optimum
        (:func:`semisup.spore.start.distance_step`); "paper": the paper's ``R = n``, a bound
        over all of ``K(G)`` that is 5-30x larger on the graphs measured (five such steps
        move ``K`` several times its own norm and the predictions fall below chance on two
        moons and breast cancer); "theory": ``sqrt(n^2 + n^5) / sqrt(T)``.
    iterate : {"final", "best"}, default="final"
        Which IIP iterate gives the predictions (the paper's theory bounds the best).
    dtype : {"auto", "float64", "float32"}, default="auto"
        Precision of the n x n iterates; "auto" uses float32 above 1000 vertices.
    keep_path : bool, default=False
        Record the soft predictions of every iterate in ``history_["scores"]``.
    verbose : bool, default=False
        One line per outer iteration on stderr.
    affinity, n_neighbors, weights, graph_sigma, threshold, metric, knn_method, n_jobs, \
random_state :
        The graph parameters, shared by every graph-based estimator
        (:mod:`semisup.graph.frontend`): ``affinity="knn"`` (default) builds the symmetric
        ``n_neighbors``-NN graph of ``X``; ``"precomputed"`` takes ``X`` as the ``n x n``
        adjacency; ``"rbf_threshold"`` / ``"cosine_threshold"`` are the paper's UCI / MNIST
        graphs (``threshold=None``: the mean similarity, resp. 0.6, i.e. cosine distance
        < 0.4). SPORE's kernel is zero on non-edges, so the kNN graph is used through
        ``hops`` (measured at the defaults, 3 labelled draws each: two moons, 300 points,
        5 labels per class, 0.81 / 0.88 / 0.91 accuracy on the unlabelled points; scaled
        breast cancer, 10 per class, 0.93 / 0.94 / 0.93; HarmonicFunction 0.997 and 0.94;
        before ``hops``, the step bound and 20 inner steps: 0.35 / 0.56 / 0.65 and
        0.40 / 0.30 / 0.32). A warning says when most unlabelled vertices still have no
        labelled neighbour. SPORE is defined on simple graphs and uses only the edge
        pattern (a weighted precomputed adjacency draws a warning). ``random_state`` also
        seeds the Lanczos start vectors of the eigensolves (``n >= 400``). ``n_jobs`` also
        runs the one-vs-rest tasks side by side in worker processes, on 500 to 2 000
        vertices where each task has one BLAS thread (None: as many as the BLAS has
        threads, as the memory allows; :func:`_ovr_jobs`), with the results of the
        tasks run one after the other (to the bit, for a given ``random_state``): 10
        classes of 1 000 digits take 56 s instead of 111 s on two cores.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n,)
        Labels of all vertices: labelled ones keep theirs, the others the sign of
        ``decision_scores_`` (the argmax for more than two classes); an exact tie (score
        0) goes to the tied class with more labelled vertices
        (:func:`semisup._transductive.decide`).
    decision_scores_ : ndarray of shape (n,) or (n, n_classes)
        Soft predictions; for two classes positive means ``classes_[1]``, for more one
        column per class (its one-vs-rest problem).
    embedding_ : ndarray of shape (n, n) or (n_classes, n, n)
        The learned kernel K (Gram matrix of the orthonormal representation), one per
        class for more than two classes.
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n, n)
        The graph (SPORE uses the edge pattern of its ``hops_``-th power).
    graph_sigma_ : float or None
        Heat width of a graph built from ``X``.
    hops_ : int
        The resolved ``hops``.
    step_ : float
        The subgradient step length used.
    history_ : dict, or list of dict (one per class)
        Per iterate: objective, omega, lambda1, infeasibility, seconds (and scores).
    best_iter_ : int or ndarray of shape (n_classes,)
        Iterate with the smallest objective.
    n_iter_ : int or ndarray of shape (n_classes,)
        Outer iterations done.
    eig_seconds_ : float
        Time spent in dense eigendecompositions (all classes).
    n_unreached_ : int
        Unlabelled vertices in components without a label (score 0, with a warning).
    far_from_labels_ : float
        Fraction of the unlabelled vertices without a labelled neighbour (their scores rest
        on the early-stopped iterates only; a warning above
        :data:`FAR_FROM_LABELS_WARN` = 0.3).

    Notes
    -----
    Time O(n_outer (n_inner + 1) n^3) per binary problem (``n_classes`` of them for more
    than two classes), memory O(n^2) (plus one kept kernel per class), refused
    (``MemoryError``) before the graph is built when the dense n x n iterates cannot fit.
    Self-loops of a precomputed adjacency are dropped with a warning; an asymmetric
    adjacency is an error.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.spore import SPORE
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 30)
    >>> P = np.where(y[:, None] == y[None, :], 0.5, 0.05)
    >>> U = np.triu(rng.random((60, 60)) < P, 1)
    >>> A = (U | U.T).astype(float)                    # planted-partition graph
    >>> y_obs = np.full(60, -1)                        # -1: unlabeled
    >>> y_obs[[0, 1, 2, 3, 30, 31, 32, 33]] = y[[0, 1, 2, 3, 30, 31, 32, 33]]
    >>> model = SPORE(affinity="precomputed", n_outer=3).fit(A, y_obs)
    >>> float(np.mean(model.transduction_ == y)) > 0.85
    True
    """

    _parameter_constraints = {
        **_SPORE_CONSTRAINTS,
        "K0": [StrOptions({"coupled", "identity"}), "array-like", "sparse matrix"],
    }

    def __init__(self, *, C=1.0, beta=0.01, n_outer=5, n_inner=None, hops="auto", K0="coupled",
                 step=None, iterate="final", dtype="auto", keep_path=False, verbose=False,
                 affinity="knn", n_neighbors=10, weights="heat", graph_sigma=None,
                 threshold=None, metric="euclidean", knn_method="auto", n_jobs=None,
                 random_state=None):
        _store_init_params(self, locals())

    def _preflight(self, n, tasks):
        """Checks that need only n: the dense memory and a user K0 (before the graph)."""
        _check_dense_memory(n, 1, _dtype_for(self.dtype, n), n_tasks=tasks)
        if not isinstance(self.K0, str):
            _check_K0(self.K0, n)

    def _start(self, A, dtype, v0):
        """The graph IIP runs on (``G^hops``) and the start kernel."""
        A, K0, coupled = hop_start(A, self.hops_, dtype, v0)
        if isinstance(self.K0, str):
            if self.K0 == "identity":
                K0, coupled = np.eye(A.shape[0], dtype=dtype), False
        else:
            K0, coupled = _check_K0(self.K0, A.shape[0]).astype(dtype), True
        if not coupled:
            warnings.warn("K0 = I: IIP keeps K_SU = 0 (every unlabelled score 0) unless an "
                          "eigensolver mixes the blocks at a repeated top eigenvalue, which is "
                          "arbitrary; either way unlabelled predictions are uninformative "
                          "(spore.md §3.1). Use K0='coupled'.", UserWarning, stacklevel=4)
        return A, K0

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the embedding and labels of all vertices.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d), or (n, n)
            Points, or the adjacency when ``affinity="precomputed"``.
        y : array-like of shape (n,)
            Class labels (two or more: one-vs-rest); -1 marks unlabelled vertices.

        Returns
        -------
        self
        """
        tasks = n_tasks(y, "SPORE")                         # cheap: before the graph
        n_pre = n_vertices(X)
        if n_pre is not None:
            self._preflight(n_pre, tasks)
        W, _ = self._fit_graph(X)
        self._graph_state = None                 # transductive: no query index, no copy of X
        n = W.shape[0]
        if n != n_pre:
            self._preflight(n, tasks)
        classes, labeled, signed = ovr_labels(y, n, "SPORE")
        if self.affinity == "precomputed" and W.nnz and not np.all(W.data == 1.0):
            warnings.warn("X (precomputed affinity) is weighted; SPORE is defined on simple "
                          "graphs, so only the edge pattern (weight > 0) is used.",
                          UserWarning, stacklevel=3)
        self.hops_ = resolve_hops(self.hops, self.affinity)
        dtype = _dtype_for(self.dtype, n)
        rs = check_random_state(self.random_state)
        A, K0 = self._start(_pattern(W), dtype, lanczos_start(n, rs))
        self.n_unreached_ = warn_unreached(A, labeled, "SPORE")
        self.far_from_labels_ = _warn_far_from_labels(A, labeled, "SPORE")
        self.step_ = _step(self.step, [K0], labeled.size, self.n_outer)
        best = self.iterate == "best"
        kept = _Kept(signed.shape[1])

        def solve(s):
            # every task draws the same Lanczos starts as a binary fit of its labels would
            res = iip_spore(A, s, labeled, self.C, self.beta, n_outer=self.n_outer,
                            n_inner=_n_inner(self.n_inner), step=self.step_, K0=K0,
                            dtype=dtype, keep_path=self.keep_path, verbose=self.verbose,
                            random_state=copy.deepcopy(rs))
            res.K, res.K_best = (res.K_best, None) if best else (res.K, None)  # one kernel
            return (res.scores_best if best else res.scores), res

        def keep(res):
            kept.add(res.K)
            res.K = None

        results, scores = one_vs_rest(solve, signed, keep=keep, n_jobs=_ovr_jobs(
            self.n_jobs, n, signed.shape[1], 1, dtype))
        self.classes_ = classes
        self.embedding_ = kept.value
        self.decision_scores_ = scores
        self.transduction_ = transduce(scores, classes, labeled, signed)
        _collect(self, results)
        self.eig_seconds_ = float(sum(r.eig_seconds for r in results))
        self._fit_X_fingerprint = _fingerprint(X)
        return self


class MultiGraphSPORE(_SPOREBase):
    """MKL-SPORE (eq. 17): SPORE over several graphs on one vertex set, simplex weights.

    Binary; more than two classes are solved one-vs-rest inside the estimator (the graphs
    and start kernels built once, one run per class), as in :class:`SPORE` (not through
    scikit-learn's ``OneVsRestClassifier``, which reads the unlabelled marker -1 as a
    class).

    Parameters
    ----------
    C, beta, n_outer, n_inner, hops, step, iterate, dtype, keep_path, verbose : as in \
:class:`SPORE` (the start is ``K0 = "coupled"`` per graph, on its ``hops``-th power;
        the "distance" step bounds the joint distance of the M start kernels).
    step_eta : float, optional
        Step on the weights eta; default 1 / sqrt(T).
    views : list of slices or of integer arrays, optional
        Column blocks of a single ``X`` that form the views (e.g. ``[slice(0, n),
        slice(n, 2 * n)]`` for two adjacencies stacked side by side). With it, ``X`` is one
        matrix whose rows are the vertices, so scikit-learn's model selection can index it
        (:mod:`semisup.model_selection`); without it, ``X`` is a list of views.
    affinity, n_neighbors, weights, graph_sigma, threshold, metric, knn_method, n_jobs, \
random_state :
        The shared graph parameters (:mod:`semisup.graph.frontend`), applied to every view:
        ``fit`` takes a list with one feature matrix per view (one graph built per view),
        or with ``affinity="precomputed"`` one adjacency per graph. Only edge patterns are
        used, as in :class:`SPORE`; ``n_jobs`` also runs the one-vs-rest tasks side by side
        as there.

    Attributes
    ----------
    classes_, transduction_, decision_scores_, history_, best_iter_, n_iter_, n_unreached_, \
far_from_labels_, hops_, step_ :
        As in :class:`SPORE` (``n_unreached_`` counts components of the union of the
        graphs).
    embedding_ : ndarray (n, n) or (n_classes, n, n)
        ``sum_k eta_k K^(k)`` (one per class for more than two classes).
    kernels_ : list of ndarray (n, n), or ndarray (n_classes, M, n, n)
    weights_ : ndarray (M,) or (n_classes, M)
        eta.
    affinity_matrices_ : list of scipy.sparse.csr_matrix
        The graph of each view.
    graph_sigmas_ : list of (float or None)
        Heat width of each graph built from features.

    Notes
    -----
    Not jointly convex in (eta, K): a stationary point is returned (spore.md §6).
    Time O(M n_outer (n_inner + 1) n^3) per binary problem, memory O(M n^2) (plus the
    kernels kept per class), refused before any graph is built when it cannot fit.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.spore import MultiGraphSPORE
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 30)
    >>> def planted(p, q):
    ...     U = np.triu(rng.random((60, 60)) < np.where(y[:, None] == y[None, :], p, q), 1)
    ...     return (U | U.T).astype(float)
    >>> views = [planted(0.5, 0.05), planted(0.2, 0.2)]   # the second is noise
    >>> y_obs = np.full(60, -1)
    >>> y_obs[[0, 1, 2, 3, 30, 31, 32, 33]] = y[[0, 1, 2, 3, 30, 31, 32, 33]]
    >>> model = MultiGraphSPORE(affinity="precomputed", beta=0.01, n_outer=5)
    >>> model = model.fit(views, y_obs)
    >>> bool(model.weights_[0] > model.weights_[1])   # the informative graph weighs more
    True
    >>> float(np.mean(model.transduction_ == y)) > 0.8
    True
    """

    _parameter_constraints = {
        **_SPORE_CONSTRAINTS,
        "step_eta": [Interval(Real, 0, None, closed="neither"), None],
        "views": [list, tuple, None],
    }

    def __init__(self, *, C=1.0, beta=0.01, n_outer=5, n_inner=None, hops="auto", step=None,
                 step_eta=None, iterate="final", views=None, dtype="auto", keep_path=False, verbose=False,
                 affinity="knn", n_neighbors=10, weights="heat", graph_sigma=None,
                 threshold=None, metric="euclidean", knn_method="auto", n_jobs=None,
                 random_state=None):
        _store_init_params(self, locals())

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the kernels, weights and labels of all vertices.

        Parameters
        ----------
        X : list of array-likes or sparse matrices
            One feature matrix (n, d_k) per view, or one adjacency (n, n) per graph if
            ``affinity="precomputed"``.
        y : array-like of shape (n,)
            Class labels (two or more: one-vs-rest); -1 marks unlabelled vertices.

        Returns
        -------
        self
        """
        fingerprint = _fingerprint(X)
        X = self._split_views(X)
        tasks = n_tasks(y, "MultiGraphSPORE")               # cheap: before the graphs
        M = len(X)
        n_pre = n_vertices(X[0])
        if n_pre is not None:
            _check_dense_memory(n_pre, M, _dtype_for(self.dtype, n_pre), "MultiGraphSPORE",
                                tasks)
        graphs, sigmas = [], []
        for k, Xk in enumerate(X):
            W, _ = self._fit_graph(Xk, name=f"X[{k}]")
            if graphs and W.shape[0] != graphs[0].shape[0]:
                raise ValueError(f"all graphs must have the same vertices; X[0] has "
                                 f"{graphs[0].shape[0]} and X[{k}] has {W.shape[0]}.")
            graphs.append(W)
            sigmas.append(self.graph_sigma_)
        # one graph per view: the single-graph attributes of the front-end do not apply
        for name in ("affinity_matrix_", "graph_sigma_", "n_features_in_",
                     "feature_names_in_"):
            if hasattr(self, name):
                delattr(self, name)
        self._graph_state = None
        n = graphs[0].shape[0]
        dtype = _dtype_for(self.dtype, n)
        if n != n_pre:
            _check_dense_memory(n, M, dtype, "MultiGraphSPORE", tasks)
        classes, labeled, signed = ovr_labels(y, n, "MultiGraphSPORE")
        if self.affinity == "precomputed":
            weighted = [k for k, W in enumerate(graphs) if W.nnz and not np.all(W.data == 1.0)]
            if weighted:
                warnings.warn(f"X[{weighted[0]}] (precomputed affinity) is weighted; SPORE is "
                              "defined on simple graphs, so only the edge pattern "
                              "(weight > 0) is used.", UserWarning, stacklevel=3)
        self.hops_ = resolve_hops(self.hops, self.affinity)
        rs = check_random_state(self.random_state)
        v0 = lanczos_start(n, rs)
        As, K0s = [], []
        for W in graphs:
            A, K0, _ = hop_start(_pattern(W), self.hops_, dtype, v0)
            As.append(A)
            K0s.append(K0)
        self.n_unreached_ = warn_unreached(sum(As), labeled, "MultiGraphSPORE")
        self.far_from_labels_ = _warn_far_from_labels(sum(As), labeled, "MultiGraphSPORE")
        self.step_ = _step(self.step, K0s, labeled.size, self.n_outer)
        best = self.iterate == "best"
        kept_K, kept_sum = _Kept(signed.shape[1]), _Kept(signed.shape[1])

        def solve(s):
            # every task draws the same Lanczos starts as a binary fit of its labels would
            res = mkl_spore(As, s, labeled, self.C, self.beta, n_outer=self.n_outer,
                            n_inner=_n_inner(self.n_inner), step=self.step_,
                            step_eta=self.step_eta, K0s=K0s, dtype=dtype,
                            keep_path=self.keep_path, verbose=self.verbose,
                            random_state=copy.deepcopy(rs))
            if best:                                 # one set of kernels per task, not two
                res.Ks, res.eta = res.Ks_best, res.eta_best
            res.Ks_best = None
            return (res.scores_best if best else res.scores), res

        def keep(res):
            kept_sum.add(sum(e * K for e, K in zip(res.eta, res.Ks)))
            kept_K.add(res.Ks if kept_K.n_tasks == 1 else np.stack(res.Ks))
            res.Ks = None

        results, scores = one_vs_rest(solve, signed, keep=keep, n_jobs=_ovr_jobs(
            self.n_jobs, n, signed.shape[1], M, dtype))
        self.affinity_matrices_ = graphs
        self.graph_sigmas_ = sigmas
        self.classes_ = classes
        self.kernels_ = kept_K.value
        self.weights_ = results[0].eta if len(results) == 1 else np.stack(
            [r.eta for r in results])
        self.embedding_ = kept_sum.value
        self.decision_scores_ = scores
        self.transduction_ = transduce(scores, classes, labeled, signed)
        _collect(self, results)
        self._fit_X_fingerprint = fingerprint
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # X is a list of views, or one matrix whose rows are the vertices and whose column
        # blocks are the views: never a single square affinity to index on both axes
        tags.input_tags.pairwise = False
        return tags

    def _split_views(self, X):
        """The list of views: ``X`` itself, or the column blocks ``views`` names."""
        if self.views is None:
            if not isinstance(X, (list, tuple)) or len(X) < 1:
                raise ValueError("X must be a non-empty list of graphs (or of feature "
                                 "matrices, one per view), or one matrix whose column blocks "
                                 f"the views parameter names; got {type(X).__name__}.")
            return list(X)
        if isinstance(X, (list, tuple)):
            raise ValueError("with views set, X is one matrix whose column blocks are the "
                             "views; got a list (leave views=None to pass a list).")
        Xa = X if sp.issparse(X) else np.asarray(X)
        if Xa.ndim != 2:
            raise ValueError(f"X must be 2-D with views set, got shape {Xa.shape}.")
        d = Xa.shape[1]
        out = []
        for k, v in enumerate(self.views):
            idx = np.arange(d)[v] if isinstance(v, slice) else np.asarray(v)
            if idx.size == 0 or idx.min() < -d or idx.max() >= d:
                raise ValueError(f"views[{k}] selects no column or a column outside X's "
                                 f"{d} columns.")
            out.append(Xa[:, idx])
        return out
