"""Regression tests of the graph layer's reliability fixes (issue: reliability)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

from semisup import HarmonicFunction
from semisup._validation import check_affinity
from semisup.graph import knn_graph, knn_search, laplacian
from semisup.graph.laplacian import power_nnz_bound
from semisup.linalg.spd import SPDSolver


@pytest.fixture
def blobs(rng):
    X = np.vstack([rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 5])
    y = np.full(40, -1)
    y[[0, 1]] = 0
    y[[20, 21]] = 1
    return X, y


def test_knn_graph_refuses_fractional_neighbours(blobs):
    X, _ = blobs
    with pytest.raises(InvalidParameterError, match="n_neighbors"):
        knn_graph(X, 2.5)
    with pytest.raises(InvalidParameterError, match="weights"):
        knn_graph(X, 3, weights="gauss")


@pytest.mark.parametrize("scale", [1e200, 1e155, 1e-200])
def test_knn_graph_extreme_finite_magnitudes(blobs, scale):
    X, _ = blobs
    ref = knn_graph(X, 5, weights="heat")
    W = knn_graph(X * scale, 5, weights="heat")
    assert np.isfinite(W.data).all()
    np.testing.assert_allclose(W.toarray(), ref.toarray(), atol=1e-12)
    dist, _ = knn_search(X * scale, 5)
    np.testing.assert_allclose(dist, knn_search(X, 5)[0] * scale, rtol=1e-10)


def test_knn_graph_object_dtype(blobs):
    X, _ = blobs
    W = knn_graph(X.astype(object), 4)
    assert (W != knn_graph(X, 4)).nnz == 0


def test_check_affinity_is_canonical_and_never_touches_the_input():
    # unsorted indices, a duplicate (row 2: 0.5 + 0.5 at column 0) and a stored zero
    indptr = np.array([0, 2, 3, 6])
    indices = np.array([2, 1, 0, 0, 2, 0])
    data = np.array([1.0, 1.0, 1.0, 0.5, 0.0, 0.5])
    W = sp.csr_matrix((data, indices, indptr), shape=(3, 3))
    before = (W.indptr.copy(), W.indices.copy(), W.data.copy())
    out = check_affinity(W)
    assert out.has_canonical_format and out.nnz == 4 and not (out.data == 0).any()
    np.testing.assert_array_equal(out.toarray(), [[0, 1, 1], [1, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(W.indptr, before[0])
    np.testing.assert_array_equal(W.indices, before[1])
    np.testing.assert_array_equal(W.data, before[2])
    with pytest.raises(ValueError, match="empty"):
        check_affinity(sp.csr_matrix((0, 0)))
    dense_obj = np.array([[0, 1], [1, 0]], dtype=object)
    assert check_affinity(dense_obj).nnz == 2


def test_laplacian_refuses_overflowing_degrees():
    W = sp.csr_matrix(np.array([[0, 1e308, 0], [1e308, 0, 1e308], [0, 1e308, 0]]))
    with pytest.raises(ValueError, match="overflow"):
        laplacian(W)


def test_laplacian_power_bound_and_refusal(rng, monkeypatch):
    X = rng.normal(size=(200, 3))
    W = knn_graph(X, 8)
    for p in (2, 3):
        assert laplacian(W, power=p).nnz <= power_nnz_bound(W, p)
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(10_000))
    with pytest.raises(MemoryError, match=r"L\^3.*smaller power"):
        laplacian(W, power=3)
    laplacian(W)                    # power 1 is never refused by the bound


def test_harmonic_with_weights_near_float_limits():
    for big in (1e308, 1e-300):
        W = sp.csr_matrix(np.array([[0, big, 0], [big, 0, big], [0, big, 0]]))
        F = HarmonicFunction(affinity="precomputed").fit(W, [0, -1, 1]).label_distributions_
        np.testing.assert_allclose(F[1], [0.5, 0.5])


def test_harmonic_probabilities_stay_on_the_simplex():
    # a path with a weight 1e-13: exact solution [1, 0] at the pendant vertex
    W = sp.diags([[1e-13, 1, 1, 1]] * 2, [1, -1], shape=(5, 5)).tocsr()
    for solver in ("direct", "cg"):
        F = HarmonicFunction(affinity="precomputed", solver=solver).fit(
            W, [-1, 0, -1, 1, -1]).label_distributions_
        assert F.min() >= 0 and F.max() <= 1
        np.testing.assert_allclose(F.sum(axis=1), 1.0, atol=1e-15)
        np.testing.assert_allclose(F[0], [1.0, 0.0], atol=1e-12)


def test_harmonic_small_heat_width_is_solved_with_a_warning(blobs):
    # a heat width far below the point spacing made L_uu singular in floating point
    # (LinAlgError from the Cholesky); now a leaky solve with a warning
    X, y = blobs
    with pytest.warns(UserWarning, match="numerically disconnected"):
        m = HarmonicFunction(weights="heat", graph_sigma=0.05, n_neighbors=5).fit(X, y)
    F = m.label_distributions_
    assert np.isfinite(F).all() and F.min() >= 0
    np.testing.assert_allclose(F.sum(axis=1), 1.0, atol=1e-12)
    assert set(m.transduction_) <= {0, 1}


def test_spd_direct_refuses_hopeless_fill(rng, monkeypatch):
    # a random regular-ish graph (an expander): huge envelope
    n = 2000
    i = np.repeat(np.arange(n), 4)
    j = rng.integers(0, n, size=4 * n)
    W = sp.csr_matrix((np.ones(4 * n), (i, j)), shape=(n, n))
    W = ((W + W.T) > 0).astype(float)
    W.setdiag(0)
    W.eliminate_zeros()
    A = (laplacian(W) + sp.identity(n)).tocsr()
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(1_000_000))
    with pytest.raises(MemoryError, match="solver='cg'"):
        SPDSolver(A, method="direct")
    assert SPDSolver(A, method="auto").method_ == "cg"
    monkeypatch.delenv("SEMISUP_MAX_MEMORY")
    with pytest.warns(UserWarning, match="fill is high"):
        SPDSolver(A, method="direct")


def test_cosine_threshold_graph_refuses_a_dense_graph_early(monkeypatch):
    from semisup.graph import cosine_threshold_graph

    X = np.ones((300, 5))                      # identical rows: every pair is an edge
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(1_000_000))
    with pytest.raises(MemoryError, match="projected from its first 50 rows"):
        cosine_threshold_graph(X, threshold=0.5, block_size=50)
    monkeypatch.delenv("SEMISUP_MAX_MEMORY")
    assert cosine_threshold_graph(X, threshold=0.5, block_size=50).nnz == 300 * 299
