"""SPDSolver and block_pcg against numpy's dense solve."""

import numpy as np
import pytest
import scipy.sparse as sp

from semisup.graph import knn_graph, laplacian
from semisup.linalg import spd as spd_module
from semisup.linalg.spd import SPDSolver, block_pcg


def _grounded_laplacian(rng, n=150, shift=1e-2):
    W = knn_graph(rng.normal(size=(n, 3)), 6, weights="heat", method="exact")
    return (laplacian(W) + shift * sp.identity(n)).tocsr()


@pytest.mark.parametrize("method", ["direct", "cg", "auto"])
def test_solver_matches_numpy_solve(rng, method):
    A = _grounded_laplacian(rng)
    B = rng.normal(size=(A.shape[0], 4))
    X = SPDSolver(A, method=method, rtol=1e-12).solve(B)
    np.testing.assert_allclose(X, np.linalg.solve(A.toarray(), B), rtol=1e-7, atol=1e-8)
    x = SPDSolver(A, method=method, rtol=1e-12).solve(B[:, 0])
    assert x.shape == (A.shape[0],)
    np.testing.assert_allclose(x, X[:, 0], rtol=1e-7, atol=1e-8)


def test_dense_input_and_method_names(rng):
    A = _grounded_laplacian(rng, n=40)
    s = SPDSolver(A.toarray(), method="direct")
    assert s.method_ == "dense-cholesky"
    assert SPDSolver(A, method="cg").method_ == "cg"
    assert SPDSolver(A, method="auto").method_ == "dense-cholesky"
    B = rng.normal(size=40)
    np.testing.assert_allclose(s.solve(B), np.linalg.solve(A.toarray(), B), rtol=1e-10)


def test_sparse_direct_path_above_dense_size(rng):
    # Above the dense-Cholesky size, "direct" on a sparse matrix uses a sparse factorization.
    n = getattr(spd_module, "DENSE_MAX_N", 500) + 3000
    # A 1-D chain: tridiagonal, factors without fill.
    main = np.full(n, 2.5)
    A = sp.diags([main, -np.ones(n - 1), -np.ones(n - 1)], [0, -1, 1], format="csr")
    s = SPDSolver(A, method="direct")
    assert s.method_ == "splu"
    b = rng.normal(size=n)
    np.testing.assert_allclose(A @ s.solve(b), b, atol=1e-10)
    assert SPDSolver(A, method="cg").method_ == "cg"


def test_block_pcg_columns_are_independent_and_reported(rng):
    A = _grounded_laplacian(rng)
    B = rng.normal(size=(A.shape[0], 3))
    B[:, 1] *= 1e4  # very different scales still converge column by column
    X, info = block_pcg(A, B, M_diag=A.diagonal(), rtol=1e-10)
    assert info.converged
    assert info.residuals.shape == (3,) and info.residuals.max() <= 1e-10
    np.testing.assert_allclose(A @ X, B, rtol=0, atol=1e-8 * np.abs(B).max())


def test_warm_start_reduces_iterations(rng):
    A = _grounded_laplacian(rng)
    B = rng.normal(size=(A.shape[0], 2))
    s = SPDSolver(A, method="cg", rtol=1e-10)
    X = s.solve(B)
    cold = s.last_info_.n_iter
    s.solve(B + 1e-9 * rng.normal(size=B.shape), X0=X)
    warm = s.last_info_.n_iter
    assert warm < cold / 2


def test_iteration_cap_reports_non_convergence(rng):
    A = _grounded_laplacian(rng, shift=1e-6)
    s = SPDSolver(A, method="cg", rtol=1e-14, maxiter=3)
    s.solve(rng.normal(size=A.shape[0]))
    assert s.last_info_.n_iter == 3 and not s.last_info_.converged


def test_non_positive_definite_raises():
    A = -sp.identity(5, format="csr")
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        SPDSolver(A, method="cg").solve(np.ones(5))
    with pytest.raises(np.linalg.LinAlgError):
        SPDSolver(A.toarray(), method="direct")
    indefinite = sp.diags([1.0, 1.0, -1.0], format="csr")
    with pytest.raises(np.linalg.LinAlgError):
        block_pcg(indefinite, np.array([0.0, 0.0, 1.0]))


def test_bad_method_raises(rng):
    with pytest.raises(ValueError, match="method"):
        SPDSolver(sp.identity(3), method="qr")
