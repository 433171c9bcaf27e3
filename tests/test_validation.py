"""Shared input checks."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from semisup._validation import (ConvergenceWarning, check_affinity, check_finite,
                                 check_memory, check_semisup_labels, warn_convergence)


def test_check_finite_dense_and_sparse():
    check_finite(np.ones(3))
    check_finite(np.array([1, 2]))  # integers are always finite
    with pytest.raises(ValueError, match="1 NaN or infinite"):
        check_finite(np.array([1.0, np.inf]), "Z")
    with pytest.raises(ValueError, match="Z contains 2"):
        check_finite(sp.csr_matrix(np.array([[np.nan, 0], [0, np.nan]])), "Z")


def test_check_semisup_labels_int_and_str():
    y, classes, labeled = check_semisup_labels([3, -1, 5, 3, -1], 5)
    np.testing.assert_array_equal(classes, [3, 5])
    np.testing.assert_array_equal(labeled, [1, 0, 1, 1, 0])
    y, classes, labeled = check_semisup_labels(np.array(["b", "-1", "a"], dtype=object))
    np.testing.assert_array_equal(classes, ["a", "b"])
    np.testing.assert_array_equal(labeled, [1, 0, 1])
    _, classes, _ = check_semisup_labels([0.0, 1.0, -1.0])
    np.testing.assert_array_equal(classes, [0.0, 1.0])


@pytest.mark.parametrize("y,n,match", [
    ([[0, 1]], None, "1-D"),
    ([0, 1, -1], 4, "3 entries"),
    ([0.0, np.nan, 1.0], None, "NaN"),
    ([-1, -1], None, "no labeled point"),
    ([2, 2, -1], None, "only 1 class"),
])
def test_check_semisup_labels_errors(y, n, match):
    with pytest.raises(ValueError, match=match):
        check_semisup_labels(y, n)


def test_check_semisup_labels_min_classes():
    _, classes, _ = check_semisup_labels([2, 2, -1], min_classes=1)
    assert classes.tolist() == [2]


def test_check_affinity_accepts_and_does_not_mutate():
    A = np.array([[0, 1.0, 0], [1.0, 0, 2.0], [0, 2.0, 0]])
    W = check_affinity(A)
    assert sp.isspmatrix_csr(W) and W.dtype == np.float64
    np.testing.assert_array_equal(W.toarray(), A)
    S = sp.csr_matrix(A + np.eye(3))
    before = S.toarray().copy()
    with pytest.warns(UserWarning, match="self-loops"):
        W2 = check_affinity(S)
    assert not W2.diagonal().any()
    np.testing.assert_array_equal(S.toarray(), before)
    assert check_affinity(np.array([[0, 1], [1, 0]], dtype=int)).dtype == np.float64


@pytest.mark.parametrize("W,match", [
    (np.array([[0, 1.0], [2.0, 0]]), "not symmetric"),
    (np.array([[0, -1.0], [-1.0, 0]]), "negative"),
    (np.array([[0, np.nan], [np.nan, 0]]), "NaN"),
    (np.ones((2, 3)), "square"),
    (np.ones(3), "2-D"),
    (np.array([["a", "b"], ["b", "a"]]), "numeric"),
])
def test_check_affinity_errors(W, match):
    with pytest.raises(ValueError, match=match):
        check_affinity(W)


def test_check_memory(monkeypatch):
    check_memory(10, "a tiny array")
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", "1024")
    check_memory(1024, "an array that just fits")
    with pytest.raises(MemoryError, match=r"a big thing needs about 2\.0 KiB but only 1\.0 KiB"
                                          r".*use less"):
        check_memory(2048, "a big thing", "use less")


def test_warn_convergence_is_sklearn_convergence_warning():
    from sklearn.exceptions import ConvergenceWarning as SkCW
    assert ConvergenceWarning is SkCW
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        warn_convergence("increase max_iter")
    assert rec and issubclass(rec[0].category, SkCW) and "max_iter" in str(rec[0].message)


def test_a_zero_for_unlabelled_coding_warns():
    # {-1, +1} classes with 0 = unlabelled (another library's convention): 0 is the majority
    y = np.r_[np.zeros(40, dtype=int), -1, -1, 1, 1]
    with pytest.warns(UserWarning, match=r"\{-1, 0, 1\} with 0 the most frequent"):
        check_semisup_labels(y)
    # the library's own coding (-1 unlabelled, classes 0 / 1) and a fully labelled {0, 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_semisup_labels(np.r_[np.full(40, -1), 0, 0, 1, 1])
        check_semisup_labels(np.r_[np.zeros(40, dtype=int), 1, 1])
