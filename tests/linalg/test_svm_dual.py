import sys
from pathlib import Path

import numpy as np
import pytest

from semisup.linalg.svm_dual import solve_box_qp, svm_dual, svm_scores

# the shared SPORE graphs live in tests/; works in every pytest import mode
sys.path.insert(0, str(Path(__file__).parents[1]))
from spore_graphs import EDGES, S, Y, adjacency  # noqa: E402


@pytest.mark.parametrize("C, omega, alpha, yhat", [
    (1.0, 1.706730769231, [0.625, 0.625, 0.625, 0.7692307692, 0.7692307692],
     [1, 1, 1, 0.375, -0.4615384615, -1, -1, -0.2740384615]),
    (0.3, 1.167, [0.3] * 5, [0.48, 0.48, 0.48, 0.18, -0.18, -0.39, -0.39, -0.09]),
])
def test_spec_vector_tv_d1(C, omega, alpha, yhat):
    K = np.eye(8) + 0.3 * adjacency(EDGES)
    res = svm_dual(K, Y, S, C)
    assert res.converged
    assert res.value == pytest.approx(omega, abs=1e-10)
    np.testing.assert_allclose(res.alpha, alpha, atol=1e-9)
    np.testing.assert_allclose(svm_scores(K, Y, S, res.alpha), yhat, atol=1e-9)


def _cvxpy_box_qp(G, C):
    cp = pytest.importorskip("cvxpy")
    m = G.shape[0]
    a = cp.Variable(m)
    w, V = np.linalg.eigh(G)
    R = (V * np.sqrt(np.maximum(w, 0))).T
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(R @ a)),
                      [a >= 0, a <= C])
    prob.solve(solver="CLARABEL")
    return prob.value, a.value


@pytest.mark.parametrize("rank", [40, 25, 3])
@pytest.mark.parametrize("C", [0.05, 1.0, 50.0])
def test_box_qp_matches_cvxpy_including_singular(rng, rank, C):
    B = rng.standard_normal((40, rank))
    G = B @ B.T / rank
    a, value, _, ok = solve_box_qp(G, C)
    ref_value, ref_a = _cvxpy_box_qp(G, C)
    assert ok
    assert value == pytest.approx(ref_value, rel=1e-6, abs=1e-7)
    assert np.all(a >= 0) and np.all(a <= C)
    # KKT: free coordinates have zero gradient, bound ones point outward
    grad = 1.0 - G @ a
    free = (a > 1e-9) & (a < C - 1e-9)
    assert np.all(np.abs(grad[free]) < 1e-8)
    assert np.all(grad[a <= 1e-9] <= 1e-8)
    assert np.all(grad[a >= C - 1e-9] >= -1e-8)
    if rank == 40:
        np.testing.assert_allclose(a, ref_a, atol=1e-5)


def test_warm_start_gives_the_same_answer(rng):
    B = rng.standard_normal((30, 30))
    G = B @ B.T / 30
    a, v, _, _ = solve_box_qp(G, 1.0)
    a2, v2, it, _ = solve_box_qp(G, 1.0, alpha0=a)
    assert v2 == pytest.approx(v, abs=1e-12)
    assert it == 0


def test_zero_kernel_puts_alpha_at_the_bound():
    res = svm_dual(np.zeros((3, 3)), np.array([1.0, -1.0, 1.0]), np.arange(3), 0.7)
    np.testing.assert_allclose(res.alpha, 0.7)
    assert res.value == pytest.approx(2.1)


def test_coordinate_ascent_fallback_agrees(rng):
    from semisup.linalg.svm_dual import _coordinate_ascent
    B = rng.standard_normal((15, 6))
    G = B @ B.T / 6
    a_ref, v_ref, _, _ = solve_box_qp(G, 2.0)
    a, Ga, ok = _coordinate_ascent(G, 2.0, np.zeros(15), 1e-10, max_sweeps=20000)
    assert ok
    assert a.sum() - 0.5 * a @ Ga == pytest.approx(v_ref, abs=1e-9)


def test_badly_scaled_kernel_converges(rng):
    # Laplacian-kernel blocks with c = 0.01 have entries ~ 100; C = 100
    B = rng.standard_normal((30, 30))
    G = 100 * (B @ B.T / 30) + 100 * np.ones((30, 30))
    a, value, _, ok = solve_box_qp(G, 100.0)
    ref_value, _ = _cvxpy_box_qp(G, 100.0)
    assert ok
    assert value == pytest.approx(ref_value, rel=1e-6)
