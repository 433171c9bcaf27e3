"""The GPU engine's computations, written once for an array module and a sparse module.

Every function takes its arrays from one module pair, numpy + ``scipy.sparse`` or CuPy +
``cupyx.scipy.sparse`` (:func:`array_modules` tells which from an array), and returns
arrays of the same pair. CI runs this very code with numpy and checks it against the CPU
path (``tests/engines/test_arrays.py``); on a CUDA device the same code runs with CuPy
(:class:`semisup.engines.cupy.CupyEngine`, ``tests/engines/test_gpu.py``).

What is shared with the CPU path rather than repeated here: the ranking keys
(:func:`semisup.graph.neighbors.pair_keys`), their float32 rounding bound
(:func:`~semisup.graph.neighbors.float32_key_error`), the exact re-rank
(:func:`~semisup.graph.neighbors.exact_candidate_distances`,
:func:`~semisup.graph.neighbors.rank_candidates`), the width rules
(:func:`~semisup.graph.neighbors.scale_from_max`, :func:`~semisup.graph.neighbors.heat_sigma`)
and block CG (:func:`semisup.linalg.spd.block_pcg`), all of which accept either module.
Component labels are computed on the host (an O(nnz) pass of ``scipy.sparse.csgraph``).
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._validation import divide
from ..graph import connected_components
from ..graph.neighbors import (exact_candidate_distances, float32_key_error, heat_sigma,
                               pair_keys, rank_candidates, scale_from_max)
from ..lapsvm.pcg import pcg
from ..lapsvm.stopping import make_rule
from ..linalg.spd import block_pcg
# (the array-module helpers live below the methods, which use them too; named here as well)
from ..linalg.xp import (array_modules, degrees, free_memory, laplacian_apply, rbf_kernel,
                         to_host)

__all__ = ["array_modules", "to_host", "free_memory", "knn_exact", "knn_graph",
           "laplacian_apply", "harmonic_solve", "poisson_solve", "rbf_kernel", "laprls_fit",
           "LapRLSFit"]

#: bytes of working memory per entry of a key tile: the float32 key, and what a selection
#: (CuPy's argpartition: int64 positions and their unravelled copies) allocates beside it
_TILE_BYTES_PER_KEY = 48
#: the working tiles take at most this fraction of the free memory ...
_TILE_FRACTION = 0.25
#: ... and at most this many bytes (larger tiles gain nothing)
_TILE_MAX_BYTES = 8 * 2 ** 30


# -- array modules (semisup.linalg.xp) ---------------------------------------------------------

def _float32_products_exact(xp) -> bool:
    """Whether float32 matrix products round as float32 (CuPy with ``CUPY_TF32=1`` runs
    them in TF32, whose rounding the float32 certificate does not cover)."""
    return xp is np or os.environ.get("CUPY_TF32", "0") in ("", "0")


# -- exact k nearest neighbours -------------------------------------------------------------

def _prepare(xp, A, scale, metric):
    """float64 points the search ranks (scaled; unit rows for cosine) and squared norms."""
    A = A.astype(xp.float64)
    if scale != 1.0:
        A = divide(A, scale)   # not A * (1 / scale): overflows when subnormal
    sq = (A * A).sum(axis=1)
    if metric == "cosine":
        norm = xp.sqrt(sq)
        A = A / xp.where(norm > 0, norm, 1.0)[:, None]   # zero rows stay zero
        sq = (A * A).sum(axis=1)
    return A, sq


def _select(xp, Lq, R, m, exclude):
    """The ``m`` smallest keys of each row of ``Lq @ R.T`` (positions ascending by key) and
    the smallest key left out (``inf`` when none is). ``exclude``: each row's own column,
    or None."""
    G = Lq @ R.T
    b, ncols = G.shape
    if exclude is not None:
        G[xp.arange(b), exclude] = xp.inf
    if m < ncols:
        # only what numpy and CuPy both guarantee: the first m + 1 are the m + 1 smallest
        part = xp.argpartition(G, m, axis=1)[:, :m + 1]
    else:
        part = xp.broadcast_to(xp.arange(ncols), (b, ncols))
    vals = xp.take_along_axis(G, part, axis=1)
    order = xp.argsort(vals, axis=1)
    part = xp.take_along_axis(part, order, axis=1)
    vals = xp.take_along_axis(vals, order, axis=1).astype(xp.float64)
    left_out = vals[:, m] if m < ncols else xp.full(b, xp.inf)
    return part[:, :m], left_out


def knn_exact(X, n_neighbors, *, metric="euclidean", Q=None, float32=True, block_bytes=None):
    """Exact k nearest neighbours by tiles of key products, certified float32 selection
    and a float64 re-rank: the lists of :func:`semisup.graph.knn_search` (``method="exact"``).

    Without ``Q``, each point's neighbours among the other points; with ``Q``, the
    neighbours in ``X`` of each row of ``Q``. A tile of query rows against every point is
    one matrix product of the ranking keys (:func:`~semisup.graph.neighbors.pair_keys`:
    ``|q|^2 + |x|^2 - 2 q.x``, or ``-q.x`` on unit rows for cosine), computed in float32
    on points scaled by a power of two. The ``m = k + max(k, 10)`` smallest keys of each row
    are kept and their float64 distances recomputed from differences, then sorted (ties by
    index). A row is *certified* when its exact k-th key is at most the smallest key left
    out minus the float32 keys' rounding bound
    (:func:`~semisup.graph.neighbors.float32_key_error`): no point left out is then nearer.
    The rows that are not (ties or near-ties at the margin) are searched again with float64
    keys, so the result is the float64 exact kNN up to the order of exactly tied distances.

    Parameters
    ----------
    X : array of shape (n, d), numpy or CuPy
    n_neighbors : int
    metric : {"euclidean", "cosine"}
    Q : array of shape (m, d), optional
        Query points (same module as ``X``).
    float32 : bool
        Rank with float32 keys first (certified); False ranks with float64 keys only.
    block_bytes : int, optional
        Working memory of a key tile (default: a quarter of the free memory, at most 8 GiB).

    Returns
    -------
    dist : array of shape (n or m, n_neighbors), float64
        Distances, ascending.
    ind : array of shape (n or m, n_neighbors), int64

    Notes
    -----
    Cost ``O(n m d)`` for the products, ``O(n m)`` for the selection; memory a few tiles
    plus ``O((n + m) d)``.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.engines.arrays import knn_exact
    >>> X = np.array([[0.0], [1.0], [3.0]])             # a CuPy X runs on its device
    >>> dist, ind = knn_exact(X, 1)
    >>> ind.ravel().tolist(), dist.ravel().tolist()
    ([1, 0, 1], [1.0, 1.0, 2.0])
    """
    xp, _ = array_modules(X)
    if metric not in ("euclidean", "cosine"):
        raise ValueError(f"metric must be 'euclidean' or 'cosine', got {metric!r}.")
    own = Q is None
    n, d = X.shape
    k = int(n_neighbors)
    nq = n if own else Q.shape[0]
    if not own and Q.shape[1] != d:
        raise ValueError(f"Q has {Q.shape[1]} features but X has {d}.")
    limit = n - 1 if own else n
    if not 1 <= k <= limit:
        raise ValueError(f"n_neighbors={k} must be between 1 and {limit} "
                         f"({n} points{', the point itself excluded' if own else ''}).")
    for name, A in (("X", X), ("Q", Q)):
        if A is not None and A.size and not bool(xp.isfinite(A).all()):
            raise ValueError(f"{name} contains NaN or infinity.")
    # magnitudes whose squares would overflow or vanish: scaled, as knn_search does
    top = float(xp.abs(X).max()) if X.size else 0.0
    if not own and Q.size:
        top = max(top, float(xp.abs(Q).max()))
    # (as knn_search, whose points are float32 or else float64)
    scale = scale_from_max(top, np.float32 if X.dtype == np.float32 else np.float64)
    Xe, sq = _prepare(xp, X, scale, metric)
    Qe, sq_q = (Xe, sq) if own else _prepare(xp, Q, scale, metric)
    m = min(limit, k + max(k, 10))
    if block_bytes is None:
        block_bytes = min(_TILE_MAX_BYTES, _TILE_FRACTION * free_memory(xp))
    bs = int(max(1, min(nq, block_bytes // (_TILE_BYTES_PER_KEY * max(n, 1)))))
    # re-rank: candidates gathered in blocks of ~block_bytes / 4 (float64 differences)
    step = int(max(1, block_bytes // (4 * 8 * m * max(d, 1))))
    dist = xp.empty((nq, k), dtype=xp.float64)
    ind = xp.empty((nq, k), dtype=xp.int64)
    shift = 0.0 if metric == "euclidean" else 1.0   # exact key = squared distance - shift

    def search(Lq, R, rows, certify):
        """Search the query ``rows`` (host int array) with the key factors ``Lq`` (of the
        queries) and ``R`` (of the points); the rows left uncertified (host array)."""
        bad = []
        for lo in range(0, rows.size, bs):
            r = rows[lo:lo + bs]
            r_x = xp.asarray(r)
            cand, left_out = _select(xp, Lq[r_x], R, m, r_x if own else None)
            D = exact_candidate_distances(Qe[r_x], sq_q[r_x], Xe, sq, cand, metric, step=step)
            Dk, Ik = rank_candidates(D, cand, k)
            dist[r_x] = xp.sqrt(xp.maximum(Dk, 0.0)) if metric == "euclidean" else Dk
            ind[r_x] = Ik
            if certify is not None:
                s2, norms_q, norm_max = certify
                err = float32_key_error(d, norms_q[r_x], norm_max)
                ok = (Dk[:, -1] - shift) * s2 <= left_out - err
                bad.append(r[~to_host(ok)])
        return np.concatenate(bad) if bad else np.empty(0, dtype=np.int64)

    rows = np.arange(nq)
    if float32 and d > 0 and _float32_products_exact(xp):
        big = float(xp.abs(Xe).max()) if Xe.size else 0.0
        if not own and Qe.size:
            big = max(big, float(xp.abs(Qe).max()))
        s = 2.0 ** -np.ceil(np.log2(big)) if big > 0 else 1.0
        X32 = (Xe * s).astype(xp.float32)
        R = pair_keys(X32, (X32.astype(xp.float64) ** 2).sum(axis=1), metric)[1]
        if own:
            Lq = pair_keys(X32, (X32.astype(xp.float64) ** 2).sum(axis=1), metric)[0]
        else:
            Q32 = (Qe * s).astype(xp.float32)
            Lq = pair_keys(Q32, (Q32.astype(xp.float64) ** 2).sum(axis=1), metric)[0]
            del Q32
        del X32
        norms = xp.sqrt(sq) * s
        certify = (s * s, norms if own else xp.sqrt(sq_q) * s, float(norms.max()))
        rows = search(Lq, R, rows, certify)
        del Lq, R
    if rows.size:
        R = pair_keys(Xe, sq, metric)[1]
        Lq = pair_keys(Qe, sq_q, metric)[0]
        search(Lq, R, rows, None)
    if scale != 1.0 and metric == "euclidean":
        dist *= scale
    return dist, ind


# -- the graph and its Laplacian ----------------------------------------------------------------

def _weights(xp, dist, weights, sigma):
    """Edge weights of :func:`semisup.graph.neighbors.edge_weights`, in ``dist``'s module."""
    if weights == "binary":
        return xp.ones_like(dist)
    if weights == "distance":
        return dist.copy()
    if weights != "heat":
        raise ValueError(f"weights must be 'binary', 'heat' or 'distance', got {weights!r}.")
    return xp.exp(-0.5 * (dist / sigma) ** 2)


def knn_graph(dist, ind, n_cols=None, *, weights="heat", sigma=None, symmetrize=True):
    """The kNN affinity from directed lists, as a CSR matrix of ``dist``'s sparse module.

    Directed weights ``a_ij`` (``heat``: ``exp(-d^2 / (2 sigma^2))``, ``sigma=None``: the
    mean non-zero kNN distance; ``binary``; ``distance``), symmetrised by the maximum
    ``W = max(A, A^T)`` as :func:`semisup.graph.graph_from_neighbors` does
    (``symmetrize=False``: the ``(m, n_cols)`` query affinities). Returns ``(W, sigma)``.
    """
    xp, sparse = array_modules(dist)
    m, k = ind.shape
    n_cols = m if n_cols is None else n_cols
    if weights == "heat" and sigma is None:
        sigma = heat_sigma(to_host(dist))
    vals = _weights(xp, dist, weights, sigma)
    itype = xp.int32 if max(m * k, n_cols) < 2 ** 31 - 1 else xp.int64
    A = sparse.csr_matrix((vals.ravel(), ind.ravel().astype(itype),
                           xp.arange(0, m * k + 1, k, dtype=itype)), shape=(m, n_cols))
    if symmetrize:  # as drop_diagonal: canonical, without the heat weights that underflow
        A = A.maximum(A.T.tocsr()).tocsr()
        A.eliminate_zeros()
        A.sort_indices()
    return A, (float(sigma) if weights == "heat" else None)


class _ScaledOperator:
    """``V -> V - s (W (s V))`` on the rows of ``mask`` (zero elsewhere): the symmetrically
    Jacobi-scaled ``L_uu = D_uu - W_uu`` (``s = D^{-1/2}`` on the unknowns ``u``, 0 off them)
    on full-length blocks, so that no submatrix of ``W`` is extracted."""

    def __init__(self, W, s, mask):
        self.W, self.s, self.mask = W, s[:, None], mask[:, None]
        self.shape = W.shape

    def __matmul__(self, V):
        return (V - self.s * (self.W @ (self.s * V))) * self.mask


class _MaskedLaplacian:
    """``V -> (D - W) V`` on the rows of ``mask`` (zero elsewhere) on full-length blocks:
    ``L_uu`` of the unknowns ``u`` without extracting a submatrix of ``W`` (the unknowns are
    whole components, so no edge leaves them)."""

    def __init__(self, W, d, mask):
        self.W, self.d, self.mask = W, d[:, None], mask[:, None]
        self.shape = W.shape

    def __matmul__(self, V):
        return (self.d * V - self.W @ V) * self.mask


def _components(W):
    """Host component labels of ``W`` (scipy's O(nnz) pass on a host copy of the pattern)."""
    W = to_host(W)
    return connected_components(sp.csr_matrix(W))


# -- the harmonic (Dirichlet) problem and Poisson learning --------------------------------------

def harmonic_solve(W, labeled, Y_l, *, tol=1e-8, max_iter=None):
    """:func:`semisup.baselines.harmonic.harmonic_solve` (its CG path) in ``W``'s module.

    Solves ``L_uu F_u = W_ul Y_l`` for the unlabelled nodes ``u`` of components that hold a
    label, as the symmetrically scaled system ``(I - S W_uu S) Z = S W_ul Y_l``,
    ``F_u = S Z``, ``S = D_uu^{-1/2}``, by block CG (Jacobi-preconditioned CG with a unit
    diagonal) on ``K - 1`` columns; the last is one minus their sum. Unreached nodes get the
    uniform row. Returns ``(F, n_iter, converged, unreached)`` with ``F`` of ``W``'s module
    and ``unreached`` a host index array.

    Parameters
    ----------
    W : sparse CSR (n, n), float64, symmetric non-negative, zero diagonal
    labeled : host bool array of shape (n,)
    Y_l : array (n_labeled, K) of ``W``'s module or numpy; rows in the probability simplex
    tol : float
        Relative residual per class column on the scaled system.
    max_iter : int, optional
        CG cap (default ``10 n``).
    """
    xp, _ = array_modules(W)
    labeled = np.asarray(labeled, dtype=bool)
    n = W.shape[0]
    Y_l = xp.asarray(Y_l, dtype=xp.float64)
    K = Y_l.shape[1]
    if W.nnz:
        top = float(W.data.max())
        if not 1e-150 < top < 1e150:
            W = divide(W, top)   # not W * (1 / top): overflows when subnormal
    n_comp, comp = _components(W)
    has_label = np.bincount(comp[labeled], minlength=n_comp) > 0
    reached = ~labeled & has_label[comp]
    unreached = np.flatnonzero(~labeled & ~has_label[comp])
    lab = xp.asarray(np.flatnonzero(labeled))
    F = xp.zeros((n, K))
    F[lab] = Y_l
    F[xp.asarray(unreached)] = 1.0 / K
    u = xp.asarray(np.flatnonzero(reached))
    if u.size == 0 or K == 1:
        F[u] = 1.0
        return F, 0, True, unreached
    mask = xp.asarray(reached).astype(xp.float64)
    d = xp.asarray(degrees(W))
    s = mask / xp.sqrt(xp.where(mask > 0, d, 1.0))
    B = W @ F[:, :-1]             # W_ul Y_l on every row (F is zero off the labels there)
    B = B * (s[:, None])          # scaled, and zero off the unknowns
    Z, info = block_pcg(_ScaledOperator(W, s, mask), B, rtol=tol, maxiter=max_iter)
    Fu = (Z * s[:, None])[u]
    F[u, :-1] = Fu
    F[u, -1] = 1.0 - Fu.sum(axis=1)
    # rounding can leave rows a few ulps off the simplex: clip and renormalise, as on the CPU
    Fu = xp.clip(F[u], 0.0, 1.0)
    F[u] = Fu / Fu.sum(axis=1, keepdims=True)
    return F, int(info.n_iter), bool(info.converged), unreached


def poisson_solve(W, labeled_idx, y_idx, n_classes, *, tol=1e-3, max_iter=None):
    """The graph Poisson equation of Poisson learning in ``W``'s module.

    ``L U = sum_j (e_{y_j} - ybar) delta_j`` with ``L = D - W`` (Calder et al. 2020, eq. 5),
    per connected component: ``ybar`` the mean label of the component's labelled nodes, the
    solution fixed by ``sum_i d_i U_ik = 0`` on the component. Components whose labels are
    all of one class take the constant row ``e_y - ybar`` (``ybar`` the global mean label);
    components without labels get zero rows. Solved as the singular system ``L U = B`` by
    Jacobi-preconditioned block CG from zero (which stays in the range), on ``K - 1``
    columns; the last is minus their sum.

    Returns ``(U, n_iter, converged, unreached)``: ``U`` of ``W``'s module (n, K),
    ``unreached`` a host index array. ``tol`` is the relative residual of all columns
    together (``||R||_F <= tol ||B||_F``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from semisup.engines.arrays import poisson_solve
    >>> W = sp.diags([np.ones(5), np.ones(5)], [-1, 1], format="csr")   # a path of 6
    >>> U, n_iter, converged, unreached = poisson_solve(W, [0, 5], [0, 1], 2, tol=1e-12)
    >>> U.argmax(axis=1).tolist(), converged
    ([0, 0, 0, 1, 1, 1], True)
    """
    xp, _ = array_modules(W)
    n, K = W.shape[0], int(n_classes)
    labeled_idx = np.asarray(labeled_idx, dtype=np.int64)
    y_idx = np.asarray(y_idx, dtype=np.int64)
    if W.nnz:
        top = float(W.data.max())
        if not 1e-150 < top < 1e150:
            W = divide(W, top)   # not W * (1 / top): overflows when subnormal
    n_comp, comp = _components(W)
    cl = comp[labeled_idx]
    # the centred sources, per component (host: n x K, small next to the graph)
    B = np.zeros((n, K))
    np.add.at(B, (labeled_idx, y_idx), 1.0)
    counts = np.bincount(cl, minlength=n_comp)
    ybar_c = np.zeros((n_comp, K))
    np.add.at(ybar_c, (cl, y_idx), 1.0)
    ybar_c /= np.maximum(counts, 1)[:, None]
    np.subtract.at(B, labeled_idx, ybar_c[cl])
    classes_c = np.zeros((n_comp, K), dtype=bool)
    classes_c[cl, y_idx] = True
    mixed = classes_c.sum(axis=1) > 1
    single = (counts > 0) & ~mixed
    U = np.zeros((n, K))
    rows = np.flatnonzero(single[comp])
    if rows.size:
        ybar = np.bincount(y_idx, minlength=K) / max(labeled_idx.size, 1)
        U[rows] = np.eye(K)[np.argmax(classes_c, axis=1)[comp[rows]]] - ybar
    unreached = np.flatnonzero(counts[comp] == 0)
    solve = mixed[comp]
    U = xp.asarray(U)
    if not solve.any() or K == 1:
        return U, 0, True, unreached
    mask = xp.asarray(solve.astype(np.float64))
    d = xp.asarray(degrees(W))   # > 0 on a solved component (two labels of two classes)
    Bu = xp.asarray(B[:, :-1]) * mask[:, None]
    # the residual of L U = B itself (not of the Jacobi-scaled system, where a labelled
    # node of tiny degree dominates ||D^{-1/2} B|| and stops CG at once)
    atol = tol * float(xp.linalg.norm(Bu))
    Uu, info = block_pcg(_MaskedLaplacian(W, d, mask), Bu,
                         M_diag=xp.where(mask > 0, d, 1.0), rtol=0.0,
                         atol=atol / np.sqrt(Bu.shape[1]), maxiter=max_iter)
    # degree-weighted mean zero per component and column (also drops the null-space drift)
    cx = xp.asarray(np.where(solve, comp, n_comp))   # unsolved rows: a dummy component
    vol = xp.bincount(cx, weights=d * mask, minlength=n_comp + 1)
    vol = xp.where(vol > 0, vol, 1.0)
    for j in range(Uu.shape[1]):
        mean_j = xp.bincount(cx, weights=d * Uu[:, j], minlength=n_comp + 1) / vol
        Uu[:, j] -= mean_j[cx] * mask
    u = xp.asarray(np.flatnonzero(solve))
    U[u, :-1] = Uu[u]
    U[u, -1] = -Uu[u].sum(axis=1)
    return U, int(info.n_iter), bool(info.converged), unreached


# -- LapRLS with the full kernel ------------------------------------------------------------------

class LapRLSFit(NamedTuple):
    """Result of :func:`laprls_fit`: coefficients, bias, decision values on the training
    points (arrays of the input's module), iterations and convergence."""
    alpha: object
    b: object
    decision: object
    n_iter: int
    converged: bool


def laprls_fit(K, Y, apply_L, *, gamma_A=1e-6, gamma_I=0.1, use_bias=False, tol=1e-6,
               max_iter=1000):
    """LapRLS (Melacci & Belkin 2011, eq. 14) by the project's PCG
    (:func:`semisup.lapsvm.pcg.pcg` with ``hinge=False``: the preconditioner
    ``P = diag(1, K)``, one kernel product per iteration, the closed-form step) in ``K``'s
    array module, each one-vs-all column run to the relative gradient tolerance ``tol``.

    Minimises ``1/2 (sum_{labelled} (f_i - y_i)^2 + gamma_A a^T K a + gamma_I f^T L f)``
    over ``f = K a + b``, whose minimiser :func:`semisup.lapsvm.newton.laprls_closed_form`
    computes densely. The estimators' device path (:mod:`semisup.lapsvm._device`) calls
    the PCG itself; this is its engine-level form (a kernel and a Laplacian already built).

    Accuracy: with a float64 ``K`` the decision values match the dense solve to the
    tolerance; with a float32 ``K`` the products carry a relative error of ~1e-7 ``|K|``,
    which the system amplifies by about ``1 / gamma_A``: at ``gamma_A = 1e-2`` they match to
    ~1e-5 of their scale, at the default 1e-6 to a few per cent (the signs, i.e. the
    labels, agree).

    Parameters
    ----------
    K : array (n, n), float32 or float64, of the module of the computation
    Y : array (n,) or (n, c)
        ``+1 / -1`` on labelled points, 0 on unlabelled ones (one-vs-all columns).
    apply_L : callable
        ``V -> L V`` (:func:`laplacian_apply`).
    gamma_A, gamma_I : float
    use_bias : bool
    tol : float
        Stop a column when ``sqrt(ghat^T grad)`` (``sqrt(g^T K g + g_b^2)``) falls below
        ``tol`` times its start (the ``"mixed_grad"`` rule), or its line search returns 0.
    max_iter : int

    Returns
    -------
    LapRLSFit
    """
    xp, _ = array_modules(K)
    Y = xp.asarray(Y, dtype=xp.float64)
    cols = [None] if Y.ndim == 1 else [[j] for j in range(Y.shape[1])]
    res = pcg(K, apply_L, Y, gamma_A=gamma_A, gamma_I=gamma_I, use_bias=use_bias,
              hinge=False, max_iter=max_iter,
              stopping=[make_rule("mixed_grad", tol=tol, columns=c) for c in cols])
    return LapRLSFit(res.alpha, res.b, res.decision, res.n_iter, res.converged)
