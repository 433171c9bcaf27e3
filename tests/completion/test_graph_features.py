"""Spectral features of MatrixCompletionTransducer (``graph_features``)."""

import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_digits

from semisup.completion import MatrixCompletionTransducer
from semisup.completion.graph_features import DENSE_EIGEN_MAX, spectral_features
from semisup.graph import knn_graph


def _blobs(n_per=40, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0, 0.0], [6.0, 0.0, 0.0], [0.0, 6.0, 0.0], [0.0, 0.0, 6.0]])
    X = np.vstack([c + rng.normal(size=(n_per, 3)) for c in centres])
    return X, np.repeat(np.arange(4), n_per)


@pytest.mark.parametrize("n", [40, 150])      # dense (<= 64 points) and ARPACK paths
def test_spectral_features_match_a_dense_generalized_eigensolve(n):
    """Oracle: scipy.linalg.eigh(W, D) on the same (connected) graph, its largest
    eigenvalues after the trivial one (every eigenvector compared up to sign,
    D-orthonormality checked)."""
    X = np.random.default_rng(1).uniform(size=(n, 2))
    k = 3
    V = spectral_features(X, k)
    assert (n <= DENSE_EIGEN_MAX) == (n == 40)
    W = knn_graph(X, 10, weights="heat").toarray()
    D = np.diag(W.sum(axis=1))
    vals, U = la.eigh(W, D)
    ref = U[:, ::-1][:, 1:k + 1]
    assert np.all(np.diff(vals[::-1][:k + 2]) < -1e-6)    # distinct: vectors defined
    for j in range(k):
        s = np.sign(ref[:, j] @ V[:, j])
        np.testing.assert_allclose(V[:, j], s * ref[:, j], atol=1e-7)
    np.testing.assert_allclose(V.T @ D @ V, np.eye(k), atol=1e-8)
    np.testing.assert_allclose(V.T @ D @ np.ones(len(X)), 0.0, atol=1e-8)


def test_spectral_features_signs_and_errors():
    X, y = _blobs()
    V = spectral_features(X, 3)
    big = np.argmax(np.abs(V), axis=0)
    assert np.all(V[big, np.arange(3)] > 0)
    # four blobs: three eigenvectors separate them (cluster means far apart)
    means = np.array([V[y == c].mean(axis=0) for c in range(4)])
    assert np.min([np.linalg.norm(means[a] - means[b]) for a in range(4)
                   for b in range(a)]) > 0.5 * np.abs(V).max()
    with pytest.raises(ValueError, match="n_components"):
        spectral_features(X, len(X) - 1)
    with pytest.raises(ValueError, match="n_components"):
        spectral_features(X, 0)


def test_graph_features_help_where_the_features_are_not_linear():
    """Digits with 3 labels per class (issue #30: LabelSpreading 0.854): the completion
    on raw pixels reached 0.762 at best; with K - 1 = 9 spectral features (the default)
    0.869, with 10 0.877 (draw 0)."""
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    ys = np.full(len(y), -1)
    for c in range(10):
        ys[rng.choice(np.flatnonzero(y == c), 3, replace=False)] = c
    u = ys == -1
    est = MatrixCompletionTransducer(random_state=0).fit(X, ys)
    assert np.mean(est.transduction_[u] == y[u]) >= 0.86
    assert est.graph_features_.shape == (len(y), 9)
    assert est.features_.shape == X.shape            # the appended columns are not returned


def test_graph_features_are_deterministic():
    X, y = _blobs(20)
    ys = np.where(np.arange(len(y)) % 10 == 0, y, -1)
    a = MatrixCompletionTransducer(graph_features=4, random_state=3).fit(X, ys)
    b = MatrixCompletionTransducer(graph_features=4, random_state=3).fit(X, ys)
    np.testing.assert_array_equal(a.graph_features_, b.graph_features_)
    np.testing.assert_array_equal(a.decision_scores_, b.decision_scores_)


def test_graph_features_scale():
    """Each column has the same spread; the block's variance is graph_weight times that
    of d features of the median variance."""
    X, y = _blobs(20)
    X[:, 0] *= 100.0                                  # one feature of a much larger scale
    ys = np.where(np.arange(len(y)) % 10 == 0, y, -1)
    for w in (1.0, 0.25):
        est = MatrixCompletionTransducer(graph_features=4, graph_weight=w, mu=1e-2).fit(X, ys)
        var = est.graph_features_.var(axis=0)
        np.testing.assert_allclose(var, var[0])
        np.testing.assert_allclose(var.sum(), w * 3 * np.median(X.var(axis=0)))


def test_graph_features_with_missing_entries_use_mean_imputed_rows():
    X, y = _blobs(20)
    Xn = X.copy()
    Xn[5, 1] = np.nan
    Xn[30, 0] = np.nan
    ys = np.where(np.arange(len(y)) % 10 == 0, y, -1)
    est = MatrixCompletionTransducer(graph_features=4, mu=1e-2).fit(Xn, ys)
    Xi = np.where(np.isnan(Xn), np.nanmean(Xn, axis=0), Xn)
    G = spectral_features(Xi, 4, random_state=0)
    ref = G / G.std(axis=0)
    np.testing.assert_allclose(est.graph_features_ / est.graph_features_.std(axis=0), ref,
                               atol=1e-8)
    assert np.isfinite(est.features_).all()


def test_graph_features_sparse_x_matches_dense():
    X, y = _blobs(20)
    X[X < 0.5] = 0.0
    ys = np.where(np.arange(len(y)) % 10 == 0, y, -1)
    kw = dict(graph_features=4, mu=1e-2, random_state=0)
    dense = MatrixCompletionTransducer(**kw).fit(X, ys)
    sparse = MatrixCompletionTransducer(**kw).fit(sp.csr_matrix(X), ys)
    np.testing.assert_allclose(sparse.graph_features_, dense.graph_features_, atol=1e-10)
    np.testing.assert_allclose(sparse.decision_scores_, dense.decision_scores_, atol=1e-8)


@pytest.mark.parametrize("params, match", [
    (dict(graph_features=0), "graph_features"),
    (dict(graph_features=2.5), "graph_features"),
    (dict(graph_features="many"), "graph_features"),
    (dict(graph_features="Auto"), "graph_features"),
    (dict(graph_weight=0.0), "graph_weight"),
    (dict(graph_weight=-1.0), "graph_weight"),
])
def test_graph_features_parameter_validation(params, match):
    X, y = _blobs(20)
    ys = np.where(np.arange(len(y)) % 10 == 0, y, -1)
    with pytest.raises(ValueError, match=match):
        MatrixCompletionTransducer(mu=1e-2, **params).fit(X, ys)


def test_graph_features_are_capped_at_n_minus_2():
    X, y = _blobs(20)
    ys = np.where(np.arange(len(y)) % 10 == 0, y, -1)
    est = MatrixCompletionTransducer(graph_features=500, mu=1e-2).fit(X, ys)
    assert est.graph_features_.shape == (80, 78)
    tiny = MatrixCompletionTransducer(graph_features="auto", mu=1e-2).fit(X[:2], [0, 1])
    assert tiny.graph_features_ is None


def test_graph_features_auto_is_classes_minus_one_at_most_the_number_of_features():
    """``"auto"`` (the default): K - 1 columns for K classes, at most d (at a fixed mu, 10
    spectral columns beside 2 features diluted the feature loss to rank 1: scikit-learn's
    blobs check at mu=0.01, every item one class); none for an indicator target."""
    X, y = _blobs(20)
    ys = np.where(np.arange(len(y)) % 10 == 0, y, -1)
    auto = MatrixCompletionTransducer(mu=1e-2)
    assert auto.get_params()["graph_features"] == "auto"
    assert auto.fit(X, ys).graph_features_.shape == (80, 3)          # 4 classes
    assert auto.fit(np.hstack([X] * 5), ys).graph_features_.shape == (80, 3)
    assert auto.fit(X[:, :2], ys).graph_features_.shape == (80, 2)    # d = 2
    assert auto.fit(X, np.where(ys == 3, 1, ys)).graph_features_.shape == (80, 2)
    binary = np.where(ys >= 0, ys % 2, -1)
    assert auto.fit(X, binary).graph_features_.shape == (80, 1)
    indicator = np.where(ys[:, None] >= 0, (ys[:, None] == np.arange(4)).astype(int), -1)
    assert auto.fit(X, indicator).graph_features_ is None


def test_a_chosen_mu_that_cannot_separate_its_own_labels_falls_back():
    """Raw breast cancer, 3 labels per class, one spectral feature: a stage whose scores
    are all 0 won the six-label CV by chance (balanced error 0.3) and every item got one
    class (accuracy 0.629, draws 0-2). The fit now takes the labels-fitting fallback."""
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    ys = np.full(len(y), -1)
    for c in (0, 1):
        ys[rng.choice(np.flatnonzero(y == c), 3, replace=False)] = c
    est = MatrixCompletionTransducer(graph_features=1, random_state=0).fit(X, ys)
    assert est.cv_fallback_
    assert np.unique(est.transduction_[ys == -1]).size == 2
    assert np.array_equal(est.transduction_[ys != -1], ys[ys != -1])


def test_graph_features_off_leaves_the_completion_unchanged():
    X, y = _blobs(20)
    ys = np.where(np.arange(len(y)) % 10 == 0, y, -1)
    est = MatrixCompletionTransducer(graph_features=None, mu=1e-2).fit(X, ys)
    assert est.graph_features_ is None
    assert est.path_.Z.shape[0] == 4 + 3 + 1          # [Y; X; 1^T] of MC-1, 4 classes
    on = MatrixCompletionTransducer(graph_features=2, mu=1e-2).fit(X, ys)
    assert on.path_.Z.shape[0] == 4 + 3 + 2 + 1       # [Y; X; G; 1^T]
