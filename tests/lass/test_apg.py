"""Accelerated projected gradient (solver="apg") against cvxpy and the ADMM solver."""

import numpy as np
import pytest

from semisup.graph import knn_graph, laplacian
from semisup.lass import LaplacianAssignment, kkt_residual, objective, solve
from semisup.lass.apg import fw_gap, lipschitz_constant, project_rows_michelot
from semisup.linalg.simplex import project_simplex_rows


def random_problem(rng, n=30, k=4, density=0.3):
    X = rng.normal(size=(n, 2))
    W = knn_graph(X, 5, weights="heat")
    G = rng.uniform(-1, 1, size=(n, k)) * (rng.random((n, k)) < density)
    return W, G


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_apg_matches_cvxpy_on_small_problem(seed, cvx_lass):
    rng = np.random.default_rng(seed)
    W, G = random_problem(rng)
    lam = [0.1, 1.0, 3.0][seed]
    L = laplacian(W)
    res = solve(L, G, lam, tol=1e-10, max_iter=100000, solver="apg")
    assert res.converged and res.solver == "apg"
    Zc, muc, Xic, Fc = cvx_lass(W, G, lam)
    F = objective(res.Z, L, G, lam)
    assert F == pytest.approx(Fc, rel=1e-6, abs=1e-9)
    assert np.abs(res.Z.sum(1) - 1).max() < 1e-12 and res.Z.min() >= 0
    # the certificate is an upper bound on the true gap, and the stopping rule holds
    assert res.history["gap"][-1] <= 1e-10 * abs(res.history["objective"][-1])
    assert F - Fc <= res.history["gap"][-1] + 1e-7 * abs(Fc)
    np.testing.assert_allclose(res.mu, muc, atol=1e-4)
    np.testing.assert_allclose(res.Xi, Xic, atol=1e-4)


def test_apg_agrees_with_admm_with_components_and_isolated_items(rng):
    # two clusters far apart (two components), one isolated item, any-sign G
    X = np.vstack([rng.normal(size=(40, 2)), rng.normal(size=(40, 2)) + 50])
    W = knn_graph(X, 6).tolil()
    W[5, :] = 0
    W[:, 5] = 0
    W = W.tocsr()
    W.eliminate_zeros()
    G = rng.uniform(-1, 1, size=(80, 3)) * (rng.random((80, 3)) < 0.2)
    G[5] = [0.0, 0.7, 0.1]
    L = laplacian(W)
    a = solve(L, G, 0.7, tol=1e-11, max_iter=50000, solver="direct")
    b = solve(L, G, 0.7, tol=1e-11, max_iter=100000, solver="apg")
    assert b.converged and b.solver == "apg"
    np.testing.assert_allclose(b.Z[5], [0, 1, 0])
    Fa, Fb = objective(a.Z, L, G, 0.7), objective(b.Z, L, G, 0.7)
    assert Fb == pytest.approx(Fa, rel=1e-9)
    np.testing.assert_allclose(b.Z, a.Z, atol=1e-4)
    assert kkt_residual(b.Z, L, G, 0.7)["max"] < 1e-4


def test_apg_reproduces_spec_vector_tv1(tv1):
    W, G, lam, Zs, mu, Xi = tv1
    res = solve(laplacian(W), G, lam, tol=1e-13, max_iter=100000, solver="apg")
    np.testing.assert_allclose(res.Z, Zs, atol=1e-6)
    np.testing.assert_allclose(res.mu, mu, atol=1e-5)
    np.testing.assert_allclose(res.Xi, Xi, atol=1e-5)


def test_apg_warm_start_from_its_solution_stops_at_once(rng):
    W, G = random_problem(rng, n=60)
    L = laplacian(W)
    a = solve(L, G, 1.0, tol=1e-8, max_iter=100000, solver="apg")
    b = solve(L, G, 1.0, tol=1e-8, max_iter=100000, solver="apg", Y0=a.Y, U0=a.U)
    assert b.n_iter == 1 and b.converged


def test_apg_nonconvergence_warns_with_the_gap(rng):
    from semisup._validation import ConvergenceWarning
    W, G = random_problem(rng, n=60)
    with pytest.warns(ConvergenceWarning, match="certified objective gap"):
        res = solve(laplacian(W), G, 1.0, tol=1e-12, max_iter=3, solver="apg")
    assert not res.converged and res.n_iter == 3


def test_estimator_auto_uses_apg_for_large_graphs(monkeypatch, rng):
    import semisup.lass.admm as admm
    monkeypatch.setattr(admm, "APG_MIN_N", 50)
    X = rng.normal(size=(80, 2))
    G = np.zeros((80, 2))
    G[np.argmin(X[:, 0]), 0] = G[np.argmax(X[:, 0]), 1] = 1
    m = LaplacianAssignment(lam=0.5, tol=1e-8).fit(X, G)
    assert m.solver_ == "apg" and m.converged_
    ref = LaplacianAssignment(lam=0.5, tol=1e-11, solver="direct", max_iter=50000).fit(X, G)
    assert m.objective_ == pytest.approx(ref.objective_, rel=1e-7)


def test_michelot_projection_equals_sort_projection(rng):
    V = np.vstack([rng.normal(size=(200, 7)) * s for s in (0.01, 1, 100)])
    V[0] = 0.0
    V[1] = [5, 5, 5, 5, -1, -1, -1]
    np.testing.assert_allclose(project_rows_michelot(V), project_simplex_rows(V), atol=1e-14)


def test_lipschitz_constant_bounds_the_hessian(rng):
    W, _ = random_problem(rng, n=50)
    L = laplacian(W)
    lmax = np.linalg.eigvalsh(L.toarray())[-1]
    lip = lipschitz_constant(L, 0.3)
    assert 2 * 0.3 * lmax <= lip <= 4 * 0.3 * L.diagonal().max() + 1e-12


def test_fw_gap_bounds_the_objective_gap(rng, cvx_lass):
    W, G = random_problem(rng, n=30)
    L = laplacian(W)
    Zc, *_, Fc = cvx_lass(W, G, 1.0)
    Z = project_simplex_rows(rng.random((30, 4)))
    gap = fw_gap(Z, 2 * (L @ Z) - G)
    assert objective(Z, L, G, 1.0) - Fc <= gap + 1e-9
