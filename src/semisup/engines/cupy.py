"""The CuPy engine: graph, solvers and LapRLS on a CUDA device (extra ``[gpu]``).

A CuPy ``X`` (or a ``cupyx.scipy.sparse`` affinity) picks this engine
(:func:`semisup.engines.engine_for`); the arrays stay on the device and results come back
as CuPy arrays. The computations are those of :mod:`semisup.engines.arrays` with
``xp = cupy``: the same code CI runs with numpy against the CPU path.
"""

from __future__ import annotations

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
    """Exact kNN graphs, harmonic and Poisson solves and LapRLS on a CUDA device.

    Supported graph parameters: ``affinity="knn"`` (exact search whatever ``knn_method``:
    tiles of float32 key products with a certified selection and a float64 re-rank, the
    lists of ``knn_search(..., method="exact")``) with ``weights`` ``"heat"``, ``"binary"``
    or ``"distance"`` and ``metric`` ``"euclidean"`` or ``"cosine"``, and
    ``affinity="precomputed"`` (a ``cupyx.scipy.sparse`` or CuPy affinity). Others are
    refused with an error naming the parameter.
    """

    name = "cupy"

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
        X = self.xp.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        if X.dtype.kind not in "fiub":
            raise ValueError(f"X must be numeric, got dtype {X.dtype}.")
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(self.xp.float64)
        if X.shape[0] < 2:
            raise ValueError(f"X must have at least 2 samples, got {X.shape[0]}.")
        if not bool(self.xp.isfinite(X).all()):
            raise ValueError("X contains NaN or infinity.")
        est.n_features_in_ = X.shape[1]
        return X

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
            W = self.asarray(X)
            if not self.sparse.issparse(W):
                W = self.sparse.csr_matrix(W)
            W = W.tocsr().astype(self.xp.float64)
            if W.shape[0] != W.shape[1]:
                raise ValueError(f"X (precomputed affinity) must be square, got {W.shape}.")
            if W.nnz and float(W.data.min()) < 0:
                raise ValueError("X (precomputed affinity) has negative entries.")
            D = W - W.T.tocsr()
            if D.nnz and float(abs(D.data).max()) > 1e-10 * float(abs(W.data).max()):
                raise ValueError("X (precomputed affinity) is not symmetric; symmetrize it, "
                                 "e.g. (W + W.T) / 2 or W.maximum(W.T).")
            return GraphFit(W, None, None, None)
        X = self.xp.asarray(X)
        n = X.shape[0]
        k = min(est.n_neighbors, n - 1)
        dist, ind = self.knn_search(X, k, metric=est.metric)
        W, sigma = arrays.knn_graph(dist, ind, weights=est.weights, sigma=est.graph_sigma)
        return GraphFit(W, X, sigma, ("knn", X, k, sigma))

    def query_affinity(self, est, state, X_new):
        if est.affinity == "precomputed":
            W = self.asarray(X_new)
            return W if self.sparse.issparse(W) else self.sparse.csr_matrix(W)
        _, X_fit, k, sigma = state
        dist, ind = arrays.knn_exact(X_fit, k, metric=est.metric, Q=self.xp.asarray(X_new))
        W, _ = arrays.knn_graph(dist, ind, X_fit.shape[0], weights=est.weights, sigma=sigma,
                                symmetrize=False)
        return W

    # -- solvers the estimators call ------------------------------------------------------
    def harmonic_solve(self, W, labeled, Y_l, *, tol=1e-8, max_iter=None):
        """:func:`semisup.engines.arrays.harmonic_solve` on the device."""
        return arrays.harmonic_solve(self.asarray(W), labeled, self.xp.asarray(Y_l),
                                     tol=tol, max_iter=max_iter)

    def poisson_solve(self, W, labeled_idx, y_idx, n_classes, *, tol=1e-3, max_iter=None):
        """:func:`semisup.engines.arrays.poisson_solve` on the device."""
        return arrays.poisson_solve(self.asarray(W), labeled_idx, y_idx, n_classes, tol=tol,
                                    max_iter=max_iter)

    def laprls_fit(self, X, Y, W, *, kernel_sigma, gamma_A=1e-6, gamma_I=1.0,
                   laplacian="normalized", use_bias=False, kernel_dtype="float32", tol=1e-6,
                   max_iter=1000):
        """LapRLS with the full RBF kernel of ``X`` held on the device.

        The kernel (``kernel_dtype``, built in float64 blocks) is refused before any work
        when it does not fit in the device's free memory; the primal system is solved by
        :func:`semisup.engines.arrays.laprls_fit`. Returns its ``LapRLSFit``.
        """
        X = self.xp.asarray(X)
        K = arrays.rbf_kernel(X, float(kernel_sigma), dtype=kernel_dtype)
        apply_L = arrays.laplacian_apply(self.asarray(W), laplacian)
        return arrays.laprls_fit(K, self.xp.asarray(Y), apply_L, gamma_A=gamma_A,
                                 gamma_I=gamma_I, use_bias=use_bias, tol=tol,
                                 max_iter=max_iter)
