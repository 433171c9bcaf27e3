import sys
from pathlib import Path

import numpy as np
import pytest

from semisup.linalg.simplex import project_simplex_rows
from semisup.spore.mkl import mkl_objective, mkl_spore

# the shared graphs live next to this file; works in every pytest import mode
sys.path.insert(0, str(Path(__file__).parent))
from spore_graphs import EDGES, EDGES2, S, Y, adjacency  # noqa: E402

A1, A2 = adjacency(EDGES), adjacency(EDGES2)


def test_spec_vector_tv_d6_objective():
    K1 = np.eye(8) + 0.3 * A1
    lam_min2 = np.linalg.eigvalsh(A2)[0]
    assert lam_min2 == pytest.approx(-2.5615528128)
    K2 = np.eye(8) + A2 / abs(lam_min2)
    phi, om, lam = mkl_objective([K1, K2], [0.3, 0.7], Y, S, 1.0, 0.1)
    assert om == pytest.approx(2.403932717422, abs=1e-10)
    assert phi == pytest.approx(2.603932717422, abs=1e-10)
    assert lam == pytest.approx(2.0)


def test_spec_simplex_projection():
    np.testing.assert_allclose(project_simplex_rows([0.8, 0.6, -0.1]), [0.6, 0.4, 0.0])


@pytest.mark.parametrize("eta1, value", [(0.0, 1.681062), (0.5, 1.441547), (1.0, 1.300000)])
def test_fixed_eta_sdp_matches_spec(eta1, value):
    pytest.importorskip("cvxpy")
    from semisup.spore.sdp import mkl_spore_sdp_fixed_eta
    got = mkl_spore_sdp_fixed_eta([A1, A2], Y, S, 1.0, 0.1, [eta1, 1 - eta1])
    assert got == pytest.approx(value, abs=2e-6)


def test_mkl_iip_reaches_the_global_eta_grid_minimum():
    # global minimum over eta is 1.30 at eta = (1, 0) (spec TV-D6, SDP per eta)
    res = mkl_spore([A1, A2], Y, S, 1.0, 0.1, n_outer=400, n_inner=20)
    best = min(res.history["objective"])
    assert abs(best - 1.30) / 1.30 < 1e-3
    assert res.eta[0] > 0.99
    assert res.history["infeasibility"][res.best_iter] < 1e-2
    np.testing.assert_allclose([e.sum() for e in res.history["eta"]], 1.0)
