"""Exact 1-D k-means: spec vectors (TV-E1), brute force over all labellings, both backends."""

import itertools

import numpy as np
import pytest

from semisup._optional import available
from semisup.linalg.kmeans1d import kmeans1d, kmeans1d_table

BACKENDS = ["numpy"] + (["numba"] if available("numba") else [])

TV_X = np.array([4.1, -2.0, 0.3, 3.9, -1.7, 0.0, 8.2, -2.2, 0.5, 4.4])
TV = {
    1: (106.665, [1.55], [0] * 10),
    2: (20.265, [-0.85, 5.15], [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]),
    3: (7.861666666667, [-0.85, 4.1333333333, 8.2], [1, 0, 0, 1, 0, 0, 2, 0, 0, 1]),
    4: (0.38, [-1.9666666667, 0.2666666667, 4.1333333333, 8.2], [2, 0, 1, 2, 0, 1, 3, 0, 1, 2]),
}


def brute_force_cost(x, q, w):
    """Minimal weighted SSE over all q^d labellings."""
    best = np.inf
    for lab in itertools.product(range(q), repeat=x.size):
        lab = np.array(lab)
        cost = 0.0
        for g in range(q):
            m = lab == g
            if m.any():
                mu = np.dot(w[m], x[m]) / w[m].sum()
                cost += np.dot(w[m], (x[m] - mu) ** 2)
        best = min(best, cost)
    return best


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("q", [1, 2, 3, 4])
def test_spec_vector_tv_e1(backend, q):
    cost, centers, labels = TV[q]
    res = kmeans1d(TV_X, q, backend=backend)
    assert res.cost == pytest.approx(cost, abs=1e-9)
    np.testing.assert_allclose(res.centers, centers, atol=1e-9)
    np.testing.assert_array_equal(res.labels, labels)


@pytest.mark.parametrize("backend", BACKENDS)
def test_matches_brute_force_with_ties_zeros_and_weights(backend):
    rng = np.random.default_rng(0)
    for trial in range(120):
        d = int(rng.integers(1, 8))
        q = int(rng.integers(1, 4))
        # coarse rounding creates ties; some entries forced to zero
        x = np.round(rng.normal(size=d), 0 if trial % 3 == 0 else 1)
        x[rng.random(d) < 0.2] = 0.0
        w = rng.uniform(0.2, 3.0, size=d) if trial % 2 else np.ones(d)
        res = kmeans1d(x, q, w, backend=backend)
        assert res.labels.max() < min(q, d)
        assert res.cost == pytest.approx(brute_force_cost(x, min(q, d), w), abs=1e-10)
        # centres are the weighted means of their groups, ascending
        assert np.all(np.diff(res.centers) >= -1e-12)
        assert np.dot(w, (x - res.centers[res.labels]) ** 2) == pytest.approx(res.cost)


def test_brute_force_d8():
    rng = np.random.default_rng(1)
    x = np.round(rng.normal(size=8), 1)
    w = rng.uniform(0.5, 2, size=8)
    assert kmeans1d(x, 3, w).cost == pytest.approx(brute_force_cost(x, 3, w), abs=1e-10)


@pytest.mark.skipif(len(BACKENDS) < 2, reason="numba not installed")
def test_backends_agree_on_large_input():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(3000)
    w = rng.uniform(0.5, 2, size=3000)
    a = kmeans1d(x, 12, w, backend="numpy")
    b = kmeans1d(x, 12, w, backend="numba")
    assert a.cost == pytest.approx(b.cost, rel=1e-12)
    Da, _ = kmeans1d_table(np.sort(x), 5, backend="numpy")
    Db, _ = kmeans1d_table(np.sort(x), 5, backend="numba")
    np.testing.assert_allclose(Da[1:, 1:], Db[1:, 1:], rtol=1e-10, atol=1e-9)


def test_divide_and_conquer_matches_quadratic_dp():
    rng = np.random.default_rng(3)
    a = np.sort(rng.standard_normal(60))
    D, _ = kmeans1d_table(a, 4)
    # plain O(Q d^2) recursion of spec §3.1
    d = a.size
    ref = np.full((5, d + 1), np.inf)
    ref[0, 0] = 0
    for q in range(1, 5):
        ref[q, :q + 1] = 0
        for j in range(q, d + 1):
            ref[q, j] = min(ref[q - 1, i - 1] + ((a[i - 1:j] - a[i - 1:j].mean()) ** 2).sum()
                            for i in range(q, j + 1))
    np.testing.assert_allclose(D[1:, 1:], ref[1:, 1:], atol=1e-9)


def test_more_clusters_than_points_and_duplicates():
    res = kmeans1d([1.0, 1.0, 2.0], 5)
    assert res.cost == 0.0
    assert res.centers.size == 3  # Q_eff = min(Q, d)
    np.testing.assert_allclose(res.centers[res.labels], [1.0, 1.0, 2.0])


@pytest.mark.parametrize("bad, msg", [
    (dict(x=[1.0, np.nan], n_clusters=1), "NaN"),
    (dict(x=[1.0, np.inf], n_clusters=1), "NaN"),
    (dict(x=[], n_clusters=1), "empty"),
    (dict(x=[[1.0]], n_clusters=1), "1-D"),
    (dict(x=[1.0, 2.0], n_clusters=0), "positive integer"),
    (dict(x=[1.0, 2.0], n_clusters=1, weights=[1.0, 0.0]), "positive"),
])
def test_bad_input(bad, msg):
    with pytest.raises(ValueError, match=msg):
        kmeans1d(**bad)


def test_core_works_without_numba(monkeypatch):
    import semisup.linalg.kmeans1d as mod
    monkeypatch.setattr(mod, "available", lambda name: False)
    res = kmeans1d(TV_X, 3)  # "auto" falls back to the numpy backend
    assert res.cost == pytest.approx(7.861666666667, abs=1e-9)
    with pytest.raises(ValueError, match="backend"):
        kmeans1d(TV_X, 3, backend="cuda")


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_table_refuses_what_its_compiled_loop_would_misindex(backend):
    """Issue #30 item 9: inputs are checked before the (unchecked) compiled table."""
    if backend == "numba":
        pytest.importorskip("numba")
    with pytest.raises(ValueError, match="finite"):
        kmeans1d_table(np.array([0.0, np.nan, 1.0]), 2, backend=backend)
    with pytest.raises(ValueError, match="weights of its shape"):
        kmeans1d_table(np.arange(3.0), 2, np.ones(2), backend=backend)
    with pytest.raises(ValueError, match="n_clusters"):
        kmeans1d_table(np.arange(3.0), -1, backend=backend)
