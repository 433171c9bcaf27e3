"""Preprocessing that reproduces how a benchmark's published copy was prepared."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["equalize_histograms"]


def equalize_histograms(X):
    """Histogram equalisation of each row (image) separately, into [0, 1].

    Each grey level v of a row becomes ``(cdf(v) - cdf_min) / (p - cdf_min)``, with
    ``cdf(v)`` the number of the row's p values ``<= v`` and ``cdf_min`` that of its darkest
    level (the textbook mapping; equal values stay equal). A constant row maps to 0.

    This is how the CBCL face files used by Melacci & Belkin (``svm.*.normgrey``) were
    prepared; the shared FACEMIT copy holds the raw grey levels (its PROVENANCE.md).

    Parameters
    ----------
    X : array-like of shape (n, p)

    Returns
    -------
    ndarray of shape (n, p), float64 in [0, 1]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (one image per row), got shape {X.shape}.")
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or infinite values.")
    p = X.shape[1]
    cdf = rankdata(X, axis=1, method="max")
    cdf_min = cdf.min(axis=1, keepdims=True)
    denom = p - cdf_min
    return np.divide(cdf - cdf_min, denom, out=np.zeros_like(cdf, dtype=np.float64),
                     where=denom > 0)
