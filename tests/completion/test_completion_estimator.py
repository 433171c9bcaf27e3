import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from semisup.completion import MatrixCompletionTransducer
from semisup.completion.fpc import fpc_path
from semisup.completion.metrics import imputation_error, label_error
from semisup.datasets.completion_synthetic import make_completion_problem, synthetic_grid


def _small(seed=0, **kw):
    kw = dict(t=4, d=8, n=60, r=2, sigma2=0.01, omega=0.5) | kw
    return make_completion_problem(seed, **kw)


def test_generator_matches_spec_tv_c6():
    p = make_completion_problem(0, t=10, d=20, n=100, r=2, sigma2=0.01, omega=0.2)
    assert p.X.sum() == pytest.approx(68.1088717261762, abs=1e-9)
    assert p.Y.sum() == 190
    assert p.MX.sum() == 400 and p.MY.sum() == 200
    assert p.X0.std() == pytest.approx(1.0)
    assert (p.Y == np.sign(p.Y0)).mean() == pytest.approx(0.96)
    assert len(list(synthetic_grid())) == 24


@pytest.mark.parametrize("solver", ["apg", "fpc"])
@pytest.mark.parametrize("variant", ["mc1", "mcb"])
def test_fixed_parameters_reproduce_the_solver(variant, solver):
    p = _small()
    Xi, Yi = p.as_estimator_input()
    est = MatrixCompletionTransducer(variant=variant, lam=0.5, mu=1e-3,
                                     solver=solver).fit(Xi, Yi)
    ref = fpc_path(p.X, p.MX, p.Y, p.MY, variant=variant, lam=0.5, mu_final=1e-3,
                   solver=solver)
    S = ref.Z[:4] + (ref.b[:, None] if variant == "mcb" else 0)
    np.testing.assert_allclose(est.decision_scores_, S.T, atol=1e-10)
    np.testing.assert_allclose(est.features_, ref.Z[4:12].T, atol=1e-10)
    np.testing.assert_array_equal(est.transduction_, np.where(S.T >= 0, 1, 0))
    assert est.n_iter_ == int(np.sum(est.n_iter_per_stage_))
    np.testing.assert_array_equal(est.transform(), est.features_)
    assert est.cv_errors_ is None and est.mu_ == 1e-3 and est.mu_path_[-1] == 1e-3


def test_cv_selects_the_grid_point_with_lowest_mean_error():
    p = _small(1)
    Xi, Yi = p.as_estimator_input()
    est = MatrixCompletionTransducer(variant="mcb", lam="cv", mu="cv", lam_grid=(0.1, 1.0),
                                     mu_final=1e-3, random_state=0).fit(Xi, Yi)
    errs = est.cv_errors_
    assert errs.shape == (2, est.mu_grid_.size)
    i, j = np.unravel_index(np.nanargmin(errs), errs.shape)
    assert est.lam_ == (0.1, 1.0)[i] and est.mu_ == est.mu_grid_[j]
    np.testing.assert_array_equal(est.mu_path_, est.mu_grid_[:j + 1])
    # better than chance on the hidden labels, and imputes better than zero filling
    assert label_error(p.Y, est.decision_scores_.T, p.MY) < 0.35
    assert imputation_error(p.X, est.features_.T, p.MX) < 0.5


def test_cv_is_reproducible_and_refit_is_warm_path():
    p = _small(2)
    Xi, Yi = p.as_estimator_input()
    a = MatrixCompletionTransducer(mu_final=1e-3, random_state=3).fit(Xi, Yi)
    b = MatrixCompletionTransducer(mu_final=1e-3, random_state=3).fit(Xi, Yi)
    np.testing.assert_array_equal(a.cv_errors_, b.cv_errors_)
    assert a.rank_ >= 1 and len(a.n_iter_per_stage_) == len(a.mu_path_)


def test_one_dimensional_class_labels_and_sparse_x():
    p = _small(3, t=1)
    Xi, Yi = p.as_estimator_input()
    y = np.where(Yi[:, 0] == 1, "yes", "no").astype(object)
    y[Yi[:, 0] == -1] = -1                      # -1 marks unlabeled items
    est = MatrixCompletionTransducer(lam=1.0, mu=1e-2).fit(Xi, y)
    assert est.transduction_.shape == (60,) and est.decision_scores_.shape == (60,)
    np.testing.assert_array_equal(est.classes_, ["no", "yes"])
    ref = MatrixCompletionTransducer(lam=1.0, mu=1e-2).fit(Xi, Yi)
    # a one-column indicator matrix is one task, read as a 1-D target
    np.testing.assert_allclose(est.decision_scores_, ref.decision_scores_)
    np.testing.assert_array_equal(est.transduction_ == "yes", ref.transduction_ == 1)
    Xs = sp.csr_matrix(np.where(p.MX.T, p.X.T, 0.0))
    Xs.eliminate_zeros()
    est_s = MatrixCompletionTransducer(lam=1.0, mu=1e-2).fit(Xs, Yi)
    np.testing.assert_allclose(est_s.decision_scores_, ref.decision_scores_, atol=1e-10)


def test_inputs_are_not_mutated_and_transduction_is_enforced():
    p = _small(4)
    Xi, Yi = p.as_estimator_input()
    X0, Y0 = Xi.copy(), Yi.copy()
    est = MatrixCompletionTransducer(lam=1.0, mu=1e-2).fit(Xi, Yi)
    np.testing.assert_array_equal(Xi, X0)
    np.testing.assert_array_equal(Yi, Y0)
    np.testing.assert_array_equal(est.predict(Xi), est.transduction_)
    with pytest.raises(ValueError, match="transductive"):
        est.transform(Xi[:10])


def test_standardize_returns_features_in_original_units():
    p = _small(5)
    Xi, Yi = p.as_estimator_input()
    a = MatrixCompletionTransducer(lam=1.0, mu=1e-4, standardize=True).fit(Xi * 50 + 7, Yi)
    obs = ~np.isnan(Xi)
    err = np.abs(a.features_[obs] - (Xi * 50 + 7)[obs]).max()
    assert err < 0.2 * 50


def _base():
    p = _small(6)
    return p.as_estimator_input()


@pytest.mark.parametrize("mutate,match", [
    (lambda X, Y: (X, Y[:-1]), "rows but there are"),
    (lambda X, Y: (X[:, :, None], Y), "must be 2-D"),
    (lambda X, Y: (X, np.where(Y == 1, 2, Y)), "other than 0, 1 and -1"),
    (lambda X, Y: (X, np.where(Y != -1, 0.5, -1.0)), "other than"),
    (lambda X, Y: (X, np.where(Y == 1, np.inf, Y)), "NaN or inf"),
    (lambda X, Y: (np.where(np.isnan(X), np.inf, X), Y), "infinit"),
    (lambda X, Y: (X * 1e200, Y), "too large"),
    (lambda X, Y: (X, np.column_stack([Y, np.full(len(Y), -1)])), "task 4 of y has no "
                                                                   "observed entry"),
    (lambda X, Y: (X, np.column_stack([Y, np.full(len(Y), np.nan)])), "NaN"),
    (lambda X, Y: (np.column_stack([X, np.full(len(X), np.nan)]), Y), "feature column"),
])
def test_bad_input_gives_clear_errors(mutate, match):
    X, Y = mutate(*_base())
    est = MatrixCompletionTransducer(lam=1.0, mu=1e-2)
    with pytest.raises(ValueError, match=match):
        est.fit(X, Y)


def test_item_with_nothing_observed_warns_and_gets_a_prediction():
    X, Y = _base()
    X[0] = np.nan
    Y[0] = -1
    with pytest.warns(UserWarning, match="no observed feature and no observed label"):
        est = MatrixCompletionTransducer(variant="mcb", lam=1.0, mu=1e-2).fit(X, Y)
    np.testing.assert_allclose(est.features_[0], 0.0, atol=1e-8)
    np.testing.assert_allclose(est.decision_scores_[0], est.bias_, atol=1e-8)


@pytest.mark.parametrize("params,match", [
    (dict(variant="mc2"), "variant"), (dict(lam=-1.0), "lam"), (dict(mu="auto"), "mu"),
    (dict(step_factor=4.5), "step_factor"), (dict(eta=1.0), "eta"),
])
def test_bad_parameters(params, match):
    X, Y = _base()
    with pytest.raises(ValueError, match=match):
        MatrixCompletionTransducer(**params).fit(X, Y)


def test_too_few_labels_for_cv():
    X, _ = _base()
    Y = np.full(X.shape[0], -1)
    Y[:2] = [0, 1]          # 2 observed labels for 5 folds
    with pytest.raises(ValueError, match="cross-validation"):
        MatrixCompletionTransducer(mu="cv").fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MatrixCompletionTransducer(mu=1e-2).fit(X, Y)


def test_get_params_roundtrip():
    est = MatrixCompletionTransducer(variant="mcb", lam="cv", random_state=1)
    assert est.get_params()["lam"] == "cv"
    assert MatrixCompletionTransducer(**est.get_params()).get_params() == est.get_params()


def test_bool_and_01_labels_are_negative_and_positive():
    """Issue #16 item 3: 0 / False is a negative label, never 'unobserved'."""
    X, Y = _base()
    full = (np.nan_to_num(X) @ np.ones(X.shape[1]) > 0)
    a = MatrixCompletionTransducer(lam=1.0, mu=1e-2).fit(X, full.astype(int))
    b = MatrixCompletionTransducer(lam=1.0, mu=1e-2).fit(X, full)
    np.testing.assert_array_equal(a.decision_scores_, b.decision_scores_)
    np.testing.assert_array_equal(a.classes_, [False, True] if a.classes_.dtype == bool
                                  else [0, 1])
    assert np.mean(a.transduction_ == full.astype(int)) > 0.9


def test_memory_is_refused_before_densifying_a_sparse_x(monkeypatch):
    """Issue #16 (memory list): a sparse 10^6 x 10^5 X was densified (745 GiB)."""
    X = sp.csr_matrix((np.ones(3), ([0, 1, 2], [0, 1, 2])), shape=(10 ** 6, 10 ** 5))
    y = np.full(10 ** 6, -1)
    y[:2] = [0, 1]
    with pytest.raises(MemoryError,
                       match="MatrixCompletionTransducer on a 1000000 x 100000 .*needs about"):
        MatrixCompletionTransducer(mu=1e-2).fit(X, y)


def test_one_class_task_warns_with_the_recoding():
    """Only positives observed in a task: -1 was probably meant as the negative class
    ({-1, +1} coding). Said in a warning (the paper's sparse protocols do produce such
    tasks), and the task is still learned."""
    X, Y = _base()
    with pytest.warns(UserWarning, match="recode"):
        est = MatrixCompletionTransducer(lam=1.0, mu=1e-2).fit(X, np.where(Y == 0, -1, Y))
    assert est.transduction_.shape == Y.shape
