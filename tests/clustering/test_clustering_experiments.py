"""The experiment module's pieces on small inputs (the full protocols are benchmarks)."""

import numpy as np
import pytest

from semisup.datasets.clustering_synthetic import (make_clustered_features,
                                                   make_clustered_samples, noise_dimensions)
from semisup.experiments import clustering as exp


def test_generators_follow_the_spec():
    b = make_clustered_features(50, 100, 5, 0.5, random_state=0)
    assert b.data.shape == (50, 100) and np.unique(b.coef).size == 5
    assert [noise_dimensions(p) for p in exp.P_GRID] == [0, 3, 10, 30, 90, 190]
    s = make_clustered_samples(40, 3, 10, 0.75, random_state=0)
    assert s.data.shape == (40, 40) and np.all(s.coef[:, 10:] == 0)
    np.testing.assert_allclose(np.einsum("ij,ij->i", s.data, s.coef[s.labels]), s.target,
                               atol=5)  # noise sd 1


@pytest.mark.slow
def test_feature_table_runs_and_pg_beats_ls():
    errs = exp.feature_clustering_table([(150, 0.1)], 1, quick=True)
    assert set(errs) == {"Oracle", "LS", "LSK", "PG", "CG", "CGPG", "OSCAR"}
    assert errs["PG"][0][0] < errs["LS"][0][0]
    # with the best-atom rounding CG no longer falls behind LS (last-oracle rounding did)
    assert errs["CG"][0][0] < errs["LS"][0][0]
    assert errs["CGPG"][0][0] < errs["LS"][0][0]


@pytest.mark.slow
def test_table1_scale_matches_the_paper_at_p0():
    # sigma_y = 0.1 and x100: the Oracle's best-of-Q error is near the paper's 0.52
    t1 = exp.sample_clustering_table([0.0], 1, quick=True)
    assert 0.2 < 100 * t1["Oracle"][0][0] < 0.8
    assert 100 * t1["AM"][0][0] < 2.0


def test_movie_features_on_toy_corpus():
    texts = ["a good good movie", "a bad movie", "good plot bad acting", "great acting"] * 3
    X, words = exp.movie_review_features(texts, n_words=4, min_df=1)
    assert X.shape == (12, 4) and len(words) == 4
    np.testing.assert_array_less(np.asarray(X.sum(axis=1)).ravel(), 1.0 + 1e-12)


def test_demo_rows_keys():
    rows = exp.demo_rows()
    assert rows and all(set(r) == {"method", "data", "metric", "score", "seconds"} for r in rows)


@pytest.mark.slow
def test_pg_fit_on_movie_reviews_under_10s():
    import time
    from semisup.clustering import ClusteredRegressor
    from semisup.datasets import load_dataset
    from shared_data import require_dataset_dir
    require_dataset_dir("pang_lee_scale_v1")
    b = load_dataset("pang_lee")
    X, _ = exp.movie_review_features(b.texts)
    y = np.asarray(b.target, dtype=float)
    t = time.perf_counter()
    m = ClusteredRegressor(15, alpha=1e-3 * exp._spectral_scale(X)).fit(X, y)
    assert time.perf_counter() - t < 10
    assert np.unique(m.coef_).size <= 15


def test_reproduce_resumes_from_the_repetition_cache(tmp_path, monkeypatch):
    # tiny grid: Tables 2 and 3 reduce to the one cell they share, (n = 150, sigma = 0.5)
    import argparse
    monkeypatch.setattr(exp, "N_GRID", [150])
    monkeypatch.setattr(exp, "SIGMA_GRID", [0.5])
    report = tmp_path / "clustering.md"          # --quick: the report goes under --out
    parser = argparse.ArgumentParser()
    exp.add_reproduce_parser(parser.add_subparsers())

    def run(*extra):
        args = parser.parse_args(["clustering", "--quick", "--only", "2,3", "--reps", "1",
                                  "--out", str(tmp_path), *extra])
        assert args.func(args) == 0
        text = report.read_text()
        return text, [line for line in text.splitlines() if line.startswith("| ")]

    text1, rows1 = run()
    cached = sorted(p.name for p in (tmp_path / "reps").iterdir())
    assert len(cached) == 1 and cached[0].startswith("feat-n=150-sigma=0.5-rep=0-seed=")
    assert "**1 repetition**, fewer than the paper's 50" in text1
    assert "Not run yet" in text1  # Tables 1 and 4 were not asked for

    def fail(*a, **kw):
        raise AssertionError("a cached repetition was recomputed")
    for name in ("feature_clustering_rep", "sample_clustering_rep", "movie_split_rep"):
        monkeypatch.setattr(exp, name, fail)
    text2, rows2 = run()
    assert rows2 == rows1
    text3, rows3 = run("--assemble-only")
    assert rows3 == rows1 and "nothing was computed by this run" in text3
    assert sorted(p.name for p in (tmp_path / "reps").iterdir()) == cached
    # the functions' API reads the same cache
    t2 = exp.feature_clustering_table([(150, 0.5)], 1, quick=True, cache=tmp_path / "reps")
    assert f"| PG | {t2['PG'][0][0]:.2f}±0.00 (" in "\n".join(rows1)


def test_rewriting_the_report_keeps_its_hand_written_status(tmp_path, monkeypatch):
    import argparse
    from semisup.experiments import _runner
    # the full run's report is the repository's docs/results/clustering.md: here a copy
    monkeypatch.setattr(_runner, "repo_docs", lambda: tmp_path / "docs")
    report = tmp_path / "docs" / "results" / "clustering.md"
    report.parent.mkdir(parents=True)
    parser = argparse.ArgumentParser()
    exp.add_reproduce_parser(parser.add_subparsers())
    # nothing cached: --assemble-only refuses to write empty tables over the report
    args = parser.parse_args(["clustering", "--assemble-only", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="nothing cached"):
        args.func(args)
    assert not report.exists()
    # one (fake) finished repetition of Table 2's shared cell, full and quick protocol
    monkeypatch.setattr(exp, "N_GRID", [150])
    monkeypatch.setattr(exp, "SIGMA_GRID", [0.5])
    from semisup.experiments._checkpoint import TrialCache, code_version
    cache = TrialCache(str(tmp_path / "reps"), code_version(*exp.CODE))   # as the run's
    for quick in (False, True):
        for _, key, _ in exp._plan("feat", [(150, 0.5)], 1, quick, 0):
            cache.put(key, {"errors": {m: 0.5 for m in exp.PAPER_T2}, "lam": {},
                            "_timing": {"cpu_seconds": 1.0, "wall_seconds": 1.0}})
    status = [exp.STATUS, "", "* Table 1: the Oracle matches the paper.", ""]
    report.write_text("\n".join(["# old report", "", *status, "## Table 2", "old rows", ""]))

    def assemble(*extra):
        args = parser.parse_args(["clustering", "--assemble-only", "--out", str(tmp_path),
                                  *extra])
        assert args.func(args) == 0
        return (tmp_path / "clustering.md" if "--quick" in extra else report).read_text()

    for _ in range(2):  # kept once, before the tables, however often it is rewritten
        text = assemble()
        assert text.count(exp.STATUS) == 1 and "old rows" not in text
        assert "\n".join(status) in text
        assert text.index(exp.STATUS) < text.index("## Table 2")
    # a --quick report is not the full protocol's: the status does not carry over
    assert exp.STATUS not in assemble("--quick")


def test_kept_section_stops_at_the_next_heading(tmp_path):
    from semisup.experiments._report import kept_section
    path = tmp_path / "r.md"
    assert kept_section(str(path), "## A") == []
    path.write_text("# t\n## A\nx\n\n### sub\ny\n\n\n## B\nz\n")
    assert kept_section(str(path), "## A") == ["## A", "x", "", "### sub", "y", ""]
    assert kept_section(str(path), "## B") == ["## B", "z", ""]
    assert kept_section(str(path), "## C") == []


@pytest.mark.filterwarnings("ignore:Frank-Wolfe stopped")  # 5 FW steps: capped on purpose
def test_pg_cg_cgpg_are_the_public_estimator(monkeypatch):
    """Tables 1-3 fit PG, CG and CGPG through ClusteredRegressor (features and samples)."""
    from semisup.clustering import estimator as est_mod
    fitted = []
    orig = est_mod.ClusteredRegressor.fit

    def spy(self, X, y):
        fitted.append((self.cluster, self.solver, self.fit_intercept))
        return orig(self, X, y)

    monkeypatch.setattr(est_mod.ClusteredRegressor, "fit", spy)
    b = make_clustered_features(60, 20, 3, 0.1, random_state=0)
    methods = exp._feature_methods(3, cg_iter=5)
    for name in ("PG", "CG", "CGPG"):
        w = methods[name](b.data, b.target, 1e-3)
        assert w.shape == (20,) and np.unique(w).size <= 3
    assert fitted == [("features", s, False) for s in ("pg", "fw", "fwpg")]
