"""Laplacian identities, components, thresholded similarity graphs, bad affinities."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from semisup.graph import (connected_components, cosine_threshold_graph, degrees, knn_graph,
                           laplacian, rbf_threshold_graph, split_by_component)


@pytest.fixture
def graph(rng):
    X = rng.normal(size=(80, 3))
    return knn_graph(X, 5, weights="heat", method="exact")


def _with_isolated(W):
    """Append two isolated nodes."""
    n = W.shape[0]
    return sp.csr_matrix(sp.block_diag([W, sp.csr_matrix((2, 2))]), shape=(n + 2, n + 2))


def test_unnormalized_laplacian_identities(graph):
    L = laplacian(graph)
    n = graph.shape[0]
    np.testing.assert_allclose(L @ np.ones(n), 0.0, atol=1e-12)
    assert abs(L - L.T).max() == 0
    np.testing.assert_allclose(L.diagonal(), degrees(graph))
    np.testing.assert_allclose(L.toarray(), np.diag(graph.sum(1).A1) - graph.toarray())
    eig = np.linalg.eigvalsh(L.toarray())
    assert eig.min() > -1e-10
    # Quadratic form = sum over edges of w_ij (f_i - f_j)^2.
    f = np.arange(n, dtype=float) ** 0.5
    Wd = graph.toarray()
    assert f @ (L @ f) == pytest.approx(0.5 * (Wd * (f[:, None] - f[None, :]) ** 2).sum())


def test_normalized_laplacian_identities(graph):
    L = laplacian(graph, "normalized")
    d = degrees(graph)
    np.testing.assert_allclose(L.diagonal(), 1.0)
    assert abs(L - L.T).max() < 1e-15
    np.testing.assert_allclose(L @ np.sqrt(d), 0.0, atol=1e-12)
    eig = np.linalg.eigvalsh(L.toarray())
    assert eig.min() > -1e-10 and eig.max() < 2 + 1e-10


def test_isolated_nodes(graph):
    W = _with_isolated(graph)
    n = W.shape[0]
    Lu = laplacian(W)
    assert Lu[n - 1, n - 1] == 0 and Lu[n - 2].nnz == 0
    Ln = laplacian(W, "normalized")
    assert np.isfinite(Ln.data).all()
    assert Ln[n - 1, n - 1] == 1.0
    np.testing.assert_allclose(Ln.diagonal(), 1.0)


@pytest.mark.parametrize("kind", ["unnormalized", "normalized"])
def test_laplacian_power_equals_dense_matrix_power(graph, kind):
    L = laplacian(graph, kind).toarray()
    for p in (2, 3):
        np.testing.assert_allclose(laplacian(graph, kind, power=p).toarray(),
                                   np.linalg.matrix_power(L, p), atol=1e-12)


def test_laplacian_bad_inputs(graph):
    with pytest.raises(ValueError, match="kind"):
        laplacian(graph, "random-walk")
    for p in (0, 1.5, -1):
        with pytest.raises(ValueError, match="power"):
            laplacian(graph, power=p)
    asym = graph.tolil(copy=True)
    asym[0, 1] = 5.0
    with pytest.raises(ValueError, match="symmetric"):
        laplacian(asym.tocsr())
    neg = graph.copy()
    neg.data[0] = -1.0
    neg = neg.minimum(neg.T)
    with pytest.raises(ValueError, match="negative"):
        laplacian(neg)
    nan = graph.copy()
    nan.data[:] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        laplacian(nan)
    with pytest.raises(ValueError, match="square"):
        laplacian(sp.csr_matrix((3, 4)))


def test_self_loops_are_removed_with_warning(graph):
    W = graph + sp.identity(graph.shape[0], format="csr")
    with pytest.warns(UserWarning, match="self-loops"):
        L = laplacian(W)
    np.testing.assert_allclose(L.toarray(), laplacian(graph).toarray())


def test_components_and_split(rng):
    blocks = [knn_graph(rng.normal(size=(m, 2)), 3, method="exact") for m in (10, 25, 4)]
    W = sp.block_diag(blocks + [sp.csr_matrix((1, 1))], format="csr")
    perm = rng.permutation(W.shape[0])
    W = W[perm][:, perm].tocsr()
    n_comp, labels = connected_components(W)
    sizes = sorted(np.bincount(labels).tolist())
    assert n_comp >= 4 and sum(sizes) == 40 and sizes[0] == 1
    seen = np.zeros(40, dtype=int)
    prev = np.inf
    for idx, W_sub in split_by_component(W):
        assert len(idx) <= prev
        prev = len(idx)
        seen[idx] += 1
        assert connected_components(W_sub)[0] == 1
        assert abs(W_sub - W[idx][:, idx]).max() == 0 if W_sub.nnz else True
        # No edge leaves a component.
        outside = np.setdiff1d(np.arange(40), idx)
        assert W[idx][:, outside].nnz == 0
    np.testing.assert_array_equal(seen, 1)


def test_rbf_threshold_graph_against_dense_definition(rng):
    X = rng.normal(size=(40, 3))
    D = cdist(X, X)
    off = ~np.eye(40, dtype=bool)
    sigma = D[off].mean()
    S = np.exp(-D ** 2 / (2 * sigma ** 2))
    thr = S[off].mean()
    expected = ((S > thr) & off).astype(float)
    W = rbf_threshold_graph(X)
    np.testing.assert_array_equal(W.toarray(), expected)
    Ww = rbf_threshold_graph(X, weighted=True)
    np.testing.assert_allclose(Ww.toarray(), np.where(expected > 0, S, 0), rtol=1e-12)
    # An explicit sigma and threshold.
    S2 = np.exp(-D ** 2 / (2 * 0.5 ** 2))
    W2 = rbf_threshold_graph(X, sigma=0.5, threshold=0.3)
    np.testing.assert_array_equal(W2.toarray(), ((S2 > 0.3) & off).astype(float))
    assert abs(W - W.T).max() == 0


def test_cosine_threshold_graph_against_dense_definition(rng):
    X = np.abs(rng.normal(size=(70, 6)))
    X[5] = 0.0  # a zero row has no edges
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    Xn = X / np.where(norms > 0, norms, 1)
    C = Xn @ Xn.T
    off = ~np.eye(70, dtype=bool)
    thr = 0.8
    expected = ((C > thr) & off).astype(float)
    W = cosine_threshold_graph(X, thr, block_size=16)
    np.testing.assert_array_equal(W.toarray(), expected)
    assert W[5].nnz == 0
    Ws = cosine_threshold_graph(sp.csr_matrix(X), thr, weighted=True, block_size=32)
    np.testing.assert_allclose(Ws.toarray(), np.where(expected > 0, C, 0), rtol=1e-12)
    assert cosine_threshold_graph(X).shape == (70, 70)  # default threshold 0.4


def test_threshold_graphs_bad_inputs(rng, monkeypatch):
    X = rng.normal(size=(10, 2))
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        rbf_threshold_graph(X)
    with pytest.raises(ValueError, match="NaN or infinite"):
        cosine_threshold_graph(X)
    with pytest.raises(ValueError, match="sigma"):
        rbf_threshold_graph(np.ones((5, 2)))
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", "1000")
    with pytest.raises(MemoryError, match="knn_graph"):
        rbf_threshold_graph(rng.normal(size=(50, 2)))
