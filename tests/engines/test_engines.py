"""Engine dispatch: chosen by the input's type alone, one way, and open to a third engine."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import HarmonicFunction
from semisup import engines
from semisup.engines import (Engine, engine_for, engine_for_types, engine_name, get_engine,
                             register_engine)
from semisup.graph import knn_search
from semisup.graph.engine import InProcessEngine, fit_knn_graph, query_knn_affinity


class FakeArray(np.ndarray):
    """An array type from a module of its own, as a GPU or cluster array would be."""


FakeArray.__module__ = "fakearrays.core"


class RecordingEngine(InProcessEngine):
    """A third engine: the in-process computations on FakeArray input, counting its calls.
    It overrides only the search, as a GPU engine would; the recipes are shared."""

    name = "fake"
    calls: list[str] = []

    def knn_search(self, X, n_neighbors, *, metric="euclidean", Q=None, method="auto",
                   n_jobs=None, random_state=None):
        type(self).calls.append("knn" if Q is None else "query")
        return super().knn_search(np.asarray(X), n_neighbors, metric=metric,
                                  Q=None if Q is None else np.asarray(Q), method="exact")

    def check_points(self, est, X):
        return est._validate_points(np.asarray(X), reset=True).view(FakeArray)

    def fit_graph(self, est, X):
        return fit_knn_graph(self, est, X)

    def query_affinity(self, est, state, X_new):
        return query_knn_affinity(self, est, state, X_new)


@pytest.fixture
def fake_engine():
    register_engine("fake", lambda x: type(x).__module__.startswith("fakearrays"),
                    f"{__name__}:RecordingEngine")
    RecordingEngine.calls = []
    yield
    engines._REGISTRY.pop("fake")
    engines._LOADED.pop("fake", None)


def _blobs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y_true = np.arange(n) % 2
    X = rng.normal(size=(n, 3)) + 4.0 * y_true[:, None]
    y = np.full(n, -1)
    y[:4] = y_true[:4]
    return X, y


def test_in_memory_inputs_go_to_the_in_process_engine():
    X = np.zeros((4, 2))
    for x in (X, sp.csr_matrix(X), X.tolist(), X.astype(np.float32)):
        assert engine_name(x) == "numpy"
        assert engine_for(x) is get_engine("numpy")
    assert engine_for(X, None).name == "numpy"


def test_recognising_an_input_imports_nothing_optional():
    code = ("import sys, numpy as np; from semisup.engines import engine_for; "
            "from semisup.graph import knn_graph; knn_graph(np.eye(5), 2); "
            "print(sorted(m for m in ('dask', 'cupy', 'semisup.distributed') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_missing_engine_names_its_extra():
    class GpuLike:
        pass
    GpuLike.__module__ = "cupy._core.core"
    assert engine_name(GpuLike()) == "cupy"
    engines._LOADED.pop("cupy", None)
    try:
        import semisup.engines.cupy  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"semisup\[gpu\]"):
            engine_for(GpuLike())
    else:
        pytest.skip("the GPU engine's module is present")


def test_unknown_engine_and_bad_loader_are_refused():
    with pytest.raises(ValueError, match="no engine named"):
        get_engine("tpu")
    with pytest.raises(ValueError, match="module:attr"):
        register_engine("tpu", lambda x: False, "semisup.engines.tpu.TpuEngine")


def test_a_third_engine_serves_the_graph_front_end(fake_engine):
    X, y = _blobs()
    ref = HarmonicFunction(n_neighbors=5).fit(X, y)
    Xf = X.view(FakeArray)
    assert engine_for(Xf).name == "fake"
    est = HarmonicFunction(n_neighbors=5).fit(Xf, y)
    assert RecordingEngine.calls == ["knn"]
    # the mixin, not the engine, holds the fitted state
    assert est._graph_state[0] == "fake"
    assert est.graph_sigma_ == ref.graph_sigma_
    assert (est.affinity_matrix_ != ref.affinity_matrix_).nnz == 0
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    np.testing.assert_allclose(est.predict_proba(X[:7]), ref.predict_proba(X[:7]))
    assert RecordingEngine.calls == ["knn", "query"]
    # the public search dispatches the same way
    dist, ind = knn_search(Xf, 3)
    np.testing.assert_array_equal(ind, knn_search(X, 3)[1])


def test_two_engines_cannot_be_mixed(fake_engine):
    class GpuLike:
        pass
    GpuLike.__module__ = "cupy"
    with pytest.raises(ValueError, match="different engines"):
        engine_for(np.zeros((2, 2)).view(FakeArray), GpuLike())


def test_types_alone_choose_the_engine(fake_engine):
    """engine_for_types answers what engine_for answers for arrays of those types, for
    engines registered by module prefixes (the built-ins) and by a detect(x) callable (the
    fake one); None (an optional W) is ignored, two kinds refused."""
    class GpuLike:
        pass
    GpuLike.__module__ = "cupy._core.core"
    X = np.zeros((3, 2))
    Xf = X.view(FakeArray)
    for x in (X, sp.csr_matrix(X), X.tolist(), Xf):
        assert engine_for_types(type(x)) is engine_for(x)
        assert engine_for_types(type(x), type(None), None) is engine_for(x, None)
    assert engine_for_types(FakeArray).name == engine_name(Xf) == "fake"
    assert engine_name(GpuLike()) == "cupy"
    assert engine_for_types().name == "numpy"
    with pytest.raises(ValueError, match="different engines"):
        engine_for_types(FakeArray, GpuLike)


def test_the_kernel_takes_the_engine_it_is_given(fake_engine):
    """make_kernel(engine=...) uses the caller's engine instead of detecting one: an engine
    other than the in-process one computes the kernel (here: refuses to, as the interface
    does by default)."""
    from semisup.kernels import make_kernel
    X = np.random.default_rng(0).normal(size=(6, 2))
    K, sigma = make_kernel(X, engine=get_engine("numpy"))
    np.testing.assert_array_equal(K, make_kernel(X)[0])

    class NoKernel(Engine):
        name = "nokernel"
    with pytest.raises(NotImplementedError, match="computes no kernel"):
        make_kernel(X, sigma=1.0, engine=NoKernel())


def test_engine_interface_is_abstract():
    with pytest.raises(NotImplementedError):
        Engine().knn_search(np.zeros((3, 2)), 1)
