"""LapRLS and LapSVM with the reduced expansion (an integer ``n_basis``) on the device path,
run with numpy through the test double of ``test_engine_estimators.py``: the GPU engine's
code with ``xp = numpy``, against the host fit with the same ``n_basis`` and
``random_state``.

Tolerances (stated): the basis indices are identical (drawn on the host in both); the graph
is the host's to rounding, the features ``K_nB T`` differ from the host's by the rounding
of two kernel formulas, so with float64 features the decision values of the direct solves
agree to 1e-10 of their scale; float32 features round those differences to float32, and
the decision values agree to 1e-4 of their scale (``gamma_A = 1e-3``). Labels are identical.
"""

from __future__ import annotations

import numpy as np
import pytest

from semisup import LapRLS, LapSVM
from semisup.graph import graph_from_neighbors, knn_search
from semisup.kernels import make_kernel

from test_engine_estimators import DeviceCSR, _blobs, _moons, dev
from test_engine_estimators import device_engine  # noqa: F401  (the double, registered)

RTOL = {"float64": 1e-10, "float32": 1e-4}


def _host_decision(ref, X):
    """The host model's decision values with float64 kernel rows, as the device path
    predicts whatever ``kernel_dtype`` (the host's float32 rows would round ``K alpha``,
    whose ``alpha = T beta`` is large, to ~1e-7 of ``|K| |alpha|``)."""
    K = make_kernel(X, ref.X_fit_, sigma=ref.kernel_sigma_, training=False)[0]
    return K @ ref.alpha_ + ref.intercept_


def _compare(est, ref, X, Xq, rtol):
    np.testing.assert_array_equal(est.basis_indices_, ref.basis_indices_)
    np.testing.assert_array_equal(np.asarray(est.X_fit_), ref.X_fit_)
    assert est.n_basis_ == ref.n_basis_
    assert est.kernel_sigma_ == pytest.approx(ref.kernel_sigma_, rel=1e-12)
    assert est.alpha_.shape == ref.alpha_.shape
    f0 = _host_decision(ref, X)
    atol = rtol * np.abs(f0).max()
    f = est.decision_function(dev(X))   # (the double's device arrays are numpy's)
    np.testing.assert_allclose(f, f0, atol=atol)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, atol=atol)
    np.testing.assert_array_equal(np.asarray(est.transduction_), ref.transduction_)
    fq = _host_decision(ref, Xq)
    np.testing.assert_allclose(est.decision_function(dev(Xq)), fq, atol=atol)
    out = est.decision_function(Xq)                   # host queries answer on the host
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, fq, atol=atol)
    np.testing.assert_array_equal(np.asarray(est.predict(dev(Xq))), ref._labels(fq))


@pytest.mark.parametrize("cls", [LapRLS, LapSVM])
@pytest.mark.parametrize("data", [_moons, _blobs])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("use_bias", [False, True])
def test_reduced_direct_solve_on_the_engine_equals_host(cls, data, dtype, use_bias):
    X, y, y_train = data(200, per_class=3)
    Xq = X[::5] + 0.05
    params = dict(n_basis=40, random_state=7, gamma_A=1e-3, kernel_dtype=dtype,
                  use_bias=use_bias, knn_method="exact")
    ref = cls(**params).fit(X, y_train)
    est = cls(**params).fit(dev(X), dev(y_train))
    assert est._graph_state == ("fakedevice", None)
    assert est.n_iter_ == ref.n_iter_ and est.converged_ and est.stop_reason_ == \
        ref.stop_reason_
    _compare(est, ref, X, Xq, RTOL[dtype])


@pytest.mark.parametrize("cls", [LapRLS, LapSVM])
@pytest.mark.parametrize("rule,tol,rtol", [("grad", 1e-9, 1e-6), (None, None, 1e-8)])
def test_reduced_pcg_on_the_engine_reaches_the_host_minimiser(cls, rule, tol, rtol):
    """The reduced PCG (exact line search, PR+) on the device arrays, run to a gradient
    tolerance or to a zero line-search step, ends at the host's direct solution (its decision
    values to ``rtol`` of their scale); its first iterations are the host PCG's (objective to
    1e-10: the device Laplacian's products round differently from the host's, which a
    converged PCG's path amplifies afterwards)."""
    X, y, y_train = _blobs(200, per_class=3)
    params = dict(n_basis=50, random_state=1, gamma_A=1e-2, knn_method="exact")
    ref = cls(**params).fit(X, y_train)                    # the direct solve (minimiser)
    pcg = dict(solver="pcg", early_stopping=rule, stop_tol=tol, max_iter=3000, **params)
    est = cls(**pcg).fit(dev(X), y_train)
    assert est.converged_ and est.stop_reason_ == ("grad" if rule else "line search step 0")
    _compare(est, ref, X, X[::7] + 0.05, rtol)
    first = dict(pcg, early_stopping=None, max_iter=8)
    with pytest.warns(UserWarning, match="max_iter"):
        h = cls(**first).fit(X, y_train)
    with pytest.warns(UserWarning, match="max_iter"):
        d = cls(**first).fit(dev(X), y_train)
    assert d.n_iter_ == h.n_iter_ == 8
    assert d.history_["obj"] == pytest.approx(h.history_["obj"], rel=1e-10)
    assert d.history_["grad_norm"] == pytest.approx(h.history_["grad_norm"], rel=1e-8)


@pytest.mark.parametrize("cls", [LapRLS, LapSVM])
def test_reduced_pcg_stability_rule_on_the_engine(cls):
    """The paper's stability rule reads the device decisions at its checks: it stops at the
    host's iteration with the host's labels (decision values to 1e-3 of their scale: an
    early-stopped iterate, whose path moves with the rounding)."""
    X, y, y_train = _blobs(200, per_class=3)
    params = dict(n_basis=50, random_state=1, gamma_A=1e-2, knn_method="exact",
                  solver="pcg", early_stopping="stability")
    ref = cls(**params).fit(X, y_train)
    est = cls(**params).fit(dev(X), y_train)
    assert est.stop_reason_ == ref.stop_reason_ == "stability"
    assert est.n_iter_ == ref.n_iter_
    assert est.history_["stability"] == ref.history_["stability"]
    _compare(est, ref, X, X[::7] + 0.05, 1e-3)


def test_reduced_on_the_engine_power_all_points_and_precomputed_graph():
    X, y, y_train = _moons(120, per_class=3)
    # laplacian_power=2 and m >= n (every point: the basis is all of X)
    params = dict(n_basis=500, laplacian_power=2, gamma_A=1e-3, random_state=0)
    ref = LapSVM(**params).fit(X, y_train)
    est = LapSVM(**params).fit(dev(X), y_train)
    assert est.n_basis_ == 120
    np.testing.assert_array_equal(est.basis_indices_, np.arange(120))
    _compare(est, ref, X, X[::3] + 0.05, 1e-10)
    # a precomputed device graph
    d, i = knn_search(X, 8, method="exact")
    W = graph_from_neighbors(d, i, weights="heat")
    params = dict(n_basis=30, affinity="precomputed", gamma_A=1e-3, random_state=2)
    ref = LapRLS(**params).fit(X, y_train, W=W)
    est = LapRLS(**params).fit(dev(X), y_train, W=DeviceCSR(W))
    _compare(est, ref, X, X[::3] + 0.05, 1e-10)


def test_reduced_on_the_engine_string_classes():
    X, y, y_train = _blobs(150, per_class=2)
    names = np.array(["a", "b", "c"], dtype=object)
    y_str = np.where(y_train == -1, "-1", names[np.maximum(y_train, 0)]).astype(object)
    params = dict(n_basis=30, gamma_A=1e-3, random_state=0)
    ref = LapSVM(**params).fit(X, y_str)
    est = LapSVM(**params).fit(dev(X), y_str)
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    np.testing.assert_array_equal(est.predict(dev(X[:20])), ref.predict(X[:20]))


def test_reduced_on_the_engine_refuses_what_it_cannot_do(monkeypatch):
    X, y, y_train = _moons(80)
    Xd = dev(X)
    for cls in (LapRLS, LapSVM):
        for kw, match in ((dict(basis="kmeans++"), "basis='kmeans\\+\\+'"),
                          (dict(basis="leverage"), "basis='leverage'"),
                          (dict(kernel="linear"), "kernel='linear'"),
                          (dict(warm_start=True), "warm_start=True"),
                          (dict(keep_path=True), "keep_path=True"),
                          (dict(solver="pcg", early_stopping="validation"),
                           "early_stopping='validation'")):
            with pytest.raises(ValueError, match=match):
                cls(n_basis=20, **kw).fit(Xd, y_train)
        with pytest.raises(ValueError, match="X_val"):
            cls(n_basis=20).fit(Xd, y_train, X_val=X[:5], y_val=y[:5])
    with pytest.raises(ValueError, match="solver='dual' trains the full expansion"):
        LapSVM(n_basis=20, solver="dual").fit(Xd, y_train)
    # the memory check speaks of the device's free memory (here the double's: the host's)
    monkeypatch.setattr("semisup.linalg.xp.free_memory", lambda xp: 1000)
    with pytest.raises(MemoryError, match=r"LapRLS\(n_basis=20\) on n=80 points"):
        LapRLS(n_basis=20).fit(Xd, y_train)


def test_auto_takes_the_reduced_expansion_where_the_kernel_does_not_fit(monkeypatch):
    """``n_basis="auto"`` on the device: the full kernel while it takes at most half of the
    free device memory, above it the host's reduced rule (the same fit as that integer
    n_basis), with a warning."""
    from sklearn.datasets import make_moons

    from semisup.lapsvm.reduced import auto_n_basis
    X, y = make_moons(2400, noise=0.1, random_state=0)
    y_train = np.full_like(y, -1)
    y_train[:10], y_train[-10:] = y[:10], y[-10:]
    full = LapRLS(gamma_A=1e-2, random_state=0).fit(dev(X), y_train)
    assert full.n_basis_ == 2400 and full.basis_indices_ is None
    # 2400^2 float64 entries are 46 MB: a device with 40 MB free holds no full kernel
    monkeypatch.setattr("semisup.linalg.xp.free_memory", lambda xp: 40_000_000)
    with pytest.warns(UserWarning, match="n_basis='auto'.*using the reduced expansion"):
        auto = LapRLS(gamma_A=1e-2, random_state=0).fit(dev(X), y_train)
    m = auto.n_basis_          # the host's rule, shrunk until the reduced fit's memory fits
    assert 200 <= m <= auto_n_basis(2400, 8, 0.5 * 40_000_000) < 2400
    ref = LapRLS(gamma_A=1e-2, random_state=0, n_basis=m).fit(dev(X), y_train)
    np.testing.assert_array_equal(auto.basis_indices_, ref.basis_indices_)
    np.testing.assert_array_equal(np.asarray(auto.transduction_), np.asarray(ref.transduction_))
