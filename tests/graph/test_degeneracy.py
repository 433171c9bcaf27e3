"""The degeneracy warning: it fires on Laplace learning's flat solutions with one label per
class on a large graph, and stays quiet where Laplace learning works."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_moons

from semisup import HarmonicFunction, LaplacianAssignment, PoissonLearning
from semisup.graph.degeneracy import (FLATNESS_WARN, DegenerateSolutionWarning, flatness,
                                      warn_if_flat)


def _semi(y, per_class, seed=0):
    rng = np.random.default_rng(seed)
    ys = np.full(len(y), -1)
    for c in np.unique(y):
        ys[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return ys


def _cube(n=1000, d=5, seed=0):
    """Uniform points in [0, 1]^d split by x_0 = 1/2 (measured rho 0.008-0.016 with one
    label per class, d = 5; 0.04-0.05 with d = 3)."""
    X = np.random.default_rng(seed).random((n, d))
    y = (X[:, 0] > 0.5).astype(int)
    return X, y, _semi(y, 1, seed)


def test_flatness_of_spikes_on_a_constant_and_of_a_clean_split():
    n = 1000
    labeled = np.zeros(n, dtype=bool)
    labeled[:2] = True
    F = np.full((n, 2), 0.5) + 1e-3 * np.random.default_rng(0).normal(size=(n, 2))
    F[0], F[1] = (1, 0), (0, 1)
    assert flatness(F, labeled) < 0.01
    y = np.arange(n) % 2
    assert flatness(np.eye(2)[y], labeled) == pytest.approx(1.0)


@pytest.mark.parametrize("Est", [HarmonicFunction, LaplacianAssignment])
@pytest.mark.parametrize("seed", [0, 1])
def test_warns_on_a_flat_laplace_solution_naming_poisson_learning(Est, seed):
    X, _, ys = _cube(seed=seed)
    with pytest.warns(DegenerateSolutionWarning, match="PoissonLearning") as rec:
        Est().fit(X, ys)
    assert sum(issubclass(w.category, DegenerateSolutionWarning) for w in rec) == 1


def _quiet(est, X, ys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateSolutionWarning)
        return est.fit(X, ys)


@pytest.mark.parametrize("Est", [HarmonicFunction, LaplacianAssignment])
def test_quiet_on_digits_with_ten_labels_per_class(Est):
    X, y = load_digits(return_X_y=True)
    ys = _semi(y, 10)
    est = _quiet(Est(), X, ys)
    scores = est.label_distributions_ if Est is HarmonicFunction else est.assignments_
    assert flatness(scores, ys != -1) > 3 * FLATNESS_WARN      # measured 0.81


@pytest.mark.parametrize("per_class", [1, 5])
def test_quiet_on_two_moons(per_class):
    X, y = make_moons(1000, noise=0.1, random_state=0)
    ys = _semi(y, per_class)
    hf = _quiet(HarmonicFunction(), X, ys)
    assert flatness(hf.label_distributions_, ys != -1) > 3 * FLATNESS_WARN  # 0.71, 0.63


def test_no_check_on_small_graphs_and_none_for_poisson():
    X, _, ys = _cube(n=300)
    _quiet(HarmonicFunction(), X, ys)                 # fewer than MIN_UNLABELED points
    X, _, ys = _cube()
    _quiet(PoissonLearning(), X, ys)
    assert warn_if_flat(np.zeros((600, 2)), np.zeros(600, dtype=bool), "x") == np.inf
