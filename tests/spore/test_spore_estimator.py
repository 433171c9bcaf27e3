import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from semisup._base import SemiSupervisedMixin
from semisup.graph.frontend import GRAPH_DEFAULTS, GraphMixin
from semisup.spore import SPORE, MultiGraphSPORE
from semisup.spore.iip import lanczos_start

PRE = {"affinity": "precomputed"}


def planted(n=60, p=0.5, q=0.05, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) < n // 2, 1, 0)
    P = np.where(y[:, None] == y[None, :], p, q)
    U = np.triu(rng.random((n, n)) < P, 1)
    A = (U | U.T).astype(float)
    y_obs = np.full(n, -1)
    lab = np.r_[0:4, n // 2:n // 2 + 4]
    y_obs[lab] = y[lab]
    return A, y, y_obs, lab


def blobs(n_half=20, seed=1):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(0, 0.3, (n_half, 2)), rng.normal(3, 0.3, (n_half, 2))]
    y = np.r_[np.zeros(n_half, int), np.ones(n_half, int)]
    y_obs = np.full(2 * n_half, -1)
    lab = [0, 1, n_half, n_half + 1]
    y_obs[lab] = y[lab]
    return X, y, y_obs


def with_explicit_zeros(A):
    """The same graph as a CSR with two stored zeros on non-edges (one symmetric pair)."""
    A = sp.coo_matrix(A)
    i, j = np.nonzero(np.triu(A.toarray() == 0, 1))
    i, j = i[0], j[0]
    Z = sp.csr_matrix((np.r_[A.data, 0.0, 0.0], (np.r_[A.row, i, j], np.r_[A.col, j, i])),
                      shape=A.shape)
    assert Z.nnz == A.nnz + 2 and (Z != A).nnz == 0
    return Z


def test_spore_classifies_a_planted_partition():
    A, y, y_obs, lab = planted()
    m = SPORE(C=1.0, beta=0.01, n_outer=20, keep_path=True, **PRE).fit(sp.csr_matrix(A),
                                                                         y_obs)
    unl = y_obs == -1
    assert np.mean(m.transduction_[unl] == y[unl]) > 0.85
    # iterate 0 is the SVM on K0 = I + A/|lambda_min(A)|
    assert np.mean((m.history_["scores"][0][unl] > 0) == (y[unl] == 1)) > 0.85
    assert set(m.classes_) == {0, 1}
    assert m.embedding_.shape == (60, 60)
    assert len(m.history_["objective"]) == 21
    assert isinstance(m.n_iter_, int) and m.n_iter_ == 20
    assert isinstance(m.best_iter_, int)
    np.testing.assert_array_equal(m.transduction_[lab], y[lab])


def test_transductive_contract():
    A, y, y_obs, _ = planted(n=30)
    m = SPORE(n_outer=2, **PRE)
    labels = m.fit_predict(A, y_obs)
    np.testing.assert_array_equal(labels, m.transduction_)
    np.testing.assert_array_equal(m.predict(A), m.transduction_)
    np.testing.assert_array_equal(m.decision_function(A), m.decision_scores_)
    assert m.score(A, y) == np.mean(m.transduction_ == y)
    assert m.score(A, y_obs) == 1.0              # only labeled entries count; they are kept
    with pytest.raises(ValueError, match="20 features, but SPORE is expecting 30"):
        m.predict(A[:20, :20])                   # the shape is checked first
    with pytest.raises(ValueError, match="transductive"):
        m.predict(A[::-1])
    with pytest.raises(ValueError, match="transductive"):
        m.decision_function(A + np.eye(30))
    # the mixin's labeled-only score, not ClassifierMixin's (which would count -1 as errors)
    assert SPORE.score is SemiSupervisedMixin.score
    assert MultiGraphSPORE.score is SemiSupervisedMixin.score


def test_identity_start_warns_and_gives_zero_unlabelled_scores():
    A, y, y_obs, lab = planted()
    with pytest.warns(UserWarning, match="K0 = I"):
        m = SPORE(n_outer=3, K0="identity", **PRE).fit(A, y_obs)
    unl = y_obs == -1
    # §3.1: subgradients and projections keep the S/U blocks decoupled (LAPACK returns a
    # coordinate vector as the top eigenvector of I, so nothing mixes the blocks)
    assert np.abs(m.decision_scores_[unl]).max() < 1e-10
    assert np.abs(m.embedding_[np.ix_(lab, np.flatnonzero(unl))]).max() < 1e-10


def test_best_iterate_option_and_input_not_mutated():
    A, y, y_obs, _ = planted()
    A0, y0 = A.copy(), y_obs.copy()
    m = SPORE(n_outer=6, iterate="best", **PRE).fit(A, y_obs)
    assert m.history_["objective"][m.best_iter_] == min(m.history_["objective"])
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(y_obs, y0)
    assert clone(m).get_params()["iterate"] == "best"


def test_graph_parameters_are_the_shared_ones():
    for est in (SPORE(), MultiGraphSPORE()):
        params = est.get_params()
        assert {k: params[k] for k in GRAPH_DEFAULTS} == GRAPH_DEFAULTS
    with pytest.raises(TypeError):
        SPORE(1.0)                                   # keyword-only


def test_graph_from_features():
    X, y, y_obs = blobs()
    m = SPORE(affinity="rbf_threshold", n_outer=5, n_inner=10).fit(X, y_obs)
    assert np.mean(m.transduction_ == y) > 0.9
    # the default affinity builds the kNN graph; its heat weights are used silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = SPORE(n_neighbors=5, n_outer=3).fit(X, y_obs)
    assert m.transduction_.shape == (40,)
    assert m.affinity_matrix_.shape == (40, 40) and m.graph_sigma_ > 0
    assert m.n_features_in_ == 2
    np.testing.assert_array_equal(m.predict(X), m.transduction_)


def test_self_loops_and_weights_warn_asymmetric_fails():
    A, y, y_obs, _ = planted(n=20)
    Aw = A.copy()
    np.fill_diagonal(Aw, 1.0)
    with pytest.warns(UserWarning, match="self-loops"):
        SPORE(n_outer=1, **PRE).fit(Aw, y_obs)
    with pytest.warns(UserWarning, match="edge pattern"):
        SPORE(n_outer=1, **PRE).fit(0.5 * A, y_obs)
    B = A.copy()
    B[0, 1], B[1, 0] = 1.0, 0.0
    with pytest.raises(ValueError, match="symmetric"):
        SPORE(n_outer=1, **PRE).fit(B, y_obs)


@pytest.mark.parametrize("params, match", [
    ({"C": 0.0}, "'C' parameter"), ({"C": -1.0}, "'C' parameter"),
    ({"C": np.inf}, "'C' parameter"), ({"beta": -0.1}, "'beta' parameter"),
    ({"n_outer": 0}, "'n_outer' parameter"), ({"n_outer": 2.5}, "'n_outer' parameter"),
    ({"n_inner": 0}, "'n_inner' parameter"), ({"K0": "random"}, "'K0' parameter"),
    ({"iterate": "last"}, "'iterate' parameter"), ({"affinity": "rbf"}, "'affinity'"),
    ({"step": -1.0}, "'step' parameter"), ({"dtype": "float16"}, "'dtype' parameter"),
    ({"n_neighbors": "5"}, "'n_neighbors' parameter"), ({"hops": 0}, "'hops' parameter"),
    ({"hops": "all"}, "'hops' parameter"), ({"step": "default"}, "'step' parameter"),
])
def test_bad_parameters(params, match):
    A, y, y_obs, _ = planted(n=20)
    with pytest.raises(InvalidParameterError, match=match):
        SPORE(**{**PRE, **params}).fit(A, y_obs)


def test_bad_labels():
    A, y, y_obs, _ = planted(n=20)
    one = np.full(20, -1)
    one[:3] = 1
    with pytest.raises(ValueError, match="class"):
        SPORE(**PRE).fit(A, one)
    three = y_obs.copy()
    three[5] = 2                   # more than two classes: one-vs-rest (#30 item 3)
    m = SPORE(n_outer=1, **PRE).fit(A, three)
    assert m.decision_scores_.shape == (20, 3) and m.transduction_[5] == 2
    with pytest.raises(ValueError, match="entries"):
        SPORE(**PRE).fit(A, y_obs[:10])
    with pytest.raises(ValueError, match="None"):
        SPORE(**PRE).fit(A, None)


def test_too_large_for_dense_kernel(monkeypatch):
    A, y, y_obs, _ = planted(n=20)
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", "1000")
    with pytest.raises(MemoryError, match="dense.*dtype='float32' halves"):
        SPORE(**PRE).fit(A, y_obs)                 # 20 vertices: float64 iterates
    with pytest.raises(MemoryError, match=r"MultiGraphSPORE .*2 graphs\)") as info:
        MultiGraphSPORE(dtype="float32", **PRE).fit([A, A], y_obs)
    assert "halves" not in str(info.value)


@pytest.mark.parametrize("affinity", ["knn", "cosine_threshold", "rbf_threshold",
                                      "precomputed"])
def test_memory_refused_before_the_graph_is_built(monkeypatch, affinity):
    """#16 memory: the n x n iterates are known from n alone; refuse before any graph."""
    X, _, y_obs = blobs()

    def no_graph(self, *args, **kwargs):
        raise AssertionError("the graph was built before the memory check")

    monkeypatch.setattr(GraphMixin, "_fit_graph", no_graph)
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", "10000")
    data = np.ones((40, 40)) if affinity == "precomputed" else X
    with pytest.raises(MemoryError, match="40 vertices"):
        SPORE(affinity=affinity).fit(data, y_obs)
    with pytest.raises(MemoryError, match="40 vertices"):
        MultiGraphSPORE(affinity=affinity).fit([data, data], y_obs)


def test_explicit_zeros_are_not_edges():
    """#16 item 1: stored zeros of a sparse adjacency are not edges."""
    A, y, y_obs, _ = planted(n=30)
    Z = with_explicit_zeros(A)
    a = SPORE(n_outer=3, **PRE).fit(sp.csr_matrix(A), y_obs)
    b = SPORE(n_outer=3, **PRE).fit(Z, y_obs)
    np.testing.assert_array_equal(a.decision_scores_, b.decision_scores_)
    assert b.affinity_matrix_.nnz == A.sum()
    noise, _, _, _ = planted(n=30, p=0.3, q=0.3, seed=1)
    a = MultiGraphSPORE(n_outer=2, **PRE).fit([sp.csr_matrix(A), noise], y_obs)
    b = MultiGraphSPORE(n_outer=2, **PRE).fit([Z, with_explicit_zeros(noise)], y_obs)
    np.testing.assert_array_equal(a.decision_scores_, b.decision_scores_)
    np.testing.assert_array_equal(a.weights_, b.weights_)


def test_component_without_labels_warns():
    """#16 item 7: a component without any label gets score 0 -- say so, as
    HarmonicFunction does."""
    A, y, y_obs, _ = planted(n=30)
    n = 34
    B = np.zeros((n, n))
    B[:30, :30] = A
    B[30:, 30:] = 1.0 - np.eye(4)                    # a 4-clique with no label
    yo = np.r_[y_obs, -np.ones(4, int)]
    with pytest.warns(UserWarning, match="4 unlabeled vertex"):
        m = SPORE(n_outer=2, **PRE).fit(B, yo)
    assert m.n_unreached_ == 4
    np.testing.assert_array_equal(m.decision_scores_[30:], 0.0)
    # ties go to the larger labelled class (here equal counts: classes_[1])
    np.testing.assert_array_equal(m.transduction_[30:], m.classes_[1])
    with pytest.warns(UserWarning, match="4 unlabeled vertex"):
        mm = MultiGraphSPORE(n_outer=1, **PRE).fit([B, B], yo)
    assert mm.n_unreached_ == 4
    # connected through another graph: no warning
    C = B.copy()
    C[0, 30] = C[30, 0] = 1.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mm = MultiGraphSPORE(n_outer=1, **PRE).fit([B, C], yo)
        m = SPORE(n_outer=1, **PRE).fit(C, yo)
    assert not [w for w in caught if "components without any labeled" in str(w.message)]
    assert mm.n_unreached_ == 0 and m.n_unreached_ == 0


def test_start_kernel_is_validated():
    """#16 item 11: a bad K0 is refused with an error naming K0 (was IndexError)."""
    A, y, y_obs, _ = planted(n=20)
    K0 = np.eye(20) + A / abs(np.linalg.eigvalsh(A)[0])
    bad = K0.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match="K0 contains 1 NaN"):
        SPORE(K0=bad, **PRE).fit(A, y_obs)
    with pytest.raises(ValueError, match=r"K0 has shape \(19, 19\)"):
        SPORE(K0=K0[:19, :19], **PRE).fit(A, y_obs)
    asym = K0.copy()
    asym[0, 1] += 0.5
    with pytest.raises(ValueError, match="K0 is not symmetric"):
        SPORE(K0=asym, **PRE).fit(A, y_obs)
    with pytest.raises(ValueError, match="K0 must be numeric"):
        SPORE(K0=np.full((20, 20), "a"), **PRE).fit(A, y_obs)
    # a valid K0 equal to the default start gives the default result
    a = SPORE(K0=K0, n_outer=2, **PRE).fit(A, y_obs)
    b = SPORE(n_outer=2, **PRE).fit(A, y_obs)
    np.testing.assert_allclose(a.decision_scores_, b.decision_scores_, atol=1e-8)


def test_object_dtype_input_accepted():
    """#16 item 14: object-dtype numeric X (points or adjacency) is valid input."""
    X, y, y_obs = blobs()
    a = SPORE(n_neighbors=5, n_outer=2).fit(X, y_obs)
    b = SPORE(n_neighbors=5, n_outer=2).fit(X.astype(object), y_obs)
    np.testing.assert_array_equal(a.decision_scores_, b.decision_scores_)
    A, _, yo, _ = planted(n=20)
    a = SPORE(n_outer=2, **PRE).fit(A, yo)
    b = SPORE(n_outer=2, **PRE).fit(A.astype(object), yo)
    np.testing.assert_array_equal(a.decision_scores_, b.decision_scores_)
    a = MultiGraphSPORE(n_outer=1, **PRE).fit([A, A], yo)
    b = MultiGraphSPORE(n_outer=1, **PRE).fit([A.astype(object), A.tolist()], yo)
    np.testing.assert_array_equal(a.decision_scores_, b.decision_scores_)


def test_random_state_makes_the_lanczos_starts_reproducible():
    # Lanczos (ARPACK) is used from 400 vertices: the default K0 and its top eigenpair
    assert lanczos_start(399, 0) is None and lanczos_start(400, None) is None
    np.testing.assert_array_equal(lanczos_start(400, 3), lanczos_start(400, 3))
    A, y, y_obs, _ = planted(n=400, p=0.1, q=0.01)
    fits = [SPORE(n_outer=1, n_inner=1, random_state=0, **PRE).fit(A, y_obs)
            for _ in range(2)]
    np.testing.assert_array_equal(fits[0].decision_scores_, fits[1].decision_scores_)
    np.testing.assert_array_equal(fits[0].embedding_, fits[1].embedding_)


def test_multigraph_spore_prefers_the_good_graph():
    A, y, y_obs, _ = planted(n=60, p=0.5, q=0.05, seed=0)
    noise, _, _, _ = planted(n=60, p=0.3, q=0.3, seed=1)
    m = MultiGraphSPORE(C=1.0, beta=0.01, n_outer=20, keep_path=True, **PRE).fit(
        [A, noise], y_obs)
    unl = y_obs == -1
    # iterate 0 is the SVM on the uniform combination of the two K0's
    assert np.mean((m.history_["scores"][0][unl] > 0) == (y[unl] == 1)) > 0.8
    assert min(m.history_["objective"]) < m.history_["objective"][0]
    assert m.weights_.sum() == pytest.approx(1.0)
    assert m.weights_[0] > 0.6 > m.weights_[1]
    assert len(m.kernels_) == 2 and len(m.affinity_matrices_) == 2
    assert isinstance(m.n_iter_, int) and m.n_iter_ == 20
    np.testing.assert_array_equal(m.predict([A, noise]), m.transduction_)
    with pytest.raises(ValueError, match="transductive"):
        m.predict([noise, A])


def test_multigraph_views_of_features():
    """One graph per view, built by the front-end with the same graph parameters."""
    X, y, y_obs = blobs()
    rng = np.random.default_rng(5)
    views = [X, np.c_[X, rng.normal(0, 0.1, (40, 3))]]
    m = MultiGraphSPORE(n_neighbors=5, n_outer=1).fit(views, y_obs)
    assert [W.shape for W in m.affinity_matrices_] == [(40, 40)] * 2
    assert all(s > 0 for s in m.graph_sigmas_)
    assert not hasattr(m, "affinity_matrix_")
    m = MultiGraphSPORE(affinity="rbf_threshold", n_outer=3).fit(views, y_obs)
    assert np.mean(m.transduction_ == y) > 0.9


def test_multigraph_bad_input():
    A, y, y_obs, _ = planted(n=20)
    with pytest.raises(ValueError, match="list"):
        MultiGraphSPORE(**PRE).fit(A, y_obs)
    with pytest.raises(ValueError, match="list"):
        MultiGraphSPORE(**PRE).fit([], y_obs)
    with pytest.raises(ValueError, match="same vertices"):
        MultiGraphSPORE(**PRE).fit([A, A[:10, :10]], y_obs)
    with pytest.raises(InvalidParameterError, match="'beta' parameter"):
        MultiGraphSPORE(beta=-1, **PRE).fit([A, A], y_obs)
    with pytest.raises(InvalidParameterError, match="'step_eta' parameter"):
        MultiGraphSPORE(step_eta=0.0, **PRE).fit([A, A], y_obs)


def test_cosine_threshold_affinity_defaults_to_cosine_distance_below_0_4():
    """The paper's MNIST graph: similarity > 0.6 (docs/results/spore.md), unless given."""
    from semisup.graph import cosine_threshold_graph
    X = np.random.default_rng(0).random((40, 5))
    y_obs = np.full(40, -1)
    y_obs[:2], y_obs[20:22] = 0, 1
    nnz = {}
    for thr, expected in ((None, 0.6), (0.4, 0.4)):
        m = SPORE(affinity="cosine_threshold", threshold=thr, n_outer=1).fit(X, y_obs)
        W = cosine_threshold_graph(X, expected)
        assert (m.affinity_matrix_.astype(bool) != (W > 0)).nnz == 0
        nnz[thr] = m.affinity_matrix_.nnz
    assert nnz[None] < nnz[0.4]


def test_grid_search_with_transductive_cv():
    from sklearn.model_selection import GridSearchCV
    from semisup.model_selection import TransductiveSplit, labeled_scorer, transductive_target
    X, y, _ = blobs()
    y_obs = np.full(40, -1)
    lab = [0, 1, 2, 3, 20, 21, 22, 23]
    y_obs[lab] = y[lab]
    search = GridSearchCV(SPORE(affinity="rbf_threshold", n_outer=5, n_inner=10),
                          {"beta": [0.01, 0.1]},
                          cv=TransductiveSplit(n_splits=2, random_state=0),
                          scoring=labeled_scorer())
    search.fit(X, transductive_target(y_obs))
    assert search.best_score_ > 0.9
