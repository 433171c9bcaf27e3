import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from semisup.spore import SPORE, MultiGraphSPORE


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


def test_spore_classifies_a_planted_partition():
    A, y, y_obs, lab = planted()
    m = SPORE(C=1.0, beta=0.01, n_outer=20, keep_path=True).fit(sp.csr_matrix(A), y_obs)
    unl = y_obs == -1
    assert np.mean(m.transduction_[unl] == y[unl]) > 0.85
    # iterate 0 is the SVM on K0 = I + A/|lambda_min(A)|
    assert np.mean((m.history_["scores"][0][unl] > 0) == (y[unl] == 1)) > 0.85
    assert set(m.classes_) == {0, 1}
    assert m.embedding_.shape == (60, 60)
    assert len(m.history_["objective"]) == 21
    np.testing.assert_array_equal(m.transduction_[lab], y[lab])


def test_identity_start_warns_and_gives_zero_unlabelled_scores():
    A, y, y_obs, lab = planted()
    with pytest.warns(UserWarning, match="K0 = I"):
        m = SPORE(n_outer=3, K0="identity").fit(A, y_obs)
    unl = y_obs == -1
    # §3.1: subgradients and projections keep the S/U blocks decoupled (LAPACK returns a
    # coordinate vector as the top eigenvector of I, so nothing mixes the blocks)
    assert np.abs(m.decision_scores_[unl]).max() < 1e-10
    assert np.abs(m.embedding_[np.ix_(lab, np.flatnonzero(unl))]).max() < 1e-10


def test_best_iterate_option_and_input_not_mutated():
    A, y, y_obs, _ = planted()
    A0, y0 = A.copy(), y_obs.copy()
    m = SPORE(n_outer=6, iterate="best").fit(A, y_obs)
    assert m.history_["objective"][m.best_iter_] == min(m.history_["objective"])
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(y_obs, y0)
    assert clone(m).get_params()["iterate"] == "best"


def test_graph_from_features():
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(0, 0.3, (20, 2)), rng.normal(3, 0.3, (20, 2))]
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    y_obs = np.full(40, -1)
    y_obs[[0, 1, 20, 21]] = y[[0, 1, 20, 21]]
    m = SPORE(affinity="rbf_threshold", n_outer=5, n_inner=10).fit(X, y_obs)
    assert np.mean(m.transduction_ == y) > 0.9
    m = SPORE(affinity="knn", n_neighbors=5, n_outer=3).fit(X, y_obs)
    assert m.transduction_.shape == (40,)


def test_self_loops_and_weights_warn_asymmetric_fails():
    A, y, y_obs, _ = planted(n=20)
    Aw = A.copy()
    np.fill_diagonal(Aw, 1.0)
    with pytest.warns(UserWarning, match="self-loops"):
        SPORE(n_outer=1).fit(Aw, y_obs)
    with pytest.warns(UserWarning, match="edge pattern"):
        SPORE(n_outer=1).fit(0.5 * A, y_obs)
    B = A.copy()
    B[0, 1], B[1, 0] = 1.0, 0.0
    with pytest.raises(ValueError, match="symmetric"):
        SPORE(n_outer=1).fit(B, y_obs)


@pytest.mark.parametrize("params, match", [
    ({"C": 0.0}, "C must"), ({"C": -1.0}, "C must"), ({"beta": -0.1}, "beta"),
    ({"n_outer": 0}, "n_outer"), ({"n_inner": 0}, "n_inner"), ({"K0": "random"}, "K0"),
    ({"iterate": "last"}, "iterate"), ({"affinity": "rbf"}, "affinity"),
])
def test_bad_parameters(params, match):
    A, y, y_obs, _ = planted(n=20)
    with pytest.raises(ValueError, match=match):
        SPORE(**params).fit(A, y_obs)


def test_bad_labels():
    A, y, y_obs, _ = planted(n=20)
    one = np.full(20, -1)
    one[:3] = 1
    with pytest.raises(ValueError, match="class"):
        SPORE().fit(A, one)
    three = y_obs.copy()
    three[5] = 2
    with pytest.raises(ValueError, match="binary"):
        SPORE().fit(A, three)
    with pytest.raises(ValueError, match="entries"):
        SPORE().fit(A, y_obs[:10])


def test_too_large_for_dense_kernel(monkeypatch):
    A, y, y_obs, _ = planted(n=20)
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", "1000")
    with pytest.raises(MemoryError, match="dense"):
        SPORE().fit(A, y_obs)


def test_multigraph_spore_prefers_the_good_graph():
    A, y, y_obs, _ = planted(n=60, p=0.5, q=0.05, seed=0)
    noise, _, _, _ = planted(n=60, p=0.3, q=0.3, seed=1)
    m = MultiGraphSPORE(C=1.0, beta=0.01, n_outer=20, keep_path=True).fit([A, noise], y_obs)
    unl = y_obs == -1
    # iterate 0 is the SVM on the uniform combination of the two K0's
    assert np.mean((m.history_["scores"][0][unl] > 0) == (y[unl] == 1)) > 0.8
    assert min(m.history_["objective"]) < m.history_["objective"][0]
    assert m.weights_.sum() == pytest.approx(1.0)
    assert m.weights_[0] > 0.6 > m.weights_[1]
    assert len(m.kernels_) == 2


def test_multigraph_bad_input():
    A, y, y_obs, _ = planted(n=20)
    with pytest.raises(ValueError, match="list"):
        MultiGraphSPORE().fit(A, y_obs)
    with pytest.raises(ValueError, match="same vertices"):
        MultiGraphSPORE().fit([A, A[:10, :10]], y_obs)
    with pytest.raises(ValueError, match="beta"):
        MultiGraphSPORE(beta=-1).fit([A, A], y_obs)


def test_cosine_threshold_affinity_defaults_to_cosine_distance_below_0_4():
    """The paper's MNIST graph: similarity > 0.6 (docs/results/spore.md), unless given."""
    from semisup.graph import cosine_threshold_graph
    from semisup.spore.estimator import _simple_graph
    X = np.random.default_rng(0).random((40, 5))
    for thr, expected in ((None, 0.6), (0.4, 0.4)):
        A = _simple_graph(X, "cosine_threshold", thr, 10)
        W = cosine_threshold_graph(X, expected)
        assert (A != (W > 0)).nnz == 0
    assert _simple_graph(X, "cosine_threshold", None, 10).nnz < \
        _simple_graph(X, "cosine_threshold", 0.4, 10).nnz
