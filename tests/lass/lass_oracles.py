"""Oracles and problems shared by the LASS tests (cvxpy solutions, spec test vectors)."""

import numpy as np
import pytest
import scipy.sparse as sp


def path_graph(weights):
    n = len(weights) + 1
    W = np.zeros((n, n))
    for i, w in enumerate(weights):
        W[i, i + 1] = W[i + 1, i] = w
    return W


def cvxpy_lass(W, G, lam, solver="CLARABEL"):
    """Solve LASS with cvxpy; tr(Z'LZ) written as sum_{i<j} w_ij ||z_i - z_j||^2.

    Returns (Z, mu, Xi, F) with the spec's sign convention (cvxpy's equality dual is -mu).
    """
    cp = pytest.importorskip("cvxpy")
    W = sp.triu(sp.csr_matrix(W), k=1).tocoo()
    N, K = G.shape
    E = sp.csr_matrix((np.concatenate([np.sqrt(W.data), -np.sqrt(W.data)]),
                       (np.concatenate([np.arange(W.nnz)] * 2),
                        np.concatenate([W.row, W.col]))), shape=(W.nnz, N))
    Z = cp.Variable((N, K))
    eq = cp.sum(Z, axis=1) == 1
    nonneg = Z >= 0
    F = lam * cp.sum_squares(E @ Z) - cp.sum(cp.multiply(G, Z))
    prob = cp.Problem(cp.Minimize(F), [eq, nonneg])
    opts = (dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
            if solver == "CLARABEL" else {})
    prob.solve(solver=solver, **opts)
    return Z.value, -eq.dual_value, nonneg.dual_value, prob.value


def tv2_problem(g123=0.4):
    rng = np.random.default_rng(42)
    X = rng.normal(size=(40, 2))
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    W = np.exp(-D2 / 2)
    np.fill_diagonal(W, 0)
    G = np.zeros((40, 5))
    for n in range(10):
        G[n, n % 5] = 1
    G[10, 0] = -1
    G[11, 1] = -0.5
    G[12, 2] = 0.5
    G[12, 3] = g123
    return X, W, G
