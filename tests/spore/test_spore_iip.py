import sys
from pathlib import Path

import numpy as np
import pytest

from semisup.spore.iip import (default_K0, edge_mask, fista_prox, iip_spore, infeasibility,
                               project_affine, spore_objective, step_length)
from semisup.linalg.svm_dual import svm_dual

# the shared graphs live next to this file; works in every pytest import mode
sys.path.insert(0, str(Path(__file__).parent))
from spore_graphs import EDGES, S, Y, adjacency, random_graph, spec_V  # noqa: E402

A8 = adjacency(EDGES)


@pytest.mark.parametrize("steps, na, nb, nP, trP, obj", [
    (1, 1.3278447385, 2.1303981729, 3.0361829129, 6.0930452909, 0.8262033402),
    (2, 1.1661781572, 2.6837315817, 3.1197211719, 6.8328504355, 0.1298527405),
    (10, 0.3469328656, 4.2496988737, 3.5104380139, 7.9881857961, -1.0456654058),
])
def test_spec_vector_tv_d2_fista(steps, na, nb, nP, trP, obj):
    V = spec_V()
    a, b = fista_prox(V, edge_mask(A8), steps)
    P = V - a - b
    got = [np.linalg.norm(a), np.linalg.norm(b), np.linalg.norm(P), np.trace(P),
           0.5 * np.linalg.norm(a + b - V) ** 2 + np.trace(b)]
    np.testing.assert_allclose(got, [na, nb, nP, trP, obj], atol=1e-9)


def test_spec_vector_tv_d2_row0():
    V = spec_V()
    np.testing.assert_allclose(V[0], [0.479, -0.0105, 0.3395, -0.336, -0.7515, 0.7225,
                                      0.485, -0.519])
    a, b = fista_prox(V, edge_mask(A8), 2000)
    P = V - a - b
    assert np.linalg.norm(P) == pytest.approx(3.531939, abs=1e-6)
    np.testing.assert_allclose(P[0], [1, -0.0055833196, 0.3287730706, 0, 0, 0, 0,
                                      -0.4545407954], atol=1e-7)


def test_fista_projection_matches_cvxpy_exact_projection(rng):
    pytest.importorskip("cvxpy")
    from semisup.spore.sdp import elliptope_projection_sdp
    A = random_graph(14, 0.35, rng)
    V = rng.standard_normal((14, 14))
    V = (V + V.T)
    # Clarabel's default accuracy is only ~1e-4 here; SCS at eps=1e-9 is the sharper oracle
    exact = elliptope_projection_sdp(V, A, solver="SCS", eps=1e-9)
    mask = edge_mask(A)
    errs = []
    for steps in (20, 200, 3000):
        a, b = fista_prox(V, mask, steps)
        errs.append(np.linalg.norm(V - a - b - exact))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 1e-6
    # the exact projection is feasible; the FISTA one only approximately
    assert infeasibility(exact, mask) < 1e-6


def test_spec_vector_tv_d4_one_iteration():
    K0 = np.eye(8) + 0.3 * A8
    assert step_length(None, 8, 400) == pytest.approx(0.4)
    g0, om0, lam0 = spore_objective(K0, Y, S, 0.3, 0.2)
    assert (g0, om0, lam0) == pytest.approx((1.547, 1.167, 1.9))
    res = iip_spore(A8, Y, S, 0.3, 0.2, n_outer=1, n_inner=20, step=0.4, K0=K0)
    assert np.linalg.norm(res.K) == pytest.approx(3.160718492710, abs=1e-9)
    assert res.history["objective"][1] == pytest.approx(1.530601456246, abs=1e-9)
    assert res.history["infeasibility"][1] == pytest.approx(2.157e-6, rel=1e-3)


def test_subgradient_norm_formula_and_inequality(rng):
    # g(K') >= g(K) + <h(K), K' - K> for random PSD pairs (h from the SVM and top eigvector)
    n, C, beta = 10, 0.7, 0.3
    labeled = np.array([0, 2, 3, 5, 8])
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    for _ in range(20):
        B1, B2 = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        K, K2 = B1 @ B1.T / n, B2 @ B2.T / n
        res = svm_dual(K, y, labeled, C)
        w, V = np.linalg.eigh(K)
        v = V[:, -1]
        u = np.zeros(n)
        u[labeled] = y[labeled] * res.alpha
        h = -0.5 * np.outer(u, u) + beta * np.outer(v, v)
        g1 = res.value + beta * w[-1]
        g2 = svm_dual(K2, y, labeled, C).value + beta * np.linalg.eigvalsh(K2)[-1]
        assert g2 >= g1 + np.sum(h * (K2 - K)) - 1e-9
        # the closed form of ||h||_F used by IIP
        uv = u @ v
        assert np.linalg.norm(h) == pytest.approx(
            np.sqrt(0.25 * (u @ u) ** 2 + beta ** 2 - beta * uv ** 2))


def test_default_K0_is_in_the_elliptope(rng):
    A = random_graph(20, 0.3, rng)
    K0, coupled = default_K0(A)
    mask = edge_mask(A)
    assert coupled and infeasibility(K0, mask) == 0.0
    assert np.linalg.eigvalsh(K0)[0] > -1e-10
    K0e, coupled = default_K0(np.zeros((4, 4)))
    assert not coupled and np.array_equal(K0e, np.eye(4))


@pytest.mark.parametrize("C, beta, psi", [(0.3, 0.2, 1.45), (1.0, 0.1, 1.30), (0.5, 0.05, 1.15)])
def test_spec_vector_tv_d3_sdp(C, beta, psi):
    pytest.importorskip("cvxpy")
    from semisup.spore.sdp import spore_sdp
    value, K, info = spore_sdp(A8, Y, S, C, beta)
    assert value == pytest.approx(psi, abs=1e-6)


def test_spec_vector_tv_d3_iip():
    K0 = np.eye(8) + 0.3 * A8
    res = iip_spore(A8, Y, S, 0.3, 0.2, n_outer=400, n_inner=20, K0=K0)
    assert min(res.history["objective"]) == pytest.approx(1.450044575, abs=1e-8)
    assert res.history["objective"][res.best_iter] == min(res.history["objective"])
    assert res.history["infeasibility"][res.best_iter] < 1e-4
    # degeneracy: unlabelled scores vanish, labelled ones are about +-0.6
    np.testing.assert_allclose(res.scores_best[[3, 4, 7]], 0, atol=1e-12)
    np.testing.assert_allclose(res.scores_best[S], [0.6, 0.6, 0.6, -0.6, -0.6], atol=2e-3)
    np.testing.assert_allclose(res.scores[[0, 5]], [0.622, -0.572], atol=1e-3)


def test_iip_matches_cvxpy_sdp_on_random_graph(rng):
    pytest.importorskip("cvxpy")
    from semisup.spore.sdp import spore_sdp
    n = 30
    A = random_graph(n, 0.3, rng)
    y = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    labeled = np.r_[0:4, 15:19]
    C, beta = 0.3, 0.1
    ref, _, _ = spore_sdp(A, y, labeled, C, beta)
    res = iip_spore(A, y, labeled, C, beta, n_outer=400, n_inner=20)
    best = min(res.history["objective"])
    assert abs(best - ref) / ref <= 1e-3
    assert res.history["infeasibility"][res.best_iter] < 2e-2
    # the same optimum through the labelled block alone (spore.md §3.1)
    from semisup.spore.reduced import spore_optimum
    red = spore_optimum(A, y, labeled, C, beta, n_outer=400, n_inner=20)
    assert abs(red.value - ref) / ref <= 1e-3
    assert np.linalg.eigvalsh(red.K)[0] > -1e-3


def test_block_structure_property(rng):
    """spore.md §3.1: the optimum only depends on G[S], and IIP from a block-diagonal start
    keeps K_SU = 0, so every unlabelled score is exactly 0."""
    pytest.importorskip("cvxpy")
    from semisup.spore.sdp import spore_sdp
    n = 16
    A = random_graph(n, 0.4, rng)
    y = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    labeled = np.array([0, 1, 2, 8, 9, 10])
    C, beta = 0.5, 0.1
    full, K, _ = spore_sdp(A, y, labeled, C, beta)
    sub, KS, _ = spore_sdp(A[np.ix_(labeled, labeled)], y[labeled], np.arange(6), C, beta)
    assert full == pytest.approx(sub, abs=1e-6)
    # blockdiag(K_SS*, I_U) is feasible and optimal
    unl = np.setdiff1d(np.arange(n), labeled)
    Kb = np.eye(n)
    Kb[np.ix_(labeled, labeled)] = KS
    assert infeasibility(Kb, edge_mask(A)) < 1e-6
    g, _, _ = spore_objective(Kb, y, labeled, C, beta)
    assert g == pytest.approx(full, abs=1e-5)
    # IIP from a block-diagonal start with a simple top eigenvalue inside the S block
    AS = A[np.ix_(labeled, labeled)]
    K0 = np.eye(n)
    K0[np.ix_(labeled, labeled)] += AS / abs(np.linalg.eigvalsh(AS)[0])
    res = iip_spore(A, y, labeled, C, beta, n_outer=50, n_inner=8, K0=K0)
    assert np.abs(res.K[np.ix_(labeled, unl)]).max() < 1e-12
    assert np.abs(res.scores[unl]).max() < 1e-12


def test_coupled_start_gives_nonzero_unlabelled_scores_early(rng):
    n = 30
    A = random_graph(n, 0.3, rng)
    y = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    labeled = np.r_[0:3, 15:18]
    res = iip_spore(A, y, labeled, 0.3, 0.1, n_outer=5, keep_path=True)
    unl = np.setdiff1d(np.arange(n), labeled)
    assert np.abs(res.history["scores"][1][unl]).min() > 0
    assert len(res.history["scores"]) == 6 and res.n_iter == 5


def test_affine_projection_and_step_rules():
    M = np.arange(16.0).reshape(4, 4)
    A = adjacency([(0, 1)], 4)
    P = project_affine(M, edge_mask(A))
    assert np.array_equal(np.diag(P), np.ones(4)) and P[0, 1] == 1.0 and P[0, 2] == 0
    assert step_length("theory", 30, 100) == pytest.approx(np.sqrt(30 ** 2 + 30 ** 5) / 10)
    with pytest.raises(ValueError, match="step"):
        step_length(-1.0, 4, 4)


@pytest.mark.parametrize("n", [25, 30])
def test_spore_on_a_complete_graph_fits(n):
    """Issue #30 item 9: LAPACK syevr's MRRR stage fails ("LinAlgError: Internal Error") on
    the clustered spectra of a complete graph's iterates; nsd_part falls back to syevd."""
    from semisup import SPORE
    y = np.r_[0, 1, np.full(n - 2, -1)]
    m = SPORE(affinity="precomputed").fit(np.ones((n, n)) - np.eye(n), y)
    assert np.isfinite(m.decision_scores_).all()
    assert m.transduction_[0] == 0 and m.transduction_[1] == 1


def test_nsd_part_falls_back_to_syevd_when_syevr_fails(monkeypatch):
    import scipy.linalg as sla

    from semisup.linalg import psd
    rng = np.random.default_rng(0)
    M = rng.normal(size=(12, 12))
    M = M + M.T
    ref, k_ref = psd.nsd_part(M.copy())
    real = sla.eigh

    def failing(S, *args, **kw):
        if kw.get("driver") == "evr" or "subset_by_index" in kw:
            raise np.linalg.LinAlgError("Internal Error.")
        return real(S, *args, **kw)

    monkeypatch.setattr(psd.sla, "eigh", failing)
    for expected in (None, 11):          # the negative side, then the positive side
        N, k = psd.nsd_part(M.copy(), expected=expected)
        np.testing.assert_allclose(N, ref, atol=1e-10)
        assert k == k_ref
    # overwriting: the input is gone, the error is the caller's to retry without it
    with pytest.raises(np.linalg.LinAlgError):
        psd.nsd_part(M.copy(), symmetric=True, overwrite=True)
    lam, _ = psd.top_eigpair(M, method="dense")
    assert lam == pytest.approx(np.linalg.eigvalsh(M)[-1])
    assert psd.min_eigenvalue(M) == pytest.approx(np.linalg.eigvalsh(M)[0])
