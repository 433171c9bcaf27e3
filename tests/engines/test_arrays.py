"""The GPU engine's computations run with numpy, against the CPU path and dense oracles.

The same functions run with CuPy on a device in ``test_gpu.py``.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_moons
from sklearn.neighbors import NearestNeighbors

from semisup import LapRLS
from semisup.baselines.harmonic import harmonic_solve
from semisup.engines import arrays
from semisup.graph import graph_from_neighbors, knn_search, laplacian


def _same_lists(d, i, d0, i0, rtol=1e-12):
    """Distances equal to rounding; indices equal except where exactly tied distances
    may come in another order (then the neighbour sets of the tied run agree)."""
    np.testing.assert_allclose(d, d0, rtol=rtol, atol=1e-12)
    diff = np.flatnonzero((i != i0).any(axis=1))
    for r in diff:
        for v in np.unique(d0[r]):
            assert set(i[r][d[r] == v]) == set(i0[r][d0[r] == v]) or v == d0[r, -1]


def _points(n=400, d=12, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_knn_equals_exact_search(metric):
    X = _points()
    d, i = arrays.knn_exact(X, 10, metric=metric)
    d0, i0 = knn_search(X, 10, metric=metric, method="exact")
    assert d.dtype == np.float64 and i.dtype == np.int64
    np.testing.assert_array_equal(i, i0)
    np.testing.assert_allclose(d, d0, rtol=1e-12, atol=1e-14)


def test_knn_float32_input_and_several_tiles():
    X = _points(350, 30).astype(np.float32)
    d, i = arrays.knn_exact(X, 7, block_bytes=48 * 350 * 16)  # tiles of 16 rows
    d0, i0 = knn_search(X, 7, method="exact")
    np.testing.assert_array_equal(i, i0)
    np.testing.assert_allclose(d, d0, rtol=1e-12)


def test_knn_duplicates_and_ties_fall_back_to_float64(monkeypatch):
    # a lattice (many exactly tied distances) with duplicates, and a point repeated 25
    # times: more than m = 16 candidates at distance 0, which the float32 certificate
    # cannot separate from those left out (those rows are searched again in float64)
    g = np.arange(12.0)
    X = np.array([(a, b) for a in g for b in g])
    X = np.vstack([X, X[:30], np.repeat(X[50:51], 25, axis=0)])
    dtypes = []
    keys = arrays.pair_keys
    monkeypatch.setattr(arrays, "pair_keys", lambda F, *a: dtypes.append(F.dtype) or keys(F, *a))
    d, i = arrays.knn_exact(X, 6)
    assert np.float64 in dtypes                # some rows were searched again in float64
    d0, i0 = knn_search(X, 6, method="exact")
    _same_lists(d, i, d0, i0)
    d64, i64 = arrays.knn_exact(X, 6, float32=False)
    _same_lists(d64, i64, d0, i0)
    assert (d[:, 0][144:] == 0).all()          # each duplicate finds its twin at 0


def test_knn_huge_magnitudes_are_scaled():
    X = _points(200, 5) * 1e70
    d, i = arrays.knn_exact(X, 5)
    d0, i0 = knn_search(X, 5, method="exact")
    np.testing.assert_array_equal(i, i0)
    np.testing.assert_allclose(d, d0, rtol=1e-12)


def test_knn_queries_match_brute_force():
    X, Q = _points(300, 8, seed=1), _points(50, 8, seed=2)
    d, i = arrays.knn_exact(X, 6, Q=Q)
    d0, i0 = NearestNeighbors(n_neighbors=6, algorithm="brute").fit(X).kneighbors(Q)
    np.testing.assert_array_equal(i, i0)
    np.testing.assert_allclose(d, d0, rtol=1e-10)
    d, i = arrays.knn_exact(X[:12], 12, Q=Q)        # every point is a neighbour
    assert (np.sort(i, axis=1) == np.arange(12)).all()


def test_knn_refuses_bad_input():
    X = _points(20, 3)
    with pytest.raises(ValueError, match="n_neighbors=20"):
        arrays.knn_exact(X, 20)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        arrays.knn_exact(X, 3)


@pytest.mark.parametrize("weights", ["heat", "binary", "distance"])
def test_graph_equals_graph_from_neighbors(weights):
    d, i = knn_search(_points(), 8, method="exact")
    W, sigma = arrays.knn_graph(d, i, weights=weights)
    W0 = graph_from_neighbors(d, i, weights=weights)
    assert (W != W0).nnz == 0 or abs(W - W0).max() < 1e-15
    np.testing.assert_array_equal(W.indptr, W0.indptr)
    np.testing.assert_array_equal(W.indices, W0.indices)
    assert (sigma is None) == (weights != "heat")


@pytest.mark.parametrize("kind", ["unnormalized", "normalized"])
def test_laplacian_products(kind):
    d, i = knn_search(_points(100, 4), 5, method="exact")
    W = graph_from_neighbors(d, i, weights="heat")
    W = sp.bmat([[W, None], [None, sp.csr_matrix((1, 1))]], format="csr")  # isolated node
    V = np.random.default_rng(0).normal(size=(101, 3))
    L = laplacian(W, kind=kind)
    apply = arrays.laplacian_apply(W, kind)
    np.testing.assert_allclose(apply(V), L @ V, atol=1e-12)
    np.testing.assert_allclose(apply(V[:, 0]), L @ V[:, 0], atol=1e-12)


def _two_component_graph():
    X, y = make_blobs(240, centers=[[0, 0], [4, 0], [40, 40]], cluster_std=0.7,
                      random_state=0)
    d, i = knn_search(X, 8, method="exact")
    return graph_from_neighbors(d, i, weights="heat"), y


def test_harmonic_equals_harmonic_solve():
    W, y = _two_component_graph()
    labeled = np.zeros(y.size, dtype=bool)
    labeled[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = True  # none in 2
    Y_l = np.eye(2)[y[labeled]]
    F, n_iter, converged, unreached = arrays.harmonic_solve(W, labeled, Y_l, tol=1e-10)
    ref = harmonic_solve(W, labeled, Y_l, solver="cg", tol=1e-10)
    assert converged and n_iter > 0
    np.testing.assert_array_equal(unreached, ref.unreached)
    np.testing.assert_allclose(F, ref.F, atol=1e-9)
    assert abs(n_iter - ref.n_iter) <= 2


def _poisson_oracle(W, labeled_idx, y_idx, K):
    """Per component: the pseudo-inverse solution of L U = B (sources centred on the
    component), shifted to degree-weighted mean zero."""
    n = W.shape[0]
    _, comp = sp.csgraph.connected_components(W, directed=False)
    U = np.zeros((n, K))
    for c in np.unique(comp):
        idx = np.flatnonzero(comp == c)
        lab = np.isin(labeled_idx, idx)
        if not lab.any() or np.unique(y_idx[lab]).size < 2:
            continue
        B = np.zeros((n, K))
        B[labeled_idx[lab], y_idx[lab]] = 1.0
        B[labeled_idx[lab]] -= B[labeled_idx[lab]].mean(axis=0)
        Wc = W[idx][:, idx].toarray()
        deg = Wc.sum(axis=1)
        Uc = np.linalg.pinv(np.diag(deg) - Wc) @ B[idx]
        U[idx] = Uc - deg @ Uc / deg.sum()
    return U


def test_poisson_equals_dense_pseudo_inverse():
    W, y = _two_component_graph()
    rng = np.random.default_rng(0)
    first = np.flatnonzero(y < 2)            # the component of blobs 0 and 1
    labeled_idx = np.concatenate([rng.choice(np.flatnonzero(y == c), 3, replace=False)
                                  for c in (0, 1)])
    # a third class: labels in the connected blobs, and none in blob 2 (unreached)
    y_idx = y[labeled_idx].copy()
    y_idx[[0, 3]] = 2
    U, n_iter, converged, unreached = arrays.poisson_solve(W, labeled_idx, y_idx, 3,
                                                           tol=1e-12)
    assert converged and n_iter > 0
    np.testing.assert_array_equal(unreached, np.flatnonzero(y == 2))
    oracle = _poisson_oracle(W, labeled_idx, y_idx, 3)
    np.testing.assert_allclose(U, oracle, atol=1e-8 * np.abs(oracle).max())
    np.testing.assert_allclose(U[first].sum(axis=1), 0.0, atol=1e-10)


def test_poisson_single_class_component_is_constant():
    W, y = _two_component_graph()
    labeled_idx = np.array([np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0],
                            np.flatnonzero(y == 2)[0]])
    y_idx = np.array([0, 1, 1])
    U, _, _, unreached = arrays.poisson_solve(W, labeled_idx, y_idx, 2, tol=1e-12)
    assert unreached.size == 0
    third = np.flatnonzero(y == 2)
    np.testing.assert_allclose(U[third], np.tile([-1 / 3, 1 / 3], (third.size, 1)))
    oracle = _poisson_oracle(W, labeled_idx, y_idx, 2)
    first = np.flatnonzero(y < 2)
    np.testing.assert_allclose(U[first], oracle[first], atol=1e-8 * np.abs(oracle).max())


def test_rbf_kernel_equals_kernel_matrix():
    from semisup.kernels import kernel_matrix
    X = _points(150, 6)
    for dtype in ("float64", "float32"):
        K = arrays.rbf_kernel(X, 1.7, dtype=dtype, block_bytes=8 * 3 * 150 * 16)
        K0 = kernel_matrix(X, sigma=1.7, dtype=np.dtype(dtype))
        assert K.dtype == K0.dtype
        np.testing.assert_allclose(K, K0, rtol=1e-6 if dtype == "float32" else 1e-13,
                                   atol=1e-7 if dtype == "float32" else 1e-15)


def test_search_terms_batched_equal_per_column():
    """The line search's regulariser terms, batched (the GPU's form) and per column (the
    host's): equal to rounding, for all columns and for a subset."""
    from semisup.lapsvm.pcg import _search_terms
    rng = np.random.default_rng(3)
    A, LF, D_a, KD = (rng.normal(size=(300, 6)) for _ in range(4))
    for act in (np.arange(6), np.array([1, 4, 5])):
        FD, LFD = rng.normal(size=(300, act.size)), rng.normal(size=(300, act.size))
        args = (act, act, A, LF, D_a, KD, FD, LFD, 1e-3, 0.1)
        one = _search_terms(*args)
        assert one.shape == (act.size, 2)
        np.testing.assert_allclose(_search_terms(*args, batched=True), one, rtol=1e-12)


def test_product_f64_sums_in_float64():
    """K^T V of a float32 K in float64 arithmetic (the device PCG's float32 kernel
    products): equal to the float64 product of the widened K, which a float32 product
    misses by ~1e-7 of |K| |V|."""
    from semisup.linalg.xp import product_f64
    rng = np.random.default_rng(0)
    K = rng.random((230, 170)).astype(np.float32)
    V = rng.normal(size=(230, 5)) * np.logspace(0, -9, 5)       # columns down to 1e-9
    ref = K.astype(np.float64).T @ V
    for block in (8 * 230 * 7, 2 ** 27):                         # 7 columns a block; one
        out = product_f64(K, V, block_bytes=block)
        assert out.dtype == np.float64 and out.shape == (170, 5)
        np.testing.assert_allclose(out, ref, rtol=1e-13)
    np.testing.assert_allclose(product_f64(K, V[:, 0]), ref[:, 0], rtol=1e-13)
    err32 = np.abs(K.T @ V.astype(np.float32) - ref) / np.abs(ref).max(axis=0)
    assert err32.max() > 1e-9 > np.abs(out - ref).max() / np.abs(ref).max()
    # another layout or dtype: K^T V as numpy computes it
    np.testing.assert_allclose(product_f64(np.asfortranarray(K), V), ref, rtol=1e-13)
    np.testing.assert_allclose(product_f64(K.astype(np.float64), V), ref, rtol=1e-13)


def test_rbf_kernel_memory_check_names_the_estimate(monkeypatch):
    monkeypatch.setattr("semisup.linalg.xp.free_memory", lambda xp: 10_000)
    with pytest.raises(MemoryError, match=r"the 200x200 float32 RBF kernel needs about "
                                          r"156\.2 KiB of host memory"):
        arrays.rbf_kernel(_points(200, 3), 1.0)


@pytest.mark.parametrize("data", ["moons", "blobs"])
@pytest.mark.parametrize("dtype,gamma_A,rtol", [("float64", 1e-4, 1e-7),
                                                ("float32", 1e-2, 1e-4)])
@pytest.mark.parametrize("use_bias", [False, True])
def test_laprls_equals_closed_form(data, dtype, gamma_A, rtol, use_bias):
    X, y = (make_moons(150, noise=0.1, random_state=0) if data == "moons"
            else make_blobs(150, centers=3, random_state=1))
    y_train = np.full_like(y, -1)
    for c in np.unique(y):
        y_train[np.flatnonzero(y == c)[:3]] = c
    est = LapRLS(gamma_A=gamma_A, gamma_I=1.0, solver="closed_form", kernel_dtype=dtype,
                 use_bias=use_bias).fit(X, y_train)
    K = arrays.rbf_kernel(X, est.kernel_sigma_, dtype=dtype)
    Y = est._encode(y_train, est.classes_, y_train != -1)
    fit = arrays.laprls_fit(K, Y, arrays.laplacian_apply(est.affinity_matrix_, "normalized"),
                            gamma_A=gamma_A, gamma_I=1.0, use_bias=use_bias, tol=1e-10,
                            max_iter=3000)
    f0 = est.decision_function(X)
    assert fit.decision.shape == f0.shape
    np.testing.assert_allclose(fit.decision, f0, atol=rtol * np.abs(f0).max())
    np.testing.assert_allclose(fit.b, est.intercept_, atol=rtol * np.abs(f0).max())
