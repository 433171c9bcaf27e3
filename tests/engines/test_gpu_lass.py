"""LaplacianAssignment (LASS) on a CUDA device (CuPy) against the CPU path: skipped without one.

The GPU twins of ``test_engine_lass.py`` (run by ``tools/gpu_check.sh``, ``pytest -m gpu
tests/engines``). Tolerances as there, with cuSPARSE's own summation order: below
:data:`semisup.lass.apg.LANCZOS_MIN_N` items both paths take the same step and the same
loop, so at ``tol=1e-10`` the assignments agree to 1e-8 and the labels are identical;
with the Lanczos step (ARPACK on the host, :func:`semisup.linalg.psd.lanczos_max` on the
device) objectives agree to ``2 tol |F|``, assignments to 1e-6.

ADMM with block-CG Z-updates (``solver="cg"``, or ``"auto"`` with a numeric rho): the same
loop on the same ``A`` (built on the host), with cuSPARSE's summation order in the products,
so the inexact CG solves and the stopping iteration may differ slightly: iterations within
10, objectives to 1e-9 relative, KKT residuals below 1e-6, labels identical, assignments to
1e-6 on two moons (a unique minimiser; see ``test_engine_lass.py``).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_moons

from semisup import LaplacianAssignment
from semisup.graph import graph_from_neighbors, knn_search, laplacian
from semisup.lass import apg as apg_module
from semisup.lass import solve
from semisup.lass.kkt import kkt_residual
from semisup.linalg.spd import SPDSolver

from _cuda import require_cuda  # tests/engines/_cuda.py

pytestmark = pytest.mark.gpu

cupy = require_cuda()

import cupyx.scipy.sparse as cusparse  # noqa: E402  (after the skips)


def host(a):
    return cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else a


def _data(kind="moons", n=300, per_class=4, seed=0):
    if kind == "moons":
        X, y = make_moons(n, noise=0.08, random_state=seed)
    else:
        X, y = make_blobs(n, centers=3, cluster_std=1.5, random_state=seed + 1)
    rng = np.random.default_rng(seed)
    y_train = np.full_like(y, -1)
    for c in np.unique(y):
        y_train[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return X, y, y_train


def _same_fit(est, ref, atol):
    assert est._graph_state[0] == "cupy" and est.solver_ == ref.solver_ == "apg"
    assert isinstance(est.assignments_, cupy.ndarray)
    assert isinstance(est.transduction_, cupy.ndarray)
    np.testing.assert_allclose(host(est.assignments_), ref.assignments_, atol=atol)
    np.testing.assert_array_equal(host(est.transduction_), ref.transduction_)
    assert est.converged_ and ref.converged_
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-8)


@pytest.mark.parametrize("kind", ["moons", "blobs"])
def test_lass_on_cupy_equals_cpu(kind):
    X, y, y_train = _data(kind)
    Xq = X[::7] + 0.05
    params = dict(lam=1.0, n_neighbors=8, knn_method="exact", tol=1e-10, max_iter=20000)
    ref = LaplacianAssignment(**params).fit(X, y_train)
    est = LaplacianAssignment(**params).fit(cupy.asarray(X), cupy.asarray(y_train))
    _same_fit(est, ref, atol=1e-8)
    assert abs(est.n_iter_ - ref.n_iter_) <= 2
    assert isinstance(est.multipliers_[1], cupy.ndarray)
    np.testing.assert_allclose(host(est.multipliers_[1]), ref.multipliers_[1], atol=1e-6)
    P = est.transform(cupy.asarray(Xq))
    assert isinstance(P, cupy.ndarray)
    np.testing.assert_allclose(host(P), ref.transform(Xq), atol=1e-8)
    lab = est.predict(cupy.asarray(Xq))
    assert isinstance(lab, cupy.ndarray)
    np.testing.assert_array_equal(host(lab), ref.predict(Xq))
    P = est.predict_proba(Xq)                      # a host query answers on the host
    assert isinstance(P, np.ndarray)
    np.testing.assert_allclose(P, ref.predict_proba(Xq), atol=1e-8)


def test_lass_lanczos_step_on_cupy(monkeypatch):
    monkeypatch.setattr(apg_module, "LANCZOS_MIN_N", 100)
    X, y, y_train = _data("moons")
    tol = 1e-10
    params = dict(lam=1.0, n_neighbors=8, tol=tol, max_iter=50000)
    ref = LaplacianAssignment(**params).fit(X, y_train)
    est = LaplacianAssignment(**params).fit(cupy.asarray(X), y_train)
    _same_fit(est, ref, atol=1e-6)
    assert abs(est.objective_ - ref.objective_) <= 2 * tol * abs(ref.objective_) + 1e-12
    # the device Lanczos on a cupyx Laplacian: a Ritz value within ARPACK's tolerance
    L = laplacian(ref.affinity_matrix_)
    top = np.linalg.eigvalsh(L.toarray())[-1]
    v0 = cupy.asarray(apg_module.arpack_start(L.shape[0]))
    lmax = apg_module.lanczos_max(cusparse.csr_matrix(L), v0, tol=1e-3)
    assert top * (1 - 1e-3) <= lmax <= top * (1 + 1e-12)


def test_lass_precomputed_cupyx_affinity_with_isolated_items():
    """A cupyx affinity; two isolated items (one labelled) take the closed form and the
    solver runs on the principal submatrix of the others."""
    X, y, y_train = _data("blobs", 200)
    W = graph_from_neighbors(*knn_search(X, 6, method="exact"), weights="heat").tolil()
    for i in (3, 50):
        W[i, :] = 0
        W[:, i] = 0
    W = W.tocsr()
    W.eliminate_zeros()
    y_train = y_train.copy()
    y_train[3] = 1
    params = dict(affinity="precomputed", lam=1.0, tol=1e-10, max_iter=20000)
    with pytest.warns(UserWarning):   # the host's "negligible" warning for the labelled one
        ref = LaplacianAssignment(**params).fit(W, y_train)
    with pytest.warns(UserWarning):
        est = LaplacianAssignment(**params).fit(cusparse.csr_matrix(W), y_train)
    assert est._graph_state == ("cupy", None)
    _same_fit(est, ref, atol=1e-8)
    np.testing.assert_allclose(host(est.assignments_[3]), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(host(est.assignments_[50]), [1 / 3] * 3)
    Wq = W[:20]
    np.testing.assert_allclose(host(est.transform(cusparse.csr_matrix(Wq))),
                               ref.transform(Wq), atol=1e-8)


def test_lass_G_target_keep_path_and_warm_start_on_cupy():
    X, y, _ = _data("blobs", 240)
    rng = np.random.default_rng(3)
    G = rng.uniform(-1, 1, size=(240, 4)) * (rng.random((240, 4)) < 0.1)
    params = dict(lam=0.5, tol=1e-8, max_iter=20000, keep_path=True)
    ref = LaplacianAssignment(**params).fit(X, G)
    est = LaplacianAssignment(**params).fit(cupy.asarray(X), cupy.asarray(G))
    _same_fit(est, ref, atol=1e-7)
    assert len(est.history_["scores"]) == est.n_iter_
    Xq = cupy.asarray(X[::12] + 0.05)
    staged = list(est.staged_predict(Xq))
    assert len(staged) == est.n_iter_ and isinstance(staged[-1], cupy.ndarray)
    np.testing.assert_array_equal(host(staged[-1]), ref.predict(host(Xq)))
    est.set_params(keep_path=False, warm_start=True, lam=0.7).fit(cupy.asarray(X),
                                                                   cupy.asarray(G))
    ref.set_params(keep_path=False, warm_start=True, lam=0.7).fit(X, G)
    np.testing.assert_allclose(host(est.assignments_), ref.assignments_, atol=1e-7)


def test_lass_on_cupy_refuses_direct_admm():
    X, y, y_train = _data("moons", 80)
    with pytest.raises(ValueError, match=r"solver='direct' \(ADMM with a sparse Cholesky "
                                         r"factor\) is not available on the cupy"):
        LaplacianAssignment(solver="direct").fit(cupy.asarray(X), y_train)
    L = laplacian(graph_from_neighbors(*knn_search(X, 6)))
    G = np.eye(2)[np.maximum(y_train, 0)] * (y_train >= 0)[:, None]
    with pytest.raises(ValueError, match="not available for arrays on a device"):
        solve(cusparse.csr_matrix(L), cupy.asarray(G), 1.0, solver="direct")


# ----------------------------------------------------------------------------- ADMM (CG)

def _expert(y_train, K):
    return np.eye(K)[np.maximum(y_train, 0)] * (y_train >= 0)[:, None]


def _same_admm_fit(est, ref, atol=None):
    assert est._graph_state[0] == "cupy" and est.solver_ == "cg"
    assert isinstance(est.assignments_, cupy.ndarray)
    assert isinstance(est.transduction_, cupy.ndarray)
    assert isinstance(est.state_[1], cupy.ndarray)
    assert est.converged_ and ref.converged_
    np.testing.assert_array_equal(host(est.transduction_), ref.transduction_)
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-9)
    assert abs(est.n_iter_ - ref.n_iter_) <= 10
    if atol is not None:
        np.testing.assert_allclose(host(est.assignments_), ref.assignments_, atol=atol)


def _kkt(est, ref, y_train):
    L = laplacian(ref.affinity_matrix_)
    G = _expert(y_train, len(ref.classes_))
    return kkt_residual(host(est.assignments_), L, G, est.lam)["max"]


@pytest.mark.parametrize("kind", ["moons", "blobs"])
def test_lass_admm_cg_on_cupy_equals_cpu(kind):
    X, y, y_train = _data(kind)
    Xq = X[::7] + 0.05
    params = dict(lam=1.0, solver="cg", n_neighbors=8, knn_method="exact", tol=1e-8,
                  max_iter=20000)
    ref = LaplacianAssignment(**params).fit(X, y_train)
    est = LaplacianAssignment(**params).fit(cupy.asarray(X), cupy.asarray(y_train))
    assert ref.solver_ == "cg"
    _same_admm_fit(est, ref, atol=1e-6 if kind == "moons" else None)
    assert _kkt(est, ref, y_train) < 1e-6
    np.testing.assert_allclose(est.rho_, ref.rho_, rtol=1e-12)
    lab = est.predict(cupy.asarray(Xq))
    assert isinstance(lab, cupy.ndarray)
    np.testing.assert_array_equal(host(lab), ref.predict(Xq))


def test_lass_auto_with_numeric_rho_takes_admm_cg_on_cupy():
    X, y, y_train = _data("moons")
    params = dict(lam=1.0, rho=1.0, n_neighbors=8, knn_method="exact", tol=1e-8,
                  max_iter=20000)
    ref = LaplacianAssignment(**params).fit(X, y_train)   # 300 items: a dense Cholesky
    est = LaplacianAssignment(**params).fit(cupy.asarray(X), y_train)
    assert ref.solver_ == "dense-cholesky"
    _same_admm_fit(est, ref, atol=1e-6)
    assert _kkt(est, ref, y_train) < 1e-6
    assert est.rho_ == ref.rho_ == 1.0


@pytest.mark.filterwarnings("ignore:.*negligible against G:UserWarning")
def test_lass_admm_on_cupyx_affinity_with_isolated_items_and_warm_start():
    """ADMM on the principal submatrix of the non-isolated items, rho per component from
    the host's eigenvalues, then warm starts along a lam path."""
    X, y, y_train = _data("moons", 200)
    W = graph_from_neighbors(*knn_search(X, 6, method="exact"), weights="heat").tolil()
    for i in (3, 50):
        W[i, :] = 0
        W[:, i] = 0
    W = W.tocsr()
    W.eliminate_zeros()
    y_train = y_train.copy()
    y_train[3], y_train[50] = 1, -1
    params = dict(affinity="precomputed", lam=1.0, solver="cg", tol=1e-8, max_iter=20000)
    ref = LaplacianAssignment(**params).fit(W, y_train)
    est = LaplacianAssignment(**params).fit(cusparse.csr_matrix(W), y_train)
    assert est._graph_state == ("cupy", None)
    _same_admm_fit(est, ref, atol=1e-6)
    np.testing.assert_allclose(est.rho_, ref.rho_, rtol=1e-12)
    np.testing.assert_allclose(host(est.assignments_[3]), [0.0, 1.0])
    np.testing.assert_allclose(host(est.assignments_[50]), [0.5, 0.5])
    n_cold = ref.n_iter_
    for m in (ref, est):
        m.set_params(warm_start=True, lam=1.5)
    ref.fit(W, y_train)
    est.fit(cusparse.csr_matrix(W), y_train)
    _same_admm_fit(est, ref, atol=1e-6)
    assert est.n_iter_ < n_cold


def test_spd_solver_on_cupyx_takes_block_cg():
    rng = np.random.default_rng(0)
    X, _, _ = _data("moons", 120)
    A = (laplacian(graph_from_neighbors(*knn_search(X, 6))) + 0.5 * sp.identity(120)).tocsr()
    B = rng.normal(size=(120, 3))
    s = SPDSolver(cusparse.csr_matrix(A), method="auto", rtol=1e-12)
    assert s.method_ == "cg"
    Xs = s.solve(cupy.asarray(B))
    assert isinstance(Xs, cupy.ndarray)
    np.testing.assert_allclose(host(Xs), np.linalg.solve(A.toarray(), B), atol=1e-9)
    with pytest.raises(ValueError, match="method='direct' factors on the host"):
        SPDSolver(cusparse.csr_matrix(A), method="direct")
