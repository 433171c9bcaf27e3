"""Kernels against scikit-learn's pairwise kernels; blockwise, float32, sparse, memory refusal."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import pairwise

from semisup.kernels import kernel_matrix, linear_kernel, polynomial_kernel, rbf_kernel


@pytest.fixture
def data(rng):
    return rng.normal(size=(60, 7)), rng.normal(size=(25, 7))


def test_rbf_matches_sklearn_with_width_convention(data):
    X, Y = data
    sigma = 1.3
    expected = pairwise.rbf_kernel(X, Y, gamma=1.0 / (2 * sigma ** 2))
    np.testing.assert_allclose(rbf_kernel(X, Y, sigma=sigma), expected, rtol=1e-12)
    K = rbf_kernel(X, sigma=sigma)
    np.testing.assert_allclose(K, pairwise.rbf_kernel(X, gamma=1.0 / (2 * sigma ** 2)),
                               rtol=1e-12)
    np.testing.assert_array_equal(np.diag(K), 1.0)


def test_polynomial_and_linear_match_sklearn(data):
    X, Y = data
    np.testing.assert_allclose(polynomial_kernel(X, Y, degree=3, gamma=0.5, coef0=1.0),
                               pairwise.polynomial_kernel(X, Y, degree=3, gamma=0.5, coef0=1.0),
                               rtol=1e-12)
    # LapSVM's MNIST 3-vs-8 kernel: homogeneous degree 9 on unit vectors.
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    np.testing.assert_allclose(polynomial_kernel(Xn, degree=9), (Xn @ Xn.T) ** 9, atol=1e-14)
    np.testing.assert_allclose(linear_kernel(X, Y), X @ Y.T, rtol=1e-12)


@pytest.mark.parametrize("kernel", ["rbf", "polynomial", "linear"])
def test_blockwise_equals_one_shot_and_sparse_equals_dense(data, kernel):
    X, Y = data
    full = kernel_matrix(X, Y, kernel, sigma=2.0, degree=2)
    tiny_blocks = kernel_matrix(X, Y, kernel, sigma=2.0, degree=2, block_bytes=1)
    # BLAS may round a 1-row product differently from a full block: agree to round-off.
    np.testing.assert_allclose(full, tiny_blocks, rtol=1e-14, atol=1e-15)
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0))
    Ys = sp.csr_matrix(np.where(np.abs(Y) > 0.5, Y, 0))
    np.testing.assert_allclose(kernel_matrix(Xs, Ys, kernel, sigma=2.0, degree=2),
                               kernel_matrix(Xs.toarray(), Ys.toarray(), kernel, sigma=2.0,
                                             degree=2), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kernel_matrix(Xs, Y, kernel, sigma=2.0, degree=2),
                               kernel_matrix(Xs.toarray(), Y, kernel, sigma=2.0, degree=2),
                               rtol=1e-12, atol=1e-14)


def test_float32_output(data):
    X, Y = data
    K32 = rbf_kernel(X, Y, sigma=1.0, dtype=np.float32)
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, rbf_kernel(X, Y, sigma=1.0), rtol=1e-6)


def test_symmetric_result_is_exactly_symmetric(data):
    X, _ = data
    K = rbf_kernel(X, sigma=0.7, block_bytes=500)
    np.testing.assert_allclose(K, K.T, rtol=1e-15)


def test_memory_refusal_gives_estimate(monkeypatch, data):
    X, _ = data
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(60 * 60 * 8 - 1))
    with pytest.raises(MemoryError, match=r"60x60 float64 kernel matrix needs about .*float32"):
        rbf_kernel(X)
    K = rbf_kernel(X, dtype=np.float32)  # half the memory fits
    assert K.shape == (60, 60)


def test_bad_inputs(data):
    X, Y = data
    with pytest.raises(ValueError, match="kernel"):
        kernel_matrix(X, kernel="sigmoid")
    with pytest.raises(ValueError, match="sigma"):
        rbf_kernel(X, sigma=0)
    with pytest.raises(ValueError, match="sigma"):
        rbf_kernel(X, sigma=np.nan)
    with pytest.raises(ValueError, match="features"):
        rbf_kernel(X, Y[:, :3])
    with pytest.raises(ValueError, match="dtype"):
        rbf_kernel(X, dtype=np.int32)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        linear_kernel(bad)
    with pytest.raises(ValueError, match="2-D"):
        linear_kernel(X[0])


# -- reliability (issue "no silent wrong answer") ----------------------------------------------
@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_rbf_is_finite_and_scale_covariant_at_extreme_magnitudes(data, scale):
    X, Y = data
    K = rbf_kernel(X, Y, sigma=1.3)
    # ||x||^2 overflowed to inf (inf - inf = NaN where k = 0) or vanished
    np.testing.assert_allclose(rbf_kernel(X * scale, Y * scale, sigma=1.3 * scale), K,
                               rtol=1e-9, atol=1e-15)
    Ks = kernel_matrix(X * scale)
    assert np.isfinite(Ks).all() and np.all(np.diag(Ks) == 1.0)
    assert np.all((Ks >= 0) & (Ks <= 1))
    Xs = sp.csr_matrix(X * scale)
    np.testing.assert_allclose(rbf_kernel(Xs, sigma=1.3 * scale), rbf_kernel(X, sigma=1.3),
                               rtol=1e-9, atol=1e-15)


def test_overflowing_polynomial_and_linear_kernels_are_errors(data):
    X, _ = data
    with pytest.raises(ValueError, match="polynomial kernel overflows float64.*rescale"):
        polynomial_kernel(X * 1e200)
    with pytest.raises(ValueError, match="linear kernel overflows"):
        linear_kernel(X * 1e200)
    with pytest.raises(ValueError, match="overflows float32"):
        polynomial_kernel(X * 1e10, dtype=np.float32)


@pytest.mark.parametrize("kw, name", [
    (dict(gamma=np.nan), "gamma"), (dict(degree=-1), "degree"), (dict(degree=0.5), "degree"),
    (dict(coef0="1"), "coef0"), (dict(coef0=np.inf), "coef0"), (dict(sigma=-1.0), "sigma"),
    (dict(kernel="sigmoid"), "kernel"), (dict(block_bytes=0), "block_bytes"),
])
def test_parameters_are_validated_by_name(data, kw, name):
    X, _ = data
    kw = {"kernel": "polynomial", **kw}
    with pytest.raises(ValueError, match=f"'{name}' parameter of kernel_matrix"):
        kernel_matrix(X, **kw)


def test_public_kernel_functions_validate_their_parameters(data):
    X, _ = data
    with pytest.raises(ValueError, match="'sigma' parameter of rbf_kernel"):
        rbf_kernel(X, sigma="1")
    with pytest.raises(ValueError, match="'degree' parameter of polynomial_kernel"):
        polynomial_kernel(X, degree=2.5)
    with pytest.raises(ValueError, match="'coef0' parameter of polynomial_kernel"):
        polynomial_kernel(X, coef0="1")
    # keyword arguments passed on are validated by kernel_matrix
    with pytest.raises(ValueError, match="'block_bytes' parameter"):
        linear_kernel(X, block_bytes=-1)
    with pytest.raises(ValueError, match="dtype"):
        linear_kernel(X, dtype="not a dtype")
    with pytest.raises(ValueError, match="numeric"):
        linear_kernel(np.array([["a", "b"]]))


def test_scale_width_is_one_rule_for_dense_and_sparse():
    from semisup.kernels import scale_sigma
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(60, 4)) + [3.0, 0.0, -2.0, 5.0]) * (rng.random((60, 4)) < 0.5)
    dense = scale_sigma(X)
    assert dense == pytest.approx(np.sqrt(4 * X.var() / 2), rel=1e-12)
    for fmt in (sp.csr_matrix, sp.csc_matrix):
        assert scale_sigma(fmt(X)) == pytest.approx(dense, rel=1e-12)


def test_subnormal_points_give_a_finite_kernel_and_width():
    # 1 / max|X| overflows for subnormal X: the rescaling divides instead (issue #30 item 9)
    from semisup.kernels import scale_sigma
    X = np.random.default_rng(0).normal(size=(20, 2))
    sigma = scale_sigma(X)
    assert scale_sigma(X * 1e-310) == pytest.approx(sigma * 1e-310, rel=1e-6)
    K = rbf_kernel(X * 1e-310, sigma=sigma * 1e-310)
    assert np.isfinite(K).all()
    np.testing.assert_allclose(K, rbf_kernel(X, sigma=sigma), atol=1e-6)


@pytest.mark.parametrize("kernel", ["rbf", "polynomial"])
def test_make_kernel_transform_equals_kernel_times_transform(data, rng, kernel):
    """K(X, Y) @ T from row blocks (never the n x m kernel), sparse X alike."""
    from semisup.kernels import make_kernel
    X, Y = data
    T = rng.normal(size=(25, 4))
    full, sigma = make_kernel(X, Y, kernel=kernel, sigma=1.7, degree=2, training=False)
    got, _ = make_kernel(X, Y, kernel=kernel, sigma=1.7, degree=2, training=False,
                         transform=T)
    np.testing.assert_allclose(got, full @ T, rtol=1e-12, atol=1e-12)
    sparse, _ = make_kernel(sp.csr_matrix(X), sp.csr_matrix(Y), kernel=kernel, sigma=1.7,
                            degree=2, training=False, transform=T)
    np.testing.assert_allclose(sparse, full @ T, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="transform must have shape"):
        make_kernel(X, Y, sigma=1.0, transform=T[:3])
    with pytest.raises(ValueError, match="transform needs the column points"):
        make_kernel(X, sigma=1.0, transform=T)
