"""Helpers of ``semisup bench scaling`` and the benchmarks' records (the growth fit,
exponents, sections, neighbour comparison)."""

import numpy as np
import pytest

from semisup.experiments import _bench, scaling


def test_growth_exponent_recovers_a_power_law():
    n = np.array([1e3, 2e3, 4e3, 8e3])
    assert _bench.growth_exponent(n, 3e-7 * n ** 2.0) == pytest.approx(2.0, abs=1e-12)
    assert np.isnan(_bench.growth_exponent([1000], [1.0]))


def test_compare_neighbors_counts_ties_and_non_ties():
    dist_ref = np.array([[1.0, 2.0], [1.0, 3.0]])
    ind_ref = np.array([[1, 2], [0, 2]])
    # row 0: 3 instead of 2 at the same distance (a tie); row 1: 3 instead of 2, farther
    dist = np.array([[1.0, 2.0], [1.0, 3.5]])
    ind = np.array([[1, 3], [0, 3]])
    assert scaling.compare_neighbors(dist, ind, dist_ref, ind_ref) == (2, 1)


def test_growth_child_measures_one_fit():
    r = scaling.growth_child("HarmonicFunction", 300)
    assert r["n"] == 300 and r["seconds"] > 0 and r["peak_mib"] >= r["base_mib"] > 0


def test_write_section_replaces_only_its_part(tmp_path):
    path = str(tmp_path / "s.md")
    _bench.write_section(path, "a", ["first"])
    _bench.write_section(path, "b", ["other"])
    _bench.write_section(path, "a", ["second"])
    text = open(path).read()
    assert "second" in text and "first" not in text and "other" in text


def test_quick_run_writes_under_out_with_the_shared_options(tmp_path, capsys):
    from semisup import cli
    out = tmp_path / "o"
    cli.main(["bench", "scaling", "--quick", "--only", "growth", "--methods",
              "ClusteredRegressor", "--max-n-graph", "2000", "--out", str(out), "-v"])
    text = (out / "scaling.md").read_text()
    assert "<!-- scaling:growth -->" in text and "| ClusteredRegressor |" in text
    assert "[scaling] ClusteredRegressor n=2000" in capsys.readouterr().err
