"""The graph front-end's Dask path: the training kNN graph and query affinities of a dask X.

:meth:`semisup.graph.frontend.GraphMixin._fit_graph` hands a dask array here. The kNN lists
are computed blockwise on the workers (:func:`~semisup.distributed.knn_search_dask`); only
the ``n x k`` lists reach the client, where the sparse graph (and, in the estimators, its
Laplacian) is built exactly as for an in-memory ``X``. The training points stay a dask array
(``_graph_state``), against which new points are searched on the workers too.
"""

from __future__ import annotations

import warnings

import scipy.sparse as sp

from .._validation import check_affinity
from ..graph.neighbors import (edge_weights, graph_from_neighbors, heat_sigma,
                               kth_neighbor_distance)
from .neighbors import check_dask_points, knn_search_dask


def fit_graph_dask(est, X):
    """``(W, X)`` for an estimator using :class:`~semisup.graph.frontend.GraphMixin`."""
    if est.affinity != "knn":
        raise ValueError(f"a dask array X is supported with affinity='knn' only, got "
                         f"affinity={est.affinity!r}; pass X in memory (np.asarray(X)).")
    if est.knn_method == "approx":
        raise ValueError("knn_method='approx' needs X in memory; a dask array X is "
                         "searched exactly (knn_method='exact' or 'auto').")
    X, _ = check_dask_points(X)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"X has {n} sample(s); at least 2 are needed.")
    est.n_features_in_ = X.shape[1]
    k = est.n_neighbors
    if k >= n:
        warnings.warn(f"n_neighbors={k} is not smaller than the number of points ({n}); "
                      f"using {n - 1}.", UserWarning, stacklevel=4)
        k = n - 1
    dist, ind = knn_search_dask(X, k, metric=est.metric)
    if est.weights == "heat":
        est.graph_sigma_ = est.graph_sigma if est.graph_sigma is not None else heat_sigma(dist)
    W = graph_from_neighbors(dist, ind, weights=est.weights, sigma=est.graph_sigma_)
    kth = kth_neighbor_distance(dist) if est.weights == "self_tuning" else None
    est._graph_state = ("knn_dask", X, k, kth)
    W = check_affinity(W, "the graph built from X")
    est.affinity_matrix_ = W
    return W, X


def query_affinity_dask(est, X_new):
    """``m x n_train`` affinities of (validated) new points to a dask training set."""
    _, X_fit, k, kth = est._graph_state
    dist, ind = knn_search_dask(X_fit, k, metric=est.metric, Q=X_new)
    m = ind.shape[0]
    vals = edge_weights(dist, est.weights, est.graph_sigma_, ind=ind, kth=kth)
    return sp.csr_matrix((vals.ravel(), ind.ravel(), range(0, m * k + 1, k)),
                         shape=(m, X_fit.shape[0]))
