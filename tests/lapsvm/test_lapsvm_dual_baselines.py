import numpy as np
import pytest

from semisup.lapsvm import dual_lapsvm, laplacian_operator, rlsc_fit, svm_fit

from lapsvm_problems import moons


def _l1_primal_cvxpy(K, L, y, gamma_A, gamma_I, power):
    cp = pytest.importorskip("cvxpy")
    n = K.shape[0]
    w, V = np.linalg.eigh(K)
    R = V * np.sqrt(np.clip(w, 0, None))
    Ld = laplacian_operator(L, power)(np.eye(n))
    lw, LV = np.linalg.eigh(0.5 * (Ld + Ld.T))
    S = (LV * np.sqrt(np.clip(lw, 0, None))).T
    a, b = cp.Variable(n), cp.Variable()
    lab = np.flatnonzero(y != 0)
    f = K @ a + b
    obj = (cp.sum(cp.pos(1 - cp.multiply(y[lab], f[lab]))) + gamma_A * cp.sum_squares(R.T @ a)
           + gamma_I * cp.sum_squares(S @ (K @ a)))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value, K @ a.value + b.value


def _l1_objective(K, L, y, alpha, b, gamma_A, gamma_I, power):
    f = K @ alpha + b
    Ka = K @ alpha
    lab = y != 0
    return (np.maximum(0, 1 - y[lab] * f[lab]).sum() + gamma_A * alpha @ Ka
            + gamma_I * Ka @ laplacian_operator(L, power)(Ka))


def test_dual_lapsvm_matches_direct_cvxpy_l1_solve():
    P = moons(8, n=70, kind="normalized")
    K, L, y = P["K"], P["L"], P["y"]
    ga, gi = 1e-2, 0.5
    ref_obj, ref_f = _l1_primal_cvxpy(K, L, y, ga, gi, 1)
    r = dual_lapsvm(K, L, y, gamma_A=ga, gamma_I=gi, tol=1e-10)
    ours = _l1_objective(K, L, y, r.alpha, r.b, ga, gi, 1)
    assert ours == pytest.approx(ref_obj, rel=1e-6)
    np.testing.assert_allclose(K @ r.alpha + r.b, ref_f, atol=1e-4)
    beta = r.info["beta"]
    assert np.all(beta >= -1e-12) and np.all(beta <= 1 + 1e-12)


def test_dual_lapsvm_multiclass_columns_share_factorisation():
    P = moons(8, n=70)
    y = P["y"]
    Y = np.stack([y, -y], axis=1)
    r = dual_lapsvm(P["K"], P["L"], Y, gamma_A=1e-2, gamma_I=0.5, tol=1e-10)
    r0 = dual_lapsvm(P["K"], P["L"], y, gamma_A=1e-2, gamma_I=0.5, tol=1e-10)
    f0 = P["K"] @ r0.alpha + r0.b
    np.testing.assert_allclose(P["K"] @ r.alpha[:, 0] + r.b[0], f0, atol=1e-8)
    # the problem is symmetric in the labels: the -y column gives -f
    np.testing.assert_allclose(P["K"] @ r.alpha[:, 1] + r.b[1], -f0, atol=1e-5)


def test_svm_baseline_matches_cvxpy_hinge():
    cp = pytest.importorskip("cvxpy")
    P = moons(10, n=60)
    lab = np.flatnonzero(P["y"] != 0)
    K, y = P["K"][np.ix_(lab, lab)], P["y"][lab]
    r = svm_fit(K, y, gamma_A=0.05, tol=1e-10)
    w, V = np.linalg.eigh(K)
    R = V * np.sqrt(np.clip(w, 0, None))
    a, b = cp.Variable(len(lab)), cp.Variable()
    prob = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, K @ a + b)))
                                  + 0.05 * cp.sum_squares(R.T @ a)))
    prob.solve(solver=cp.CLARABEL)
    ours = np.maximum(0, 1 - y * (K @ r.alpha + r.b)).sum() + 0.05 * r.alpha @ K @ r.alpha
    assert ours == pytest.approx(prob.value, rel=1e-6)


def test_rlsc_solves_kernel_ridge_system(rng):
    X = rng.normal(size=(12, 3))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    y = np.where(rng.random(12) > 0.5, 1.0, -1.0)
    r = rlsc_fit(K, y, gamma_A=0.3)
    np.testing.assert_allclose((K + 0.3 * np.eye(12)) @ r.alpha, y, atol=1e-10)
