"""Projections onto clustered sets: the non-convex step of every algorithm (spec §3).

* :func:`project_clustered` — vectors with at most Q distinct values = exact 1-D k-means.
* :func:`project_sparse_clustered` — k-sparse vectors whose non-zeros take at most Q values
  (the new dynamic program of §5.1), exact.
* :func:`project_kmeans` — matrices whose rows take at most Q distinct values: k-means++ and
  Lloyd (scikit-learn), approximate.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import sparse
from sklearn.cluster import kmeans_plusplus
from sklearn.utils import check_random_state

try:  # the same seeding without the public function's per-call validation, which took 60 %
    from sklearn.cluster._kmeans import _kmeans_plusplus  # of it inside Frank-Wolfe's oracle
except ImportError:  # pragma: no cover - a future scikit-learn may move it
    _kmeans_plusplus = None

from ..linalg.kmeans1d import backtrack, kmeans1d, kmeans1d_table

__all__ = ["Projection", "project_clustered", "project_sparse_clustered", "project_kmeans",
           "group_sums", "indicator"]


class Projection(NamedTuple):
    """``point`` = the projection; ``labels`` index ``centers`` (-1 = the zero group)."""

    point: np.ndarray
    labels: np.ndarray
    centers: np.ndarray


def _check_vector(x):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"expected a non-empty 1-D vector, got shape {x.shape}.")
    if not np.isfinite(x).all():
        raise ValueError("the vector to project contains NaN or infinite values.")
    return x


def project_clustered(x, n_clusters, weights=None) -> Projection:
    """Euclidean projection of ``x`` onto ``{w = Z v : Z in {0,1}^{d x Q}, Z 1 = 1}``.

    Exact 1-D k-means by dynamic programming, O(Q d log d) (spec §3.1).
    """
    x = _check_vector(x)
    res = kmeans1d(x, n_clusters, weights)
    return Projection(res.centers[res.labels], res.labels, res.centers)


def _side_table(a, n_clusters):
    """f[j, q] = max sum_g s_g mu_g^2 over partitions of a[:j] into <= q contiguous groups."""
    if a.size == 0:
        f = np.full((1, n_clusters + 1), 0.0)
        return f, np.zeros((n_clusters + 1, 1), dtype=np.int64)
    D, arg = kmeans1d_table(a - a.mean(), n_clusters)
    ss = np.concatenate(([0.0], np.cumsum(a * a)))
    # sum s mu^2 = sum a^2 - SSE (every group takes its mean)
    return (ss[None, :] - D).T, arg


def project_sparse_clustered(x, n_nonzero, n_clusters) -> Projection:
    """Euclidean projection onto k-sparse vectors whose non-zeros take at most Q values.

    Solves ``min ||x - w||^2`` over ``{w : ||w||_0 <= k, |{w_i : w_i != 0}| <= Q}``
    (Roulet et al. 2016, §5.1; spec §3.2). With groups taking their means,
    ``||x - w||^2 = ||x||^2 - sum_q s_q mu_q^2``; an optimal support is made of the j smallest
    and the l largest values (j + l <= k), each side split into contiguous groups of the
    sorted order. Each side's best value for every (j, q) is ``prefix sum of squares - SSE``,
    read from the 1-D k-means DP table; the sign constraint of the paper can be dropped
    because every candidate it admits is itself feasible. The two sides are then combined by
    a grid search with a running maximum.

    Parameters
    ----------
    x : array-like of shape (d,)
    n_nonzero : int
        Sparsity k, 0 <= k (values above d mean no sparsity constraint beyond d).
    n_clusters : int
        Q >= 1.

    Returns
    -------
    Projection
        ``labels`` = -1 on zeros, else the index into ``centers`` (ascending).

    Notes
    -----
    O(d log d + Q k log k) time, O(Q k) memory, instead of the paper's O(k^2 Q).
    """
    x = _check_vector(x)
    if int(n_clusters) != n_clusters or n_clusters < 1:
        raise ValueError(f"n_clusters must be a positive integer, got {n_clusters!r}.")
    if int(n_nonzero) != n_nonzero or n_nonzero < 0:
        raise ValueError(f"n_nonzero must be a non-negative integer, got {n_nonzero!r}.")
    d = x.size
    k = min(int(n_nonzero), d)
    Q = int(n_clusters)
    if k == 0:
        return Projection(np.zeros(d), np.full(d, -1, dtype=np.int64), np.zeros(0))
    order = np.argsort(x, kind="stable")
    neg_idx, pos_idx = order[:k], order[::-1][:k]
    fneg, argneg = _side_table(x[neg_idx], Q)          # (k+1, Q+1)
    fpos, argpos = _side_table(x[pos_idx], Q)
    # running maximum over l <= m of the positive side, for every number of groups, and the
    # first l attaining it (the last strict improvement up to m)
    gpos = np.maximum.accumulate(fpos, axis=0)
    improved = np.ones_like(fpos, dtype=bool)
    improved[1:] = fpos[1:] > gpos[:-1]
    best_l = np.maximum.accumulate(np.where(improved, np.arange(k + 1)[:, None], 0), axis=0)
    # total[j, q] = fneg[j, q] + gpos[k - j, Q - q]
    total = fneg + gpos[::-1, ::-1]
    j, q = np.unravel_index(np.argmax(total), total.shape)
    l, qp = int(best_l[k - j, Q - q]), Q - q
    w = np.zeros(d)
    groups = []
    for idx, arg, n_take, n_groups in ((neg_idx, argneg, j, q), (pos_idx, argpos, l, qp)):
        if n_take == 0:
            continue
        seg = backtrack(arg, n_groups, n_take)
        members = idx[:n_take]
        means = np.bincount(seg, x[members]) / np.bincount(seg)
        w[members] = means[seg]
        # a group whose mean is exactly 0 is part of the zero set, not a cluster
        groups.extend((mean, members[seg == g]) for g, mean in enumerate(means) if mean != 0)
    groups.sort(key=lambda g: g[0])
    labels = np.full(d, -1, dtype=np.int64)
    for g, (_, members) in enumerate(groups):
        labels[members] = g
    centers = np.array([g[0] for g in groups])
    return Projection(w, labels, centers)


def indicator(labels, n_groups=None):
    """Dense assignment matrix Z (m x Q) of a label vector."""
    labels = np.asarray(labels)
    q = int(labels.max()) + 1 if n_groups is None else n_groups
    Z = np.zeros((labels.size, q))
    Z[np.arange(labels.size), labels] = 1.0
    return Z


def group_sums(W, labels, n_groups):
    """Row sums of ``W`` per group: ``S[q] = sum_{labels_i = q} W_i`` = ``Z^T W``, (Q, p).

    The indicator product (dense Z for small Q n, sparse otherwise): one BLAS call instead
    of ``np.add.at``, which is about 30x slower on the (1000 x 10, Q = 3) sizes of the FW
    oracle.
    """
    n = labels.shape[0]
    if n_groups * n <= 1_000_000:
        return indicator(labels, n_groups).T @ W
    Z = sparse.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(n_groups, n))
    return np.asarray(Z @ W)


def _count_distinct_rows(W, limit):
    """min(number of distinct rows of ``W``, limit + 1) in O(limit * m * p).

    ``np.unique(W, axis=0)`` sorts the rows (O(m log m * p)) on every oracle call; only
    whether there are at most ``limit`` distinct rows matters here.
    """
    # distinct projections imply distinct rows: one product settles the usual case
    probe = np.linspace(1.0, 2.0, W.shape[1])
    if np.unique(W @ probe).size > limit:
        return limit + 1
    rest = W
    for count in range(limit + 1):
        if rest.shape[0] == 0:
            return count
        rest = rest[np.any(rest != rest[0], axis=1)]
    return limit + 1


def _seed(W, n_clusters, rng, sq_norms):
    """scikit-learn's k-means++ centres for ``W``, drawn from ``rng`` (a RandomState)."""
    if _kmeans_plusplus is None:  # pragma: no cover
        return kmeans_plusplus(W, n_clusters, random_state=rng)[0]
    return _kmeans_plusplus(W, n_clusters, sq_norms, np.ones(W.shape[0]), rng)[0]


def _lloyd(W, centers, sq, max_iter=100):
    """Lloyd iterations from given centres; empty clusters keep their centre.

    ``sq``: the squared row norms of ``W``, shared with the seeding.
    """
    labels = None
    for _ in range(max_iter):
        dist = sq[:, None] - 2.0 * W @ centers.T + np.einsum("ij,ij->i", centers, centers)
        new = np.argmin(dist, axis=1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=centers.shape[0])
        sums = group_sums(W, labels, centers.shape[0])
        filled = counts > 0
        centers = centers.copy()
        centers[filled] = sums[filled] / counts[filled, None]
    inertia = float(np.sum((W - centers[labels]) ** 2))
    return labels, centers, inertia


def project_kmeans(W, n_clusters, *, random_state=None, n_init=10, init=None) -> Projection:
    """Approximate projection of the rows of ``W`` onto matrices with <= Q distinct rows.

    k-means++ seeding (scikit-learn's ``kmeans_plusplus``) followed by Lloyd iterations,
    ``n_init`` restarts; when ``init`` (previous centres, shape (Q, p)) is given, a
    warm-started run competes with the restarts and the lowest inertia wins.
    O(n_init * t * Q * m * p).

    Parameters
    ----------
    W : ndarray of shape (m, p)
    n_clusters : int
        Q; reduced to the number of distinct rows when there are fewer (then exact).
    random_state : int, RandomState or None
    n_init : int
        Number of k-means++ restarts (0 is allowed when ``init`` is given).
    init : ndarray of shape (Q, p), optional
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ValueError(f"W must be 2-D, got shape {W.shape}.")
    if not np.isfinite(W).all():
        raise ValueError("W contains NaN or infinite values.")
    n_distinct = _count_distinct_rows(W, int(n_clusters))
    q = min(int(n_clusters), n_distinct)
    if q == n_distinct:  # every distinct row is its own centre: exact
        centers, labels = np.unique(W, axis=0, return_inverse=True)
        return Projection(W.copy(), labels.ravel().astype(np.int64), centers)
    rng = check_random_state(random_state)
    best = None
    starts = [np.asarray(init, dtype=np.float64)] if init is not None and \
        np.shape(init) == (q, W.shape[1]) else []
    sq = np.einsum("ij,ij->i", W, W)
    for _ in range(n_init if starts else max(n_init, 1)):
        starts.append(_seed(W, q, rng, sq))
    for c0 in starts:
        run = _lloyd(W, c0, sq)
        if best is None or run[2] < best[2]:
            best = run
    labels, centers, _ = best
    return Projection(centers[labels], labels.astype(np.int64), centers)
