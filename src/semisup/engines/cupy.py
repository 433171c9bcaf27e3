"""The CuPy engine: graph, solvers and the kernel on a CUDA device (extra ``[gpu]``).

A CuPy ``X`` (or a ``cupyx.scipy.sparse`` affinity) picks this engine
(:func:`semisup.engines.engine_for`); the arrays stay on the device and results come back
as CuPy arrays. The computations are those of :mod:`semisup.engines.arrays` with
``xp = cupy``: the same code CI runs with numpy against the CPU path.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import arrays
from ._base import Engine, GraphFit

__all__ = ["CupyEngine", "import_cupy"]


def import_cupy():
    """``(cupy, cupyx.scipy.sparse)``, or an ImportError that names the ``[gpu]`` extra."""
    try:
        import cupy
        import cupyx.scipy.sparse as cusparse
    except ImportError as exc:
        raise ImportError("the GPU engine needs CuPy: pip install 'semisup[gpu]' (or the "
                          "cupy-cuda12x / cupy-cuda13x wheel matching your CUDA driver)."
                          ) from exc
    return cupy, cusparse


class CupyEngine(Engine):
    """Exact kNN graphs, harmonic and Poisson solves and RBF kernels on a CUDA device
    (LapSVM / LapRLS run their PCG on its kernel: :mod:`semisup.lapsvm._device`).

    Supported graph parameters: ``affinity="knn"`` (exact search whatever ``knn_method``:
    tiles of float32 key products with a certified selection and a float64 re-rank, the
    lists of ``knn_search(..., method="exact")``) with ``weights`` ``"heat"``, ``"binary"``
    or ``"distance"`` and ``metric`` ``"euclidean"`` or ``"cosine"``, and
    ``affinity="precomputed"`` (a ``cupyx.scipy.sparse`` or CuPy affinity). Others are
    refused with an error naming the parameter.
    """

    name = "cupy"
    host_arrays = False

    def __init__(self):
        self.xp, self.sparse = import_cupy()

    # -- arrays ---------------------------------------------------------------------------
    def asarray(self, a, dtype=None):
        """``a`` on the device (a scipy sparse matrix becomes a ``cupyx`` CSR matrix)."""
        import scipy.sparse as sp
        if sp.issparse(a):
            return self.sparse.csr_matrix(sp.csr_matrix(a))
        if self.sparse.issparse(a):
            return a.tocsr()
        return self.xp.asarray(a, dtype=dtype)

    @staticmethod
    def to_host(a):
        """A numpy array (or scipy sparse matrix) of a device array."""
        return arrays.to_host(a)

    def from_host(self, a):
        """A host array on the device (scipy sparse: a ``cupyx`` CSR matrix)."""
        return self.asarray(a)

    def take_labels(self, classes, index):
        """``classes[index]`` on the device for numeric classes; strings and objects cannot
        live there, so their labels come back as numpy."""
        if np.asarray(classes).dtype.kind in "biuf":
            return self.xp.asarray(classes)[index]
        return np.asarray(classes)[arrays.to_host(index)]

    def free_memory(self) -> int:
        """Free device memory in bytes (the driver's, plus CuPy's pooled free blocks)."""
        return arrays.free_memory(self.xp)

    def device_name(self) -> str:
        props = self.xp.cuda.runtime.getDeviceProperties(self.xp.cuda.Device().id)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    # -- the Engine interface -------------------------------------------------------------
    def check_points(self, est, X):
        if est.affinity not in ("knn", "precomputed"):
            raise ValueError(f"affinity={est.affinity!r} is not available on the GPU engine; "
                             "use affinity='knn' or 'precomputed'.")
        if est.knn_method == "approx":
            raise ValueError("knn_method='approx' is not available on the GPU engine, whose "
                             "exact search is fast; use knn_method='exact' or 'auto'.")
        if est.affinity == "knn" and est.weights not in ("heat", "binary", "distance"):
            raise ValueError(f"weights={est.weights!r} is not available on the GPU engine; "
                             "use 'heat', 'binary' or 'distance'.")
        X = self._float_matrix(X)
        if X.shape[0] < 2:
            raise ValueError(f"X must have at least 2 samples, got {X.shape[0]}.")
        self._check_finite(X)
        est.n_features_in_ = X.shape[1]
        return X

    def _float_matrix(self, X):
        """``X`` on the device as a 2-D float32/float64 array (other numbers as float64)."""
        X = self.xp.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        if X.dtype.kind not in "fiub":
            raise ValueError(f"X must be numeric, got dtype {X.dtype}.")
        return X if X.dtype in (np.float32, np.float64) else X.astype(self.xp.float64)

    def _check_finite(self, X):
        if X.size and not bool(self.xp.isfinite(X).all()):
            raise ValueError("X contains NaN or infinity.")

    def check_query_points(self, est, X_new):
        """New points on the device: 2-D, numeric, finite, ``n_features_in_`` columns."""
        X = self._float_matrix(X_new)
        if X.shape[1] != est.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(est).__name__} is "
                             f"expecting {est.n_features_in_} features as input.")
        self._check_finite(X)
        return X

    def _as_csr(self, W, name):
        """A float64 CSR copy of a (host or device, sparse or dense) matrix on the device."""
        if not self.sparse.issparse(W) and getattr(W, "ndim", 2) != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got {W.ndim} dimension(s).")
        W = self.asarray(W)
        if not self.sparse.issparse(W):
            if W.dtype.kind not in "fiub":
                raise ValueError(f"{name} must be numeric, got dtype {W.dtype}.")
            W = self.sparse.csr_matrix(W.astype(self.xp.float64))
        W = W.tocsr().astype(self.xp.float64)
        W = W.copy()                 # canonicalised below: never the caller's arrays
        W.sum_duplicates()
        if W.nnz and not bool(self.xp.isfinite(W.data).all()):
            raise ValueError(f"{name} contains NaN or infinity.")
        W.eliminate_zeros()
        if W.nnz and float(W.data.min()) < 0:
            raise ValueError(f"{name} has negative entries (min {float(W.data.min()):.3g});"
                             " affinities must be non-negative.")
        return W

    def check_affinity(self, W, name="W"):
        """A precomputed affinity validated on the device, as
        :func:`semisup._validation.check_affinity` on the host: square, non-empty, finite,
        non-negative, symmetric; canonical float64 CSR, self-loops dropped with a warning."""
        W = self._as_csr(W, name)
        if W.shape[0] != W.shape[1]:
            raise ValueError(f"{name} must be square, got shape {W.shape}.")
        if W.shape[0] == 0:
            raise ValueError(f"{name} is empty (shape {W.shape}); at least one point is "
                             "needed.")
        if W.nnz:
            D = W - W.T.tocsr()
            asym = float(abs(D.data).max()) if D.nnz else 0.0
            if asym > 1e-10 * max(float(W.data.max()), 1.0):
                raise ValueError(f"{name} is not symmetric (max |W - W.T| = {asym:.3g}); "
                                 "symmetrize it, e.g. (W + W.T) / 2 or W.maximum(W.T).")
        diag = W.diagonal()
        if bool((diag != 0).any()):
            warnings.warn(f"{name} has non-zero diagonal entries (self-loops); they are "
                          "ignored.", UserWarning, stacklevel=4)
            W = (W - self.sparse.diags([diag], [0], format="csr")).tocsr()
            W.eliminate_zeros()
        W.sort_indices()
        return W

    def check_query_affinity(self, W_new, n_train, name="X"):
        """The ``(m, n_train)`` affinities of new points, validated on the device."""
        W = self._as_csr(W_new, name)
        if W.shape[1] != n_train:
            raise ValueError(f"{name} has {W.shape[1]} columns but the model was trained on "
                             f"{n_train} points; with affinity='precomputed' pass the "
                             f"(n_new, {n_train}) affinities of the new points to the "
                             "training points.")
        return W

    def knn_search(self, X, n_neighbors, *, metric="euclidean", Q=None, method="auto",
                   n_jobs=None, random_state=None):
        """Exact kNN lists ``(dist, ind)`` on the device (CuPy float64 / int64)."""
        if method == "approx":
            raise ValueError("method='approx' is not available on the GPU engine; its "
                             "exact search is fast (method='exact' or 'auto').")
        return arrays.knn_exact(self.xp.asarray(X), n_neighbors, metric=metric,
                                Q=None if Q is None else self.xp.asarray(Q))

    def fit_graph(self, est, X) -> GraphFit:
        if est.affinity == "precomputed":
            return GraphFit(self.check_affinity(X, "X (precomputed affinity)"), None, None,
                            None)
        X = self.xp.asarray(X)
        n = X.shape[0]
        k = min(est.n_neighbors, n - 1)
        dist, ind = self.knn_search(X, k, metric=est.metric)
        W, sigma = arrays.knn_graph(dist, ind, weights=est.weights, sigma=est.graph_sigma)
        return GraphFit(W, X, sigma, ("knn", X, k, sigma))

    def query_affinity(self, est, state, X_new):
        if est.affinity == "precomputed":
            return self.check_query_affinity(X_new, est.affinity_matrix_.shape[0])
        _, X_fit, k, sigma = state
        dist, ind = arrays.knn_exact(X_fit, k, metric=est.metric, Q=self.xp.asarray(X_new))
        W, _ = arrays.knn_graph(dist, ind, X_fit.shape[0], weights=est.weights, sigma=sigma,
                                symmetrize=False)
        return W

    def kernel(self, X, Y, kernel, *, dtype, sigma=None, **params):
        """The dense RBF kernel of ``X`` against ``Y`` (or itself) on the device
        (:func:`semisup.engines.arrays.rbf_kernel`, float64 blocks stored as ``dtype``)."""
        if kernel != "rbf":
            raise ValueError(f"kernel={kernel!r} is not available on the GPU engine; use "
                             "kernel='rbf'.")
        return arrays.rbf_kernel(self.xp.asarray(X), float(sigma), dtype=dtype,
                                 Y=None if Y is None else self.xp.asarray(Y))

    # -- solvers the estimators call ------------------------------------------------------
    def harmonic_solve(self, W, labeled, Y_l, *, tol=1e-8, max_iter=None):
        """:func:`semisup.engines.arrays.harmonic_solve` on the device."""
        return arrays.harmonic_solve(self.asarray(W), labeled, self.xp.asarray(Y_l),
                                     tol=tol, max_iter=max_iter)

    def poisson_solve(self, W, labeled_idx, y_idx, n_classes, *, tol=1e-3, max_iter=None):
        """:func:`semisup.engines.arrays.poisson_solve` on the device."""
        return arrays.poisson_solve(self.asarray(W), labeled_idx, y_idx, n_classes, tol=tol,
                                    max_iter=max_iter)
