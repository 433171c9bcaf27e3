"""Baselines (OSCAR prox vs cvxpy, RC, IHT, LSK) and the clustered multi-task penalty (TV-E5)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

from semisup.clustering.baselines import (iht, lasso, least_squares, lsk, oscar,
                                          oscar_penalty, prox_oscar, regression_clustering)
from semisup.clustering.multitask import multitask_penalty, pg_clustered_multitask


def test_oscar_penalty_matches_pairwise_definition():
    rng = np.random.default_rng(0)
    w = rng.standard_normal(7)
    pair = sum(max(abs(w[i]), abs(w[j])) for i in range(7) for j in range(i + 1, 7))
    assert oscar_penalty(w, 0.3, 0.7) == pytest.approx(0.3 * np.abs(w).sum() + 0.7 * pair)


def test_prox_oscar_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(1)
    v = np.round(rng.standard_normal(8), 1)
    t, l1, l2 = 0.7, 0.2, 0.15
    x = cp.Variable(8)
    pairs = [cp.maximum(cp.abs(x[i]), cp.abs(x[j])) for i in range(8) for j in range(i + 1, 8)]
    obj = 0.5 * cp.sum_squares(x - v) + t * (l1 * cp.norm1(x) + l2 * sum(pairs))
    cp.Problem(cp.Minimize(obj)).solve()
    np.testing.assert_allclose(prox_oscar(v, t, l1, l2), x.value, atol=1e-5)


def test_oscar_fista_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(2)
    X = rng.standard_normal((30, 6))
    y = X @ np.array([2.0, 2.0, -1.0, 0.0, 0.0, -1.0]) + 0.1 * rng.standard_normal(30)
    l1, l2 = 0.05, 0.02
    w = oscar(X, y, l1, l2, tol=1e-12, max_iter=20000)
    x = cp.Variable(6)
    pairs = [cp.maximum(cp.abs(x[i]), cp.abs(x[j])) for i in range(6) for j in range(i + 1, 6)]
    cp.Problem(cp.Minimize(cp.sum_squares(X @ x - y) / 60 + l1 * cp.norm1(x)
                           + l2 * sum(pairs))).solve()
    np.testing.assert_allclose(w, x.value, atol=1e-4)


def test_least_squares_ridge_both_shapes():
    rng = np.random.default_rng(3)
    for n, d in [(20, 5), (5, 20)]:
        X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
        w = least_squares(X, y, 0.1)
        np.testing.assert_allclose(X.T @ (X @ w - y) / n + 0.1 * w, 0, atol=1e-10)
    w = least_squares(X, y)  # n < d, lam = 0: minimum-norm interpolant
    np.testing.assert_allclose(w, np.linalg.pinv(X) @ y, atol=1e-10)


def test_lsk_uses_centres():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((100, 10))
    y = X @ np.repeat([1.0, -1.0], 5)
    w, labels = lsk(X, y, 2)
    np.testing.assert_allclose(w, np.repeat([1.0, -1.0], 5), atol=1e-10)


def test_iht_is_k_sparse_and_fits():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((60, 20))
    w_true = np.zeros(20)
    w_true[[1, 5, 9]] = [3.0, -2.0, 1.5]
    y = X @ w_true
    w = iht(X, y, 3)
    assert np.count_nonzero(w) <= 3
    np.testing.assert_allclose(w, w_true, atol=1e-4)


def test_regression_clustering_recovers_experts():
    rng = np.random.default_rng(6)
    truth = rng.integers(0, 2, 200)
    V = np.array([[2.0, -1.0], [-1.5, 1.5]])
    X = rng.standard_normal((200, 2))
    y = np.einsum("ij,ij->i", X, V[truth]) + 0.01 * rng.standard_normal(200)
    res = regression_clustering(X, y, 2, random_state=0)
    assert adjusted_rand_score(truth, res.labels) > 0.95


def test_multitask_penalty_tv_e5_both_forms():
    W = np.round(np.sin(np.arange(12) * 0.9).reshape(3, 4), 3)
    V = np.round(np.cos(np.arange(6) * 0.5).reshape(3, 2), 3)
    labels = np.array([0, 1, 0, 1])
    om = multitask_penalty(W, V, labels, 0.5, 1.0, 2.0)
    assert om == pytest.approx(11.9473095, abs=1e-7)
    # trace form of spec §2.4
    K = 4
    Wt = V[:, labels]
    P = np.eye(K) - 1.0 / K
    trace = (0.25 * np.trace(Wt @ (np.eye(K) - P) @ Wt.T) + 0.5 * np.trace(Wt @ P @ Wt.T)
             + 1.0 * np.sum((W - Wt) ** 2))
    assert trace == pytest.approx(om, abs=1e-10)


def test_multitask_pg_groups_tasks():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((80, 5))
    base = rng.standard_normal((5, 2)) * 3
    task_groups = np.array([0, 0, 1, 1, 0, 1])
    W = base[:, task_groups] + 0.01 * rng.standard_normal((5, 6))
    Y = X @ W + 0.01 * rng.standard_normal((80, 6))
    res = pg_clustered_multitask(X, Y, 2, 1e-4, 1e-3, 1e-3, 1.0, random_state=0)
    assert adjusted_rand_score(task_groups, res.labels) == 1.0
    assert np.all(np.diff(res.history) < 0)
    with pytest.raises(ValueError, match="exceeds"):
        pg_clustered_multitask(X, Y, 7, 1e-4, 0, 0, 1.0)


@pytest.mark.parametrize("shape", [(40, 30), (600, 520), (530, 700)])
def test_spectral_norm_sq_dense_and_lanczos(shape):
    from semisup.clustering.problems import CenteredDesign
    from semisup.linalg.lowrank import spectral_norm_sq
    X = np.random.default_rng(1).standard_normal(shape) + 0.5
    # ARPACK above a smaller side of 500, a dense SVD below; both must match the SVD
    assert spectral_norm_sq(X) == pytest.approx(np.linalg.norm(X, 2) ** 2, rel=1e-9)
    assert spectral_norm_sq(sp.csr_matrix(X)) == pytest.approx(np.linalg.norm(X, 2) ** 2,
                                                               rel=1e-9)
    # the implicitly centred design, without forming X - mean
    Xc = X - X.mean(axis=0)
    assert CenteredDesign(sp.csr_matrix(X)).spectral_norm_sq() == pytest.approx(
        np.linalg.norm(Xc, 2) ** 2, rel=1e-9)


def test_oscar_and_iht_accept_an_implicitly_centred_sparse_design():
    from semisup.clustering.problems import CenteredDesign
    X = sp.random(60, 40, density=0.2, random_state=0, format="csr")
    y = np.random.default_rng(0).standard_normal(60)
    A = CenteredDesign(X)
    Xc, op = X.toarray() - A.mean, A.operator()
    np.testing.assert_allclose(oscar(op, y, 1e-3, 1e-4, max_iter=300),
                               oscar(Xc, y, 1e-3, 1e-4, max_iter=300), rtol=1e-9, atol=1e-12)
    w0 = least_squares(Xc, y, 1e-3)
    np.testing.assert_allclose(iht(op, y, 10, 1e-3, w0=w0), iht(Xc, y, 10, 1e-3),
                               rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="w0"):
        iht(op, y, 10, 1e-3)


@pytest.mark.parametrize("shape", [(30, 50), (50, 30)])  # sparse Gram route (n < d) and dense
def test_least_squares_centred_sparse_equals_dense_centred(shape):
    X = sp.random(*shape, density=0.3, random_state=1, format="csr")
    y = np.random.default_rng(1).standard_normal(shape[0])
    Xc = X.toarray() - X.toarray().mean(axis=0)
    np.testing.assert_allclose(least_squares(X, y, 1e-2, center=True),
                               least_squares(Xc, y, 1e-2), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lsk(X, y, 3, 1e-2, center=True)[0], lsk(Xc, y, 3, 1e-2)[0],
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("sparse", [True, False])
def test_centred_lasso_matches_cvxpy(sparse):
    # the sparse route lets scikit-learn centre implicitly; both must solve the centred problem
    cp = pytest.importorskip("cvxpy")
    X = sp.random(40, 60, density=0.3, random_state=2, format="csr")
    y = np.random.default_rng(2).standard_normal(40) + 3.0  # not centred: w is the same
    Xc = X.toarray() - X.toarray().mean(axis=0)
    alpha = 0.05 * np.abs(Xc.T @ (y - y.mean())).max() / 40
    w = cp.Variable(60)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(Xc @ w - y) / 80 + alpha * cp.norm1(w)))
    problem.solve()
    got = lasso(X if sparse else X.toarray(), y, alpha, center=True)
    assert 0 < np.count_nonzero(got) < 60  # the l1 term is active
    # n < d: a flat valley, so compare objectives (coordinate descent stops at tol = 1e-4)
    value = np.sum((Xc @ got - y) ** 2) / 80 + alpha * np.abs(got).sum()
    assert value == pytest.approx(problem.value, rel=1e-6)
    assert value < np.sum(y ** 2) / 80 - 1e-2  # well below w = 0
