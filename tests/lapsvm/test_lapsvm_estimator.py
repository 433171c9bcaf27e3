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


KW = dict(kernel_sigma=0.35, n_neighbors=6, gamma_A=1e-2, gamma_I=1.0, laplacian="unnormalized",
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
        clf = LapSVM(kernel_sigma=1.0, n_neighbors=6, gamma_A=1e-3, gamma_I=0.1,
                     joint_stopping=joint).fit(X, y)
        assert clf.decision_function(X).shape == (300, 3)
        assert np.mean(clf.predict(X) == t + 10) > 0.95
    for solver in ("newton", "dual"):
        clf = LapSVM(kernel_sigma=1.0, n_neighbors=6, gamma_A=1e-3, gamma_I=0.1,
                     solver=solver).fit(X, y)
        assert np.mean(clf.predict(X) == t + 10) > 0.95


def test_validation_and_mixed_rules_through_fit():
    X, y, truth = _moons(per_class=1)
    Xv, _, tv = _moons(n=60, seed=3)
    for rule in ("validation", "mixed", ["stability", "grad"]):
        clf = LapSVM(solver="pcg", early_stopping=rule, **KW).fit(X, y, X_val=Xv, y_val=tv)
        assert clf.n_iter_ <= 110
        assert np.mean(clf.predict(X) == truth) > 0.8


def test_warm_start_reuses_previous_solution():
    X, y, _ = _moons(per_class=5)
    clf = LapSVM(solver="pcg", early_stopping=None, max_iter=5000, warm_start=True, **KW).fit(X, y)
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
    a = LapSVM(solver="pcg", **KW).fit(X, y)
    b = LapSVM(solver="pcg", kernel_dtype="float32", **KW).fit(X, y)
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
        LapSVM(solver="pcg", early_stopping="validation", **KW).fit(X, y, X_val=X[:10], y_val=truth[:9])
    with pytest.raises(ValueError, match="columns"):
        LapSVM(solver="pcg", early_stopping="validation", **KW).fit(X, y, X_val=X[:10, :1], y_val=truth[:10])
    with pytest.raises(ValueError, match="not among"):
        LapSVM(solver="pcg", early_stopping="validation", **KW).fit(X, y, X_val=X[:3], y_val=["a", "z", "b"])
    with pytest.raises(ValueError, match="validation set"):
        LapSVM(solver="pcg", early_stopping="validation", **KW).fit(X, y)
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
    LapSVM(solver="pcg", kernel_dtype="float32", **KW).fit(X, y)  # PCG fits in float32
    with pytest.raises(MemoryError, match="pcg"):
        LapSVM(kernel_dtype="float32", solver="newton", **KW).fit(X, y)


def test_sklearn_clone_and_get_params():
    from sklearn.base import clone
    clf = LapSVM(gamma_A=0.1, laplacian_power=3, solver="newton")
    c2 = clone(clf)
    assert c2.get_params()["laplacian_power"] == 3 and c2.get_params()["gamma_A"] == 0.1
    assert set(LapRLS().get_params()) == set(LapSVM().get_params())


# -- the shared contract (issue "one contract") ----------------------------------------------
def test_graph_parameters_are_the_shared_ones_with_shared_defaults():
    from semisup.graph.frontend import GRAPH_DEFAULTS
    for Est in (LapSVM, LapRLS):
        params = Est().get_params()
        for name, default in GRAPH_DEFAULTS.items():
            assert params[name] == default, name
        assert "sigma" not in params and "p" not in params
        assert params["kernel_sigma"] == "scale" and params["laplacian_power"] == 1
    assert "_validate_params" not in vars(LapSVM.__mro__[1])


def test_W_is_refused_unless_affinity_precomputed():
    X, y, _ = _moons(per_class=2)
    W = knn_graph(X, 6, weights="heat")
    with pytest.raises(ValueError, match="W is ignored unless affinity='precomputed'"):
        LapSVM(**KW).fit(X, y, W=W)
    # with affinity="precomputed" W is the graph, the kernel is computed on X
    a = LapSVM(solver="newton", **{**KW, "affinity": "precomputed"}).fit(X, y, W=W)
    assert (a.affinity_matrix_ != W).nnz == 0
    assert a.n_features_in_ == 2
    with pytest.raises(ValueError, match="samples"):
        LapSVM(**{**KW, "affinity": "precomputed"}).fit(X[:-1], y[:-1], W=W)


@pytest.mark.parametrize("params, name", [
    (dict(laplacian="foo"), "laplacian"),
    (dict(gamma_A="1e-2"), "gamma_A"),
    (dict(gamma_I=np.nan), "gamma_I"),
    (dict(n_neighbors="5"), "n_neighbors"),
    (dict(kernel_sigma=0.0), "kernel_sigma"),
    (dict(laplacian_power=0), "laplacian_power"),
    (dict(laplacian_power=1.5), "laplacian_power"),
    (dict(kernel="sigmoid"), "kernel"),
    (dict(degree=0.5), "degree"),
    (dict(coef0="1"), "coef0"),
    (dict(kernel_dtype="float16"), "kernel_dtype"),
    (dict(max_iter=0), "max_iter"),
    (dict(early_stopping="often"), "early_stopping"),
    (dict(early_stopping=["stability", "often"]), "early_stopping"),
    (dict(early_stopping=[]), "early_stopping"),
    (dict(affinity="mutual"), "affinity"),
])
def test_invalid_parameters_name_the_public_parameter(params, name):
    X, y, _ = _moons(n=40, per_class=2)
    for Est in (LapSVM, LapRLS):
        with pytest.raises(ValueError, match=name):
            Est(**params).fit(X, y)


def test_solver_names_are_per_estimator():
    X, y, _ = _moons(n=40, per_class=2)
    with pytest.raises(ValueError, match="solver"):
        LapRLS(solver="newton").fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        LapSVM(solver="closed_form").fit(X, y)


@pytest.mark.parametrize("Est, solver", [(LapSVM, "pcg"), (LapSVM, "newton"),
                                         (LapSVM, "dual"), (LapRLS, "pcg"),
                                         (LapRLS, "closed_form")])
def test_transduction_is_predict_on_the_training_points(Est, solver):
    X, y, truth = _moons(per_class=2)
    clf = Est(solver=solver, **KW)
    out = clf.fit_predict(X, y)
    np.testing.assert_array_equal(out, clf.transduction_)
    assert clf.transduction_.shape == (len(X),)
    assert isinstance(clf.n_iter_, int) and clf.n_iter_ >= 1
    # from K alpha + b kept by the solver: the same labels as predicting the same points
    f = clf.decision_function(X)
    sure = np.abs(f) > 1e-8
    np.testing.assert_array_equal(clf.transduction_[sure], clf.predict(X)[sure])
    assert np.mean(clf.transduction_ == truth) > 0.85
    labeled = y != -1
    assert clf.score(X, y) == np.mean(clf.predict(X)[labeled] == y[labeled])


def test_transduction_multiclass_and_precomputed_kernel():
    X, t = make_blobs(150, centers=[[0, 0], [4, 0], [0, 4]], cluster_std=0.8, random_state=0)
    y = np.full(150, -1)
    for c in range(3):
        y[np.flatnonzero(t == c)[:2]] = c
    K = rbf_kernel(X)
    W = knn_graph(X, 6, weights="heat")
    clf = LapSVM(kernel="precomputed", affinity="precomputed", gamma_A=1e-3,
                 gamma_I=0.1).fit(K, y, W=W)
    np.testing.assert_array_equal(clf.transduction_, clf.predict(K))
    assert np.mean(clf.transduction_ == t) > 0.95


def test_random_state_seeds_the_psd_check_submatrix(monkeypatch):
    from semisup import kernels as est          # the check lives in the kernel entry point
    X, y, _ = _moons(n=60, per_class=2)
    K = rbf_kernel(X, sigma=0.35)
    W = knn_graph(X, 6)
    seen = []
    orig = est._warn_if_not_psd

    def spy(K, random_state=None, max_size=1000):
        seen.append(random_state)
        return orig(K, random_state, max_size=10)

    monkeypatch.setattr(est, "_warn_if_not_psd", spy)
    LapSVM(kernel="precomputed", affinity="precomputed", random_state=7).fit(K, y, W=W)
    assert seen == [7]
    # a non-PSD kernel is caught by the random 10 x 10 principal submatrix, for any seed
    bad = K - 0.5 * np.eye(60)
    for seed in (0, 1):
        with pytest.warns(UserWarning, match="positive semi-definite"):
            LapSVM(kernel="precomputed", affinity="precomputed", gamma_A=1e-2,
                   solver="newton", random_state=seed).fit(bad, y, W=W)


# -- reliability (issue "no silent wrong answer") ----------------------------------------------
def _blobs():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 5])
    y = np.full(40, -1)
    y[[0, 1]], y[[20, 21]] = 0, 1
    return X, y


def test_dual_with_gamma_A_zero_is_a_clear_error():
    X, y = _blobs()
    with pytest.raises(ValueError, match="solver='dual' needs gamma_A > 0"):
        LapSVM(solver="dual", gamma_A=0.0).fit(X, y)
    from semisup.lapsvm import dual_lapsvm
    P = np.eye(4)
    with pytest.raises(ValueError, match="gamma_A > 0"):
        dual_lapsvm(P, sp.csr_matrix((4, 4)), np.array([1.0, -1, 0, 0]), gamma_A=0.0,
                    gamma_I=1.0)


@pytest.mark.parametrize("use_bias", [False, True])
def test_newton_on_duplicate_points_with_gamma_I_zero(use_bias):
    # the polynomial kernel of four identical points is a constant 1.6e16: the Newton
    # system is singular in floating point (scipy raised "singular matrix"); the
    # least-squares step gives the optimum f = 0 (two opposite labels on one point)
    X4 = np.tile([100.0, -50.0], (4, 1))
    y4 = np.array([0, 1, -1, -1])
    clf = LapSVM(solver="newton", kernel="polynomial", gamma_I=0.0, n_neighbors=3,
                 use_bias=use_bias).fit(X4, y4)
    assert np.isfinite(clf.alpha_).all()
    np.testing.assert_allclose(clf.decision_function(X4), 0.0, atol=1e-6)


def test_dual_libsvm_is_capped_on_a_degenerate_four_point_problem():
    # libsvm ran for 36-157 s here with its default cap of 10^7 iterations
    X4 = np.tile([1e4, -5e3], (4, 1))
    y4 = np.array([0, 1, -1, -1])
    with pytest.warns(Warning, match="libsvm stopped at max_iter=100000"):
        clf = LapSVM(solver="dual", kernel="polynomial", gamma_I=0.0, n_neighbors=3
                     ).fit(X4, y4)
    assert not clf.converged_ and clf.stop_reason_ == "libsvm max_iter"
    with pytest.warns(Warning, match="max_iter=50"):
        LapSVM(solver="dual", kernel="polynomial", gamma_I=0.0, n_neighbors=3,
               max_iter=50).fit(X4, y4)


def test_max_iter_warnings_fit_the_settings():
    from sklearn.exceptions import ConvergenceWarning
    X, y, _ = _moons(per_class=2)
    with pytest.warns(ConvergenceWarning) as rec:
        LapSVM(solver="pcg", max_iter=2, **KW).fit(X, y)          # early_stopping="stability"
    msg = " ".join(str(w.message) for w in rec if w.category is ConvergenceWarning)
    assert "max_iter=2" in msg and "early_stopping='stability'" in msg
    assert "use early_stopping" not in msg
    with pytest.warns(ConvergenceWarning, match="stop early with early_stopping='stability'"):
        LapSVM(solver="pcg", max_iter=2, early_stopping=None, **KW).fit(X, y)
    with pytest.warns(ConvergenceWarning) as rec:
        LapSVM(solver="pcg", max_iter=2, early_stopping="grad", **KW).fit(X, y)
    assert any("stop_tol" in str(w.message) for w in rec)
    # LapSVM has no line_search parameter: its Newton warning must not advise one
    X, y, _ = _moons(per_class=20)             # E changes after the first (LapRLS) step
    with pytest.warns(ConvergenceWarning) as rec:
        LapSVM(solver="newton", max_iter=1, **KW).fit(X, y)
    msg = " ".join(str(w.message) for w in rec)
    assert "max_iter=1" in msg and "line_search" not in msg


def test_newton_memory_refused_before_the_kernel_is_built(monkeypatch):
    from semisup.lapsvm import estimator as est
    X, y, _ = _moons(n=100, per_class=2)

    def no_kernel(*args, **kwargs):
        raise AssertionError("the kernel was built before the memory check")

    monkeypatch.setattr(est, "make_kernel", no_kernel)
    # the float32 kernel (40 kB) fits; Newton's float64 workspace (~330 kB) does not
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(100 * 100 * 4 * 3))
    for solver in ("newton", "dual"):
        with pytest.raises(MemoryError, match=r"needs about .*solver='pcg', which needs only"):
            LapSVM(solver=solver, kernel_dtype="float32", **KW).fit(X, y)
    with pytest.raises(MemoryError, match="solver='pcg'"):
        LapRLS(solver="closed_form", kernel_dtype="float32", **KW).fit(X, y)


def test_sparse_precomputed_kernel_memory_checked_before_densifying(monkeypatch):
    X, y, _ = _moons(n=60, per_class=2)
    K = sp.csr_matrix(rbf_kernel(X, sigma=0.35))
    W = knn_graph(X, 6)
    kw = dict(kernel="precomputed", affinity="precomputed", gamma_A=1e-2, solver="pcg")
    ref = LapSVM(**kw).fit(K, y, W=W)
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(60 * 60 * 8 - 1))
    with pytest.raises(MemoryError, match=r"densifying the sparse 60x60 precomputed kernel"):
        LapSVM(**kw).fit(K, y, W=W)
    with pytest.raises(MemoryError, match="densifying"):
        ref.decision_function(sp.vstack([K] * 2).tocsr())


def test_kernel_memory_refused_before_the_graph_is_built(monkeypatch):
    X, y, _ = _moons(n=100, per_class=2)

    def no_graph(*args, **kwargs):
        raise AssertionError("the graph was built before the memory check")

    monkeypatch.setattr(LapSVM, "_fit_graph", no_graph)
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(100 * 100 * 8 - 1))
    with pytest.raises(MemoryError, match=r"100x100 float64 kernel matrix needs about .*"
                                          r"kernel_dtype='float32'"):
        LapSVM(solver="pcg", **KW).fit(X, y)


def test_huge_kernel_entries_are_refused_not_overflowed():
    # a linear kernel of points at 1e150 is finite (1e300) but K alpha, L K overflow
    X, y = _blobs()
    for solver in ("pcg", "newton"):
        with pytest.raises(ValueError, match="kernel has entries up to .* rescale X"):
            LapSVM(kernel="linear", solver=solver, n_neighbors=3).fit(X * 1e150, y)
    with pytest.raises(ValueError, match="float32"):
        LapRLS(kernel="linear", kernel_dtype="float32", n_neighbors=3).fit(X * 1e8, y)


def test_ill_conditioned_newton_system_warns_with_the_parameters():
    from scipy.linalg import LinAlgWarning
    X, y = _blobs()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        clf = LapSVM(kernel="linear", solver="newton", n_neighbors=3).fit(X * 1e8, y)
    assert not any(issubclass(w.category, LinAlgWarning) for w in rec)
    assert any("ill-conditioned" in str(w.message) and "gamma_A" in str(w.message)
               for w in rec)
    assert np.isfinite(clf.alpha_).all()


# -- kernel widths adapt to the data (issue "the user's path is the validated path") -------
def test_default_kernel_width_adapts_to_the_data_scale():
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    train, test = idx[:900], idx[900:1300]
    y_semi = np.full(900, -1)
    for c in range(10):
        y_semi[np.flatnonzero(y[train] == c)[:5]] = c
    accs = []
    for scale in (1.0, 1000.0):        # the same problem in other units: the same model
        clf = LapRLS(kernel_dtype="float32").fit(X[train] * scale, y_semi)
        assert clf.kernel_sigma_ == pytest.approx(
            scale * np.sqrt(X.shape[1] * X[train].var() / 2), rel=1e-6)
        accs.append(np.mean(clf.predict(X[test] * scale) == y[test]))
    assert accs[0] > 0.8 and accs[0] == pytest.approx(accs[1], abs=0.01)


def test_a_kernel_far_narrower_than_the_data_warns():
    X, y = make_moons(60, noise=0.05, random_state=0)
    y_semi = np.full(60, -1)
    y_semi[:4] = y[:4]
    with pytest.warns(UserWarning, match="numerically zero"):
        LapRLS(kernel_sigma=1e-3).fit(X, y_semi)


def test_iterations_per_one_vs_all_problem():
    X, y = make_blobs(90, centers=3, random_state=0)
    y_semi = np.full(90, -1)
    for c in range(3):
        y_semi[np.flatnonzero(y == c)[:3]] = c
    clf = LapSVM(solver="newton").fit(X, y_semi)
    assert clf.n_iter_per_class_.shape == (3,)
    assert clf.n_iter_ == clf.n_iter_per_class_.max()


# -- keep_path: the iterates of the fit (issue #17: the figures read them) -----------------
def _path_problem(n_classes):
    if n_classes == 2:
        X, y, _ = _moons(per_class=3)
        return X, y
    X, t = make_blobs(150, centers=[[0, 0], [4, 0], [0, 4]], cluster_std=0.8, random_state=0)
    y = np.full(150, -1)
    for c in range(3):
        y[np.flatnonzero(t == c)[:2]] = c
    return X, y


PATH_CASES = [(LapSVM, "pcg"), (LapSVM, "newton"), (LapSVM, "dual"), (LapRLS, "pcg"),
              (LapRLS, "closed_form")]


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est, solver", PATH_CASES)
def test_keep_path_records_the_iterates_without_changing_the_fit(Est, solver, n_classes):
    X, y = _path_problem(n_classes)
    kw = dict(KW, solver=solver, early_stopping="stability" if solver == "pcg" else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = Est(**kw).fit(X, y)
        est = Est(keep_path=True, **kw).fit(X, y)
    h = est.history_
    # the fit is the same, to the bit
    np.testing.assert_array_equal(est.alpha_, plain.alpha_)
    np.testing.assert_array_equal(est.intercept_, plain.intercept_)
    assert est.n_iter_ == plain.n_iter_ and "alpha" not in plain.history_
    # one entry per iteration (the dual: its solution), the last one the fit
    n = len(h["alpha"])
    assert len(h["intercept"]) == len(h["scores"]) == n
    assert n == (1 if solver in ("dual", "closed_form") else
                 len(h["obj"]) - 1 if solver == "pcg" else est.n_iter_)
    np.testing.assert_array_equal(h["alpha"][-1], est.alpha_)
    np.testing.assert_array_equal(h["intercept"][-1], est.intercept_)
    assert h["scores"][-1].shape == est.decision_function(X).shape
    np.testing.assert_allclose(h["scores"][-1], est.decision_function(X), atol=1e-8)
    np.testing.assert_array_equal(est._labels(h["scores"][-1]), est.transduction_)
    # staged_*: one value per iterate, the last one decision_function / predict
    staged = list(est.staged_decision_function(X[:30]))
    assert len(staged) == n
    np.testing.assert_allclose(staged[-1], est.decision_function(X[:30]), atol=1e-12)
    np.testing.assert_allclose(staged[0], h["scores"][0][:30], atol=1e-8)
    preds = list(est.staged_predict(X[:30]))
    np.testing.assert_array_equal(preds[-1], est.predict(X[:30]))
    with pytest.raises(ValueError, match="keep_path=True"):
        next(plain.staged_predict(X[:5]))


@pytest.mark.parametrize("solver", ["pcg", "newton"])
def test_keep_path_equals_the_solver_callback(solver):
    from semisup.graph import laplacian
    from semisup.lapsvm import pcg
    X, y, _ = _moons(per_class=3)
    est = LapSVM(solver=solver, early_stopping=None, max_iter=60 if solver == "pcg" else None,
                 keep_path=True, **{**KW, "kernel": "precomputed", "affinity": "precomputed"})
    K = rbf_kernel(X, sigma=0.35)
    W = knn_graph(X, 6, weights="heat")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(K, y, W=W)
    L = laplacian(W, "unnormalized")
    yy = np.where(y == "b", 1.0, np.where(y == "a", -1.0, 0.0))
    seen = []

    def cb(t, a, b, F):
        seen.append((t, a.copy(), b, F[:, 0].copy()))

    kw = dict(gamma_A=1e-2, gamma_I=1.0, use_bias=True, callback=cb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if solver == "pcg":
            pcg(K, L, yy, max_iter=60, **kw)
        else:
            newton(K, L, yy, **kw)
    assert [t for t, *_ in seen] == list(range(1, len(seen) + 1))
    assert len(seen) == len(est.history_["alpha"])
    for (t, a, b, F), a2, b2, F2 in zip(seen, est.history_["alpha"], est.history_["intercept"],
                                        est.history_["scores"]):
        np.testing.assert_allclose(a2, a, rtol=0, atol=1e-12)
        assert b2 == pytest.approx(b, abs=1e-12)
        np.testing.assert_allclose(F2, F, rtol=0, atol=1e-12)
