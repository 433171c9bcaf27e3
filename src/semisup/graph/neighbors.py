"""k-nearest-neighbour graphs, exact (blocked BLAS products) or approximate (pynndescent).

The exact search's pieces (:func:`check_points`, :func:`prepare_points`, :func:`pair_keys`,
:func:`exact_candidate_distances`, :func:`rank_candidates`, :func:`scale_from_max`) are
public: an engine computes the same search elsewhere from them (the Dask engine does it
blockwise on the workers, :mod:`semisup.distributed.neighbors`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .._optional import available, require
from .._threads import n_workers
from .._validation import check_finite, divide
from ..engines import engine_for
from .weights import symmetrize_graph

#: ``method="auto"``: the exact search while its work ``n^2 (EXACT_PAIR_WORK + d)`` is at
#: most this, NN-descent above (:func:`auto_search_method`). On this project's two cores
#: the exact search took 2-3e-12 s per unit (40 000 MNIST images: 10.5 s, all 70 000: 24.8 s;
#: 80 000 x 50: 11.8 s; 80 000 x 10: 10.7 s), so the bound is about 15-20 s of search;
#: NN-descent's first call in a process pays pynndescent's numba compilation, 21-24 s
#: whatever n (a second call on 25 000 x 50 points: 0.4 s; all of MNIST warm: 4-8 s), and
#: its graph is approximate: in a fresh process PoissonLearning().fit on all of MNIST took
#: 29.6 s with it and 27.4 s with the exact search, which the bound leaves to NN-descent.
AUTO_EXACT_WORK = 6.5e12
#: the per-pair work of the exact search besides the products (threshold, selection), in
#: units of one coordinate's multiply-add
EXACT_PAIR_WORK = 850

_WEIGHTS = ("binary", "heat", "distance", "self_tuning")
_METRICS = ("euclidean", "cosine")


#: memory budget of the exact search's working tile (keys of a block of pairs)
EXACT_BLOCK_BYTES = 256 * 2 ** 20

_U32 = 2.0 ** -24  # unit round-off of float32

#: largest densified block of sparse query points (beyond: sparse x sparse products)
_DENSE_QUERY_BYTES = 64 * 2 ** 20

#: the projected lower bound (:func:`projected_bound_points`) keeps the leading principal
#: directions holding this fraction of the variance, and is used when they are at most
#: ``_BOUND_MAX_FRACTION`` of the dimensions (fewer flops per pair than the full products)
_BOUND_VARIANCE = 0.95
_BOUND_MAX_FRACTION = 1 / 3
#: ... and when there are at least this many points (below, the full products are cheap)
_BOUND_MIN_POINTS = 4096
#: rows of the sample whose covariance gives the directions (any orthonormal directions
#: give a valid bound; a sample gives good ones for the price of a small product)
_BOUND_SAMPLE = 16384


def _map(fn, args, n_threads):
    """``[fn(*a) for a in args]``, on ``n_threads`` threads when more than one (the numpy
    work inside releases the GIL)."""
    if n_threads <= 1 or len(args) <= 1:
        return [fn(*a) for a in args]
    with ThreadPoolExecutor(min(n_threads, len(args))) as pool:
        return list(pool.map(lambda a: fn(*a), args))


def projected_bound_points(X, *, variance=_BOUND_VARIANCE, max_fraction=_BOUND_MAX_FRACTION,
                           sample=_BOUND_SAMPLE):
    """Points ``Z`` in ``p + 1`` dimensions whose distances bound ``X``'s from below.

    ``z = [V^T (x - mu), |(I - V V^T)(x - mu)|]`` with ``V`` the ``p`` leading principal
    directions (of a strided sample's covariance): for any orthonormal ``V``,
    ``|x - y|^2 = |V^T (x - y)|^2 + |(I - V V^T)(x - y)|^2 >= |z_x - z_y|^2`` (the second
    term is at least the squared difference of the residuals' norms), and ``|z| = |x - mu|``.
    The bound is tight for near pairs only when ``X`` is near a ``p``-dimensional subspace;
    ``p`` is the smallest dimension holding ``variance`` of the sample's variance, and
    ``None`` is returned when ``p + 1`` exceeds ``max_fraction`` of the dimensions (no
    saving). Returns ``(Z, mu)`` or ``None``; ``X`` dense float64.
    """
    n, d = X.shape
    mu = X.mean(axis=0)
    S = X[::max(1, n // sample)] - mu
    w, V = np.linalg.eigh(S.T @ S)
    w, V = np.clip(w[::-1], 0, None), V[:, ::-1]
    total = w.sum()
    if not total > 0:
        return None
    p = min(d, int(np.searchsorted(np.cumsum(w) / total, variance)) + 1)
    if p + 1 > max_fraction * d:
        return None
    V = np.ascontiguousarray(V[:, :p])
    Z = np.empty((n, p + 1))
    step = max(1, 2 ** 22 // d)
    for lo in range(0, n, step):
        Xc = X[lo:lo + step] - mu
        C = Xc @ V
        Z[lo:lo + step, :p] = C
        # |residual|^2 = |x - mu|^2 - |V^T (x - mu)|^2; its cancellation error is at most
        # ~ sqrt(d eps) |x - mu| on the norm, which the certificate's margin covers
        r2 = np.einsum("ij,ij->i", Xc, Xc) - np.einsum("ij,ij->i", C, C)
        Z[lo:lo + step, p] = np.sqrt(np.maximum(r2, 0.0))
    return Z, mu


def prepare_points(X, metric):
    """``(X, sq)``: the float64 points the search ranks (cosine: unit rows, zero rows stay
    zero) and their squared norms, dense or CSR like ``X``."""
    X = X.astype(np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if metric == "cosine":
        X = normalize(X)
    sq = (np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X)
          else np.einsum("ij,ij->i", X, X))
    return X, sq


def _gram(Q, X):
    """``Q @ X.T`` as a dense array, for dense or sparse (CSR) ``Q`` and ``X``."""
    if sp.issparse(X):
        if sp.issparse(Q) and Q.shape[0] * Q.shape[1] * 8 > _DENSE_QUERY_BYTES:
            # many features (text): a densified query block would not fit; sparse product
            return np.asarray((Q @ X.T).toarray())
        # a dense query block against the sparse points: sparse @ dense, no sparse GEMM
        Qd = Q.toarray() if sp.issparse(Q) else np.asarray(Q)
        return np.ascontiguousarray((X @ Qd.T).T)
    if sp.issparse(Q):
        return np.asarray(Q @ X.T)
    return Q @ X.T


def pair_keys(X, sq, metric):
    """Factors ``(Lf, Rf)`` with ``Lf[i] . Rf[j]`` the ranking key of the pair ``(i, j)``.

    Euclidean: the squared distance ``|x_i|^2 + |x_j|^2 - 2 x_i.x_j``, from
    ``Lf = [-2x, |x|^2, 1]`` and ``Rf = [x, 1, |x|^2]``; cosine: ``-x_i.x_j`` on unit rows.
    One product per tile then gives keys that are symmetric and need no further pass.
    """
    if metric == "cosine":
        return -X, X
    dt = X.dtype
    one = np.ones_like(sq, dtype=dt)[:, None]  # sq's array module (numpy, or CuPy on a GPU)
    s = sq.astype(dt)[:, None]
    if sp.issparse(X):
        return (sp.hstack([X * -2.0, s, one], format="csr"),
                sp.hstack([X, one, s], format="csr"))
    return np.hstack([X * dt.type(-2), s, one]), np.hstack([X, one, s])


def _filter_tile(K, m, thr, transposed=False):
    """Entries of each query's keys in tile ``K`` that can enter the query's ``m`` smallest.

    The queries are ``K``'s rows, or its columns if ``transposed`` (the tile then serves
    the pairs' other side without a transposed copy). ``thr`` is each query's current m-th
    smallest key (``inf`` before m are known); on wide tiles a strided sample tightens it:
    the sample's m-th smallest bounds the tile's. Returns the padded keys ``P`` (``inf``
    padding), their tile positions ``Pi`` and ``thr``: every entry left out exceeds it. The
    filter costs ~2 ns per entry against ~15 for ``np.argpartition`` over the whole tile.
    """
    ax = 0 if transposed else 1
    b, w = K.shape[1 - ax], K.shape[ax]
    ns = max(1024, 8 * m)
    first = not np.isfinite(thr).all()  # the queries' first tile
    thr = np.minimum(thr, np.finfo(K.dtype).max)  # never the excluded (inf) self entries
    if first and m < w <= 4 * ns:
        # a narrow first tile: plain partial selection (a filter would keep every entry)
        part = np.argpartition(K, m, axis=ax)
        Pi = part[:m].T if transposed else part[:, :m]
        P = np.take_along_axis(K, part[:m] if transposed else part[:, :m], axis=ax)
        bound = np.take_along_axis(K, part[m:m + 1] if transposed else part[:, m:m + 1],
                                   axis=ax).ravel()
        return (np.ascontiguousarray(P.T) if transposed else P), np.ascontiguousarray(Pi), \
            np.minimum(thr, bound)
    if first and w > 4 * ns:
        sample = K[::w // ns] if transposed else K[:, ::w // ns]
        thr = np.minimum(thr, np.partition(sample, m - 1, axis=ax).take(m - 1, axis=ax))
    # flatnonzero + divmod: 2-D np.nonzero is ~10x slower on a sparse mask
    r, c = np.divmod(np.flatnonzero(K <= (thr[None, :] if transposed else thr[:, None])),
                     K.shape[1])
    vals = K[r, c]
    if transposed:  # group by query (column), positions ascending within each
        order = np.argsort(c, kind="stable")
        r, c, vals = c[order], r[order], vals[order]
    counts = np.bincount(r, minlength=b)
    width = int(counts.max()) if b else 0
    pos = np.arange(r.size) - np.repeat(np.cumsum(counts) - counts, counts)
    P = np.full((b, width), np.inf, dtype=K.dtype)
    Pi = np.zeros((b, width), dtype=np.int64)
    P[r, pos] = vals
    Pi[r, pos] = c
    return P, Pi, thr


class _TopM:
    """Running ``m`` smallest keys (and their columns) of each of ``n`` rows.

    ``t`` bounds every key ever left out from below: the selection is certified for a row
    when its exact k-th key is at most ``t`` minus the keys' rounding error.
    """

    def __init__(self, n, m, dtype):
        self.m = m
        self.val = np.full((n, m), np.inf, dtype=dtype)
        self.ind = np.full((n, m), -1, dtype=np.int64)
        self.t = np.full(n, np.inf)

    def update(self, rows, K, col_offset, transposed=False):
        """Merge the key tile ``K`` of queries ``rows`` (its columns if ``transposed``)
        against points from ``col_offset`` on."""
        P, Pi, thr = _filter_tile(K, self.m, self.val[rows].max(axis=1), transposed)
        t = self.t[rows]
        np.minimum(t, thr, out=t)
        if P.shape[1]:
            V = np.concatenate([self.val[rows], P], axis=1)
            Ind = np.concatenate([self.ind[rows], Pi + col_offset], axis=1)
            part = np.argpartition(V, self.m, axis=1)
            np.minimum(t, np.take_along_axis(V, part[:, self.m:self.m + 1], axis=1).ravel(),
                       out=t)
            self.val[rows] = np.take_along_axis(V, part[:, :self.m], axis=1)
            self.ind[rows] = np.take_along_axis(Ind, part[:, :self.m], axis=1)
        self.t[rows] = t


def _tile_size(budget, itemsize):
    # one tile of keys and the filter's boolean mask
    return int(max(128, np.sqrt(budget / (itemsize + 1))))


def _topm_symmetric(Lf, Rf, m, budget, n_threads=1):
    """Candidates of every row from the upper triangle of tiles: the keys are symmetric,
    so each product serves its rows and (transposed) its columns, halving the BLAS work.
    With two threads or more, a tile's rows and its columns (disjoint sets of points) are
    filtered and merged at the same time."""
    n = Lf.shape[0]
    bs = min(n, _tile_size(budget, Lf.dtype.itemsize))
    top = _TopM(n, m, Lf.dtype)
    pool = ThreadPoolExecutor(2) if n_threads > 1 else None
    try:
        for a in range(0, n, bs):
            I = np.arange(a, min(a + bs, n))
            Q = Lf[I]
            for c in range(a, n, bs):
                J = np.arange(c, min(c + bs, n))
                G = _gram(Q, Rf[J])
                if a == c:
                    G[np.arange(I.size), np.arange(I.size)] = np.inf  # never the point
                    top.update(I, G, c)
                elif pool is None:
                    top.update(I, G, c)
                    top.update(J, G, a, transposed=True)
                else:
                    cols = pool.submit(top.update, J, G, a, True)
                    top.update(I, G, c)
                    cols.result()
    finally:
        if pool is not None:
            pool.shutdown()
    return top


def _topm_rows(Lf, Rf, rows, m, budget):
    """Candidates of the query ``rows`` against every point, by column tiles."""
    n = Lf.shape[0]
    bs = min(n, _tile_size(budget, Lf.dtype.itemsize))
    top = _TopM(n, m, Lf.dtype)
    for lo in range(0, rows.size, bs):
        I = rows[lo:lo + bs]
        Q = Lf[I]
        for c in range(0, n, bs):
            G = _gram(Q, Rf[c:c + bs])
            own = np.flatnonzero((I >= c) & (I < c + bs))
            G[own, I[own] - c] = np.inf  # never the point itself
            top.update(I, G, c)
    return top


def exact_candidate_distances(Xq, sq_q, X, sq, cand, metric, *, step=None):
    """float64 distances (squared for euclidean) of each query row to its candidates.

    Dense: from differences ``|q - x|^2`` (no cancellation), ``step`` query rows at a time
    (default: a cache-sized block); sparse: the float64 Gram formula, as scikit-learn
    computes it; cosine: ``1 - q.x`` on unit rows. Dense arrays may be of another array
    module (CuPy: the GPU engine); the result is then of that module.
    """
    b, m = cand.shape
    if sp.issparse(X):
        Q = sp.csr_matrix(Xq)[np.repeat(np.arange(b), m)]
        G = np.asarray(X[cand.ravel()].multiply(Q).sum(axis=1)).reshape(b, m)
        if metric == "cosine":
            return 1.0 - G
        return np.maximum(sq_q[:, None] + sq[cand] - 2.0 * G, 0.0)
    out = np.empty_like(sq_q, shape=(b, m), dtype=np.float64)
    if step is None:  # a few rows at a time: the gathered candidates stay in cache (~2 MB)
        step = max(1, 2 ** 18 // max(m * X.shape[1], 1))
    for lo in range(0, b, step):
        C = X[cand[lo:lo + step]]
        if metric == "cosine":
            out[lo:lo + step] = 1.0 - np.einsum("ijk,ik->ij", C, Xq[lo:lo + step])
        else:
            C -= Xq[lo:lo + step, None, :]
            out[lo:lo + step] = np.einsum("ijk,ijk->ij", C, C)
    return out


def float32_key_error(n_features, norm_q, norm_max):
    """Bound on the rounding error of a float32 ranking key of :func:`pair_keys`.

    For points scaled by a power of two into float32's range, the float32 key of a pair is
    within ``e = (d + 8) u (|q| + max|x|)^2`` of its exact value (``u = 2^-24``, ``d`` the
    number of features, norms in the scaled units). A row's float32 selection is certified
    when its exact k-th key is at most the smallest key left out minus ``e``: no point left
    out is then nearer.
    """
    return (n_features + 8) * _U32 * (norm_q + norm_max) ** 2 + 1e-30


def rank_candidates(D, cand, k):
    """The ``k`` nearest of each row's candidates by exact distance ``D``, ties by index.

    Returns the sorted distances, their indices, and the positions taken.
    """
    by_index = np.argsort(cand, axis=1, kind="stable")
    cand = np.take_along_axis(cand, by_index, axis=1)
    D = np.take_along_axis(D, by_index, axis=1)
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(D, order, axis=1), np.take_along_axis(cand, order, axis=1)


def _exact_neighbors(X, k, metric, n_jobs=None, *, block_bytes=None, margin=None,
                     float32=True, bound=None):
    """Exact k nearest other points by tiled BLAS products and filtered partial selection.

    The points are cut into square tiles of about ``block_bytes`` (default
    :data:`EXACT_BLOCK_BYTES`); one product per tile of the upper triangle gives the ranking
    keys ``||x||^2 - 2 q.x`` (euclidean) or ``-q.x`` on unit rows (cosine) for its rows and,
    transposed, for its columns. A running threshold (each row's m-th best key so far,
    tightened by a strided sample of the tile) lets only a few entries per row reach
    ``np.argpartition``; ``m = k + max(k, 10)`` candidates are kept per row and their float64
    distances recomputed exactly (dense: from differences), then sorted (ties by index).

    With ``float32`` (dense input) the products run in single precision (about twice the
    BLAS throughput, half the memory) and each row's selection is *certified*: a float32 key
    is within ``e = (d + 8) u (|q| + max|x|)^2`` of its exact value (``u = 2^-24``; the
    points are scaled by a power of two into float32's range), so when the exact k-th key
    is at most the smallest key left out minus ``e``, no point left out is nearer. Rows that
    fail the test (ties or near-ties at the margin) are searched again in float64. The
    result is the float64 exact kNN up to the order of exactly tied distances.

    Euclidean points in many dimensions lying near a subspace (``bound=None``: when
    :func:`projected_bound_points` finds one of at most a third of the dimensions holding
    95% of the variance, from 4096 points; ``True``/``False`` force it) are first searched
    on their projection ``Z`` (``p + 1`` dimensions): ``|z_x - z_y| <= |x - y|``, so the
    same certificate with ``Z``'s keys as lower bounds proves a row's list exact once its
    k-th exact distance among ``max(4 m, 64)`` candidates is at most the smallest bound left
    out. Rows it leaves uncertified are searched again on ``Z`` with 4x the candidates, then
    on the full float32 keys, then in float64, so the result is the same exact kNN.

    Memory: a few tiles of ``block_bytes`` plus ``O(n (d + m))``. The selection, merging and
    re-ranking run on ``n_jobs`` threads (default: as many as the BLAS uses).
    """
    n = X.shape[0]
    budget = EXACT_BLOCK_BYTES if block_bytes is None else int(block_bytes)
    n_threads = n_workers(n_jobs)
    Xe, sq = prepare_points(X, metric)
    d = Xe.shape[1]
    m = min(n - 1, k + (max(k, 10) if margin is None else int(margin)))
    dist = np.empty((n, k))
    ind = np.empty((n, k), dtype=np.int64)

    def finish_part(rows, cand):
        D = exact_candidate_distances(Xe[rows], sq[rows], Xe, sq, cand, metric)
        Dk, Ik = rank_candidates(D, cand, k)
        dist[rows] = np.sqrt(Dk) if metric == "euclidean" else Dk
        ind[rows] = Ik
        return Dk[:, -1] - (0.0 if metric == "euclidean" else 1.0)  # exact k-th key

    def finish(rows, top):
        step = -(-rows.size // n_threads) if rows.size >= 4096 else rows.size
        parts = [(rows[lo:lo + step], top.ind[rows[lo:lo + step]])
                 for lo in range(0, rows.size, max(step, 1))]
        return np.concatenate([np.empty(0)] + _map(finish_part, parts, n_threads))

    def search(F, sqF, mm, rows):
        """Candidates of ``rows`` from float32 keys of the points ``F`` (float64, squared
        norms ``sqF``); the rows whose selection is not certified."""
        top_abs = float(np.abs(F).max())
        s = 2.0 ** -np.ceil(np.log2(top_abs)) if top_abs > 0 else 1.0
        F32 = (F * s).astype(np.float32)
        sq32 = np.einsum("ij,ij->i", F32, F32, dtype=np.float64)
        Lf, Rf = pair_keys(F32, sq32, metric)
        del F32
        top = (_topm_symmetric(Lf, Rf, mm, budget, n_threads) if rows.size == n
               else _topm_rows(Lf, Rf, rows, mm, budget))
        del Lf, Rf
        kth = finish(rows, top) * (s * s)  # the float32 keys are in units scaled by s^2
        norms = np.sqrt(sqF) * s
        err = float32_key_error(F.shape[1], norms[rows], norms.max())
        if F is not Xe:  # the projection's rounding (see projected_bound_points)
            err += 4.0 * np.sqrt(d * 2.0 ** -52) * (norms[rows] + norms.max()) ** 2
        return rows[~(kth <= top.t[rows] - err)]

    rows = np.arange(n)
    if float32 and not sp.issparse(Xe) and d > 0:
        use = (bound if bound is not None else
               metric == "euclidean" and n >= _BOUND_MIN_POINTS)
        Zmu = projected_bound_points(Xe) if use and metric == "euclidean" else None
        if Zmu is not None:
            Z = Zmu[0]
            sqZ = np.einsum("ij,ij->i", Z, Z)
            mb = min(n - 1, max(4 * m, 64))
            rows = search(Z, sqZ, mb, rows)
            if rows.size:
                rows = search(Z, sqZ, min(n - 1, 4 * mb), rows)
            del Z, Zmu
        if rows.size:
            rows = search(Xe, sq, m, rows)
        if not rows.size:
            return dist, ind
        top = _topm_rows(*pair_keys(Xe, sq, metric), rows, m, budget)
    else:
        top = _topm_symmetric(*pair_keys(Xe, sq, metric), m, budget, n_threads)
    finish(rows, top)
    return dist, ind


def _approx_neighbors(X, k, metric, n_jobs, random_state):
    pynndescent = require("pynndescent", "approximate nearest neighbours (method='approx')")
    index = pynndescent.NNDescent(X, n_neighbors=k + 1, metric=metric,
                                  random_state=random_state, n_jobs=n_jobs or 1,
                                  low_memory=True, compressed=True)
    ind, dist = index.neighbor_graph
    n = X.shape[0]
    # Drop each point from its own list (it is usually, but not always, in position 0).
    keep = ind != np.arange(n)[:, None]
    out_i = np.empty((n, k), dtype=np.int64)
    out_d = np.empty((n, k), dtype=np.float64)
    for_all = keep.sum(axis=1) >= k
    rows = np.nonzero(for_all)[0]
    sel = np.argsort(~keep[rows], axis=1, kind="stable")[:, :k]
    out_i[rows] = np.take_along_axis(ind[rows], sel, axis=1)
    out_d[rows] = np.take_along_axis(dist[rows], sel, axis=1)
    bad = np.nonzero(~for_all)[0]
    out_i[bad] = ind[bad, 1:k + 1]
    out_d[bad] = dist[bad, 1:k + 1]
    return out_d, out_i


def check_points(X):
    """Points as the searches take them: 2-D, numeric, finite; CSR float64 if sparse, else
    float32 kept and every other type as float64. Errors name ``X``."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X)
        if X.dtype.kind == "O":
            try:
                X = X.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError("X must be numeric, got dtype object holding non-numbers."
                                 ) from None
        if X.dtype.kind not in "fiub":
            raise ValueError(f"X must be numeric, got dtype {X.dtype}.")
        X = np.asarray(X, dtype=np.float64 if X.dtype != np.float32 else np.float32)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
    check_finite(X, "X")
    return X


def _safe_scale(X):
    """Factor bringing X's magnitudes where squared distances neither overflow nor vanish.

    Squared Euclidean distances overflow float64 from |x| ~ 1e154 (and float32 from 1e19);
    neighbours do not change under scaling, distances scale back exactly.
    """
    data = X.data if sp.issparse(X) else X
    if data.size == 0:
        return 1.0
    return scale_from_max(float(np.abs(data).max()), X.dtype)


def scale_from_max(top: float, dtype) -> float:
    """The factor by which points of largest magnitude ``top`` and type ``dtype`` are divided
    before a search, so that squared distances neither overflow nor vanish (1.0 when they
    do not: from ``|x| ~ 1e154`` in float64, ``1e19`` in float32). Neighbours do not change
    under scaling; Euclidean distances scale back exactly."""
    limit = 1e60 if dtype == np.float64 else 1e8
    if top > limit or 0.0 < top < 1.0 / limit:
        return top
    return 1.0


_KNN_CONSTRAINTS = {
    "X": ["array-like", "sparse matrix"],
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "metric": [StrOptions(set(_METRICS))],
    "method": [StrOptions({"exact", "approx", "auto"})],
    "n_jobs": [Integral, None],
    "random_state": ["random_state"],
}


@validate_params(_KNN_CONSTRAINTS, prefer_skip_nested_validation=True)
def knn_search(X, n_neighbors: int = 10, *, metric: str = "euclidean", method: str = "auto",
               n_jobs: int | None = None, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Directed k-nearest-neighbour lists of every point, excluding the point itself.

    Parameters are those of :func:`knn_graph`. The search runs on the engine of ``X``'s
    type (:func:`semisup.engines.engine_for`): in this process for numpy and scipy.sparse
    input; blockwise on the Dask workers for a dask array (extra ``[dask]``, exact, the same
    result).

    Returns
    -------
    dist : ndarray of shape (n_samples, n_neighbors), float64
        Distances to the neighbours, ascending (approximate for ``method="approx"``).
    ind : ndarray of shape (n_samples, n_neighbors), int
        Indices of the neighbours.
    """
    return engine_for(X).knn_search(X, n_neighbors, metric=metric, method=method,
                                    n_jobs=n_jobs, random_state=random_state)


def auto_search_method(n: int, d: int, *, sparse: bool = False) -> str:
    """What ``method="auto"`` searches ``n`` points of ``d`` features with: ``"exact"``
    while ``n^2 (EXACT_PAIR_WORK + d) <= AUTO_EXACT_WORK`` (15-20 s on two cores: 60 000
    MNIST images, 85 000 points of 50 features), for sparse points, or without pynndescent;
    ``"approx"`` (NN-descent) above, where the exact search's ``O(n^2 d)`` outgrows
    NN-descent's per-process compilation and roughly ``O(n^1.14 d)`` search.

    Examples
    --------
    >>> from semisup.graph.neighbors import auto_search_method
    >>> auto_search_method(60_000, 784), auto_search_method(10**6, 50, sparse=True)
    ('exact', 'exact')
    """
    if sparse or float(n) ** 2 * (EXACT_PAIR_WORK + d) <= AUTO_EXACT_WORK:
        return "exact"
    return "approx" if available("pynndescent") else "exact"


def knn_search_in_memory(X, n_neighbors, *, metric="euclidean", method="auto", n_jobs=None,
                         random_state=None, validated=False):
    """:func:`knn_search` of in-memory points (the in-process engine's search).

    ``validated=True`` skips :func:`check_points` for points already validated (2-D,
    float64 or float32, finite; CSR if sparse), e.g. by the graph front-end: a caller that
    has not checked them keeps the default, which refuses NaN, infinities and non-numbers.
    """
    if not validated:
        X = check_points(X)
    elif sp.issparse(X) and X.dtype != np.float64:
        X = sp.csr_matrix(X, dtype=np.float64)      # as check_points gives sparse points
    n = X.shape[0]
    k = int(n_neighbors)
    if k >= n:
        raise ValueError(f"n_neighbors={k} must be smaller than the number of points ({n}).")
    if method == "auto":
        method = auto_search_method(n, X.shape[1], sparse=sp.issparse(X))
    scale = _safe_scale(X)
    if scale != 1.0:
        # not X * (1 / scale): 1 / scale overflows to inf for a subnormal scale
        X = divide(X, scale)
    if method == "approx":
        dist, ind = _approx_neighbors(X, k, metric, n_jobs, random_state)
    else:
        dist, ind = _exact_neighbors(X, k, metric, n_jobs)
    check_neighbor_lists(dist, ind, n)
    dist = np.maximum(dist.astype(np.float64), 0.0)
    if scale != 1.0 and metric == "euclidean":
        dist *= scale
    return dist, ind


def check_neighbor_lists(dist, ind, n: int, *, allow_inf: bool = False) -> None:
    """Refuse neighbour lists that would corrupt the graph built from them.

    Every index must lie in ``[0, n)`` and no distance be NaN (nor infinite unless
    ``allow_inf``: a distance past float64's range is still a neighbour): the sparse graph is
    assembled and symmetrized by compiled code that trusts its indices (an index of -1, left
    by a search whose distances were NaN, was written out of bounds and aborted the process,
    issue #30). Raises ``ValueError`` (never reached on valid input).
    """
    ind = np.asarray(ind)
    if ind.size and (ind.dtype.kind not in "iu" or int(ind.min()) < 0
                     or int(ind.max()) >= n):
        raise ValueError(f"the neighbour search returned indices outside [0, {n}) (from "
                         f"{ind.min()} to {ind.max()}); the points' scale may be beyond what "
                         "float64 distances can represent. Rescale X.")
    dist = np.asarray(dist)
    bad = np.isnan(dist) if allow_inf else ~np.isfinite(dist)
    if bad.any():
        raise ValueError(f"the neighbour search returned {int(bad.sum())} "
                         "NaN or infinite distance(s); the points' scale may be beyond what "
                         "float64 distances can represent. Rescale X.")


def heat_sigma(dist) -> float:
    """Default heat-kernel width: the mean of the non-zero directed kNN distances.

    This is lapsvmp's ``t = 0`` convention (Melacci & Belkin 2011); 1.0 if every distance
    is zero.
    """
    dist = np.asarray(dist)
    nz = dist[dist > 0]
    return float(nz.mean()) if nz.size else 1.0


def kth_neighbor_distance(dist, floor: float | None = None) -> np.ndarray:
    """Each row's distance to its last (k-th) listed neighbour: the self-tuned width.

    A zero width (the point and its k nearest neighbours coincide) is raised to ``floor``
    (default: the smallest positive width of ``dist``, or 1.0 if every width is zero), so
    that the self-tuned weights stay defined.
    """
    dist = np.asarray(dist, dtype=np.float64)
    dk = dist[:, -1].copy() if dist.shape[1] else np.ones(dist.shape[0])
    if floor is None:
        pos = dk[dk > 0]
        floor = float(pos.min()) if pos.size else 1.0
    np.maximum(dk, floor, out=dk)
    return dk


def edge_weights(dist, weights: str = "binary", sigma: float | None = None, *,
                 ind=None, kth=None) -> np.ndarray:
    """Edge weights from neighbour distances (``binary``, ``heat``, ``distance`` or
    ``self_tuning``).

    ``heat`` is ``exp(-d^2 / (2 sigma^2))``; ``sigma=None`` uses :func:`heat_sigma`.
    ``self_tuning`` is ``exp(-4 d_ij^2 / (d_k(x_i) d_k(x_j)))`` (Zelnik-Manor & Perona's
    local scaling with the factor 4 of Calder et al. 2020), ``d_k`` the distance to the
    k-th neighbour: ``d_k(x_i)`` is each row's last listed distance, ``d_k(x_j)`` is
    ``kth[ind]`` with ``kth`` the widths of the points the rows point to (from
    :func:`kth_neighbor_distance` of their own lists).
    """
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {_WEIGHTS}, got {weights!r}.")
    dist = np.asarray(dist, dtype=np.float64)
    if weights == "binary":
        return np.ones_like(dist)
    if weights == "distance":
        return dist.copy()
    if weights == "self_tuning":
        if ind is None or kth is None:
            raise ValueError("weights='self_tuning' needs the neighbour indices (ind) and "
                             "the k-th neighbour distances of the indexed points (kth).")
        kth = np.asarray(kth, dtype=np.float64)
        own = kth_neighbor_distance(dist, floor=float(kth.min()) if kth.size else None)
        # d / sqrt(d_k(i) d_k(j)) first: finite for any finite distances and widths
        return np.exp(-4.0 * (dist / np.sqrt(own[:, None] * kth[np.asarray(ind)])) ** 2)
    if sigma is None:
        sigma = heat_sigma(dist)
    # (d / sigma)^2, not d^2 / sigma^2: finite for any finite distances and width
    return np.exp(-0.5 * (dist / sigma) ** 2)


def graph_from_neighbors(dist, ind, *, weights: str = "binary", sigma: float | None = None,
                         symmetrize: str = "max") -> sp.csr_matrix:
    """Symmetric sparse graph from directed neighbour lists (see :func:`knn_graph`)."""
    dist = np.asarray(dist, dtype=np.float64)
    ind = np.asarray(ind)
    if dist.shape != ind.shape or dist.ndim != 2:
        raise ValueError(f"dist and ind must be 2-D of the same shape, got {dist.shape} "
                         f"and {ind.shape}.")
    n, k = ind.shape
    check_neighbor_lists(dist, ind, n, allow_inf=True)
    kth = kth_neighbor_distance(dist) if weights == "self_tuning" else None
    vals = edge_weights(dist, weights, sigma, ind=ind, kth=kth)
    A = sp.csr_matrix((vals.ravel(), ind.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    return symmetrize_graph(A, symmetrize)


@validate_params({**_KNN_CONSTRAINTS,
                  "weights": [StrOptions(set(_WEIGHTS))],
                  "sigma": [Interval(Real, 0, None, closed="neither"), None],
                  "symmetrize": [StrOptions({"max", "mean", "mutual"})]},
                 prefer_skip_nested_validation=True)
def knn_graph(X, n_neighbors: int = 10, *, weights: str = "binary", sigma: float | None = None,
              metric: str = "euclidean", symmetrize: str = "max", method: str = "auto",
              n_jobs: int | None = None, random_state=None) -> sp.csr_matrix:
    """Symmetric k-nearest-neighbour graph.

    Each point is joined to its ``n_neighbors`` nearest *other* points (directed weights
    ``a_ij``), then the graph is symmetrized.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    n_neighbors : int
        Neighbours per point, excluding the point itself.
    weights : {"binary", "heat", "distance", "self_tuning"}
        ``binary``: 1. ``heat``: ``exp(-d_ij^2 / (2 sigma^2))``; with ``sigma=None`` the
        width is the mean of the non-zero directed kNN distances (lapsvmp's ``t = 0``
        convention, Melacci & Belkin 2011). ``distance``: ``d_ij``. ``self_tuning``:
        ``exp(-4 d_ij^2 / (d_k(x_i) d_k(x_j)))`` with ``d_k`` the distance to the k-th
        neighbour (symmetric by construction; ``sigma`` is not used).
    sigma : float, optional
        Heat-kernel width.
    metric : {"euclidean", "cosine"}
        Distance used to find neighbours (cosine distance is ``1 - cos``).
    symmetrize : {"max", "mean", "mutual"}
        See :func:`symmetrize_graph`. ``"max"`` is the usual "OR" kNN graph.
    method : {"exact", "approx", "auto"}
        Exact (tiled BLAS products with a certified float32 selection re-ranked in
        float64, first on a projection bounding the distances from below when the points
        lie near a subspace, see ``_exact_neighbors``; a dask array ``X`` is searched
        blockwise on the Dask workers, extra ``[dask]``) or NN-descent (pynndescent,
        extra ``[fast]``).
        ``auto`` is exact up to 15-20 s of search (60 000 MNIST images) and approximate
        above when pynndescent is installed and ``X`` is dense and in memory
        (:func:`auto_search_method`).
    n_jobs : int, optional
        Threads of the exact search's selection and re-ranking (default: as many as the
        BLAS uses; its products use the BLAS threads), jobs of the approximate search.
    random_state : int, optional
        Seed of the approximate search.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric, non-negative, zero diagonal, float64. Memory O(n * n_neighbors).
    """
    dist, ind = knn_search(X, n_neighbors, metric=metric, method=method, n_jobs=n_jobs,
                           random_state=random_state)
    return graph_from_neighbors(dist, ind, weights=weights, sigma=sigma, symmetrize=symmetrize)
