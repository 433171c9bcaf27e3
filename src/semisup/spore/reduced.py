"""The SPORE optimum through its labelled block (spore.md §3.1).

For every feasible ``K`` in the elliptope ``K(G)``, ``omega_C`` depends on ``K_SS`` only and,
by eigenvalue interlacing, ``lambda_1(K) >= lambda_1(K_SS)``. The block-diagonal matrix

    K' = [[K_SS, 0], [0, I]]          (rows/columns ordered S, U)

is also in ``K(G)`` (unit diagonal, zero on every non-edge, PSD) and has
``lambda_1(K') = max(lambda_1(K_SS), 1) = lambda_1(K_SS)`` because a unit diagonal forces
``lambda_1(K_SS) >= 1``. So ``g(K') <= g(K)``: the optimal value of SPORE on ``G`` equals that
of SPORE on the subgraph induced by the labelled vertices, an ``l x l`` problem, and
``K'`` built from its solution is optimal for ``G``.

This is the fast way to the SPORE *optimum* (IIP on ``l`` instead of ``n`` vertices: the dense
eigendecompositions shrink from ``O(n^3)`` to ``O(l^3)``). It is also why the optimum is useless
for transduction: ``K'_US = 0`` gives every unlabelled vertex the score 0. The accuracies of
the paper come from early-stopped IIP iterates on the whole graph (:func:`.iip.iip_spore`),
not from the optimum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .iip import IIPResult, iip_spore

__all__ = ["ReducedResult", "labeled_subgraph", "spore_optimum"]


@dataclass
class ReducedResult:
    """Result of :func:`spore_optimum`.

    Attributes
    ----------
    value : float
        Best objective ``g`` found on the labelled block (= SPORE's optimal value on ``G``
        up to the solver's accuracy).
    K : ndarray (n, n)
        An optimal kernel of the full problem: the best labelled block, identity elsewhere.
    K_SS : ndarray (l, l)
        The best labelled block.
    iip : IIPResult
        The IIP run on the labelled subgraph.
    """

    value: float
    K: np.ndarray
    K_SS: np.ndarray
    iip: IIPResult


def labeled_subgraph(A, labeled):
    """Adjacency of the subgraph induced by ``labeled`` (same order), dense."""
    labeled = np.asarray(labeled)
    if sp.issparse(A):
        return sp.csr_matrix(A)[labeled][:, labeled].toarray()
    return np.asarray(A)[np.ix_(labeled, labeled)]


def spore_optimum(A, y, labeled, C: float, beta: float, n_outer: int = 400, n_inner=None,
                  step=None, dtype=np.float64, verbose: bool = False) -> ReducedResult:
    """SPORE's optimal value and an optimal ``K`` via the labelled block (module docstring).

    Parameters are those of :func:`.iip.iip_spore`, applied to the subgraph induced by
    ``labeled`` (with its own default start ``K0`` and step ``l / sqrt(T)``).

    Returns
    -------
    ReducedResult
    """
    labeled = np.asarray(labeled)
    n = A.shape[0]
    if labeled.size == 0:
        raise ValueError("no labelled vertex: SPORE's objective needs labels.")
    if np.unique(labeled).size != labeled.size:
        raise ValueError("labeled contains repeated vertices.")
    A_SS = labeled_subgraph(A, labeled)
    yS = np.asarray(y, dtype=np.float64)[labeled]
    res = iip_spore(A_SS, yS, np.arange(labeled.size), C, beta, n_outer=n_outer,
                    n_inner=n_inner, step=step, dtype=dtype, verbose=verbose)
    K_SS = np.asarray(res.K_best, dtype=np.float64)
    K = np.eye(n)
    K[np.ix_(labeled, labeled)] = K_SS
    return ReducedResult(value=float(min(res.history["objective"])), K=K, K_SS=K_SS,
                         iip=res)
