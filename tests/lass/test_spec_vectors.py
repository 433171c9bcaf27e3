"""The spec's test vectors TV-LASS-1 ... TV-LASS-5 (shared/methods/lass.md §12)."""

import numpy as np
import pytest

from semisup.graph import laplacian
from semisup.lass import (auto_rho, kkt_residual, lass_multipliers, lass_transform,
                          objective, solve)
from semisup.linalg.simplex import project_simplex_rows

from lass_oracles import path_graph, tv2_problem


def test_tv1_exact_solution_objective_and_multipliers(tv1):
    W, G, lam, Zs, mu, Xi = tv1
    L = laplacian(W)
    res = solve(L, G, lam, rho=1.0, tol=1e-14, max_iter=20000)
    assert res.converged
    np.testing.assert_allclose(res.Z, Zs, atol=1e-10)
    assert objective(res.Z, L, G, lam) == pytest.approx(-5641 / 3600, rel=1e-12)
    np.testing.assert_allclose(res.mu, mu, atol=1e-10)
    np.testing.assert_allclose(res.Xi, Xi, atol=1e-10)
    # ADMM's own estimates: mu = -nu, Xi = -rho U (spec §3.2).
    np.testing.assert_allclose(-res.nu, mu, atol=1e-9)
    np.testing.assert_allclose(-res.rho[:, None] * res.U, Xi, atol=1e-9)
    # the closed form also gives the exact multipliers when fed Z* itself
    mu2, Xi2 = lass_multipliers(Zs, L, G, lam)
    np.testing.assert_allclose(mu2, mu, atol=1e-14)
    np.testing.assert_allclose(Xi2, Xi, atol=1e-14)
    assert kkt_residual(Zs, L, G, lam)["max"] < 1e-14


def test_tv1_first_iterate_and_rho_star(tv1):
    W, G, lam, *_ = tv1
    L = laplacian(W)
    with pytest.warns(Warning):
        res = solve(L, G, lam, rho=1.0, max_iter=1, project=False)
    first = np.array([[0.7400560224, 0.1703081232, 0.0896358543],
                      [0.4801120448, 0.3406162465, 0.1792717087],
                      [0.4235294118, 0.4294117647, 0.1470588235],
                      [0.3338935574, 0.3364145658, 0.3296918768],
                      [0.1557422969, 0.1565826331, 0.68767507]])
    np.testing.assert_allclose(res.Z_raw, first, atol=1e-9)
    np.testing.assert_allclose(auto_rho(L, lam), 1.3967653888738532, rtol=1e-10)


@pytest.mark.parametrize("stopping, max_err", [("two-part", 2e-5), ("change", 2e-4)])
def test_tv1_default_stopping_distance(tv1, stopping, max_err):
    W, G, lam, Zs, *_ = tv1
    res = solve(laplacian(W), G, lam, rho=1.0, stopping=stopping, project=False)
    assert res.converged
    assert np.abs(res.Z_raw - Zs).max() < max_err
    if stopping == "two-part":  # spec: stops at iteration 64 (+-1), 8.9e-6 from Z*
        assert abs(res.n_iter - 64) <= 2


def test_tv1_out_of_sample(tv1):
    *_, Zs, _, _ = tv1
    z = lass_transform(Zs, np.array([[0, 1, 0, 0.5, 0], [0, 1, 0, 0.5, 0]]),
                       np.array([[0.2, 0, 0.4], [0, 0, 0]]), lam=0.5)
    np.testing.assert_allclose(z, [[0.6777777778, 0.0777777778, 0.2444444444],
                                   [0.6777777778, 0.2111111111, 0.1111111111]], atol=1e-9)


def test_tv2_dense_gaussian_graph(tv2):
    X, W, G = tv2
    assert X.sum() == pytest.approx(2.0576939204903155, rel=1e-14)
    assert W.sum() == pytest.approx(696.5951043562713, rel=1e-12)
    L = laplacian(W)
    np.testing.assert_allclose(auto_rho(L, 0.2), 4.009600964568945, rtol=1e-10)
    res = solve(L, G, 0.2, rho="auto", tol=1e-14, max_iter=20000)
    assert res.converged
    Z = res.Z
    assert objective(Z, L, G, 0.2) == pytest.approx(-3.1296905568680162, rel=1e-9)
    assert (Z ** 2).sum() == pytest.approx(21.72923463055423, rel=1e-7)
    np.testing.assert_allclose(Z.sum(0), [0.9084751494, 1.2280959979, 27.8306889059,
                                          8.8992679391, 1.1334720078], atol=1e-7)
    np.testing.assert_allclose(Z[0], [0.1390312083, 0, 0.6598310009, 0.2011377908, 0],
                               atol=1e-7)
    np.testing.assert_allclose(Z[10], [0, 0.0285210289, 0.6992951346, 0.2364195041,
                                       0.0357643324], atol=1e-7)
    np.testing.assert_allclose(Z[12], [0, 0.0051887318, 0.7310490626, 0.2549690508,
                                       0.0087931549], atol=1e-7)
    np.testing.assert_allclose(Z[39], [0.0235743255, 0.0269763312, 0.6869774851,
                                       0.2312657666, 0.0312060915], atol=1e-7)
    np.testing.assert_allclose(res.mu[[0, 10, 39]], [-0.21778687242870381,
                                                     0.04336201315649477, 0], atol=1e-8)


def test_tv2_default_stopping_is_close_not_exact(tv2):
    # spec pitfall 2: reaching tol is not accuracy tol; the spec measured 4.2e-5 after
    # projection with rho = 1 and the default tol.
    _, W, G = tv2
    L = laplacian(W)
    ref = solve(L, G, 0.2, rho="auto", tol=1e-14, max_iter=20000).Z
    res = solve(L, G, 0.2, rho=1.0)
    assert res.converged
    assert 1e-6 < np.abs(res.Z - ref).max() < 2e-4


@pytest.mark.parametrize("v, expected", [
    ([0.5, 0.8, -0.2, 0.1], [0.35, 0.65, 0, 0]),
    ([0.2, 0.2, 0.2], [1 / 3, 1 / 3, 1 / 3]),
    ([3, -1, 0], [1, 0, 0]),
    ([-1, -1, -2], [0.5, 0.5, 0]),
    ([0.1, 0.6, 0.3], [0.1, 0.6, 0.3]),
])
def test_tv3_simplex_projection(v, expected):
    np.testing.assert_allclose(project_simplex_rows(np.array(v, float)), expected, atol=1e-15)


def test_tv3_out_of_sample_literals():
    Z = np.array([[1, 0, 0], [0.5, 0.5, 0], [0, 0.2, 0.8]])
    Wq = np.array([[1, 1, 2], [1, 1, 2], [1, 0, 1]], float)
    Gq = np.array([[0, 0, 0], [0, 0, 4], [-1, 0.5, 0]], float)
    z = lass_transform(Z, Wq, Gq, lam=np.array([1, 1, 0.25]))
    np.testing.assert_allclose(z, [[0.375, 0.225, 0.4],
                                   [0.2083333333, 0.0583333333, 0.7333333333],
                                   [0, 0.6, 0.4]], atol=1e-9)


def test_tv4_lass_with_clamped_labels_equals_harmonic():
    W = path_graph([1, 1, 2, 1, 1])
    L = laplacian(W)
    Zu = np.array([[7, 2], [5, 4], [4, 5], [2, 7]]) / 9
    c = 8 / 9 + 1
    G = np.zeros((6, 2))
    G[0, 0] = G[5, 1] = c
    res = solve(L, G, 1.0, tol=1e-14, max_iter=50000)
    np.testing.assert_allclose(res.Z[1:5], Zu, atol=1e-12)
    assert objective(res.Z, L, G, 1.0) == pytest.approx(-10 / 3, rel=1e-12)
    # below the threshold c0 = 8/9 the labelled rows are no longer clamped
    res_low = solve(L, G * 0.5 * (8 / 9) / c, 1.0, tol=1e-12, max_iter=50000)
    assert np.abs(res_low.Z[1:5] - Zu).max() > 1e-2


def test_tv4_harmonic_baseline_agrees():
    harmonic = pytest.importorskip("semisup.baselines.harmonic")
    import scipy.sparse as sp
    W = sp.csr_matrix(path_graph([1, 1, 2, 1, 1]))
    y = np.array([0, -1, -1, -1, -1, 1])
    model = harmonic.HarmonicFunction(affinity="precomputed").fit(W, y)
    G = np.zeros((6, 2))
    G[0, 0] = G[5, 1] = 8 / 9 + 1
    res = solve(laplacian(W), G, 1.0, tol=1e-14, max_iter=50000)
    np.testing.assert_allclose(res.Z, model.label_distributions_, atol=1e-12)


def test_tv5_nonunique_objective_and_structure(cvx_lass):
    _, W, G = tv2_problem(0.5)
    L = laplacian(W)
    res = solve(L, G, 0.2, rho="auto", tol=1e-14, max_iter=20000)
    F = objective(res.Z, L, G, 0.2)
    assert F == pytest.approx(-3.157149723552074, rel=1e-9)
    Zc, _, _, Fc = cvx_lass(W, G, 0.2)
    assert Fc == pytest.approx(-3.157149723552074, rel=1e-7)
    # any two solutions differ by 1 a^T with a = (0, 0, d, -d, 0)
    diff = Zc - res.Z
    a = diff.mean(axis=0)
    np.testing.assert_allclose(diff, np.broadcast_to(a, diff.shape), atol=1e-6)
    np.testing.assert_allclose(a[[0, 1, 4]], 0, atol=1e-6)
    assert a[2] == pytest.approx(-a[3], abs=1e-6)
