"""Poisson-MBO: graph MBO with a Poisson fidelity and volume constraints.

Calder, Cook, Thorpe & Slepčev (2020), §2.3 and Algorithm 2. Starting from the labels of
Poisson learning (one-hot ``U``), each of ``n_outer`` outer steps runs ``n_inner`` explicit
steps of the heat equation with the Poisson source as a forcing term,

.. math:: U \\leftarrow U - \\Delta t\\,(L U - \\mu B), \\qquad \\Delta t = 1 / \\max_i d_i,

(their eq. 12, ``B`` the centred sources of :func:`~semisup.poisson.solve.poisson_source`),
then thresholds ``U`` to labels under the volume constraint that class ``k`` takes a
fraction ``b_k`` of the nodes: ``argmax_k s_k S_ik`` with ``S`` the scores shifted and
scaled to ``[0, 1]`` and class weights ``s`` adjusted until the class fractions are within
``volume_tol`` of ``b`` (:func:`volume_projection`). The defaults (``n_inner = 40``,
``n_outer = 20``, ``mu = 1``, ``volume_tol = 1e-3``) are GraphLearning 1.7.5's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MBOResult", "volume_projection", "poisson_mbo"]

#: step of the class-weight iteration of the volume projection (GraphLearning's)
VOLUME_STEP = 0.1
#: iteration cap of the volume projection (GraphLearning's)
VOLUME_MAX_ITER = 10_000
#: the projection also stops after this many iterations without a new best error: tied
#: scores (duplicated points) can make the fractions unreachable, where GraphLearning
#: spends its whole cap
VOLUME_PATIENCE = 1_000


class MBOResult:
    """Record of :func:`poisson_mbo`.

    Attributes
    ----------
    labels : ndarray of int of shape (n,)
        Class index of every node after the last volume projection.
    scores : ndarray of shape (n, K)
        The last heat step's scores scaled to ``[0, 1]`` and weighted by the class weights:
        ``labels = argmax(scores, axis=1)``.
    weights : ndarray of shape (K,)
        The class weights of the last projection (``weights[0] = 1``).
    volume_error : float
        ``max_k |fraction of nodes in class k - b_k|`` after the last projection.
    n_projection_iter : int
        Class-weight iterations, summed over the outer steps.
    """

    def __init__(self, labels, scores, weights, volume_error, n_projection_iter):
        self.labels = labels
        self.scores = scores
        self.weights = weights
        self.volume_error = volume_error
        self.n_projection_iter = n_projection_iter


def volume_projection(S, priors, weights=None, *, tol: float = 1e-3,
                      step: float = VOLUME_STEP, max_iter: int = VOLUME_MAX_ITER):
    """Labels ``argmax_k w_k S_ik`` whose class fractions match ``priors`` within ``tol``.

    The class weights follow the iteration ``w <- w - step (f(w) - priors)``, ``w <- w / w_0``
    (``f(w)`` the class fractions of the labels; GraphLearning's ``volume_label_projection``)
    from ``weights`` (default ones) until ``max_k |f_k(w) - priors_k| <= max(tol, 1 / n)``
    or ``max_iter`` iterations, or :data:`VOLUME_PATIENCE` iterations without a new best
    error (fractions of ``n`` points move in steps of ``1 / n``, and tied scores move
    together: the tolerance may be unreachable, and GraphLearning then spends its whole
    cap). ``S``
    should be non-negative (scores scaled to ``[0, 1]``), so that a larger weight enlarges
    its class. Cost O(n K) per iteration.

    Returns
    -------
    labels : ndarray of int of shape (n,)
    weights : ndarray of shape (K,)
    error : float
        ``max_k |f_k - priors_k|`` of the returned labels.
    n_iter : int
    """
    n, K = S.shape
    w = np.ones(K) if weights is None else np.array(weights, dtype=np.float64)
    priors = np.asarray(priors, dtype=np.float64)
    tol = max(tol, 1.0 / max(n, 1))
    it, best, best_it = 0, np.inf, 0
    while True:
        labels = np.argmax(S * w, axis=1)
        grad = np.bincount(labels, minlength=K) / n - priors
        err = float(np.abs(grad).max())
        if err < best:
            best, best_it = err, it
        if err <= tol or it >= max_iter or it - best_it >= VOLUME_PATIENCE:
            return labels, w, err, it
        it += 1
        w -= step * grad
        w /= w[0]


def poisson_mbo(W, labels0, B, priors, *, mu: float = 1.0, n_inner: int = 40,
                n_outer: int = 20, volume_tol: float = 1e-3) -> MBOResult:
    """The MBO iterations of Poisson-MBO from initial labels (Algorithm 2 after line 3).

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative affinity, zero diagonal.
    labels0 : ndarray of int of shape (n,)
        Initial class indices (Poisson learning's decision).
    B : ndarray of shape (n, K)
        Centred sources (:func:`~semisup.poisson.solve.poisson_source`).
    priors : ndarray of shape (K,)
        Class fractions ``b`` (summing to one).
    mu : float
        Weight of the Poisson forcing term.
    n_inner, n_outer : int
        Heat steps per projection, and projections.
    volume_tol : float
        Tolerance of the class fractions in each projection.

    Returns
    -------
    MBOResult

    Notes
    -----
    The time step ``1 / max d_i`` keeps the explicit heat step ``I - dt L`` stable (its
    spectrum lies in ``[-1, 1]``). Cost: ``n_outer n_inner`` products of ``W`` with an
    ``n x K`` block (O(nnz(W) K) each) and the projections' O(n K) iterations.
    """
    n, K = B.shape
    deg = np.asarray(W.sum(axis=1)).ravel()
    top = float(deg.max()) if n else 0.0
    dt = 1.0 / top if top > 0 else 0.0
    forcing = (mu * dt) * B
    keep = 1.0 - dt * deg           # diagonal of I - dt L
    W = W.tocsr()
    labels = np.asarray(labels0, dtype=np.int64)
    w = np.ones(K)
    err, total = 0.0, 0
    S = np.eye(K)[labels]
    for _ in range(n_outer):
        U = np.eye(K)[labels]
        for _ in range(n_inner):
            U = keep[:, None] * U + dt * (W @ U) + forcing
        S = U - U.min()
        top = S.max()
        S = S / top if top > 0 else np.ones_like(S)
        previous = labels
        labels, w, err, it = volume_projection(S, priors, w, tol=volume_tol)
        total += it
        if it == 0 and np.array_equal(labels, previous):
            break       # a fixed point: every further step would repeat this one
    return MBOResult(labels, S * w, w, err, total)
