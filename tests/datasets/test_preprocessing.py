"""Histogram equalisation (the FACEMIT normgrey preparation) against a per-pixel loop."""

import numpy as np
import pytest

from semisup.datasets import equalize_histograms


def _loop(row):
    p = row.size
    cdf = np.array([np.sum(row <= v) for v in row], dtype=float)
    cmin = cdf.min()
    return np.zeros(p) if cmin == p else (cdf - cmin) / (p - cmin)


def test_equalize_matches_textbook_mapping_with_ties_and_constant_rows():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 6, size=(30, 17)).astype(float)  # many ties
    X[3] = 4.0                                             # constant row
    E = equalize_histograms(X)
    np.testing.assert_allclose(E, np.array([_loop(r) for r in X]), atol=1e-15)
    assert E.min() == 0.0 and E.max() == 1.0 and not E[3].any()
    # monotone within each row, equal values stay equal, input untouched
    for r, e in zip(X, E):
        o = np.argsort(r, kind="stable")
        assert np.all(np.diff(e[o]) >= 0)
    assert X[3, 0] == 4.0


def test_equalize_is_invariant_to_monotone_grey_level_changes():
    X = np.random.default_rng(1).random((5, 40))
    np.testing.assert_allclose(equalize_histograms(X), equalize_histograms(3 * X**2 + 7))


@pytest.mark.parametrize("bad, msg", [(np.ones(4), "2-D"), (np.array([[np.nan, 1.0]]), "NaN")])
def test_equalize_rejects_bad_input(bad, msg):
    with pytest.raises(ValueError, match=msg):
        equalize_histograms(bad)
