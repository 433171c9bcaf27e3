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
import scipy.sparse as sp

from .._validation import check_finite
from ..linalg.simplex import project_simplex_rows
from .admm import closed_form_lam0


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
    ndarray (M, K), rows on the simplex. Cost O(nnz(Wq) K + M K log K).
    """
    Z = np.asarray(Z, dtype=np.float64)
    N, K = Z.shape
    if Wq.ndim != 2 or Wq.shape[1] != N:
        raise ValueError(f"Wq must have shape (n_queries, {N}), got {Wq.shape}.")
    M = Wq.shape[0]
    check_finite(Wq, "Wq")
    wq = Wq if sp.issparse(Wq) else np.asarray(Wq, dtype=np.float64)
    if (wq.data if sp.issparse(wq) else wq).min(initial=0.0) < 0:
        raise ValueError("Wq has negative entries; affinities must be non-negative.")
    if Gq is None:
        Gq = np.zeros((M, K))
    Gq = Gq.toarray() if sp.issparse(Gq) else np.asarray(Gq, dtype=np.float64)
    if Gq.shape != (M, K):
        raise ValueError(f"G_new must have shape {(M, K)}, got {Gq.shape}.")
    check_finite(Gq, "G_new")
    lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (M,))
    if np.isnan(lam).any() or (lam < 0).any():
        raise ValueError("lam must be >= 0 (np.inf allowed).")
    s = np.asarray(wq.sum(axis=1)).ravel()
    has = s > 0
    zbar = np.asarray(wq @ Z) / np.where(has, s, 1.0)[:, None]
    with np.errstate(divide="ignore"):
        gamma = np.where(has & (lam > 0), 1.0 / (2.0 * lam * np.where(has, s, 1.0)), 0.0)
    out = project_simplex_rows(zbar + gamma[:, None] * Gq)
    expert = ~has | (lam == 0)
    if expert.any():
        out[expert] = closed_form_lam0(Gq[expert])[0]
    return out
