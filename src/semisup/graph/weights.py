"""Edge weights, symmetrization and the thresholded similarity graphs the papers use."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.preprocessing import normalize

from .._validation import check_finite, check_memory, drop_diagonal

_SYMMETRIZE = ("max", "mean", "mutual")


def symmetrize_graph(A: sp.spmatrix, how: str = "max") -> sp.csr_matrix:
    """Symmetrize a directed sparse graph.

    ``"max"``: ``W = max(A, A^T)`` (an edge if either direction is one: the "OR" rule of
    lapsvmp). ``"mean"``: ``W = (A + A^T) / 2``. ``"mutual"``: keep only edges present in
    both directions, with weight ``min(A, A^T)``.
    """
    A = sp.csr_matrix(A)
    if how == "max":
        W = A.maximum(A.T)
    elif how == "mean":
        W = (A + A.T) * 0.5
    elif how == "mutual":
        W = A.minimum(A.T)
    else:
        raise ValueError(f"symmetrize must be one of {_SYMMETRIZE}, got {how!r}.")
    return drop_diagonal(W)


def _dense_threshold(S: np.ndarray, threshold: float, weighted: bool) -> sp.csr_matrix:
    np.fill_diagonal(S, -np.inf)
    mask = S > threshold
    W = sp.csr_matrix(np.where(mask, S if weighted else 1.0, 0.0))
    W.eliminate_zeros()
    return W


def rbf_similarity(X, sigma: float | None = None, Y=None):
    """Dense RBF similarities ``exp(-||x_i - y_j||^2 / (2 sigma^2))`` and the width used.

    ``sigma=None`` uses the mean pairwise distance over distinct pairs of ``X`` (only when
    ``Y`` is None). Memory O(n m), refused before the work when it cannot fit.
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    check_finite(X, "X")
    n = X.shape[0]
    m = n if Y is None else Y.shape[0]
    check_memory(3 * 8.0 * n * m, f"a dense {n}x{m} similarity matrix",
                 "Use affinity='knn' (knn_graph) for large n.")
    if Y is None:
        D = euclidean_distances(X)
    else:
        Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y, dtype=np.float64)
        D = euclidean_distances(X, Y)
    if sigma is None:
        if Y is not None:
            raise ValueError("sigma must be given for similarities to other points.")
        off = ~np.eye(n, dtype=bool)
        sigma = float(D[off].mean()) if n > 1 else 0.0
    if not sigma > 0:
        raise ValueError("the RBF width is 0 (all points coincide?); pass a positive "
                         "graph_sigma.")
    return np.exp(-(D ** 2) / (2.0 * sigma ** 2)), float(sigma)


def rbf_threshold_graph(X, sigma: float | None = None, threshold="mean",
                        weighted: bool = False) -> sp.csr_matrix:
    """Graph with an edge where the RBF similarity exceeds a threshold (SPORE's UCI graphs).

    Similarity ``s_ij = exp(-||x_i - x_j||^2 / (2 sigma^2))``; ``sigma=None`` uses the mean
    pairwise distance over distinct pairs. ``threshold="mean"`` puts an edge where ``s_ij``
    exceeds the mean off-diagonal similarity (SPORE, NIPS 2015, §5, as spore.md reconstructs
    it). ``weighted=False`` gives an unweighted (0/1) adjacency. Dense O(n^2) memory.
    """
    S, _ = rbf_similarity(X, sigma)
    n = S.shape[0]
    off = ~np.eye(n, dtype=bool)
    thr = float(S[off].mean()) if threshold == "mean" else float(threshold)
    return _dense_threshold(S, thr, weighted)


def cosine_threshold_graph(X, threshold: float = 0.4, weighted: bool = False,
                           block_size: int = 2048) -> sp.csr_matrix:
    """Graph with an edge where the cosine similarity exceeds ``threshold`` (SPORE's MNIST).

    Computed in row blocks so that memory stays O(block_size * n + nnz). Rows of zeros have
    no edges.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
    check_finite(X, "X")
    Xn = normalize(X)
    n = X.shape[0]
    check_memory(8.0 * min(block_size, n) * n * 3, f"a {min(block_size, n)}x{n} block of "
                 "cosine similarities", "Pass a smaller block_size.")
    blocks = []
    nnz = 0
    for start in range(0, n, block_size):
        S = Xn[start:start + block_size] @ Xn.T
        S = S.toarray() if sp.issparse(S) else np.asarray(S)
        rows = np.arange(start, min(start + block_size, n))
        S[rows - start, rows] = -np.inf
        mask = S > threshold
        # the graph's size is only known as it is built: project it from the rows so far
        # and refuse before the rest (identical rows make it dense: n^2 edges)
        nnz += int(mask.sum())
        done = start + rows.size
        check_memory(2 * 12.0 * nnz * n / done, f"the cosine-threshold graph (about "
                     f"{nnz * n / done:.3g} edges projected from its first {done} rows)",
                     "Raise threshold, or use affinity='knn' (knn_graph), whose size is "
                     "n * n_neighbors.")
        vals = np.where(mask, S if weighted else 1.0, 0.0)
        blocks.append(sp.csr_matrix(vals))
    W = sp.vstack(blocks, format="csr")
    W.eliminate_zeros()
    # Rounding can make S slightly asymmetric at the threshold: keep the OR.
    return symmetrize_graph(W, "max")
