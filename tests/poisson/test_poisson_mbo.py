"""PoissonMBO: the volume constraint, the gain over PoissonLearning, GraphLearning's peer."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from semisup.poisson import PoissonLearning, PoissonMBO, volume_projection


def _blobs(seed, n=1500, std=3.0, K=4):
    X, y = make_blobs(n, centers=K, cluster_std=std, n_features=6, random_state=seed)
    rng = np.random.default_rng(seed)
    ys = np.full_like(y, -1)
    for c in range(K):
        ys[rng.choice(np.flatnonzero(y == c))] = c
    return X, y, ys


def test_volume_projection_meets_the_class_fractions():
    rng = np.random.default_rng(0)
    S = rng.random((5000, 4)) ** 3           # skewed scores: the plain argmax is unbalanced
    S[:, 0] *= 2.0
    S /= S.max()
    priors = np.array([0.1, 0.2, 0.3, 0.4])
    labels, w, err, it = volume_projection(S, priors, tol=1e-3)
    frac = np.bincount(labels, minlength=4) / 5000
    assert np.abs(frac - priors).max() == err <= 1e-3
    assert it > 0 and w[0] == 1.0
    np.testing.assert_array_equal(labels, np.argmax(S * w, axis=1))
    assert np.abs(np.bincount(np.argmax(S, 1), minlength=4) / 5000 - priors).max() > 0.1


def test_volume_projection_two_classes_is_the_ratio_sort():
    # oracle: with two classes, class 1 takes exactly the nodes of largest S_i1 / S_i0
    rng = np.random.default_rng(1)
    S = rng.random((2001, 2))
    for b1 in (0.1, 0.37, 0.8):
        labels, w, err, _ = volume_projection(S, [1 - b1, b1], tol=0.0)
        m = int(np.rint(b1 * 2001))
        expected = np.zeros(2001, dtype=int)
        expected[np.argsort(S[:, 1] / S[:, 0])[-m:]] = 1
        np.testing.assert_array_equal(labels, expected)
        assert err <= 1 / 2001


def _fixed_step_projection(S, priors, tol):
    """GraphLearning's iteration w <- w - 0.1 (f(w) - b), written out (the oracle)."""
    n, K = S.shape
    w = np.ones(K)
    for _ in range(100_000):
        labels = np.argmax(S * w, axis=1)
        grad = np.bincount(labels, minlength=K) / n - priors
        if np.abs(grad).max() <= tol:
            return labels
        w = w - 0.1 * grad
        w /= w[0]
    raise AssertionError("the fixed-step oracle did not converge")


def test_volume_projection_agrees_with_the_fixed_step_iteration():
    # both reach the unique class weights of the constraint (up to the tolerance): the
    # labels differ only at the few nodes within tol of a boundary
    rng = np.random.default_rng(2)
    S = rng.random((4000, 5)) ** 2
    S[:, 2] *= 1.5
    S /= S.max()
    priors = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
    ref = _fixed_step_projection(S, priors, 1e-3)
    labels, w, err, sweeps = volume_projection(S, priors, tol=1e-3)
    assert err <= 1e-3 and sweeps <= 20
    assert np.mean(labels != ref) < 0.01
    # warm-started from its own weights it stops at once
    again = volume_projection(S, priors, w, tol=1e-3)
    assert again[3] == 0
    np.testing.assert_array_equal(again[0], labels)


@pytest.mark.parametrize("priors", ["uniform", [0.4, 0.3, 0.2, 0.1]])
def test_mbo_labels_meet_the_volume_constraint(priors):
    X, y, ys = _blobs(0, n=1000)
    mbo = PoissonMBO(weights="self_tuning", class_priors=priors).fit(X, ys)
    frac = np.bincount(np.argmax(mbo.scores_, 1), minlength=4) / len(y)
    assert np.abs(frac - mbo.class_priors_).max() <= mbo.volume_tol
    assert mbo.volume_error_ <= mbo.volume_tol
    np.testing.assert_allclose(mbo.class_priors_, [0.25] * 4 if priors == "uniform"
                               else priors)


def test_mbo_beats_poisson_learning_at_one_label_per_class():
    """Overlapping blobs, one label per class: measured Poisson 0.955 / 0.939 / 0.957,
    Poisson-MBO 0.971 / 0.973 / 0.971 on the unlabelled points."""
    gains = []
    for seed in range(3):
        X, y, ys = _blobs(seed)
        u = ys == -1
        pl = PoissonLearning(weights="self_tuning").fit(X, ys)
        mbo = PoissonMBO(weights="self_tuning", class_priors="uniform").fit(X, ys)
        gains.append(np.mean(mbo.transduction_[u] == y[u]) -
                     np.mean(pl.transduction_[u] == y[u]))
    assert min(gains) >= 0 and np.mean(gains) > 0.01, gains


def test_new_points_follow_the_training_decision():
    X, y, ys = _blobs(1, n=600)
    mbo = PoissonMBO(weights="self_tuning").fit(X, ys)
    rng = np.random.default_rng(0)
    X_new = X + 1e-3 * rng.normal(size=X.shape)
    assert np.mean(mbo.predict(X_new) == mbo.transduction_) > 0.97
    assert mbo.decision_function(X_new).shape == (600, 4)


@pytest.mark.slow
def test_matches_graphlearning_poisson_mbo_accuracy():
    gl = pytest.importorskip("graphlearning")
    accs = []
    for seed in range(3):
        X, y, ys = _blobs(seed, n=2000)
        W = gl.weightmatrix.knn(X, 10).tocsr()
        tr = np.flatnonzero(ys != -1)
        u = ys == -1
        priors = gl.utils.class_priors(y)
        ref = gl.ssl.poisson_mbo(W, priors).fit_predict(tr, y[tr])
        ours = PoissonMBO(affinity="precomputed", class_priors=priors).fit(W, ys)
        accs.append((np.mean(ours.transduction_[u] == y[u]), np.mean(ref[u] == y[u])))
    ours, ref = np.mean(accs, axis=0)
    assert ours >= ref - 0.01, accs
