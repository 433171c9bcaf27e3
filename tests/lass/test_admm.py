"""ADMM solver against cvxpy, limits, components, warm starts, bad input."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from semisup._validation import ConvergenceWarning
from semisup.graph import knn_graph, laplacian
from semisup.lass import closed_form_lam0, kkt_residual, objective, solve


def random_problem(rng, n=30, k=4, density=0.3):
    X = rng.normal(size=(n, 2))
    W = knn_graph(X, 5, weights="heat")
    G = rng.uniform(-1, 1, size=(n, k)) * (rng.random((n, k)) < density)
    return W, G


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("solver", ["direct", "cg"])
def test_admm_matches_cvxpy_on_small_problem(seed, solver, cvx_lass):
    rng = np.random.default_rng(seed)
    W, G = random_problem(rng)
    lam = [0.1, 1.0, 3.0][seed]
    L = laplacian(W)
    res = solve(L, G, lam, tol=1e-11, max_iter=50000, solver=solver)
    assert res.converged and res.solver == ("cg" if solver == "cg" else "dense-cholesky")
    Zc, muc, Xic, Fc = cvx_lass(W, G, lam)
    F = objective(res.Z, L, G, lam)
    assert F == pytest.approx(Fc, rel=1e-6, abs=1e-9)
    assert F <= Fc + 1e-8 * abs(Fc)          # cvxpy is the less accurate of the two
    assert np.abs(res.Z.sum(1) - 1).max() < 1e-8 and res.Z.min() >= 0
    # multipliers vs cvxpy's duals (interior point: ~1e-7 accurate)
    np.testing.assert_allclose(res.mu, muc, atol=1e-5)
    np.testing.assert_allclose(res.Xi, Xic, atol=1e-5)
    assert kkt_residual(res.Z, L, G, lam)["max"] < 1e-7


def test_kkt_residual_flags_a_non_optimal_point(tv1):
    W, G, lam, Zs, *_ = tv1
    L = laplacian(W)
    Zbad = Zs.copy()
    Zbad[2] = [0.5, 0.5, 0.0]
    assert kkt_residual(Zbad, L, G, lam)["max"] > 1e-2


def test_lam_zero_is_closed_form_argmax():
    G = np.array([[0.2, 0.5, -1], [0, 0, 0], [1, 1, 0]], float)
    W = sp.csr_matrix(np.ones((3, 3)) - np.eye(3))
    res = solve(laplacian(W), G, 0.0)
    assert res.n_iter == 0 and res.solver == "closed-form"
    np.testing.assert_allclose(res.Z, [[0, 1, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]])
    assert kkt_residual(res.Z, laplacian(W), G, 0.0)["max"] < 1e-15


def test_small_lam_limit_approaches_argmax(rng):
    W, G = random_problem(rng)
    G = rng.uniform(-1, 0.5, size=G.shape)
    G[np.arange(len(G)), rng.integers(0, G.shape[1], len(G))] = 1.0  # clear winner per row
    # rho* = 2 lam sqrt(mu2 muN) vanishes with lam and ADMM then crawls, so give rho.
    res = solve(laplacian(W), G, 1e-4, rho=1.0, tol=1e-8, max_iter=20000)
    np.testing.assert_array_equal(res.Z.argmax(1), G.argmax(1))
    np.testing.assert_allclose(res.Z, closed_form_lam0(G)[0], atol=1e-2)


def test_large_lam_limit_concentrates_on_largest_column_sum(rng):
    W, G = random_problem(rng)
    # rho* grows with lam and ADMM then moves slowly along 1 a^T (driven by G only).
    res = solve(laplacian(W), G, 300.0, rho=100.0, tol=1e-7, max_iter=20000)
    kstar = G.sum(0).argmax()
    np.testing.assert_allclose(res.Z[:, kstar], 1.0, atol=1e-2)
    assert np.ptp(res.Z, axis=0).max() < 1e-2       # all rows (nearly) equal


def test_rows_without_expert_information_are_neighbour_averages(rng):
    W, G = random_problem(rng, density=0.2)
    G[::3] = 0
    L = laplacian(W)
    res = solve(L, G, 1.0, tol=1e-12, max_iter=50000)
    empty = np.nonzero(~G.any(1))[0]
    avg = (W @ res.Z) / np.asarray(W.sum(1))
    np.testing.assert_allclose(res.Z[empty], avg[empty], atol=1e-9)
    np.testing.assert_allclose(res.mu[empty], 0, atol=1e-9)
    np.testing.assert_allclose(res.Xi[empty], 0, atol=1e-9)


def test_empty_category_with_nonnegative_affinities_gets_nothing(rng):
    # spec §4: with every other entry of G >= 0, a category with no positive affinity stays
    # exactly empty (the general claim is false and is deliberately not tested).
    W, G = random_problem(rng)
    G = np.abs(G)
    G[:, 2] = 0
    L = laplacian(W)
    res = solve(L, G, 1.0, tol=1e-11, max_iter=50000)
    assert np.abs(res.Z[:, 2]).max() < 1e-9
    assert kkt_residual(res.Z, L, G, 1.0)["max"] < 1e-7


def test_disconnected_graph_equals_separate_solves(rng, cvx_lass):
    W1, G1 = random_problem(rng, n=20)
    W2, G2 = random_problem(rng, n=15)
    W = sp.block_diag([W1, W2, sp.csr_matrix((1, 1))]).tocsr()
    G = np.vstack([G1, G2, [[0.3, -0.2, 0.9, 0.9]]])
    perm = rng.permutation(W.shape[0])
    Wp, Gp = W[perm][:, perm], G[perm]
    res = solve(laplacian(Wp), Gp, 0.7, tol=1e-12, max_iter=50000, solver="direct")
    assert res.n_components == 3
    assert len(np.unique(res.rho)) == 3   # one rho* per component (isolated item: 1)
    inv = np.argsort(perm)
    Z = res.Z[inv]
    for sl, Wc, Gc in [(slice(0, 20), W1, G1), (slice(20, 35), W2, G2)]:
        alone = solve(laplacian(Wc), Gc, 0.7, tol=1e-12, max_iter=50000)
        assert objective(Z[sl], laplacian(Wc), Gc, 0.7) == pytest.approx(
            objective(alone.Z, laplacian(Wc), Gc, 0.7), rel=1e-9)
    np.testing.assert_allclose(Z[35], [0, 0, 0.5, 0.5])   # isolated: closed form (tie)


def test_component_without_expert_information_warns():
    W = sp.block_diag([np.ones((3, 3)) - np.eye(3)] * 2).tocsr()
    G = np.zeros((6, 2))
    G[0, 0] = 1
    with pytest.warns(UserWarning, match="no expert information"):
        res = solve(laplacian(W), G, 1.0)
    np.testing.assert_allclose(res.Z[3:], 0.5, atol=1e-9)


def test_warm_start_from_previous_state_converges_at_once(rng):
    W, G = random_problem(rng, n=60)
    L = laplacian(W)
    cold = solve(L, G, 1.0, rho=0.5, tol=1e-8, max_iter=20000)
    warm = solve(L, G, 1.0, rho=0.5, tol=1e-8, max_iter=20000, Y0=cold.Y, U0=cold.U)
    assert warm.n_iter < 5 and cold.n_iter > 50
    np.testing.assert_allclose(warm.Z, cold.Z, atol=1e-7)
    near = solve(L, G, 1.1, rho=0.5, tol=1e-8, max_iter=20000, Y0=cold.Y, U0=cold.U)
    fresh = solve(L, G, 1.1, rho=0.5, tol=1e-8, max_iter=20000)
    assert near.n_iter < fresh.n_iter


def test_objective_history_tracks_the_iterates(rng):
    W, G = random_problem(rng)
    L = laplacian(W)
    for solver in ("direct", "cg"):
        res = solve(L, G, 1.0, tol=1e-10, max_iter=20000, solver=solver, project=False)
        assert res.history["objective"][-1] == pytest.approx(
            objective(res.Z_raw, L, G, 1.0), rel=1e-7)
        assert len(res.history["change"]) == res.n_iter


def test_check_every_and_paper_stopping_rule(tv1):
    W, G, lam, Zs, *_ = tv1
    res = solve(laplacian(W), G, lam, rho=1.0, check_every=10, tol=1e-10, max_iter=10000)
    assert res.n_iter % 10 == 0 and len(res.history["change"]) == res.n_iter // 10
    np.testing.assert_allclose(res.Z, Zs, atol=1e-8)


def test_non_convergence_warns_with_residuals(tv1):
    W, G, lam, *_ = tv1
    with pytest.warns(ConvergenceWarning, match=r"max\|Z - Zold\| = .*max\|Z - Y\| = "):
        res = solve(laplacian(W), G, lam, max_iter=3, solver="direct")
    assert not res.converged and res.n_iter == 3
    np.testing.assert_allclose(res.Z.sum(1), 1)     # still projected to feasibility


def test_cg_and_direct_agree_on_a_larger_knn_graph(rng):
    X = rng.normal(size=(600, 2))
    W = knn_graph(X, 8)
    G = np.zeros((600, 5))
    idx = rng.choice(600, 40, replace=False)
    G[idx, rng.integers(0, 5, 40)] = 1
    L = laplacian(W)
    a = solve(L, G, 0.5, tol=1e-8, max_iter=20000, solver="direct")
    b = solve(L, G, 0.5, tol=1e-8, max_iter=20000, solver="cg")
    assert a.solver == "splu" and b.solver == "cg"
    assert objective(b.Z, L, G, 0.5) == pytest.approx(objective(a.Z, L, G, 0.5), rel=1e-7)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lam=-1.0), "lam"),
    (dict(lam=np.nan), "lam"),
    (dict(rho=0.0), "rho"),
    (dict(rho=-2.0), "rho"),
    (dict(rho="fast"), "rho"),
    (dict(tol=0.0), "tol"),
    (dict(max_iter=0), "max_iter"),
    (dict(solver="qr"), "solver"),
])
def test_bad_parameters_raise(tv1, kwargs, match):
    W, G, *_ = tv1
    args = dict(lam=0.5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        solve(laplacian(W), G, **args)


def test_bad_arrays_raise(tv1):
    W, G, *_ = tv1
    L = laplacian(W)
    with pytest.raises(ValueError, match="shape"):
        solve(L, G[:4], 0.5)
    with pytest.raises(ValueError, match="shape"):
        solve(L, G[:, 0], 0.5)
    Gn = G.copy()
    Gn[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        solve(L, Gn, 0.5)
    Gi = G.copy()
    Gi[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        solve(L, Gi, 0.5)
    with pytest.raises(ValueError, match="off-diagonal"):
        solve(sp.csr_matrix(W), G, 0.5)    # an affinity is not a Laplacian
    A = L.toarray()
    A[0, 1] -= 0.3
    A[0, 0] += 0.3
    with pytest.raises(ValueError, match="symmetric"):
        solve(A, G, 0.5)
    with pytest.raises(ValueError, match="Y0"):
        solve(L, G, 0.5, Y0=np.zeros((3, 3)))


def test_memory_refusal_names_the_estimate(tv1, monkeypatch):
    W, G, *_ = tv1
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", "100")
    with pytest.raises(MemoryError, match="5 items x 3 categories needs about"):
        solve(laplacian(W), G, 0.5)


# -- issue #16: no false convergence, no overflow/underflow of the automatic rho ---------------
def test_inexact_cg_updates_do_not_fake_convergence():
    """Item 16: ADMM with loose early CG solves returned its start twice and claimed
    convergence after 2 iterations (objective -50.0 where APG reaches -51.8)."""
    from sklearn.datasets import make_classification
    X, y = make_classification(1500, 241, n_informative=20, random_state=0)
    L = laplacian(knn_graph(X, 10))
    r = np.random.default_rng(0).choice(1500, 100, replace=False)
    G = np.zeros((1500, 2))
    G[r, y[r]] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve(L, G, 1.0, solver="cg", max_iter=60)
    assert res.n_iter > 2
    assert objective(res.Z, L, G, 1.0) < -50.5


@pytest.mark.parametrize("scale_G, scale_W", [(1e300, 1.0), (1e-300, 1.0), (1.0, 1e-200),
                                              (1.0, 1e300)])
def test_extreme_scales_give_simplex_rows(scale_G, scale_W):
    """Items 2, 8, 12: G * 1e300, tiny or huge weights: finite rows on the simplex (the
    solver works on the problem scaled to max|G| ~ 1 and unit degrees), never NaN."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 5])
    G = np.zeros((40, 2))
    G[[0, 1], 0] = G[[20, 21], 1] = 1.0
    W = knn_graph(X, 5) * scale_W
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = solve(laplacian(W), G * scale_G, 0.1)
    assert np.isfinite(res.Z).all() and (res.Z >= 0).all()
    np.testing.assert_allclose(res.Z.sum(axis=1), 1.0, atol=1e-9)
    assert np.isfinite(res.mu).all() and np.isfinite(res.Xi).all()


def test_rho_floor_keeps_a_numerically_disconnected_graph_solvable():
    """Item 8: heat weights far below the point spacing made rho underflow and the
    factorisation fail ('leading minor not positive definite')."""
    W = sp.csr_matrix(np.array([[0, 1e-200], [1e-200, 0]]))
    res = solve(laplacian(W), np.array([[1.0, 0.0], [0.0, 0.0]]), 1e12, solver="direct")
    assert np.isfinite(res.Z).all()
    np.testing.assert_allclose(res.Z.sum(axis=1), 1.0)
