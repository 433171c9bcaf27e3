"""LaplacianAssignment (LASS) on the device path, run with numpy through the test double.

``NumpyArrayEngine`` (``test_engine_estimators.py``) takes exactly the path a CuPy input
takes: the graph on the engine, the Laplacian built there, APG by the array-module loop
(``solve(backend="xp")``: :func:`semisup.lass.apg.lanczos_max` for the step), fitted arrays
and predictions through the engine. ``test_gpu_lass.py`` repeats these with real CuPy.

Tolerances. Below :data:`semisup.lass.apg.LANCZOS_MIN_N` items both paths take the
Gershgorin step and run the same loop, so their iterates agree to rounding: assignments to
1e-10 and the same number of iterations (+-1) at ``tol=1e-10``. Above it the steps differ
(ARPACK against our Lanczos, both ``tol=1e-3`` and :data:`~semisup.lass.apg.LIP_SAFETY`):
each fit stops at a certified gap ``F - F* <= tol |F|``, so the objectives agree to
``2 tol |F|`` and, at ``tol=1e-10``, the assignments to 1e-6 (LASS is not strongly convex:
``Z`` is pinned down less tightly than ``F``; observed 6e-14 on two moons). Labels are
identical in every case.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import LaplacianAssignment
from semisup.graph import graph_from_neighbors, knn_search, laplacian
from semisup.lass import apg as apg_module
from semisup.lass import solve
from semisup.lass.apg import lanczos_max

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


def test_lass_device_path_refuses_admm_by_name():
    X, y, y_train = _moons(80)
    for solver in ("direct", "cg"):
        with pytest.raises(ValueError, match=rf"solver='{solver}' \(ADMM\) is not available "
                                             "on the fakedevice engine"):
            LaplacianAssignment(solver=solver).fit(dev(X), y_train)
    with pytest.raises(ValueError, match="a numeric rho with solver='auto' selects ADMM"):
        LaplacianAssignment(rho=1.0).fit(dev(X), y_train)
    # rho is unused by APG: solver='apg' with a numeric rho runs
    est = LaplacianAssignment(rho=1.0, solver="apg").fit(dev(X), y_train)
    assert est.solver_ == "apg"
    # the solver function itself
    L = laplacian(graph_from_neighbors(*knn_search(X, 6)))
    G = np.eye(2)[np.maximum(y_train, 0)] * (y_train >= 0)[:, None]
    with pytest.raises(ValueError, match="solver='cg' \\(ADMM\\) is not available for arrays "
                                         "on a device"):
        solve(L, G, 1.0, solver="cg", backend="xp")
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
