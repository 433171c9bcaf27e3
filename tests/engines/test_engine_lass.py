"""LaplacianAssignment (LASS) on the device path, run with numpy through the test double.

``NumpyArrayEngine`` (``test_engine_estimators.py``) takes exactly the path a CuPy input
takes: the graph on the engine, the Laplacian built there, APG by the array-module loop
(``solve(backend="xp")``: :func:`semisup.linalg.psd.lanczos_max` for the step), fitted arrays
and predictions through the engine. ``test_gpu_lass.py`` repeats these with real CuPy.

Tolerances. Below :data:`semisup.lass.apg.LANCZOS_MIN_N` items both paths take the
Gershgorin step and run the same loop, so their iterates agree to rounding: assignments to
1e-10 and the same number of iterations (+-1) at ``tol=1e-10``. Above it the steps differ
(ARPACK against our Lanczos, both ``tol=1e-3`` and :data:`~semisup.lass.apg.LIP_SAFETY`):
each fit stops at a certified gap ``F - F* <= tol |F|``, so the objectives agree to
``2 tol |F|`` and, at ``tol=1e-10``, the assignments to 1e-6 (LASS is not strongly convex:
``Z`` is pinned down less tightly than ``F``; observed 6e-14 on two moons). Labels are
identical in every case.

ADMM (``solver="cg"``, or ``"auto"`` with a numeric ``rho``) runs on the device with
block-CG Z-updates. With ``solver="cg"`` both paths run the same loop on the same ``A``
(built on the host and moved), so through the double the fits are identical (same
iterations, same CG iterations, assignments equal). ``solver="auto"`` with a numeric rho
factors ``A`` on the host (below ``DENSE_MAX_N`` items) and takes CG on the device: two
different inexact runs that both pass the ADMM test and the KKT check, so objectives agree
to 1e-10 relative, KKT residuals are below 1e-8 and labels are identical; the assignments
agree to 1e-7 where the minimiser is unique (two moons, observed 1.3e-10 at ``tol=1e-10``)
but not in general (blobs: one component has a flat direction of optimal points, 4e-4 apart).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import LaplacianAssignment
from semisup.graph import graph_from_neighbors, knn_search, laplacian
from semisup.lass import apg as apg_module
from semisup.lass import solve
from semisup.linalg.psd import lanczos_max
from semisup.lass.kkt import kkt_residual
from semisup.linalg import spd as spd_module

from test_engine_estimators import (DeviceArray, DeviceCSR, _blobs, _moons,  # noqa: F401
                                     dev, device_engine)


def _fit_both(X, y, **params):
    ref = LaplacianAssignment(**params).fit(X, y)
    est = LaplacianAssignment(**params).fit(dev(X), dev(y) if not sp.issparse(y) else y)
    return ref, est


def _same_fit(est, ref, atol=1e-10):
    assert est._graph_state[0] == "fakedevice" and est.solver_ == ref.solver_ == "apg"
    np.testing.assert_allclose(est.assignments_, ref.assignments_, atol=atol)
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    np.testing.assert_array_equal(est.classes_, ref.classes_)
    assert est.converged_ and ref.converged_
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-9)


@pytest.mark.parametrize("data", [_moons, _blobs])
@pytest.mark.parametrize("lam", [0.01, 1.0])
def test_lass_on_the_engine_equals_cpu(data, lam):
    X, y, y_train = data()
    Xq = X[::7] + 0.05
    ref, est = _fit_both(X, y_train, lam=lam, n_neighbors=8, knn_method="exact", tol=1e-10,
                         max_iter=20000)
    _same_fit(est, ref)
    assert abs(est.n_iter_ - ref.n_iter_) <= 1
    np.testing.assert_allclose(est.multipliers_[0], ref.multipliers_[0], atol=1e-8)
    np.testing.assert_allclose(est.multipliers_[1], ref.multipliers_[1], atol=1e-8)
    np.testing.assert_allclose(est.history_["gap"][-1], ref.history_["gap"][-1], rtol=1e-3,
                               atol=1e-12)
    assert est.rho_ == ref.rho_
    # predictions in the input's type (the double's device arrays are numpy arrays; a host
    # answer to a device query is marked DeviceArray by its from_host)
    np.testing.assert_allclose(est.transform(dev(Xq)), ref.transform(Xq), atol=1e-10)
    np.testing.assert_allclose(est.predict_proba(dev(Xq)), ref.predict_proba(Xq), atol=1e-10)
    np.testing.assert_array_equal(est.predict(dev(Xq)), ref.predict(Xq))
    P = est.transform(Xq)
    assert type(P) is np.ndarray
    np.testing.assert_allclose(P, ref.transform(Xq), atol=1e-10)
    for out in (ref.transform(dev(Xq)), ref.predict(dev(Xq))):   # host model, device query
        assert type(out) is DeviceArray


def test_lass_transform_overrides_on_the_engine():
    """``G_new`` (host or device, dense or sparse) and a per-query ``lam`` as on the host."""
    X, y, y_train = _blobs()
    ref, est = _fit_both(X, y_train, lam=1.0, tol=1e-10, max_iter=20000)
    Xq = X[:12] + 0.1
    rng = np.random.default_rng(0)
    Gq = rng.uniform(-1, 1, size=(12, 3)) * (rng.random((12, 3)) < 0.5)
    lam_q = np.linspace(0.0, 3.0, 12)
    want = ref.transform(Xq, Gq, lam_q)
    for g in (Gq, dev(Gq), sp.csr_matrix(Gq)):
        np.testing.assert_allclose(est.transform(dev(Xq), g, lam_q), want, atol=1e-10)
    np.testing.assert_array_equal(est.predict(dev(Xq), Gq, 0.0), ref.predict(Xq, Gq, 0.0))


def test_lass_lanczos_step_on_the_engine_agrees_within_the_certified_gap(monkeypatch):
    """Above LANCZOS_MIN_N the host takes ARPACK's estimate and the device
    :func:`lanczos_max`: different steps, the same minimiser to the certified gap."""
    monkeypatch.setattr(apg_module, "LANCZOS_MIN_N", 100)
    X, y, y_train = _moons()
    tol = 1e-10
    ref, est = _fit_both(X, y_train, lam=1.0, n_neighbors=8, tol=tol, max_iter=50000)
    # the two steps differ (here by 2e-6 relative): the fits are two different runs
    L = laplacian(ref.affinity_matrix_)
    assert apg_module.lipschitz_constant(L, 1.0) != apg_module.lipschitz_constant(
        L, 1.0, lanczos="xp")
    _same_fit(est, ref, atol=1e-6)      # observed 6e-14 here
    F = abs(ref.objective_)
    assert abs(est.objective_ - ref.objective_) <= 2 * tol * F + 1e-12
    Xq = X[::9] + 0.05
    np.testing.assert_array_equal(est.predict(dev(Xq)), ref.predict(Xq))


def test_lanczos_max_equals_the_top_eigenvalue(monkeypatch):
    X, y, _ = _blobs(400)
    W = graph_from_neighbors(*knn_search(X, 8), weights="heat")
    L = laplacian(W)
    top = np.linalg.eigvalsh(L.toarray())[-1]
    v0 = apg_module.arpack_start(L.shape[0])
    est = lanczos_max(L, v0, tol=1e-3)
    # a Ritz value: from below, within the relative tolerance (ARPACK's test)
    assert top * (1 - 1e-3) <= est <= top * (1 + 1e-12)
    assert lanczos_max(L, v0, tol=1e-10) == pytest.approx(top, rel=1e-9)
    # the step it gives is never longer than 1 / (2 lam lambda_max)
    monkeypatch.setattr(apg_module, "LANCZOS_MIN_N", 10)
    lip = apg_module.lipschitz_constant(L, 0.5, lanczos="xp")
    assert top <= lip < 2 * float(L.diagonal().max())


def test_lass_precomputed_device_affinity_equals_cpu():
    X, y, y_train = _blobs()
    W = graph_from_neighbors(*knn_search(X, 8, method="exact"), weights="heat")
    params = dict(affinity="precomputed", lam=1.0, tol=1e-10, max_iter=20000)
    ref = LaplacianAssignment(**params).fit(W, y_train)
    est = LaplacianAssignment(**params).fit(DeviceCSR(W), y_train)
    assert est._graph_state == ("fakedevice", None)
    _same_fit(est, ref)
    Wq = W[:20]
    np.testing.assert_allclose(est.transform(DeviceCSR(Wq)), ref.transform(Wq), atol=1e-10)
    np.testing.assert_array_equal(est.predict(Wq), ref.predict(Wq))


# the host warns so for a labelled isolated item too (its "component" has degree 0)
@pytest.mark.filterwarnings("ignore:.*negligible against G:UserWarning")
def test_lass_isolated_items_components_and_lam0_on_the_engine():
    """Isolated items and a component without labels take the host's closed forms (the
    solver iterates over the other rows, a principal submatrix of L); lam=0 is closed
    form everywhere."""
    X, y, y_train = _moons(200)
    W = graph_from_neighbors(*knn_search(X, 6, method="exact"), weights="heat").tolil()
    for i in (3, 50):                      # two isolated items, one of them labelled
        W[i, :] = 0
        W[:, i] = 0
    W = W.tocsr()
    W.eliminate_zeros()
    y_train = y_train.copy()
    y_train[3] = 1
    params = dict(affinity="precomputed", lam=1.0, tol=1e-10, max_iter=20000)
    ref = LaplacianAssignment(**params).fit(W, y_train)
    est = LaplacianAssignment(**params).fit(DeviceCSR(W), y_train)
    _same_fit(est, ref)
    np.testing.assert_allclose(est.assignments_[3], [0.0, 1.0])
    np.testing.assert_allclose(est.assignments_[50], [0.5, 0.5])
    for lam in (0.0,):
        ref = LaplacianAssignment(affinity="precomputed", lam=lam).fit(W, y_train)
        est = LaplacianAssignment(affinity="precomputed", lam=lam).fit(DeviceCSR(W), y_train)
        np.testing.assert_array_equal(est.assignments_, ref.assignments_)
        assert est.n_iter_ == ref.n_iter_ == 0


def test_lass_G_target_on_the_engine_equals_cpu():
    """Partial tagging: ``y`` an item-category matrix of any sign, dense on the device or
    sparse on the host."""
    X, y, _ = _blobs(240)
    rng = np.random.default_rng(3)
    G = rng.uniform(-1, 1, size=(240, 4)) * (rng.random((240, 4)) < 0.1)
    ref, est = _fit_both(X, G, lam=0.5, tol=1e-10, max_iter=20000)
    _same_fit(est, ref)
    np.testing.assert_array_equal(est.classes_, np.arange(4))
    est2 = LaplacianAssignment(lam=0.5, tol=1e-10, max_iter=20000).fit(dev(X),
                                                                         sp.csr_matrix(G))
    np.testing.assert_allclose(est2.assignments_, ref.assignments_, atol=1e-10)


def test_lass_keep_path_staged_and_warm_lam_path_on_the_engine():
    X, y, y_train = _moons(150)
    Xq = X[::10] + 0.05
    params = dict(lam=1.0, keep_path=True, tol=1e-8, max_iter=5000)
    ref, est = _fit_both(X, y_train, **params)
    assert len(est.history_["scores"]) == len(ref.history_["scores"]) == est.n_iter_
    np.testing.assert_allclose(est.history_["scores"][-1], est.assignments_, atol=0)
    for a, b in zip(est.staged_transform(dev(Xq)), ref.staged_transform(Xq)):
        np.testing.assert_allclose(a, b, atol=1e-10)
    assert all(type(a) is DeviceArray for a in ref.staged_predict(dev(Xq)))
    staged = list(est.staged_predict(dev(Xq)))
    assert len(staged) == est.n_iter_
    for a, b in zip(staged, ref.staged_predict(Xq)):
        np.testing.assert_array_equal(a, b)
    # a lam path with warm starts: each fit starts from the previous state, as on the host
    ref = LaplacianAssignment(warm_start=True, tol=1e-10, max_iter=20000)
    est = LaplacianAssignment(warm_start=True, tol=1e-10, max_iter=20000)
    for lam in (0.1, 0.3, 1.0):
        ref.set_params(lam=lam).fit(X, y_train)
        est.set_params(lam=lam).fit(dev(X), y_train)
        np.testing.assert_allclose(est.assignments_, ref.assignments_, atol=1e-10)
        assert abs(est.n_iter_ - ref.n_iter_) <= 1


def test_lass_device_path_refuses_direct_admm_by_name():
    """Only a sparse Cholesky (``solver="direct"``) is host-only; CG and a numeric rho run."""
    X, y, y_train = _moons(80)
    with pytest.raises(ValueError, match=r"solver='direct' \(ADMM with a sparse Cholesky "
                                         r"factor\) is not available on the fakedevice engine"):
        LaplacianAssignment(solver="direct").fit(dev(X), y_train)
    for params in (dict(solver="cg"), dict(rho=1.0), dict(solver="cg", rho=1.0)):
        assert LaplacianAssignment(**params).fit(dev(X), y_train).solver_ == "cg"
    # rho is unused by APG: solver='apg' with a numeric rho runs
    est = LaplacianAssignment(rho=1.0, solver="apg").fit(dev(X), y_train)
    assert est.solver_ == "apg"
    # the solver function itself
    L = laplacian(graph_from_neighbors(*knn_search(X, 6)))
    G = np.eye(2)[np.maximum(y_train, 0)] * (y_train >= 0)[:, None]
    with pytest.raises(ValueError, match="solver='direct' \\(ADMM with a sparse Cholesky "
                                         "factor\\) is not available for arrays on a device"):
        solve(L, G, 1.0, solver="direct", backend="xp")
    with pytest.raises(ValueError, match="backend must be"):
        solve(L, G, 1.0, backend="gpu")
    est = LaplacianAssignment().fit(dev(X), y_train)
    with pytest.raises(ValueError, match="X has 3 features"):
        est.predict(dev(np.zeros((2, 3))))


def test_lass_solve_xp_backend_equals_numpy_backend():
    """The solver function alone: ``backend="xp"`` on host arrays is the device loop."""
    X, y, y_train = _blobs(300)
    L = laplacian(graph_from_neighbors(*knn_search(X, 8)))
    G = np.eye(3)[np.maximum(y_train, 0)] * (y_train >= 0)[:, None]
    a = solve(L, G, 1.0, tol=1e-10, max_iter=20000, solver="apg", backend="numpy")
    b = solve(L, G, 1.0, tol=1e-10, max_iter=20000, solver="apg", backend="xp")
    np.testing.assert_allclose(b.Z, a.Z, atol=1e-10)
    np.testing.assert_allclose(b.Xi, a.Xi, atol=1e-8)
    assert b.converged and abs(a.n_iter - b.n_iter) <= 1


# ----------------------------------------------------------------------------- ADMM (CG)

def _same_admm_fit(est, ref):
    """The device fit of ``solver="cg"`` against the host's: the same loop on the same A."""
    assert est._graph_state[0] == "fakedevice" and est.solver_ == ref.solver_ == "cg"
    assert est.converged_ and ref.converged_
    np.testing.assert_array_equal(est.assignments_, ref.assignments_)
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    assert est.n_iter_ == ref.n_iter_
    for key in ("change", "primal", "objective"):
        np.testing.assert_array_equal(est.history_[key], ref.history_[key])
    np.testing.assert_array_equal(est.multipliers_[1], ref.multipliers_[1])
    np.testing.assert_array_equal(est.state_[1], ref.state_[1])
    np.testing.assert_array_equal(est.rho_, ref.rho_)


@pytest.mark.parametrize("data", [_moons, _blobs])
@pytest.mark.parametrize("rho", ["auto", 0.5])
def test_lass_admm_cg_on_the_engine_equals_cpu(data, rho):
    X, y, y_train = data()
    Xq = X[::7] + 0.05
    ref, est = _fit_both(X, y_train, lam=1.0, rho=rho, solver="cg", n_neighbors=8,
                         knn_method="exact", tol=1e-8, max_iter=20000)
    _same_admm_fit(est, ref)
    assert est.objective_ == ref.objective_
    # the independent check: the device fit satisfies the KKT conditions to ADMM's KKT_FACTOR
    L = laplacian(ref.affinity_matrix_)
    G = np.eye(len(ref.classes_))[np.maximum(y_train, 0)] * (y_train >= 0)[:, None]
    assert kkt_residual(est.assignments_, L, G, 1.0)["max"] < 1e-6
    np.testing.assert_allclose(est.transform(dev(Xq)), ref.transform(Xq), atol=1e-10)
    np.testing.assert_array_equal(est.predict(dev(Xq)), ref.predict(Xq))


@pytest.mark.parametrize("data", [_moons, _blobs])
def test_lass_auto_with_numeric_rho_takes_admm_cg_on_the_engine(data):
    """``solver="auto"`` with a numeric rho below APG_MIN_N items: ADMM on both, a dense
    Cholesky on the host (300 <= DENSE_MAX_N items), block CG on the device."""
    X, y, y_train = data()
    tol = 1e-10
    ref, est = _fit_both(X, y_train, lam=1.0, rho=1.0, n_neighbors=8, knn_method="exact",
                         tol=tol, max_iter=20000)
    assert ref.solver_ == "dense-cholesky" and est.solver_ == "cg"
    assert est.converged_ and ref.converged_
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-10)
    assert abs(est.n_iter_ - ref.n_iter_) <= 10       # observed 0 to 4
    L = laplacian(ref.affinity_matrix_)
    G = np.eye(len(ref.classes_))[np.maximum(y_train, 0)] * (y_train >= 0)[:, None]
    assert kkt_residual(est.assignments_, L, G, 1.0)["max"] < 1e-8
    if data is _moons:            # a unique minimiser (see the module docstring)
        np.testing.assert_allclose(est.assignments_, ref.assignments_, atol=1e-7)
    # the host's own CG run is the device's, iteration for iteration
    cg = LaplacianAssignment(lam=1.0, rho=1.0, solver="cg", n_neighbors=8,
                             knn_method="exact", tol=tol, max_iter=20000).fit(X, y_train)
    _same_admm_fit(est, cg)


@pytest.mark.filterwarnings("ignore:.*negligible against G:UserWarning")
def test_lass_admm_isolated_items_components_warm_and_path_on_the_engine():
    """ADMM on a principal submatrix (isolated items in closed form), rho per component
    from the host's eigenvalues, keep_path and warm starts along a lam path."""
    X, y, y_train = _blobs(200)
    W = graph_from_neighbors(*knn_search(X, 6, method="exact"), weights="heat").tolil()
    for i in (3, 50):
        W[i, :] = 0
        W[:, i] = 0
    W = W.tocsr()
    W.eliminate_zeros()
    y_train = y_train.copy()
    y_train[3], y_train[50] = 1, -1
    params = dict(affinity="precomputed", solver="cg", tol=1e-8, max_iter=20000,
                  keep_path=True)
    ref = LaplacianAssignment(lam=1.0, **params).fit(W, y_train)
    est = LaplacianAssignment(lam=1.0, **params).fit(DeviceCSR(W), y_train)
    _same_admm_fit(est, ref)
    assert isinstance(est.rho_, np.ndarray) and np.ptp(est.rho_) > 0   # two components
    np.testing.assert_allclose(est.assignments_[3], [0.0, 1.0, 0.0])
    np.testing.assert_allclose(est.assignments_[50], [1 / 3] * 3)
    assert len(est.history_["scores"]) == est.n_iter_
    np.testing.assert_array_equal(est.history_["scores"][-1], ref.history_["scores"][-1])
    ref.set_params(keep_path=False, warm_start=True)
    est.set_params(keep_path=False, warm_start=True)
    for lam in (1.5, 3.0):
        ref.set_params(lam=lam).fit(W, y_train)
        est.set_params(lam=lam).fit(DeviceCSR(W), y_train)
        _same_admm_fit(est, ref)


def test_lass_admm_prunes_invisible_edges_on_the_engine():
    """The host's edge pruning (issue #30) on a host copy of the device's Laplacian."""
    A = np.zeros((4, 4))
    for i, j, w in [(0, 1, 1.0), (1, 2, 1e-241), (2, 3, 1.0)]:
        A[i, j] = A[j, i] = w
    G = np.zeros((4, 2))
    G[0, 0] = G[3, 1] = 1.0
    fits = []
    for W in (sp.csr_matrix(A), DeviceCSR(sp.csr_matrix(A))):
        with pytest.warns(UserWarning, match="numerically disconnected"):
            fits.append(LaplacianAssignment(1e-3, affinity="precomputed",
                                            solver="cg").fit(W, G))
    ref, est = fits
    _same_admm_fit(est, ref)
    np.testing.assert_array_equal(est.transduction_, [0, 0, 1, 1])


def test_lass_solve_admm_xp_backend_equals_numpy_backend():
    """The solver function alone: ``backend="xp"`` takes the device's ADMM branches (A
    built on a host copy and moved, CG under "auto"), here on host arrays."""
    X, y, y_train = _blobs(300)
    L = laplacian(graph_from_neighbors(*knn_search(X, 8)))
    G = np.eye(3)[np.maximum(y_train, 0)] * (y_train >= 0)[:, None]
    for params in (dict(solver="cg"), dict(solver="cg", rho=2.0, stopping="change",
                                           check_every=3)):
        a = solve(L, G, 1.0, tol=1e-8, max_iter=20000, **params)
        b = solve(L, G, 1.0, tol=1e-8, max_iter=20000, backend="xp", **params)
        assert a.solver == b.solver == "cg" and a.converged and b.converged
        assert (a.n_iter, a.cg_iter) == (b.n_iter, b.cg_iter)
        for name in ("Z", "Z_raw", "Y", "U", "nu", "mu", "Xi", "rho"):
            np.testing.assert_array_equal(getattr(b, name), getattr(a, name))
        # warm start from the previous state
        a2 = solve(L, G, 2.0, tol=1e-8, max_iter=20000, Y0=a.Y, U0=a.U, **params)
        b2 = solve(L, G, 2.0, tol=1e-8, max_iter=20000, Y0=b.Y, U0=b.U, backend="xp",
                   **params)
        np.testing.assert_array_equal(b2.Z, a2.Z)
        assert a2.n_iter == b2.n_iter < a.n_iter
    # "auto" with a numeric rho: the host factors, the device takes CG
    a = solve(L, G, 1.0, rho=1.0, tol=1e-10, max_iter=20000)
    b = solve(L, G, 1.0, rho=1.0, tol=1e-10, max_iter=20000, backend="xp")
    assert (a.solver, b.solver) == ("dense-cholesky", "cg") and b.cg_iter > 0
    assert kkt_residual(b.Z, L, G, 1.0)["max"] < 1e-8


def test_spd_solver_on_a_device_matrix_takes_cg(monkeypatch):
    """SPDSolver given a device matrix (``_on_device``, patched here): CG under "auto",
    "direct" refused by name; the CG solve against a dense oracle."""
    rng = np.random.default_rng(0)
    M = sp.triu(sp.random(60, 60, density=0.1, random_state=0), 1)
    A = (laplacian(M + M.T) + sp.identity(60)).tocsr()
    B = rng.normal(size=(60, 3))
    monkeypatch.setattr(spd_module, "_on_device", lambda a: True)
    s = spd_module.SPDSolver(A, method="auto", rtol=1e-12)
    assert s.method_ == "cg"
    np.testing.assert_allclose(s.solve(B), np.linalg.solve(A.toarray(), B), atol=1e-9)
    with pytest.raises(ValueError, match="method='direct' factors on the host"):
        spd_module.SPDSolver(A, method="direct")
