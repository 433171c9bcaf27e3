"""Defaults that work: every public estimator at its default parameters on standard easy
problems (issue "the user's path is the validated path").

Each semi-supervised estimator, fitted with only a few labels per class, must beat chance
clearly and come within reach of ``HarmonicFunction`` on the same data (its default kNN
graph): accuracy on the unlabeled points at least ``chance + 0.15`` and at least
``chance + 0.6 (harmonic - chance)``. Supervised estimators (the clustered ones) are scored
on held-out points against the same bar with scikit-learn's ``LogisticRegression`` /
``Ridge`` in place of the harmonic function. SPORE is held to the same bar and to the issue's
figures (0.8 on two moons, 0.85 on breast cancer, three labelled draws each). Slow: run with
``--runslow``.

Against the labelled points alone and LabelSpreading (#30 item 5): each estimator at its
defaults (``random_state`` = the draw's seed) beside ``LogisticRegression`` trained on the
labelled points and scikit-learn's ``LabelSpreading(kernel="knn")``; mean accuracy on the
unlabelled points over label draws 0-2 (``semisup.experiments.defaults.compare_cell``,
``semisup bench defaults --only baselines``). Where an estimator loses to the better
reference by more than 0.01 (measured 2026-11-26; LR = LogisticRegression, LS =
LabelSpreading; std = standardised):

=============  ====  ===  =====  =====  ===================================================
data           X     l/c  LR     LS     loses (its accuracy)
=============  ====  ===  =====  =====  ===================================================
moons          std   1    0.733  0.581  SPORE 0.602
moons          std   3    0.844  0.823  none (MC lost at 0.617 before its lam=0.01 and
                                        constant-prediction fallback; 0.842 since)
moons          raw   1    0.622  0.575  none (MC lost at 0.500 before; 0.678 since)
moons          raw   3    0.827  0.849  none (MC lost at 0.834 before its K - 1 spectral
                                        features; 0.980 since)
wine           std   1    0.785  0.724  Harmonic 0.707, LASS 0.707, Poisson 0.764, PoissonMBO
                                        0.709, SPORE 0.770 (GraphKernelSVM 0.823, MC 0.825,
                                        LapSVM and LapRLS 0.810 win; MC 0.756 before its
                                        spectral features, LapSVM/LapRLS 0.766 at gamma_I=1)
wine           std   3    0.901  0.864  Harmonic 0.850, LASS 0.850, Poisson 0.888, LapSVM
                                        0.895, LapRLS 0.895 (0.864 at gamma_I=1), SPORE
                                        0.876 (MC 0.955, 0.860 before its spectral features)
wine           raw   1    0.543  0.402  none (PoissonMBO lost at 0.501 before its exact
                                        volume projection; 0.598 since)
wine           raw   3    0.834  0.686  every estimator: 0.70 to 0.78 (MC)
breast cancer  std   1    0.853  0.645  Harmonic 0.737, LASS 0.737, LapSVM 0.768, LapRLS
                                        0.768, SPORE 0.756, MC 0.831
breast cancer  std   3    0.912  0.870  Harmonic 0.806, LASS 0.807, PoissonMBO 0.851,
                                        LapSVM 0.866, LapRLS 0.866, SPORE 0.835,
                                        GraphKernelSVM 0.902, MC 0.845
breast cancer  raw   1    0.818  0.423  Harmonic 0.777, LASS 0.777, Poisson 0.785, LapSVM
                                        0.771, LapRLS 0.771, SPORE 0.554, GraphKernelSVM
                                        0.779, MC 0.564
breast cancer  raw   3    0.895  0.550  Poisson 0.840, PoissonMBO 0.838, LapSVM 0.864,
                                        LapRLS 0.864, SPORE 0.671, GraphKernelSVM 0.884,
                                        MC 0.718
digits (600)   any   1, 3               none (MC lost at 0.56-0.83 before its spectral
                                        features; 0.75-0.91 since, LS 0.68-0.91)
=============  ====  ===  =====  =====  ===================================================

LabelSpreading at its defaults never beats LogisticRegression here except on moons raw 3
and digits; the losses are to the labelled points alone (MC: measured 2026-11-26 after its
spectral features became the default, ``graph_features="auto"``, and LapSVM / LapRLS
after their ``gamma_I`` default went from 1 to 0.1). The moons and wine cells are
checked below (cheap); breast cancer and digits (SPORE's one-vs-rest takes ~90 s CPU per
digits cell) only by the benchmark.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.preprocessing import StandardScaler

from semisup import (SPORE, ClusteredClassifier, ClusteredRegressor, HarmonicFunction,
                     MultiGraphSPORE)
from semisup._registry import REGISTRY

pytestmark = pytest.mark.slow


def _problem(name):
    if name == "moons":
        X, y = make_moons(300, noise=0.1, random_state=0)
    elif name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
        X = StandardScaler().fit_transform(X)
    elif name == "digits":
        X, y = load_digits(return_X_y=True)
        X, y = X[:600], y[:600]
    elif name == "digits_3v8":
        X, y = load_digits(return_X_y=True)
        keep = np.isin(y, (3, 8))
        X, y = X[keep], y[keep]
    elif name == "iris":
        X, y = load_iris(return_X_y=True)
    return X, y


PER_CLASS = {"moons": 5, "breast_cancer": 10, "digits": 5, "digits_3v8": 5, "iris": 3}


def _semi(y, per_class, seed=0):
    rng = np.random.default_rng(seed)
    ys = np.full(len(y), -1)
    for c in np.unique(y):
        ys[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return ys


def _bar(ref, chance):
    return max(chance + 0.15, chance + 0.6 * (ref - chance))


#: the estimators held to the harmonic function's bar, on the registry's easy problems
SEMI = [(m.load(), m.easy_problems) for m in REGISTRY if m.easy_problems]
#: the estimators with a test of their own below (tests/test_registry.py checks that every
#: registry entry is in SEMI or here)
DEDICATED = {"SPORE", "MultiGraphSPORE", "ClusteredClassifier", "ClusteredRegressor"}


@pytest.mark.parametrize("Est, data", [(E, d) for E, ds in SEMI for d in ds],
                         ids=[f"{E.__name__}-{d}" for E, ds in SEMI for d in ds])
def test_semi_supervised_defaults_work(Est, data):
    X, y = _problem(data)
    ys = _semi(y, PER_CLASS[data])
    u = ys == -1
    chance = np.bincount(y[u]).max() / u.sum()
    ref = np.mean(HarmonicFunction().fit(X, ys).transduction_[u] == y[u])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)     # defaults must not stop short
        est = Est().fit(X, ys)
    acc = np.mean(est.transduction_[u] == y[u])
    assert acc >= _bar(ref, chance), (acc, ref, chance)


#: the issue's bar for SPORE at its defaults (accuracy on the unlabelled points)
SPORE_TARGET = {"moons": 0.8, "breast_cancer": 0.85}


@pytest.mark.parametrize("data", ["moons", "breast_cancer"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spore_defaults_work(data, seed):
    """SPORE() on the kNN graph: G^4 and its start kernel, the distance step and 20 inner
    steps (before them: 0.35-0.65 on moons, 0.30-0.40 on breast cancer, below chance)."""
    X, y = _problem(data)
    ys = _semi(y, PER_CLASS[data], seed)
    u = ys == -1
    chance = np.bincount(y[u]).max() / u.sum()
    ref = np.mean(HarmonicFunction().fit(X, ys).transduction_[u] == y[u])
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no far-from-labels or convergence warning
        est = SPORE(random_state=0).fit(X, ys)
    acc = np.mean(est.transduction_[u] == y[u])
    assert acc >= max(SPORE_TARGET[data], _bar(ref, chance)), (acc, ref, chance)


def test_spore_defaults_work_on_more_than_two_classes():
    """#30 item 3: SPORE() on iris (three classes) through its own one-vs-rest, held to the
    harmonic function's bar (it refused more than two classes before)."""
    X, y = _problem("iris")
    ys = _semi(y, PER_CLASS["iris"])
    u = ys == -1
    chance = np.bincount(y[u]).max() / u.sum()
    ref = np.mean(HarmonicFunction().fit(X, ys).transduction_[u] == y[u])
    est = SPORE(random_state=0).fit(X, ys)
    assert est.decision_scores_.shape == (len(y), 3)
    assert np.mean(est.transduction_[u] == y[u]) >= _bar(ref, chance)


def test_spore_warns_when_its_predictions_rest_on_little():
    """On the plain 10-NN graph (hops=1) most unlabelled vertices have no labelled
    neighbour: the estimator says so, and the warning is not a blanket one."""
    from semisup.spore.estimator import FAR_FROM_LABELS_WARN
    X, y = _problem("breast_cancer")
    ys = _semi(y, PER_CLASS["breast_cancer"])
    with pytest.warns(UserWarning, match="no labeled neighbour"):
        est = SPORE(hops=1, random_state=0).fit(X, ys)
    assert est.far_from_labels_ > FAR_FROM_LABELS_WARN


def test_multigraph_spore_defaults_work():
    X, y = _problem("moons")
    ys = _semi(y, PER_CLASS["moons"])
    u = ys == -1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = MultiGraphSPORE(random_state=0).fit([X, X[:, ::-1]], ys)
    assert np.mean(est.transduction_[u] == y[u]) >= 0.8


@pytest.mark.parametrize("data", ["breast_cancer", "digits", "iris"])
def test_clustered_classifier_defaults_work(data):
    X, y = _problem(data)
    rng = np.random.default_rng(0)
    test = rng.random(len(y)) < 0.3
    ref = LogisticRegression(max_iter=2000).fit(X[~test], y[~test]).score(X[test], y[test])
    chance = np.bincount(y[test]).max() / test.sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        acc = ClusteredClassifier().fit(X[~test], y[~test]).score(X[test], y[test])
    assert acc >= _bar(ref, chance), (acc, ref, chance)


def test_clustered_regressor_defaults_work():
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
    rng = np.random.default_rng(0)
    test = rng.random(len(y)) < 0.3
    ref = Ridge().fit(X[~test], y[~test]).score(X[test], y[test])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        r2 = ClusteredRegressor().fit(X[~test], y[~test]).score(X[test], y[test])
    assert r2 >= 0.6 * ref, (r2, ref)


# --------------------------------------------------------------------------------------------
# Against the labelled points alone and scikit-learn's LabelSpreading (#30 item 5)
# --------------------------------------------------------------------------------------------
from functools import lru_cache  # noqa: E402

from semisup.experiments import defaults as bench  # noqa: E402

#: the cells this test measures: the cheap data sets, one binary and one multi-class (breast
#: cancer and digits are in ``semisup bench defaults --only baselines`` and the table above)
BASELINE_DATA = ("moons", "wine")
#: a recorded loss must stay below ``reference - LOSS_MARGIN + SLACK`` and a recorded
#: non-loss at or above ``reference - LOSS_MARGIN - SLACK`` (rounding, BLAS: 1 point of 175
#: in 3 draws is 0.002)
SLACK = 0.005

#: where an estimator at its defaults loses to the better reference (its mean accuracy on the
#: unlabelled points over seeds 0-2, that reference's), measured 2026-11-26 with
#: ``semisup.experiments.defaults.compare_cell``; a cell not listed beats both or ties
KNOWN_LOSSES = {
    ("moons", "standardised", 1): {
        "SPORE": (0.602, 0.733),
    },
    ("wine", "standardised", 1): {
        "HarmonicFunction": (0.707, 0.785),
        "LaplacianAssignment": (0.707, 0.785),
        "PoissonLearning": (0.764, 0.785),
        "PoissonMBO": (0.709, 0.785),
        "SPORE": (0.770, 0.785),
    },
    ("wine", "standardised", 3): {
        "HarmonicFunction": (0.850, 0.901),
        "LapRLS": (0.895, 0.901),
        "LapSVM": (0.895, 0.901),
        "LaplacianAssignment": (0.850, 0.901),
        "PoissonLearning": (0.888, 0.901),
        "SPORE": (0.876, 0.901),
    },
    ("wine", "raw", 3): {
        "GraphKernelSVM": (0.706, 0.834),
        "HarmonicFunction": (0.706, 0.834),
        "LapRLS": (0.759, 0.834),
        "LapSVM": (0.751, 0.834),
        "LaplacianAssignment": (0.706, 0.834),
        "MatrixCompletionTransducer": (0.775, 0.834),
        "PoissonLearning": (0.722, 0.834),
        "PoissonMBO": (0.706, 0.834),
        "SPORE": (0.708, 0.834),
    },
}

BASELINE_CELLS = [(d, s, k) for d in BASELINE_DATA for s in bench.SCALINGS
                  for k in bench.BASELINE_PER_CLASS]


@lru_cache(maxsize=None)
def _baseline_cell(data, scaling, per_class):
    return bench.compare_cell(data, scaling, per_class, draws=bench.BASELINE_DRAWS)


@pytest.mark.parametrize("data, scaling, per_class", BASELINE_CELLS,
                         ids=[f"{d}-{s}-{k}" for d, s, k in BASELINE_CELLS])
def test_defaults_against_labelled_points_and_label_spreading(data, scaling, per_class):
    """Every semi-supervised estimator at its defaults beside LogisticRegression on the
    labelled points and LabelSpreading(kernel="knn"): the estimators that lose are the ones
    recorded in KNOWN_LOSSES, no more (a new loss is a regression) and no fewer (a default
    that improved: update the record, and the table in the module docstring)."""
    cell = _baseline_cell(data, scaling, per_class)
    assert set(cell) == set(bench.BASELINES) | set(bench.COMPARED)
    failed = {n: a for n, a in cell.items() if isinstance(a, str) and a.startswith("fit")}
    assert not failed, failed
    ref = max(np.mean(cell[b]) for b in bench.BASELINES)
    recorded = KNOWN_LOSSES.get((data, scaling, per_class), {})
    assert set(recorded) <= set(bench.COMPARED)
    wrong = {}
    for name in bench.COMPARED:
        acc = cell[name]
        if isinstance(acc, str):      # not applicable (e.g. dense iterates too large)
            continue
        m = float(np.mean(acc))
        if name in recorded and not m < ref - bench.LOSS_MARGIN + SLACK:
            wrong[name] = f"recorded as a loss ({recorded[name]}), now {m:.3f} vs {ref:.3f}"
        if name not in recorded and not m >= ref - bench.LOSS_MARGIN - SLACK:
            wrong[name] = f"new loss: {m:.3f} vs the better reference {ref:.3f}"
    assert not wrong, wrong
    # the record's own check: losses() agrees with the table, up to the slack
    assert set(bench.losses(cell)) ^ set(recorded) <= {
        n for n in bench.COMPARED if not isinstance(cell[n], str)
        and abs(float(np.mean(cell[n])) - (ref - bench.LOSS_MARGIN)) <= SLACK}


def test_baseline_references_are_what_the_table_says():
    """The two references on a small cell against direct scikit-learn calls (an
    independent computation of the same numbers)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.semi_supervised import LabelSpreading
    X, y = bench.baseline_problem("wine", "standardised")
    ys = bench.draw_labels(y, 3, 0)
    u = ys == -1
    assert np.array_equal(np.bincount(y[~u]), [3, 3, 3])
    lr = LogisticRegression(max_iter=5000).fit(X[~u], y[~u]).score(X[u], y[u])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ls = np.mean(LabelSpreading(kernel="knn").fit(X, ys).transduction_[u] == y[u])
    cell = bench.compare_cell("wine", "standardised", 3, draws=1, estimators=())
    assert cell["LogisticRegression"] == [pytest.approx(lr)]
    assert cell["LabelSpreading"] == [pytest.approx(ls)]
