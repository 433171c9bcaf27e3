"""Synthetic data the papers and the demo use: two moons, the "clock", G50C-like Gaussians,
planted-partition graphs G(p, q) and the SPORE multiple-graph sets.

Every generator takes ``random_state`` (None, int or ``numpy.random.RandomState``, as in
scikit-learn) and is deterministic given it. Binary labels are int +1 / -1.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.stats import norm
from sklearn.datasets import make_moons
from sklearn.utils import Bunch, check_random_state

__all__ = [
    "MULTIGRAPH_PARAMS",
    "g50c_mean_norm",
    "make_clock",
    "make_g50c_like",
    "make_multigraph_sets",
    "make_two_moons",
    "planted_partition_graph",
]


def _check_count(value, name, minimum=1) -> int:
    if not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_prob(value, name) -> float:
    if not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def make_two_moons(n_samples: int = 200, noise: float = 0.1, random_state=None):
    """Two interleaving half circles (scikit-learn's ``make_moons``) with labels +1 / -1.

    Parameters
    ----------
    n_samples : int, default 200
        Total number of points (split evenly between the moons).
    noise : float, default 0.1
        Standard deviation of the Gaussian noise added to each coordinate.
    random_state : None, int or RandomState

    Returns
    -------
    X : ndarray (n_samples, 2)
    y : ndarray (n_samples,) int, +1 for scikit-learn's class 1 (lower moon), -1 for class 0.
    """
    _check_count(n_samples, "n_samples", 2)
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    X, y = make_moons(n_samples=n_samples, noise=noise, random_state=random_state)
    return X, np.where(y == 1, 1, -1).astype(np.int64)


def make_clock(n_samples: int = 400, *, noise: float = 0.03, hour: float = 3.0,
               minute: float = 0.0, border_fraction: float = 0.6, random_state=None):
    """The two-class "clock" of Melacci & Belkin (2011), Fig. 1.

    One class is the circular border of a clock face (radius 1), the other its hour hand
    (length 0.5) and minute hand (length 0.8), both starting at the centre. The paper gives no
    numbers; the sizes here leave a gap of 0.2 between the minute hand's tip and the border,
    so the classes are separable but a classifier trained on two labels needs the geometry of
    the unlabeled points to find the border.

    Parameters
    ----------
    n_samples : int, default 400
        Total number of points.
    noise : float, default 0.03
        Standard deviation of the isotropic Gaussian noise added to every point.
    hour, minute : float, default 3 and 0
        Time shown: the hour hand points to ``hour`` on a 12-hour dial, the minute hand to
        ``minute`` on a 60-minute dial (3:00 = hour hand right, minute hand up).
    border_fraction : float, default 0.6
        Fraction of the points on the border; the rest are split between the hands in
        proportion to their lengths.
    random_state : None, int or RandomState

    Returns
    -------
    X : ndarray (n_samples, 2)
    y : ndarray (n_samples,) int, +1 for the border, -1 for the hands.
    """
    n_samples = _check_count(n_samples, "n_samples", 3)
    if not 0.0 < border_fraction < 1.0:
        raise ValueError(f"border_fraction must lie in (0, 1), got {border_fraction}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    rng = check_random_state(random_state)
    n_border = int(round(border_fraction * n_samples))
    n_border = min(max(n_border, 1), n_samples - 2)
    lengths = np.array([0.5, 0.8])  # hour, minute
    n_hour = max(1, int(round((n_samples - n_border) * lengths[0] / lengths.sum())))
    n_minute = n_samples - n_border - n_hour

    theta = rng.uniform(0.0, 2 * np.pi, n_border)
    border = np.column_stack([np.cos(theta), np.sin(theta)])
    hands = []
    # a dial angle a (clockwise from 12 o'clock) points to (sin a, cos a)
    for count, length, angle in ((n_hour, lengths[0], 2 * np.pi * hour / 12.0),
                                 (n_minute, lengths[1], 2 * np.pi * minute / 60.0)):
        t = rng.uniform(0.0, length, count)
        hands.append(np.column_stack([t * np.sin(angle), t * np.cos(angle)]))
    X = np.vstack([border] + hands)
    X += noise * rng.standard_normal(X.shape)
    y = np.r_[np.ones(n_border, dtype=np.int64), -np.ones(n_hour + n_minute, dtype=np.int64)]
    return X, y


def g50c_mean_norm(bayes_error: float = 0.05) -> float:
    """Norm of mu such that N(+mu, I) vs N(-mu, I), equal priors, has the given Bayes error.

    The Bayes rule is sign(mu^T x); its error is Phi(-||mu||), so ||mu|| = Phi^{-1}(1 - err)
    (= 1.6449 for 5 %; the means are 2||mu|| = 3.29 apart).
    """
    if not 0.0 < bayes_error < 0.5:
        raise ValueError(f"bayes_error must lie in (0, 0.5), got {bayes_error}")
    return float(norm.ppf(1.0 - bayes_error))


def make_g50c_like(n_samples: int = 550, n_features: int = 50, *, bayes_error: float = 0.05,
                   random_state=None, return_mean: bool = False):
    """Two unit-covariance Gaussians with a prescribed Bayes error, like G50C.

    G50C (Chapelle & Zien 2005; used by Sindhwani et al. 2005 and Melacci & Belkin 2011) draws
    its two classes with equal probability from N(+mu, I) and N(-mu, I) in 50 dimensions, the
    means placed so that the Bayes error is 5 %. Here mu = (m / sqrt(d)) * (1, ..., 1) with
    m = :func:`g50c_mean_norm` (``bayes_error``), and the classes are exactly balanced
    (G50C has 275 / 275).

    Parameters
    ----------
    n_samples : int, default 550
    n_features : int, default 50
    bayes_error : float, default 0.05
    random_state : None, int or RandomState
    return_mean : bool, default False
        Also return mu (the Bayes rule is sign(mu^T x)).

    Returns
    -------
    X : ndarray (n_samples, n_features)
    y : ndarray (n_samples,) int; +1 for the first ceil(n/2) rows (mean +mu), -1 after.
    mu : ndarray (n_features,), only when ``return_mean``.
    """
    n_samples = _check_count(n_samples, "n_samples", 2)
    n_features = _check_count(n_features, "n_features")
    rng = check_random_state(random_state)
    mu = np.full(n_features, g50c_mean_norm(bayes_error) / np.sqrt(n_features))
    n_pos = (n_samples + 1) // 2
    y = np.r_[np.ones(n_pos, dtype=np.int64), -np.ones(n_samples - n_pos, dtype=np.int64)]
    X = rng.standard_normal((n_samples, n_features)) + y[:, None] * mu
    return (X, y, mu) if return_mean else (X, y)


def planted_partition_graph(sizes, p: float, q: float, random_state=None) -> sp.csr_matrix:
    """Random graph G(p, q) with planted blocks (stochastic block model).

    An edge joins two distinct vertices of the same block with probability ``p`` and of
    different blocks with probability ``q``, independently. Vertices are numbered block by
    block in the order of ``sizes``. Cost: O(n^2) random draws, done block pair by block pair
    (peak memory O(max block size^2)).

    Parameters
    ----------
    sizes : sequence of int
        Block sizes.
    p, q : float in [0, 1]
        Within- and across-block edge probabilities.
    random_state : None, int or RandomState

    Returns
    -------
    scipy.sparse.csr_matrix (n, n), float64
        Symmetric 0/1 adjacency with zero diagonal.
    """
    sizes = [_check_count(s, "every block size") for s in np.atleast_1d(sizes).tolist()]
    p, q = _check_prob(p, "p"), _check_prob(q, "q")
    rng = check_random_state(random_state)
    starts = np.r_[0, np.cumsum(sizes)]
    rows, cols = [], []
    for a, na in enumerate(sizes):
        for b in range(a, len(sizes)):
            nb = sizes[b]
            hit = rng.random_sample((na, nb)) < (p if a == b else q)
            if a == b:
                hit = np.triu(hit, k=1)
            i, j = np.nonzero(hit)
            rows.append(i + starts[a])
            cols.append(j + starts[b])
    i, j = np.concatenate(rows), np.concatenate(cols)
    n = int(starts[-1])
    upper = sp.coo_matrix((np.ones(len(i)), (i, j)), shape=(n, n))
    return (upper + upper.T).tocsr()


#: SPORE paper (Shivanna et al. 2015), Table 3: three graphs G(p, q) per synthetic set.
MULTIGRAPH_PARAMS = {
    "homogeneous": ((0.7, 0.3), (0.7, 0.3), (0.7, 0.3)),
    "heterogeneous": ((0.7, 0.5), (0.6, 0.4), (0.5, 0.3)),
    "noisy": ((0.7, 0.3), (0.6, 0.4), (0.5, 0.5)),
}


def make_multigraph_sets(n_samples: int = 100, sets=None, random_state=None) -> dict:
    """The synthetic multiple-graph sets of the SPORE paper (Shivanna et al. 2015, Sec. 6).

    n = 100 vertices; y_i = +1 for the first n/2 vertices and -1 for the rest; each set has
    three graphs G(p, q) (edge probability p between same-label vertices, q otherwise) with the
    parameters of the paper's Table 3 (:data:`MULTIGRAPH_PARAMS`): homogeneous = 3 x G(0.7,
    0.3); heterogeneous = G(0.7, 0.5), G(0.6, 0.4), G(0.5, 0.3); noisy = G(0.7, 0.3),
    G(0.6, 0.4), G(0.5, 0.5).

    Parameters
    ----------
    n_samples : int, default 100
    sets : iterable of str, optional
        Which of ``"homogeneous"``, ``"heterogeneous"``, ``"noisy"`` to build (default all).
        Each set draws from its own stream derived from ``random_state``, so a set's graphs
        do not depend on which other sets are requested.
    random_state : None, int or RandomState

    Returns
    -------
    dict
        set name -> Bunch(graphs=[3 CSR adjacencies], target=y (int +-1), params=((p, q), ...)).
    """
    n_samples = _check_count(n_samples, "n_samples", 2)
    order = list(MULTIGRAPH_PARAMS)
    sets = order if sets is None else list(sets)
    unknown = [s for s in sets if s not in MULTIGRAPH_PARAMS]
    if unknown:
        raise ValueError(f"unknown multigraph set(s) {unknown}; valid: {order}")
    rng = check_random_state(random_state)
    seeds = rng.randint(np.iinfo(np.int32).max, size=(len(order), 3))
    n_pos = n_samples // 2
    y = np.r_[np.ones(n_pos, dtype=np.int64), -np.ones(n_samples - n_pos, dtype=np.int64)]
    out = {}
    for name in sets:
        params = MULTIGRAPH_PARAMS[name]
        row = seeds[order.index(name)]
        graphs = [planted_partition_graph([n_pos, n_samples - n_pos], p, q,
                                          random_state=int(seed))
                  for (p, q), seed in zip(params, row)]
        out[name] = Bunch(graphs=graphs, target=y.copy(), params=params)
    return out
