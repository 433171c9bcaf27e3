"""One BLAS thread for solvers of small problems: held inside, lifted after."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from semisup._threads import one_blas_thread_when


def blas_threads():
    return {i["filepath"]: i["num_threads"] for i in threadpool_info()
            if i["user_api"] == "blas"}


@pytest.mark.parametrize("small", [True, False])
def test_decorator_limits_inside_only_when_small(small):
    @one_blas_thread_when(lambda n: small)
    def inside(n):
        return blas_threads()

    with threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        seen = inside(3)
        after = blas_threads()
    assert 2 in before.values()  # else the test could not fail
    assert set(seen.values()) == ({1} if small else set(before.values()))
    assert after == before


def _spore_problem(n=40):
    from semisup.graph import knn_graph
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2)) + 3.0 * (np.arange(n) % 2)[:, None]
    y = np.where(np.arange(n) % 2, 1.0, -1.0)
    return knn_graph(X, 5), y, np.arange(6)


@pytest.mark.parametrize("solver", ["iip", "mkl"])
def test_spore_solvers_run_small_graphs_with_one_blas_thread(monkeypatch, solver):
    import semisup.spore.iip as iip
    import semisup.spore.mkl as mkl
    mod = iip if solver == "iip" else mkl
    seen = []
    real = mod.svm_dual

    def spy(*args, **kwargs):
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(mod, "svm_dual", spy)
    A, y, labeled = _spore_problem()

    def run():
        seen.clear()
        if solver == "iip":
            iip.iip_spore(A, y, labeled, C=1.0, beta=0.1, n_outer=2)
        else:
            mkl.mkl_spore([A, A], y, labeled, C=1.0, beta=0.1, n_outer=2)

    with threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        run()
        after = blas_threads()
        assert 2 in before.values()
        assert seen and all(set(s.values()) == {1} for s in seen)
        assert after == before
        # above the size, the caller's threads
        monkeypatch.setattr(mod, "ONE_THREAD_MAX_N", 10)
        run()
        assert seen and all(s == before for s in seen)


def test_fpc_path_runs_small_problems_with_one_blas_thread():
    # two OpenBLAS pools (numpy's, SciPy's) spinning on two cores made a default MC fit
    # 3x slower with two threads; the limit must hold inside the iteration, and be lifted after
    from semisup.completion.fpc import fpc_path
    rng = np.random.default_rng(0)
    X = rng.standard_normal((8, 40))
    Y = np.sign(rng.standard_normal((2, 40)))
    args = (X, np.ones(X.shape, bool), Y, rng.random(Y.shape) < 0.5)
    fpc_path(*args, variant="mc1", mu_final=1e-2)  # loads every BLAS the iteration uses
    seen = []
    with threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        fpc_path(*args, variant="mc1", mu_final=1e-2,
                 callback=lambda *a, **k: seen.append(blas_threads()))
        after = blas_threads()
    assert 2 in before.values()  # else the test could not fail
    assert seen and all(set(s.values()) == {1} for s in seen)
    assert after == before


def _issue_moons(n=1500):
    """Issue #30 item 4's problem: two moons, 1 500 points, 20 labels."""
    from sklearn.datasets import make_moons
    X, t = make_moons(n, noise=0.1, random_state=0)
    y = np.full(n, -1)
    lab = np.random.default_rng(0).choice(n, 20, replace=False)
    y[lab] = t[lab]
    return X, y


@pytest.mark.parametrize("n", [1500, 2500])
@pytest.mark.parametrize("name", ["LapRLS", "LapSVM"])
def test_lapsvm_defaults_do_not_depend_on_the_blas_threads(name, n):
    """The default fit is the minimiser of the (reduced) objective by a direct solve, not an
    early-stopped PCG iterate whose path amplifies rounding (0.06 apart before, 2 labels
    flipped; at 2 500 points LapRLS's PCG default moved 7e-4): 1 and 2 BLAS threads agree
    to 1e-6 relative, every label equal."""
    import semisup
    X, y = _issue_moons(n)
    grid = np.random.default_rng(1).uniform(-1.5, 2.5, size=(200, 2))
    out = []
    for threads in (1, 2):
        with threadpool_limits(threads, user_api="blas"):
            # another BLAS loaded by earlier tests (e.g. a solver's own) may be capped at 1
            assert max(blas_threads().values()) == threads
            est = getattr(semisup, name)().fit(X, y)
            out.append((est.decision_function(X), est.decision_function(grid),
                        est.transduction_))
    (f1, g1, t1), (f2, g2, t2) = out
    assert np.abs(f1 - f2).max() <= 1e-6 * np.abs(f1).max()
    assert np.abs(g1 - g2).max() <= 1e-6 * np.abs(g1).max()   # (away from the data too)
    np.testing.assert_array_equal(t1, t2)
    np.testing.assert_array_equal(np.sign(f1), np.sign(f2))
