"""Graph Laplacians and degrees."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_affinity


def degrees(W) -> np.ndarray:
    """Degree vector ``d_i = sum_j w_ij``."""
    return np.asarray(W.sum(axis=1)).ravel()


def laplacian(W, kind: str = "unnormalized", power: int = 1, *, check: bool = True
              ) -> sp.csr_matrix:
    """Graph Laplacian of a symmetric non-negative affinity ``W``.

    ``unnormalized``: ``L = D - W`` (PSD, ``L 1 = 0``). ``normalized``:
    ``L = I - D^{-1/2} W D^{-1/2}``; isolated nodes keep ``D^{-1/2} = 0`` so ``L_ii = 1``
    (lapsvmp's convention). ``power=p`` returns ``L^p`` (Melacci & Belkin 2011 use the
    normalized Laplacian to a small integer power); the power is a sparse product and
    fills in roughly like the p-step neighbourhood.

    Returns
    -------
    L : scipy.sparse.csr_matrix, float64
    """
    if kind not in ("unnormalized", "normalized"):
        raise ValueError(f"kind must be 'unnormalized' or 'normalized', got {kind!r}.")
    p = int(power)
    if p != power or p < 1:
        raise ValueError(f"power must be a positive integer, got {power!r}.")
    W = check_affinity(W) if check else sp.csr_matrix(W, dtype=np.float64)
    d = degrees(W)
    n = W.shape[0]
    if kind == "unnormalized":
        L = sp.diags(d) - W
    else:
        with np.errstate(divide="ignore"):
            s = np.where(d > 0, 1.0 / np.sqrt(d), 0.0)
        S = sp.diags(s)
        L = sp.identity(n, format="csr") - S @ W @ S
    L = sp.csr_matrix(L)
    out = L
    for _ in range(p - 1):
        out = out @ L
    out = sp.csr_matrix(out)
    out.sort_indices()
    return out
