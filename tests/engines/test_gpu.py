"""The GPU engine on a CUDA device (CuPy) against the CPU path: skipped without one.

Run by ``tools/gpu_check.sh`` (``pytest -m gpu tests/engines``).
"""

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_moons
from sklearn.neighbors import NearestNeighbors

from semisup import LapRLS
from semisup.baselines.harmonic import harmonic_solve
from semisup.engines import arrays
from semisup.graph import graph_from_neighbors, knn_search, laplacian

from _cuda import require_cuda  # tests/engines/_cuda.py

pytestmark = pytest.mark.gpu

cupy = require_cuda()

from semisup.engines.cupy import CupyEngine  # noqa: E402  (after the skips)

host = arrays.to_host


def _points(n=400, d=12, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _graph(X, k=8):
    d, i = knn_search(X, k, method="exact")
    return graph_from_neighbors(d, i, weights="heat")


def test_array_modules_are_cupy():
    xp, sparse = arrays.array_modules(cupy.zeros(3))
    assert xp is cupy and sparse.__name__ == "cupyx.scipy.sparse"
    assert arrays.free_memory(cupy) > 0


@pytest.mark.parametrize("shape,c", [((1000, 1000), 10), ((777, 777), None), ((513, 300), 3),
                                     ((300, 1300), 21), ((2, 5), 1), ((4100, 257), 16)])
def test_product_f64_equals_the_widened_product(shape, c):
    """The CUDA kernel of ``product_f64`` (float32 K read, float64 sums) against the
    float64 product of the widened K on the host: to 1e-12 of the scale (the sums' order
    differs); the same bits on a second call (no atomics); shapes off the tiles (rows not
    a multiple of 64, columns of 256), V 1-D and wider than 16 columns."""
    from semisup.linalg.xp import product_f64
    rng = np.random.default_rng(1)
    K = rng.random(shape).astype(np.float32)
    V = rng.normal(size=(shape[0],) if c is None else (shape[0], c))
    ref = K.astype(np.float64).T @ V
    K_d, V_d = cupy.asarray(K), cupy.asarray(V)
    out = product_f64(K_d, V_d)
    assert isinstance(out, cupy.ndarray) and out.shape == ref.shape and out.dtype == np.float64
    np.testing.assert_allclose(host(out), ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    assert (host(product_f64(K_d, V_d)) == host(out)).all()


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_knn_equals_cpu(metric, dtype):
    X = make_blobs(3000, n_features=40, centers=20, random_state=0)[0].astype(dtype)
    d, i = arrays.knn_exact(cupy.asarray(X), 10, metric=metric)
    assert isinstance(d, cupy.ndarray) and d.dtype == np.float64 and i.dtype == np.int64
    d0, i0 = knn_search(X, 10, metric=metric, method="exact")
    np.testing.assert_array_equal(host(i), i0)
    np.testing.assert_allclose(host(d), d0, rtol=1e-10, atol=1e-12)


def test_knn_ties_and_duplicates_equal_cpu():
    g = np.arange(12.0)
    X = np.array([(a, b) for a in g for b in g])
    X = np.vstack([X, X[:30], np.repeat(X[50:51], 25, axis=0)])
    d, i = arrays.knn_exact(cupy.asarray(X), 6)
    d0, i0 = knn_search(X, 6, method="exact")
    d, i = host(d), host(i)
    np.testing.assert_allclose(d, d0, atol=1e-12)
    # which of more than m exactly tied points become candidates is the selection's choice
    # (on either side); the neighbours nearer than the k-th distance are the same
    for r in np.flatnonzero((i != i0).any(axis=1)):
        near = d0[r] < d0[r, -1]
        assert set(i[r][near]) == set(i0[r][near])
    assert (i != i0).any(axis=1).sum() <= 30


def test_knn_several_tiles_and_queries():
    X, Q = _points(2000, 30, 1), _points(300, 30, 2)
    d, i = arrays.knn_exact(cupy.asarray(X), 7, block_bytes=48 * 2000 * 128)
    d0, i0 = knn_search(X, 7, method="exact")
    np.testing.assert_array_equal(host(i), i0)
    np.testing.assert_allclose(host(d), d0, rtol=1e-10)
    d, i = arrays.knn_exact(cupy.asarray(X), 7, Q=cupy.asarray(Q))
    d0, i0 = NearestNeighbors(n_neighbors=7, algorithm="brute").fit(X).kneighbors(Q)
    np.testing.assert_array_equal(host(i), i0)
    np.testing.assert_allclose(host(d), d0, rtol=1e-8)


@pytest.mark.parametrize("weights", ["heat", "binary", "distance"])
def test_graph_equals_cpu(weights):
    d, i = knn_search(_points(), 8, method="exact")
    W, sigma = arrays.knn_graph(cupy.asarray(d), cupy.asarray(i), weights=weights)
    W0 = graph_from_neighbors(d, i, weights=weights)
    Wh = sp.csr_matrix(W.get())
    Wh.sort_indices()
    np.testing.assert_array_equal(Wh.indptr, W0.indptr)
    np.testing.assert_array_equal(Wh.indices, W0.indices)
    np.testing.assert_allclose(Wh.data, W0.data, rtol=1e-14)


@pytest.mark.parametrize("kind", ["unnormalized", "normalized"])
def test_laplacian_products_equal_cpu(kind):
    W = _graph(_points(300, 4))
    V = np.random.default_rng(0).normal(size=(300, 4))
    import cupyx.scipy.sparse as cusparse
    apply = arrays.laplacian_apply(cusparse.csr_matrix(W), kind)
    np.testing.assert_allclose(host(apply(cupy.asarray(V))), laplacian(W, kind=kind) @ V,
                               atol=1e-12)


def _two_components():
    X, y = make_blobs(600, centers=[[0, 0], [4, 0], [40, 40]], cluster_std=0.7,
                      random_state=0)
    return _graph(X), y


def test_harmonic_equals_cpu():
    W, y = _two_components()
    labeled = np.zeros(y.size, dtype=bool)
    labeled[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = True
    Y_l = np.eye(2)[y[labeled]]
    F, n_iter, converged, unreached = CupyEngine().harmonic_solve(W, labeled, Y_l, tol=1e-10)
    ref = harmonic_solve(W, labeled, Y_l, solver="cg", tol=1e-10)
    assert isinstance(F, cupy.ndarray) and converged
    np.testing.assert_array_equal(unreached, ref.unreached)
    np.testing.assert_allclose(host(F), ref.F, atol=1e-9)


def test_poisson_equals_numpy_path():
    W, y = _two_components()
    rng = np.random.default_rng(0)
    labeled_idx = np.concatenate([rng.choice(np.flatnonzero(y == c), 3, replace=False)
                                  for c in (0, 1)])
    y_idx = y[labeled_idx].copy()
    y_idx[[0, 3]] = 2
    U, n_iter, converged, unreached = CupyEngine().poisson_solve(W, labeled_idx, y_idx, 3,
                                                                 tol=1e-12)
    U0, n0, _, unreached0 = arrays.poisson_solve(W, labeled_idx, y_idx, 3, tol=1e-12)
    assert converged and abs(n_iter - n0) <= 2
    np.testing.assert_array_equal(unreached, unreached0)
    np.testing.assert_allclose(host(U), U0, atol=1e-9 * np.abs(U0).max())


@pytest.mark.parametrize("dtype,gamma_A,rtol", [("float64", 1e-4, 1e-7),
                                                ("float32", 1e-2, 1e-4)])
def test_laprls_equals_closed_form(dtype, gamma_A, rtol):
    for X, y in (make_moons(200, noise=0.1, random_state=0),
                 make_blobs(200, centers=3, random_state=1)):
        y_train = np.full_like(y, -1)
        for c in np.unique(y):
            y_train[np.flatnonzero(y == c)[:3]] = c
        est = LapRLS(gamma_A=gamma_A, solver="closed_form", kernel_dtype=dtype).fit(X, y_train)
        Y = est._encode(y_train, est.classes_, y_train != -1)
        eng = CupyEngine()
        K = eng.kernel(cupy.asarray(X), None, "rbf", dtype=dtype, sigma=est.kernel_sigma_)
        apply_L = arrays.laplacian_apply(eng.asarray(est.affinity_matrix_), "normalized")
        fit = arrays.laprls_fit(K, cupy.asarray(Y), apply_L, gamma_A=gamma_A,
                                gamma_I=est.gamma_I, tol=1e-10, max_iter=3000)
        f0 = est.decision_function(X)
        assert isinstance(fit.decision, cupy.ndarray)
        np.testing.assert_allclose(host(fit.decision), f0, atol=rtol * np.abs(f0).max())


def test_kernel_memory_check_speaks_of_device_memory(monkeypatch):
    monkeypatch.setattr("semisup.linalg.xp.free_memory", lambda xp: 10_000)
    with pytest.raises(MemoryError, match="of device memory"):
        arrays.rbf_kernel(cupy.asarray(_points(200, 3)), 1.0)


def _est(**kw):
    params = dict(affinity="knn", n_neighbors=8, weights="heat", graph_sigma=None,
                  threshold=None, metric="euclidean", knn_method="auto", n_jobs=None,
                  random_state=None)
    params.update(kw)
    return SimpleNamespace(**params)


def test_engine_graph_and_query_affinities_equal_cpu():
    X, Q = _points(500, 6, 3), _points(40, 6, 4)
    eng = CupyEngine()
    est = _est()
    Xd = eng.check_points(est, cupy.asarray(X))
    fit = eng.fit_graph(est, Xd)
    d, i = knn_search(X, 8, method="exact")
    W0 = graph_from_neighbors(d, i, weights="heat")
    np.testing.assert_allclose(fit.W.get().toarray(), W0.toarray(), rtol=1e-13)
    Wq = eng.query_affinity(est, fit.state, cupy.asarray(Q))
    dq, iq = NearestNeighbors(n_neighbors=8, algorithm="brute").fit(X).kneighbors(Q)
    vals = np.exp(-0.5 * (dq / fit.graph_sigma) ** 2)
    Wq0 = sp.csr_matrix((vals.ravel(), iq.ravel(), np.arange(0, 40 * 8 + 1, 8)),
                        shape=(40, 500))
    np.testing.assert_allclose(Wq.get().toarray(), Wq0.toarray(), rtol=1e-8)
    with pytest.raises(ValueError, match="affinity='rbf_threshold'"):
        eng.check_points(_est(affinity="rbf_threshold"), Xd)


# -- the estimators with CuPy input: the comparisons of test_engine_estimators.py ----------
# (tolerances as there: graph to 1e-13, solves at tol=1e-10 to 1e-8 of their scale with
# identical labels, LapRLS by PCG run to the minimiser against the CPU closed form to 1e-7 /
# 1e-4 of the scale with a float64 / float32 kernel)
TO_MINIMISER = dict(solver="pcg", early_stopping="mixed_grad", stop_tol=1e-10, max_iter=3000)

def _labelled(data, n, per_class, seed):
    X, y = (make_moons(n, noise=0.08, random_state=seed) if data == "moons"
            else make_blobs(n, centers=3, cluster_std=1.5, random_state=seed))
    rng = np.random.default_rng(seed)
    y_train = np.full_like(y, -1)
    for c in np.unique(y):
        y_train[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return X, y, y_train


def _same_graph(a, b):
    """Same edges; weights to rounding (the device's float64 distances agree with the
    CPU's to ~1e-15, test_knn_equals_cpu allows 1e-10)."""
    a, b = sp.csr_matrix(host(a)), sp.csr_matrix(host(b))
    a.sort_indices()
    b.sort_indices()
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.data, b.data, rtol=1e-10)


def _same_labels_off_the_margin(f, f0, pred, pred0, atol):
    """Labels equal wherever the CPU decision is farther than 2 atol from a tie (a float32
    kernel moves the decision values by up to atol)."""
    if f0.ndim == 1:
        sure = np.abs(f0) > 2 * atol
    else:
        top = np.sort(f0, axis=1)
        sure = top[:, -1] - top[:, -2] > 2 * atol
    assert sure.mean() > 0.9
    np.testing.assert_array_equal(pred[sure], pred0[sure])


@pytest.mark.parametrize("data", ["moons", "blobs"])
def test_harmonic_estimator_on_the_device_equals_cpu(data):
    from semisup import HarmonicFunction
    X, y, y_train = _labelled(data, 600, 4, 0)
    Xq = X[::7] + 0.05
    params = dict(n_neighbors=8, knn_method="exact", tol=1e-10)
    ref = HarmonicFunction(solver="cg", **params).fit(X, y_train)
    est = HarmonicFunction(**params).fit(cupy.asarray(X), cupy.asarray(y_train))
    assert isinstance(est.label_distributions_, cupy.ndarray)
    assert isinstance(est.transduction_, cupy.ndarray)
    assert isinstance(est.classes_, np.ndarray)
    _same_graph(est.affinity_matrix_, ref.affinity_matrix_)
    np.testing.assert_allclose(host(est.label_distributions_), ref.label_distributions_,
                               atol=1e-8)
    np.testing.assert_array_equal(host(est.transduction_), ref.transduction_)
    P = est.predict_proba(cupy.asarray(Xq))
    assert isinstance(P, cupy.ndarray)
    np.testing.assert_allclose(host(P), ref.predict_proba(Xq), atol=1e-8)
    pred = est.predict(cupy.asarray(Xq))
    assert isinstance(pred, cupy.ndarray)
    np.testing.assert_array_equal(host(pred), ref.predict(Xq))
    pred = est.predict(Xq)                       # a host query answers on the host
    assert type(pred) is np.ndarray
    np.testing.assert_array_equal(pred, ref.predict(Xq))
    cmn = HarmonicFunction(class_mass_normalization=True, **params)
    np.testing.assert_array_equal(host(cmn.fit(cupy.asarray(X), y_train).transduction_),
                                  HarmonicFunction(class_mass_normalization=True,
                                                   solver="cg", **params
                                                   ).fit(X, y_train).transduction_)


def test_harmonic_estimator_with_a_cupyx_affinity_equals_cpu():
    import cupyx.scipy.sparse as cusparse
    from semisup import HarmonicFunction
    X, y, y_train = _labelled("blobs", 600, 4, 1)
    W = _graph(X)
    ref = HarmonicFunction(affinity="precomputed", solver="cg", tol=1e-10).fit(W, y_train)
    est = HarmonicFunction(affinity="precomputed", tol=1e-10).fit(cusparse.csr_matrix(W),
                                                                  y_train)
    assert cusparse.issparse(est.affinity_matrix_)
    np.testing.assert_array_equal(host(est.transduction_), ref.transduction_)
    Wq = W[:20]
    pred = est.predict(cusparse.csr_matrix(Wq))
    assert isinstance(pred, cupy.ndarray)
    np.testing.assert_array_equal(host(pred), ref.predict(Wq))
    loops = cusparse.csr_matrix(W + sp.eye(W.shape[0], format="csr"))
    with pytest.warns(UserWarning, match="self-loops"):
        est = HarmonicFunction(affinity="precomputed", tol=1e-10).fit(loops, y_train)
    np.testing.assert_array_equal(host(est.transduction_), ref.transduction_)
    with pytest.raises(ValueError, match="not symmetric"):
        HarmonicFunction(affinity="precomputed").fit(
            cusparse.csr_matrix(sp.triu(W, format="csr")), y_train)


@pytest.mark.parametrize("data", ["moons", "blobs"])
def test_poisson_estimator_on_the_device_equals_cpu(data):
    from semisup import PoissonLearning, PoissonMBO
    X, y, y_train = _labelled(data, 600, 1, 2)
    Xq = X[::7] + 0.05
    params = dict(n_neighbors=8, knn_method="exact", tol=1e-10, class_priors="uniform")
    ref = PoissonLearning(**params).fit(X, y_train)
    est = PoissonLearning(**params).fit(cupy.asarray(X), y_train)
    assert isinstance(est.scores_, cupy.ndarray) and est.converged_
    scale = np.abs(ref.scores_).max()
    np.testing.assert_allclose(host(est.scores_), ref.scores_, atol=1e-8 * scale)
    np.testing.assert_array_equal(host(est.transduction_), ref.transduction_)
    Z = est.decision_function(cupy.asarray(Xq))
    assert isinstance(Z, cupy.ndarray)
    np.testing.assert_allclose(host(Z), ref.decision_function(Xq), atol=1e-8 * scale)
    pred = est.predict(cupy.asarray(Xq))
    assert isinstance(pred, cupy.ndarray)
    np.testing.assert_array_equal(host(pred), ref.predict(Xq))
    with pytest.raises(ValueError, match="PoissonMBO runs on the host"):
        PoissonMBO().fit(cupy.asarray(X), y_train)


def test_host_model_answers_cupy_queries_on_the_device():
    from semisup import PoissonLearning
    X, y, y_train = _labelled("moons", 300, 3, 3)
    est = PoissonLearning().fit(X, y_train)
    pred = est.predict(cupy.asarray(X[:10]))
    assert isinstance(pred, cupy.ndarray)
    np.testing.assert_array_equal(host(pred), est.predict(X[:10]))


@pytest.mark.parametrize("data", ["moons", "blobs"])
@pytest.mark.parametrize("dtype,gamma_A,rtol", [("float64", 1e-4, 1e-7),
                                                ("float32", 1e-2, 1e-4)])
def test_laprls_estimator_on_the_device_equals_closed_form(data, dtype, gamma_A, rtol):
    X, y, y_train = _labelled(data, 200, 3, 4)
    Xq = X[::5] + 0.05
    params = dict(gamma_A=gamma_A, kernel_dtype=dtype, knn_method="exact",
                  early_stopping=None)
    ref = LapRLS(solver="closed_form", **params).fit(X, y_train)
    est = LapRLS(**{**params, **TO_MINIMISER}).fit(cupy.asarray(X), y_train)
    assert isinstance(est.alpha_, cupy.ndarray) and (est.converged_ or dtype == "float32")
    assert isinstance(est.transduction_, cupy.ndarray)
    f0 = ref.decision_function(X)
    atol = rtol * np.abs(f0).max()
    f = est.decision_function(cupy.asarray(X))
    assert isinstance(f, cupy.ndarray)
    np.testing.assert_allclose(host(f), f0, atol=atol)
    _same_labels_off_the_margin(host(f), f0, host(est.transduction_), ref.transduction_,
                                atol)
    fq0 = ref.decision_function(Xq)
    np.testing.assert_allclose(est.decision_function(Xq), fq0, atol=atol)
    pred = est.predict(cupy.asarray(Xq))
    assert isinstance(pred, cupy.ndarray)
    _same_labels_off_the_margin(None, fq0, host(pred), ref.predict(Xq), atol)
