"""LapRLS and LapSVM with the reduced expansion (an integer ``n_basis``) on a CUDA device
(CuPy) against the host fit: skipped without one. The numpy test double runs the same
comparisons in CI (``test_engine_reduced.py``).

Tolerances (stated): basis indices identical (drawn on the host); the device's
eigendecomposition of ``K_BB`` (cuSOLVER) differs from LAPACK's by rotations and rounding,
which leave the model unchanged up to the conditioning (on the host, another eigensolver
and a random rotation of ``T`` moved the decision values by 1e-11 of their scale), so with
float64 features the decision values of the direct solves agree to 1e-8 of their scale and
the labels are identical; with float32 features to 1e-4, labels identical off the margin.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_moons

from semisup import LapRLS, LapSVM
from semisup.engines import arrays
from semisup.kernels import make_kernel

from _cuda import require_cuda  # tests/engines/_cuda.py

pytestmark = pytest.mark.gpu

cupy = require_cuda()

from semisup.lapsvm.reduced import _spd_solve, basis_transform  # noqa: E402

host = arrays.to_host
RTOL = {"float64": 1e-8, "float32": 1e-4}


def _labelled(data, n=300, per_class=3, seed=0):
    X, y = (make_moons(n, noise=0.08, random_state=seed) if data == "moons"
            else make_blobs(n, n_features=6, centers=3, cluster_std=2.0, random_state=seed))
    rng = np.random.default_rng(seed)
    y_train = np.full_like(y, -1)
    for c in np.unique(y):
        y_train[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return X, y, y_train


def _host_decision(ref, X):
    """The host model's decision values with float64 kernel rows (as the device predicts)."""
    K = make_kernel(X, ref.X_fit_, sigma=ref.kernel_sigma_, training=False)[0]
    return K @ ref.alpha_ + ref.intercept_


def _labels_off_the_margin(pred, pred0, f0, atol):
    if f0.ndim == 1:
        sure = np.abs(f0) > 2 * atol
    else:
        top = np.sort(f0, axis=1)
        sure = top[:, -1] - top[:, -2] > 2 * atol
    assert sure.mean() > 0.9
    np.testing.assert_array_equal(pred[sure], pred0[sure])


def _compare(est, ref, X, Xq, rtol):
    np.testing.assert_array_equal(est.basis_indices_, ref.basis_indices_)
    assert isinstance(est.X_fit_, cupy.ndarray) and isinstance(est.alpha_, cupy.ndarray)
    np.testing.assert_array_equal(host(est.X_fit_), ref.X_fit_)
    f0, fq = _host_decision(ref, X), _host_decision(ref, Xq)
    atol = rtol * np.abs(f0).max()
    f = est.decision_function(cupy.asarray(X))
    assert isinstance(f, cupy.ndarray)                       # the input's type
    np.testing.assert_allclose(host(f), f0, atol=atol)
    np.testing.assert_allclose(host(est.intercept_), ref.intercept_, atol=atol)
    _labels_off_the_margin(host(est.transduction_), ref.transduction_, f0, atol)
    g = est.decision_function(Xq)                            # a host query: the host's type
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, fq, atol=atol)
    pred = est.predict(cupy.asarray(Xq))
    assert isinstance(pred, cupy.ndarray)
    _labels_off_the_margin(host(pred), ref._labels(fq), fq, atol)


def test_basis_transform_and_spd_solve_on_the_device():
    X = cupy.asarray(_labelled("blobs", 60)[0])
    K = arrays.rbf_kernel(X, 2.0, dtype="float64")
    T = basis_transform(K)
    assert isinstance(T, cupy.ndarray)
    np.testing.assert_allclose(host(T.T @ K @ T), np.eye(T.shape[1]), atol=1e-8)
    H = cupy.asarray(np.array([[4.0, 2.0], [2.0, 3.0]]))
    np.testing.assert_allclose(host(_spd_solve(H, cupy.ones((2, 1)))),
                               np.linalg.solve(host(H), np.ones((2, 1))), rtol=1e-12)
    S = cupy.asarray(np.array([[1.0, 1.0], [1.0, 1.0]]))      # singular: least squares
    np.testing.assert_allclose(host(_spd_solve(S, cupy.ones((2, 1)))), [[0.5], [0.5]],
                               rtol=1e-10)


@pytest.mark.parametrize("cls", [LapRLS, LapSVM])
@pytest.mark.parametrize("data", ["moons", "blobs"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_reduced_direct_solve_on_the_device_equals_host(cls, data, dtype):
    X, y, y_train = _labelled(data)
    Xq = X[::5] + 0.05
    params = dict(n_basis=40, random_state=0, gamma_A=1e-2, kernel_dtype=dtype,
                  use_bias=data == "moons", knn_method="exact")
    ref = cls(**params).fit(X, y_train)
    est = cls(**params).fit(cupy.asarray(X), y_train)
    assert est._graph_state == ("cupy", None) and est.converged_
    _compare(est, ref, X, Xq, RTOL[dtype])


@pytest.mark.parametrize("cls", [LapRLS, LapSVM])
def test_reduced_pcg_on_the_device_reaches_the_host_minimiser(cls):
    X, y, y_train = _labelled("blobs")
    params = dict(n_basis=40, random_state=0, gamma_A=1e-2, knn_method="exact")
    ref = cls(**params).fit(X, y_train)
    est = cls(solver="pcg", early_stopping="grad", stop_tol=1e-9, max_iter=3000,
              **params).fit(cupy.asarray(X), y_train)
    assert est.converged_ and est.stop_reason_ == "grad"
    _compare(est, ref, X, X[::7] + 0.05, 1e-6)
    st = cls(solver="pcg", early_stopping="stability", **params)
    st.fit(cupy.asarray(X), y_train)
    assert st.stop_reason_ == "stability" and st.n_iter_ < 3000


def test_reduced_on_the_device_refuses_what_it_cannot_do():
    X, y, y_train = _labelled("moons", 80)
    with pytest.raises(ValueError, match="basis='kmeans\\+\\+'"):
        LapSVM(n_basis=20, basis="kmeans++").fit(cupy.asarray(X), y_train)
    with pytest.raises(ValueError, match="kernel='linear'"):
        LapRLS(n_basis=20, kernel="linear").fit(cupy.asarray(X), y_train)
