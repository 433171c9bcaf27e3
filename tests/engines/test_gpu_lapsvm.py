"""LapSVM and LapRLS with the full kernel on a CUDA device (CuPy) against the host fit:
skipped without one. The device twins of ``test_engine_lapsvm.py`` (same settings and
tolerances: the same stopping iteration, identical labels, decision values to 1e-10 of
their scale for LapSVM / 1e-3 for LapRLS with a float64 kernel, 1e-4 for LapSVM with a
float32 one; solver='auto' up to 8000 points, 'newton' and 'closed_form': the host's Newton
against the device's dense solves, the same steps, 1e-8 of the scale, 1e-6 at
gamma_A = 1e-6).

Run by ``tools/gpu_check.sh`` (``pytest -m gpu tests/engines``).
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_moons

from semisup import LapRLS, LapSVM

from _cuda import require_cuda  # tests/engines/_cuda.py

pytestmark = pytest.mark.gpu

cupy = require_cuda()


def _data(kind, n, per_class=5, seed=0):
    if kind == "moons":
        X, y = make_moons(n, noise=0.1, random_state=seed)
    else:
        X, y = make_blobs(n, centers=3, cluster_std=1.5, random_state=1)
    rng = np.random.default_rng(seed)
    y_train = np.full_like(y, -1)
    for c in np.unique(y):
        y_train[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return X, y, y_train


def _same_fit(est, ref, X, Xq, rtol):
    np.testing.assert_array_equal(est.n_iter_per_class_, ref.n_iter_per_class_)
    assert est.stop_reason_ == ref.stop_reason_
    assert isinstance(est.alpha_, cupy.ndarray) and isinstance(est.X_fit_, cupy.ndarray)
    f0 = ref.decision_function(X)
    atol = rtol * np.abs(f0).max()
    f = est.decision_function(cupy.asarray(X))
    assert isinstance(f, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(f), f0, atol=atol)
    np.testing.assert_array_equal(cupy.asnumpy(est.transduction_), ref.transduction_)
    np.testing.assert_allclose(est.decision_function(Xq), ref.decision_function(Xq), atol=atol)
    pred = est.predict(cupy.asarray(Xq))
    assert isinstance(pred, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(pred), ref.predict(Xq))


@pytest.mark.parametrize("cls,rtol", [(LapSVM, 1e-10), (LapRLS, 1e-3)])
def test_stability_stopping_above_2000_points_equals_host(cls, rtol):
    """n = 2500 > 2000, solver='pcg' on both: PCG with the stability check."""
    X, y, y_train = _data("blobs", 2500)
    ref = cls(n_basis=None, solver="pcg", gamma_A=1e-2).fit(X, y_train)
    est = cls(solver="pcg", gamma_A=1e-2).fit(cupy.asarray(X), cupy.asarray(y_train))
    assert ref.stop_reason_ == "stability"
    _same_fit(est, ref, X, X[::37] + 0.03, rtol)
    assert est.history_["stability"] == ref.history_["stability"]


def test_float32_kernel_equals_host():
    X, y, y_train = _data("moons", 600)
    params = dict(solver="pcg", kernel_dtype="float32", gamma_A=1e-2, use_bias=True)
    ref = LapSVM(**params).fit(X, y_train)
    est = LapSVM(**params).fit(cupy.asarray(X), y_train)
    _same_fit(est, ref, X, X[::11] + 0.05, 1e-4)


@pytest.mark.parametrize("cls,rtol", [(LapSVM, 1e-10), (LapRLS, 1e-3)])
def test_pcg_rules_equal_host(cls, rtol):
    X, y, y_train = _data("blobs", 300, per_class=3)
    params = dict(solver="pcg", gamma_A=1e-2, early_stopping="stability", stop_every=3,
                  joint_stopping=False, laplacian_power=2)
    ref = cls(**params).fit(X, y_train)
    est = cls(**params).fit(cupy.asarray(X), y_train)
    _same_fit(est, ref, X, X[::11] + 0.05, rtol)


def test_validation_stopping_equals_host():
    X, y, y_train = _data("blobs", 400, per_class=3)
    params = dict(solver="pcg", early_stopping="validation", stop_every=2, gamma_A=1e-2)
    ref = LapSVM(**params).fit(X, y_train, X_val=X[::4], y_val=y[::4])
    est = LapSVM(**params).fit(cupy.asarray(X), y_train, X_val=cupy.asarray(X[::4]),
                               y_val=y[::4])
    assert ref.stop_reason_ == "validation"
    _same_fit(est, ref, X, X[::4], 1e-10)


@pytest.mark.parametrize("cls", [LapSVM, LapRLS])
@pytest.mark.parametrize("gamma_A", [1e-2, 1e-6])
def test_auto_up_to_8000_points_solves_directly_as_the_host(cls, gamma_A):
    """solver='auto' at 2500 points: the host's Newton (Woodbury steps) / closed form
    against the device's dense LU solves."""
    X, y, y_train = _data("blobs", 2500)
    ref = cls(gamma_A=gamma_A, use_bias=True).fit(X, y_train)
    est = cls(gamma_A=gamma_A, use_bias=True).fit(cupy.asarray(X), cupy.asarray(y_train))
    assert ref.stop_reason_ == "error vectors unchanged"
    _same_fit(est, ref, X, X[::37] + 0.03, 1e-8 if gamma_A > 1e-3 else 1e-6)


@pytest.mark.parametrize("cls,solver", [(LapSVM, "newton"), (LapRLS, "closed_form")])
def test_direct_solvers_by_name_equal_host(cls, solver):
    X, y, y_train = _data("moons", 200, per_class=3)
    ref = cls(solver=solver, gamma_A=1e-3).fit(X, y_train)
    est = cls(solver=solver, gamma_A=1e-3).fit(cupy.asarray(X), y_train)
    _same_fit(est, ref, X, X[::7] + 0.05, 1e-8)


def test_refuses_what_it_cannot_do():
    X, y, y_train = _data("moons", 80, per_class=3)
    with pytest.raises(ValueError, match=r"LapSVM\(solver='dual'\) is not available"):
        LapSVM(solver="dual").fit(cupy.asarray(X), y_train)
    with pytest.raises(ValueError, match=r"LapRLS\(warm_start=True\) is not available"):
        LapRLS(warm_start=True).fit(cupy.asarray(X), y_train)
