"""SPORE's optimum through the labelled block (semisup.spore.reduced, spore.md §3.1).

Its agreement with the cvxpy SDP on a random graph is checked beside IIP's in
test_spore_iip.py (one SDP solve for both).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

from semisup.spore.iip import edge_mask, infeasibility, spore_objective
from semisup.spore.reduced import labeled_subgraph, spore_optimum

sys.path.insert(0, str(Path(__file__).parent))
from spore_graphs import EDGES, S, Y, adjacency, random_graph  # noqa: E402

A8 = adjacency(EDGES)


@pytest.mark.parametrize("C, beta, psi", [(0.3, 0.2, 1.45), (1.0, 0.1, 1.30), (0.5, 0.05, 1.15)])
def test_spec_vector_tv_d3_through_labelled_block(C, beta, psi):
    res = spore_optimum(A8, Y, S, C, beta, n_outer=400, n_inner=20)
    assert res.value == pytest.approx(psi, rel=1e-3)  # infeasible iterates may undershoot
    # the assembled K is (nearly) feasible for the whole graph and attains the value there
    assert infeasibility(res.K, edge_mask(A8)) < 1e-2
    assert spore_objective(res.K, Y, S, C, beta)[0] == pytest.approx(res.value, rel=1e-9)
    unl = np.setdiff1d(np.arange(8), S)
    assert np.all(res.K[np.ix_(S, unl)] == 0)


def test_subgraph_and_bad_input(rng):
    import scipy.sparse as sp
    A = random_graph(12, 0.4, rng)
    lab = np.array([5, 1, 7])
    np.testing.assert_array_equal(labeled_subgraph(sp.csr_matrix(A), lab), A[np.ix_(lab, lab)])
    with pytest.raises(ValueError, match="no labelled"):
        spore_optimum(A, np.ones(12), np.array([], dtype=int), 1.0, 0.1)
    with pytest.raises(ValueError, match="repeated"):
        spore_optimum(A, np.ones(12), np.array([1, 1]), 1.0, 0.1)
