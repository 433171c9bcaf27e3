"""The estimators' device path, run with numpy: the GPU engine's code with ``xp = numpy``.

``NumpyArrayEngine`` is :class:`semisup.engines.cupy.CupyEngine` with numpy and scipy.sparse
as its modules, registered for a marker array type (``DeviceArray``, ``DeviceCSR``): an
input of that type takes exactly the path a CuPy input takes (graph, solvers, LapRLS and
predictions through the engine), so CI checks the estimators' wiring against their CPU
path. ``test_gpu.py`` repeats these comparisons with real CuPy arrays.

Tolerances: the graph is the CPU one to rounding (1e-13); the harmonic and Poisson solves
run to ``tol=1e-10``, so label distributions and scores agree to 1e-8 of their scale and
the labels are identical; LapRLS by PCG run to the minimiser (``TO_MINIMISER``) against
the CPU closed form: decision values to 1e-7 of their scale with a float64 kernel
(``gamma_A=1e-4``), 1e-4 with a float32 one (``gamma_A=1e-2``). LapSVM / LapRLS against the
host's PCG and Newton: ``test_engine_lapsvm.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_moons

from semisup import HarmonicFunction, LapRLS, PoissonLearning, PoissonMBO
from semisup import engines
from semisup.engines import engine_for, register_engine
from semisup.engines.cupy import CupyEngine
from semisup.graph import graph_from_neighbors, knn_search

#: LapRLS's PCG run to the minimiser (a user's explicit choice; "auto" solves directly)
TO_MINIMISER = dict(solver="pcg", early_stopping="mixed_grad", stop_tol=1e-10, max_iter=3000)


class DeviceArray(np.ndarray):
    """Marks an array as living on the test double's "device"."""


DeviceArray.__module__ = "fakedevice.core"


class DeviceCSR(sp.csr_matrix):
    """Marks a sparse affinity as living on the test double's "device"."""


DeviceCSR.__module__ = "fakedevice.sparse"


class NumpyArrayEngine(CupyEngine):
    """The GPU engine's code with numpy + scipy.sparse as its array modules. Its
    ``from_host`` marks what it returns as ``DeviceArray`` (so that a test sees an answer
    given in the device's type) and ``to_host`` drops the mark."""

    name = "fakedevice"

    def __init__(self):
        self.xp, self.sparse = np, sp

    def asarray(self, a, dtype=None):
        if sp.issparse(a):
            return sp.csr_matrix(a)
        return np.asarray(a, dtype=dtype)

    @staticmethod
    def to_host(a):
        return a if sp.issparse(a) else np.asarray(a)

    def from_host(self, a):
        return np.asarray(a).view(DeviceArray)


@pytest.fixture(autouse=True)
def device_engine():
    register_engine("fakedevice", engines._module_is("fakedevice"),
                    f"{__name__}:NumpyArrayEngine")
    yield
    engines._REGISTRY.pop("fakedevice")
    engines._LOADED.pop("fakedevice", None)


def dev(a):
    return DeviceCSR(a) if sp.issparse(a) else np.asarray(a).view(DeviceArray)


def _moons(n=300, per_class=4, seed=0):
    X, y = make_moons(n, noise=0.08, random_state=seed)
    return X, y, _mask(y, per_class, seed)


def _blobs(n=300, per_class=4, seed=1):
    X, y = make_blobs(n, centers=3, cluster_std=1.5, random_state=seed)
    return X, y, _mask(y, per_class, seed)


def _mask(y, per_class, seed):
    rng = np.random.default_rng(seed)
    y_train = np.full_like(y, -1)
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        y_train[idx] = c
    return y_train


def _same_graph(a, b):
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    a.sort_indices()
    b.sort_indices()
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.data, b.data, rtol=1e-13)


def test_the_double_takes_the_device_path():
    X = dev(np.zeros((3, 2)))
    assert engine_for(X).name == "fakedevice" and not engine_for(X).host_arrays
    assert engine_for(DeviceCSR(sp.eye(3, format="csr"))).name == "fakedevice"


@pytest.mark.parametrize("data", [_moons, _blobs])
@pytest.mark.parametrize("cmn", [False, True])
def test_harmonic_on_the_engine_equals_cpu(data, cmn):
    X, y, y_train = data()
    Xq = X[::7] + 0.05
    params = dict(n_neighbors=8, knn_method="exact", tol=1e-10,
                  class_mass_normalization=cmn)
    ref = HarmonicFunction(solver="cg", **params).fit(X, y_train)
    est = HarmonicFunction(**params).fit(dev(X), dev(y_train))
    assert est._graph_state[0] == "fakedevice"
    _same_graph(est.affinity_matrix_, ref.affinity_matrix_)
    assert est.graph_sigma_ == pytest.approx(ref.graph_sigma_, rel=1e-14)
    np.testing.assert_allclose(est.label_distributions_, ref.label_distributions_,
                               atol=1e-8)
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    np.testing.assert_array_equal(est.classes_, ref.classes_)
    assert est.solver_ == "cg" and est.n_unreached_ == ref.n_unreached_ == 0
    np.testing.assert_allclose(est.predict_proba(dev(Xq)), ref.predict_proba(Xq), atol=1e-8)
    np.testing.assert_array_equal(est.predict(dev(Xq)), ref.predict(Xq))
    # host queries on a device model answer on the host
    P = est.predict_proba(Xq)
    assert type(P) is np.ndarray
    np.testing.assert_allclose(P, ref.predict_proba(Xq), atol=1e-8)


def test_harmonic_precomputed_device_affinity_equals_cpu():
    X, y, y_train = _blobs()
    d, i = knn_search(X, 8, method="exact")
    W = graph_from_neighbors(d, i, weights="heat")
    ref = HarmonicFunction(affinity="precomputed", solver="cg", tol=1e-10).fit(W, y_train)
    est = HarmonicFunction(affinity="precomputed", tol=1e-10).fit(DeviceCSR(W), y_train)
    assert est._graph_state == ("fakedevice", None)
    _same_graph(est.affinity_matrix_, W)
    np.testing.assert_allclose(est.label_distributions_, ref.label_distributions_, atol=1e-8)
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    Wq = W[:20]
    np.testing.assert_allclose(est.predict_proba(DeviceCSR(Wq)), ref.predict_proba(Wq),
                               atol=1e-8)
    np.testing.assert_array_equal(est.predict(Wq), ref.predict(Wq))
    with pytest.raises(ValueError, match="columns but the model was trained on"):
        est.predict(DeviceCSR(W[:5, :10]))


def test_device_affinity_is_checked_where_it_lives():
    W = sp.csr_matrix(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 2.0], [0.0, 2.0, 0.0]]))
    y = np.array([0, -1, 1])
    with pytest.raises(ValueError, match="not symmetric"):
        HarmonicFunction(affinity="precomputed").fit(DeviceCSR(sp.triu(W, format="csr")), y)
    with pytest.raises(ValueError, match="negative entries"):
        HarmonicFunction(affinity="precomputed").fit(DeviceCSR(-W), y)
    with pytest.raises(ValueError, match="must be square"):
        HarmonicFunction(affinity="precomputed").fit(DeviceCSR(W[:2]), y)
    bad = W.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        HarmonicFunction(affinity="precomputed").fit(DeviceCSR(bad), y)
    loops = W + sp.eye(3, format="csr")
    with pytest.warns(UserWarning, match="self-loops"):
        est = HarmonicFunction(affinity="precomputed").fit(DeviceCSR(loops), y)
    _same_graph(est.affinity_matrix_, W)
    # and the user's matrix is left as it was
    assert loops.diagonal().tolist() == [1.0, 1.0, 1.0]


def test_harmonic_refuses_what_the_engine_cannot_do():
    X, y, y_train = _moons(60)
    with pytest.raises(ValueError, match="solver='direct' is not available"):
        HarmonicFunction(solver="direct").fit(dev(X), y_train)
    with pytest.raises(ValueError, match="weights='self_tuning'"):
        HarmonicFunction(weights="self_tuning").fit(dev(X), y_train)
    with pytest.raises(ValueError, match="affinity='rbf_threshold'"):
        HarmonicFunction(affinity="rbf_threshold").fit(dev(X), y_train)
    est = HarmonicFunction().fit(dev(X), y_train)
    with pytest.raises(ValueError, match="X has 3 features"):
        est.predict(dev(np.zeros((2, 3))))


@pytest.mark.parametrize("data", [_moons, _blobs])
def test_poisson_on_the_engine_equals_cpu(data):
    X, y, y_train = data(per_class=1)
    Xq = X[::7] + 0.05
    params = dict(n_neighbors=8, knn_method="exact", tol=1e-10, class_priors="uniform")
    ref = PoissonLearning(**params).fit(X, y_train)
    est = PoissonLearning(**params).fit(dev(X), dev(y_train))
    assert est._graph_state[0] == "fakedevice"
    _same_graph(est.affinity_matrix_, ref.affinity_matrix_)
    scale = np.abs(ref.scores_).max()
    np.testing.assert_allclose(est.scores_, ref.scores_, atol=1e-8 * scale)
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    np.testing.assert_array_equal(est.class_priors_, ref.class_priors_)
    assert est.converged_ and abs(est.n_iter_ - ref.n_iter_) <= 3
    np.testing.assert_allclose(est.decision_function(dev(Xq)), ref.decision_function(Xq),
                               atol=1e-8 * scale)
    np.testing.assert_array_equal(est.predict(dev(Xq)), ref.predict(Xq))
    np.testing.assert_array_equal(est.predict(Xq), ref.predict(Xq))


def test_poisson_precomputed_and_string_classes():
    X, y, y_train = _blobs(per_class=2)
    names = np.array(["a", "b", "c"], dtype=object)
    y_str = np.where(y_train == -1, "-1", names[np.maximum(y_train, 0)]).astype(object)
    d, i = knn_search(X, 8, method="exact")
    W = graph_from_neighbors(d, i, weights="heat")
    ref = PoissonLearning(affinity="precomputed", tol=1e-10).fit(W, y_str)
    est = PoissonLearning(affinity="precomputed", tol=1e-10).fit(DeviceCSR(W), y_str)
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    assert est.transduction_.dtype == object      # strings cannot live on a device
    np.testing.assert_array_equal(est.predict(DeviceCSR(W[:9])), ref.predict(W[:9]))


def test_poisson_mbo_refuses_device_input():
    X, y, y_train = _moons(60)
    with pytest.raises(ValueError, match="PoissonMBO runs on the host"):
        PoissonMBO().fit(dev(X), y_train)


def test_host_model_answers_device_queries_in_their_type():
    X, y, y_train = _moons()
    for est in (HarmonicFunction(), PoissonLearning()):
        est.fit(X, y_train)
        out = est.predict(dev(X[:10]))
        assert type(out) is DeviceArray
        np.testing.assert_array_equal(out, est.predict(X[:10]))


def test_degeneracy_warning_on_the_device_path():
    from semisup.graph.degeneracy import DegenerateSolutionWarning
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(1500, 5))
    y_train = np.full(1500, -1)
    y_train[:2] = [0, 1]
    with pytest.warns(DegenerateSolutionWarning):
        HarmonicFunction(n_neighbors=10).fit(dev(X), y_train)


@pytest.mark.parametrize("data", [_moons, _blobs])
@pytest.mark.parametrize("dtype,gamma_A,rtol", [("float64", 1e-4, 1e-7),
                                                ("float32", 1e-2, 1e-4)])
@pytest.mark.parametrize("use_bias", [False, True])
def test_laprls_on_the_engine_equals_closed_form(data, dtype, gamma_A, rtol, use_bias):
    X, y, y_train = data(150, per_class=3)
    Xq = X[::5] + 0.05
    params = dict(gamma_A=gamma_A, gamma_I=1.0, kernel_dtype=dtype, use_bias=use_bias,
                  knn_method="exact", early_stopping=None)
    ref = LapRLS(solver="closed_form", **params).fit(X, y_train)
    est = LapRLS(**{**params, **TO_MINIMISER}).fit(dev(X), dev(y_train))
    assert est._graph_state[0] == "fakedevice" and est.converged_
    assert est.kernel_sigma_ == pytest.approx(ref.kernel_sigma_, rel=1e-12)
    _same_graph(est.affinity_matrix_, ref.affinity_matrix_)
    f0 = ref.decision_function(X)
    atol = rtol * np.abs(f0).max()
    np.testing.assert_allclose(est.decision_function(dev(X)), f0, atol=atol)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, atol=atol)
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    fq = ref.decision_function(Xq)
    np.testing.assert_allclose(est.decision_function(dev(Xq)), fq, atol=atol)
    np.testing.assert_allclose(est.decision_function(Xq), fq, atol=atol)
    np.testing.assert_array_equal(est.predict(dev(Xq)), ref.predict(Xq))


def test_laprls_precomputed_device_graph_equals_cpu():
    X, y, y_train = _moons(150, per_class=3)
    d, i = knn_search(X, 8, method="exact")
    W = graph_from_neighbors(d, i, weights="heat")
    params = dict(gamma_A=1e-4, affinity="precomputed", early_stopping=None)
    ref = LapRLS(solver="closed_form", **params).fit(X, y_train, W=W)
    est = LapRLS(**{**params, **TO_MINIMISER}).fit(X, y_train, W=DeviceCSR(W))
    assert est._graph_state == ("fakedevice", None)
    f0 = ref.decision_function(X)
    np.testing.assert_allclose(est.decision_function(X), f0, atol=1e-7 * np.abs(f0).max())
    # a host graph with a device X: the model lives with X
    est = LapRLS(**{**params, **TO_MINIMISER}).fit(dev(X), y_train, W=W)
    assert est._graph_state == ("fakedevice", None)
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)


def test_laprls_default_solves_directly_on_the_device_path():
    """LapRLS() at its defaults (solver='auto': the closed form up to 8000 points) on both
    paths: the same minimiser."""
    X, y, y_train = _moons(80)
    ref = LapRLS(gamma_A=1e-4).fit(X, y_train)
    est = LapRLS(gamma_A=1e-4).fit(dev(X), y_train)
    assert est.n_iter_ == ref.n_iter_ == 1 and est.stop_reason_ == ref.stop_reason_
    f0 = ref.decision_function(X)
    np.testing.assert_allclose(est.decision_function(dev(X)), f0, atol=1e-9 * np.abs(f0).max())
    np.testing.assert_array_equal(np.asarray(est.transduction_), ref.transduction_)


@pytest.mark.parametrize("name", ["SPORE", "GraphKernelSVM"])
def test_graph_estimators_without_a_device_fit_refuse_device_input(name):
    """Estimators whose fit runs on the host refuse a device X (and a device affinity) at
    the front-end, before any work, naming the estimator and the way out."""
    import semisup
    X, y, y_train = _moons(60)
    with pytest.raises(ValueError, match=rf"{name} runs on the host .* cupy.asnumpy"):
        getattr(semisup, name)().fit(dev(X), y_train)
    W = knn_search(X, 5)
    W = graph_from_neighbors(*W)
    with pytest.raises(ValueError, match=rf"{name} runs on the host"):
        getattr(semisup, name)(affinity="precomputed").fit(dev(W), y_train)


def test_the_refusal_names_every_estimator_with_a_device_fit():
    """``DEVICE_ESTIMATORS`` (named by the front-end's refusal) is exactly the public graph
    and kernel estimators whose ``_device_fit`` is set."""
    from importlib import import_module

    from semisup._registry import REGISTRY
    from semisup.graph.frontend import DEVICE_ESTIMATORS, GraphMixin
    flagged = {m.name for m in REGISTRY
               if issubclass(cls := getattr(import_module(m.module), m.name), GraphMixin)
               and cls._device_fit}
    named = set(DEVICE_ESTIMATORS.replace(" and ", ", ").split(", "))
    assert named == flagged
