"""Transductive cross-validation: the splitter, the target wrapper and the scorer."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_moons
from sklearn.model_selection import GridSearchCV, cross_val_score

from semisup import HarmonicFunction
from semisup.model_selection import TransductiveSplit, labeled_scorer, transductive_target


def _moons(n_labeled=10):
    X, y = make_moons(120, noise=0.08, random_state=0)
    y_train = np.full_like(y, -1)
    idx = np.random.default_rng(0).choice(120, n_labeled, replace=False)
    y_train[idx] = y[idx]
    return X, y, y_train


class _Spy(ClassifierMixin, BaseEstimator):
    """Records what each fit sees; predicts the majority labeled class."""

    seen = []

    def __init__(self, a=1):
        self.a = a

    def fit(self, X, y):
        y = np.asarray(y)
        _Spy.seen.append((X.shape[0], y.copy()))
        self.transduction_ = np.where(y == -1, 0, y)
        self.classes_ = np.unique(y[y != -1])
        return self

    def predict(self, X):
        return np.zeros(X.shape[0], dtype=int)


def test_every_fit_sees_every_point_and_no_held_out_label():
    X, _, y = _moons()
    cv = TransductiveSplit(n_splits=5, random_state=0)
    held_all = []
    _Spy.seen = []
    for train, test in cv.split(X, transductive_target(y)):
        assert np.array_equal(np.sort(np.where(train < 0, train + len(y), train)),
                              np.arange(len(y)))
        yt = transductive_target(y)[train]
        assert type(yt) is np.ndarray
        assert np.all(yt[test] == -1) and np.all(y[test] != -1)
        others = np.setdiff1d(np.flatnonzero(y != -1), test)
        np.testing.assert_array_equal(yt[others], y[others])
        held_all.append(test)
    # the folds partition the labeled points
    np.testing.assert_array_equal(np.sort(np.concatenate(held_all)), np.flatnonzero(y != -1))
    GridSearchCV(_Spy(), {"a": [1, 2]}, cv=cv, scoring=labeled_scorer()).fit(
        X, transductive_target(y))
    n_lab = (y != -1).sum()
    for n_seen, y_seen in _Spy.seen[:-1]:       # the CV fits; the last is the refit
        assert n_seen == len(y)
        assert (y_seen != -1).sum() == n_lab - n_lab // 5 or \
            (y_seen != -1).sum() == n_lab - (n_lab + 4) // 5
    assert (_Spy.seen[-1][1] != -1).sum() == n_lab      # the refit sees every label


def test_plain_y_is_refused():
    X, _, y = _moons()
    with pytest.raises(TypeError, match="transductive_target"):
        next(TransductiveSplit().split(X, y))


def test_scorer_ignores_unlabeled_and_reads_transduction():
    X, y_true, y = _moons()
    hf = HarmonicFunction(n_neighbors=8).fit(X, y)
    scorer = labeled_scorer()
    # plain y: -1 entries are ignored, predictions come from predict
    assert scorer(hf, X, y) == 1.0
    assert scorer(hf, X, y_true) == pytest.approx(np.mean(hf.predict(X) == y_true))
    # positions (a transductive test fold) read transduction_
    tgt = transductive_target(y_true)
    test = np.arange(0, 120, 7)
    assert scorer(hf, X[test], tgt[test]) == np.mean(hf.transduction_[test] == y_true[test])
    with pytest.raises(ValueError, match="metric"):
        labeled_scorer("nope")


def test_grid_search_beats_sklearn_default_scoring():
    X, y_true, y = _moons(n_labeled=12)
    search = GridSearchCV(HarmonicFunction(), {"n_neighbors": [3, 8]},
                          cv=TransductiveSplit(n_splits=3, random_state=0),
                          scoring=labeled_scorer()).fit(X, transductive_target(y))
    assert search.best_score_ > 0.8
    assert np.mean(search.best_estimator_.transduction_ == y_true) > 0.9
    # cross_val_score works the same way
    scores = cross_val_score(HarmonicFunction(), X, transductive_target(y),
                             cv=TransductiveSplit(n_splits=3, random_state=0),
                             scoring=labeled_scorer())
    assert scores.shape == (3,) and scores.min() > 0.5


def test_regression_targets_hide_as_nan():
    y = np.array([0.5, np.nan, -1.0, 2.25, 3.5, np.nan])
    tgt = transductive_target(y)
    train, test = next(TransductiveSplit(n_splits=2, random_state=0).split(None, tgt))
    yt = tgt[train]
    assert np.isnan(yt[test]).all()
    assert set(test) <= {0, 2, 3, 4}


def test_multilabel_rows_hidden():
    Y = np.array([[1, 0], [0, -1], [-1, -1], [1, 1], [0, 0], [1, -1]])
    tgt = transductive_target(Y)
    for train, test in TransductiveSplit(n_splits=2, random_state=0).split(None, tgt):
        Yt = tgt[train]
        assert np.all(Yt[test] == -1)
        assert 2 not in test


# ------------------------------------------------------------------------------------------
# through a Pipeline (issue #30 item 2)
def _registry_cases():
    import copy

    from semisup._registry import REGISTRY
    return [(m, lambda m=m: m.load()(**copy.deepcopy(m.check_params))) for m in REGISTRY]


def _standard_blobs(n=60, d=4, seed=0, regression=False):
    """Standardised data (a StandardScaler in front changes X by rounding only) with -1
    (NaN for a regression target) on all but 4 points per class."""
    rng = np.random.default_rng(seed)
    if regression:
        X = rng.normal(size=(n, d))
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        y = X @ np.repeat([1.0, -2.0], d // 2)
        y_semi = y.copy()
        y_semi[n // 2:] = np.nan
        return X, y_semi
    y_true = np.arange(n) % 2
    X = rng.normal(size=(2, d))[y_true] * 6 + rng.normal(size=(n, d))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = np.full(n, -1)
    for c in (0, 1):
        y[np.flatnonzero(y_true == c)[:4]] = c
    return X, y


CASES = _registry_cases()


@pytest.mark.parametrize("method, make", CASES, ids=[m.name for m, _ in CASES])
def test_grid_search_through_a_pipeline_scores_what_was_fitted(method, make):
    """GridSearchCV over Pipeline(StandardScaler(), est) gives finite scores, and on data
    that is already standardised the same scores and best_params_ as the bare estimator
    (was: NaN for every candidate of the transductive estimators, best_params_ the first;
    out-of-sample predictions in place of the transduction for the others)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _standard_blobs(regression=method.setting == "regression")
    if method.setting == "supervised":
        y = np.where(np.arange(len(y)) % 3 == 0, -1, np.arange(len(y)) % 2)
    if method.views:
        X = np.hstack([X, X[:, ::-1] * 2.0])
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    grid = method.check_grid
    cv = TransductiveSplit(n_splits=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        bare = GridSearchCV(make(), grid, cv=cv, scoring=labeled_scorer(),
                            error_score="raise").fit(X, transductive_target(y))
        piped = GridSearchCV(Pipeline([("scale", StandardScaler()), ("est", make())]),
                             {f"est__{k}": v for k, v in grid.items()}, cv=cv,
                             scoring=labeled_scorer()).fit(X, transductive_target(y))
    scores = piped.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)), scores
    np.testing.assert_allclose(scores, bare.cv_results_["mean_test_score"], atol=1e-6)
    assert {k[len("est__"):]: v for k, v in piped.best_params_.items()} == bare.best_params_


def test_scorer_reads_the_final_steps_transduction_through_a_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    class Transducer(_Spy):
        """transduction_ says 1 everywhere, predict 0: the scorer must read the first."""

        def fit(self, X, y):
            super().fit(X, y)
            self.transduction_ = np.ones(X.shape[0], dtype=int)
            return self

    X, y_true, y = _moons()
    tgt = transductive_target(y_true)
    train, test = next(TransductiveSplit(n_splits=3, random_state=0).split(X, tgt))
    pipe = make_pipeline(StandardScaler(), make_pipeline(Transducer())).fit(X[train],
                                                                            tgt[train])
    expected = np.mean(y_true[test] == 1)
    assert labeled_scorer()(pipe, X[test], tgt[test]) == expected
    # indexing the held-out target again keeps positions among all rows
    sub = tgt[test][np.arange(0, len(test), 2)]
    np.testing.assert_array_equal(sub.positions, test[::2])
    assert labeled_scorer()(pipe, X[test[::2]], sub) == np.mean(y_true[test[::2]] == 1)
    # without positions (a plain y) the pipeline predicts, through its transforms
    assert labeled_scorer()(pipe, X, y_true) == np.mean(y_true == 0)


def test_a_transductive_fit_without_the_held_out_points_raises_a_clear_error():
    from sklearn.model_selection import KFold

    from semisup import GraphKernelSVM
    X, _, y = _moons(n_labeled=20)
    search = GridSearchCV(GraphKernelSVM(), {"c": [0.1, 1.0]}, cv=KFold(3),
                          scoring=labeled_scorer(), error_score="raise")
    with pytest.raises(ValueError, match="TransductiveSplit"):
        search.fit(X, transductive_target(y))
