"""scikit-learn estimators for SPORE and MKL-SPORE (Shivanna et al., NIPS 2015).

Transductive: ``fit(A, y)`` learns labels for every vertex of the graph; there is no
out-of-sample ``predict``. See spore.md §3.1 before relying on the predictions: the exact
SPORE optimum carries no information about unlabelled vertices, so the scores come from the
early-stopped IIP path and depend on ``K0`` and ``n_outer``.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .._validation import check_affinity, check_memory, check_semisup_labels
from .iip import default_K0, iip_spore
from .mkl import mkl_spore

__all__ = ["SPORE", "MultiGraphSPORE"]

_AFFINITIES = ("precomputed", "rbf_threshold", "cosine_threshold", "knn")
#: float32 iterates above this many vertices (LAPACK ~3x faster, half the memory)
FLOAT32_MIN_N = 1000


def _check_params(C, beta, n_outer, n_inner):
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive finite number, got {C!r}.")
    if not (np.isfinite(beta) and beta >= 0):
        raise ValueError(f"beta must be a non-negative finite number, got {beta!r}.")
    if int(n_outer) != n_outer or n_outer < 1:
        raise ValueError(f"n_outer must be a positive integer, got {n_outer!r}.")
    if n_inner is not None and (int(n_inner) != n_inner or n_inner < 1):
        raise ValueError(f"n_inner must be a positive integer or None, got {n_inner!r}.")


def _build_graph(X, affinity, threshold, n_neighbors):
    from .. import graph
    if affinity == "rbf_threshold":
        return graph.rbf_threshold_graph(X, threshold="mean" if threshold is None
                                         else threshold)
    if affinity == "cosine_threshold":
        # None: similarity > 0.6, the paper's MNIST graph (cosine distance < 0.4)
        return graph.cosine_threshold_graph(X, threshold=0.6 if threshold is None
                                            else threshold)
    return graph.knn_graph(X, n_neighbors)


def _simple_graph(X, affinity, threshold, n_neighbors, name="A"):
    """Validated 0/1 adjacency of a simple graph (what SPORE is defined on)."""
    if affinity not in _AFFINITIES:
        raise ValueError(f"affinity must be one of {_AFFINITIES}, got {affinity!r}.")
    W = X if affinity == "precomputed" else _build_graph(X, affinity, threshold, n_neighbors)
    W = check_affinity(W, name)
    if W.nnz and not np.all(W.data == 1.0):
        warnings.warn(f"{name} is weighted; SPORE is defined on simple graphs, so only the "
                      "edge pattern (weight > 0) is used.", UserWarning, stacklevel=3)
    A = sp.csr_matrix((np.ones(W.nnz), W.indices, W.indptr), shape=W.shape)
    return A


def _check_dense_memory(n, n_graphs, dtype):
    # K, V, the FISTA variables (a, b, ya, yb, new copies), eigenvectors, the best iterate
    nbytes = 14.0 * n_graphs * n * n * np.dtype(dtype).itemsize
    check_memory(nbytes, f"SPORE on {n} vertices (dense {n}x{n} kernels)",
                 "SPORE learns a dense n x n kernel; subsample the graph or split it into "
                 "connected components.")


def _labels(y, n):
    y, classes, labeled = check_semisup_labels(y, n)
    if classes.size != 2:
        raise ValueError(f"SPORE is a binary method; y has {classes.size} classes "
                         f"({classes.tolist()}). Use one-vs-rest for more.")
    signed = np.where(y == classes[1], 1.0, -1.0)
    return classes, np.flatnonzero(labeled), signed


def _transduce(scores, classes, labeled_idx, signed):
    """Labels from scores; labelled vertices keep their labels; exact ties (score 0) go to
    the class with more labelled vertices (spore.md §3.1: ties are common)."""
    major = 1.0 if (signed[labeled_idx] > 0).sum() >= (signed[labeled_idx] < 0).sum() else -1.0
    s = np.sign(scores)
    s[s == 0] = major
    s[labeled_idx] = signed[labeled_idx]
    return np.where(s > 0, classes[1], classes[0])


class _SPOREBase(BaseEstimator):
    # transductive: no predict/score on new points, so no ClassifierMixin (its score()
    # would call a predict that does not exist)
    def _dtype(self, n):
        if self.dtype == "auto":
            return np.float32 if n > FLOAT32_MIN_N else np.float64
        return np.dtype(self.dtype).type


class SPORE(_SPOREBase):
    """Spectral-norm regularised orthonormal embedding for graph transduction (SPORE).

    Solves (eq. 5) ``min_{K in K(G)} omega_C(K, y_S) + beta * lambda_1(K)`` by IIP
    (Algorithm 1) with FISTA inexact projections, and predicts
    ``yhat_i = sum_{j in S} K_ij alpha_j y_j``. ``K(G)`` is the elliptope of the graph: PSD,
    unit diagonal, zero on non-edges.

    Parameters
    ----------
    C : float, default=1.0
        SVM box bound (eq. 3), ``C = 1 / (2 lambda m)`` in terms of the regularised loss.
    beta : float, default=0.1
        Weight of the spectral norm lambda_1(K).
    n_outer : int, default=5
        IIP outer iterations T (the paper's large-scale run uses 5).
    n_inner : int or None, default=None
        FISTA steps per projection; None = ceil(sqrt(T)) (the paper's large-scale run: 20).
    K0 : {"coupled", "identity"} or array of shape (n, n), default="coupled"
        Start. "coupled" = ``I + A / |lambda_min(A)|`` (spore.md §3.1); "identity" keeps the
        labelled/unlabelled blocks decoupled, so unlabelled scores are 0, or arbitrary where
        an eigensolver mixes the blocks at the repeated top eigenvalue of I (measured:
        chance-level accuracy either way; a warning says so).
    step : None, "theory" or float, default=None
        Subgradient step length; None = n / sqrt(T).
    iterate : {"final", "best"}, default="final"
        Which IIP iterate gives the predictions (the paper's theory bounds the best).
    affinity : {"precomputed", "rbf_threshold", "cosine_threshold", "knn"}
        "precomputed": ``fit`` gets an adjacency; otherwise a graph is built from X
        (``threshold`` for the thresholded graphs: default the mean similarity for
        "rbf_threshold", 0.6 (cosine distance < 0.4, the paper's MNIST graphs) for
        "cosine_threshold"; ``n_neighbors`` for kNN).
    dtype : {"auto", "float64", "float32"}, default="auto"
        Precision of the n x n iterates; "auto" uses float32 above 1000 vertices.
    verbose : bool, default=False

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    transduction_ : ndarray of shape (n,)
        Labels of all vertices (labelled ones keep theirs; score-0 ties go to the larger
        labelled class).
    decision_scores_ : ndarray of shape (n,)
        Soft predictions; positive means ``classes_[1]``.
    embedding_ : ndarray of shape (n, n)
        The learned kernel K (Gram matrix of the orthonormal representation).
    history_ : dict
        Per iterate: objective, omega, lambda1, infeasibility, seconds (and scores).
    best_iter_, n_iter_, eig_seconds_ : int, int, float

    Notes
    -----
    Time O(n_outer (n_inner + 1) n^3), memory O(n^2). Only the edge pattern of the
    adjacency is used (weights are ignored with a warning; self-loops are dropped with a
    warning; an asymmetric adjacency is an error).
    """

    def __init__(self, C=1.0, beta=0.1, n_outer=5, n_inner=None, K0="coupled", step=None,
                 iterate="final", affinity="precomputed", threshold=None, n_neighbors=10,
                 dtype="auto", keep_path=False, verbose=False):
        self.C = C
        self.beta = beta
        self.n_outer = n_outer
        self.n_inner = n_inner
        self.K0 = K0
        self.step = step
        self.iterate = iterate
        self.affinity = affinity
        self.threshold = threshold
        self.n_neighbors = n_neighbors
        self.dtype = dtype
        self.keep_path = keep_path
        self.verbose = verbose

    def _start(self, A, dtype):
        if isinstance(self.K0, str):
            if self.K0 not in ("coupled", "identity"):
                raise ValueError(f"K0 must be 'coupled', 'identity' or an array, "
                                 f"got {self.K0!r}.")
            if self.K0 == "coupled":
                K0, coupled = default_K0(A, dtype)
            else:
                K0, coupled = np.eye(A.shape[0], dtype=dtype), False
        else:
            K0 = np.array(self.K0, dtype=dtype)
            if K0.shape != A.shape:
                raise ValueError(f"K0 has shape {K0.shape}, the graph {A.shape}.")
            coupled = True
        if not coupled:
            warnings.warn("K0 = I: IIP keeps K_SU = 0 (every unlabelled score 0) unless an "
                          "eigensolver mixes the blocks at a repeated top eigenvalue, which is "
                          "arbitrary; either way unlabelled predictions are uninformative "
                          "(spore.md §3.1). Use K0='coupled'.", UserWarning, stacklevel=3)
        return K0

    def fit(self, X, y):
        """Learn the embedding and labels of all vertices.

        Parameters
        ----------
        X : array or sparse matrix
            Adjacency (n, n) if ``affinity="precomputed"``, else features (n, d).
        y : array of shape (n,)
            Two classes; -1 marks unlabelled vertices.
        """
        _check_params(self.C, self.beta, self.n_outer, self.n_inner)
        if self.iterate not in ("final", "best"):
            raise ValueError(f"iterate must be 'final' or 'best', got {self.iterate!r}.")
        A = _simple_graph(X, self.affinity, self.threshold, self.n_neighbors)
        n = A.shape[0]
        classes, labeled, signed = _labels(y, n)
        dtype = self._dtype(n)
        _check_dense_memory(n, 1, dtype)
        res = iip_spore(A, signed, labeled, self.C, self.beta, n_outer=self.n_outer,
                        n_inner=self.n_inner, step=self.step, K0=self._start(A, dtype),
                        dtype=dtype, keep_path=self.keep_path, verbose=self.verbose)
        best = self.iterate == "best"
        self.classes_ = classes
        self.embedding_ = res.K_best if best else res.K
        self.decision_scores_ = res.scores_best if best else res.scores
        self.transduction_ = _transduce(self.decision_scores_, classes, labeled, signed)
        self.history_ = res.history
        self.best_iter_ = res.best_iter
        self.n_iter_ = res.n_iter
        self.eig_seconds_ = res.eig_seconds
        return self


class MultiGraphSPORE(_SPOREBase):
    """MKL-SPORE (eq. 17): SPORE over several graphs on one vertex set, simplex weights.

    Parameters
    ----------
    C, beta, n_outer, n_inner, step, iterate, affinity, threshold, n_neighbors, dtype,
    keep_path, verbose : as in :class:`SPORE` (``K0`` is "coupled" per graph).
    step_eta : float, optional
        Step on the weights eta; default 1 / sqrt(T).

    Attributes
    ----------
    classes_, transduction_, decision_scores_, history_, best_iter_, n_iter_ : as in SPORE.
    embedding_ : ndarray (n, n)
        ``sum_k eta_k K^(k)``.
    kernels_ : list of ndarray (n, n)
    weights_ : ndarray (M,)
        eta.

    Notes
    -----
    Not jointly convex in (eta, K): a stationary point is returned (spore.md §6).
    Time O(M n_outer (n_inner + 1) n^3).
    """

    def __init__(self, C=1.0, beta=0.1, n_outer=5, n_inner=None, step=None, step_eta=None,
                 iterate="final", affinity="precomputed", threshold=None, n_neighbors=10,
                 dtype="auto", keep_path=False, verbose=False):
        self.C = C
        self.beta = beta
        self.n_outer = n_outer
        self.n_inner = n_inner
        self.step = step
        self.step_eta = step_eta
        self.iterate = iterate
        self.affinity = affinity
        self.threshold = threshold
        self.n_neighbors = n_neighbors
        self.dtype = dtype
        self.keep_path = keep_path
        self.verbose = verbose

    def fit(self, Xs, y):
        """Learn the kernels, weights and labels of all vertices.

        Parameters
        ----------
        Xs : list of arrays or sparse matrices
            One adjacency (n, n) per graph if ``affinity="precomputed"``, else one feature
            matrix (n, d_k) per view.
        y : array of shape (n,)
            Two classes; -1 marks unlabelled vertices.
        """
        _check_params(self.C, self.beta, self.n_outer, self.n_inner)
        if self.iterate not in ("final", "best"):
            raise ValueError(f"iterate must be 'final' or 'best', got {self.iterate!r}.")
        if isinstance(Xs, np.ndarray) or sp.issparse(Xs) or len(Xs) < 1:
            raise ValueError("Xs must be a non-empty list of graphs (or feature matrices).")
        As = [_simple_graph(X, self.affinity, self.threshold, self.n_neighbors, f"Xs[{k}]")
              for k, X in enumerate(Xs)]
        n = As[0].shape[0]
        if any(A.shape[0] != n for A in As):
            raise ValueError(f"all graphs must have the same vertices; sizes "
                             f"{[A.shape[0] for A in As]}.")
        classes, labeled, signed = _labels(y, n)
        dtype = self._dtype(n)
        _check_dense_memory(n, len(As), dtype)
        res = mkl_spore(As, signed, labeled, self.C, self.beta, n_outer=self.n_outer,
                        n_inner=self.n_inner, step=self.step, step_eta=self.step_eta,
                        dtype=dtype, keep_path=self.keep_path, verbose=self.verbose)
        best = self.iterate == "best"
        self.classes_ = classes
        self.kernels_ = res.Ks_best if best else res.Ks
        self.weights_ = res.eta_best if best else res.eta
        self.embedding_ = sum(e * K for e, K in zip(self.weights_, self.kernels_))
        self.decision_scores_ = res.scores_best if best else res.scores
        self.transduction_ = _transduce(self.decision_scores_, classes, labeled, signed)
        self.history_ = res.history
        self.best_iter_ = res.best_iter
        self.n_iter_ = res.n_iter
        return self
