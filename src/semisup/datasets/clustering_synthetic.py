"""Synthetic problems of Roulet et al. (2016), §6.1 (spec §7.1–7.2).

* :func:`make_clustered_features` — Tables 2–3: ``y = w*^T x + eta`` with w* taking 5 values.
* :func:`make_clustered_samples` — Table 1: three regression experts, plus pure-noise
  coordinates.

Where the paper is silent the spec's defaults apply (spec §7, §13): ``x ~ N(0, I)``,
values ``v_q ~ U[-15, 15]`` with features assigned uniformly at random (Tables 2–3);
experts ``v_q ~ N(0, I_10)``, samples assigned uniformly at random (Table 1; the paper's
label noise is ``sigma_y = 0.1`` with its table printed x100 — pass ``noise=0.1`` — see
``semisup.experiments.clustering``).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch, check_random_state

__all__ = ["make_clustered_features", "make_clustered_samples", "noise_dimensions"]


def make_clustered_features(n_samples=150, n_features=100, n_values=5, noise=0.5, *,
                            value_range=15.0, random_state=None) -> Bunch:
    """Regression with a clustered weight vector (paper §6.1.2).

    Parameters
    ----------
    n_samples, n_features : int
        n and d (paper: d = 100, n in 50..150).
    n_values : int
        Number Q of distinct weights (paper: 5).
    noise : float
        Standard deviation sigma of the label noise.
    value_range : float
        Weights are drawn from U[-value_range, value_range].
    random_state : int, RandomState or None

    Returns
    -------
    Bunch
        ``data`` (n, d), ``target`` (n,), ``coef`` (w*, (d,)), ``labels`` (feature groups),
        ``cluster_values`` (the Q weights).
    """
    if n_values > n_features:
        raise ValueError(f"n_values={n_values} exceeds n_features={n_features}.")
    rng = check_random_state(random_state)
    values = rng.uniform(-value_range, value_range, size=n_values)
    # every value used at least once, the rest uniformly at random
    labels = np.concatenate([np.arange(n_values),
                             rng.randint(n_values, size=n_features - n_values)])
    rng.shuffle(labels)
    w = values[labels]
    X = rng.standard_normal((n_samples, n_features))
    y = X @ w + noise * rng.standard_normal(n_samples)
    return Bunch(data=X, target=y, coef=w, labels=labels, cluster_values=values)


def noise_dimensions(p, n_informative=10):
    """Number of noise coordinates d_n = round(p d / (1 - p)) for a noise proportion p."""
    if not 0 <= p < 1:
        raise ValueError(f"the noise proportion p must lie in [0, 1), got {p}.")
    return int(round(p * n_informative / (1 - p)))


def make_clustered_samples(n_samples=1100, n_clusters=3, n_informative=10, noise_fraction=0.0,
                           *, noise=1.0, noise_scale=1.0, random_state=None) -> Bunch:
    """Regression by Q hidden experts with appended pure-noise coordinates (paper §6.1.1).

    ``y_i = v_{q(i)}^T x_i + eta_i`` with ``x_i ~ N(0, I_d)``, ``v_q ~ N(0, I_d)``,
    ``eta_i ~ N(0, noise^2)``; then ``d_n = round(p d / (1 - p))`` coordinates
    ``~ N(0, noise_scale^2)`` are appended to every x_i.

    Parameters
    ----------
    n_samples : int
        Training plus test points (paper: 1000 + 100); split them as needed.
    n_clusters : int
        Q (paper: 3).
    n_informative : int
        d (paper: 10).
    noise_fraction : float
        p = d_n / (d + d_n) in [0, 1).
    noise, noise_scale : float
        sigma_y and sigma_d.
    random_state : int, RandomState or None

    Returns
    -------
    Bunch
        ``data`` (n, d + d_n), ``target``, ``labels`` (expert of each sample), ``coef``
        (Q, d + d_n) with zeros on the noise coordinates.
    """
    rng = check_random_state(random_state)
    d_n = noise_dimensions(noise_fraction, n_informative)
    V = rng.standard_normal((n_clusters, n_informative))
    labels = rng.randint(n_clusters, size=n_samples)
    X = rng.standard_normal((n_samples, n_informative))
    y = np.einsum("ij,ij->i", X, V[labels]) + noise * rng.standard_normal(n_samples)
    X = np.hstack([X, noise_scale * rng.standard_normal((n_samples, d_n))])
    coef = np.hstack([V, np.zeros((n_clusters, d_n))])
    return Bunch(data=X, target=y, labels=labels, coef=coef)
