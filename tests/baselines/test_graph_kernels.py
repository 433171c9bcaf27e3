import numpy as np
import pytest
import scipy.sparse as sp

from semisup.baselines.graph_kernels import (KERNELS, GraphKernelSVM, LaplacianSpectrum,
                                             graph_kernel, intersection_graph,
                                             majority_graph, union_graph)
from semisup._base import SemiSupervisedMixin
from semisup.graph.frontend import GRAPH_DEFAULTS
from semisup.linalg.svm_dual import svm_dual, svm_scores
from sklearn.utils._param_validation import InvalidParameterError

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
    m = GraphKernelSVM(kernel=kind, c=0.1, C=1.0, affinity="precomputed").fit(
        sp.csr_matrix(A8), y_obs)
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


@pytest.mark.parametrize("params, match", [
    ({"kernel": "heat"}, "'kernel' parameter"), ({"c": 0.0}, "'c' parameter"),
    ({"C": -1.0}, "'C' parameter"), ({"C": np.inf}, "'C' parameter"),
    ({"affinity": "rbf"}, "'affinity' parameter"), ({"n_neighbors": 0}, "'n_neighbors'"),
])
def test_bad_parameters(params, match):
    y_obs = np.array([1, 1, -1, -1, 0, 0, -1, -1])
    with pytest.raises(InvalidParameterError, match=match):
        GraphKernelSVM(**{"affinity": "precomputed", **params}).fit(A8, y_obs)
    with pytest.raises(TypeError):
        GraphKernelSVM("nlap")                     # keyword-only


def test_bad_labels():
    y_obs = np.array([1, 1, -1, -1, 0, 0, -1, -1])
    with pytest.raises(ValueError, match="class"):
        GraphKernelSVM(affinity="precomputed").fit(A8, np.where(y_obs == 0, -1, y_obs))
    three = np.where(y_obs == 0, 2, y_obs) + (np.arange(8) == 7) * 4   # one-vs-rest
    m = GraphKernelSVM(affinity="precomputed").fit(A8, three)
    np.testing.assert_array_equal(m.classes_, [1, 2, 3])
    assert m.decision_function(A8).shape == (8, 3)


def test_contract_graph_from_features_and_transduction():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 0.3, (20, 2)), rng.normal(3, 0.3, (20, 2))]
    y = np.repeat([0, 1], 20)
    y_obs = np.full(40, -1)
    y_obs[[0, 20]] = [0, 1]
    params = GraphKernelSVM().get_params()
    assert {k: params[k] for k in GRAPH_DEFAULTS} == GRAPH_DEFAULTS
    m = GraphKernelSVM(n_neighbors=5)                 # default affinity="knn"
    np.testing.assert_array_equal(m.fit_predict(X, y_obs), y)
    assert m.affinity_matrix_.shape == (40, 40) and m.graph_sigma_ > 0
    np.testing.assert_array_equal(m.predict(X), m.transduction_)
    np.testing.assert_array_equal(m.decision_function(X), m.decision_scores_)
    assert m.score(X, y_obs) == 1.0
    with pytest.raises(ValueError, match="transductive"):
        m.predict(X[:30])
    assert GraphKernelSVM.score is SemiSupervisedMixin.score
    # object-dtype numbers are numbers (#16 item 14)
    m2 = GraphKernelSVM(n_neighbors=5).fit(X.astype(object), y_obs)
    np.testing.assert_array_equal(m2.decision_scores_, m.decision_scores_)


def test_explicit_zeros_are_not_edges():
    """#16 item 1: stored zeros of a sparse adjacency are not edges (the Laplacian's
    degrees do not change, but the edge pattern must not either)."""
    y_obs = np.array([1, 1, -1, -1, 0, 0, -1, -1])
    Z = sp.csr_matrix((np.r_[sp.csr_matrix(A8).data, 0.0, 0.0],
                       (np.r_[np.nonzero(A8)[0], 0, 5], np.r_[np.nonzero(A8)[1], 5, 0])),
                      shape=(8, 8))
    assert Z.nnz == A8.sum() + 2
    for kind in KERNELS:
        a = GraphKernelSVM(kernel=kind, affinity="precomputed").fit(sp.csr_matrix(A8), y_obs)
        b = GraphKernelSVM(kernel=kind, affinity="precomputed").fit(Z, y_obs)
        np.testing.assert_array_equal(a.decision_scores_, b.decision_scores_)
        assert b.n_unreached_ == 0


def test_component_without_labels_warns():
    A = np.zeros((10, 10))
    A[:8, :8] = A8
    A[8, 9] = A[9, 8] = 1.0
    y_obs = np.array([1, 1, -1, -1, 0, 0, -1, -1, -1, -1])
    with pytest.warns(UserWarning, match="2 unlabeled vertex"):
        m = GraphKernelSVM(affinity="precomputed").fit(A, y_obs)
    assert m.n_unreached_ == 2
    np.testing.assert_array_equal(m.decision_scores_[8:], 0.0)


def test_memory_refused_before_the_graph_is_built(monkeypatch):
    from semisup.graph.frontend import GraphMixin

    def no_graph(self, *args, **kwargs):
        raise AssertionError("the graph was built before the memory check")

    monkeypatch.setattr(GraphMixin, "_fit_graph", no_graph)
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", "1000")
    with pytest.raises(MemoryError, match="Laplacian eigenbasis"):
        GraphKernelSVM().fit(np.zeros((40, 2)), np.r_[0, 1, -np.ones(38, int)])
