"""Estimators on a dask X equal the same estimators on numpy; failures are loud; no dask."""

import os
import signal
import sys
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the [dask] extra is not installed")

from semisup import HarmonicFunction, LapRLS, LapSVM, LaplacianAssignment  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 5)) + 2.5 * y[:, None] * np.eye(5)[0]
    semi = np.full(n, -1)
    lab = rng.choice(n, 30, replace=False)
    semi[lab] = y[lab]
    X_new = rng.normal(size=(40, 5)) + 1.25 * np.eye(5)[0]
    return X, semi, X_new


def _dask(X):
    return da.from_array(X, chunks=(150, -1))  # four row chunks: the graph is tiled


@pytest.mark.parametrize("Est", [LapRLS, LapSVM])
def test_lapsvm_laprls_on_dask_equal_numpy(client, data, Est):
    X, y, X_new = data
    kw = dict(gamma_A=1e-2, gamma_I=1e-1, early_stopping="stability", n_basis=None,
              solver="pcg")                  # the full kernel on the workers (DaskKernel)
    a = Est(**kw).fit(X, y)
    b = Est(**kw).fit(_dask(X), y)
    assert type(b._graph_state[1][0]).__name__ == "Array"  # the points stayed on the workers
    assert (a.affinity_matrix_ != b.affinity_matrix_).nnz == 0
    assert b.n_iter_ == a.n_iter_ > 1
    np.testing.assert_allclose(b.alpha_, a.alpha_, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(b.transduction_, a.transduction_)
    np.testing.assert_allclose(b.decision_function(X_new), a.decision_function(X_new),
                               rtol=0, atol=1e-8)
    np.testing.assert_array_equal(b.predict(X_new), a.predict(X_new))


def test_dask_x_refuses_what_needs_x_in_memory(client, data):
    X, y, _ = data
    with pytest.raises(ValueError, match="solver='pcg'"):
        LapSVM(solver="dual", gamma_A=1e-2).fit(_dask(X), y)
    with pytest.raises(ValueError, match="kmeans"):
        LapSVM(n_basis=50, basis="kmeans++").fit(_dask(X), y)


@pytest.mark.parametrize("Est", [LapRLS, LapSVM])
@pytest.mark.parametrize("kw", [dict(), dict(n_basis=150), dict(n_basis=150, basis="leverage"),
                                dict(n_basis=150, solver="pcg", early_stopping=None,
                                     max_iter=5000, gamma_A=1e-2)])
def test_reduced_expansion_on_dask_equals_numpy(client, data, Est, kw):
    """The features K_nB T are computed in row blocks on the workers and agree with numpy's
    to 1e-6 relative on the same basis; the default (the full model's direct solve, the
    kernel's blocks gathered) too."""
    X, y, X_new = data
    a = Est(random_state=0, **kw).fit(X, y)
    b = Est(random_state=0, **kw).fit(_dask(X), y)
    if kw:
        np.testing.assert_array_equal(a.basis_indices_, b.basis_indices_)
    fa, fb = a.decision_function(X), b.decision_function(X)
    assert np.abs(fa - fb).max() <= 1e-6 * np.abs(fa).max()
    ga, gb = a.decision_function(X_new), b.decision_function(X_new)
    assert np.abs(ga - gb).max() <= 1e-6 * np.abs(ga).max()
    np.testing.assert_array_equal(b.transduction_, a.transduction_)


def test_laprls_default_on_the_issue_moons_is_the_same_on_dask(client):
    """Issue #30 item 4: LapRLS() on two moons (1 500 points, 20 labels) moved by 0.06
    between a numpy and a dask X (38 PCG iterations each, 2 labels flipped)."""
    from sklearn.datasets import make_moons
    X, t = make_moons(1500, noise=0.1, random_state=0)
    y = np.full(1500, -1)
    lab = np.random.default_rng(0).choice(1500, 20, replace=False)
    y[lab] = t[lab]
    a = LapRLS().fit(X, y)
    b = LapRLS().fit(da.from_array(X, chunks=(400, -1)), y)
    fa, fb = a.decision_function(X), b.decision_function(X)
    assert np.abs(fa - fb).max() <= 1e-6 * np.abs(fa).max()
    np.testing.assert_array_equal(b.transduction_, a.transduction_)


def test_harmonic_function_on_dask_equals_numpy(client, data):
    X, y, X_new = data
    a = HarmonicFunction().fit(X, y)
    b = HarmonicFunction().fit(_dask(X), y)
    assert (a.affinity_matrix_ != b.affinity_matrix_).nnz == 0
    np.testing.assert_allclose(b.label_distributions_, a.label_distributions_, atol=1e-8)
    np.testing.assert_array_equal(b.transduction_, a.transduction_)
    # new points: their neighbours among the training points are searched on the workers
    np.testing.assert_allclose(b.predict_proba(X_new), a.predict_proba(X_new), atol=1e-8)


def test_laplacian_assignment_on_dask_equals_numpy(client, data):
    X, y, X_new = data
    kw = dict(tol=1e-10, max_iter=5000)
    a = LaplacianAssignment(**kw).fit(X, y)
    b = LaplacianAssignment(**kw).fit(_dask(X), y)
    assert (a.affinity_matrix_ != b.affinity_matrix_).nnz == 0
    np.testing.assert_allclose(b.assignments_, a.assignments_, atol=1e-8)
    np.testing.assert_allclose(b.transform(X_new), a.transform(X_new), atol=1e-8)


def test_worker_killed_mid_fit_recovers_or_says_so(client, data, monkeypatch):
    """A worker dies after the kernel is persisted, before the first product: Dask
    recomputes its blocks (the fit completes with the right answer) or the error says a
    worker was lost; never a wrong answer."""
    import semisup.lapsvm.estimator as est_mod

    X, y, X_new = data
    kw = dict(gamma_A=1e-2, gamma_I=1e-1, n_basis=None, solver="pcg")
    ref = LapRLS(**kw).fit(X, y)
    real_pcg = est_mod.pcg
    victims = []

    def pcg_after_a_kill(K, *args, **kwargs):
        from distributed import wait
        wait(K.blocks)  # the kernel's row blocks are in the workers' memory
        holders = {w for ws in client.who_has(K.blocks).values() for w in ws}
        victim = sorted(holders)[0]
        victims.append(victim)
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)  # the worker process dies; its nanny starts another
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(  # until the scheduler lost the blocks
                victim in ws for ws in client.who_has(K.blocks).values()):
            time.sleep(0.05)
        return real_pcg(K, *args, **kwargs)

    monkeypatch.setattr(est_mod, "pcg", pcg_after_a_kill)
    try:
        got = LapRLS(**kw).fit(_dask(X), y)
    except Exception as exc:  # noqa: BLE001 - any failure must name the lost worker
        assert any(w in str(exc).lower() for w in ("worker", "killed", "lost")), exc
    else:
        np.testing.assert_allclose(got.alpha_, ref.alpha_, rtol=0, atol=1e-8)
    assert victims
    client.wait_for_workers(2, timeout=60)  # the nanny restarts it for the other tests


def test_missing_dask_names_the_extra(monkeypatch):
    from semisup.distributed import DaskKernel, require_dask

    monkeypatch.setitem(sys.modules, "dask", None)      # `import dask` now fails
    monkeypatch.setitem(sys.modules, "dask.array", None)
    with pytest.raises(ImportError, match=r"pip install 'semisup\[dask\]'"):
        require_dask()
    with pytest.raises(ImportError, match=r"semisup\[dask\]"):
        DaskKernel(np.ones((4, 2)))


@pytest.mark.parametrize("weights", ["heat", "self_tuning"])
def test_poisson_learning_on_dask_equals_numpy(client, data, weights):
    from semisup import PoissonLearning
    X, y, X_new = data
    a = PoissonLearning(weights=weights, tol=1e-10).fit(X, y)
    b = PoissonLearning(weights=weights, tol=1e-10).fit(_dask(X), y)
    assert (a.affinity_matrix_ != b.affinity_matrix_).nnz == 0
    np.testing.assert_allclose(b.scores_, a.scores_, atol=1e-8)
    np.testing.assert_allclose(b.decision_function(X_new), a.decision_function(X_new),
                               atol=1e-8)
