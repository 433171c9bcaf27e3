"""Out-of-sample mapping of LASS (paper §4, spec §6).

A new item with affinities ``w >= 0`` to the N training items and item-category affinities
``g`` gets the assignment that minimises the LASS objective of the training set augmented
with it, the trained ``Z`` held fixed::

    min_z  lam sum_n w_n ||z - z_n||^2 - g^T z   s.t.  z in simplex
    =>  z = Pi( z_bar + g / (2 lam 1^T w) ),   z_bar = Z^T w / 1^T w

(completing the square; ``Pi`` = Euclidean projection onto the simplex). ``lam -> 0`` gives
the expert's choice ``argmax g``; ``lam -> inf`` or ``g = 0`` gives the neighbour average
``z_bar`` (the SSL out-of-sample rule). A query with no neighbours (``1^T w = 0``) falls back
to the ``lam = 0`` answer (uniform over the maxima of ``g``; 1/K when ``g = 0``).
"""

from __future__ import annotations

import numpy as np

from ..linalg.xp import array_modules, to_host
from ..linalg.simplex import project_simplex_rows
from .admm import _check_finite, closed_form_lam0


def lass_transform(Z, Wq, Gq=None, lam: float = 1.0) -> np.ndarray:
    """Assignments of new items (vectorised over the rows of ``Wq`` and ``Gq``).

    Parameters
    ----------
    Z : ndarray (N, K)
        Trained assignments (rows on the simplex).
    Wq : ndarray or sparse (M, N)
        Non-negative affinities of each query to the training items.
    Gq : ndarray or sparse (M, K), optional
        Item-category affinities of the queries (default 0: the SSL rule).
    lam : float >= 0 or ``np.inf``, or ndarray (M,)
        Laplacian weight; a vector sets it per query (the paper's per-item choice).

    Returns
    -------
    ndarray (M, K), rows on the simplex, in ``Z``'s array module (CuPy for a model on a
    device; ``Wq`` then of its sparse module). Cost O(nnz(Wq) K + M K log K).
    """
    xp, xsp = array_modules(Z)         # numpy, or CuPy for a model fitted on a device
    Z = xp.asarray(Z, dtype=xp.float64)
    N, K = Z.shape
    if Wq.ndim != 2 or Wq.shape[1] != N:
        raise ValueError(f"Wq must have shape (n_queries, {N}), got {Wq.shape}.")
    M = Wq.shape[0]
    wq = Wq if xsp.issparse(Wq) else xp.asarray(Wq, dtype=xp.float64)
    _check_finite(wq, "Wq")
    data = wq.data if xsp.issparse(wq) else wq
    if data.size and float(data.min()) < 0:
        raise ValueError("Wq has negative entries; affinities must be non-negative.")
    if Gq is None:
        Gq = xp.zeros((M, K))
    Gq = Gq.toarray() if hasattr(Gq, "toarray") else Gq
    Gq = xp.asarray(to_host(Gq) if xp is np else Gq, dtype=xp.float64)
    if Gq.shape != (M, K):
        raise ValueError(f"G_new must have shape {(M, K)}, got {Gq.shape}.")
    _check_finite(Gq, "G_new")
    lam = xp.asarray(to_host(lam) if xp is np else lam, dtype=xp.float64)
    lam = xp.broadcast_to(lam, (M,))
    if bool(xp.isnan(lam).any()) or bool((lam < 0).any()):
        raise ValueError("lam must be >= 0 (np.inf allowed).")
    s = xp.asarray(wq.sum(axis=1)).ravel()
    has = s > 0
    zbar = xp.asarray(wq @ Z) / xp.where(has, s, 1.0)[:, None]
    with np.errstate(divide="ignore"):
        gamma = xp.where(has & (lam > 0), 1.0 / (2.0 * lam * xp.where(has, s, 1.0)), 0.0)
    out = project_simplex_rows(zbar + gamma[:, None] * Gq)
    expert = ~has | (lam == 0)
    if bool(expert.any()):
        out[expert] = closed_form_lam0(Gq[expert])[0]
    return out
