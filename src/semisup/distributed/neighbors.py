"""Exact k-nearest neighbours of a dask array, computed blockwise on the workers.

Every (query chunk, data chunk) pair is one task: one BLAS product gives the float64 ranking
keys of the pair (the factors of :func:`semisup.graph.neighbors.pair_keys`), the ``m``
smallest are kept with ``np.argpartition`` and their exact distances recomputed from
differences in the task, where both chunks are at hand. Each query chunk's ``m``-lists from
all data chunks are then merged by exact distance (ties by index), so the result is the
in-memory exact search's (:func:`semisup.graph.knn_search` with ``method="exact"``), edge for
edge and distance for distance, up to the order of exactly tied distances. Only the
``n x 2k`` result reaches the client; a task holds two chunks and their ``b^2`` keys.
"""

from __future__ import annotations

import numpy as np

from ..graph.neighbors import (check_points, exact_candidate_distances, pair_keys,
                               prepare_points, rank_candidates, scale_from_max)
from ._dask import require_dask

#: rows per chunk when the input's chunks are larger (a task's keys: 4096^2 x 8 B = 128 MiB)
MAX_CHUNK_ROWS = 4096


def _tile(Xq, qid, Xc, cid, *, m, metric, exclude_self):
    """``(b_q, 2m)``: the m nearest of ``Xc``'s rows to each row of ``Xq`` — exact float64
    distances (squared for euclidean; ``inf`` padding) then their global indices (-1)."""
    Xq, sq_q = prepare_points(np.asarray(Xq), metric)
    Xc, sq_c = prepare_points(np.asarray(Xc), metric)
    Lq, _ = pair_keys(Xq, sq_q, metric)
    _, Rc = pair_keys(Xc, sq_c, metric)
    G = Lq @ Rc.T
    if exclude_self:
        G[qid[:, None] == cid[None, :]] = np.inf  # never the point itself
    b, w = G.shape
    out = np.full((b, 2 * m), np.inf)
    out[:, m:] = -1.0
    mm = min(m, w)
    if mm == 0:
        return out
    cand = (np.argpartition(G, mm - 1, axis=1)[:, :mm] if mm < w
            else np.tile(np.arange(w), (b, 1)))
    D = exact_candidate_distances(Xq, sq_q, Xc, sq_c, cand, metric)
    invalid = np.isinf(np.take_along_axis(G, cand, axis=1))
    D[invalid] = np.inf
    out[:, :mm] = D
    out[:, m:m + mm] = np.where(invalid, -1, cid[cand])
    return out


def _merge(P, *, k, m):
    """Merge a query chunk's ``(b, n_chunks * 2m)`` tile lists into ``(b, 2k)``."""
    b = P.shape[0]
    P = P.reshape(b, -1, 2, m)
    D = P[:, :, 0, :].reshape(b, -1)
    idx = P[:, :, 1, :].reshape(b, -1).astype(np.int64)
    Dk, Ik = rank_candidates(D, idx, k)
    return np.hstack([Dk, Ik.astype(np.float64)])


def check_dask_points(X, name="X"):
    """Validate a dask array of points (2-D, numeric, finite, on the workers); float64 or
    float32 like the in-memory path, rows rechunked to at most :data:`MAX_CHUNK_ROWS` and
    the features to one chunk. Returns ``(X, max |x|)``."""
    da = require_dask("dask-array input")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}.")
    if X.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got dtype {X.dtype}.")
    X = X.astype(np.float32 if X.dtype == np.float32 else np.float64)
    rows = min(max(X.chunks[0]), MAX_CHUNK_ROWS) if X.shape[0] else 1
    X = X.rechunk({0: rows, 1: -1})
    finite, top = da.compute(da.isfinite(X).all(), abs(X).max() if X.size else 0.0)
    if not finite:
        raise ValueError(f"{name} contains NaN or infinity.")
    return X, float(top)


def knn_search_dask(X, n_neighbors, *, metric="euclidean", Q=None, margin=None):
    """Exact kNN lists of a dask array ``X`` (see :func:`semisup.graph.knn_search`).

    With ``Q`` (numpy or dask, ``(m, d)``) the neighbours in ``X`` of the rows of ``Q``
    (nothing excluded), else of ``X``'s own rows, each excluding itself.

    Returns ``dist, ind`` as numpy arrays ``(n, k)``.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from semisup.graph import knn_search
    >>> X = da.from_array(np.random.default_rng(0).normal(size=(100, 3)), chunks=30)
    >>> dist, ind = knn_search(X, 5)     # computed blockwise (on a Client's workers if any)
    >>> ind.shape
    (100, 5)
    """
    da = require_dask("the distributed kNN search")
    X, top = check_dask_points(X)
    n = X.shape[0]
    k = int(n_neighbors)
    query = Q is not None
    if not query and k >= n:
        raise ValueError(f"n_neighbors={k} must be smaller than the number of points ({n}).")
    if query:
        if not hasattr(Q, "chunks"):
            Q = da.from_array(check_points(Q), chunks=(MAX_CHUNK_ROWS, -1))
        Q, top_q = check_dask_points(Q, "the query points")
        if Q.shape[1] != X.shape[1]:
            raise ValueError(f"the query points have {Q.shape[1]} features, X has "
                             f"{X.shape[1]}.")
        k = min(k, n)
        top = max(top, top_q)
    scale = scale_from_max(top, X.dtype)
    if scale != 1.0:
        X = X / scale   # dask arrays: not X * (1 / scale), which overflows when subnormal
        Q = Q / scale if query else None
    m = min(n - (0 if query else 1), k + (max(k, 10) if margin is None else int(margin)))
    Qa = Q if query else X
    ids = da.arange(n, chunks=(X.chunks[0],))
    qids = da.arange(Qa.shape[0], chunks=(Qa.chunks[0],))
    tiles = da.blockwise(_tile, "ij", Qa, "ik", qids, "i", X, "jk", ids, "j",
                         m=m, metric=metric, exclude_self=not query,
                         adjust_chunks={"j": 2 * m}, dtype=np.float64, concatenate=True)
    merged = tiles.rechunk({1: -1}).map_blocks(_merge, k=k, m=m, dtype=np.float64,
                                               chunks=(tiles.chunks[0], (2 * k,)))
    out = merged.compute()
    dist = out[:, :k]
    ind = out[:, k:].astype(np.int64)
    if metric == "euclidean":
        dist = np.sqrt(dist)
    dist = np.maximum(dist, 0.0)
    if scale != 1.0 and metric == "euclidean":
        dist *= scale
    return dist, ind
