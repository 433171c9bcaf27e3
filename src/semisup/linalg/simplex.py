"""Euclidean projection onto the probability simplex, row by row, vectorized."""

from __future__ import annotations

import numpy as np

from .xp import array_modules


def project_simplex_rows(V) -> np.ndarray:
    """Project each row of ``V`` onto ``{z : z >= 0, sum(z) = 1}``.

    Sort-based algorithm (Held, Wolfe & Crowder 1974; Duchi et al. 2008): for each row find
    ``tau`` with ``sum(max(v - tau, 0)) = 1``; O(N K log K), vectorized over rows.
    """
    xp, _ = array_modules(V)        # numpy, or CuPy for a device array (same code)
    V = xp.asarray(V, dtype=xp.float64)
    if V.ndim == 1:
        return project_simplex_rows(V[None, :])[0]
    n, k = V.shape
    U = -xp.sort(-V, axis=1)
    css = xp.cumsum(U, axis=1) - 1.0
    ks = xp.arange(1, k + 1)
    cond = U - css / ks > 0
    rho = k - 1 - xp.argmax(cond[:, ::-1], axis=1)  # last index where cond holds
    tau = css[xp.arange(n), rho] / (rho + 1)
    return xp.maximum(V - tau[:, None], 0.0)
