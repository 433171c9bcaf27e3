"""The engine interface: what an engine computes for the graph front-end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["Engine", "GraphFit"]


@dataclass(frozen=True)
class GraphFit:
    """What :meth:`Engine.fit_graph` returns to the graph front-end.

    Attributes
    ----------
    W : sparse matrix of shape (n, n)
        The symmetric training affinity, checked (non-negative, zero diagonal, no stored
        zeros): scipy CSR float64 for the in-process and Dask engines, the engine's own
        sparse type otherwise.
    X : array of shape (n, d)
        The validated training points, in the engine's array type (a dask array stays on
        the workers); the estimator builds its kernel on them.
    graph_sigma : float or None
        The heat-weight width used (``None`` for binary or distance weights).
    state : object
        What :meth:`Engine.query_affinity` needs for new points (references to ``X``, never
        copies). Opaque to the front-end, which stores it and hands it back.
    """

    W: Any
    X: Any
    graph_sigma: float | None
    state: Any


class Engine:
    """Where the array work of one kind of input runs (see :mod:`semisup.engines`).

    An engine reads the estimator's graph parameters (``est.affinity``,
    ``est.n_neighbors``, ``est.weights``, ``est.graph_sigma``, ``est.threshold``,
    ``est.metric``, ``est.knn_method``, ``est.n_jobs``, ``est.random_state``) and never
    writes the estimator: the front-end stores what the engine returns.
    """

    #: the name it is registered under (:func:`semisup.engines.register_engine`)
    name = "numpy"
    #: the array namespace and sparse module of the arrays the engine returns (the graph,
    #: the solutions): numpy and scipy.sparse unless the engine keeps its arrays elsewhere
    xp = np
    sparse = sp
    #: whether the graph and the fitted arrays are numpy / scipy.sparse (False: they stay
    #: where the engine computes, e.g. on a GPU, and the estimators' host-only steps refuse)
    host_arrays = True

    # Optional capabilities: an engine that keeps its arrays off the host also defines
    # ``check_affinity(W, name)`` and ``check_query_affinity(W_new, n_train, name)`` (a
    # precomputed affinity validated where it lives) and the solvers the estimators ask for
    # with ``getattr(engine, name, None)`` (``harmonic_solve``, ``poisson_solve``); an
    # engine without them gets the host checks and CPU solvers.

    def check_points(self, est, X):
        """The validated training points (2-D, numeric, finite, float64 or float32).

        The default asks the estimator (scikit-learn's ``validate_data``, which also records
        ``n_features_in_`` and feature names); an engine whose arrays must not be gathered
        validates them where they are. Unsupported graph parameters are refused here,
        before any work, with an error naming the parameter.
        """
        return est._validate_points(X, reset=True)

    def check_query_points(self, est, X_new):
        """The validated new points (``n_features_in_`` checked), as the engine takes them."""
        return est._validate_points(X_new, reset=False)

    def to_host(self, a):
        """``a`` as a numpy array (or scipy sparse matrix); in-memory engines return it."""
        return a

    def from_host(self, a):
        """A host array ``a`` in the engine's array type (the answer for its inputs)."""
        return a

    def take_labels(self, classes, index):
        """``classes[index]`` for an integer ``index`` of the engine's array type: labels
        where the index lives when the engine can hold them (numeric classes), else numpy."""
        return classes[self.to_host(index)]

    def knn_search(self, X, n_neighbors, *, metric="euclidean", Q=None, method="auto",
                   n_jobs=None, random_state=None):
        """Directed kNN lists ``(dist, ind)``, numpy ``(m, n_neighbors)`` float64 / int64.

        Without ``Q``: the neighbours of each row of ``X`` among the other rows (the point
        itself excluded); with ``Q``: the neighbours in ``X`` of each row of ``Q``.
        ``method``, ``n_jobs`` and ``random_state`` are those of
        :func:`semisup.graph.knn_search`; an engine that cannot honour ``method="approx"``
        says so.
        """
        raise NotImplementedError

    def fit_graph(self, est, X) -> GraphFit:
        """The training graph of the validated points ``X`` (:meth:`check_points`)."""
        raise NotImplementedError

    def query_affinity(self, est, state, X_new):
        """``(m, n_train)`` sparse affinities of validated new points to the training points,
        from the ``state`` of :meth:`fit_graph`."""
        raise NotImplementedError

    def kernel(self, X, Y, kernel, *, dtype, **params):
        """The kernel of ``X`` (against ``Y``, or itself) held where ``X`` lives, as an operator
        with ``shape``, ``dtype`` and ``@`` (what the PCG solvers need); called by
        :func:`semisup.kernels.make_kernel` for inputs that are not in memory."""
        raise NotImplementedError(f"the {self.name} engine computes no kernel; pass X in "
                                  "memory (np.asarray(X)).")

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"
