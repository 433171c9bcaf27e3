"""The SPD solver and the simplex projection that LASS relies on."""

import numpy as np
import pytest
import scipy.sparse as sp

from semisup.graph import knn_graph, laplacian
from semisup.linalg.simplex import project_simplex_rows
from semisup.linalg.spd import SPDSolver, block_pcg, rcm_envelope

from lass_oracles import path_graph


def test_auto_uses_direct_on_low_fill_and_cg_on_knn_graphs(rng):
    Lp = laplacian(path_graph(np.ones(1999)))
    A = (Lp + 0.1 * sp.identity(2000)).tocsr()
    s = SPDSolver(A)
    assert s.method_ == "splu" and s.fill_ < 4 and s.envelope_ratio_ < 2
    B = rng.normal(size=(2000, 3))
    np.testing.assert_allclose(A @ s.solve(B), B, atol=1e-10)
    Lk = laplacian(knn_graph(rng.normal(size=(2000, 5)), 10))
    Ak = (Lk + 0.1 * sp.identity(2000)).tocsr()
    s = SPDSolver(Ak, rtol=1e-10)
    assert s.method_ == "cg" and s.envelope_ratio_ > 8
    np.testing.assert_allclose(Ak @ s.solve(B), B, atol=1e-8)
    assert SPDSolver(A[:100, :100]).method_ == "dense-cholesky"


def test_rcm_envelope_of_a_path_is_its_length():
    A = sp.csr_matrix(laplacian(path_graph(np.ones(9))))
    assert rcm_envelope(A) == 9


def test_block_pcg_inf_norm_bounds_the_error(rng):
    L = laplacian(knn_graph(rng.normal(size=(800, 3)), 8))
    rho = 0.3
    A = (2 * L + rho * sp.identity(800)).tocsr()
    B = rng.normal(size=(800, 4))
    exact = SPDSolver(A, method="direct").solve(B)
    eps = 1e-6
    X, info = block_pcg(A, B, X0=np.zeros_like(B), M_diag=A.diagonal(), rtol=0.0,
                        atol=rho * eps, norm="inf")
    assert info.converged and np.abs(X - exact).max() <= eps
    np.testing.assert_allclose(info.residual_block, B - A @ X, atol=1e-9)
    # a warm start at the answer needs no iteration
    _, info0 = block_pcg(A, B, X0=exact, M_diag=A.diagonal(), rtol=1e-8)
    assert info0.n_iter == 0


def test_simplex_projection_is_the_euclidean_projection(rng):
    V = rng.normal(scale=2, size=(500, 6))
    P = project_simplex_rows(V)
    np.testing.assert_allclose(P.sum(1), 1, atol=1e-12)
    assert P.min() >= 0
    # optimality: P = max(V - tau, 0) with one tau per row (variational inequality)
    for v, p in zip(V[:50], P[:50]):
        for q in project_simplex_rows(rng.normal(size=(20, 6))):
            assert (v - p) @ (q - p) <= 1e-10


def test_step_sizes_do_not_depend_on_arpack_s_random_start():
    """ADMM's rho* and APG's Lipschitz constant come from ARPACK, whose default start vector
    is random: two fits of the same data gave rho* apart in its 6th digit (and different
    iteration counts). Seeded start vectors make them repeat exactly."""
    import numpy as np

    from semisup.graph import knn_graph, laplacian
    from semisup.lass.admm import auto_rho
    from semisup.lass.apg import lipschitz_constant
    from semisup.linalg.psd import min_eigenvalue

    X = np.random.default_rng(0).normal(size=(2500, 5))
    L = laplacian(knn_graph(X, 10))        # one component, above the dense-eigen limits
    rhos = [np.asarray(auto_rho(L, 0.1)) for _ in range(3)]
    assert all(np.array_equal(rhos[0], r) for r in rhos[1:])
    assert len({lipschitz_constant(L, 0.1) for _ in range(3)}) == 1
    assert len({min_eigenvalue(L) for _ in range(3)}) == 1
