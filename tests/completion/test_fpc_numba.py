"""The compiled FPC stage (``backend="numba"``) against the numpy loop it replaces."""

import numpy as np
import pytest

from semisup.completion.fpc import fpc_path
from semisup.datasets.completion_synthetic import make_completion_problem

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def problem():
    return make_completion_problem(5, t=4, d=8, n=30, r=2, sigma2=0.01, omega=0.4)


def _both(p, **kw):
    a = fpc_path(p.X, p.MX, p.Y, p.MY, backend="numpy", store_path=True, warn=False, **kw)
    b = fpc_path(p.X, p.MX, p.Y, p.MY, backend="numba", store_path=True, warn=False, **kw)
    return a, b


@pytest.mark.parametrize("variant", ["mcb", "mc1"])
@pytest.mark.parametrize("lam", [1e-2, 1.0])
def test_numba_stage_reproduces_numpy_path(problem, variant, lam):
    a, b = _both(problem, variant=variant, lam=lam)
    np.testing.assert_array_equal(a.n_iter, b.n_iter)
    np.testing.assert_array_equal(a.rank, b.rank)
    np.testing.assert_allclose(b.objective, a.objective, rtol=1e-10)
    for (Za, ba), (Zb, bb) in zip(a.models, b.models):
        np.testing.assert_allclose(Zb, Za, atol=1e-9)
        if ba is not None:
            np.testing.assert_allclose(bb, ba, atol=1e-9)
    np.testing.assert_allclose(b.history, a.history, rtol=1e-8)
    assert b.svd_methods == a.svd_methods
    if variant == "mc1":
        np.testing.assert_array_equal(b.Z[-1], 1.0)


def test_numba_stage_exact_svd_fallback(problem):
    # a threshold below 1e-6 sigma_1 makes the Gram route unsafe: both paths switch to SVD
    a, b = _both(problem, variant="mc1", lam=1.0, mus=[1e-3, 1e-9], max_inner=60)
    assert a.svd_methods.get("exact", 0) > 0
    assert b.svd_methods == a.svd_methods
    np.testing.assert_allclose(b.Z, a.Z, atol=1e-9)


def test_features_only_numba_matches_numpy(problem):
    a = fpc_path(problem.X, problem.MX, backend="numpy")
    b = fpc_path(problem.X, problem.MX, backend="numba")
    np.testing.assert_array_equal(a.n_iter, b.n_iter)
    np.testing.assert_allclose(b.Z, a.Z, atol=1e-9)


def test_backend_is_validated(problem):
    with pytest.raises(ValueError, match="backend"):
        fpc_path(problem.X, problem.MX, backend="cuda")
