"""Projections: TV-E2 and brute force for the sparse+clustered DP; k-means projections."""

import itertools

import numpy as np
import pytest

from semisup.clustering.projections import (_count_distinct_rows, group_sums,
                                            project_clustered, project_kmeans,
                                            project_sparse_clustered)

TV_X = np.array([3.0, -1.0, 0.2, 2.6, -2.9, 0.9, -0.4, 2.2])


@pytest.mark.parametrize("k, q, dist, w", [
    (8, 2, 2.33, [2.6, 0, 0, 2.6, -2.9, 0, 0, 2.6]),
    (5, 2, 2.33, [2.6, 0, 0, 2.6, -2.9, 0, 0, 2.6]),
    (3, 1, 10.74, [2.6, 0, 0, 2.6, 0, 0, 0, 2.6]),
    (4, 3, 2.09, None),  # exact tie between two minimisers: test the distance only
    (0, 2, 31.02, [0] * 8),
    (6, 1, 10.74, [2.6, 0, 0, 2.6, 0, 0, 0, 2.6]),
])
def test_spec_vector_tv_e2(k, q, dist, w):
    p = project_sparse_clustered(TV_X, k, q)
    assert np.sum((TV_X - p.point) ** 2) == pytest.approx(dist, abs=1e-12)
    if w is not None:
        np.testing.assert_allclose(p.point, w, atol=1e-12)


def brute_force_sparse(x, k, q):
    """min ||x - w||^2 over all labellings in {zero, 1..q} with at most k non-zeros."""
    best = np.inf
    for lab in itertools.product(range(q + 1), repeat=x.size):
        lab = np.array(lab)
        if (lab > 0).sum() > k:
            continue
        cost = float((x[lab == 0] ** 2).sum())
        for g in range(1, q + 1):
            m = lab == g
            if m.any():
                cost += float(((x[m] - x[m].mean()) ** 2).sum())
        best = min(best, cost)
    return best


def test_sparse_dp_matches_brute_force_with_ties_and_zeros():
    rng = np.random.default_rng(0)
    for trial in range(150):
        d = int(rng.integers(1, 7))
        q = int(rng.integers(1, 4))
        k = int(rng.integers(0, d + 1))
        x = np.round(rng.normal(size=d), 0 if trial % 3 == 0 else 1)
        x[rng.random(d) < 0.2] = 0.0
        p = project_sparse_clustered(x, k, q)
        nz = p.point[p.point != 0]
        assert nz.size <= k and np.unique(nz).size <= q  # feasible
        assert np.sum((x - p.point) ** 2) == pytest.approx(brute_force_sparse(x, k, q), abs=1e-10)
        np.testing.assert_array_equal(p.labels == -1, p.point == 0)


def test_sparse_dp_d8_against_brute_force():
    x = np.array([1.5, -0.3, 0.0, 2.2, -2.2, 1.5, 0.7, -0.9])
    for k, q in [(8, 3), (5, 2), (2, 2), (7, 1)]:
        p = project_sparse_clustered(x, k, q)
        assert np.sum((x - p.point) ** 2) == pytest.approx(brute_force_sparse(x, k, q), abs=1e-10)


def test_sparse_with_full_support_differs_from_kmeans():
    # the zero group is an extra free cluster (spec §3.2 note): never worse than k-means
    p = project_sparse_clustered(TV_X, 8, 2)
    c = project_clustered(TV_X, 2)
    assert np.sum((TV_X - p.point) ** 2) <= np.sum((TV_X - c.point) ** 2)


def test_project_clustered_is_kmeans1d():
    p = project_clustered(TV_X, 3)
    assert np.unique(p.point).size == 3
    np.testing.assert_allclose(p.centers[p.labels], p.point)


def test_project_kmeans_exact_when_few_distinct_rows():
    W = np.array([[1.0, 2.0], [1.0, 2.0], [3.0, 0.0]])
    p = project_kmeans(W, 3)
    np.testing.assert_array_equal(p.point, W)


@pytest.mark.parametrize("n, Q", [(50, 3), (3000, 400)])  # dense and sparse one-hot paths
def test_group_sums_equals_add_at(n, Q):
    rng = np.random.default_rng(n)
    W, labels = rng.standard_normal((n, 4)), rng.integers(0, Q, size=n)
    ref = np.zeros((Q, 4))
    np.add.at(ref, labels, W)
    np.testing.assert_allclose(group_sums(W, labels, Q), ref, atol=1e-12)


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 8])
def test_count_distinct_rows_against_unique(limit):
    rng = np.random.default_rng(limit)
    for _ in range(20):
        W = rng.integers(0, 3, size=(rng.integers(1, 12), 2)).astype(float)
        W[W == 0] = -0.0 if rng.random() < 0.5 else 0.0  # -0.0 and 0.0 are one value
        n_distinct = np.unique(W, axis=0).shape[0]
        assert _count_distinct_rows(W, limit) == min(n_distinct, limit + 1)
    assert _count_distinct_rows(np.empty((0, 2)), limit) == 0
    # distinct rows whose projections on the probe [1, 2] coincide: the exact pass decides
    W = np.array([[2.0, 0.0], [0.0, 1.0], [4.0, 0.0], [0.0, 2.0]])
    assert _count_distinct_rows(W, limit) == min(4, limit + 1)


def test_kmeans_seeding_is_scikit_learns():
    # the private k-means++ entry point must draw exactly what the public one draws
    from sklearn.cluster import kmeans_plusplus

    from semisup.clustering.projections import _seed
    W = np.random.default_rng(0).standard_normal((200, 7))
    ours = _seed(W, 4, np.random.RandomState(3), np.einsum("ij,ij->i", W, W))
    np.testing.assert_array_equal(ours, kmeans_plusplus(W, 4, random_state=3)[0])


def test_project_kmeans_recovers_separated_clusters():
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    truth = rng.integers(0, 3, size=90)
    W = centers[truth] + 0.1 * rng.standard_normal((90, 2))
    p = project_kmeans(W, 3, random_state=0)
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(truth, p.labels) == 1.0
    assert np.unique(p.point, axis=0).shape[0] == 3


@pytest.mark.parametrize("call, msg", [
    (lambda: project_sparse_clustered([1.0, np.nan], 1, 1), "NaN"),
    (lambda: project_sparse_clustered([1.0, 2.0], -1, 1), "non-negative"),
    (lambda: project_sparse_clustered([1.0, 2.0], 1, 0), "positive"),
    (lambda: project_kmeans(np.array([[np.inf, 1.0]]), 1), "NaN"),
])
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()
