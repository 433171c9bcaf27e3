"""Evaluation measures of Goldberg et al. (2010), §5 "Evaluation method" (spec §8)."""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["sign_pm", "label_error", "imputation_error", "best_and_ties"]


def sign_pm(S):
    """Sign with ``sign(0) = +1`` (spec §8)."""
    return np.where(np.asarray(S) >= 0, 1.0, -1.0)


def label_error(Y_true, scores, observed):
    """Transductive label error: fraction of *unobserved* entries whose sign is wrong.

    Parameters
    ----------
    Y_true : ndarray
        True (noisy) labels in {-1, +1}.
    scores : ndarray, same shape
        Real-valued predictions; their sign is the predicted label (0 counts as +1).
    observed : ndarray of bool, same shape
        Entries whose labels were given to the learner (excluded from the error).
    """
    hidden = ~np.asarray(observed, dtype=bool)
    if not hidden.any():
        raise ValueError("every label is observed; the transductive error is undefined.")
    return float((sign_pm(scores)[hidden] != np.asarray(Y_true)[hidden]).mean())


def imputation_error(X_true, X_hat, observed):
    """Relative feature imputation error over the missing entries.

    ``sum_{missing} (x - x_hat)^2 / sum_{missing} x^2``; zero imputation scores 1.
    """
    missing = ~np.asarray(observed, dtype=bool)
    if not missing.any():
        raise ValueError("no feature is missing; the imputation error is undefined.")
    x = np.asarray(X_true)[missing]
    den = float((x * x).sum())
    if den == 0:
        raise ValueError("the missing features are all zero; the relative error is undefined.")
    return float(((x - np.asarray(X_hat)[missing]) ** 2).sum() / den)


def best_and_ties(results: dict, alpha: float = 0.05) -> dict:
    """Mark the best method (lowest mean) and those not significantly different from it.

    Parameters
    ----------
    results : dict of name -> array of per-trial values (same trials, paired)
    alpha : float
        Level of the two-tailed paired t-test.

    Returns
    -------
    dict of name -> bool (True for the best and its ties). Identical trial vectors count
    as ties; methods missing (``None``) are skipped.
    """
    vals = {k: np.asarray(v, dtype=float) for k, v in results.items() if v is not None}
    best = min(vals, key=lambda k: vals[k].mean())
    marks = {}
    for k, v in vals.items():
        if k == best:
            marks[k] = True
            continue
        diff = v - vals[best]
        if np.allclose(diff, 0) or v.size < 2:
            marks[k] = bool(np.allclose(diff, 0))
            continue
        if np.allclose(diff, diff[0]):      # constant non-zero difference: significant
            marks[k] = False
            continue
        p = stats.ttest_rel(v, vals[best]).pvalue
        marks[k] = bool(p >= alpha)
    return marks
