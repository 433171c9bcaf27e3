"""kNN graphs against scikit-learn's kneighbors_graph, hand-made symmetrization and TV-LAPSVM."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import kneighbors_graph

from semisup.graph import (edge_weights, graph_from_neighbors, heat_sigma, knn_graph,
                           knn_search, laplacian, symmetrize_graph)

# TV-LAPSVM-2 (shared/methods/lapsvm.md)
TV2_X = np.array([[0, 0], [1, 0], [0, 1.5], [3, 0], [3, 1.2], [5, 5]], dtype=float)
TV2_HEAT = {(0, 1): 0.8913296681, (0, 2): 0.771944923, (1, 2): 0.688057412,
            (1, 3): 0.6311803201, (1, 4): 0.5348212948, (3, 4): 0.8473351873,
            (3, 5): 0.035572346, (4, 5): 0.1198691433}
TV2_NORM_L = {(0, 1): -0.4171137105, (0, 2): -0.495367561, (1, 2): -0.3436734494,
              (1, 3): -0.3095822064, (1, 4): -0.263371089, (3, 4): -0.5618767129,
              (3, 5): -0.0733252404, (4, 5): -0.2480762887}


def _upper_dict(W):
    W = sp.triu(W, k=1).tocoo()
    return {(int(i), int(j)): float(v) for i, j, v in zip(W.row, W.col, W.data)}


@pytest.fixture
def points(rng):
    return rng.normal(size=(120, 5))


@pytest.mark.parametrize("mode,weights", [("connectivity", "binary"),
                                          ("distance", "distance")])
def test_knn_graph_matches_sklearn_kneighbors_graph(points, mode, weights):
    A = kneighbors_graph(points, 6, mode=mode, include_self=False)
    expected = A.maximum(A.T).toarray()
    W = knn_graph(points, 6, weights=weights, method="exact")
    np.testing.assert_allclose(W.toarray(), expected, rtol=1e-12, atol=1e-12)


def test_symmetrization_rules_by_hand():
    # Points on a line: 0 -- 1 ---- 2 (distances 1 and 3); 1-NN lists 0->1, 1->0, 2->1.
    X = np.array([[0.0], [1.0], [4.0]])
    dist, ind = knn_search(X, 1, method="exact")
    assert ind.ravel().tolist() == [1, 0, 1]
    np.testing.assert_allclose(dist.ravel(), [1, 1, 3])
    w_max = knn_graph(X, 1, weights="distance", symmetrize="max", method="exact").toarray()
    w_mean = knn_graph(X, 1, weights="distance", symmetrize="mean", method="exact").toarray()
    w_mut = knn_graph(X, 1, weights="distance", symmetrize="mutual", method="exact").toarray()
    np.testing.assert_allclose(w_max, [[0, 1, 0], [1, 0, 3], [0, 3, 0]])
    np.testing.assert_allclose(w_mean, [[0, 1, 0], [1, 0, 1.5], [0, 1.5, 0]])
    np.testing.assert_allclose(w_mut, [[0, 1, 0], [1, 0, 0], [0, 0, 0]])


def test_symmetrize_graph_asymmetric_weights():
    A = sp.csr_matrix(np.array([[0, 2.0, 0], [1.0, 0, 0], [0, 4.0, 5.0]]))
    np.testing.assert_allclose(symmetrize_graph(A, "max").toarray(),
                               [[0, 2, 0], [2, 0, 4], [0, 4, 0]])
    np.testing.assert_allclose(symmetrize_graph(A, "mean").toarray(),
                               [[0, 1.5, 0], [1.5, 0, 2], [0, 2, 0]])
    np.testing.assert_allclose(symmetrize_graph(A, "mutual").toarray(),
                               [[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match="symmetrize"):
        symmetrize_graph(A, "or")


def test_tv_lapsvm_2_heat_graph_and_normalized_laplacian():
    dist, ind = knn_search(TV2_X, 2, method="exact")
    assert [set(r) for r in ind.tolist()] == [{1, 2}, {0, 2}, {0, 1}, {4, 1}, {3, 1}, {4, 3}]
    assert heat_sigma(dist) == pytest.approx(2.084773245937783, rel=1e-14)
    W = knn_graph(TV2_X, 2, weights="heat", method="exact")
    got = _upper_dict(W)
    assert got.keys() == TV2_HEAT.keys()
    for e, v in TV2_HEAT.items():
        assert got[e] == pytest.approx(v, abs=1e-9)
    Wb = knn_graph(TV2_X, 2, weights="binary", method="exact")
    assert _upper_dict(Wb).keys() == TV2_HEAT.keys()
    np.testing.assert_allclose(laplacian(Wb).toarray()[0], [2, -1, -1, 0, 0, 0])
    L = laplacian(W, "normalized")
    np.testing.assert_allclose(L.diagonal(), 1.0)
    gotL = _upper_dict(L)
    for e, v in TV2_NORM_L.items():
        assert gotL[e] == pytest.approx(v, abs=1e-9)
    L2 = laplacian(W, "normalized", power=2)
    assert L2.diagonal().sum() == pytest.approx(8.170627314479667, rel=1e-12)
    np.testing.assert_allclose(L2.toarray()[0], [1.419372868, -0.6639827425, -0.8473842143,
                                                 0.1291309828, 0.1098556922, 0], atol=1e-9)


def test_tv_lapsvm_3_graph_checksums():
    rng = np.random.default_rng(2024)
    X = np.vstack([rng.normal(size=(20, 2)) + [-1.5, 0], rng.normal(size=(20, 2)) + [1.5, 0]])
    assert X.sum() == pytest.approx(4.665795081796887, rel=1e-13)
    dist, _ = knn_search(X, 5, method="exact")
    assert heat_sigma(dist) == pytest.approx(0.7312145809101306, rel=1e-12)
    W = knn_graph(X, 5, weights="heat", method="exact")
    assert W.sum() == pytest.approx(137.08773171925165, rel=1e-12)
    L = laplacian(W, "normalized", power=2)
    assert L.diagonal().sum() == pytest.approx(47.39408518829075, rel=1e-12)


def test_heat_weights_with_given_sigma(points):
    sigma = 1.7
    W = knn_graph(points, 5, weights="heat", sigma=sigma, method="exact")
    D = knn_graph(points, 5, weights="distance", method="exact")
    assert (W != 0).sum() == (D != 0).sum()
    np.testing.assert_allclose(W.data, np.exp(-D.data ** 2 / (2 * sigma ** 2)), rtol=1e-12)


def test_graph_from_neighbors_equals_knn_graph(points):
    dist, ind = knn_search(points, 4, method="exact")
    for weights in ("binary", "heat", "distance"):
        a = graph_from_neighbors(dist, ind, weights=weights)
        b = knn_graph(points, 4, weights=weights, method="exact")
        assert abs(a - b).max() == 0
    np.testing.assert_allclose(edge_weights(dist, "heat", 2.0),
                               np.exp(-dist ** 2 / 8.0))


def test_cosine_metric_matches_sklearn(points):
    A = kneighbors_graph(points, 5, mode="connectivity", metric="cosine", include_self=False)
    W = knn_graph(points, 5, metric="cosine", method="exact")
    np.testing.assert_array_equal(W.toarray(), A.maximum(A.T).toarray())
    # Scaling a point does not change its cosine neighbours.
    scaled = points * np.arange(1, points.shape[0] + 1)[:, None]
    W2 = knn_graph(scaled, 5, metric="cosine", method="exact")
    assert abs(W2 - W).max() == 0


def test_output_is_symmetric_nonnegative_zero_diagonal_csr(points):
    for weights in ("binary", "heat", "distance"):
        W = knn_graph(points, 7, weights=weights, method="exact")
        assert sp.isspmatrix_csr(W) and W.dtype == np.float64
        assert abs(W - W.T).max() == 0
        assert W.data.min() > 0
        assert not W.diagonal().any()


def test_sparse_and_float32_input(points):
    W = knn_graph(points, 5, method="exact")
    assert abs(knn_graph(sp.csr_matrix(points), 5, method="exact") - W).max() == 0
    W32 = knn_graph(points.astype(np.float32), 5, method="exact")
    assert W32.dtype == np.float64
    assert abs(W32 - W).max() == 0


def test_duplicates_never_link_a_point_to_itself():
    X = np.array([[0.0, 0], [0, 0], [0, 0], [5, 5], [5, 6]])
    W = knn_graph(X, 2, method="exact")
    assert not W.diagonal().any()
    assert W[0, 1] == 1 and W[0, 2] == 1


@pytest.mark.slow  # pynndescent's numba compilation alone takes about a minute
def test_approximate_graph_recall(rng):
    pytest.importorskip("pynndescent")
    centers = rng.normal(size=(10, 20)) * 3
    X = (centers[rng.integers(0, 10, 2000)] + rng.normal(size=(2000, 20))).astype(np.float32)
    _, exact = knn_search(X, 10, method="exact")
    _, approx = knn_search(X, 10, method="approx", random_state=0)
    assert approx.shape == (2000, 10)
    assert not (approx == np.arange(2000)[:, None]).any()
    hits = sum(len(set(a) & set(e)) for a, e in zip(approx.tolist(), exact.tolist()))
    assert hits / exact.size >= 0.9


def test_auto_uses_exact_for_small_inputs(points):
    assert abs(knn_graph(points, 5, method="auto") - knn_graph(points, 5, method="exact")
               ).max() == 0


def test_auto_is_exact_while_the_exact_search_is_cheaper_than_nn_descents_compilation(
        monkeypatch):
    """60 000 MNIST images (x 784) and 80 000 points of 50 features are searched exactly by
    ``"auto"``; all of MNIST and 90 000 x 50 are past the bound (NN-descent where
    pynndescent is installed); sparse points and a missing pynndescent search exactly."""
    from semisup.graph import neighbors
    assert neighbors.auto_search_method(60_000, 784) == "exact"
    assert neighbors.auto_search_method(80_000, 50) == "exact"
    monkeypatch.setattr(neighbors, "available", lambda name: True)
    assert neighbors.auto_search_method(70_000, 784) == "approx"
    assert neighbors.auto_search_method(90_000, 50) == "approx"
    assert neighbors.auto_search_method(10 ** 6, 50, sparse=True) == "exact"
    monkeypatch.setattr(neighbors, "available", lambda name: False)
    assert neighbors.auto_search_method(10 ** 6, 50) == "exact"


@pytest.mark.parametrize("kwargs,match", [
    (dict(n_neighbors=120), "smaller than the number of points"),
    (dict(n_neighbors=0), "n_neighbors"),
    (dict(weights="gauss"), "weights"),
    (dict(metric="manhattan"), "metric"),
    (dict(method="fast"), "method"),
    (dict(symmetrize="or"), "symmetrize"),
    (dict(weights="heat", sigma=0.0), "sigma"),
    (dict(weights="heat", sigma=np.nan), "sigma"),
])
def test_bad_parameters_raise(points, kwargs, match):
    kw = dict(n_neighbors=5)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=match):
        knn_graph(points, **kw)


def test_bad_data_raise(points):
    bad = points.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        knn_graph(bad, 5)
    with pytest.raises(ValueError, match="2-D"):
        knn_graph(points[0], 5)
    with pytest.raises(ValueError, match="numeric"):
        knn_graph(np.array([["a", "b"], ["c", "d"], ["e", "f"]]), 1)


# --- the blocked exact search (float32 candidates certified, float64 re-rank) ---

def _sklearn_knn(X, k, metric="euclidean"):
    from sklearn.neighbors import NearestNeighbors
    return NearestNeighbors(n_neighbors=k, metric=metric, algorithm="brute").fit(X).kneighbors()


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("sparse", [False, True])
def test_blocked_exact_search_matches_sklearn_over_many_blocks(rng, metric, sparse):
    from semisup.graph.neighbors import _exact_neighbors
    X = rng.normal(size=(300, 12)) + 3.0 * rng.integers(0, 3, size=(300, 1))
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    d_ref, i_ref = _sklearn_knn(X, 7, metric)
    # a budget of a few rows per block: the blocks' boundaries are exercised
    dist, ind = _exact_neighbors(X, 7, metric, block_bytes=300 * 20 * 8)
    np.testing.assert_allclose(dist, d_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ind, i_ref)  # continuous data: no ties


def test_float32_candidates_give_the_float64_graph(rng):
    from semisup.graph.neighbors import _exact_neighbors
    # clusters far from the origin: float32 products lose most digits of the distances
    X = 1e3 + rng.normal(size=(400, 30)) * 1e-2
    d64, i64 = _exact_neighbors(X, 10, "euclidean", float32=False)
    d32, i32 = _exact_neighbors(X, 10, "euclidean", float32=True)
    np.testing.assert_array_equal(i32, i64)
    np.testing.assert_array_equal(d32, d64)


def test_ties_fall_back_to_float64_and_give_the_exact_distances():
    from semisup.graph.neighbors import _exact_neighbors
    # an integer grid: every point has many neighbours at exactly the same distance
    g = np.arange(6.0)
    X = np.array(np.meshgrid(g, g, g)).reshape(3, -1).T
    d_ref, _ = _sklearn_knn(X, 8)
    dist, ind = _exact_neighbors(X, 8, "euclidean", margin=0)
    np.testing.assert_allclose(dist, d_ref, rtol=0, atol=1e-12)
    # the indices are neighbours at those distances, never the point itself
    np.testing.assert_allclose(np.linalg.norm(X[ind] - X[:, None], axis=2), dist, atol=1e-12)
    assert not (ind == np.arange(len(X))[:, None]).any()


def test_tiny_and_huge_magnitudes_in_float32(rng):
    from semisup.graph.neighbors import _exact_neighbors
    X = rng.normal(size=(150, 4))
    d0, i0 = _exact_neighbors(X, 5, "euclidean")
    for scale in (1e-40, 1e45):  # beyond float32's range: a power-of-two scale is applied
        d, i = _exact_neighbors(X * scale, 5, "euclidean")
        np.testing.assert_array_equal(i, i0)
        np.testing.assert_allclose(d, d0 * scale, rtol=1e-12)


def test_cosine_zero_rows_are_at_distance_one():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.1], [0.0, 3.0]])
    dist, ind = knn_search(X, 3, metric="cosine", method="exact")
    np.testing.assert_allclose(dist[0], 1.0)
    d_ref, _ = _sklearn_knn(X, 3, "cosine")
    np.testing.assert_allclose(dist, d_ref, atol=1e-12)


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_wide_tiles_sampled_threshold_matches_sklearn(rng, metric):
    from semisup.graph.neighbors import _exact_neighbors
    # wider tiles than 4 x 1024 columns: the first tile's threshold comes from a sample
    X = rng.normal(size=(5000, 3))
    d_ref, i_ref = _sklearn_knn(X, 6, metric)
    dist, ind = _exact_neighbors(X, 6, metric, block_bytes=5000 * 5000 * 5)
    np.testing.assert_array_equal(ind, i_ref)
    np.testing.assert_allclose(dist, d_ref, rtol=1e-9, atol=1e-12)


def test_sparse_many_features_uses_sparse_products(rng, monkeypatch):
    import semisup.graph.neighbors as nb
    X = sp.random(400, 3000, density=0.01, random_state=0, format="csr")
    X = X + sp.csr_matrix((np.ones(400), (np.arange(400), np.arange(400) % 3000)),
                          shape=X.shape)  # no empty rows
    d_ref, i_ref = _sklearn_knn(X, 5)
    monkeypatch.setattr(nb, "_DENSE_QUERY_BYTES", 1000)  # force the sparse x sparse path
    dist, ind = nb._exact_neighbors(X.tocsr(), 5, "euclidean", block_bytes=200 * 200 * 9)
    np.testing.assert_allclose(dist, d_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(np.sort(ind, 1), np.sort(i_ref, 1))


# --- the projected lower bound (points near a subspace: search p + 1 dimensions first) ---

def _near_subspace(rng, n, d=60, p=5, noise=0.05):
    B = np.linalg.qr(rng.normal(size=(d, p)))[0]
    C = rng.normal(size=(n, p)) + 4.0 * rng.integers(0, 3, size=(n, 1))
    return C @ B.T + noise * rng.normal(size=(n, d)) + 2.0


def test_projected_bound_points_bound_every_distance_from_below(rng):
    from scipy.spatial.distance import pdist

    from semisup.graph.neighbors import projected_bound_points
    X = _near_subspace(rng, 400)
    Z, mu = projected_bound_points(X, sample=100)
    assert Z.shape[1] < X.shape[1] / 3
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), np.linalg.norm(X - mu, axis=1))
    dz, dx = pdist(Z), pdist(X)
    assert (dz <= dx * (1 + 1e-12)).all()
    assert np.median(dz / dx) > 0.9  # tight: the residual holds 5% of the variance or less
    # no subspace of a third of the dimensions holds 95% of the variance: no saving, None
    assert projected_bound_points(rng.normal(size=(300, 30))) is None


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_projected_bound_search_matches_sklearn(rng, n_jobs):
    from semisup.graph.neighbors import _exact_neighbors
    from semisup.graph.neighbors import projected_bound_points
    X = _near_subspace(rng, 1500)
    assert projected_bound_points(X) is not None  # the projection is searched
    d_ref, i_ref = _sklearn_knn(X, 10)
    dist, ind = _exact_neighbors(X, 10, "euclidean", bound=True, n_jobs=n_jobs,
                                 block_bytes=400 * 400 * 9)
    np.testing.assert_array_equal(ind, i_ref)
    np.testing.assert_allclose(dist, d_ref, rtol=1e-10, atol=1e-12)


def test_projected_bound_search_with_ties_gives_the_exact_distances():
    from semisup.graph.neighbors import _exact_neighbors, projected_bound_points
    # an integer grid in 3 of 30 dimensions: the bound is exact, every row has ties at its
    # k-th distance, so no row is certified on the projection and all go down the ladder
    g = np.arange(6.0)
    X = np.zeros((216, 30))
    X[:, :3] = np.array(np.meshgrid(g, g, g)).reshape(3, -1).T
    assert projected_bound_points(X)[0].shape[1] == 4
    d_ref, _ = _sklearn_knn(X, 8)
    dist, ind = _exact_neighbors(X, 8, "euclidean", margin=0, bound=True)
    np.testing.assert_allclose(dist, d_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(X[ind] - X[:, None], axis=2), dist, atol=1e-12)
    assert not (ind == np.arange(len(X))[:, None]).any()


# -- issue #30 item 9: points at the edges of float64 ----------------------------------------
def _run_isolated(code):
    """Run ``code`` in a fresh interpreter: a crash (abort, segfault) is a failure here, not
    the end of the test session."""
    import os
    import subprocess
    import sys

    import semisup
    src = os.path.dirname(os.path.dirname(semisup.__file__))
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    return proc.stdout


@pytest.mark.parametrize("scale", [1e-310, 1e-300, 1e300])
def test_knn_graph_of_extreme_scales_is_the_graph_of_the_unscaled_points(scale):
    # 1e-310: X * (1 / max|X|) overflowed, the distances were NaN and an index -1 reached
    # scipy's compiled symmetrization: "double free or corruption", the process aborted
    out = _run_isolated(
        "import numpy as np, warnings; warnings.simplefilter('error')\n"
        "from semisup.graph import knn_graph\n"
        "X = np.random.default_rng(0).normal(size=(20, 2))\n"
        f"W, W0 = knn_graph(X * {scale!r}, 3), knn_graph(X, 3)\n"
        "print(abs(W - W0).max(), W.nnz == W0.nnz)\n")
    assert out.split() == ["0.0", "True"]


def test_neighbor_lists_out_of_bounds_or_nan_are_refused_before_the_graph():
    with pytest.raises(ValueError, match=r"indices outside \[0, 3\)"):
        graph_from_neighbors(np.ones((3, 1)), np.array([[1], [-1], [0]]))
    with pytest.raises(ValueError, match=r"indices outside \[0, 3\)"):
        graph_from_neighbors(np.ones((3, 1)), np.array([[1], [3], [0]]))
    with pytest.raises(ValueError, match="NaN"):
        graph_from_neighbors(np.array([[1.0], [np.nan], [1.0]]), np.array([[1], [2], [0]]))
    # an infinite distance is still a neighbour (binary weights)
    W = graph_from_neighbors(np.array([[1.0], [np.inf], [1.0]]), np.array([[1], [2], [0]]))
    assert W.nnz == 6
