"""ClusteredRegressor / ClusteredClassifier: the shared contract (issue #15) and the
reliability items of issue #16 (extreme magnitudes, NaN parameters, memory refusals)."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.utils._param_validation import InvalidParameterError

from semisup.clustering import ClusteredClassifier, ClusteredRegressor, fw_sample_clustering
import semisup.clustering.estimator as estimator_module


@pytest.fixture(scope="module")
def blobs():
    """Two Gaussian blobs of 20 points in 2-D, 5 apart (the fuzz setting of issue #16)."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.standard_normal((20, 2)), rng.standard_normal((20, 2)) + 5])
    y = X @ np.array([1.0, -2.0]) + 0.1 * rng.standard_normal(40)
    c = np.repeat([0, 1], 20)
    return X, y, c


@pytest.fixture(scope="module")
def features():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((120, 8))
    w = np.array([2.0, 2.0, 2.0, 2.0, -1.0, -1.0, -1.0, -1.0])
    return X, X @ w + 1.0 + 0.05 * rng.standard_normal(120), w


# ------------------------------------------------------------------ names and parameters
@pytest.mark.parametrize("params, name", [
    ({"alpha": np.nan}, "alpha"),           # issue #16 item 12 (was "the vector to project")
    ({"alpha": np.inf}, "alpha"),
    ({"alpha": -1.0}, "alpha"),
    ({"alpha": "1e-3"}, "alpha"),
    ({"n_clusters": 0}, "n_clusters"),
    ({"n_clusters": 2.5}, "n_clusters"),
    ({"solver": "cg"}, "solver"),           # the old name of Frank-Wolfe is gone
    ({"solver": "cgpg"}, "solver"),
    ({"cluster": "rows"}, "cluster"),
    ({"sparsity": 0}, "sparsity"),
    ({"max_iter": 0}, "max_iter"),
    ({"tol": np.nan}, "tol"),
    ({"fw_max_iter": 0}, "fw_max_iter"),
    ({"n_init": 0}, "n_init"),
    ({"fit_intercept": "yes"}, "fit_intercept"),
    ({"refine": 2}, "refine"),
    ({"random_state": "seed"}, "random_state"),
])
@pytest.mark.parametrize("Est", [ClusteredRegressor, ClusteredClassifier])
def test_parameters_are_validated_by_name(blobs, Est, params, name):
    X, y, c = blobs
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {Est.__name__}"):
        Est(**{"n_clusters": 2, **params}).fit(X, y if Est is ClusteredRegressor else c)


def test_classifier_loss_is_validated(blobs):
    X, _, c = blobs
    with pytest.raises(InvalidParameterError, match="'loss' parameter"):
        ClusteredClassifier(2, loss="hinge").fit(X, c)


def test_no_hand_written_checker_left():
    assert not hasattr(ClusteredRegressor, "_check_params")
    assert "_validate_params" not in vars(estimator_module._ClusteredBase)


@pytest.mark.parametrize("solver, cluster", [("pg", "features"), ("fw", "features"),
                                             ("fwpg", "features"), ("pg", "samples"),
                                             ("fw", "samples"), ("fwpg", "samples"),
                                             ("am", "samples")])
def test_fitted_names(blobs, solver, cluster):
    X, y, _ = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = ClusteredRegressor(2, cluster=cluster, solver=solver, fw_max_iter=10,
                               random_state=0).fit(X, y)
    # with Q = d = 2 the feature constraint is void: the ridge start is optimal for PG
    assert type(m.n_iter_) is int
    assert m.n_iter_ >= (0 if (solver, cluster) == ("pg", "features") else 1)
    assert m.cluster_labels_.dtype.kind == "i"
    assert m.cluster_labels_.shape == ((2,) if cluster == "features" else (40,))
    assert not hasattr(m, "labels_") and not hasattr(m, "transduction_")
    assert hasattr(m, "fw_result_") == (solver in ("fw", "fwpg"))
    assert hasattr(m, "pg_result_") == (solver in ("pg", "fwpg"))
    assert "fw_max_iter" in m.get_params() and "cg_max_iter" not in m.get_params()


def test_feature_names_are_recorded(features):
    pd = pytest.importorskip("pandas")
    X, y, _ = features
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    m = ClusteredRegressor(2).fit(df, y)
    np.testing.assert_array_equal(m.feature_names_in_, df.columns)
    with pytest.warns(UserWarning, match="feature names"):
        m.predict(X)


# ------------------------------------------------------------------ label convention
def test_classifier_drops_unlabeled_points(features):
    X, y, _ = features
    c = (y > np.median(y)).astype(int)
    c_semi = c.copy()
    c_semi[::3] = -1
    lab = c_semi != -1
    a = ClusteredClassifier(2, random_state=0).fit(X, c_semi)
    b = ClusteredClassifier(2, random_state=0).fit(X[lab], c[lab])
    np.testing.assert_array_equal(a.classes_, [0, 1])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    np.testing.assert_array_equal(a.cluster_labels_, b.cluster_labels_)
    # score ignores the -1 entries of y (plain accuracy would count them as errors)
    acc = np.mean(a.predict(X[lab]) == c[lab])
    assert a.score(X, c_semi) == pytest.approx(acc)
    assert a.score(X, c_semi) > 0.9
    w = np.arange(1.0, X.shape[0] + 1)
    assert a.score(X, c_semi, sample_weight=w) == pytest.approx(
        np.average(a.predict(X[lab]) == c[lab], weights=w[lab]))


def test_classifier_string_labels_with_unlabeled(features):
    X, y, _ = features
    c = np.where(y > np.median(y), "high", "low").astype(object)
    c[::4] = "-1"
    m = ClusteredClassifier(2, cluster="samples", solver="am", random_state=0).fit(X, c)
    np.testing.assert_array_equal(m.classes_, ["high", "low"])
    assert set(np.unique(m.predict(X))) <= {"high", "low"}


def test_regressor_drops_nan_targets_and_keeps_minus_one(features):
    X, y, _ = features
    y_semi = y.copy()
    y_semi[::3] = np.nan
    known = ~np.isnan(y_semi)
    a = ClusteredRegressor(2, cluster="samples", solver="am", random_state=0).fit(X, y_semi)
    b = ClusteredRegressor(2, cluster="samples", solver="am", random_state=0).fit(X[known],
                                                                              y[known])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert a.cluster_labels_.shape == (known.sum(),)
    # score and the best-of-Q error ignore the NaN targets
    assert a.score(X, y_semi) == pytest.approx(r2_score(y[known], a.predict(X[known])))
    assert a.best_of_q_mse(X, y_semi) == pytest.approx(a.best_of_q_mse(X[known], y[known]))
    best = a.predict(X, y=y_semi)
    np.testing.assert_allclose(best[~known], a.predict(X)[~known])
    # -1 is an ordinary regression target: those samples are fitted, not dropped
    y_m1 = y.copy()
    y_m1[:30] = -1.0
    m = ClusteredRegressor(2).fit(X, y_m1)
    dropped = ClusteredRegressor(2).fit(X[30:], y_m1[30:])
    assert not np.allclose(m.coef_, dropped.coef_)
    assert np.mean(m.predict(X[:30])) == pytest.approx(-1.0, abs=1.0)


def test_column_vector_target_warns(features):
    from sklearn.exceptions import DataConversionWarning
    X, y, _ = features
    with pytest.warns(DataConversionWarning):
        m = ClusteredRegressor(2).fit(X, y[:, None])
    np.testing.assert_allclose(m.coef_, ClusteredRegressor(2).fit(X, y).coef_)


# ------------------------------------------------------------------ extreme magnitudes (#16)
def test_huge_X_samples_give_a_finite_fit(blobs):
    # issue #16 item 5: NaN predictions with only a RuntimeWarning before the rescaling
    X, y, _ = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = ClusteredRegressor(2, cluster="samples", random_state=0).fit(X * 1e200, y)
        F = m.predict(X * 1e200, return_all=True)
    assert np.isfinite(F).all() and np.isfinite(m.coef_).all()
    assert m.best_of_q_mse(X * 1e200, y) < 0.1


@pytest.mark.parametrize("solver", ["am", "pg"])
def test_huge_X_samples_is_the_same_problem(blobs, solver):
    # alpha = 0: scaling X by 2**600 scales the experts' slopes by 2**-600, exactly
    X, y, _ = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = ClusteredRegressor(2, cluster="samples", solver=solver, alpha=0.0,
                               random_state=0).fit(X, y)
        b = ClusteredRegressor(2, cluster="samples", solver=solver, alpha=0.0,
                               random_state=0).fit(X * 2.0 ** 600, y)
    np.testing.assert_allclose(b.coef_ * 2.0 ** 600, a.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(a.cluster_labels_, b.cluster_labels_)


@pytest.mark.parametrize("scale", [1e155, 1e200, 1e300])
def test_huge_finite_X_features(features, scale):
    # issue #16 item 9: "array must not contain infs or NaNs" for finite input before
    X, y, w = features
    m = ClusteredRegressor(2, random_state=0).fit(X * scale, y)
    np.testing.assert_allclose(m.coef_ * scale, w, atol=0.05)
    assert m.score(X * scale, y) > 0.99
    c = (y > np.median(y)).astype(int)
    with warnings.catch_warnings():
        # alpha is negligible at this scale: on separable labels the logistic weights grow
        # without bound, and PG rightly says it stopped at max_iter
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ClusteredClassifier(2, random_state=0).fit(X * scale, c)
    assert np.isfinite(clf.coef_).all() and clf.score(X * scale, c) > 0.9


def test_huge_X_features_is_the_same_problem(features):
    # X * 2**400 with alpha * 4**400 is the problem (X, alpha) rewritten: same weights
    X, y, _ = features
    a = ClusteredRegressor(2, alpha=1e-2).fit(X, y)
    b = ClusteredRegressor(2, alpha=float(np.ldexp(1e-2, 800))).fit(X * 2.0 ** 400, y)
    np.testing.assert_allclose(b.coef_ * 2.0 ** 400, a.coef_, rtol=1e-9)
    assert b.intercept_ == pytest.approx(a.intercept_, rel=1e-9)
    c = (y > np.median(y)).astype(int)
    a = ClusteredClassifier(2, alpha=1e-2).fit(X, c)
    b = ClusteredClassifier(2, alpha=float(np.ldexp(1e-2, 800))).fit(X * 2.0 ** 400, c)
    # same problem, but projected gradient steps on the (unscaled) intercept differ, so the
    # logistic fits agree to PG's tolerance only
    np.testing.assert_allclose(b.coef_ * 2.0 ** 400, a.coef_, rtol=1e-2)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-2, atol=1e-2)
    np.testing.assert_array_equal(b.cluster_labels_, a.cluster_labels_)


@pytest.mark.parametrize("cluster", ["features", "samples"])
def test_huge_targets(features, cluster):
    X, y, _ = features
    a = ClusteredRegressor(2, cluster=cluster, random_state=0).fit(X, y)
    b = ClusteredRegressor(2, cluster=cluster, random_state=0).fit(X, y * 2.0 ** 600)
    np.testing.assert_allclose(b.coef_, a.coef_ * 2.0 ** 600, rtol=1e-9)
    np.testing.assert_allclose(b.intercept_, np.multiply(a.intercept_, 2.0 ** 600), rtol=1e-9)


def test_tiny_X_is_refused_naming_X(features):
    X, y, _ = features
    # was a silent coef_ of 0: the ridge term outweighs the data by more than 1e308
    with pytest.raises(ValueError,
                       match=r"X is too small for alpha.*largest entry is [0-9.]+e-200"):
        ClusteredRegressor(2).fit(X * 1e-200, y)
    # with no ridge the rescaled fit is the unscaled one
    a = ClusteredRegressor(2, alpha=0.0).fit(X, y)
    b = ClusteredRegressor(2, alpha=0.0).fit(X * 2.0 ** -600, y)
    np.testing.assert_allclose(b.coef_ * 2.0 ** -600, a.coef_, rtol=1e-9)


def test_tiny_X_samples_is_the_same_problem(blobs):
    # X * 1e-120 is rescaled internally (with its ones column, which keeps the intercepts'
    # ridge weight): the experts are those of alternating minimisation on the design as given
    from semisup.clustering import alternating_minimization
    X, y, _ = blobs
    Xt = X * 1e-120
    m = ClusteredRegressor(2, cluster="samples", solver="am", refine=False, alpha=1e-3,
                           random_state=0).fit(Xt, y)
    rng, best = np.random.RandomState(0), None
    for _ in range(3):  # n_init random starts drawn from the same generator
        r = alternating_minimization(np.c_[Xt, np.ones(40)], y, 2, 1e-3, max_iter=500,
                                     random_state=rng)
        best = r if best is None or r.loss < best.loss else best
    np.testing.assert_allclose(m.experts_, best.V, rtol=1e-9)
    assert np.abs(m.intercept_).max() > 1.0  # the intercepts are fitted, not shrunk to 0


@pytest.mark.parametrize("cluster", ["features", "samples"])
def test_frank_wolfe_refuses_a_negligible_alpha(features, cluster):
    X, y, _ = features
    with pytest.raises(ValueError, match="alpha > 0"):  # alpha / 4**ex underflows to 0
        ClusteredRegressor(2, cluster=cluster, solver="fw").fit(X * 1e200, y)
    with pytest.raises(ValueError, match="numerically singular at lam"):  # was LinAlgError
        ClusteredRegressor(2, cluster=cluster, solver="fw", alpha=1e-30).fit(X, y)


def test_alpha_zero_samples_with_small_groups(blobs):
    # a group smaller than d made the ridge-free expert solve a LinAlgError
    X, y, _ = blobs
    m = ClusteredRegressor(3, cluster="samples", solver="am", alpha=0.0,
                           random_state=0).fit(X[:8], y[:8])
    assert np.isfinite(m.experts_).all()


# ------------------------------------------------------------------ memory (#16)
def test_frank_wolfe_samples_refused_before_the_work(blobs, monkeypatch):
    X, y, _ = blobs
    n = X.shape[0]

    def must_not_run(*args, **kwargs):
        raise AssertionError("Frank-Wolfe started although its n x n matrices do not fit")

    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(2 * 8 * n * n))  # below 4 n x n matrices
    monkeypatch.setattr(estimator_module, "fw_sample_clustering", must_not_run)
    for solver in ("fw", "fwpg"):
        with pytest.raises(MemoryError, match=r"needs about .*solver='am'"):
            ClusteredRegressor(2, cluster="samples", solver=solver).fit(X, y)
    # the alternative the message names fits in the same budget
    m = ClusteredRegressor(2, cluster="samples", solver="am", random_state=0).fit(X, y)
    assert m.best_of_q_mse(X, y) < 0.1
    monkeypatch.undo()
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(2 * 8 * n * n))
    with pytest.raises(MemoryError, match="Frank-Wolfe on sample clusters"):
        fw_sample_clustering(X, y, 2, 1e-3)


def test_frank_wolfe_features_refused_before_the_work(monkeypatch):
    from semisup.clustering.frank_wolfe import fw_features_nbytes
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1600, 4))  # beyond the n x n form: n x Q blocks per atom
    y = X @ np.array([1.0, 1.0, -1.0, -1.0])
    need = fw_features_nbytes(1600, 2, 50)
    assert need > fw_features_nbytes(1600, 2, 5)

    def must_not_run(*args, **kwargs):
        raise AssertionError("the ridge start ran although Frank-Wolfe does not fit")

    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(need / 2))
    monkeypatch.setattr(estimator_module, "_ridge_init", must_not_run)
    with pytest.raises(MemoryError, match="Lower fw_max_iter or use solver='pg'"):
        ClusteredRegressor(2, solver="fw", fw_max_iter=50).fit(X, y)
    monkeypatch.undo()
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(need / 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = ClusteredRegressor(2, solver="fw", fw_max_iter=5).fit(X, y)  # the advice fits
    assert np.unique(m.coef_).size <= 2


def test_projected_gradient_samples_memory_refusal(blobs, monkeypatch):
    X, y, _ = blobs
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", "1000")
    with pytest.raises(MemoryError, match="one predictor per sample"):
        ClusteredRegressor(2, cluster="samples", solver="pg").fit(X, y)


# ------------------------------------------------------------------ convergence advice
def test_convergence_warning_advises_standardizing_badly_scaled_X():
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)  # column scales from 1e-3 to 1e3
    with pytest.warns(ConvergenceWarning, match="standardize X"):
        ClusteredClassifier(3, max_iter=5).fit(X, y)


# ------------------------------------------------------------------ public functions
def test_public_solver_functions_validate_their_parameters(blobs):
    from semisup.clustering import (alternating_minimization, fw_feature_clustering,
                                    pg_clustered_multitask)
    X, y, _ = blobs
    with pytest.raises(InvalidParameterError, match="'lam' parameter of fw_feature_clustering"):
        fw_feature_clustering(X, y, 2, np.nan)
    with pytest.raises(InvalidParameterError, match="'max_iter' parameter of fw_sample"):
        fw_sample_clustering(X, y, 2, 1e-3, max_iter=0)  # was an IndexError on gaps[-1]
    with pytest.raises(InvalidParameterError, match="'lam' parameter of alternating_min"):
        alternating_minimization(X, y, 2, -1.0)
    with pytest.raises(InvalidParameterError, match="'n_clusters' parameter of pg_clustered"):
        pg_clustered_multitask(X, np.column_stack([y, y]), 0, 1e-3, 0.0, 0.0, 0.0)


# ------------------------------------------------------------------ model selection
@pytest.mark.parametrize("est", [ClusteredClassifier(2), ClusteredRegressor(2),
                                 ClusteredRegressor(2, cluster="samples", solver="am")],
                         ids=["classifier", "regressor", "regressor-samples"])
def test_grid_search_with_the_transductive_splitter(features, est):
    from sklearn.model_selection import GridSearchCV
    from semisup.model_selection import TransductiveSplit, labeled_scorer, transductive_target
    X, y, _ = features
    if isinstance(est, ClusteredClassifier):
        t = (y > np.median(y)).astype(int)
        t[::2] = -1       # unlabeled points
    else:
        t = y.copy()
        t[::2] = np.nan   # unlabeled regression targets
    search = GridSearchCV(est, {"alpha": [1e-3, 1e-1]}, error_score="raise",
                          cv=TransductiveSplit(n_splits=3, random_state=0),
                          scoring=labeled_scorer())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, transductive_target(t))
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_score_ > 0.8   # accuracy or R^2 over the held-out labels only
