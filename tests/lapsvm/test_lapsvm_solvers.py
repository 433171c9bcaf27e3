import warnings

import numpy as np
import pytest

from semisup.lapsvm import (exact_line_search, laplacian_operator, laprls_closed_form, newton,
                            objective, pcg)
from semisup.lapsvm.stopping import StabilityCheck

from lapsvm_problems import moons, tv1, tv3

TV1_ALPHA_BIAS = [2.5576824517, -3.3616635545, 5.9131396305, -4.5289205347, 1.2300579918,
                  -1.0525314951, -0.7577644897]
TV1_F = [0.9866402659, 1.1088111701, 0.8948157188, 0.2202914189, -0.9071249345,
         -0.9827848335, -0.9915462168]


def _kw(P, **extra):
    return dict(gamma_A=P["gamma_A"], gamma_I=P["gamma_I"], power=P["power"], **extra)


def _obj(P, res, use_bias, hinge=True):
    return objective(P["K"], laplacian_operator(P["L"], P["power"]), P["y"], res.alpha,
                     res.b if use_bias else None, gamma_A=P["gamma_A"], gamma_I=P["gamma_I"],
                     hinge=hinge)


# -- line search ---------------------------------------------------------------------------
def _line_terms(P, z, d):
    K, L = P["K"], P["L"]
    f = K @ z[1:] + z[0]
    Kd = K @ d[1:]
    fd = Kd + d[0]
    a_reg = P["gamma_A"] * z[1:] @ Kd + P["gamma_I"] * fd @ (L @ f)
    c_reg = P["gamma_A"] * d[1:] @ Kd + P["gamma_I"] * fd @ (L @ fd)
    return f, fd, a_reg, c_reg


def test_line_search_matches_tv_lapsvm_1():
    P = tv1()
    z0 = np.array([0.1, 0.2, -0.1, 0.0, 0.3, -0.2, 0.1, -0.3])
    d = np.array([0.5, 1, 1, 0, 0, -1, 0, -1.0])
    f, fd, a, c = _line_terms(P, z0, d)
    s, pieces = exact_line_search(f, fd, P["y"], a, c)
    assert s == pytest.approx(0.5319210906337434, rel=1e-12)
    assert pieces == 4


def test_line_search_matches_brute_force_on_random_directions(rng):
    P = moons(15, n=80)
    P.update(gamma_A=1e-2, gamma_I=1.0, power=1)
    apply_L = laplacian_operator(P["L"])
    for _ in range(20):
        z = rng.normal(scale=0.5, size=81)
        d = rng.normal(size=81)
        f, fd, a, c = _line_terms(P, z, d)
        s, _ = exact_line_search(f, fd, P["y"], a, c)

        def phi(t):
            zz = z + t * d
            return objective(P["K"], apply_L, P["y"], zz[1:], zz[0], gamma_A=1e-2, gamma_I=1.0)

        grid = np.linspace(0, max(2 * s, 1e-3), 2001)
        best = grid[np.argmin([phi(t) for t in grid])]
        assert phi(s) <= phi(best) + 1e-12
        if s > 0:  # phi is minimal at s: psi changes sign there
            h = 1e-6 * max(s, 1)
            assert phi(s - h) >= phi(s) - 1e-12 and phi(s + h) >= phi(s) - 1e-12


def test_line_search_guard_returns_zero_when_psi0_nonnegative():
    P = tv1()
    z0 = np.array([0.1, 0.2, -0.1, 0.0, 0.3, -0.2, 0.1, -0.3])
    d = -np.array([0.5, 1, 1, 0, 0, -1, 0, -1.0])  # an ascent direction: psi(0) > 0
    f, fd, a, c = _line_terms(P, z0, d)
    assert exact_line_search(f, fd, P["y"], a, c) == (0.0, 1)


# -- Newton --------------------------------------------------------------------------------
def test_newton_matches_tv_lapsvm_1_with_and_without_bias():
    P = tv1()
    r = newton(P["K"], P["L"], P["y"], use_bias=True, **_kw(P))
    assert r.n_iter == 2 and r.converged
    assert _obj(P, r, True) == pytest.approx(0.11854401526920258, rel=1e-9)
    assert r.b == pytest.approx(0.08659716352960235, abs=1e-9)
    np.testing.assert_allclose(r.alpha, TV1_ALPHA_BIAS, atol=1e-8)
    np.testing.assert_allclose(P["K"] @ r.alpha + r.b, TV1_F, atol=1e-9)
    assert abs(r.alpha.sum()) < 1e-12
    xs = np.array([1.0, 3.0, 2.6])
    f_out = np.exp(-(xs[:, None] - P["x"][None]) ** 2 / 2) @ r.alpha + r.b
    np.testing.assert_allclose(f_out, [1.1804745524, -0.7816183574, -0.5360968994], atol=1e-9)
    r0 = newton(P["K"], P["L"], P["y"], use_bias=False, **_kw(P))
    assert _obj(P, r0, False) == pytest.approx(0.11864234155193681, rel=1e-9)
    np.testing.assert_allclose(r0.alpha, [2.6597747525, -3.4018949812, 5.960760399,
                                          -4.5019478817, 1.2811905398, -1.1622194197,
                                          -0.6085744863], atol=1e-8)


def test_laprls_closed_form_matches_tv1_and_first_newton_step():
    P = tv1()
    r = laprls_closed_form(P["K"], P["L"], P["y"], use_bias=True, **_kw(P))
    assert _obj(P, r, True, hinge=False) == pytest.approx(0.11986903564547668, rel=1e-9)
    assert r.b == pytest.approx(0.1015546813611337, abs=1e-9)
    np.testing.assert_allclose(r.alpha, [3.2320045322, -4.3647742938, 6.6616962459,
                                         -4.980452783, 1.3575671452, -1.1742320795,
                                         -0.731808767], atol=1e-8)
    with pytest.warns(Warning, match="max_iter=1"):
        first = newton(P["K"], P["L"], P["y"], use_bias=True, max_iter=1, **_kw(P))
    np.testing.assert_array_equal(first.alpha, r.alpha)


TV3_ROWS = {
    ("svm", False): (1.5652313207295256, 0.0, [0, 3, 4, 21, 22, 24],
                     [0.9612945947, 3.2152358492, 1.5761212559, 0.5670078951, -0.0983035848,
                      -2.5961027934, -0.5097790342, -0.0569337093, -1.5959573487,
                      -0.8728257101]),
    ("svm", True): (1.5622460259508675, 1.1275329527348257, [0, 3, 4, 21, 22, 23, 24],
                    [0.9627242423, 3.3587107045, 2.1028555192, 0.5731434141, -0.1009936019,
                     -2.3861574764, -0.5147060128, -0.0560026505, -0.9997688947,
                     -0.8701563355]),
    ("rls", False): (1.5849681334906778, 0.0, None,
                     [0.9607331299, 1.0093984036, 1.0011482333, 0.539880312, -0.1020677915,
                      -1.0112418656, -0.486470304, -0.056630973, -1.0000826406,
                      -0.8665456626]),
    ("rls", True): (1.5822007453001408, 0.9710389889921469, None,
                    [0.9617712872, 1.0097177264, 1.002170564, 0.5433730502, -0.1026342692,
                     -1.0105286125, -0.4896221899, -0.0560175587, -0.9989593824,
                     -0.8660724073]),
}


@pytest.mark.parametrize("key", list(TV3_ROWS))
def test_direct_solvers_match_tv_lapsvm_3(key):
    P = tv3()
    loss, bias = key
    obj_ref, b_ref, E_ref, f_ref = TV3_ROWS[key]
    hinge = loss == "svm"
    r = newton(P["K"], P["L"], P["y"], use_bias=bias, hinge=hinge, **_kw(P))
    assert _obj(P, r, bias, hinge) == pytest.approx(obj_ref, rel=1e-9)
    assert r.b == pytest.approx(b_ref, abs=1e-7)
    f = P["K"] @ r.alpha + r.b
    lab = np.r_[0:5, 20:25]
    np.testing.assert_allclose(f[lab], f_ref, atol=1e-7)
    if hinge:
        assert r.n_iter == 2
        E = np.flatnonzero((P["y"] != 0) & (P["y"] * f < 1))
        assert E.tolist() == E_ref
        assert f.sum() == pytest.approx(5.347525105173812 if bias else -6.670924306894946,
                                        abs=1e-6)


def _cvxpy_primal(P, use_bias, hinge=True):
    cp = pytest.importorskip("cvxpy")
    K, y = P["K"], P["y"]
    n = K.shape[0]
    w, V = np.linalg.eigh(K)
    R = V * np.sqrt(np.clip(w, 0, None))  # K = R R^T
    Ld = laplacian_operator(P["L"], P["power"])(np.eye(n))
    lw, LV = np.linalg.eigh(0.5 * (Ld + Ld.T))
    S = (LV * np.sqrt(np.clip(lw, 0, None))).T  # L = S^T S
    a = cp.Variable(n)
    b = cp.Variable() if use_bias else 0.0
    f = K @ a + b
    lab = np.flatnonzero(y != 0)
    res = (1 - cp.multiply(y[lab], f[lab])) if hinge else (y[lab] - f[lab])
    loss = cp.sum_squares(cp.pos(res)) if hinge else cp.sum_squares(res)
    obj = 0.5 * (loss + P["gamma_A"] * cp.sum_squares(R.T @ a)
                 + P["gamma_I"] * cp.sum_squares(S @ f))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return prob.value, K @ a.value + (b.value if use_bias else 0.0)


@pytest.mark.parametrize("use_bias", [False, True])
def test_newton_and_pcg_match_cvxpy_on_two_moons_with_active_hinge(use_bias):
    P = moons(10, n=80, kind="normalized")
    P.update(gamma_A=1e-2, gamma_I=1.0, power=2)
    ref_obj, ref_f = _cvxpy_primal(P, use_bias)
    rn = newton(P["K"], P["L"], P["y"], use_bias=use_bias, **_kw(P))
    rp = pcg(P["K"], P["L"], P["y"], use_bias=use_bias, max_iter=5000, **_kw(P))
    assert rp.converged and rp.stop_reason == "line search step 0"
    on, op = _obj(P, rn, use_bias), _obj(P, rp, use_bias)
    assert on == pytest.approx(ref_obj, rel=1e-7)  # cvxpy's own accuracy
    assert op == pytest.approx(on, rel=1e-8)
    assert rn.n_iter >= 2  # the hinge matters: E changed after the LapRLS step
    np.testing.assert_allclose(P["K"] @ rn.alpha + rn.b, ref_f, atol=1e-5)
    np.testing.assert_allclose(P["K"] @ rp.alpha + rp.b, P["K"] @ rn.alpha + rn.b, atol=1e-6)


@pytest.mark.parametrize("use_bias", [False, True])
def test_pcg_to_convergence_matches_newton_on_tv3(use_bias):
    P = tv3()
    rn = newton(P["K"], P["L"], P["y"], use_bias=use_bias, **_kw(P))
    rp = pcg(P["K"], P["L"], P["y"], use_bias=use_bias, max_iter=5000, **_kw(P))
    assert rp.converged
    gap = _obj(P, rp, use_bias) - _obj(P, rn, use_bias)
    assert abs(gap) < 2e-12 * _obj(P, rn, use_bias) + 1e-13


def test_pcg_trajectory_matches_tv_lapsvm_1():
    P = tv1()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = pcg(P["K"], P["L"], P["y"], use_bias=True, max_iter=1, **_kw(P))
        r2 = pcg(P["K"], P["L"], P["y"], use_bias=True, max_iter=2, **_kw(P))
    np.testing.assert_allclose(np.r_[r1.b, r1.alpha], 0.42542600890818255 *
                               np.array([0, 1, 1, 1, 0, -1, -1, -1.0]), atol=1e-12)
    assert r1.history["obj"][1] == pytest.approx(0.1639808496332466, rel=1e-12)
    np.testing.assert_allclose(np.r_[r2.b, r2.alpha],
                               [0.1114954143, 0.4527587613, 0.412980991, 0.5154321748,
                                -0.034391975, -0.3841791945, -0.4222189623, -0.428886381],
                               atol=1e-9)
    assert r2.history["obj"][2] == pytest.approx(0.13678652981384995, rel=1e-12)


@pytest.mark.parametrize("refresh_every", [None, 50])
@pytest.mark.parametrize("use_bias", [False, True])
def test_pcg_never_increases_objective_on_ill_conditioned_problem(use_bias, refresh_every):
    # two moons, sigma = 0.35: cond(K) ~ 5e14 (spec pitfall 2); run until s = 0
    P = moons(1)
    P.update(gamma_A=1e-5, gamma_I=1.0, power=1)
    r = pcg(P["K"], P["L"], P["y"], use_bias=use_bias, max_iter=20000,
            refresh_every=refresh_every, **_kw(P))
    obj = np.array(r.history["obj"])
    assert r.converged
    # a refresh re-evaluates K alpha, whose round-off (|alpha| ~ 1e3 here) moves obj by ~1e-11
    assert np.all(np.diff(obj) <= 1e-10 * obj[0])
    assert max(r.history["step"]) < 1e6  # no spurious huge step


def test_laprls_pcg_matches_closed_form():
    P = tv3()
    for bias in (False, True):
        rc = laprls_closed_form(P["K"], P["L"], P["y"], use_bias=bias, **_kw(P))
        rp = pcg(P["K"], P["L"], P["y"], use_bias=bias, hinge=False, max_iter=5000, **_kw(P))
        assert max(rp.history["ls_pieces"][1:]) == 1  # closed-form step
        assert _obj(P, rp, bias, False) == pytest.approx(_obj(P, rc, bias, False), rel=1e-11)


def test_pcg_multi_column_equals_separate_columns():
    P = tv3()
    Y = np.stack([P["y"], -P["y"], np.where(np.arange(40) < 3, 1.0, 0.0) - (np.arange(40) == 30)],
                 axis=1)
    # 30 iterations: on this ill-conditioned K, nonlinear CG amplifies the round-off
    # difference of matrix-matrix and matrix-vector products (1e-14 at t = 10, 1e-10 at
    # t = 30, 1e-4 at t = 60 for the third column), so later iterates are not comparable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joint = pcg(P["K"], P["L"], Y, use_bias=True, max_iter=30, refresh_every=None,
                    **_kw(P))
        for j in range(3):
            single = pcg(P["K"], P["L"], Y[:, j], use_bias=True, max_iter=30,
                         refresh_every=None, **_kw(P))
            # matrix-matrix and matrix-vector BLAS products round differently
            scale = np.abs(single.alpha).max()
            np.testing.assert_allclose(joint.alpha[:, j], single.alpha, atol=1e-8 * scale)
            assert joint.b[j] == pytest.approx(single.b, abs=1e-8)


def test_pcg_float32_kernel_close_to_float64():
    P = tv3()
    r64 = pcg(P["K"], P["L"], P["y"], max_iter=5000, **_kw(P))
    r32 = pcg(P["K"].astype(np.float32), P["L"], P["y"], max_iter=5000, **_kw(P))
    assert _obj(P, r32, False) == pytest.approx(_obj(P, r64, False), rel=1e-5)


def test_stability_check_stops_tv3_at_iteration_18():
    P = tv3()
    r = pcg(P["K"], P["L"], P["y"], stopping=[StabilityCheck(P["y"] == 0, every=3)], **_kw(P))
    assert r.stop_reason == "stability"
    assert r.n_iter == 18  # indicative in the spec; stable here
    assert r.history["obj"][-1] == pytest.approx(1.6773486767870698, rel=1e-9)


def test_warm_start_from_solution_stops_immediately():
    P = tv3()
    rn = newton(P["K"], P["L"], P["y"], **_kw(P))
    cold = pcg(P["K"], P["L"], P["y"], max_iter=5000, **_kw(P))
    r = pcg(P["K"], P["L"], P["y"], alpha0=rn.alpha, max_iter=5000, **_kw(P))
    # (PCG checks its stopping test in rounds, so round-off alone moves n_iter by a round)
    assert r.converged and r.n_iter < cold.n_iter
    # starting at the optimum, PCG only polishes round-off
    assert r.history["obj"][0] == pytest.approx(_obj(P, rn, False), rel=1e-12)
    assert r.history["obj"][-1] <= r.history["obj"][0] * (1 + 1e-12)


def test_newton_gamma_a_zero_uses_full_hessian_fallback():
    P = tv1()
    P["gamma_A"] = 0.0
    rn = newton(P["K"], P["L"], P["y"], use_bias=True, **_kw(P))
    rp = pcg(P["K"], P["L"], P["y"], use_bias=True, max_iter=5000, **_kw(P))
    assert rn.info["full_hessian_fallback"]
    assert _obj(P, rn, True) == pytest.approx(_obj(P, rp, True), rel=1e-6)


# -- warnings that fit the call (issue "no silent wrong answer", item 17) -----------------------
def test_max_iter_warnings_of_the_functions_name_their_own_options():
    from sklearn.exceptions import ConvergenceWarning
    P = tv3()
    with pytest.warns(ConvergenceWarning, match=r"max_iter=2 .*stopping=\[make_rule"):
        pcg(P["K"], P["L"], P["y"], max_iter=2, **_kw(P))
    rule = StabilityCheck(P["y"] == 0, every=100)
    with pytest.warns(ConvergenceWarning) as rec:
        pcg(P["K"], P["L"], P["y"], max_iter=2, stopping=[rule], **_kw(P))
    msg = str(rec[0].message)
    assert "rules in use: stability" in msg and "make_rule('stability'" not in msg
    # newton's line_search exists on the function, so advising it there is right
    with pytest.warns(ConvergenceWarning, match="line_search=True"):
        newton(tv1()["K"], tv1()["L"], tv1()["y"], use_bias=True, max_iter=1, **_kw(tv1()))


def test_solvers_return_the_training_decision_values():
    P = tv3()
    for res in (pcg(P["K"], P["L"], P["y"], max_iter=5000, use_bias=True, **_kw(P)),
                newton(P["K"], P["L"], P["y"], use_bias=True, **_kw(P))):
        np.testing.assert_allclose(res.decision, P["K"] @ res.alpha + res.b,
                                   atol=1e-8 * np.abs(res.decision).max())


@pytest.mark.parametrize("use_bias", [False, True])
@pytest.mark.parametrize("gamma_A", [1e-2, 1e-6])
def test_newton_steps_through_the_labelled_factorisation_equal_dense_solves(
        monkeypatch, use_bias, gamma_A):
    """Newton's later steps (error sets inside the labelled set) go through the first
    step's factorisation by Woodbury's identity: one Newton matrix formed in all, every
    column's step count and decision values those of a dense solve per column and step
    (to 1e-7 of their scale at gamma_A = 1e-6)."""
    import importlib

    from sklearn.datasets import make_blobs

    from semisup.graph import knn_graph, laplacian
    from semisup.kernels import make_kernel
    mod = importlib.import_module("semisup.lapsvm.newton")
    X, t = make_blobs(300, centers=4, cluster_std=2.0, random_state=0)
    K = make_kernel(X, sigma=2.0)[0]
    L = laplacian(knn_graph(X, 6), kind="normalized")
    Y = np.zeros((300, 4))
    lab = np.random.default_rng(0).choice(300, 40, replace=False)
    Y[lab] = -1.0
    Y[lab, t[lab]] = 1.0
    formed = []
    matrix = mod._newton_matrix
    monkeypatch.setattr(mod, "_newton_matrix", lambda *a: formed.append(1) or matrix(*a))
    fast = newton(K, L, Y, gamma_A=gamma_A, gamma_I=0.1, use_bias=use_bias)
    assert len(formed) == 1 and fast.n_iter_per_column.max() >= 3
    monkeypatch.setattr(mod, "_base_step", lambda *a: None)      # a dense solve each time
    dense = newton(K, L, Y, gamma_A=gamma_A, gamma_I=0.1, use_bias=use_bias)
    assert len(formed) > 4
    np.testing.assert_array_equal(fast.n_iter_per_column, dense.n_iter_per_column)
    scale = np.abs(dense.decision).max()
    np.testing.assert_allclose(fast.decision, dense.decision, atol=1e-7 * scale)
    np.testing.assert_allclose(fast.b, dense.b, atol=1e-7 * scale)
