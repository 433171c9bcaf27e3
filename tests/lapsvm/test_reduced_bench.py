"""``semisup bench reduced`` (issue #31) on scikit-learn's digits: the data generator, one
measurement, and a quick run writing its record under --out (five subprocesses: slow)."""

import numpy as np
import pytest

from semisup.experiments import reduced


def test_deformed_points_keep_labels_shape_and_range():
    X, y = reduced.make_points("digits", 400, deform=True, seed=3)
    assert X.shape == (400, 64) and X.dtype == np.float32 and y.shape == (400,)
    assert X.min() >= 0.0 and X.max() <= 1.0
    X2, y2 = reduced.make_points("digits", 400, deform=True, seed=3)
    np.testing.assert_array_equal(X, X2)          # seeded
    Z, _ = reduced.make_points("digits", 400, deform=True, pca=8, seed=3)
    assert Z.shape == (400, 8)
    S, t = reduced.make_points("digits", 100, seed=0)
    assert S.shape == (100, 64) and len(np.unique(S, axis=0)) == 100   # a subset, no copies


def test_hide_labels_keeps_per_class_labels():
    y = np.repeat(np.arange(3), 20)
    h = reduced.hide_labels(y, 4)
    assert all((h == c).sum() == 4 for c in range(3)) and (h == -1).sum() == 48
    assert np.all(h[h >= 0] == y[h >= 0])


def test_measure_reports_time_memory_and_error():
    r = reduced.measure(dict(source="digits", n=600, deform=False, pca=None, seed=0,
                             per_class=10, method="LapRLS", params=dict(n_basis=100),
                             knn_method="exact"))
    assert r["n"] == 600 and r["n_basis_"] == 100 and r["seconds"] > 0
    assert r["peak_mib"] >= r["base_mib"] > 0 and 0 <= r["error"] < 30


@pytest.mark.slow
def test_quick_run_writes_its_section_under_out_and_resumes(tmp_path, capsys):
    from semisup import cli
    out = tmp_path / "o"
    cli.main(["bench", "reduced", "--quick", "--source", "digits", "--only", "16k",
              "--methods", "LapRLS", "--m", "100", "--reps", "1", "--out", str(out)])
    text = (out / "lapsvm.md").read_text()
    assert "<!-- reduced:16k -->" in text and "| LapRLS | full (n_basis=None) |" in text
    assert "| LapRLS | uniform, n_basis=100, draw 0 | 100 |" in text
    assert "[reduced] LapRLS n=2000" in capsys.readouterr().err
    # a second run reads the cache and replaces the section, once
    cli.main(["bench", "reduced", "--quick", "--source", "digits", "--only", "16k",
              "--methods", "LapRLS", "--m", "100", "--reps", "1", "--out", str(out), "-q"])
    assert (out / "lapsvm.md").read_text().count("<!-- reduced:16k -->") == 1


def test_crossover_marks_the_default_expansion_at_each_size(monkeypatch):
    """The crossover table: LapRLS's default is the full expansion's direct solve up to
    AUTO_FULL_N points, the reduced rule above; the early-stopped PCG never."""
    import argparse

    from semisup.lapsvm.reduced import AUTO_FULL_N

    seen = []

    def fake(spec, args):
        seen.append(spec["params"])
        return dict(spec, n_basis_=spec["params"]["n_basis"] or spec["n"], error=1.0,
                    seconds=1.0, cpu_seconds=1.0, peak_mib=100.0)
    monkeypatch.setattr(reduced, "run_child", fake)
    args = argparse.Namespace(quick=False, methods=["LapRLS"], source="digits",
                              data_home=None)
    monkeypatch.setitem(reduced.SIZES, "crossover", (AUTO_FULL_N, AUTO_FULL_N + 1))
    text = "\n".join(reduced.part_crossover(args)[2])
    assert f"| {AUTO_FULL_N} | LapRLS | full, direct solve, the default |" in text
    assert f"| {AUTO_FULL_N + 1} | LapRLS | reduced, n_basis=4000, the default |" in text
    assert text.count(", the default") == 2
    assert {"n_basis": None, "solver": "pcg"} in seen and len(seen) == 6
