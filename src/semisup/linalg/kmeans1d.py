"""Exact one-dimensional k-means by dynamic programming (Bellman 1973; Wang & Song 2011).

The d scalars are sorted; an optimal 1-D clustering is then a split of the sorted sequence
into at most Q contiguous segments, and

    D[q][j] = min_{q <= i <= j}  D[q-1][i-1] + SSE(a_i .. a_j),      D[0][0] = 0,

(Roulet et al. 2016, spec §3.1) with weighted within-segment sums of squares read in O(1)
from prefix sums. The optimal split point is monotone in ``j`` (the SSE cost is a Monge
array), so each layer is filled by divide and conquer in O(d log d): O(Q d log d) in all,
instead of O(Q d^2).

Two interchangeable backends compute the same table: a numba-compiled loop (used when
numba, the ``[fast]`` extra, is importable) that also stops scanning split points once
the last group's SSE alone exceeds the best total (the pruning of Ckmeans.1d.dp), and a
numpy version that vectorizes each level of the divide-and-conquer recursion (O(log d)
array passes per layer). With tied optima they may pick different (equally good) splits.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._optional import available

__all__ = ["KMeans1DResult", "kmeans1d", "kmeans1d_table", "backtrack"]


class KMeans1DResult(NamedTuple):
    """Labels index ``centers`` (ascending); ``cost`` = sum_i w_i (x_i - centers[labels_i])^2."""

    labels: np.ndarray
    centers: np.ndarray
    cost: float


def _prefix(a, w):
    wp = np.concatenate(([0.0], np.cumsum(w)))
    sp = np.concatenate(([0.0], np.cumsum(w * a)))
    ssp = np.concatenate(([0.0], np.cumsum(w * a * a)))
    return wp, sp, ssp


def _table_numpy(wp, sp, ssp, n_layers):
    m = wp.shape[0] - 1
    D = np.zeros((n_layers + 1, m + 1))
    D[0, 1:] = np.inf
    arg = np.zeros((n_layers + 1, m + 1), dtype=np.int64)
    for q in range(1, n_layers + 1):
        prev, cur = D[q - 1], D[q]
        cur[:q] = 0.0  # at most q groups: j <= q points are each alone, cost 0
        arg[q, :q] = np.arange(min(q, m + 1))   # (more layers than points: q > m)
        if q > m:
            continue
        # segments of the recursion: target j in [jlo, jhi], split i in [ilo, ihi]
        jlo = np.array([q]); jhi = np.array([m]); ilo = np.array([q]); ihi = np.array([m])
        while jlo.size:
            mid = (jlo + jhi) // 2
            hi = np.minimum(mid, ihi)
            counts = hi - ilo + 1
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            seg = np.repeat(np.arange(jlo.size), counts)
            i = np.arange(counts.sum()) - np.repeat(starts, counts) + np.repeat(ilo, counts)
            j = mid[seg]
            ws = wp[j] - wp[i - 1]
            s = sp[j] - sp[i - 1]
            vals = prev[i - 1] + (ssp[j] - ssp[i - 1]) - s * s / ws
            minv = np.minimum.reduceat(vals, starts)
            hit = np.flatnonzero(vals == minv[seg])
            _, first = np.unique(seg[hit], return_index=True)
            best = i[hit[first]]
            cur[mid] = minv
            arg[q, mid] = best
            left = jlo <= mid - 1
            right = mid + 1 <= jhi
            jlo, jhi, ilo, ihi = (np.concatenate((jlo[left], mid[right] + 1)),
                                  np.concatenate((mid[left] - 1, jhi[right])),
                                  np.concatenate((ilo[left], best[right])),
                                  np.concatenate((best[left], ihi[right])))
    return D, arg


_NUMBA_TABLE = None


def _numba_table():
    global _NUMBA_TABLE
    if _NUMBA_TABLE is None:
        import numba

        @numba.njit(cache=True)
        def table(wp, sp, ssp, n_layers):  # pragma: no cover - compiled
            m = wp.shape[0] - 1
            D = np.zeros((n_layers + 1, m + 1))
            for j in range(1, m + 1):
                D[0, j] = np.inf
            arg = np.zeros((n_layers + 1, m + 1), dtype=np.int64)
            stack = np.empty((4 * (m + 2) + 64, 4), dtype=np.int64)
            for q in range(1, n_layers + 1):
                for j in range(min(q, m + 1)):
                    arg[q, j] = j
                if q > m:
                    continue
                top = 0
                stack[0, 0] = q; stack[0, 1] = m; stack[0, 2] = q; stack[0, 3] = m
                top = 1
                while top > 0:
                    top -= 1
                    jlo = stack[top, 0]; jhi = stack[top, 1]
                    ilo = stack[top, 2]; ihi = stack[top, 3]
                    mid = (jlo + jhi) // 2
                    hi = min(mid, ihi)
                    lo = ilo
                    if q >= 2 and arg[q - 1, mid] > lo:
                        # with one more group the last group cannot start earlier
                        lo = arg[q - 1, mid]
                    bestv = np.inf
                    besti = hi
                    # scan the last group's start downwards: its SSE only grows, and once
                    # it alone exceeds the best total no earlier start can win (D >= 0)
                    for i in range(hi, lo - 1, -1):
                        ws = wp[mid] - wp[i - 1]
                        s = sp[mid] - sp[i - 1]
                        sse = (ssp[mid] - ssp[i - 1]) - s * s / ws
                        if sse >= bestv:
                            break
                        v = D[q - 1, i - 1] + sse
                        if v < bestv:
                            bestv = v
                            besti = i
                    D[q, mid] = bestv
                    arg[q, mid] = besti
                    if jlo <= mid - 1:
                        stack[top, 0] = jlo; stack[top, 1] = mid - 1
                        stack[top, 2] = ilo; stack[top, 3] = besti
                        top += 1
                    if mid + 1 <= jhi:
                        stack[top, 0] = mid + 1; stack[top, 1] = jhi
                        stack[top, 2] = besti; stack[top, 3] = ihi
                        top += 1
            return D, arg

        _NUMBA_TABLE = table
    return _NUMBA_TABLE


def _resolve_backend(backend):
    if backend == "auto":
        return "numba" if available("numba") else "numpy"
    if backend not in ("numba", "numpy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {backend!r}.")
    return backend


def kmeans1d_table(a_sorted, n_clusters, weights=None, *, backend="auto"):
    """DP tables of optimal 1-D k-means on every prefix of sorted data.

    Parameters
    ----------
    a_sorted : ndarray of shape (m,)
        Values sorted ascending (or descending: any order defines "contiguous").
    n_clusters : int
        Number of layers Q of the table.
    weights : ndarray of shape (m,), optional
        Positive weights (default all ones).
    backend : {"auto", "numba", "numpy"}

    Returns
    -------
    D : ndarray of shape (Q + 1, m + 1)
        ``D[q, j]`` = minimal weighted SSE of the first j values in at most q contiguous
        groups (0 when j <= q; ``D[0, j>0] = inf``).
    arg : ndarray of int, shape (Q + 1, m + 1)
        1-based start of the last group in the optimum for ``D[q, j]``.

    Notes
    -----
    O(Q m log m) time, O(Q m) memory. Values should be centred by the caller to limit
    cancellation in the prefix sums.
    """
    a = np.ascontiguousarray(a_sorted, dtype=np.float64)
    w = np.ones_like(a) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    # checked before the compiled table, which indexes its arrays unchecked
    if a.ndim != 1 or w.shape != a.shape:
        raise ValueError(f"a_sorted must be 1-D and weights of its shape, got {a.shape} and "
                         f"{w.shape}.")
    if not (np.isfinite(a).all() and np.isfinite(w).all() and (w > 0).all()):
        raise ValueError("a_sorted must be finite and weights finite and positive.")
    if int(n_clusters) != n_clusters or n_clusters < 0:
        raise ValueError(f"n_clusters must be a non-negative integer, got {n_clusters!r}.")
    wp, sp, ssp = _prefix(a, w)
    if _resolve_backend(backend) == "numba":
        return _numba_table()(wp, sp, ssp, int(n_clusters))
    return _table_numpy(wp, sp, ssp, int(n_clusters))


def backtrack(arg, q, j):
    """Segment index (0-based, ascending) of each of the first ``j`` sorted values."""
    seg = np.empty(j, dtype=np.int64)
    groups = []
    while j > 0:
        if j <= q:  # each remaining value alone (the "at most q" convention)
            groups.extend((t, t + 1) for t in range(j - 1, -1, -1))
            break
        i = int(arg[q, j])
        groups.append((i - 1, j))
        j, q = i - 1, q - 1
    for g, (lo, hi) in enumerate(reversed(groups)):
        seg[lo:hi] = g
    return seg


def kmeans1d(x, n_clusters, weights=None, *, backend="auto") -> KMeans1DResult:
    """Globally optimal (weighted) k-means of d scalars.

    Solves ``min_{labels, centers} sum_i w_i (x_i - centers[labels_i])^2`` with at most
    ``n_clusters`` groups: the Euclidean projection of ``x`` onto vectors taking at most Q
    distinct values (Roulet et al. 2016, spec §3.1) when the weights are 1.

    Parameters
    ----------
    x : array-like of shape (d,)
        Finite values.
    n_clusters : int
        Q >= 1. With Q >= d every value is its own cluster (``Q_eff = min(Q, d)``); with
        fewer distinct values than Q, several clusters may share a centre (the projection is
        still exact).
    weights : array-like of shape (d,), optional
        Positive weights.
    backend : {"auto", "numba", "numpy"}
        "auto" uses numba when installed.

    Returns
    -------
    KMeans1DResult
        ``labels`` (d,) in 0..Q_eff-1 indexing ``centers`` sorted ascending, and ``cost``.

    Notes
    -----
    O(d log d + Q d log d) time, O(Q d) memory.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {x.shape}.")
    d = x.shape[0]
    if d == 0:
        raise ValueError("x is empty.")
    if not np.isfinite(x).all():
        raise ValueError("x contains NaN or infinite values.")
    if int(n_clusters) != n_clusters or n_clusters < 1:
        raise ValueError(f"n_clusters must be a positive integer, got {n_clusters!r}.")
    if weights is None:
        w = np.ones(d)
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != x.shape:
            raise ValueError(f"weights has shape {w.shape}, expected {x.shape}.")
        if not np.isfinite(w).all() or (w <= 0).any():
            raise ValueError("weights must be finite and strictly positive.")
    q = min(int(n_clusters), d)
    order = np.argsort(x, kind="stable")
    a, ws = x[order], w[order]
    shift = np.dot(ws, a) / ws.sum()  # centring limits cancellation in the prefix sums
    _, arg = kmeans1d_table(a - shift, q, ws, backend=backend)
    seg = backtrack(arg, q, d)
    sums = np.bincount(seg, ws * a, minlength=q)
    wsum = np.bincount(seg, ws, minlength=q)
    centers = sums / wsum
    labels = np.empty(d, dtype=np.int64)
    labels[order] = seg
    cost = float(np.dot(w, (x - centers[labels]) ** 2))
    return KMeans1DResult(labels, centers, cost)
