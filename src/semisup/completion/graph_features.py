"""Spectral features: the data's cluster structure as extra columns for the completion.

The completion of :class:`~semisup.MatrixCompletionTransducer` predicts each label linearly
from the (denoised) features, so it cannot follow clusters that are not linearly separable
in the feature space. Appending the first nontrivial eigenvectors of the kNN graph's
Laplacian (Laplacian eigenmaps, Belkin & Niyogi 2003) gives it coordinates in which such
clusters are (nearly) linear: the features of manifold-regularised feature learning.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from ..graph import knn_graph

__all__ = ["spectral_features"]

#: below this many points the eigenproblem is solved densely (ARPACK needs k + 1 < n and
#: is no faster on a tiny graph)
DENSE_EIGEN_MAX = 64


def _eigenmaps(W, k):
    """Eigenvectors ``v_1..v_k`` of ``W v = lambda D v`` with the largest ``lambda`` below
    the trivial ``v_0 = 1``, i.e. the smallest nontrivial eigenvalues of the random-walk
    Laplacian ``I - D^{-1} W``; columns of unit ``D``-norm, signs fixed (largest-magnitude
    entry positive). Isolated points (degree 0) get 0."""
    n = W.shape[0]
    d = np.asarray(W.sum(axis=1)).ravel()
    s = np.zeros(n)
    np.divide(1.0, np.sqrt(d), out=s, where=d > 0)
    # symmetric form A = D^{-1/2} W D^{-1/2}: eigenvectors u = D^{1/2} v
    A = sp.diags(s) @ W @ sp.diags(s)
    if n <= max(DENSE_EIGEN_MAX, 2 * (k + 2)):
        vals, U = la.eigh(A.toarray())      # tiny graph (at most 64 points or 2k + 4)
    else:
        # a fixed start vector: the same graph always gives the same eigenvectors
        v0 = np.random.default_rng(0).uniform(0.5, 1.5, size=n)
        vals, U = sla.eigsh(A, k=k + 1, which="LA", v0=v0)
    order = np.argsort(-vals, kind="stable")[1:k + 1]
    V = U[:, order] * s[:, None]
    big = np.argmax(np.abs(V), axis=0)
    V *= np.sign(V[big, np.arange(V.shape[1])])
    return V


def spectral_features(X, n_components, *, n_neighbors=10, random_state=None):
    """The first ``n_components`` nontrivial Laplacian eigenmaps of ``X``'s kNN graph.

    ``W`` is the symmetric kNN graph with heat weights (:func:`semisup.graph.knn_graph`,
    the graph estimators' default graph), ``D`` its degrees; the columns are the
    generalized eigenvectors of ``W v = lambda D v`` for the ``n_components`` largest
    eigenvalues after the trivial ``lambda = 1`` (``v = 1``), i.e. the minimisers of
    ``sum_ij w_ij (v_i - v_j)^2`` under ``v^T D v = 1`` and ``D``-orthogonality to ``1``
    and each other (Belkin & Niyogi 2003). A linear function of them separates clusters
    of the graph that no linear function of ``X`` separates.

    Cost: the neighbour search and a Lanczos solve (ARPACK) on the ``O(n n_neighbors)``
    sparse graph; a tiny graph (at most 64 points) is solved densely.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Complete points (no NaN).
    n_components : int
        Number of eigenvectors, at most ``n - 2``.
    n_neighbors : int, default=10
        Neighbours per point (at most ``n - 1`` are used).
    random_state : int or None
        Seed of the neighbour search when it is approximate (``knn_method="auto"`` past
        15-20 s of exact search, :func:`semisup.graph.neighbors.auto_search_method`,
        with pynndescent installed); the eigensolver's start vector is fixed.

    Returns
    -------
    V : ndarray of shape (n, n_components)
        Unit ``D``-norm columns, each with its largest-magnitude entry positive.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 4]  # two blobs
    >>> v = spectral_features(X, 1)[:, 0]
    >>> bool(np.all(v[:30] < 0) and np.all(v[30:] > 0))    # it splits the blobs
    True
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if not isinstance(n_components, Integral) or not 1 <= n_components <= n - 2:
        raise ValueError(f"n_components must be an integer in [1, n - 2] = [1, {n - 2}] for "
                         f"{n} points, got {n_components!r}.")
    W = knn_graph(X, min(int(n_neighbors), n - 1), weights="heat", random_state=random_state)
    return _eigenmaps(W, int(n_components))
