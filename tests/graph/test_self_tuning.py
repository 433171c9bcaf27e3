"""Self-tuned kNN weights against a brute-force dense construction."""

import numpy as np
import pytest
from sklearn.metrics import pairwise_distances

from semisup import HarmonicFunction
from semisup.graph import knn_graph


def _dense_self_tuned(X, k):
    """Oracle: all pairwise distances, each point's k-th neighbour distance d_k, the edge
    set of the symmetric ("OR") kNN graph, weights exp(-4 |x_i - x_j|^2 / (d_k(i) d_k(j)))."""
    D = pairwise_distances(X)
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    dk = np.take_along_axis(D, order[:, -1:], axis=1).ravel()
    A = np.zeros_like(D, dtype=bool)
    A[np.repeat(np.arange(len(X)), k), order.ravel()] = True
    A |= A.T
    np.fill_diagonal(D, 0.0)
    return np.where(A, np.exp(-4.0 * D ** 2 / np.outer(dk, dk)), 0.0)


def test_self_tuned_graph_matches_dense_construction():
    X = np.random.default_rng(0).normal(size=(120, 3))
    W = knn_graph(X, 7, weights="self_tuning", method="exact")
    np.testing.assert_allclose(W.toarray(), _dense_self_tuned(X, 7), rtol=1e-12, atol=0)
    assert (W != W.T).nnz == 0


def test_new_points_use_their_own_kth_distance():
    rng = np.random.default_rng(1)
    X, X_new = rng.normal(size=(80, 2)), rng.normal(size=(15, 2)) * 2.0
    y = np.full(80, -1)
    y[:2] = [0, 1]
    est = HarmonicFunction(n_neighbors=6, weights="self_tuning").fit(X, y)
    Wq = est._query_affinity(X_new).toarray()
    D = pairwise_distances(X_new, X)
    Dt = pairwise_distances(X)
    np.fill_diagonal(Dt, np.inf)
    dk_train = np.sort(Dt, axis=1)[:, 5]
    dk_new = np.sort(D, axis=1)[:, 5]
    near = D <= dk_new[:, None]
    ref = np.where(near, np.exp(-4.0 * D ** 2 / np.outer(dk_new, dk_train)), 0.0)
    np.testing.assert_allclose(Wq, ref, rtol=1e-12, atol=0)


def test_self_tuning_is_knn_only():
    X = np.random.default_rng(2).normal(size=(30, 2))
    y = np.full(30, -1)
    y[:2] = [0, 1]
    with pytest.raises(ValueError, match="affinity='knn' only"):
        HarmonicFunction(affinity="rbf_threshold", weights="self_tuning").fit(X, y)


def test_coinciding_points_keep_finite_weights():
    X = np.vstack([np.zeros((12, 2)), np.random.default_rng(3).normal(size=(20, 2))])
    W = knn_graph(X, 5, weights="self_tuning")
    assert np.isfinite(W.data).all() and W.data.max() <= 1.0
