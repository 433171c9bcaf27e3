"""Scaling out on Dask (optional extra ``[dask]``: ``pip install 'semisup[dask]'``).

Without the extra the library stays numpy/scipy-only; the Dask paths import dask on demand
and fail with an ImportError naming the extra. Every computation here runs on the active
``dask.distributed.Client`` when there is one, else on dask's default scheduler.

What runs where
---------------
* :func:`semisup.graph.knn_search` / :func:`~semisup.graph.knn_graph` of a dask array: one
  task per (query chunk, data chunk) pair computes the pair's keys and exact distances and
  keeps each query row's best ``m``; the lists are merged per query chunk. Same result as the
  in-memory exact search.
* :class:`DaskKernel`: the ``n x n`` kernel of LapSVM / LapRLS as row blocks persisted on the
  workers (or recomputed per product); the PCG solver needs only ``K @ V``.
* :class:`DaskEngine`: the engine :mod:`semisup.engines` hands a dask array to. The
  estimators (``HarmonicFunction``, ``LaplacianAssignment``, ``LapSVM``, ``LapRLS``)
  accept a dask ``X``: the graph is built on the workers, its Laplacian stays a sparse matrix
  in the client (``O(n k)`` memory), the kernel stays on the workers.

Where the client-side sparse solves would need distribution
----------------------------------------------------------
``HarmonicFunction`` solves ``L_uu f = W_ul y_l`` and ``LaplacianAssignment`` runs ADMM with
a cached factorization or block CG on ``lambda L + rho I``, both on the sparse ``n x n``
Laplacian in the client. With a 10-NN graph the Laplacian has about ``2 k n`` = 20 n
non-zeros (``~ 240 n`` bytes as float64 CSR with int32 indices); a CG iteration reads it once
(``~ 40 n`` flops). At ``n = 10^7`` that is 2.4 GB and ~0.1-0.3 s per iteration on one core;
the sparse factorization (LASS small-N mode) grows much faster than that in fill-in and is
the first to go, around ``n ~ 10^6``. So the client-side solves stay practical to a few
``10^7`` points with CG on a machine of tens of GB; beyond that, or when the graph no longer
fits one machine, the Laplacian products (and the CG vectors) would have to be distributed
as row blocks like the kernel here (a dask array of sparse blocks, one halo exchange of
``f`` per product). The kNN graph itself, ``O(n^2 d)``, is what limits first and is already
distributed.
"""

import importlib

from ._dask import is_dask_array, require_dask

# imported on first use: importing the package stays free of dask and of semisup.graph
_LAZY = {"DaskKernel": ".kernel", "knn_search_dask": ".neighbors", "DaskEngine": ".engine"}

__all__ = ["DaskEngine", "DaskKernel", "is_dask_array", "knn_search_dask", "require_dask"]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
