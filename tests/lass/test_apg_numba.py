"""Compiled APG kernels (optional numba extra) against the numpy/scipy path."""

import numpy as np
import pytest
import scipy.sparse as sp

from semisup.graph import knn_graph, laplacian
from semisup.lass.apg import apg, project_rows_michelot

pytest.importorskip("numba")
from semisup.lass import _apg_numba as nb  # noqa: E402


def test_csr_matmul_equals_scipy(rng):
    A = sp.random(500, 400, density=0.02, random_state=1, format="csr")
    X = rng.normal(size=(400, 7))
    out = nb.csr_matmul(A.indptr, A.indices, A.data, X, np.full((500, 7), np.nan))
    np.testing.assert_allclose(out, A @ X, rtol=0, atol=1e-12)


def test_project_rows_equals_michelot(rng):
    V = rng.normal(size=(300, 9)) * rng.choice([0.01, 1, 10], size=(300, 1))
    P = nb.project_rows(V, np.empty_like(V))
    np.testing.assert_allclose(P, project_rows_michelot(V), rtol=0, atol=1e-12)
    np.testing.assert_allclose(P.sum(1), 1, atol=1e-12)


@pytest.mark.parametrize("beta", [0.0, 0.7])
def test_fista_step_and_gap_equal_numpy(rng, beta):
    n, k, c, step, two_lam = 200, 6, 0.3, 0.1, 2.0
    Z, dZ, LZ, LZp = (rng.normal(size=(n, k)) for _ in range(4))
    G = rng.normal(size=(n, k))
    W = LZ * (-c * (1 + beta)) + step * G + Z + LZp * (c * beta) + dZ * beta
    Zn_ref = project_rows_michelot(W)
    dZn_ref = Zn_ref - Z
    Zn, dZn = np.empty_like(Z), np.empty_like(Z)
    a, b = nb.fista_step(Z, dZ, LZ, LZp, step * G, c, beta, Zn, dZn)
    np.testing.assert_allclose(Zn, Zn_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dZn, dZn_ref, rtol=0, atol=1e-12)
    assert a == pytest.approx(np.sum(dZ * dZn_ref), abs=1e-10)
    assert b == pytest.approx(np.sum(dZn_ref ** 2), abs=1e-10)
    S = two_lam * LZ - G
    zs, gz, smin = nb.objective_gap(Z, LZ, G, two_lam)
    assert zs == pytest.approx(np.sum(Z * S), abs=1e-10)
    assert gz == pytest.approx(np.sum(G * Z), abs=1e-10)
    assert smin == pytest.approx(S.min(1).sum(), abs=1e-10)


def test_apg_with_numba_equals_numpy(rng):
    X = rng.normal(size=(400, 3))
    L = laplacian(knn_graph(X, 8))
    G = rng.uniform(-1, 1, size=(400, 5)) * (rng.random((400, 5)) < 0.1)
    Z0 = project_rows_michelot(G + 0.0)
    seen = []
    a = apg(L, G, 1.0, Z0, tol=1e-9, max_iter=20000, backend="numpy")
    b = apg(L, G, 1.0, Z0, tol=1e-9, max_iter=20000, backend="numba",
            callback=lambda t, Z, Y, U: seen.append(Z))
    assert a[3] and b[3] and "compile" in b[5]
    # same iterates up to rounding: same iteration count, same solution
    assert abs(a[2] - b[2]) <= 2
    np.testing.assert_allclose(b[0], a[0], atol=1e-7)
    np.testing.assert_allclose(b[1], L @ b[0], atol=1e-12)
    np.testing.assert_allclose(b[4]["objective"][-1], a[4]["objective"][-1], rtol=1e-12)
    # the callback gets its own copies (the solver reuses its buffers)
    assert len(seen) == b[2] and seen[0] is not seen[-1]
    assert not np.array_equal(seen[0], seen[-1])


def test_bad_backend():
    with pytest.raises(ValueError, match="backend"):
        apg(sp.eye(3, format="csr"), np.zeros((3, 2)), 1.0, np.full((3, 2), 0.5), tol=1e-3,
            max_iter=1, backend="fortran")


def test_auto_backend_falls_back_to_numpy_without_numba(monkeypatch):
    import semisup.lass.apg as apg_mod
    assert apg_mod._use_numba("auto", apg_mod.NUMBA_MIN_N)
    assert not apg_mod._use_numba("auto", apg_mod.NUMBA_MIN_N - 1)
    assert not apg_mod._use_numba("numpy", 10 ** 9)
    monkeypatch.setattr(apg_mod, "available", lambda name: False)
    assert not apg_mod._use_numba("auto", 10 ** 9)
