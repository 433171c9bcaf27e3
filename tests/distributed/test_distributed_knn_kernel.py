"""Dask-array kNN graphs and the row-block kernel equal the in-memory ones."""

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array", reason="the [dask] extra is not installed")

from semisup.distributed import DaskKernel  # noqa: E402
from semisup.graph import knn_graph, knn_search  # noqa: E402
from semisup.kernels import kernel_matrix  # noqa: E402
from semisup.lapsvm.pcg import pcg  # noqa: E402
from semisup.lapsvm.stopping import make_rule  # noqa: E402


@pytest.fixture
def X(rng):
    X = rng.normal(size=(500, 6)) + 3.0 * rng.integers(0, 2, size=(500, 1))
    X[7] = X[3]  # a duplicate: never its own neighbour, at distance 0 of its twin
    return X


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("weights", ["heat", "distance", "binary"])
def test_dask_knn_graph_equals_in_memory(client, X, metric, weights):
    W0 = knn_graph(X, 7, weights=weights, metric=metric, method="exact")
    Xd = da.from_array(X, chunks=(130, 4))  # uneven row chunks, split features
    W1 = knn_graph(Xd, 7, weights=weights, metric=metric)
    assert sp.isspmatrix_csr(W1)
    assert (W0 != W1).nnz == 0  # exactly: same edges, same float64 weights


def test_dask_knn_search_lists_and_float32(client, X):
    d0, i0 = knn_search(X.astype(np.float32), 5, method="exact")
    d1, i1 = knn_search(da.from_array(X.astype(np.float32), chunks=100), 5)
    np.testing.assert_array_equal(i1, i0)
    np.testing.assert_array_equal(d1, d0)
    assert not (i1 == np.arange(len(X))[:, None]).any()


def test_dask_knn_bad_input(client, X):
    bad = X.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        knn_search(da.from_array(bad, chunks=100), 5)
    with pytest.raises(ValueError, match="smaller than the number of points"):
        knn_search(da.from_array(X[:5], chunks=2), 5)
    with pytest.raises(ValueError, match="approx"):
        knn_search(da.from_array(X, chunks=100), 5, method="approx")


@pytest.mark.parametrize("persist", [True, False])
@pytest.mark.parametrize("kernel,kw", [("rbf", dict(sigma=1.7)),
                                       ("polynomial", dict(degree=2, gamma=0.1, coef0=1.0)),
                                       ("linear", {})])
def test_dask_kernel_products(client, X, persist, kernel, kw):
    K0 = kernel_matrix(X, kernel=kernel, **kw)
    K = DaskKernel(da.from_array(X, chunks=100), kernel=kernel, persist=persist,
                   chunk_rows=120, **kw)
    V = np.random.default_rng(1).normal(size=(500, 3))
    np.testing.assert_allclose(K @ V, K0 @ V, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(K @ V[:, 0], K0 @ V[:, 0], rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(K.diagonal(), np.diag(K0), rtol=1e-13)
    np.testing.assert_allclose(K.rows([3, 400]), K0[[3, 400]], rtol=1e-13)
    assert K.max_abs() == pytest.approx(np.abs(K0).max(), rel=1e-13)
    if persist:  # the blocks live on the workers, as futures
        assert len(client.who_has()) > 0


def test_pcg_on_a_dask_kernel_equals_pcg_in_memory(client, rng):
    from semisup.graph import laplacian
    n = 3000  # above 2796 points kernel_matrix works in several row blocks
    X = rng.normal(size=(n, 6)) + 3.0 * rng.integers(0, 2, size=(n, 1))
    W = knn_graph(X, 6, weights="heat", method="exact")
    L = laplacian(W, "normalized")
    y = np.zeros(n)
    lab = rng.choice(n, 20, replace=False)
    y[lab] = np.where(X[lab, 0] > 1.5, 1.0, -1.0)
    K0 = kernel_matrix(X, sigma=2.0)
    # row blocks aligned with kernel_matrix's own (then the entries are equal bit for bit)
    inner = 64 * 2 ** 20 // (24 * n)
    Kd = DaskKernel(da.from_array(X, chunks=700), sigma=2.0, chunk_rows=inner)
    assert len(Kd.blocks.chunks[0]) == 4
    kw = dict(gamma_A=1e-4, gamma_I=1e-2, max_iter=200)
    for hinge in (True, False):
        r0 = pcg(K0, L, y, hinge=hinge, stopping=[make_rule("stability", unlabeled=y == 0)],
                 **kw)
        r1 = pcg(Kd, L, y, hinge=hinge, stopping=[make_rule("stability", unlabeled=y == 0)],
                 **kw)
        assert r1.n_iter == r0.n_iter > 3
        np.testing.assert_allclose(r1.decision, r0.decision, rtol=0, atol=1e-8)


def test_float32_dask_kernel_follows_numpy_precision(client, X):
    from semisup.lapsvm.objective import kernel_matvec
    K0 = kernel_matrix(X, sigma=1.5, dtype=np.float32)
    K = DaskKernel(da.from_array(X, chunks=100), sigma=1.5, dtype=np.float32)
    V = np.random.default_rng(2).normal(size=(500, 2))
    # PCG's products: float32, as in memory
    np.testing.assert_array_equal(kernel_matvec(K, V), kernel_matvec(K0, V))
    # decision values: a float64 vector promotes the product to float64, as NumPy does
    np.testing.assert_allclose(K @ V, K0 @ V, rtol=1e-13, atol=1e-12)
