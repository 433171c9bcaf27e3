"""k-nearest-neighbour graphs, exact (scikit-learn) or approximate (pynndescent)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from .._optional import available, require
from .._validation import check_finite
from .weights import symmetrize_graph

#: above this many points ``method="auto"`` uses approximate neighbours when pynndescent is
#: installed (exact brute force is O(n^2 d); NN-descent is roughly O(n^1.14 d)).
AUTO_APPROX_THRESHOLD = 20_000

_WEIGHTS = ("binary", "heat", "distance")
_METRICS = ("euclidean", "cosine")


def _exact_neighbors(X, k, metric, n_jobs):
    algorithm = "brute" if (sp.issparse(X) or metric == "cosine" or X.shape[1] > 30) else "auto"
    nn = NearestNeighbors(n_neighbors=k, metric=metric, algorithm=algorithm, n_jobs=n_jobs)
    nn.fit(X)
    # X=None: each point is excluded from its own neighbour list, even with duplicates.
    dist, ind = nn.kneighbors(None, return_distance=True)
    return dist, ind


def _approx_neighbors(X, k, metric, n_jobs, random_state):
    pynndescent = require("pynndescent", "approximate nearest neighbours (method='approx')")
    index = pynndescent.NNDescent(X, n_neighbors=k + 1, metric=metric,
                                  random_state=random_state, n_jobs=n_jobs or 1,
                                  low_memory=True, compressed=True)
    ind, dist = index.neighbor_graph
    n = X.shape[0]
    # Drop each point from its own list (it is usually, but not always, in position 0).
    keep = ind != np.arange(n)[:, None]
    out_i = np.empty((n, k), dtype=np.int64)
    out_d = np.empty((n, k), dtype=np.float64)
    for_all = keep.sum(axis=1) >= k
    rows = np.nonzero(for_all)[0]
    sel = np.argsort(~keep[rows], axis=1, kind="stable")[:, :k]
    out_i[rows] = np.take_along_axis(ind[rows], sel, axis=1)
    out_d[rows] = np.take_along_axis(dist[rows], sel, axis=1)
    bad = np.nonzero(~for_all)[0]
    out_i[bad] = ind[bad, 1:k + 1]
    out_d[bad] = dist[bad, 1:k + 1]
    return out_d, out_i


def _check_points(X):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X)
        if X.dtype.kind not in "fiub":
            raise ValueError(f"X must be numeric, got dtype {X.dtype}.")
        X = np.asarray(X, dtype=np.float64 if X.dtype != np.float32 else np.float32)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
    check_finite(X, "X")
    return X


def knn_search(X, n_neighbors: int = 10, *, metric: str = "euclidean", method: str = "auto",
               n_jobs: int | None = None, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Directed k-nearest-neighbour lists of every point, excluding the point itself.

    Parameters are those of :func:`knn_graph`.

    Returns
    -------
    dist : ndarray of shape (n_samples, n_neighbors), float64
        Distances to the neighbours, ascending (approximate for ``method="approx"``).
    ind : ndarray of shape (n_samples, n_neighbors), int
        Indices of the neighbours.
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}.")
    if method not in ("exact", "approx", "auto"):
        raise ValueError(f"method must be 'exact', 'approx' or 'auto', got {method!r}.")
    X = _check_points(X)
    n = X.shape[0]
    k = int(n_neighbors)
    if k < 1:
        raise ValueError(f"n_neighbors must be >= 1, got {n_neighbors}.")
    if k >= n:
        raise ValueError(f"n_neighbors={k} must be smaller than the number of points ({n}).")
    if method == "auto":
        method = ("approx" if n > AUTO_APPROX_THRESHOLD and not sp.issparse(X)
                  and available("pynndescent") else "exact")
    if method == "approx":
        dist, ind = _approx_neighbors(X, k, metric, n_jobs, random_state)
    else:
        dist, ind = _exact_neighbors(X, k, metric, n_jobs)
    return np.maximum(dist.astype(np.float64), 0.0), ind


def heat_sigma(dist) -> float:
    """Default heat-kernel width: the mean of the non-zero directed kNN distances.

    This is lapsvmp's ``t = 0`` convention (Melacci & Belkin 2011); 1.0 if every distance
    is zero.
    """
    dist = np.asarray(dist)
    nz = dist[dist > 0]
    return float(nz.mean()) if nz.size else 1.0


def edge_weights(dist, weights: str = "binary", sigma: float | None = None) -> np.ndarray:
    """Edge weights from neighbour distances (``binary``, ``heat`` or ``distance``).

    ``heat`` is ``exp(-d^2 / (2 sigma^2))``; ``sigma=None`` uses :func:`heat_sigma`.
    """
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {_WEIGHTS}, got {weights!r}.")
    dist = np.asarray(dist, dtype=np.float64)
    if weights == "binary":
        return np.ones_like(dist)
    if weights == "distance":
        return dist.copy()
    if sigma is None:
        sigma = heat_sigma(dist)
    return np.exp(-dist ** 2 / (2.0 * sigma ** 2))


def graph_from_neighbors(dist, ind, *, weights: str = "binary", sigma: float | None = None,
                         symmetrize: str = "max") -> sp.csr_matrix:
    """Symmetric sparse graph from directed neighbour lists (see :func:`knn_graph`)."""
    dist = np.asarray(dist, dtype=np.float64)
    ind = np.asarray(ind)
    if dist.shape != ind.shape or dist.ndim != 2:
        raise ValueError(f"dist and ind must be 2-D of the same shape, got {dist.shape} "
                         f"and {ind.shape}.")
    n, k = ind.shape
    vals = edge_weights(dist, weights, sigma)
    A = sp.csr_matrix((vals.ravel(), ind.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    return symmetrize_graph(A, symmetrize)


def knn_graph(X, n_neighbors: int = 10, *, weights: str = "binary", sigma: float | None = None,
              metric: str = "euclidean", symmetrize: str = "max", method: str = "auto",
              n_jobs: int | None = None, random_state=None) -> sp.csr_matrix:
    """Symmetric k-nearest-neighbour graph.

    Each point is joined to its ``n_neighbors`` nearest *other* points (directed weights
    ``a_ij``), then the graph is symmetrized.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    n_neighbors : int
        Neighbours per point, excluding the point itself.
    weights : {"binary", "heat", "distance"}
        ``binary``: 1. ``heat``: ``exp(-d_ij^2 / (2 sigma^2))``; with ``sigma=None`` the
        width is the mean of the non-zero directed kNN distances (lapsvmp's ``t = 0``
        convention, Melacci & Belkin 2011). ``distance``: ``d_ij``.
    sigma : float, optional
        Heat-kernel width.
    metric : {"euclidean", "cosine"}
        Distance used to find neighbours (cosine distance is ``1 - cos``).
    symmetrize : {"max", "mean", "mutual"}
        See :func:`symmetrize_graph`. ``"max"`` is the usual "OR" kNN graph.
    method : {"exact", "approx", "auto"}
        Exact brute force / trees (scikit-learn) or NN-descent (pynndescent, extra
        ``[fast]``). ``auto`` is approximate above ``AUTO_APPROX_THRESHOLD`` points when
        pynndescent is installed.
    n_jobs : int, optional
        Parallel jobs for the neighbour search.
    random_state : int, optional
        Seed of the approximate search.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric, non-negative, zero diagonal, float64. Memory O(n * n_neighbors).
    """
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {_WEIGHTS}, got {weights!r}.")
    if symmetrize not in ("max", "mean", "mutual"):
        raise ValueError("symmetrize must be one of ('max', 'mean', 'mutual'), "
                         f"got {symmetrize!r}.")
    if sigma is not None and not sigma > 0:
        raise ValueError(f"sigma must be positive, got {sigma}.")
    dist, ind = knn_search(X, n_neighbors, metric=metric, method=method, n_jobs=n_jobs,
                           random_state=random_state)
    return graph_from_neighbors(dist, ind, weights=weights, sigma=sigma, symmetrize=symmetrize)
