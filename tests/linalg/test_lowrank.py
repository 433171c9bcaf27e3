import numpy as np
import pytest

from semisup.linalg import lowrank
from semisup.linalg.lowrank import shrink


def _low_rank_plus_noise(rng, m, n, r, noise=1e-2):
    return rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) * 3 + \
        noise * rng.standard_normal((m, n))


def _reference(A, tau):
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    return (U * np.maximum(s - tau, 0)) @ Vt


@pytest.mark.parametrize("method", ["exact", "gram", "randomized", "auto"])
@pytest.mark.parametrize("shape", [(30, 400), (400, 30), (150, 160)])
def test_shrink_methods_agree_with_reference(method, shape, rng):
    A = _low_rank_plus_noise(rng, *shape, r=4)
    tau = 0.5
    res = shrink(A, tau, method=method, rank_estimate=2, random_state=0)
    np.testing.assert_allclose(res.Z, _reference(A, tau), atol=1e-9)
    s = np.linalg.svd(A, compute_uv=False)
    np.testing.assert_allclose(res.sigma, s[s > tau] - tau, atol=1e-9)
    assert res.nuclear_norm == pytest.approx((s[s > tau] - tau).sum())


def test_shrink_is_the_prox_of_the_nuclear_norm(rng):
    cp = pytest.importorskip("cvxpy")
    A = rng.standard_normal((6, 8))
    tau = 0.7
    Zv = cp.Variable(A.shape)
    cp.Problem(cp.Minimize(tau * cp.normNuc(Zv) + 0.5 * cp.sum_squares(Zv - A))).solve(
        solver=cp.CLARABEL)
    np.testing.assert_allclose(shrink(A, tau).Z, Zv.value, atol=1e-5)


def test_shrink_satisfies_the_prox_optimality_condition(rng):
    # A - Z must be a subgradient of tau ||.||_* at Z: tau (U V^T + W), ||W|| <= 1, W
    # orthogonal to Z's singular subspaces
    A = rng.standard_normal((7, 9))
    tau = 1.1
    res = shrink(A, tau, method="exact")
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    k = res.rank
    D = (A - res.Z) / tau
    np.testing.assert_allclose(U[:, :k].T @ D @ Vt[:k].T, np.eye(k), atol=1e-10)
    assert np.linalg.norm(D, 2) <= 1 + 1e-10


def test_gram_falls_back_to_exact_for_tiny_thresholds(rng):
    A = rng.standard_normal((20, 50))
    res = shrink(A, 1e-9, method="gram")
    assert res.method == "exact"
    np.testing.assert_allclose(res.Z, _reference(A, 1e-9), atol=1e-10)


def test_randomized_grows_its_block_when_the_rank_is_underestimated(rng):
    A = _low_rank_plus_noise(rng, 200, 600, r=12)
    res = shrink(A, 1.0, method="randomized", rank_estimate=1, oversampling=2,
                 random_state=0)
    assert res.method == "randomized"
    assert res.rank == 12
    np.testing.assert_allclose(res.Z, _reference(A, 1.0), atol=1e-8)


def test_randomized_switches_when_the_spectrum_is_not_small(rng):
    A = rng.standard_normal((120, 300))
    res = shrink(A, 0.1, method="randomized", rank_estimate=5, random_state=0)
    assert res.method in ("gram", "exact")
    np.testing.assert_allclose(res.Z, _reference(A, 0.1), atol=1e-9)


def test_auto_picks_randomized_only_for_small_rank(rng):
    A = _low_rank_plus_noise(rng, 300, 2000, r=5)
    assert shrink(A, 1.0, rank_estimate=5, random_state=0).method == "randomized"
    assert shrink(A, 1.0).method == "gram"
    assert shrink(A, 1.0, rank_estimate=100).method == "gram"
    assert lowrank.RANDOMIZED_MIN_DIM > 30
    assert shrink(A[:30], 1.0, rank_estimate=2).method == "gram"


def test_everything_below_threshold_gives_zero(rng):
    A = rng.standard_normal((5, 7))
    for method in ("exact", "gram"):
        res = shrink(A, 100.0, method=method)
        assert res.rank == 0 and not res.Z.any()


def test_bad_arguments(rng):
    with pytest.raises(ValueError, match="non-negative"):
        shrink(np.eye(3), -1.0)
    with pytest.raises(ValueError, match="unknown method"):
        shrink(np.eye(3), 0.1, method="svds")
