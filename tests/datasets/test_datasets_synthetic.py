"""Properties of the synthetic generators: labels, determinism, Bayes error by Monte Carlo,
G(p, q) densities, symmetry, and the SPORE multiple-graph parameters."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import norm

from semisup.datasets.synthetic import (MULTIGRAPH_PARAMS, g50c_mean_norm, make_clock,
                                        make_g50c_like, make_multigraph_sets, make_two_moons,
                                        planted_partition_graph)


def test_two_moons_labels_and_determinism():
    X, y = make_two_moons(random_state=3)
    assert X.shape == (200, 2) and sorted(np.unique(y)) == [-1, 1]
    assert (y == 1).sum() == 100
    X2, y2 = make_two_moons(random_state=3)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert not np.array_equal(X, make_two_moons(random_state=4)[0])


def test_clock_geometry():
    X, y = make_clock(n_samples=500, noise=0.0, hour=3, minute=0, random_state=0)
    r = np.linalg.norm(X, axis=1)
    assert X.shape == (500, 2) and (y == 1).sum() == 300
    assert np.allclose(r[y == 1], 1.0)                 # border on the unit circle
    hands = X[y == -1]
    assert r[y == -1].max() <= 0.8 + 1e-12             # hands inside, tip gap 0.2
    on_hour = np.isclose(hands[:, 1], 0.0)             # 3 o'clock: along +x
    on_minute = np.isclose(hands[:, 0], 0.0)           # 0 minutes: along +y
    assert np.all(on_hour | on_minute)
    assert hands[on_hour, 0].max() <= 0.5 and hands[on_hour, 0].min() >= 0
    assert hands[on_minute & ~on_hour, 1].min() >= 0
    # hands share points in proportion to their lengths 0.5 : 0.8
    assert on_hour.sum() == round(200 * 0.5 / 1.3)
    X2, _ = make_clock(n_samples=500, noise=0.0, random_state=0)
    assert np.array_equal(X, X2)


def test_g50c_mean_norm_formula():
    assert g50c_mean_norm(0.05) == pytest.approx(1.6448536, rel=1e-6)
    assert norm.cdf(-g50c_mean_norm(0.2)) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        g50c_mean_norm(0.6)


def test_g50c_like_bayes_error_by_monte_carlo():
    X, y, mu = make_g50c_like(200_000, 50, random_state=0, return_mean=True)
    assert np.linalg.norm(2 * mu) == pytest.approx(2 * 1.6448536, rel=1e-6)
    err = np.mean(np.sign(X @ mu) != y)
    # binomial std at p = 0.05, n = 2e5 is 4.9e-4: 4 sigma
    assert abs(err - 0.05) < 2e-3
    # unit covariance within each class
    centred = X[y == 1] - mu
    assert np.allclose(np.cov(centred[:, :5].T), np.eye(5), atol=0.02)


def test_g50c_like_default_shape_and_balance():
    X, y = make_g50c_like(random_state=1)
    assert X.shape == (550, 50) and (y == 1).sum() == 275 and (y == -1).sum() == 275
    assert np.array_equal(X, make_g50c_like(random_state=1)[0])


def test_planted_partition_density_and_symmetry():
    sizes = [300, 200]
    W = planted_partition_graph(sizes, 0.3, 0.05, random_state=0)
    assert sp.issparse(W) and W.format == "csr" and W.shape == (500, 500)
    assert (W != W.T).nnz == 0 and W.diagonal().sum() == 0
    assert set(np.unique(W.data)) == {1.0}
    A = W.toarray()
    within = [A[:300, :300], A[300:, 300:]]
    n_pairs = sum(b.shape[0] * (b.shape[0] - 1) for b in within)
    p_hat = sum(b.sum() for b in within) / n_pairs
    q_hat = A[:300, 300:].mean()
    # std of p_hat ~ sqrt(0.3*0.7/(64750)) = 1.8e-3, of q_hat ~ sqrt(0.05*0.95/60000) = 8.9e-4
    assert abs(p_hat - 0.3) < 0.01 and abs(q_hat - 0.05) < 0.005
    assert np.array_equal(A, planted_partition_graph(sizes, 0.3, 0.05, random_state=0).toarray())


def test_planted_partition_extremes():
    W = planted_partition_graph([3, 2], 1.0, 0.0, random_state=0).toarray()
    expected = np.zeros((5, 5))
    expected[:3, :3] = 1
    expected[3:, 3:] = 1
    np.fill_diagonal(expected, 0)
    assert np.array_equal(W, expected)


@pytest.mark.parametrize("kwargs", [dict(sizes=[3, 0], p=0.5, q=0.5),
                                    dict(sizes=[3, 3], p=1.5, q=0.5),
                                    dict(sizes=[3, 3], p=0.5, q=-0.1)])
def test_planted_partition_bad_input(kwargs):
    with pytest.raises(ValueError):
        planted_partition_graph(**kwargs)


def test_multigraph_sets_follow_spore_table3():
    assert MULTIGRAPH_PARAMS == {
        "homogeneous": ((0.7, 0.3),) * 3,
        "heterogeneous": ((0.7, 0.5), (0.6, 0.4), (0.5, 0.3)),
        "noisy": ((0.7, 0.3), (0.6, 0.4), (0.5, 0.5)),
    }
    sets = make_multigraph_sets(random_state=0)
    assert list(sets) == ["homogeneous", "heterogeneous", "noisy"]
    for name, bunch in sets.items():
        y = bunch.target
        assert y.tolist() == [1] * 50 + [-1] * 50
        assert len(bunch.graphs) == 3
        for W, (p, q) in zip(bunch.graphs, MULTIGRAPH_PARAMS[name]):
            A = W.toarray()
            assert A.shape == (100, 100) and np.array_equal(A, A.T) and A.trace() == 0
            same = y[:, None] == y[None, :]
            off = ~np.eye(100, dtype=bool)
            # 2450 same-label pairs per graph (each counted twice): std <= 0.0101
            assert abs(A[same & off].mean() - p) < 0.05
            assert abs(A[~same].mean() - q) < 0.05
    # the three homogeneous graphs are independent draws
    g = sets["homogeneous"].graphs
    assert (g[0] != g[1]).nnz > 0


def test_multigraph_subset_is_consistent_and_deterministic():
    full = make_multigraph_sets(random_state=7)
    noisy = make_multigraph_sets(sets=["noisy"], random_state=7)
    assert list(noisy) == ["noisy"]
    for a, b in zip(full["noisy"].graphs, noisy["noisy"].graphs):
        assert (a != b).nnz == 0
    with pytest.raises(ValueError, match="unknown multigraph set"):
        make_multigraph_sets(sets=["homo"])
