"""LapSVM and LapRLS with the full kernel on the device path, run with numpy (the test double
of ``test_engine_estimators.py``): the very PCG of the host on the engine's kernel and
Laplacian, against the host fit with the same settings.

Tolerances: the device kernel (``engines.arrays.rbf_kernel``) is the host's bit for bit
here and the Laplacian (``laplacian_apply``, ``V - s (W (s V))``) equals the host's CSR
Laplacian to rounding (1e-16), so PCG with a stopping rule takes the same path: the same
stopping iteration per class and identical labels. Decision values: 1e-10 of their scale
for LapSVM (float64 kernel; 1e-4 with a float32 one); 1e-3 for LapRLS, whose PCG, once the
quadratic is nearly solved, moves along nearly flat directions where the line search's
cancelling terms (``gamma_A a'K d + gamma_I fd'L f``) turn the Laplacian's rounding into
differences of up to ~1e-4 of the scale (measured; the objective alike). The tests
use ``gamma_A >= 1e-2``: at the default 1e-6 the path amplifies rounding further (the host
says so of ``solver="auto"``). ``solver="auto"`` up to 8000 points (and ``"newton"``,
``"closed_form"``) is Newton's method on both, the host's with Woodbury steps and the
device's with dense solves: the same steps, decision values to 1e-10-1e-8 of their scale
(1e-6 at gamma_A = 1e-6, condition numbers near 1e8).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_moons
from sklearn.exceptions import ConvergenceWarning

from semisup import LapRLS, LapSVM
from semisup.engines import arrays

from test_engine_estimators import _blobs, _mask, _moons, dev
from test_engine_estimators import device_engine  # noqa: F401  (the double, registered)


def _large(kind, n=2100):
    if kind == "moons":
        X, y = make_moons(n, noise=0.1, random_state=0)
    else:
        X, y = make_blobs(n, centers=3, cluster_std=1.5, random_state=1)
    return X, y, _mask(y, 5, 0)


def _rtol(cls):
    return 1e-10 if cls is LapSVM else 1e-3


def _same_fit(est, ref, X, Xq, rtol):
    """The device fit ``est`` equals the host fit ``ref``: stopping, labels, decisions."""
    np.testing.assert_array_equal(est.n_iter_per_class_, ref.n_iter_per_class_)
    assert est.stop_reason_ == ref.stop_reason_
    assert est.converged_ == ref.converged_ and est.n_basis_ == ref.n_basis_
    f0 = ref.decision_function(X)
    atol = rtol * np.abs(f0).max()
    f = est.decision_function(dev(X))
    np.testing.assert_allclose(f, f0, atol=atol)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, atol=atol)
    np.testing.assert_array_equal(np.asarray(est.transduction_), ref.transduction_)
    fq = ref.decision_function(Xq)
    np.testing.assert_allclose(est.decision_function(dev(Xq)), fq, atol=atol)
    np.testing.assert_array_equal(np.asarray(est.predict(dev(Xq))), ref.predict(Xq))


@pytest.mark.parametrize("cls", [LapSVM, LapRLS])
@pytest.mark.parametrize("kind", ["moons", "blobs"])
def test_stability_stopping_above_2000_points_equals_host(cls, kind):
    """n > 2000, solver='pcg' (the default PCG of 'auto' above 8000 points) on both: the
    paper's stability check stops at the same iteration with the same decisions."""
    X, y, y_train = _large(kind)
    ref = cls(n_basis=None, solver="pcg", gamma_A=1e-2).fit(X, y_train)
    est = cls(solver="pcg", gamma_A=1e-2).fit(dev(X), dev(y_train))
    assert ref.stop_reason_ == "stability" and ref.n_iter_ < 1000
    _same_fit(est, ref, X, X[::37] + 0.03, _rtol(cls))
    assert est.history_["stability"] == ref.history_["stability"]
    np.testing.assert_allclose(est.history_["obj"], ref.history_["obj"], rtol=1e-3)


@pytest.mark.parametrize("cls", [LapSVM, LapRLS])
@pytest.mark.parametrize("gamma_A", [1e-2, 1e-6])
def test_auto_up_to_8000_points_solves_directly_as_the_host(cls, gamma_A):
    """solver='auto' above 2000 points (and up to 8000): the host's Newton / closed form
    (Woodbury steps) against the device's dense solves: the same steps per class, decision
    values to 1e-8 of their scale (1e-6 at the default gamma_A = 1e-6, whose systems have
    condition numbers near 1e8), identical labels."""
    X, y, y_train = _large("blobs")
    ref = cls(gamma_A=gamma_A, use_bias=True).fit(X, y_train)
    est = cls(gamma_A=gamma_A, use_bias=True).fit(dev(X), dev(y_train))
    assert ref.stop_reason_ == "error vectors unchanged" and ref.n_basis_ == X.shape[0]
    _same_fit(est, ref, X, X[::37] + 0.03, 1e-8 if gamma_A > 1e-3 else 1e-6)
    np.testing.assert_allclose(est.history_["obj"], ref.history_["obj"], rtol=1e-8)


def test_float32_kernel_stability_stopping_equals_host():
    X, y, y_train = _large("blobs")
    params = dict(kernel_dtype="float32", gamma_A=1e-2, use_bias=True, solver="pcg")
    ref = LapSVM(n_basis=None, **params).fit(X, y_train)
    est = LapSVM(**params).fit(dev(X), y_train)
    _same_fit(est, ref, X, X[::37] + 0.03, 1e-4)


@pytest.mark.parametrize("cls", [LapSVM, LapRLS])
@pytest.mark.parametrize("params", [
    dict(early_stopping="stability", stop_every=3, joint_stopping=False),
    dict(early_stopping=["grad", "obj"], stop_tol=1e-3, use_bias=True, refresh_every=7),
    dict(early_stopping="pgrad", stop_tol=1e-4, laplacian_power=2, max_iter=40),
    dict(early_stopping=None, max_iter=60, laplacian="unnormalized")])
def test_pcg_settings_equal_host(cls, params):
    """solver='pcg' honours every stopping setting as on the host, at any n."""
    X, y, y_train = _blobs(300, per_class=3)
    with warnings.catch_warnings():      # (max_iter may end a run, on both alike)
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = cls(solver="pcg", gamma_A=1e-2, **params).fit(X, y_train)
        est = cls(solver="pcg", gamma_A=1e-2, **params).fit(dev(X), y_train)
    _same_fit(est, ref, X, X[::11] + 0.05, _rtol(cls))


@pytest.mark.parametrize("name", ["validation", "mixed"])
def test_validation_stopping_equals_host(name):
    X, y, y_train = _blobs(400, per_class=3)
    X_val, y_val = X[::4], y[::4]
    params = dict(solver="pcg", early_stopping=name, stop_every=2, gamma_A=1e-2)
    ref = LapSVM(**params).fit(X, y_train, X_val=X_val, y_val=y_val)
    est = LapSVM(**params).fit(dev(X), y_train, X_val=dev(X_val), y_val=dev(y_val))
    assert ref.stop_reason_ == name
    _same_fit(est, ref, X, X_val, 1e-10)
    assert est.history_[name] == ref.history_[name]
    with pytest.raises(ValueError, match=f"early_stopping='{name}' needs a validation set"):
        LapSVM(**params).fit(dev(X), y_train)


@pytest.mark.parametrize("data", [_moons, _blobs])
@pytest.mark.parametrize("use_bias", [False, True])
@pytest.mark.parametrize("solver", ["auto", "newton"])
def test_lapsvm_direct_solves_equal_host(data, use_bias, solver):
    """solver='auto' / 'newton' at n <= 2000: Newton on both (early_stopping ignored)."""
    X, y, y_train = data(200, per_class=3)
    params = dict(gamma_A=1e-2, use_bias=use_bias, solver=solver, early_stopping="grad")
    ref = LapSVM(**params).fit(X, y_train)
    est = LapSVM(**params).fit(dev(X), dev(y_train))
    _same_fit(est, ref, X, X[::7] + 0.05, 1e-10)


def test_laprls_closed_form_equals_host():
    X, y, y_train = _blobs(200, per_class=3)
    ref = LapRLS(solver="closed_form").fit(X, y_train)
    est = LapRLS(solver="closed_form").fit(dev(X), y_train)
    _same_fit(est, ref, X, X[::7] + 0.05, 1e-8)


def test_minimiser_cap_warns_with_its_advice():
    """gamma_A = 0 (the host's Newton then takes least squares): PCG to the minimiser on
    the device up to 2000 points, its cap said with its advice."""
    X, y, y_train = _moons(200, per_class=3)
    with pytest.warns(ConvergenceWarning, match="solver='auto' runs PCG to the minimiser"):
        est = LapRLS(gamma_A=0.0, max_iter=3).fit(dev(X), y_train)
    assert not est.converged_ and est.n_iter_ == 3


def test_fitted_arrays_stay_on_the_device_and_host_queries_answer_on_the_host():
    X, y, y_train = _moons(150, per_class=3)
    est = LapSVM(gamma_A=1e-2).fit(dev(X), y_train)
    assert est._graph_state[0] == "fakedevice" and est.basis_indices_ is None
    assert est.X_fit_.shape == X.shape and est.alpha_.shape == (150,)
    assert type(est.decision_function(X[:5])) is np.ndarray
    np.testing.assert_allclose(est.decision_function(X[:5]),
                               est.decision_function(dev(X[:5])), rtol=1e-14)


def test_laprls_fit_engine_function_is_the_project_pcg():
    """``engines.arrays.laprls_fit`` (the engine-level entry) runs lapsvm's PCG with the
    per-column ``mixed_grad`` rule: equal to the estimator's PCG with those settings."""
    X, y, y_train = _blobs(200, per_class=3)
    ref = LapRLS(solver="pcg", gamma_A=1e-2, early_stopping="mixed_grad", stop_tol=1e-6,
                 joint_stopping=False, refresh_every=50).fit(X, y_train)
    K = arrays.rbf_kernel(X, ref.kernel_sigma_, dtype="float64")
    Y = ref._encode(y_train, ref.classes_, y_train != -1)
    fit = arrays.laprls_fit(K, Y, arrays.laplacian_apply(ref.affinity_matrix_, "normalized"),
                            gamma_A=1e-2, gamma_I=ref.gamma_I, tol=1e-6)
    assert fit.converged and abs(fit.n_iter - ref.n_iter_) <= 2
    f0 = ref.decision_function(X)
    np.testing.assert_allclose(fit.decision, f0, atol=1e-3 * np.abs(f0).max())


def test_direct_solve_refused_before_the_graph_where_memory_is_short(monkeypatch):
    """solver='newton' whose kernel and Newton system exceed the free device memory:
    refused with the estimate and the way out, before the graph is built; solver='auto'
    takes PCG (to the minimiser, at 80 points) there instead."""
    X, y, y_train = _moons(80)
    monkeypatch.setattr("semisup.linalg.xp.free_memory", lambda xp: 100_000)
    with pytest.raises(MemoryError, match=r"LapSVM's direct solve on n=80 points .* needs "
                                          r"about .* Use solver='pcg'"):
        monkeypatch.setattr("semisup.lapsvm._device._prepare",
                            lambda *a: pytest.fail("the graph was built first"))
        LapSVM(solver="newton").fit(dev(X), y_train)
    monkeypatch.undo()
    monkeypatch.setattr("semisup.linalg.xp.free_memory", lambda xp: 400_000)
    est = LapSVM(gamma_A=1e-2).fit(dev(X), y_train)   # 51 KB kernel + 157 KB > half of it
    assert est.stop_reason_ in ("mixed_grad", "line search step 0")


@pytest.mark.parametrize("cls,kw,match", [
    (LapSVM, dict(kernel="linear"), "kernel='linear'"),
    (LapSVM, dict(solver="dual"), "solver='dual'"),
    (LapSVM, dict(warm_start=True), "warm_start=True"),
    (LapRLS, dict(keep_path=True), "keep_path=True")])
def test_device_path_refuses_what_it_cannot_do(cls, kw, match):
    X, y, y_train = _moons(80)
    with pytest.raises(ValueError, match=rf"{cls.__name__}\({match}\) is not available on "
                                         "the fakedevice engine"):
        cls(**kw).fit(dev(X), y_train)
