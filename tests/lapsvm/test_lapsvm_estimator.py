import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_moons

from semisup.graph import knn_graph
from semisup.kernels import rbf_kernel
from semisup.lapsvm import LapRLS, LapSVM, newton


def _moons(n=200, per_class=1, seed=0, labels=("a", "b")):
    X, t = make_moons(n, noise=0.1, random_state=seed)
    rng = np.random.default_rng(seed)
    y = np.full(n, -1, dtype=object)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(t == c), per_class, replace=False)] = labels[c]
    truth = np.array(labels, dtype=object)[t]
    return X, y, truth


KW = dict(sigma=0.35, n_neighbors=6, gamma_A=1e-2, gamma_I=1.0, laplacian="unnormalized",
          use_bias=True)


@pytest.mark.parametrize("solver", ["newton", "pcg", "dual"])
def test_lapsvm_learns_two_moons_from_one_label_per_class(solver):
    X, y, truth = _moons()
    clf = LapSVM(solver=solver, **KW).fit(X, y)
    assert set(clf.classes_) == {"a", "b"}
    assert np.mean(clf.predict(X) == truth) > 0.85
    assert clf.decision_function(X[:5]).shape == (5,)
    assert not hasattr(clf, "predict_proba")


def test_estimator_equals_functional_core_on_same_kernel_and_graph():
    X, y, _ = _moons(per_class=10)
    clf = LapSVM(solver="newton", **KW).fit(X, y)
    K = rbf_kernel(X, sigma=0.35)
    from semisup.graph import laplacian
    L = laplacian(knn_graph(X, 6, weights="heat"), "unnormalized")
    yy = np.where(y == "b", 1.0, np.where(y == "a", -1.0, 0.0))
    r = newton(K, L, yy, gamma_A=1e-2, gamma_I=1.0, use_bias=True)
    np.testing.assert_allclose(clf.alpha_, r.alpha, atol=1e-8)
    assert clf.n_iter_ == r.n_iter


def test_precomputed_kernel_and_affinity_give_same_model():
    X, y, truth = _moons(per_class=3)
    K = rbf_kernel(X, sigma=0.35)
    W = knn_graph(X, 6, weights="heat")
    a = LapSVM(solver="newton", **KW).fit(X, y)
    b = LapSVM(solver="newton", **{**KW, "kernel": "precomputed", "affinity": "precomputed"}
               ).fit(K, y, W=W)
    np.testing.assert_allclose(a.alpha_, b.alpha_, atol=1e-10)
    np.testing.assert_array_equal(b.predict(K[:20]), a.predict(X[:20]))
    c = LapSVM(solver="newton", **{**KW, "affinity": "precomputed"}).fit(X, y, W=W)
    np.testing.assert_allclose(c.alpha_, a.alpha_, atol=1e-10)


def test_laprls_closed_form_equals_pcg_to_convergence():
    X, y, truth = _moons(per_class=4)
    a = LapRLS(solver="closed_form", **KW).fit(X, y)
    b = LapRLS(solver="pcg", early_stopping=None, max_iter=20000, **KW).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-5)


def test_multiclass_one_vs_all_with_joint_and_separate_stopping():
    X, t = make_blobs(300, centers=[[0, 0], [4, 0], [0, 4]], cluster_std=0.8, random_state=0)
    y = np.full(300, -1)
    for c in range(3):
        y[np.flatnonzero(t == c)[:2]] = c + 10
    for joint in (True, False):
        clf = LapSVM(sigma=1.0, gamma_A=1e-3, gamma_I=0.1, joint_stopping=joint).fit(X, y)
        assert clf.decision_function(X).shape == (300, 3)
        assert np.mean(clf.predict(X) == t + 10) > 0.95
    for solver in ("newton", "dual"):
        clf = LapSVM(sigma=1.0, gamma_A=1e-3, gamma_I=0.1, solver=solver).fit(X, y)
        assert np.mean(clf.predict(X) == t + 10) > 0.95


def test_validation_and_mixed_rules_through_fit():
    X, y, truth = _moons(per_class=1)
    Xv, _, tv = _moons(n=60, seed=3)
    for rule in ("validation", "mixed", ["stability", "grad"]):
        clf = LapSVM(early_stopping=rule, **KW).fit(X, y, X_val=Xv, y_val=tv)
        assert clf.n_iter_ <= 110
        assert np.mean(clf.predict(X) == truth) > 0.8


def test_warm_start_reuses_previous_solution():
    X, y, _ = _moons(per_class=5)
    clf = LapSVM(early_stopping=None, max_iter=5000, warm_start=True, **KW).fit(X, y)
    clf.set_params(gamma_I=1.1, max_iter=10)
    cold = clone(clf).set_params(warm_start=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
        cold.fit(X, y)
    # after 10 iterations the warm start is much closer to the optimum
    assert clf.history_["obj"][0] < 0.5 * cold.history_["obj"][0]
    assert clf.history_["obj"][-1] < cold.history_["obj"][-1]


def test_float32_kernel_gives_same_predictions():
    X, y, truth = _moons(per_class=2)
    a = LapSVM(**KW).fit(X, y)
    b = LapSVM(kernel_dtype="float32", **KW).fit(X, y)
    assert np.mean(a.predict(X) == b.predict(X)) > 0.99


def test_sparse_input_accepted():
    X, y, truth = _moons(per_class=2)
    a = LapSVM(solver="newton", **KW).fit(X, y)
    b = LapSVM(solver="newton", **KW).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.alpha_, b.alpha_, atol=1e-8)


def test_input_is_not_mutated():
    X, y, _ = _moons(per_class=2)
    X0, y0 = X.copy(), y.copy()
    LapSVM(**KW).fit(X, y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


# -- bad input -----------------------------------------------------------------------------
def test_bad_inputs_raise_clear_errors():
    X, y, truth = _moons()
    one_class = y.copy()
    one_class[y == "b"] = -1
    with pytest.raises(ValueError, match="class"):
        LapSVM(**KW).fit(X, one_class)
    with pytest.raises(ValueError, match="no labeled"):
        LapSVM(**KW).fit(X, np.full(len(X), -1))
    Xn = X.copy()
    Xn[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LapSVM(**KW).fit(Xn, y)
    Xi = X.copy()
    Xi[0, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        LapSVM(**KW).fit(Xi, y)
    with pytest.raises(ValueError, match="entries"):
        LapSVM(**KW).fit(X, y[:-1])
    with pytest.raises(ValueError, match="X_val"):
        LapSVM(early_stopping="validation", **KW).fit(X, y, X_val=X[:10], y_val=truth[:9])
    with pytest.raises(ValueError, match="columns"):
        LapSVM(early_stopping="validation", **KW).fit(X, y, X_val=X[:10, :1], y_val=truth[:10])
    with pytest.raises(ValueError, match="not among"):
        LapSVM(early_stopping="validation", **KW).fit(X, y, X_val=X[:3], y_val=["a", "z", "b"])
    with pytest.raises(ValueError, match="validation set"):
        LapSVM(early_stopping="validation", **KW).fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        LapSVM(solver="sgd").fit(X, y)
    with pytest.raises(ValueError, match="gamma_A"):
        LapSVM(gamma_A=-1).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        LapSVM(**KW).fit(X, y).predict(X[:, :1])
    with pytest.raises(ValueError, match="W=W"):
        LapSVM(affinity="precomputed").fit(X, y)
    with pytest.raises(ValueError, match="affinity='precomputed'"):
        LapSVM(kernel="precomputed").fit(rbf_kernel(X), y)


def test_non_psd_precomputed_kernel_warns():
    X, y, _ = _moons(n=60, per_class=2)
    K = rbf_kernel(X, sigma=0.35)
    K_bad = K - 0.5 * np.eye(60)
    W = knn_graph(X, 6)
    with pytest.warns(UserWarning, match="positive semi-definite"):
        LapSVM(kernel="precomputed", affinity="precomputed", solver="newton", gamma_A=1e-2
               ).fit(K_bad, y, W=W)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        LapSVM(kernel="precomputed", affinity="precomputed", solver="newton", gamma_A=1e-2
               ).fit(K, y, W=W)


def test_too_large_problem_refused_with_estimate(monkeypatch):
    X, y, _ = _moons()
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(200 * 200 * 8 - 1))
    with pytest.raises(MemoryError, match="float32"):
        LapSVM(**KW).fit(X, y)
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(200 * 200 * 4 + 10))
    LapSVM(kernel_dtype="float32", **KW).fit(X, y)  # PCG fits in float32
    with pytest.raises(MemoryError, match="pcg"):
        LapSVM(kernel_dtype="float32", solver="newton", **KW).fit(X, y)


def test_sklearn_clone_and_get_params():
    from sklearn.base import clone
    clf = LapSVM(gamma_A=0.1, p=3, solver="newton")
    c2 = clone(clf)
    assert c2.get_params()["p"] == 3 and c2.get_params()["gamma_A"] == 0.1
    assert set(LapRLS().get_params()) == set(LapSVM().get_params())
