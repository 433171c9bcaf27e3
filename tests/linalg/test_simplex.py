"""Row-wise simplex projection against cvxpy and a brute-force KKT check."""

import numpy as np
import pytest

from semisup.linalg.simplex import project_simplex_rows


def _assert_kkt(v, x, tol=1e-12):
    """x = argmin ||x - v||^2 on the simplex iff x = max(v - tau, 0) for one scalar tau."""
    assert x.min() >= 0 and abs(x.sum() - 1) < tol
    support = x > 0
    tau = np.mean((v - x)[support])
    np.testing.assert_allclose((v - x)[support], tau, atol=tol)
    assert np.all(v[~support] <= tau + tol)


def test_kkt_conditions_on_random_rows(rng):
    V = rng.normal(size=(500, 7)) * rng.choice([0.1, 1, 10], size=(500, 1))
    X = project_simplex_rows(V)
    assert X.shape == V.shape
    for v, x in zip(V, X):
        _assert_kkt(v, x)


def test_matches_cvxpy(rng):
    cp = pytest.importorskip("cvxpy")
    V = rng.normal(size=(8, 5)) * 2
    X = project_simplex_rows(V)
    for v, x in zip(V, X):
        z = cp.Variable(5)
        cp.Problem(cp.Minimize(cp.sum_squares(z - v)), [z >= 0, cp.sum(z) == 1]).solve(
            solver=cp.CLARABEL)
        np.testing.assert_allclose(x, z.value, atol=1e-6)


def test_brute_force_over_supports(rng):
    # Enumerate every support set; the optimum is the best feasible candidate.
    from itertools import combinations
    V = rng.normal(size=(30, 4))
    for v, x in zip(V, project_simplex_rows(V)):
        best = None
        for r in range(1, 5):
            for S in combinations(range(4), r):
                S = list(S)
                z = np.zeros(4)
                z[S] = v[S] - (v[S].sum() - 1) / r
                if z.min() >= -1e-15:
                    d = np.sum((z - v) ** 2)
                    if best is None or d < best[0]:
                        best = (d, z)
        np.testing.assert_allclose(x, best[1], atol=1e-12)


def test_points_in_the_simplex_are_fixed_and_1d_input(rng):
    P = rng.dirichlet(np.ones(6), size=20)
    np.testing.assert_allclose(project_simplex_rows(P), P, atol=1e-14)
    v = np.array([0.3, 2.0, -1.0])
    np.testing.assert_allclose(project_simplex_rows(v), [0, 1, 0])
    np.testing.assert_allclose(project_simplex_rows(np.zeros(4)), 0.25)
    # Ties and shifts: projection is invariant to adding a constant to a row.
    V = rng.normal(size=(5, 3))
    np.testing.assert_allclose(project_simplex_rows(V + 100.0), project_simplex_rows(V),
                               atol=1e-12)
