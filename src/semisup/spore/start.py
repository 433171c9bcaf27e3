"""The graph, start kernel and step length the SPORE estimators give IIP.

SPORE's feasible set ``K(G)`` is zero on the non-edges of ``G``, and its prediction
``yhat_i = sum_{j in S} K_ij alpha_j y_j`` reads only the labelled neighbours of ``i``: a
vertex with no labelled neighbour has nothing to borrow from (spore.md §3.1). The paper's
graphs are dense (similarity above its mean: about half of all pairs are edges), a kNN graph
is not (measured on two moons, 300 points, 5 labels per class: 70 % of the unlabelled
vertices of the 10-NN graph have no labelled neighbour). :func:`hop_start` therefore joins
the vertices within ``hops`` steps of a sparse graph, ``G^hops``, and starts IIP from the
unit-diagonal ``hops``-th power of the coupled start,

    ``K0 = D^{-1/2} B^p D^{-1/2}``,  ``B = I + A / |lambda_min(A)|``,  ``D = diag(B^p)``,

which lies in ``K(G^p)``: ``B`` is PSD (its smallest eigenvalue is 0), so is ``B^p`` and its
congruence by ``D^{-1/2}``; the diagonal is 1; and ``(B^p)_ij``, a sum of non-negative path
weights, is non-zero exactly when ``i`` and ``j`` are at most ``p`` steps apart. ``p = 1`` is
the coupled start ``I + A / |lambda_min(A)|`` itself.

:func:`distance_step` is the step ``R / sqrt(T)`` of the paper's Theorem 5 with ``R`` a bound
on the distance from ``K0`` to an optimum, computed rather than taken as ``n``: the block
matrix ``K* = blockdiag(K*_SS, I_U)`` is optimal (spore.md §3.1), and the off-diagonal
entries of the unit-diagonal PSD ``K*_SS`` lie in ``[-1, 1]``, so

    ``||K0 - K*||_F <= ||K0 - I||_F + ||K*_SS - I||_F <= ||K0 - I||_F + sqrt(m (m - 1))``.

The paper's ``R = n`` bounds the same distance over all of ``K(G)`` and is 5-30 times larger
on the graphs measured; with it five steps move ``K`` several times its own norm and the
iterates forget the start (accuracy below chance on two moons and breast cancer).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .iip import default_K0

__all__ = ["KNN_HOPS", "resolve_hops", "hop_start", "distance_step"]

#: hops joined on a kNN graph built from X (``hops="auto"``): measured on two moons, scaled
#: breast cancer and digits 3 vs 8 (5-10 labels per class), 3 to 6 hops all beat 1 by
#: 0.2-0.4 accuracy and 4 was the best or within 0.03 of it on each
KNN_HOPS = 4


def resolve_hops(hops, affinity) -> int:
    """``hops="auto"``: :data:`KNN_HOPS` on a kNN graph built from ``X``, 1 (the graph as
    given) for a precomputed graph and for the paper's dense thresholded graphs."""
    if hops == "auto":
        return KNN_HOPS if affinity == "knn" else 1
    return int(hops)


def _matrix_power(B, p):
    """``B^p`` for a dense symmetric ``B`` by repeated squaring (O(log p) products)."""
    out = None
    while p:
        if p & 1:
            out = B if out is None else out @ B
        p >>= 1
        if p:
            B = B @ B
    return out


def hop_start(A, hops: int, dtype=np.float64, v0=None):
    """The graph ``G^hops`` and the start kernel ``K0`` in ``K(G^hops)`` (module docstring).

    Parameters
    ----------
    A : sparse matrix of shape (n, n)
        0/1 adjacency (zero diagonal).
    hops : int
        Vertices at most ``hops`` steps apart become adjacent; 1 keeps ``A``.
    dtype : numpy float dtype
        Precision of the returned ``K0`` (the power is formed in float64).
    v0 : array of shape (n,), optional
        Lanczos start vector for ``lambda_min(A)`` (see :func:`.iip.default_K0`).

    Returns
    -------
    A_hops : scipy.sparse.csr_matrix
        0/1 adjacency of ``G^hops``.
    K0 : ndarray of shape (n, n)
    coupled : bool
        False when the graph has no edge (then ``K0 = I``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.eye(4, k=1) + np.eye(4, k=-1))      # the path 0-1-2-3
    >>> A2, K0, _ = hop_start(A, 2)
    >>> A2.toarray().astype(int)
    array([[0, 1, 1, 0],
           [1, 0, 1, 1],
           [1, 1, 0, 1],
           [0, 1, 1, 0]])
    >>> bool(np.allclose(np.diag(K0), 1) and np.linalg.eigvalsh(K0).min() > -1e-12)
    True
    """
    B, coupled = default_K0(A, np.float64, v0)
    if hops <= 1 or not coupled:
        return sp.csr_matrix(A), B.astype(dtype, copy=False), coupled
    M = _matrix_power(B, int(hops))
    M = 0.5 * (M + M.T)
    pattern = M > 0                         # path weights are non-negative: exact pattern
    np.fill_diagonal(pattern, False)
    d = 1.0 / np.sqrt(np.diag(M))
    M *= d[:, None]
    M *= d[None, :]
    np.fill_diagonal(M, 1.0)
    return sp.csr_matrix(pattern, dtype=np.float64), M.astype(dtype, copy=False), True


def distance_step(K0s, n_labeled: int, n_outer: int) -> float:
    """Step ``R / sqrt(T)`` with ``R`` bounding the distance from the start to an optimum.

    ``R = sqrt(sum_k (||K0_k - I||_F + sqrt(m (m - 1)))^2)`` over the start kernels (one
    for SPORE, one per graph for MKL-SPORE), ``m`` the number of labelled vertices; see the
    module docstring for why it bounds ``||K0 - K*||_F``.

    Examples
    --------
    >>> import numpy as np
    >>> round(distance_step([np.eye(3) + 0.5 * (1 - np.eye(3))], 2, 4), 4)
    1.3195
    """
    extra = math.sqrt(n_labeled * max(n_labeled - 1, 0))
    R2 = 0.0
    for K0 in K0s:
        K = np.asarray(K0)
        nrm = float(np.linalg.norm(K))                  # a dot product: no n x n temporary
        off = nrm * nrm - 2.0 * float(np.trace(K, dtype=np.float64)) + K.shape[0]
        R2 += (math.sqrt(max(off, 0.0)) + extra) ** 2
    return math.sqrt(R2) / math.sqrt(n_outer)
