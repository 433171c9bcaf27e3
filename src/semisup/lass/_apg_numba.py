"""Compiled kernels of the accelerated projected gradient (optional ``[fast]`` extra, numba).

Imported only when numba is installed (see :func:`semisup.lass.apg.apg`, ``backend=``); the
numpy/scipy path of :mod:`semisup.lass.apg` computes the same quantities and stays the
fallback. Why compiled: at 100 000 x 20 one APG iteration in numpy/scipy is ~170 ms CPU,
half of it scipy's single-threaded CSR x dense product and most of the rest numpy
temporaries of the projection and the extrapolation; these kernels run over rows in
parallel (``prange``, all cores) and make one pass over the N x K arrays per kernel.
All arithmetic is float64 and in the same order as the numpy path, so results agree to
rounding. ``cache=True``: the one-off compilation (a few seconds) is stored next to this
file and reused by later processes.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..linalg._sparse_numba import check_csr_operands, csr_matmul

__all__ = ["check_csr_operands", "csr_matmul", "project_rows", "fista_step", "objective_gap"]


@njit(cache=True, inline="always")
def _michelot_row(w):
    """Project the vector ``w`` onto the simplex in place (Michelot's active-set
    iteration, as :func:`semisup.lass.apg.project_rows_michelot` does for every row)."""
    k = w.shape[0]
    s = 0.0
    for j in range(k):
        s += w[j]
    tau = (s - 1.0) / k
    for _ in range(k):
        s = 0.0
        cnt = 0
        for j in range(k):
            if w[j] > tau:
                s += w[j]
                cnt += 1
        new = (s - 1.0) / cnt
        if new == tau:
            break
        tau = new
    for j in range(k):
        v = w[j] - tau
        w[j] = v if v > 0.0 else 0.0


@njit(parallel=True, cache=True)
def project_rows(V, out):
    """Row-wise simplex projection of ``V`` into ``out`` (may be ``V``)."""
    n, k = V.shape
    for i in prange(n):
        for j in range(k):
            out[i, j] = V[i, j]
        _michelot_row(out[i])
    return out


@njit(parallel=True, cache=True)
def fista_step(Z, dZ, LZ, LZp, stepG, c, beta, Zn, dZn):
    """One FISTA step, fused: ``Zn = Pi(V - step grad F(V))`` with ``V = Z + beta dZ`` and
    ``L V = (1 + beta) LZ - beta LZp``; ``dZn = Zn - Z``. Returns the restart inner
    products ``(<dZ, dZn>, <dZn, dZn>)``. Same operation order as the numpy path."""
    n, k = Z.shape
    a = -c * (1.0 + beta)
    cb = c * beta
    dz_dzn = 0.0
    dzn_dzn = 0.0
    for i in prange(n):
        w = Zn[i]
        for j in range(k):
            x = LZ[i, j] * a + stepG[i, j] + Z[i, j]
            if beta > 0.0:
                x += LZp[i, j] * cb
                x += dZ[i, j] * beta
            w[j] = x
        _michelot_row(w)
        r1 = 0.0
        r2 = 0.0
        for j in range(k):
            d = w[j] - Z[i, j]
            dZn[i, j] = d
            r1 += dZ[i, j] * d
            r2 += d * d
        dz_dzn += r1
        dzn_dzn += r2
    return dz_dzn, dzn_dzn


@njit(parallel=True, cache=True)
def objective_gap(Z, LZ, G, two_lam):
    """With ``S = two_lam LZ - G`` (the gradient): ``(<Z, S>, <G, Z>, sum_n min_k s_nk)``,
    from which ``F = (<Z,S> - <G,Z>) / 2`` and the Frank-Wolfe gap ``<Z,S> - sum min``."""
    n, k = Z.shape
    zs = 0.0
    gz = 0.0
    smin = 0.0
    for i in prange(n):
        r1 = 0.0
        r2 = 0.0
        mn = np.inf
        for j in range(k):
            s = LZ[i, j] * two_lam - G[i, j]
            r1 += Z[i, j] * s
            r2 += G[i, j] * Z[i, j]
            if s < mn:
                mn = s
        zs += r1
        gz += r2
        smin += mn
    return zs, gz, smin
