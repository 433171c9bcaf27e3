"""The in-process engine, and the kNN-graph recipe every engine shares.

:class:`InProcessEngine` serves numpy and scipy.sparse inputs (the default of
:func:`semisup.engines.engine_for`): the kNN graph from :func:`semisup.graph.knn_search`'s
in-memory search, and the thresholded graphs of the SPORE paper. :func:`fit_knn_graph` and
:func:`query_knn_affinity` are the kNN graph and its out-of-sample affinities written
against any engine's ``knn_search``, so that an engine (Dask, GPU) only supplies the search.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import normalize

from .._validation import check_affinity
from ..engines import Engine, GraphFit
from .neighbors import (edge_weights, graph_from_neighbors, heat_sigma, knn_search_in_memory,
                        kth_neighbor_distance)
from .weights import _dense_threshold, cosine_threshold_graph, rbf_similarity

__all__ = ["InProcessEngine", "fit_knn_graph", "query_knn_affinity", "COSINE_THRESHOLD"]

#: cosine threshold of the paper's MNIST graphs (cosine distance < 0.4)
COSINE_THRESHOLD = 0.6


def _seed(random_state):
    """An int seed for libraries that take one (pynndescent), stable for a given input."""
    if random_state is None or isinstance(random_state, (Integral, np.integer)):
        return random_state
    return int(np.random.default_rng(random_state.randint(2 ** 31 - 1)
                                     if hasattr(random_state, "randint")
                                     else random_state).integers(2 ** 31 - 1))


def fit_knn_graph(engine: Engine, est, X, *, validated: bool = False) -> GraphFit:
    """The symmetric kNN graph of the estimator's parameters, searched by ``engine``.

    ``n_neighbors`` is lowered to ``n - 1`` (with a warning) on fewer points; the heat
    width is ``graph_sigma`` or the mean non-zero kNN distance (:func:`heat_sigma`). The
    state kept for new points is ``(X, k, kth)``: ``kth`` the training points' distances to
    their ``k``-th neighbour, which self-tuned weights of new points need (else None).
    ``validated=True`` tells an engine whose ``knn_search`` takes ``validated`` (the
    in-process one) that ``X`` passed the front-end's checks, which it need not repeat.
    """
    n = X.shape[0]
    k = est.n_neighbors
    if k >= n:
        warnings.warn(f"n_neighbors={k} is not smaller than the number of points ({n}); "
                      f"using {n - 1}.", UserWarning, stacklevel=5)
        k = n - 1
    checked = {"validated": True} if validated else {}
    dist, ind = engine.knn_search(X, k, metric=est.metric, method=est.knn_method,
                                  n_jobs=est.n_jobs, random_state=_seed(est.random_state),
                                  **checked)
    sigma = None
    if est.weights == "heat":
        sigma = est.graph_sigma if est.graph_sigma is not None else heat_sigma(dist)
    W = graph_from_neighbors(dist, ind, weights=est.weights, sigma=sigma)
    kth = kth_neighbor_distance(dist) if est.weights == "self_tuning" else None
    return GraphFit(check_affinity(W, "the graph built from X"), X, sigma, (X, k, kth))


def query_knn_affinity(engine: Engine, est, state, X_new) -> sp.csr_matrix:
    """``(m, n_train)`` weights of each new point's ``k`` nearest training points (the
    state of :func:`fit_knn_graph`; the training graph's weights and width)."""
    X_fit, k, kth = state
    dist, ind = engine.knn_search(X_fit, k, metric=est.metric, Q=X_new, n_jobs=est.n_jobs)
    m = ind.shape[0]
    vals = edge_weights(np.maximum(dist, 0.0), est.weights, est.graph_sigma_, ind=ind,
                        kth=kth)
    return sp.csr_matrix((vals.ravel(), ind.ravel(), np.arange(0, m * k + 1, k)),
                         shape=(m, X_fit.shape[0]))


class InProcessEngine(Engine):
    """numpy / scipy.sparse inputs, computed in this process (BLAS threads, ``n_jobs``)."""

    name = "numpy"

    def knn_search(self, X, n_neighbors, *, metric="euclidean", Q=None, method="auto",
                   n_jobs=None, random_state=None, validated=False):
        """:meth:`Engine.knn_search`; ``validated=True``: ``X`` passed the front-end's
        checks (2-D, float64 / float32, finite), not repeated
        (:func:`~semisup.graph.neighbors.knn_search_in_memory`)."""
        if Q is None:
            return knn_search_in_memory(X, n_neighbors, metric=metric, method=method,
                                        n_jobs=n_jobs, random_state=random_state,
                                        validated=validated)
        # a brute-force index only keeps a reference to X
        nn = NearestNeighbors(n_neighbors=n_neighbors, metric=metric, algorithm="brute",
                              n_jobs=n_jobs).fit(X)
        return nn.kneighbors(Q)

    def fit_graph(self, est, X) -> GraphFit:
        if est.affinity == "knn":
            return fit_knn_graph(self, est, X, validated=True)
        n = X.shape[0]
        if est.affinity == "rbf_threshold":
            S, sigma = rbf_similarity(X, est.graph_sigma)
            off = ~np.eye(n, dtype=bool)
            thr = float(S[off].mean()) if est.threshold is None else float(est.threshold)
            W = _dense_threshold(S, thr, est.weights == "heat")
        else:
            sigma = None
            thr = COSINE_THRESHOLD if est.threshold is None else float(est.threshold)
            W = cosine_threshold_graph(X, threshold=thr, weighted=est.weights == "heat")
        return GraphFit(check_affinity(W, "the graph built from X"), X, sigma,
                        (est.affinity, X, thr))

    def query_affinity(self, est, state, X_new):
        if est.affinity == "knn":
            return query_knn_affinity(self, est, state, X_new)
        kind, X_fit, thr = state
        if kind == "rbf_threshold":
            S, _ = rbf_similarity(X_new, est.graph_sigma_, Y=X_fit)
        else:
            S = normalize(X_new) @ normalize(X_fit).T
            S = S.toarray() if sp.issparse(S) else np.asarray(S)
        W = sp.csr_matrix(np.where(S > thr, S if est.weights == "heat" else 1.0, 0.0))
        W.eliminate_zeros()
        return W
