"""The accelerated solver (``solver="apg"``): same optimum / fixed point as the paper's FPC,
numba and numpy backends agreeing, validation and progress output."""

import numpy as np
import pytest

from semisup.completion import MatrixCompletionTransducer
from semisup.completion.fpc import accelerated_step_scale, fpc_path, step_sizes
from semisup.datasets.completion_synthetic import make_completion_problem

from completion_oracles import MX, MY, X, Y, cvxpy_mcb, mc1_step_change  # the spec's instance



@pytest.mark.parametrize("svd", ["auto", "exact"])     # compiled stage / general loop
@pytest.mark.parametrize("lam", [0.5, 4.0])
def test_apg_reaches_the_mcb_optimum_of_cvxpy(svd, lam):
    rng = np.random.default_rng(3)
    t, d, n, mu = 3, 5, 12, 0.02
    Xr = rng.standard_normal((d, 2)) @ rng.standard_normal((2, n))
    Yr = np.where(rng.standard_normal((t, n)) > 0, 1.0, -1.0)
    MXr = rng.random((d, n)) < 0.6
    MYr = rng.random((t, n)) < 0.5
    # lam = 4: tau_Z = c |Omega_Y| / lam (not capped at |Omega_X|) and label rows with more
    # than n/19 observed entries, so the accelerated steps are scaled down
    tau_Z, tau_b = step_sizes(MYr.sum(), MXr.sum(), lam, n)
    scale = accelerated_step_scale(MYr, MYr.sum(), MXr.sum(), lam, tau_Z, tau_b, True)
    assert (scale < 1) == (lam > 1)
    r = fpc_path(Xr, MXr, Yr, MYr, variant="mcb", lam=lam, mus=[mu], tol=1e-14,
                 max_inner=200_000, svd=svd, solver="apg", warn=False)
    value, Zc, bc = cvxpy_mcb(Xr, MXr, Yr, MYr, lam, mu)
    assert r.objective[-1] == pytest.approx(value, rel=1e-6)
    assert r.objective[-1] >= value - 1e-7
    assert r.tau_Z == pytest.approx(scale * tau_Z)
    assert r.n_restarts > 0
    np.testing.assert_allclose(r.b, bc, atol=1e-3)
    np.testing.assert_allclose(r.Z, Zc, atol=1e-3)


@pytest.mark.parametrize("svd", ["auto", "exact"])
@pytest.mark.parametrize("lam,mu", [(1.0, 0.05), (0.1, 0.01)])
def test_apg_and_fpc_reach_the_same_mc1_fixed_point(lam, mu, svd):
    kw = dict(variant="mc1", lam=lam, mus=[mu], tol=1e-14, max_inner=200_000, svd=svd,
              warn=False)
    a = fpc_path(X, MX, Y, MY, solver="fpc", **kw)
    g = fpc_path(X, MX, Y, MY, solver="apg", **kw)
    # MC-1 steps are never rescaled: the fixed point (which depends on them) is the same
    assert g.tau_Z == a.tau_Z
    # (FPC converges slowly: at tol=1e-14 its iterate is still ~1e-6 from the fixed point)
    np.testing.assert_allclose(g.Z, a.Z, atol=2e-6)
    assert g.objective[-1] == pytest.approx(a.objective[-1], abs=1e-9)
    np.testing.assert_array_equal(g.Z[-1], 1.0)
    # and it is a fixed point of the paper's step
    assert mc1_step_change(g.Z, X, MX, Y, MY, lam, mu) < 1e-9


def test_apg_takes_fewer_iterations_on_an_ill_conditioned_problem():
    # many observed features, few labels: tau_Z / |Omega_X| << 1 (module docstring)
    p = make_completion_problem(1, t=2, d=40, n=80, r=2, sigma2=0.01, omega=0.9)
    MYs = p.MY & (np.random.default_rng(0).random(p.MY.shape) < 0.1)
    kw = dict(variant="mc1", lam=1.0, mu_final=1e-3, warn=False)
    a = fpc_path(p.X, p.MX, p.Y, MYs, solver="fpc", **kw)
    g = fpc_path(p.X, p.MX, p.Y, MYs, solver="apg", **kw)
    assert g.n_iter.sum() < a.n_iter.sum() / 2
    assert g.objective[-1] <= a.objective[-1] * (1 + 1e-4)


@pytest.fixture(scope="module")
def problem():
    return make_completion_problem(5, t=4, d=8, n=30, r=2, sigma2=0.01, omega=0.4)


@pytest.mark.parametrize("variant", ["mcb", "mc1"])
@pytest.mark.parametrize("svd", ["auto", "exact"])
def test_apg_numba_and_numpy_backends_agree(problem, variant, svd):
    """``svd="auto"`` on a small wide matrix: the compiled whole stage (``dense_stage``);
    ``svd="exact"``: the general loop with the compiled ``step_input`` and
    ``value_and_restart`` passes (the path large problems take)."""
    pytest.importorskip("numba")
    from semisup.completion import _fpc_numba as kern
    p = problem
    kw = dict(variant=variant, lam=1.0, mu_final=1e-4, store_path=True, warn=False,
              solver="apg", svd=svd)
    calls = {"dense_stage": 0, "step_input": 0, "value_and_restart": 0}
    originals = {name: getattr(kern, name) for name in calls}

    def counting(name):
        def f(*a):
            calls[name] += 1
            return originals[name](*a)
        return f

    a = fpc_path(p.X, p.MX, p.Y, p.MY, backend="numpy", **kw)
    mp = pytest.MonkeyPatch()
    try:
        for name in calls:
            mp.setattr(kern, name, counting(name))
        b = fpc_path(p.X, p.MX, p.Y, p.MY, backend="numba", **kw)
    finally:
        mp.undo()
    if svd == "auto":
        assert calls["dense_stage"] > 0 and calls["step_input"] == 0
    else:
        assert calls["dense_stage"] == 0 and calls["step_input"] > 0
        assert calls["value_and_restart"] == calls["step_input"]
    assert a.n_restarts > 0
    assert b.n_restarts == a.n_restarts
    np.testing.assert_array_equal(a.n_iter, b.n_iter)
    np.testing.assert_array_equal(a.rank, b.rank)
    np.testing.assert_allclose(b.objective, a.objective, rtol=1e-10)
    np.testing.assert_allclose(b.history, a.history, rtol=1e-8)
    for (Za, ba), (Zb, bb) in zip(a.models, b.models):
        np.testing.assert_allclose(Zb, Za, atol=1e-9)
        if ba is not None:
            np.testing.assert_allclose(bb, ba, atol=1e-9)
    if variant == "mc1":
        np.testing.assert_array_equal(b.Z[-1], 1.0)


def test_fpc_numba_general_loop_matches_numpy(problem):
    # the compiled passes also serve solver="fpc" on large problems
    pytest.importorskip("numba")
    p = problem
    kw = dict(variant="mcb", lam=1.0, mu_final=1e-4, warn=False, svd="exact")
    a = fpc_path(p.X, p.MX, p.Y, p.MY, backend="numpy", **kw)
    b = fpc_path(p.X, p.MX, p.Y, p.MY, backend="numba", **kw)
    np.testing.assert_array_equal(a.n_iter, b.n_iter)
    np.testing.assert_allclose(b.Z, a.Z, atol=1e-9)
    np.testing.assert_allclose(b.b, a.b, atol=1e-9)


def test_solver_is_validated(problem):
    p = problem
    with pytest.raises(ValueError, match="solver"):
        fpc_path(p.X, p.MX, p.Y, p.MY, solver="newton")
    Xi, Yi = p.as_estimator_input()
    with pytest.raises(ValueError, match="solver"):
        MatrixCompletionTransducer(mu=1e-2, solver="newton").fit(Xi, Yi)


def test_verbose_reports_cv_folds_and_refit_stages(problem, capfd):
    Xi, Yi = problem.as_estimator_input()
    MatrixCompletionTransducer(mu="cv", mu_final=1e-2, n_folds=2, random_state=0,
                               verbose=1).fit(Xi, Yi)
    err = capfd.readouterr().err
    assert err.count("[cv] fold") == 2
    assert "fold 1/2" in err and "fold 2/2" in err
    assert "refit" in err
    assert "[fpc_path] stage 1/" in err
    MatrixCompletionTransducer(mu="cv", mu_final=1e-2, n_folds=2, random_state=0,
                               verbose=0).fit(Xi, Yi)
    assert capfd.readouterr().err == ""
