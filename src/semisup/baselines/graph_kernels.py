"""Graph-kernel SVM baselines of SPORE's Tables 1-2 and the graph combiners of Table 4.

Kernels (spore.md §7), with ``L = D - A``:

* Un-Lap: ``K = (c I + L)^{-1}``;
* N-Lap: ``K = (c I + D^{-1/2} L D^{-1/2})^{-1}`` (``D^{-1/2} = 0`` on isolated vertices);
* K-Scaling (Ando & Zhang 2007): ``K_ij = Kt_ij / sqrt(Kt_ii Kt_jj)`` with
  ``Kt = (c I + L)^{-1}`` (unit diagonal).

Each kernel is fed to the same bias-free SVM (SPORE eq. 3) with the same prediction rule
``yhat = K_{:,S} (alpha * y_S)``. One eigendecomposition ``L = U diag(mu) U^T`` serves every
``c`` (``K(c) = U diag(1 / (c + mu)) U^T``), and only the columns ``K_{:,S}`` and the diagonal
are ever formed: O(n^3) once, then O(n^2 m) per ``c``, which makes cross-validation over
``c`` cheap.
"""

from __future__ import annotations

import time
from numbers import Real

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import TransductiveMixin, _fingerprint, _fit_context, _store_init_params
from .._progress import log
from .._transductive import n_vertices, one_vs_rest, ovr_labels, transduce, warn_unreached
from .._validation import check_affinity, check_semisup_labels
from ..graph import connected_components, laplacian
from ..graph.frontend import GRAPH_PARAMETER_CONSTRAINTS, GraphMixin
from ..kernels import check_kernel_memory
from ..linalg.svm_dual import svm_dual

__all__ = ["KERNELS", "LaplacianSpectrum", "graph_kernel", "svm_on_columns", "GraphKernelSVM",
           "union_graph", "intersection_graph", "majority_graph"]

KERNELS = ("unlap", "nlap", "kscaling")


def _check_spectrum_memory(n):
    # the dense L, its eigenvectors and the kernel: three n x n float64 arrays
    check_kernel_memory(n, copies=3, what=f"the {n}x{n} Laplacian eigenbasis",
                        hint="The graph kernels are dense n x n; subsample the graph or "
                        "split it into connected components.")


class LaplacianSpectrum:
    """Cached eigendecomposition of a graph Laplacian, giving kernel columns for any c.

    Parameters
    ----------
    A : array or sparse matrix (n, n)
        Symmetric non-negative adjacency (weights are used as given).
    kind : {"unlap", "nlap", "kscaling"}
        Which kernel; K-Scaling uses the unnormalised Laplacian.
    """

    def __init__(self, A, kind: str):
        if kind not in KERNELS:
            raise ValueError(f"kind must be one of {KERNELS}, got {kind!r}.")
        W = check_affinity(A, "A")
        n = W.shape[0]
        _check_spectrum_memory(n)
        Lk = "normalized" if kind == "nlap" else "unnormalized"
        L = laplacian(W, kind=Lk).toarray()
        if kind == "nlap":
            # isolated vertices: D^{-1/2} = 0, so their rows/columns of L are zero
            iso = np.asarray(W.sum(axis=1)).ravel() == 0
            L[iso, :] = 0.0
            L[:, iso] = 0.0
        self.kind = kind
        self.mu, self.U = sla.eigh(0.5 * (L + L.T), check_finite=False)
        self.mu = np.maximum(self.mu, 0.0)
        # the kernels are block diagonal over the components, but an eigenbasis of a
        # repeated eigenvalue (0, once per component) mixes them: written out exactly
        self.components = connected_components(W)[1]

    def columns(self, c: float, cols):
        """``(K[:, cols], diag(K))`` of the kernel with parameter c (c > 0)."""
        if not c > 0:
            raise ValueError(f"c must be positive, got {c!r}.")
        inv = 1.0 / (c + self.mu)
        Kc = (self.U * inv) @ self.U[cols].T
        Kc[self.components[:, None] != self.components[cols][None, :]] = 0.0
        d = (self.U ** 2) @ inv
        if self.kind == "kscaling":
            s = 1.0 / np.sqrt(d)
            Kc = Kc * s[:, None] * s[cols][None, :]
            d = np.ones_like(d)
        return Kc, d

    def kernel(self, c: float) -> np.ndarray:
        """The full n x n kernel (O(n^3))."""
        return self.columns(c, np.arange(self.U.shape[0]))[0]


def graph_kernel(A, kind: str, c: float) -> np.ndarray:
    """Dense Un-Lap / N-Lap / K-Scaling kernel of a graph (see module docstring)."""
    return LaplacianSpectrum(A, kind).kernel(c)


def svm_on_columns(Kc, cols, signed, C):
    """The bias-free SVM (SPORE eq. 3) on the labelled block of a kernel, given its columns.

    With ``Kc = K[:, cols]`` (e.g. :meth:`LaplacianSpectrum.columns`), solves the dual on
    ``K[cols, cols]`` (:func:`semisup.linalg.svm_dual.svm_dual`) and scores every row:
    ``yhat = K[:, cols] (alpha * signed[cols])``. O(m^3) for ``m`` labels, O(n m) scores.

    Parameters
    ----------
    Kc : ndarray of shape (n, m)
        The kernel's columns of the labelled vertices.
    cols : ndarray of int of shape (m,)
        The labelled vertices.
    signed : ndarray of shape (n,)
        ``+1`` / ``-1`` labels (read on ``cols`` only).
    C : float
        SVM box bound.

    Returns
    -------
    scores : ndarray of shape (n,)
    result : SVMDualResult

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.baselines.graph_kernels import svm_on_columns
    >>> K = np.eye(3)                                  # three unconnected vertices
    >>> cols, signed = np.array([0, 1]), np.array([1.0, -1.0, 1.0])
    >>> scores, res = svm_on_columns(K[:, cols], cols, signed, C=1.0)
    >>> np.round(scores, 6).tolist()                  # the third is not reached: score 0
    [1.0, -1.0, 0.0]
    """
    KSS = Kc[cols]
    res = svm_dual(KSS, signed[cols], np.arange(len(cols)), C)
    return Kc @ (res.alpha * signed[cols]), res


class GraphKernelSVM(TransductiveMixin, GraphMixin, ClassifierMixin, BaseEstimator):
    """Bias-free SVM (SPORE eq. 3) with a fixed graph kernel: Un-Lap, N-Lap or K-Scaling.

    Transductive: ``fit(X, y)`` labels every vertex with ``yhat = K_{:,S} (alpha * y_S)``;
    ``predict`` and ``decision_function`` answer only for the fitted ``X``. More than two
    classes are solved one-vs-rest inside the estimator, on one kernel: the
    eigendecomposition and the kernel columns are computed once, one SVM per class. Do not
    wrap it in scikit-learn's ``OneVsRestClassifier``: that reads the unlabelled marker -1
    as a class, fits every binary problem as if all points were labelled, and predicts -1
    for most points.

    Parameters
    ----------
    kernel : {"unlap", "nlap", "kscaling"}, default="nlap"
        The graph kernel (module docstring).
    c : float, default=0.1
        The ``c`` in ``(c I + L)^{-1}`` (c1, c2 of the paper).
    C : float, default=1.0
        SVM box bound.
    verbose : bool, default=False
        Report the graph, the eigendecomposition and the SVM on stderr.
    affinity, n_neighbors, weights, graph_sigma, threshold, metric, knn_method, n_jobs, \
random_state :
        The graph parameters, shared by every graph-based estimator
        (:mod:`semisup.graph.frontend`): ``affinity="knn"`` (default) builds the symmetric
        ``n_neighbors``-NN graph of ``X`` with heat weights; ``"precomputed"`` takes ``X``
        as the ``n x n`` adjacency (the SPORE paper's protocol). The Laplacian uses the
        weights as given.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n,)
        Labels of all vertices: labelled ones keep theirs, the others follow
        :func:`semisup._transductive.decide` on ``decision_scores_`` (the sign, or the
        argmax for more than two classes; an exact tie goes to the tied class with more
        labelled vertices, as for :class:`semisup.spore.SPORE`).
    decision_scores_ : ndarray of shape (n,) or (n, n_classes)
        Soft predictions; for two classes positive means ``classes_[1]``, for more one
        column per class (its one-vs-rest SVM).
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n, n)
    graph_sigma_ : float or None
    n_unreached_ : int
        Unlabelled vertices in components without a label (score 0, with a warning).

    Notes
    -----
    One dense eigendecomposition of the Laplacian: O(n^3) time, O(n^2) memory, refused
    before the graph is built when it cannot fit.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.baselines.graph_kernels import GraphKernelSVM
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.3, (20, 2)), rng.normal(3, 0.3, (20, 2))]
    >>> y = np.repeat([0, 1], 20)
    >>> y_obs = np.full(40, -1)                        # -1: unlabeled
    >>> y_obs[[0, 20]] = [0, 1]
    >>> model = GraphKernelSVM(kernel="nlap", n_neighbors=5).fit(X, y_obs)
    >>> float(np.mean(model.transduction_ == y))
    1.0
    """

    _parameter_constraints = {
        **GRAPH_PARAMETER_CONSTRAINTS,
        "kernel": [StrOptions(set(KERNELS))],
        "c": [Interval(Real, 0, None, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
    }

    def __init__(self, *, kernel="nlap", c=0.1, C=1.0, verbose=False, affinity="knn",
                 n_neighbors=10, weights="heat", graph_sigma=None, threshold=None,
                 metric="euclidean", knn_method="auto", n_jobs=None, random_state=None):
        _store_init_params(self, locals())

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on points (or the adjacency, ``affinity="precomputed"``) and labels.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d), or (n, n)
        y : array-like of shape (n,)
            Class labels (two or more); -1 marks unlabelled vertices.

        Returns
        -------
        self
        """
        check_semisup_labels(y, estimator="GraphKernelSVM")    # cheap: before the graph
        n = n_vertices(X)
        if n is not None:
            _check_spectrum_memory(n)
        t0 = time.perf_counter()
        W, _ = self._fit_graph(X)
        self._graph_state = None                 # transductive: no query index, no copy of X
        n = W.shape[0]
        log(f"[GraphKernelSVM] graph: {n} vertices, {W.nnz // 2} edges; eigendecomposition "
            f"of the {n}x{n} Laplacian", self.verbose)
        spec = LaplacianSpectrum(W, self.kernel)
        log(f"[GraphKernelSVM] spectrum done ({time.perf_counter() - t0:.2f} s)", self.verbose)
        classes, cols, signed = ovr_labels(y, n, "GraphKernelSVM")
        self.n_unreached_ = warn_unreached(W, cols, "GraphKernelSVM")
        Kc, _ = spec.columns(self.c, cols)           # the labels' kernel columns: once
        _, scores = one_vs_rest(lambda s: svm_on_columns(Kc, cols, s, self.C), signed)
        self.classes_ = classes
        self.decision_scores_ = scores
        self.transduction_ = transduce(scores, classes, cols, signed)
        self._fit_X_fingerprint = _fingerprint(X)
        log(f"[GraphKernelSVM] {signed.shape[1]} SVM(s) on {cols.size} labelled vertices "
            f"done ({time.perf_counter() - t0:.2f} s)", self.verbose)
        return self



def _stack(As):
    if len(As) < 1:
        raise ValueError("need at least one graph.")
    mats = [sp.csr_matrix(check_affinity(A, f"As[{k}]")) for k, A in enumerate(As)]
    n = mats[0].shape[0]
    if any(M.shape[0] != n for M in mats):
        raise ValueError("all graphs must have the same vertex set.")
    count = sum((M != 0).astype(np.int32) for M in mats)
    return sp.csr_matrix(count), len(mats)


def union_graph(As) -> sp.csr_matrix:
    """0/1 adjacency with an edge where any graph has one."""
    cnt, _ = _stack(As)
    return (cnt >= 1).astype(np.float64).tocsr()


def intersection_graph(As) -> sp.csr_matrix:
    """0/1 adjacency with an edge where every graph has one."""
    cnt, M = _stack(As)
    return (cnt >= M).astype(np.float64).tocsr()


def majority_graph(As) -> sp.csr_matrix:
    """0/1 adjacency with an edge where more than half of the graphs have one."""
    cnt, M = _stack(As)
    return (cnt > M / 2).astype(np.float64).tocsr()
