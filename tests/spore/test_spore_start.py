"""The graph, start kernel and step length of the SPORE estimators (semisup.spore.start)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from semisup.spore import SPORE, MultiGraphSPORE
from semisup.spore.iip import default_K0, iip_spore
from semisup.spore.start import KNN_HOPS, distance_step, hop_start, resolve_hops


def random_graph(n=40, p=0.08, seed=0):
    rng = np.random.default_rng(seed)
    U = np.triu(rng.random((n, n)) < p, 1)
    return sp.csr_matrix((U | U.T).astype(float))


@pytest.mark.parametrize("hops", [1, 2, 3, 5])
def test_hop_graph_is_the_graph_power_and_K0_is_in_its_elliptope(hops):
    A = random_graph()
    A_h, K0, coupled = hop_start(A, hops)
    assert coupled
    # brute force: shortest-path distances (unweighted) at most `hops`, off the diagonal
    D = csgraph.shortest_path(A, unweighted=True)
    expect = (D <= hops) & ~np.eye(A.shape[0], dtype=bool)
    np.testing.assert_array_equal(A_h.toarray() != 0, expect)
    # K(G^hops): unit diagonal, PSD, exactly zero on the non-edges
    np.testing.assert_allclose(np.diag(K0), 1.0, atol=1e-15)
    assert np.linalg.eigvalsh(K0).min() > -1e-10
    off = ~expect & ~np.eye(A.shape[0], dtype=bool)
    assert np.all(K0[off] == 0)
    assert np.all(K0[expect] > 0)


def test_one_hop_is_the_coupled_start():
    A = random_graph(seed=3)
    A1, K0, _ = hop_start(A, 1)
    np.testing.assert_array_equal(K0, default_K0(A)[0])
    assert (A1 != A).nnz == 0


def test_edgeless_graph_gives_the_identity_uncoupled():
    A = sp.csr_matrix((5, 5))
    A_h, K0, coupled = hop_start(A, 3)
    assert not coupled and A_h.nnz == 0
    np.testing.assert_array_equal(K0, np.eye(5))


def test_resolve_hops():
    assert resolve_hops("auto", "knn") == KNN_HOPS
    for affinity in ("precomputed", "rbf_threshold", "cosine_threshold"):
        assert resolve_hops("auto", affinity) == 1
    assert resolve_hops(2, "precomputed") == 2


def test_distance_step_bounds_the_distance_to_the_sdp_optimum():
    """R / sqrt(T) with R >= ||K0 - K*||_F for the optimum K* = blockdiag(K*_SS, I) that
    the SDP oracle (cvxpy on the labelled block, spore.md §3.1) gives."""
    pytest.importorskip("cvxpy")
    from semisup.spore.sdp import spore_sdp
    A = random_graph(n=30, p=0.3, seed=1)
    rng = np.random.default_rng(0)
    y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
    S = np.array([0, 1, 2, 3, 4, 5])
    y[S[:3]], y[S[3:]] = 1.0, -1.0
    A_SS = A[S][:, S]
    _, K_SS, info = spore_sdp(A_SS, y[S], np.arange(S.size), C=1.0, beta=0.1)
    assert info["status"] == "optimal"
    Kstar = np.eye(30)
    Kstar[np.ix_(S, S)] = K_SS
    for hops in (1, 2):
        _, K0, _ = hop_start(A, hops)
        T = 4
        R = distance_step([K0], S.size, T) * math.sqrt(T)
        assert np.linalg.norm(K0 - Kstar) <= R
        # and the bound is not vacuous: far below the paper's R = n
        assert R < 30


def test_distance_step_is_joint_over_graphs():
    K = np.eye(4) + 0.25 * (np.ones((4, 4)) - np.eye(4))
    one = distance_step([K], 3, 9)
    np.testing.assert_allclose(distance_step([K, K], 3, 9), math.sqrt(2) * one)
    np.testing.assert_allclose(one, (math.sqrt(12 * 0.0625) + math.sqrt(6)) / 3)


def test_estimator_with_hops_1_and_the_paper_step_is_iip_with_the_spec_defaults():
    """hops=1, step="paper", n_inner=ceil(sqrt(T)) is exactly iip_spore's own defaults."""
    A = random_graph(n=40, p=0.15, seed=2)
    y_obs = np.full(40, -1)
    y_obs[[0, 1, 2]] = 1
    y_obs[[3, 4, 5]] = 0
    lab = np.flatnonzero(y_obs >= 0)
    signed = np.where(y_obs == 1, 1.0, -1.0)
    m = SPORE(affinity="precomputed", hops=1, step="paper", n_inner=3, beta=0.1,
              n_outer=5, dtype="float64").fit(A, y_obs)
    ref = iip_spore(A, signed, lab, 1.0, 0.1, n_outer=5)
    np.testing.assert_allclose(m.decision_scores_, ref.scores, rtol=1e-10, atol=1e-12)
    assert m.step_ == pytest.approx(40 / math.sqrt(5))
    assert m.hops_ == 1


def test_defaults_run_on_the_hop_graph_with_the_distance_step():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (40, 2)), rng.normal(6, 1, (40, 2))]
    y = np.repeat([0, 1], 40)
    y_obs = np.full(80, -1)
    y_obs[[0, 1, 40, 41]] = y[[0, 1, 40, 41]]
    m = SPORE(random_state=0).fit(X, y_obs)
    assert m.hops_ == KNN_HOPS
    n_lab = 4
    expect = distance_step([hop_start(sp.csr_matrix(m.affinity_matrix_ != 0, dtype=float),
                                      KNN_HOPS)[1]], n_lab, 5)
    assert m.step_ == pytest.approx(expect, rel=1e-6)
    assert np.mean(m.transduction_ == y) > 0.95
    mm = MultiGraphSPORE(random_state=0).fit([X, X[:, ::-1]], y_obs)
    assert mm.hops_ == KNN_HOPS and np.mean(mm.transduction_ == y) > 0.95
