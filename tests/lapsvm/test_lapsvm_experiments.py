import numpy as np

from semisup.datasets.splits import lapsvm_splits
from semisup.experiments import lapsvm as exp


def test_demo_rows_have_the_contract_keys_and_learn():
    rows = exp.demo_rows()
    assert len(rows) == 3
    for r in rows:
        assert set(r) == {"method", "data", "metric", "score", "seconds"}
        assert r["score"] > 0.85


def test_run_split_on_synthetic_data_runs_every_method():
    from sklearn.datasets import make_moons
    X, t = make_moons(240, noise=0.1, random_state=0)
    y = np.where(t == 1, 1, -1)
    cfg = dict(label="moons", kernel="rbf", sigma=0.35, nn=6, p=1, sizes=(6, 10),
               newton=(1e-2, 1.0), laprls=(1e-2, 1.0), dual=(1e-2, 1.0), svm=1e-2, rlsc=1e-2,
               pcg={r: (1e-2, 1.0) for r in exp.RULES})
    split = lapsvm_splits(y, 6, 10, random_state=0)[0]
    S = exp.setup_split(cfg, X, y, split)
    res = exp.run_split(cfg, S, exp.METHODS, dict(newton=cfg["newton"], pcg=cfg["pcg"]))
    assert set(res) == set(exp.METHODS)
    for m in ("LapRLSC", "LapSVM Newton", "PCG stability"):
        assert res[m]["err"][2] < 20
    assert res["PCG stability"]["iters"] >= 1


def test_cli_parsers_register():
    from semisup.cli import build_parser
    p = build_parser()
    a = p.parse_args(["reproduce", "lapsvm", "--only", "g50c", "--quick"])
    assert a.only == ["g50c"] and a.quick
    b = p.parse_args(["bench", "lapsvm", "--only", "scaling", "--sizes", "1000"])
    assert b.sizes == [1000] and b.only == ["scaling"]
    import pytest
    with pytest.raises(SystemExit):       # --only names data sets of the protocol
        p.parse_args(["reproduce", "lapsvm", "--only", "g50c,nosuch"])


def test_cli_coil_scaling_and_blas_threads_options():
    from semisup.cli import build_parser
    p = build_parser()
    a = p.parse_args(["reproduce", "lapsvm", "--only", "coil20b"])
    assert a.coil_scaling == "unit-norm" and a.blas_threads == 1
    b = p.parse_args(["bench", "lapsvm", "--coil-scaling", "pixels", "--blas-threads", "1"])
    assert b.coil_scaling == "pixels" and b.blas_threads == 1


def test_load_rejects_unknown_coil_scaling():
    import pytest
    with pytest.raises(ValueError, match="coil_scaling"):
        exp.load("coil20b", coil_scaling="zscore")


def test_coil_scaling_unit_norm_fits_the_papers_sigma():
    """Unit-length images put sigma = 0.6 near 2x the mean 10th-NN distance; pixels do not."""
    from shared_data import require_dataset_dir
    from sklearn.neighbors import NearestNeighbors
    require_dataset_dir("coil20")
    ratios = {}
    for scaling in exp.COIL_SCALINGS:
        X, y, splits = exp.load("coil20b", n_splits=1, coil_scaling=scaling)
        assert len(splits) == 1 and np.unique(y).size == 2
        if scaling == "unit-norm":
            np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, rtol=1e-12)
        d, _ = NearestNeighbors(n_neighbors=11).fit(X).kneighbors(X)
        ratios[scaling] = exp.CONFIGS["coil20b"]["sigma"] / d[:, 10].mean()
    assert 1.0 < ratios["unit-norm"] < 3.0      # USPST: 1.9, G50C: 2.1 on Sindhwani's files
    assert ratios["pixels"] < 0.2


def _reproduce_args(tmp_path, **kw):
    import argparse
    a = dict(only=["g50c"], quick=True, tune=False, plot=False, max_direct_n=5000,
             out=str(tmp_path / "out"), cache=None, resume=True, assemble_only=False,
             reps=None, n_jobs=1, paper="lapsvm", kind="reproduce",
             coil_scaling="unit-norm", blas_threads=1,
             data_home=None, verbose=False, argv=["--only", "g50c", "--quick"])
    a.update(kw)
    return argparse.Namespace(**a)


def test_reproduce_resumes_from_cached_splits(tmp_path, monkeypatch):
    """G50C, 2 splits: a second run loads every split (and the dual's gamma_I) from the
    cache, computes nothing and gives the same summary; --assemble-only reports the splits
    present."""
    import os

    import pytest
    from shared_data import require_dataset_dir
    require_dataset_dir("g50c")
    args = _reproduce_args(tmp_path)
    summary, meta = exp.reproduce_dataset("g50c", args)
    cache = tmp_path / "out" / "splits"
    files = sorted(os.listdir(cache))
    assert files == ["g50c-dual-of2.json", "g50c-split01of2-tune=0-direct=1-dual=val.json",
                     "g50c-split02of2-tune=0-direct=1-dual=val.json"]
    assert meta == dict(n=meta["n"], n_splits=2, n_splits_protocol=2) and meta["n"] > 300
    assert set(summary) == set(exp.METHODS) and summary["PCG stability"]["n_splits"] == 2

    def fail(*a, **kw):
        raise AssertionError("recomputed a cached split")

    orig = {f: getattr(exp, f) for f in ("run_split", "tune", "setup_split")}
    for f in orig:
        monkeypatch.setattr(exp, f, fail)
    assert exp.reproduce_dataset("g50c", args) == (summary, meta)
    with pytest.raises(AssertionError, match="recomputed"):
        exp.reproduce_dataset("g50c", _reproduce_args(tmp_path, resume=False))

    # --no-resume recomputes every split (one unit each), selecting the dual's gamma_I once
    calls = []
    for f, fn in orig.items():
        monkeypatch.setattr(exp, f, lambda *a, _f=f, _fn=fn, **kw: calls.append(_f)
                            or _fn(*a, **kw))
    s2, m2 = exp.reproduce_dataset("g50c", _reproduce_args(tmp_path, resume=False))
    # split 0 is set up once for the dual's selection and once as its own unit of work
    assert sorted(calls) == ["run_split"] * 2 + ["setup_split"] * 3 + ["tune"]
    assert m2 == meta and s2["SVM"] == summary["SVM"]   # deterministic, untimed

    # assemble the report from the cache alone, with one split missing
    os.remove(cache / files[2])
    assert exp.cmd_reproduce(_reproduce_args(tmp_path, assemble_only=True,
                                             only=None)) == 0
    report = (tmp_path / "out" / "lapsvm.md").read_text()   # --quick: under --out
    assert "| G50C | PCG stability |" in report and "COIL20" not in report.split("##")[1]
    assert "Fewer than the paper's 12 splits" in report and "G50C 1 of 2" in report
    assert "--assemble-only" in report


def test_cli_resume_options():
    from semisup.cli import build_parser
    p = build_parser()
    a = p.parse_args(["reproduce", "lapsvm"])
    assert a.resume and not a.assemble_only and a.cache is None
    b = p.parse_args(["reproduce", "lapsvm", "--no-resume", "--cache", "c",
                      "--assemble-only"])
    assert not b.resume and b.assemble_only and b.cache == "c"


def test_run_split_fits_the_public_estimators(monkeypatch):
    """LapRLSC, dual, Newton and PCG go through semisup.LapRLS / LapSVM (no solver call)."""
    from sklearn.datasets import make_moons

    import semisup.lapsvm as lapsvm_pkg
    X, t = make_moons(120, noise=0.1, random_state=1)
    y = np.where(t == 1, 1, -1)                 # a -1 class: coded 0/1 for the estimators
    cfg = dict(label="moons", kernel="rbf", sigma=0.35, nn=6, p=1, sizes=(6, 10),
               newton=(1e-2, 1.0), laprls=(1e-2, 1.0), dual=(1e-2, 1.0), svm=1e-2, rlsc=1e-2,
               pcg={r: (1e-2, 1.0) for r in exp.RULES})
    S = exp.setup_split(cfg, X, y, lapsvm_splits(y, 6, 10, random_state=0)[0])
    fitted = []
    orig = exp.fit_estimator
    monkeypatch.setattr(exp, "fit_estimator",
                        lambda S, est: fitted.append(est) or orig(S, est))
    res = exp.run_split(cfg, S, exp.METHODS, dict(newton=cfg["newton"], pcg=cfg["pcg"]))
    kinds = sorted((type(e).__name__, e.solver) for e in fitted)
    assert kinds == [("LapRLS", "closed_form"), ("LapSVM", "dual"), ("LapSVM", "newton"),
                     ("LapSVM", "pcg"), ("LapSVM", "pcg"), ("LapSVM", "pcg")]
    assert all(isinstance(e, (lapsvm_pkg.LapSVM, lapsvm_pkg.LapRLS)) for e in fitted)
    assert all(e.kernel == "precomputed" and e.affinity == "precomputed" for e in fitted)
    # the errors are those of the estimator's own predictions
    est = fitted[2]
    pred_T = S["classes"][est.predict(S["K_T"])]
    assert res["LapSVM Newton"]["err"][2] == 100 * np.mean(pred_T != S["y_T"])
    assert res["LapSVM Newton"]["time"] == est.fit_time_


def test_figures_fit_the_public_estimators(tmp_path, monkeypatch):
    """Figures 3-7 read the iterates of LapSVM fits (keep_path), no solver function."""
    import pytest
    pytest.importorskip("matplotlib")
    from sklearn.datasets import make_moons

    def fail(*a, **kw):
        raise AssertionError("a figure called a solver function")

    for f in ("pcg", "newton", "dual_lapsvm", "run_pcg"):
        monkeypatch.setattr(exp, f, fail)
    fitted = []
    orig = exp.LapSVM.fit
    monkeypatch.setattr(exp.LapSVM, "fit", lambda self, *a, **kw: fitted.append(
        self.get_params()) or orig(self, *a, **kw))
    # Figures 3-4 (and the --figures-only path without a figure data set)
    args = _reproduce_args(tmp_path, only=["g50c"], figures_only=True)
    assert exp.figures(args) == []
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir() if p.suffix == ".png"} == {
        "figure3_two_moons_pcg.png", "figure4_stopping_criteria.png"}
    assert [p["early_stopping"] for p in fitted] == [None, None, *exp.RULES]
    assert sum(p["keep_path"] for p in fitted) == 2
    # Figures 5-7 on a synthetic split: PCG with keep_path and the Newton reference line
    fitted.clear()
    X, t = make_moons(160, noise=0.1, random_state=1)
    y = np.where(t == 1, 1, -1)
    cfg = dict(label="moons", kernel="rbf", sigma=0.35, nn=6, p=1, sizes=(6, 10),
               newton=(1e-2, 1.0), laprls=(1e-2, 1.0), dual=(1e-2, 1.0), svm=1e-2, rlsc=1e-2,
               pcg={r: (1e-2, 1.0) for r in exp.RULES})
    S = exp.setup_split(cfg, X, y, lapsvm_splits(y, 6, 10, random_state=0)[0])
    exp.figure_error_vs_iterations("uspst", cfg, S, str(out), max_iter=30)
    assert (out / "figure5_uspst_error_vs_iterations.png").exists()
    assert [(p["solver"], p["keep_path"], p["max_iter"]) for p in fitted] == [
        ("pcg", True, 30), ("newton", False, None)]
