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

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .._validation import check_affinity, check_memory, check_semisup_labels
from ..graph import laplacian
from ..spore.svm_dual import svm_dual

__all__ = ["KERNELS", "LaplacianSpectrum", "graph_kernel", "GraphKernelSVM",
           "union_graph", "intersection_graph", "majority_graph"]

KERNELS = ("unlap", "nlap", "kscaling")


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
        check_memory(3 * 8.0 * n * n, f"the {n}x{n} Laplacian eigenbasis")
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

    def columns(self, c: float, cols):
        """``(K[:, cols], diag(K))`` of the kernel with parameter c (c > 0)."""
        if not c > 0:
            raise ValueError(f"c must be positive, got {c!r}.")
        inv = 1.0 / (c + self.mu)
        Kc = (self.U * inv) @ self.U[cols].T
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


def _svm_on_columns(Kc, cols, signed, C):
    """Bias-free SVM on the block K[cols, cols]; scores for all rows of Kc."""
    KSS = Kc[cols]
    res = svm_dual(KSS, signed[cols], np.arange(len(cols)), C)
    return Kc @ (res.alpha * signed[cols]), res


class GraphKernelSVM(BaseEstimator):
    """Bias-free SVM (SPORE eq. 3) with a fixed graph kernel: Un-Lap, N-Lap or K-Scaling.

    Parameters
    ----------
    kernel : {"unlap", "nlap", "kscaling"}, default="nlap"
    c : float, default=0.1
        The ``c`` in ``(c I + L)^{-1}`` (c1, c2 of the paper).
    C : float, default=1.0
        SVM box bound.
    affinity : "precomputed"
        ``fit`` takes the adjacency.

    Attributes
    ----------
    classes_, transduction_, decision_scores_ : as in :class:`semisup.spore.SPORE`.
    """

    def __init__(self, kernel="nlap", c=0.1, C=1.0, affinity="precomputed"):
        self.kernel = kernel
        self.c = c
        self.C = C
        self.affinity = affinity

    def fit(self, A, y):
        """Fit on adjacency ``A`` (n, n) and labels ``y`` (-1 = unlabelled), two classes."""
        if self.affinity != "precomputed":
            raise ValueError("GraphKernelSVM takes a precomputed adjacency "
                             "(affinity='precomputed').")
        if not (np.isfinite(self.C) and self.C > 0):
            raise ValueError(f"C must be positive, got {self.C!r}.")
        spec = LaplacianSpectrum(A, self.kernel)
        n = spec.U.shape[0]
        y, classes, labeled = check_semisup_labels(y, n)
        if classes.size != 2:
            raise ValueError(f"binary labels needed; got classes {classes.tolist()}.")
        signed = np.where(y == classes[1], 1.0, -1.0)
        cols = np.flatnonzero(labeled)
        Kc, _ = spec.columns(self.c, cols)
        scores, _ = _svm_on_columns(Kc, cols, signed, self.C)
        self.classes_ = classes
        self.decision_scores_ = scores
        pred = np.where(scores > 0, 1.0, -1.0)
        pred[cols] = signed[cols]
        self.transduction_ = np.where(pred > 0, classes[1], classes[0])
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
