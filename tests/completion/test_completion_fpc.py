import numpy as np
import pytest

from semisup.completion.fpc import (continuation_grid, fpc_path, initial_point, objective,
                                    smooth_part, step_sizes)
from semisup.completion.metrics import imputation_error, label_error
from semisup.linalg.lowrank import shrink

from completion_oracles import MX, MY, X, Y, cvxpy_mcb, mc1_step_change  # the spec's instance


Z1 = 0.5 * np.vstack([0.1 * Y, X]) + 0.01 * np.arange(30).reshape(5, 6)
B1 = np.array([0.2, -0.1])


def test_objective_and_gradient_match_spec_tv_c1():
    f, G, gb = smooth_part(Z1, B1, X, MX, Y, MY, 1.0)
    assert f == pytest.approx(0.655271370172 + 0.099145833333, abs=1e-11)
    assert objective(Z1, B1, 0.05, X, MX, Y, MY, 1.0) == pytest.approx(0.976547714730,
                                                                       abs=1e-11)
    np.testing.assert_allclose(gb, [-0.0538954960, 0.0787524326], atol=1e-10)
    assert np.linalg.norm(G) == pytest.approx(0.234625572424, abs=1e-11)
    np.testing.assert_allclose(G[0], [-0.0729705832, 0, -0.0721511825, 0, 0.0912262697, 0],
                               atol=1e-10)
    np.testing.assert_allclose(G[2], [-0.0108333333, 0.0608333333, 0, -0.0708333333, 0,
                                      -0.0316666667], atol=1e-10)


def test_initialisation_and_first_step_match_spec_tv_c2():
    M = np.vstack([np.where(MY, Y, 0), np.where(MX, X, 0)])
    Z0, sigma1, _ = initial_point(M)
    assert sigma1 == pytest.approx(2.746416187730, abs=1e-11)
    assert continuation_grid(sigma1, 0.05)[0] == pytest.approx(0.686604046932, abs=1e-11)
    tau_Z, tau_b = step_sizes(MY.sum(), MX.sum(), 1.0, 6)
    assert (tau_Z, tau_b) == (12.0, pytest.approx(3.8))
    b0 = np.zeros(2)
    assert objective(Z0, b0, 0.686604046932, X, MX, Y, MY, 1.0) == pytest.approx(
        2.694531890196, abs=1e-10)
    _, G, gb = smooth_part(Z0, b0, X, MX, Y, MY, 1.0)
    b1 = b0 - tau_b * gb
    np.testing.assert_allclose(b1, [0.3130064998, -0.2716495935], atol=1e-9)
    A = Z0 - tau_Z * G
    np.testing.assert_allclose(np.linalg.svd(A, compute_uv=False),
                               [3.3950031999, 1.9701255636, 1.6597163682, 1.2316327034,
                                0.1803792721], atol=1e-9)
    res = shrink(A, tau_Z * 0.05, method="exact")
    np.testing.assert_allclose(res.sigma, [2.7950031999, 1.3701255636, 1.0597163682,
                                           0.6316327034], atol=1e-9)
    assert objective(res.Z, b1, 0.05, X, MX, Y, MY, 1.0) == pytest.approx(0.686707407697,
                                                                          abs=1e-10)
    big = shrink(A, tau_Z * 0.686604046932)
    assert big.rank == 0
    assert objective(big.Z, b1, 0.686604046932, X, MX, Y, MY, 1.0) == pytest.approx(
        1.138872303940, abs=1e-10)


@pytest.mark.parametrize("svd", ["exact", "gram"])
def test_continuation_protocol_matches_spec_tv_c4(svd):
    r = fpc_path(X, MX, Y, MY, variant="mcb", lam=1.0, mu_final=0.05, svd=svd)
    np.testing.assert_allclose(r.mus, [0.6866040469, 0.1716510117, 0.05], atol=1e-9)
    assert np.abs(r.n_iter - [9, 8, 40]).max() <= 1
    np.testing.assert_allclose(r.objective, [1.1202664239, 1.0917179151, 0.5850520645],
                               atol=1e-6)
    S = r.Z[:2] + r.b[:, None]
    assert label_error(Y, S, MY) == pytest.approx(2 / 6)
    assert imputation_error(X, r.Z[2:], MX) == pytest.approx(1.1678992469, abs=1e-6)

    r1 = fpc_path(X, MX, Y, MY, variant="mc1", lam=1.0, mu_final=0.05, svd=svd)
    np.testing.assert_allclose(r1.mus, [0.7796822329, 0.1949205582, 0.05], atol=1e-9)
    assert np.abs(r1.n_iter - [2, 7, 44]).max() <= 1
    np.testing.assert_allclose(r1.objective, [3.0867208126, 1.6180453149, 0.7244270642],
                               atol=1e-6)
    np.testing.assert_array_equal(r1.Z[-1], 1.0)
    assert label_error(Y, r1.Z[:2], MY) == pytest.approx(0.5)
    assert imputation_error(X, r1.Z[2:5], MX) == pytest.approx(1.2000487, abs=1e-6)


def _fixed_mu(variant, lam, mu):
    return fpc_path(X, MX, Y, MY, variant=variant, lam=lam, mus=[mu], tol=1e-14,
                    max_inner=200_000, svd="exact", warn=False)


@pytest.mark.parametrize("lam,mu,F,b,svals", [
    (1.0, 0.05, 0.5850062773, [0.62299, -1.15330], [4.32710, 2.21743, 1.54644]),
    (0.1, 0.01, 0.1001949790, [0.65277, -0.83192], [2.95291, 2.56499, 1.24438]),
    (1.0, 0.2, 1.1147934621, [0.68782, -0.69065], [0.44516]),
])
def test_mcb_fixed_mu_optimum_matches_spec_tv_c3(lam, mu, F, b, svals):
    r = _fixed_mu("mcb", lam, mu)
    assert r.objective[-1] == pytest.approx(F, rel=1e-6)
    np.testing.assert_allclose(r.b, b, atol=1e-3)
    sv = np.linalg.svd(r.Z, compute_uv=False)
    np.testing.assert_allclose(sv[:len(svals)], svals, atol=1e-3)
    assert np.all(sv[len(svals):] < 1e-8)


@pytest.mark.parametrize("lam,mu,F", [(1.0, 0.05, 0.7243665812), (0.1, 0.01, 0.1259254304)])
def test_mc1_reaches_its_own_fixed_point_tv_c5(lam, mu, F):
    r = _fixed_mu("mc1", lam, mu)
    assert r.objective[-1] == pytest.approx(F, abs=1e-6)
    # a fixed point: one more gradient-shrink-project step leaves Z unchanged
    assert mc1_step_change(r.Z, X, MX, Y, MY, lam, mu) < 1e-7


def test_mcb_fixed_mu_matches_cvxpy_on_random_instance():
    rng = np.random.default_rng(3)
    t, d, n, lam, mu = 3, 5, 12, 0.5, 0.02
    Xr = rng.standard_normal((d, 2)) @ rng.standard_normal((2, n))
    Yr = np.where(rng.standard_normal((t, n)) > 0, 1.0, -1.0)
    MXr = rng.random((d, n)) < 0.6
    MYr = rng.random((t, n)) < 0.5
    r = fpc_path(Xr, MXr, Yr, MYr, variant="mcb", lam=lam, mus=[mu], tol=1e-14,
                 max_inner=200_000, warn=False)
    value, _, _ = cvxpy_mcb(Xr, MXr, Yr, MYr, lam, mu)
    assert r.objective[-1] == pytest.approx(value, rel=1e-6)
    assert r.objective[-1] >= value - 1e-7


@pytest.mark.parametrize("variant", ["mcb", "mc1"])
def test_gradient_matches_finite_differences(variant, rng):
    m = 5 if variant == "mcb" else 6
    Z = rng.standard_normal((m, 6))
    b = rng.standard_normal(2) if variant == "mcb" else None
    f0, G, gb = smooth_part(Z, b, X, MX, Y, MY, 0.7)
    h = 1e-6
    num = np.zeros_like(Z)
    for idx in np.ndindex(*Z.shape):
        E = np.zeros_like(Z)
        E[idx] = h
        num[idx] = (smooth_part(Z + E, b, X, MX, Y, MY, 0.7)[0]
                    - smooth_part(Z - E, b, X, MX, Y, MY, 0.7)[0]) / (2 * h)
    np.testing.assert_allclose(G, num, atol=1e-8)
    if variant == "mc1":
        np.testing.assert_array_equal(G[-1], 0.0)
    else:
        numb = [(smooth_part(Z, b + h * e, X, MX, Y, MY, 0.7)[0]
                 - smooth_part(Z, b - h * e, X, MX, Y, MY, 0.7)[0]) / (2 * h)
                for e in np.eye(2)]
        np.testing.assert_allclose(gb, numb, atol=1e-8)


def test_noiseless_low_rank_matrix_is_recovered_above_sampling_threshold():
    rng = np.random.default_rng(0)
    d, n, r = 40, 200, 2
    X0 = rng.standard_normal((d, r)) @ rng.standard_normal((r, n))
    M = rng.random((d, n)) < 0.5     # 4000 entries vs r(d+n-r) = 476 degrees of freedom
    path = fpc_path(X0, M, mu_final=1e-8, tol=1e-10, warn=False)
    err = np.linalg.norm((path.Z - X0)[~M]) / np.linalg.norm(X0[~M])
    assert err < 1e-4
    assert path.rank[-1] == r


def test_svd_methods_give_the_same_path():
    rng = np.random.default_rng(1)
    d, n = 30, 400
    X0 = rng.standard_normal((d, 3)) @ rng.standard_normal((3, n))
    M = rng.random((d, n)) < 0.5
    # tight tolerance: all methods must reach the same fixed point of every stage
    paths = {m: fpc_path(X0, M, mu_final=1e-3, svd=m, tol=1e-12, random_state=0,
                         warn=False) for m in ("exact", "gram", "randomized")}
    for m in ("gram", "randomized"):
        np.testing.assert_allclose(paths[m].objective, paths["exact"].objective, rtol=1e-9)
        np.testing.assert_allclose(paths[m].Z, paths["exact"].Z, atol=1e-4)
    assert paths["randomized"].svd_methods.get("randomized", 0) > 0


def test_grid_values_above_the_start_are_skipped():
    grid = np.array([100.0, 10.0, 0.1, 0.05])
    r = fpc_path(X, MX, Y, MY, variant="mcb", mus=grid)
    np.testing.assert_array_equal(r.grid_index, [2, 3])


def test_bad_arguments():
    with pytest.raises(ValueError, match="non-increasing"):
        fpc_path(X, MX, Y, MY, mus=[0.01, 0.1])
    with pytest.raises(ValueError, match="variant"):
        fpc_path(X, MX, Y, MY, variant="mcx")
    with pytest.raises(ValueError, match="no observed feature"):
        fpc_path(X, np.zeros_like(MX), Y, MY)
    with pytest.raises(ValueError, match="eta"):
        continuation_grid(1.0, eta=1.5)


def test_stage_cap_warns():
    from semisup._validation import ConvergenceWarning
    with pytest.warns(ConvergenceWarning, match="max_inner"):
        fpc_path(X, MX, Y, MY, mu_final=0.05, max_inner=2)


def test_factored_feature_only_path_matches_dense_path():
    rng = np.random.default_rng(2)
    d, n = 200, 300
    X0 = rng.standard_normal((d, 3)) @ rng.standard_normal((3, n)) + \
        0.01 * rng.standard_normal((d, n))
    M = rng.random((d, n)) < 0.4
    fact = fpc_path(X0, M, mu_final=1e-3, tol=1e-12, random_state=0, warn=False)
    dense = fpc_path(X0, M, mu_final=1e-3, tol=1e-12, svd="exact", warn=False)
    assert fact.svd_methods.get("lowrank+sparse", 0) > 0
    np.testing.assert_allclose(fact.objective, dense.objective, rtol=1e-9)
    np.testing.assert_allclose(fact.Z, dense.Z, atol=1e-5)
    np.testing.assert_array_equal(fact.rank, dense.rank)


def test_factored_path_switches_to_dense_when_rank_grows():
    rng = np.random.default_rng(4)
    X0 = rng.standard_normal((200, 250))          # full rank: the spectrum will not fit
    M = rng.random(X0.shape) < 0.5
    r = fpc_path(X0, M, mu_final=1e-4, max_inner=300, random_state=0, warn=False)
    assert r.svd_methods.get("lowrank+sparse", 0) > 0
    assert sum(v for k, v in r.svd_methods.items() if k != "lowrank+sparse") > 0
    ref = fpc_path(X0, M, mu_final=1e-4, max_inner=300, svd="exact", warn=False)
    np.testing.assert_allclose(r.objective[-1], ref.objective[-1], rtol=1e-4)
