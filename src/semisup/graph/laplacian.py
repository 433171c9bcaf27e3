"""Graph Laplacians and degrees."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .._validation import check_affinity, check_memory


def power_nnz_bound(W, p: int) -> float:
    """Upper bound on the non-zeros of ``L^p`` from walk counts, in O(p nnz(W)).

    Row ``i`` of ``L^p`` is non-zero only within ``p`` steps of ``i``; the number of walks of
    length at most ``p`` (capped at ``n``) bounds that reach.
    """
    n = W.shape[0]
    P = sp.csr_matrix((np.ones(W.nnz), W.indices, W.indptr), shape=W.shape)
    reach = np.ones(n)
    total = np.ones(n)
    for _ in range(p):
        reach = np.minimum(P @ reach, n)
        total = np.minimum(total + reach, n)
    return float(total.sum())


def degrees(W) -> np.ndarray:
    """Degree vector ``d_i = sum_j w_ij``."""
    return np.asarray(W.sum(axis=1)).ravel()


@validate_params({"W": ["array-like", "sparse matrix"],
                  "kind": [StrOptions({"unnormalized", "normalized"})],
                  "power": [Interval(Integral, 1, None, closed="left")],
                  "check": ["boolean"]}, prefer_skip_nested_validation=True)
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
    p = int(power)
    W = check_affinity(W) if check else sp.csr_matrix(W, dtype=np.float64)
    n = W.shape[0]
    with np.errstate(over="ignore"):
        d = degrees(W)
    if not np.isfinite(d).all():
        raise ValueError(f"the degrees of W overflow float64 (largest weight "
                         f"{W.data.max():.3g}); rescale W, e.g. W / W.max().")
    if p > 1 and kind == "unnormalized" and d.size and d.max() > 0 and \
            p * np.log10(d.max()) > 300:
        raise ValueError(f"L^{p} overflows float64: W's degrees reach {d.max():.3g}; rescale "
                         "W (e.g. W / W.max()) or use kind='normalized'.")
    if p > 1:
        nnz = power_nnz_bound(W, p)
        check_memory(3 * 12.0 * nnz, f"the Laplacian power L^{p} (up to {nnz:.3g} non-zeros)",
                     "Use a smaller power or fewer neighbours, or apply L repeatedly as an "
                     "operator (as LapSVM does) instead of forming L^p.")
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
