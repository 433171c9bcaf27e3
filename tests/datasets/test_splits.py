import numpy as np
import pytest

from semisup.datasets.splits import (LAPSVM_SIZES, fixed_train_test_splits, labeled_per_class,
                                     lapsvm_splits)


def _y(rng, counts=(300, 200, 50)):
    return rng.permutation(np.repeat(np.arange(len(counts)), counts))


def test_table2_rows_sum_to_dataset_sizes():
    sizes = {"g50c": 550, "coil20b": 1440, "pcmac": 1946, "uspstb": 2007, "coil20": 1440,
             "uspst": 2007, "mnist3vs8": 13966, "facemit": 31022}
    for name, n in sizes.items():
        assert sum(LAPSVM_SIZES[name]) == n


def test_lapsvm_splits_partition_and_protocol(rng):
    y = _y(rng)
    splits = lapsvm_splits(y, 10, 8, random_state=0)
    assert len(splits) == 12
    tests = []
    for s in splits:
        parts = [s["labeled"], s["unlabeled"], s["validation"], s["test"]]
        allidx = np.concatenate(parts)
        assert np.array_equal(np.sort(allidx), np.arange(len(y)))  # a partition
        assert len(s["labeled"]) == 10 and len(s["validation"]) == 8
        for part in (s["labeled"], s["validation"]):
            assert set(y[part]) == {0, 1, 2}  # every class present
        # stratified folds: class proportions of the test fold match the data set
        np.testing.assert_allclose(np.bincount(y[s["test"]]) / len(s["test"]),
                                   np.bincount(y) / len(y), atol=0.01)
        tests.append(s["test"])
    for r in range(3):  # each repetition's test folds cover the data once
        assert np.array_equal(np.sort(np.concatenate(tests[4 * r:4 * r + 4])), np.arange(len(y)))
    # different repetitions use different fold assignments
    assert not np.array_equal(tests[0], tests[4])
    again = lapsvm_splits(y, 10, 8, random_state=0)
    assert all(np.array_equal(a["labeled"], b["labeled"]) for a, b in zip(splits, again))


def test_fixed_train_test_splits_are_balanced(rng):
    y = _y(rng, (500, 400))
    train, test = np.arange(700), np.arange(700, 900)
    splits = fixed_train_test_splits(y, train, test, 80, 80, random_state=1)
    assert len(splits) == 12
    for s in splits:
        assert np.array_equal(s["test"], test)
        assert np.bincount(y[s["labeled"]]).tolist() == [40, 40]
        assert np.bincount(y[s["validation"]]).tolist() == [40, 40]
        assert len(s["unlabeled"]) == 700 - 160
        assert not np.intersect1d(s["labeled"], s["validation"]).size


def test_labeled_per_class(rng):
    y = _y(rng)
    idx = labeled_per_class(y, 3, random_state=0)
    assert np.bincount(y[idx]).tolist() == [3, 3, 3]
    with pytest.raises(ValueError, match="class"):
        labeled_per_class(y, 51)
    with pytest.raises(ValueError, match="one of each"):
        lapsvm_splits(y, 2, 5)
