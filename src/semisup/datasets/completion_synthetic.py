"""Synthetic multi-label data with missing entries (Goldberg et al. 2010, §5.1).

The generative story of the paper (spec ``matrix_completion.md`` §2 and §10.1): a rank-``r``
pre-feature matrix with unit-variance entries, Gaussian feature noise, soft labels linear
in the pre-features, logistic hard labels, and uniform random masks revealing exactly a
fraction ``omega`` of the features and of the labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
from scipy.special import expit

__all__ = ["CompletionProblem", "make_completion_problem", "synthetic_grid"]


@dataclass
class CompletionProblem:
    """One generated problem, in the paper's orientation (items are columns).

    Attributes
    ----------
    X : ndarray (d, n)     noisy features (all of them; ``MX`` says which are observed)
    Y : ndarray (t, n)     hard labels in {-1, +1} (all of them)
    MX : ndarray (d, n)    bool, observed features
    MY : ndarray (t, n)    bool, observed labels
    X0 : ndarray (d, n)    noiseless low-rank pre-features
    Y0 : ndarray (t, n)    soft labels ``W X0 + b``
    """

    X: np.ndarray
    Y: np.ndarray
    MX: np.ndarray
    MY: np.ndarray
    X0: np.ndarray
    Y0: np.ndarray

    def as_estimator_input(self):
        """``(X, Y)`` for :class:`~semisup.completion.MatrixCompletionTransducer`: items as
        rows, NaN for missing features, and labels in the library's convention (a {0, 1}
        indicator matrix with -1 for unobserved entries)."""
        Xi = np.where(self.MX, self.X, np.nan).T
        Yi = np.where(self.MY, (self.Y > 0).astype(np.int8), -1).T.astype(np.int8)
        return Xi, Yi


def _exact_mask(rng, shape, omega):
    size = shape[0] * shape[1]
    m = int(round(omega * size))
    mask = np.zeros(size, dtype=bool)
    mask[rng.permutation(size)[:m]] = True
    return mask.reshape(shape)


def make_completion_problem(seed=0, *, t: int = 10, d: int = 20, n: int = 100, r: int = 2,
                            sigma2: float = 0.01, omega: float = 0.2) -> CompletionProblem:
    """Draw one problem with the exact draw order of spec §10.1.

    Parameters
    ----------
    seed : int or Generator
        ``np.random.default_rng(seed)``.
    t, d, n, r : int
        Tasks, features, items, rank of ``X0``.
    sigma2 : float
        Feature noise variance ``sigma_eps^2``.
    omega : float
        Fraction of observed entries, the same for features and labels.
    """
    if not 0 < omega <= 1:
        raise ValueError(f"omega must lie in (0, 1], got {omega}.")
    if min(t, d, n, r) < 1:
        raise ValueError("t, d, n and r must be positive.")
    rng = np.random.default_rng(seed)
    L = rng.standard_normal((d, r))
    R = rng.standard_normal((n, r))
    X0 = L @ R.T
    X0 = X0 / X0.std()
    W = rng.normal(0.0, np.sqrt(10.0), (t, d))
    b = rng.normal(0.0, np.sqrt(10.0), t)
    X = X0 + rng.normal(0.0, np.sqrt(sigma2), (d, n))
    Y0 = W @ X0 + b[:, None]
    Y = np.where(rng.random((t, n)) < expit(Y0), 1.0, -1.0)
    MX = _exact_mask(rng, (d, n), omega)
    MY = _exact_mask(rng, (t, n), omega)
    return CompletionProblem(X=X, Y=Y, MX=MX, MY=MY, X0=X0, Y0=Y0)


def synthetic_grid():
    """The paper's 24 settings: ``omega x n x r x sigma2`` with ``t = 10, d = 20``.

    Yields dicts of keyword arguments for :func:`make_completion_problem`, in the order
    of the paper's tables (noise outermost, then rank, items, observed fraction).
    """
    for sigma2, r, n, omega in product((0.01, 0.1), (2, 4), (100, 400), (0.1, 0.2, 0.4)):
        yield dict(t=10, d=20, n=n, r=r, sigma2=sigma2, omega=omega)
