"""PG (TV-E4, monotonicity, finite-difference gradients) and Frank-Wolfe (TV-E3, gap)."""

import itertools
import warnings

import numpy as np
import pytest

from semisup.clustering.frank_wolfe import (fw_feature_clustering, fw_sample_clustering,
                                            psi_features, psi_samples)
from semisup.clustering.problems import FeatureProblem, SampleProblem
from semisup.clustering.projected_gradient import (feature_projector, pg_feature_clustering,
                                                   pg_sample_clustering)
from semisup._validation import ConvergenceWarning

X = np.round(np.sin(np.arange(30) * 0.7 + 0.2).reshape(6, 5), 3)
Y = np.round(np.cos(np.arange(6) * 1.1), 3)
LAM = 0.1


def psi_dense(M):
    """psi(M) = (1/(2n)) y^T (I + X M X^T/(lam n))^{-1} y for any symmetric M (oracle)."""
    n = X.shape[0]
    return 0.5 * Y @ np.linalg.solve(np.eye(n) + X @ M @ X.T / (LAM * n), Y) / n


def equiv(labels):
    labels = np.asarray(labels)
    same = labels[:, None] == labels[None, :]
    return same / np.bincount(labels)[labels][None, :]


# ---------------------------------------------------------------- projected gradient
def test_tv_e4_first_step_and_full_run():
    P = FeatureProblem(X, Y[:, None], LAM, "squared", intercept=False, center=False)
    L = P.lipschitz()
    assert L == pytest.approx(1.913295231813, abs=1e-9)
    w0 = np.zeros((5, 1))
    z = w0 - P.gradient(w0) / L
    np.testing.assert_allclose(z[:, 0], [-0.045160307, 0.0121133074, 0.063946918,
                                         0.0854809705, 0.0668461047], atol=1e-9)
    w1 = feature_projector(2)(z).point
    np.testing.assert_allclose(w1[:, 0], [-0.0165234998] * 2 + [0.0720913311] * 3, atol=1e-9)
    assert P.objective(w0) == pytest.approx(0.260344666667, abs=1e-11)
    assert P.objective(w1) == pytest.approx(0.236066173856, abs=1e-11)
    res = pg_feature_clustering(P, 2, w0, tol=1e-12)
    assert res.n_iter == 15
    assert res.objective == pytest.approx(0.222054714354, abs=1e-11)


def test_pg_objective_monotone_under_backtracking():
    rng = np.random.default_rng(0)
    Xr = rng.standard_normal((40, 30))
    yr = Xr @ rng.choice([-2.0, 0.5, 3.0], size=30) + 0.3 * rng.standard_normal(40)
    for sparsity in (None, 12):
        P = FeatureProblem(Xr, yr[:, None], 1e-3, "squared", intercept=False)
        res = pg_feature_clustering(P, 3, np.zeros((30, 1)), sparsity=sparsity)
        assert np.all(np.diff(res.history) < 0)
        nz = res.W[res.W != 0]
        assert np.unique(nz).size <= 3
        if sparsity:
            assert nz.size <= sparsity


def test_pg_samples_monotone():
    rng = np.random.default_rng(1)
    Xs = rng.standard_normal((60, 4))
    ys = np.where(rng.random(60) < 0.5, Xs @ [1, 2, 0, 0], Xs @ [-2, 0, 1, 0])
    P = SampleProblem(Xs, ys[:, None], 1e-3, "squared")
    res = pg_sample_clustering(P, 2, np.zeros((60, 4, 1)), random_state=0)
    assert np.all(np.diff(res.history) < 0)
    assert np.unique(res.W.reshape(60, -1), axis=0).shape[0] <= 2


def _finite_difference(f, T, eps=1e-6):
    g = np.zeros_like(T)
    for idx in np.ndindex(T.shape):
        E = np.zeros_like(T)
        E[idx] = eps
        g[idx] = (f(T + E) - f(T - E)) / (2 * eps)
    return g


@pytest.mark.parametrize("K", [1, 3])
def test_logistic_feature_gradient_by_finite_differences(K):
    rng = np.random.default_rng(2)
    Xr = rng.standard_normal((25, 6))
    Yr = (rng.random((25, 1)) < 0.5).astype(float) if K == 1 else np.eye(K)[rng.integers(0, K, 25)]
    P = FeatureProblem(Xr, Yr, 0.05, "logistic", intercept=True)
    T = rng.standard_normal((7, K))
    np.testing.assert_allclose(P.gradient(T), _finite_difference(P.objective, T), atol=1e-7)


@pytest.mark.parametrize("loss, K", [("logistic", 1), ("logistic", 3), ("squared", 2)])
def test_sample_gradient_by_finite_differences(loss, K):
    rng = np.random.default_rng(3)
    Xs = rng.standard_normal((8, 3))
    Ys = (rng.random((8, 1)) < 0.5).astype(float) if K == 1 else np.eye(K)[rng.integers(0, K, 8)]
    P = SampleProblem(Xs, Ys, 0.1, loss)
    W = rng.standard_normal((8, 3, K))
    np.testing.assert_allclose(P.gradient(W), _finite_difference(P.objective, W), atol=1e-7)


# ---------------------------------------------------------------- Frank-Wolfe
def test_tv_e3_psi_oracle_and_first_step():
    assert psi_features(X, Y, [0, 0, 1, 1, 1], LAM) == pytest.approx(0.222054714354, abs=1e-11)
    assert psi_dense(equiv([0, 0, 1, 1, 1])) == pytest.approx(0.222054714354, abs=1e-11)
    with pytest.warns(ConvergenceWarning):
        r = fw_feature_clustering(X, Y, 2, LAM, labels0=[0, 0, 1, 1, 1], max_iter=2, tol=0,
                                  center=False)
    assert r.psi[0] == pytest.approx(0.222054714354, abs=1e-11)
    assert r.gaps[0] == pytest.approx(0.000130782982, abs=1e-12)
    assert r.psi[1] == pytest.approx(0.222287872838, abs=1e-11)  # M_1 = N_0 = {0} vs {1..4}
    assert r.psi[1] == pytest.approx(psi_dense(equiv([0, 1, 1, 1, 1])), abs=1e-12)


def test_tv_e3_full_run_and_rounding():
    r = fw_feature_clustering(X, Y, 2, LAM, labels0=[0, 0, 1, 1, 1], max_iter=5000,
                              tol=1e-12, center=False)
    assert r.converged and r.n_iter == 1824
    assert r.psi[-1] == pytest.approx(0.2220369615, abs=1e-10)
    assert tuple(r.labels) in {(0, 0, 1, 1, 1), (0, 1, 1, 1, 1)}


def test_fw_gap_certifies_suboptimality():
    # best partition by brute force; psi_hull_min <= psi_best so gap_t >= psi_t - psi_best
    best = min(psi_features(X, Y, lab, LAM) for lab in itertools.product(range(2), repeat=5)
               if len(set(lab)) > 0)
    assert best == pytest.approx(0.222054714354, abs=1e-11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = fw_feature_clustering(X, Y, 2, LAM, labels0=[0, 1, 0, 1, 0], max_iter=300,
                                  tol=0, center=False)
    psi, gap = np.array(r.psi), np.array(r.gaps)
    assert np.all(gap >= psi - 0.2220369615 - 1e-12)
    assert np.all(gap >= -1e-15)
    # gap = directional derivative of psi towards the oracle (finite differences, t = 0)
    M0, N0 = equiv([0, 1, 0, 1, 0]), equiv(np.asarray(r.atoms[1]) if len(r.atoms) > 1
                                            else r.atoms[0])
    eps = 1e-6
    slope = (psi_dense(M0 + eps * (N0 - M0)) - psi_dense(M0 - eps * (N0 - M0))) / (2 * eps)
    assert r.gaps[0] == pytest.approx(-slope, rel=1e-5)


def test_fw_line_search_is_monotone():
    rng = np.random.default_rng(4)
    Xr = rng.standard_normal((30, 20))
    yr = Xr @ rng.choice([-1.0, 2.0], size=20) + 0.1 * rng.standard_normal(30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = fw_feature_clustering(Xr, yr, 2, 1e-2, max_iter=100, line_search=True)
        rs = fw_sample_clustering(Xr[:, :3], yr, 2, 1e-2, max_iter=30, line_search=True,
                                  random_state=0)
    assert np.all(np.diff(r.psi) < 0)
    assert np.all(np.diff(rs.psi[1:]) < 0)


def test_sample_psi_equals_group_ridge_costs():
    labels = [0, 1, 0, 1, 1, 0]
    assert psi_samples(X, Y, labels, LAM) == pytest.approx(0.180498379211, abs=1e-11)
    # the Hadamard form of spec §5.2
    n = 6
    H = (X @ X.T) * equiv(labels)
    val = 0.5 * Y @ np.linalg.solve(np.eye(n) + H / (LAM * n), Y) / n
    assert val == pytest.approx(0.180498379211, abs=1e-11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = fw_sample_clustering(X, Y, 2, LAM, labels0=labels, max_iter=1, random_state=0)
    assert r.psi[0] == pytest.approx(0.180498379211, abs=1e-11)


def test_fw_best_rounding_is_the_best_visited_atom():
    # rounding="best" = argmin psi over M_0 and every oracle (brute force over the atoms)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = fw_feature_clustering(X, Y, 2, LAM, labels0=[0, 1, 0, 1, 0], max_iter=50, tol=0,
                                  center=False)
        last = fw_feature_clustering(X, Y, 2, LAM, labels0=[0, 1, 0, 1, 0], max_iter=50,
                                     tol=0, center=False, rounding="last")
    psis = [psi_features(X, Y, a, LAM) for a in r.atoms]
    assert psi_features(X, Y, r.labels, LAM) == pytest.approx(min(psis), abs=1e-14)
    assert psi_features(X, Y, r.labels, LAM) <= psi_features(X, Y, last.labels, LAM)
    assert psi_features(X, Y, r.labels, LAM) == pytest.approx(0.222054714354, abs=1e-11)


def test_fw_rounding_recovers_planted_partition_where_last_oracle_fails():
    # Table 2 setting in small (n = 60, d = 30, sigma = 0.5): the relaxed optimum is close
    # to the true M*, but the last oracle (k-means of u, dominated by residual noise) is not
    from semisup.clustering.baselines import oracle_features
    from semisup.datasets.clustering_synthetic import make_clustered_features
    b = make_clustered_features(60, 30, 5, 0.5, random_state=1)
    lam = 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        best = fw_feature_clustering(b.data, b.target, 5, lam, max_iter=100, center=False)
        last = fw_feature_clustering(b.data, b.target, 5, lam, max_iter=100, center=False,
                                     rounding="last")
    err = {k: np.linalg.norm(r.V[r.labels][:, 0] - b.coef) for k, r in
           [("best", best), ("last", last)]}
    oracle = np.linalg.norm(oracle_features(b.data, b.target, b.labels) - b.coef)
    psi_true = psi_features(b.data, b.target, b.labels, lam, center=False)
    assert psi_features(b.data, b.target, best.labels, lam) == pytest.approx(psi_true, rel=1e-10)
    assert err["best"] < 1.5 * oracle
    assert err["last"] > 10 * oracle


def test_fw_samples_best_rounding():
    rng = np.random.default_rng(5)
    Xs = rng.standard_normal((20, 2))
    ys = np.where(np.arange(20) < 10, Xs @ [1.0, -1.0], Xs @ [-2.0, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = fw_sample_clustering(Xs, ys, 2, 1e-3, max_iter=15, tol=0, random_state=0)
        last = fw_sample_clustering(Xs, ys, 2, 1e-3, max_iter=15, tol=0, random_state=0,
                                    rounding="last")
    best = min(psi_samples(Xs, ys, a, 1e-3) for a in [*r.atoms, last.labels])
    assert psi_samples(Xs, ys, r.labels, 1e-3) == pytest.approx(best, abs=1e-14)
    assert psi_samples(Xs, ys, r.labels, 1e-3) <= psi_samples(Xs, ys, last.labels, 1e-3)


def test_fw_bad_rounding():
    with pytest.raises(ValueError, match="rounding"):
        fw_feature_clustering(X, Y, 2, LAM, rounding="mean")
    with pytest.raises(ValueError, match="rounding"):
        fw_sample_clustering(X, Y, 2, LAM, rounding="mean")


def test_fw_bad_lambda():
    with pytest.raises(ValueError, match="'lam' parameter of fw_feature_clustering"):
        fw_feature_clustering(X, Y, 2, 0.0)
