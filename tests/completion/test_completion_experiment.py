import argparse
import os

import numpy as np
import pytest

from semisup.experiments import completion as exp


def _fake_trial(rng, shift=0.0, oracle=False):
    out = {m: {"label": 0.2 + 0.05 * i + shift + 0.01 * rng.random(),
               "impute": 0.3 + 0.1 * i + 0.01 * rng.random()}
           for i, m in enumerate(exp.METHODS)}
    out["Zero+SVM"]["impute"] = 1.0
    out["_timing"] = {"cpu_seconds": 1.0, "wall_seconds": 1.0}   # as the runner stores it
    if oracle:
        out["Oracle SVM"] = {"label": 0.1 + 0.01 * rng.random(), "impute": None}
    return out


def _fake_results(rng):
    from semisup.datasets.completion_synthetic import synthetic_grid
    syn = [dict(setting=s, trials=[_fake_trial(rng, -0.01 * s["omega"]) for _ in range(3)])
           for s in synthetic_grid()]
    tasks = {t: [{m: {"label": 0.3 - 0.01 * t + 0.01 * rng.random(),
                      "impute": 0.5 - 0.01 * t + 0.01 * rng.random()}
                  for m in ("MC-1", "MC-b")} for _ in range(3)] for t in (2, 10)}
    real = {om: [_fake_trial(rng, oracle=True) for _ in range(3)] for om in exp.OMEGAS}
    return {"synthetic": syn, "tasks": tasks, "emotions": real, "yeast": real}


def test_report_tables_and_findings_are_written(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    args = argparse.Namespace(quick=True, only=None, trials_synthetic=3, trials_tasks=3,
                              trials_real=3, lam_synthetic="1")
    exp._write_results(_fake_results(rng), args, 1.0, str(tmp_path / "completion.md"))
    text = open(tmp_path / "completion.md").read()
    assert "meta-average" in text and "Oracle SVM" in text
    # MC-1 has the lowest fake label error everywhere: it is bold and the finding holds
    assert "| MC-1 best for labels (meta-average) |" in text
    row = [ln for ln in text.splitlines() if ln.startswith("| MC-1 best for labels")][0]
    assert row.endswith("| yes |")
    assert "| t = 10 significantly beats t = 2 for MC-1 (label) |" in text
    # the imputation table drops Zero+SVM (its error is 1 by definition)
    imp = text.split("Relative feature imputation error")[1].split("###")[0]
    assert "Zero+SVM" not in imp


def test_run_trial_on_a_tiny_problem():
    from semisup.datasets.completion_synthetic import make_completion_problem
    p = make_completion_problem(0, t=3, d=6, n=30, r=2, omega=0.5)
    out = exp.run_trial(p.X.T, p.Y.T, p.MX.T, p.MY.T, lam=1.0, em_k=1, standardize=True,
                        seed=0, oracle=True, methods=("MC-b", "Mean+SVM", "Zero+SVM"))
    assert set(out) == {"MC-b", "Mean+SVM", "Zero+SVM", "Oracle SVM"}
    assert out["Zero+SVM"]["impute"] == pytest.approx(1.0)
    assert all(0 <= v["label"] <= 1 for v in out.values())


def test_parsers_register():
    for add, argv, check in (
            (exp.add_reproduce_parser, ["completion", "--quick", "--only", "tasks,yeast"],
             lambda a: a.only == ["tasks", "yeast"] and a.out == os.path.join("out",
                                                                               "completion")),
            (exp.add_bench_parser, ["completion", "--only", "impute"],
             lambda a: a.only == ["impute"] and a.blas_threads == 1)):
        ap = argparse.ArgumentParser()
        add(ap.add_subparsers())
        a = ap.parse_args(argv)
        assert check(a) and callable(a.func)


def test_reproduce_quick_caches_trials_and_assembles(tmp_path, monkeypatch):
    """One tiny tasks experiment through the command: trials cached under --out, the report
    under --out (--quick), --assemble-only rebuilds it from the cache without computing."""
    calls = []

    def fake_trial(t, seed, lam):
        calls.append((t, seed))
        return {m: {"label": 0.3 - 0.01 * t + 1e-3 * (seed % 7),
                    "impute": 0.5 + 1e-2 * (seed % 5) + 1e-3 * t}
                for m in ("MC-1", "MC-b")}

    monkeypatch.setattr(exp, "_tasks_trial", fake_trial)
    ap = argparse.ArgumentParser()
    exp.add_reproduce_parser(ap.add_subparsers())

    def run(*extra):
        a = ap.parse_args(["completion", "--quick", "--only", "tasks", "--reps", "2",
                           "--out", str(tmp_path), *extra])
        assert a.func(a) == 0
        return (tmp_path / "completion.md").read_text()

    text = run()
    assert len(calls) == 4 and len(os.listdir(tmp_path / "trials")) == 4
    assert "Number of tasks" in text
    again = run("--assemble-only")
    assert len(calls) == 4 and "assembled (`--assemble-only`)" in again.lower()
    run("--no-resume")
    assert len(calls) == 8


def test_report_keeps_its_hand_written_sections(tmp_path):
    """A rewrite (new run or --assemble-only) keeps the prose written over the tables."""
    rng = np.random.default_rng(0)
    args = argparse.Namespace(quick=False, only=None, trials_synthetic=3, trials_tasks=3,
                              trials_real=3, lam_synthetic="cv")
    path = tmp_path / "completion.md"
    path.write_text("# old\n\n" + "".join(f"{h}\n\nby hand {i}\n\n"
                                        for i, h in enumerate(exp.KEPT)) + "## Yeast\n\nold\n")
    for _ in range(2):
        exp._write_results(_fake_results(rng), args, 1.0, str(path))
        text = path.read_text()
        for i, h in enumerate(exp.KEPT):
            assert text.count(h) == 1 and f"by hand {i}" in text
        assert text.index(exp.KEPT[-1]) < text.index("## Synthetic grid")
        assert "\nold\n" not in text


@pytest.mark.parametrize("errors, stops_at", [
    ((.5, .5, .5, .5, .5), None),              # flat start: never past a minimum
    ((.5, .4, .4, .4, .4, .4), None),          # ties with the best are not past it
    ((.5, .4, .45, .45, .45), 4),              # three stages worse than the best: stop
    ((.5, .4, .45, .4, .45, .45, .3), None),   # a tie resets the count
])
def test_cv_path_stops_only_past_its_minimum(errors, stops_at):
    from semisup.completion.model_selection import _PastMinimum
    stop = _PastMinimum(3)
    hits = [k for k, e in enumerate(errors) if stop(e)]
    assert (hits[0] if hits else None) == stops_at
    never = _PastMinimum(None)                 # patience None: the whole grid
    assert not any(never(e) for e in errors)


def test_tasks_trial_with_coarse_folds_keeps_the_full_path_choice(monkeypatch):
    """The paper's tasks experiment, t = 2, trial 7: 8 held-out labels per fold, so errors
    tie for stages. Counting ties as 'not improved' stopped paths early and chose
    (lam = 1, mu = 0.041): 28.1 % label error; the full path (the oracle: no early stop)
    chooses lam = 0.01 at the end of the grid: 13.1 % (d7b6234, 2026-11-21, reproduced on
    2026-11-25)."""
    from semisup.completion import estimator
    from semisup.datasets.completion_synthetic import make_completion_problem
    p = make_completion_problem(50_007, t=2, d=20, n=100, r=2, sigma2=0.01, omega=0.2)

    def trial():
        return exp.run_trial(p.X.T, p.Y.T, p.MX.T, p.MY.T, lam="cv", em_k=0,
                             standardize=False, seed=50_007, methods=("MC-1",))["MC-1"]

    early = trial()
    monkeypatch.setattr(estimator, "CV_PATIENCE", None)
    full = trial()
    assert (early["lam"], early["mu"]) == (full["lam"], full["mu"])
    assert early["label"] == full["label"] < 0.2


def test_trial_passes_the_papers_settings_rather_than_the_estimators_defaults(monkeypatch):
    """The settings the paper's protocol fixes (spec §5-§7) reach the estimator explicitly,
    so that a change of MatrixCompletionTransducer's defaults cannot move the tables."""
    import semisup.completion
    from semisup.datasets.completion_synthetic import make_completion_problem
    seen = []

    class Spy(semisup.completion.MatrixCompletionTransducer):
        def __init__(self, **kwargs):
            seen.append(kwargs)
            raise StopIteration

    monkeypatch.setattr(semisup.completion, "MatrixCompletionTransducer", Spy)
    p = make_completion_problem(0, t=3, d=6, n=30, r=2, omega=0.5)
    with pytest.raises(StopIteration):
        exp.run_trial(p.X.T, p.Y.T, p.MX.T, p.MY.T, lam="cv", em_k=0, standardize=False,
                      seed=0, methods=("MC-1",))
    assert {k: v for k, v in seen[0].items() if k not in ("random_state", "svd")} == dict(
        variant="mc1", lam="cv", mu="cv", lam_grid=(1e-3, 1e-2, 1e-1, 1.0), mu_final=1e-5,
        eta=0.25, tol=1e-5, step_factor=3.8, max_inner=10_000, n_folds=5, solver="fpc",
        graph_features=None,
        standardize=False)
