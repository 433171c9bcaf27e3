"""The Dask engine: the training kNN graph and query affinities of a dask array ``X``.

Registered in :mod:`semisup.engines` for ``dask.array`` inputs and loaded on the first one,
so the graph package never imports this module. The kNN lists are computed blockwise on the
workers (:func:`~semisup.distributed.knn_search_dask`); only the ``n x k`` lists reach the
client, where the sparse graph (and, in the estimators, its Laplacian) is built by the same
recipe as for an in-memory ``X`` (:func:`semisup.graph.engine.fit_knn_graph`). The training
points stay a dask array (the engine's state), against which new points are searched on the
workers too.
"""

from __future__ import annotations

from ..engines import Engine, GraphFit
from ..graph.engine import fit_knn_graph, query_knn_affinity
from .neighbors import check_dask_points, knn_search_dask

__all__ = ["DaskEngine"]


class DaskEngine(Engine):
    """Dask arrays, computed on the active ``dask.distributed`` Client's workers (else on
    dask's default scheduler). kNN graphs only (``affinity="knn"``), searched exactly."""

    name = "dask"

    def check_points(self, est, X):
        if est.affinity != "knn":
            raise ValueError(f"a dask array X is supported with affinity='knn' only, got "
                             f"affinity={est.affinity!r}; pass X in memory (np.asarray(X)).")
        if est.knn_method == "approx":
            raise ValueError("knn_method='approx' needs X in memory; a dask array X is "
                             "searched exactly (knn_method='exact' or 'auto').")
        X, _ = check_dask_points(X)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"X has {n} sample(s); at least 2 are needed.")
        return X

    def knn_search(self, X, n_neighbors, *, metric="euclidean", Q=None, method="auto",
                   n_jobs=None, random_state=None):
        if method == "approx":
            raise ValueError("method='approx' needs X in memory; a dask array X is searched "
                             "exactly (method='exact' or 'auto').")
        return knn_search_dask(X, n_neighbors, metric=metric, Q=Q)

    def fit_graph(self, est, X) -> GraphFit:
        return fit_knn_graph(self, est, X)

    def query_affinity(self, est, state, X_new):
        return query_knn_affinity(self, est, state, X_new)

    def kernel(self, X, Y, kernel, *, dtype, **params):
        """The kernel as row blocks on the workers (:class:`~semisup.distributed.DaskKernel`):
        the PCG solvers need only its products."""
        from .kernel import DaskKernel
        return DaskKernel(X, Y, kernel, dtype=dtype, **params)
