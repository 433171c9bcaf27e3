import numpy as np
import pytest
import scipy.sparse as sp

from semisup.baselines.graph_kernels import (KERNELS, GraphKernelSVM, LaplacianSpectrum,
                                             graph_kernel, intersection_graph,
                                             majority_graph, union_graph)
from semisup.spore.svm_dual import svm_dual, svm_scores

from spore_graphs import EDGES, S, Y, adjacency as _adj  # noqa: E402

A8 = _adj(EDGES)
TV_D5 = {
    "unlap": (1.5743938970, 1.2143474394, 1.1085329322, 2.4932659776,
              [0.93253159, 1, 1, 0.57248513, -0.22529609, -0.63545151, -0.63545151,
               -0.10915207]),
    "nlap": (2.1305841334, 1.1295730111, 0.8926716805, 1.0560840968,
             [1, 1, 1, 0.46511628, -0.46511628, -1, -1, -0.3030303]),
    "kscaling": (1, 0.7713110688, 0.7041013906, 3.2110972599,
                 [0.93222052, 1, 1, 0.70353159, 0.14919537, -0.11862958, -0.11862958,
                  0.22296599]),
}


@pytest.mark.parametrize("kind", KERNELS)
def test_spec_vector_tv_d5(kind):
    k00, k03, k04, omega, yhat = TV_D5[kind]
    K = graph_kernel(A8, kind, 0.1)
    np.testing.assert_allclose([K[0, 0], K[0, 3], K[0, 4]], [k00, k03, k04], atol=1e-9)
    res = svm_dual(K, Y, S, 1.0)
    assert res.value == pytest.approx(omega, abs=1e-9)
    np.testing.assert_allclose(svm_scores(K, Y, S, res.alpha), yhat, atol=1e-8)
    y_obs = np.full(8, -1)
    y_obs[S] = (Y[S] > 0).astype(int)
    m = GraphKernelSVM(kind, c=0.1, C=1.0).fit(sp.csr_matrix(A8), y_obs)
    np.testing.assert_allclose(m.decision_scores_, yhat, atol=1e-8)
    np.testing.assert_array_equal(m.transduction_[S], y_obs[S])


def test_kernels_match_direct_inverses(rng):
    U = np.triu(rng.random((25, 25)) < 0.2, 1)
    A = (U | U.T).astype(float)
    A[3, :] = A[:, 3] = 0.0                                   # an isolated vertex
    d = A.sum(1)
    L = np.diag(d) - A
    dis = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0.0)
    Ln = dis[:, None] * L * dis[None, :]
    c = 0.3
    np.testing.assert_allclose(graph_kernel(A, "unlap", c), np.linalg.inv(c * np.eye(25) + L),
                               atol=1e-9)
    np.testing.assert_allclose(graph_kernel(A, "nlap", c), np.linalg.inv(c * np.eye(25) + Ln),
                               atol=1e-9)
    Kt = np.linalg.inv(c * np.eye(25) + L)
    s = 1 / np.sqrt(np.diag(Kt))
    np.testing.assert_allclose(graph_kernel(A, "kscaling", c), Kt * s[:, None] * s[None, :],
                               atol=1e-9)
    spec = LaplacianSpectrum(A, "kscaling")
    cols = np.array([1, 4])
    Kc, diag = spec.columns(c, cols)
    np.testing.assert_allclose(Kc, graph_kernel(A, "kscaling", c)[:, cols], atol=1e-9)
    np.testing.assert_allclose(diag, 1.0)


def test_graph_combiners():
    A = _adj([(0, 1), (1, 2)], 4)
    B = _adj([(0, 1), (2, 3)], 4)
    C = _adj([(0, 1), (1, 2), (0, 3)], 4)
    assert union_graph([A, B, C]).nnz == 8
    inter = intersection_graph([A, B, C]).toarray()
    np.testing.assert_array_equal(inter, _adj([(0, 1)], 4))
    maj = majority_graph([A, B, C]).toarray()
    np.testing.assert_array_equal(maj, _adj([(0, 1), (1, 2)], 4))
    with pytest.raises(ValueError, match="same vertex"):
        union_graph([A, np.zeros((3, 3))])


def test_bad_input():
    y_obs = np.array([1, 1, -1, -1, 0, 0, -1, -1])
    with pytest.raises(ValueError, match="kind"):
        GraphKernelSVM("heat").fit(A8, y_obs)
    with pytest.raises(ValueError, match="c must"):
        GraphKernelSVM(c=0.0).fit(A8, y_obs)
    with pytest.raises(ValueError, match="C must"):
        GraphKernelSVM(C=-1.0).fit(A8, y_obs)
    with pytest.raises(ValueError, match="class"):
        GraphKernelSVM().fit(A8, np.where(y_obs == 0, -1, y_obs))
