"""Alternating minimisation for sample clustering ("learning experts"; spec §6, paper §3.1).

Repeat until the assignments stop changing: fit each group's ridge expert
``v_q = (n lam s_q I + X_q^T X_q)^{-1} X_q^T y_q``, then move every sample to the expert with
the smallest squared error ``min_q ||y_i - x_i^T V_q||^2``. Each half-step cannot increase
``(1/(2n)) sum_i ||y_i - x_i^T V_{q(i)}||^2 + (lam/2) sum_q s_q ||V_q||^2`` except through
the ridge term of the reassignment, so the loop is a refinement, not a global method.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, validate_params

from .._validation import warn_convergence
from .frank_wolfe import ridge_per_group

__all__ = ["AMResult", "expert_errors", "alternating_minimization"]


class AMResult(NamedTuple):
    """Assignments, experts V (Q, d, K), best-of-Q training loss, iteration record."""

    labels: np.ndarray
    V: np.ndarray
    loss: float
    n_iter: int
    converged: bool


def expert_errors(X, Y, V):
    """Squared error of every expert on every sample, shape (n, Q)."""
    Y = Y[:, None] if Y.ndim == 1 else Y
    F = np.einsum("id,qdk->iqk", X, V)
    return np.sum((F - Y[:, None, :]) ** 2, axis=2)


@validate_params({"X": ["array-like"], "Y": ["array-like"],
                  "n_clusters": [Interval(Integral, 1, None, closed="left")],
                  "lam": [Interval(Real, 0, None, closed="left")],
                  "labels0": ["array-like", None], "V0": ["array-like", None],
                  "max_iter": [Interval(Integral, 1, None, closed="left")],
                  "random_state": ["random_state"]}, prefer_skip_nested_validation=True)
def alternating_minimization(X, Y, n_clusters, lam, *, labels0=None, V0=None, max_iter=100,
                             random_state=None) -> AMResult:
    """Alternate ridge fits per group and best-expert reassignment.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (n,) or (n, K)
    n_clusters : int
        Q.
    lam : float
        Ridge weight lambda >= 0 (per-group weight n lam s_q as in eq. (3)).
    labels0 : ndarray of shape (n,), optional
        Starting assignments.
    V0 : ndarray of shape (Q, d, K), optional
        Starting experts (used before ``labels0``); with neither, random assignments.
    max_iter : int
    random_state : int, RandomState or None

    Returns
    -------
    AMResult
        A group that empties keeps its previous expert.

    Notes
    -----
    O(Q (n d^2 + d^3)) per iteration.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y[:, None] if Y.ndim == 1 else Y
    n = X.shape[0]
    if V0 is not None:
        V = np.asarray(V0, dtype=np.float64)
        labels = np.argmin(expert_errors(X, Y, V), axis=1)
    else:
        if labels0 is None:
            labels = check_random_state(random_state).randint(n_clusters, size=n)
        else:
            labels = np.asarray(labels0)
        V = ridge_per_group(X, Y, labels, lam, n_clusters)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        V = ridge_per_group(X, Y, labels, lam, n_clusters, previous=V)
        new = np.argmin(expert_errors(X, Y, V), axis=1)
        if np.array_equal(new, labels):
            converged = True
            break
        labels = new
    if not converged:
        warn_convergence(f"alternating minimisation did not stabilise in max_iter={max_iter} "
                         "iterations; increase max_iter.")
    loss = 0.5 * float(np.mean(np.min(expert_errors(X, Y, V), axis=1)))
    return AMResult(labels, V, loss, it, converged)
