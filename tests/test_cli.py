"""The ``semisup`` command: demo, datasets, and the reproduce/bench structure."""

import argparse
import importlib
import importlib.metadata
import json
import math
import subprocess
import sys

import numpy as np
import pytest

import semisup
from semisup import cli
from semisup.experiments import BENCH, PAPERS, REPRODUCE, load_papers

DEMO_KEYS = {"method", "data", "metric", "score", "seconds"}
#: the options every reproduce and bench command has, spelled the same way
SHARED_OPTIONS = ("--out", "--cache", "--reps", "--n-jobs", "--quick", "--plot", "--resume",
                  "--no-resume", "--assemble-only", "--only", "--verbose", "--blas-threads",
                  "--data-home")
#: spellings the commands used before the shared options; none may come back
OLD_SPELLINGS = ("--cache-dir", "--output", "--tables", "--parts", "--splits", "--draws",
                 "--results", "--trials-synthetic", "--knn", "--ssl")


def test_registry_imports_every_present_module():
    mods = load_papers()
    assert "foundation" in mods
    assert set(mods) <= set(PAPERS)


@pytest.mark.parametrize("name", list(PAPERS))
def test_demo_rows_of_each_module(name):
    try:
        mod = importlib.import_module(PAPERS[name])
    except ModuleNotFoundError as exc:
        if exc.name != PAPERS[name]:
            raise
        pytest.skip(f"{PAPERS[name]} does not exist yet")
    if not hasattr(mod, "demo_rows"):
        pytest.skip(f"{PAPERS[name]} has no demo_rows")
    rows = mod.demo_rows(verbose=False)  # any exception fails the test
    assert rows, f"{name}.demo_rows returned no rows"
    for row in rows:
        assert DEMO_KEYS <= set(row), f"{name}: row {row} lacks {DEMO_KEYS - set(row)}"
        assert isinstance(row["score"], (int, float)) and math.isfinite(row["score"])
        assert row["seconds"] >= 0


def test_foundation_demo_scores():
    from semisup.experiments import foundation
    rows = {r["data"].split(" (")[0]: r for r in foundation.demo_rows()}
    assert rows["two moons"]["score"] > 0.95
    assert rows["digits"]["score"] > 0.9


def test_demo_command_prints_table(monkeypatch, capsys):
    # The real registry runs every module's demo in test_demo_rows_of_each_module; here the
    # command itself is checked on the foundation module alone to keep the suite fast.
    from semisup.experiments import foundation
    monkeypatch.setattr(cli, "load_papers", lambda: {"foundation": foundation})
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header == ["method", "data", "metric", "score", "seconds"]
    assert "HarmonicFunction" in out and "Total" in out


def test_demo_command_fails_when_a_demo_raises(monkeypatch):
    class Broken:
        @staticmethod
        def demo_rows(verbose=False):
            raise RuntimeError("demo exploded")
    monkeypatch.setattr(cli, "load_papers", lambda: {"broken": Broken})
    with pytest.raises(RuntimeError, match="exploded"):
        cli.main(["demo"])


def test_datasets_command(capsys):
    assert cli.main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert out.split()[:3] == ["name", "found", "shape"]
    for name in ("mnist", "g50c", "pang_lee"):
        assert name in out


def test_datasets_command_without_data_says_where_and_how(tmp_path, capsys):
    assert cli.main(["datasets", "--data-home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"data_home={tmp_path.resolve()}" in out
    assert "SEMISUP_DATA" in out and "PROVENANCE.md" in out


@pytest.mark.parametrize("argv", [["--help"], ["reproduce", "--help"], ["bench", "--help"],
                                  ["bench", "foundation", "--help"]])
def test_help_pages(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: semisup" in out
    if argv[:2] == ["bench", "foundation"]:
        for flag in ("--only", "--n-neighbors", "--labels-per-class", "--out", "--cache"):
            assert flag in out


@pytest.mark.parametrize("name", list(PAPERS))
def test_reproduce_parsers_follow_the_contract(name, capsys):
    mod = load_papers().get(name)
    if mod is None or not hasattr(mod, "add_reproduce_parser"):
        pytest.skip(f"{name} has no reproduce command")
    with pytest.raises(SystemExit) as exc:
        cli.main(["reproduce", name, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for flag in SHARED_OPTIONS:
        assert flag in out, f"semisup reproduce {name} lacks {flag}"


def test_missing_subcommand_is_an_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        cli.main(["bench", "no-such-method"])


def _experiment_modules_imported_by(argv) -> list[str]:
    """The semisup.experiments.* modules a fresh interpreter imports to run ``semisup argv``."""
    code = (
        "import json, sys\n"
        "from semisup import cli\n"
        "try:\n"
        f"    cli.main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules\n"
        "                        if m.startswith('semisup.experiments.'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["reproduce", "--help"],
                                  ["bench", "--help"]])
def test_help_and_version_import_no_experiment(argv):
    # Importing the experiments pulls in every estimator (seconds): --help must not.
    assert _experiment_modules_imported_by(argv) == []


def test_a_command_imports_only_its_own_experiment():
    mods = _experiment_modules_imported_by(["bench", "foundation", "--help"])
    assert "semisup.experiments.foundation" in mods
    others = {path for name, path in PAPERS.items() if name != "foundation"}
    assert not others & set(mods)


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"semisup {semisup.__version__}"
    # the installed metadata comes from the same place (pyproject's dynamic version)
    assert importlib.metadata.version("semisup") == semisup.__version__


@pytest.mark.parametrize("kind", ["reproduce", "bench"])
def test_help_lists_every_command_without_importing(kind, capsys):
    with pytest.raises(SystemExit):
        cli.main([kind, "--help"])
    out = capsys.readouterr().out
    for name in (REPRODUCE if kind == "reproduce" else BENCH):
        assert name in out


@pytest.mark.parametrize("kind", ["reproduce", "bench"])
def test_command_registry_matches_the_modules(kind):
    # REPRODUCE / BENCH (and OWNERS) list the commands for the lazy --help; each module adds
    # the real ones: every listed command is added by the module said to own it, and no
    # module adds a command that is not listed.
    from semisup.experiments import owner
    registry = REPRODUCE if kind == "reproduce" else BENCH
    added_by = {}
    for key, mod in load_papers().items():
        add = getattr(mod, f"add_{kind}_parser", None)
        if add is not None:
            sub = argparse.ArgumentParser().add_subparsers()
            add(sub)
            added_by[key] = set(sub.choices)
    assert set().union(*added_by.values()) == set(registry)
    for name in registry:
        assert name in added_by.get(owner(kind, name), set()), (kind, name)


def test_a_module_with_two_commands_is_loaded_for_either(monkeypatch):
    import types

    from semisup import experiments
    fake = types.ModuleType("semisup.experiments._fake")

    def add_bench_parser(sub):
        for name in ("fake", "fake-defaults"):
            sub.add_parser(name).set_defaults(func=lambda args, n=name: n)

    fake.add_bench_parser = add_bench_parser
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setitem(experiments.PAPERS, "fake", fake.__name__)
    monkeypatch.setitem(experiments.BENCH, "fake", "a fake benchmark")
    monkeypatch.setitem(experiments.BENCH, "fake-defaults", "its second command")
    monkeypatch.setitem(experiments.OWNERS, ("bench", "fake-defaults"), "fake")
    for name in ("fake", "fake-defaults"):
        args = cli.build_parser(["bench", name]).parse_args(["bench", name])
        assert args.func(args) == name
    full = cli.build_parser().parse_args(["bench", "fake-defaults"])
    assert full.func(full) == "fake-defaults"


def test_lazy_and_full_parsers_agree_on_a_command():
    # main() builds a parser that imports only the named module: same parse as the full one
    argv = ["bench", "foundation", "--n-neighbors", "7"]
    lazy = cli.build_parser(argv).parse_args(argv)
    assert vars(lazy) == vars(cli.build_parser().parse_args(argv))
    assert lazy.func.__module__ == "semisup.experiments.foundation"


# --- packaging: the declared dependency floors and the minimum-versions run ---------------

def _declared_floors():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    from pathlib import Path
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("not a source checkout")
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    floors = {}
    for dep in deps:
        if ";" in dep:  # floors for newer Pythons only (python_version markers)
            continue
        name, _, version = dep.partition(">=")
        floors[name.strip()] = version.strip()
    return floors


def test_declared_floors_cover_what_the_code_needs():
    floors = _declared_floors()
    version = {k: tuple(int(p) for p in v.split(".")) for k, v in floors.items()}
    assert version["scikit-learn"] >= (1, 6)   # validate_data, __sklearn_tags__, ClassifierTags
    assert version["scipy"] >= (1, 12)         # scipy.optimize.isotonic_regression
    assert version["numpy"] >= (1, 23, 2)      # first with CPython 3.11 wheels
    assert version["joblib"] >= (1, 3)         # Parallel(return_as="generator")


def test_make_test_min_pins_exactly_the_declared_floors():
    import shutil
    from pathlib import Path
    floors = _declared_floors()
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(["make", "-s", "-C", str(root), "print-min-pins"], capture_output=True,
                         text=True, check=True, timeout=60).stdout.split()
    assert sorted(out) == sorted(f"{k}=={v}" for k, v in floors.items())
    assert {"numpy", "scipy", "scikit-learn"} <= {p.split("==")[0] for p in out}


# --- the shared options and where reports go ----------------------------------------------

def _option_strings(kind, name):
    parser = cli.build_parser([kind, name])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    cmd = next(a for a in sub.choices[kind]._actions
               if isinstance(a, argparse._SubParsersAction)).choices[name]
    return {o for a in cmd._actions for o in a.option_strings}


#: commands still on options of their own (owned elsewhere): convert them with
#: semisup.experiments._runner.add_common_options, then remove them from here (the strict
#: xfail below fails as soon as one is converted, so that this list cannot go stale)
NOT_YET_SHARED = set()


def _commands():
    return [pytest.param(kind, name, marks=pytest.mark.xfail(
                strict=True, reason=f"semisup {kind} {name} has its own option names"))
            if (kind, name) in NOT_YET_SHARED else (kind, name)
            for kind, names in (("reproduce", REPRODUCE), ("bench", BENCH)) for name in names]


@pytest.mark.parametrize("kind,name", _commands())
def test_every_command_has_the_shared_options_and_no_old_spelling(kind, name):
    opts = _option_strings(kind, name)
    assert set(SHARED_OPTIONS) <= opts, (kind, name, set(SHARED_OPTIONS) - opts)
    assert not set(OLD_SPELLINGS) & opts, (kind, name, set(OLD_SPELLINGS) & opts)
    assert "-v" in opts


def test_shared_options_mean_the_same_everywhere():
    for kind, name in [("reproduce", n) for n in REPRODUCE] + [("bench", n) for n in BENCH]:
        if (kind, name) in NOT_YET_SHARED:
            continue
        a = cli.build_parser([kind, name]).parse_args([kind, name])
        assert a.resume is True and a.assemble_only is False and a.quick is False
        assert a.out == f"out/{name}" and a.cache is None and a.only is None
        assert a.blas_threads == 1 and a.reps is None and a.kind == kind
        b = cli.build_parser([kind, name]).parse_args([kind, name, "--no-resume"])
        assert b.resume is False
    with pytest.raises(SystemExit):     # --only is checked against the command's parts
        cli.main(["reproduce", "spore", "--only", "3"])
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "clustering", "--reps", "0"])


def test_report_path_docs_only_for_a_full_run_from_the_package_location(tmp_path,
                                                                        monkeypatch):
    from pathlib import Path

    from semisup.experiments import _runner
    monkeypatch.chdir(tmp_path)                # the current directory plays no part
    docs = _runner.repo_docs()
    if docs is None:
        pytest.skip("not a source checkout")
    assert docs == Path(semisup.__file__).resolve().parents[2] / "docs"

    def path(*argv):
        return _runner.report_path(cli.build_parser(list(argv)).parse_args(list(argv)))

    assert path("reproduce", "spore") == str(docs / "results" / "spore.md")
    assert path("reproduce", "spore", "--assemble-only") == str(docs / "results" / "spore.md")
    for extra in (["--quick"], ["--reps", "1"], ["--only", "1"]):
        assert path("reproduce", "spore", *extra) == "out/spore/spore.md"
    assert path("reproduce", "lass", "--quick", "--out", "x") == "x/lass.md"
    assert path("bench", "lapsvm") == str(docs / "benchmarks" / "lapsvm.md")
    assert path("bench", "lapsvm", "--only", "mnist") == str(docs / "benchmarks" / "lapsvm.md")
    assert path("bench", "lapsvm", "--quick") == "out/lapsvm/lapsvm.md"


def _docs_state(paper):
    """Hashes of the published files of ``paper`` and the names in docs/results, /benchmarks."""
    import hashlib

    from semisup.experiments import _runner
    docs = _runner.repo_docs()
    state = {}
    for sub in ("results", "benchmarks"):
        folder = docs / sub
        state[sub] = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
        f = folder / f"{paper}.md"
        state[f"{sub}/{paper}.md"] = (hashlib.sha256(f.read_bytes()).hexdigest()
                                      if f.exists() else None)
    return state


#: the smallest --quick unit of each reproduction (tiny --reps, one table or data set)
QUICK_UNITS = {
    "lass": ["--only", "tagging", "--reps", "1"],
    "lapsvm": ["--only", "g50c", "--reps", "1"],
    "clustering": ["--only", "2", "--reps", "1"],
    "completion": ["--only", "tasks", "--reps", "1"],
    "spore": ["--only", "4", "--reps", "1"],          # synthetic graphs: no data needed
}


@pytest.mark.parametrize("paper", list(REPRODUCE))
def test_quick_reproduction_writes_under_out_and_never_into_docs(paper, tmp_path,
                                                                  monkeypatch):
    from semisup.experiments import _runner
    if _runner.repo_docs() is None:
        pytest.skip("not a source checkout: no docs/ to protect")
    if paper == "clustering":   # Table 2's one shared cell, not its five
        from semisup.experiments import clustering
        monkeypatch.setattr(clustering, "N_GRID", [150])
    if paper == "lapsvm":       # without the data, a G50C-sized stand-in (same protocol)
        from shared_data import missing_data_reason
        if missing_data_reason("g50c") is not None:
            from semisup.datasets.splits import lapsvm_splits
            from semisup.experiments import lapsvm
            rng = np.random.default_rng(0)
            y = np.repeat([-1, 1], 275)
            X = rng.normal(size=(550, 50)) + 0.6 * y[:, None]

            def fake_load(name, data_home=None, n_splits=12, seed=0, coil_scaling=None):
                return X, y, lapsvm_splits(y, 50, 50, random_state=seed)[:n_splits]
            monkeypatch.setattr(lapsvm, "load", fake_load)
            monkeypatch.setattr(_runner, "missing_data", lambda names, data_home=None: [])
    if paper == "completion":   # the command's path, not the FPC runs (tested elsewhere)
        from semisup.experiments import completion
        monkeypatch.setattr(completion, "_tasks_trial", lambda t, seed, lam: {
            m: {"label": 0.1 * t + 1e-3 * seed, "impute": 0.2} for m in ("MC-1", "MC-b")})
    argv = ["reproduce", paper, "--quick", *QUICK_UNITS[paper]]
    needed = _runner._needed(cli.build_parser(argv).parse_args(argv))
    missing = _runner.missing_data([n for sets in needed.values() for n in sets])
    if missing:   # benchmark data absent (fresh clone)
        pytest.skip(f"{paper}: the data of its smallest unit are absent ({missing})")
    before = _docs_state(paper)
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 0
    assert (tmp_path / "out" / paper / f"{paper}.md").is_file()
    assert _docs_state(paper) == before


# --- the runner: units, cache, resume, assemble-only, timing, BLAS -------------------------

def _unit_value(x, log=None):
    if log is not None:
        with open(log, "a") as fh:
            fh.write(f"{x}\n")
    return {"x": x, "sq": x * x}


def _blas_threads_seen(_):
    from threadpoolctl import threadpool_info
    return {"threads": sorted({p["num_threads"] for p in threadpool_info()
                               if p.get("user_api") == "blas"})}


def _flags(**kw):
    base = dict(assemble_only=False, resume=True, n_jobs=1, verbose=False)
    return argparse.Namespace(**{**base, **kw})


def test_run_units_caches_times_resumes_and_assembles(tmp_path):
    from semisup.experiments._checkpoint import TrialCache
    from semisup.experiments._runner import Unit, run_units, timing_summary
    log = tmp_path / "calls.txt"
    cache = TrialCache(str(tmp_path / "cache"))
    units = [Unit(f"u{i}", _unit_value, (i,), {"log": str(log)}) for i in range(3)]
    out = run_units(units, _flags(), cache)
    assert [r["sq"] for r in out] == [0, 1, 4]
    for r in out:   # one timing record per unit
        assert r["_timing"]["cpu_seconds"] >= 0 and r["_timing"]["wall_seconds"] >= 0
    assert timing_summary(out)["units"] == 3
    assert log.read_text().split() == ["0", "1", "2"]
    # --resume (default): nothing recomputed; a new unit is
    more = units + [Unit("u3", _unit_value, (3,), {"log": str(log)})]
    assert [r["sq"] for r in run_units(more, _flags(), cache)] == [0, 1, 4, 9]
    assert log.read_text().split() == ["0", "1", "2", "3"]
    # --assemble-only: no computation, absent units are None
    extra = more + [Unit("u4", _unit_value, (4,), {"log": str(log)})]
    got = run_units(extra, _flags(assemble_only=True), cache)
    assert got[-1] is None and [r["sq"] for r in got[:-1]] == [0, 1, 4, 9]
    assert log.read_text().split() == ["0", "1", "2", "3"]
    # --no-resume: every unit recomputed
    run_units(units, _flags(resume=False), cache)
    assert log.read_text().split() == ["0", "1", "2", "3", "0", "1", "2"]


def test_run_units_in_parallel_with_one_blas_thread_per_worker(tmp_path):
    from threadpoolctl import threadpool_limits

    from semisup.experiments._checkpoint import TrialCache
    from semisup.experiments._runner import Unit, _timed_call, run_units
    if not _blas_threads_seen(0)["threads"]:
        pytest.skip("no BLAS library reports its threads")
    # the wrapper every parallel unit runs in caps BLAS at one thread; sequential units
    # keep the run's limit
    with threadpool_limits(2):
        assert _timed_call(_blas_threads_seen, (0,), {}, True)["threads"] == [1]
        # (a BLAS built single-threaded, as some wheels bundle, stays at 1 whatever the limit)
        assert max(_timed_call(_blas_threads_seen, (0,), {}, False)["threads"]) == 2
    units = [Unit(f"b{i}", _blas_threads_seen, (i,)) for i in range(2)]
    out = run_units(units, _flags(n_jobs=2), TrialCache(str(tmp_path)))
    assert [r["threads"] for r in out] == [[1], [1]]


def test_run_command_limits_blas_threads():
    from threadpoolctl import threadpool_info

    from semisup.experiments._runner import run_command
    seen = run_command(argparse.Namespace(blas_threads=1), lambda a: [
        p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"])
    assert set(seen) <= {1}


def test_write_report_keeps_hand_written_sections(tmp_path):
    from semisup.experiments._runner import write_report
    path = tmp_path / "r.md"
    path.write_text("# R\n\nold intro\n\n## Findings\n\nprose by hand\n\n## Table\n\nold\n")
    for _ in range(2):   # kept once, however often the report is rewritten
        write_report(str(path), "# R\n\nnew intro\n\n## Table\n\nnew\n", keep=["## Findings"])
        text = path.read_text()
        assert text.count("## Findings") == 1 and "prose by hand" in text
        assert "old" not in text and text.index("## Findings") < text.index("## Table")


def test_datasets_command_names_the_sets_as_its_table_does(tmp_path, capsys):
    """Issue #30 item 7: the table said pang_lee, the fetch hint pang_lee_scale_v1."""
    assert cli.main(["datasets", "--data-home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "semisup datasets --fetch pang_lee\n" in out
    assert "--fetch pang_lee_scale_v1" not in out
    assert "pang_lee (folder pang_lee_scale_v1)" in out


# --- the command line without data (issue 30, item 6) -------------------------------------

def _commands():
    return [(k, n) for k, names in (("reproduce", REPRODUCE), ("bench", BENCH)) for n in names]


def _parse(kind, name, *extra):
    return cli.build_parser([kind, name]).parse_args([kind, name, "--quick", *extra])


@pytest.mark.parametrize("kind,name", _commands())
def test_every_declared_data_set_is_a_registered_one(kind, name):
    from semisup.datasets import REGISTRY
    from semisup.experiments._runner import _needed
    needed = _needed(_parse(kind, name))
    assert all(n in REGISTRY for sets in needed.values() for n in sets), needed


@pytest.mark.parametrize("kind,name", _commands())
def test_without_data_one_line_and_a_nonzero_exit(kind, name, tmp_path, monkeypatch, capsys):
    """Every command, run where no data set is: the parts that need data are not run; one
    line names the sets, where they were looked for and the fetch command; exit status 1
    whenever a set is missing. The parts needing no data still run (here: a stand-in body)."""
    from semisup.experiments._runner import _needed, run_command
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path))
    args = _parse(kind, name)
    needed = _needed(args)
    ran = []
    status = run_command(args, lambda a: ran.append(a.only) or 0)
    err = capsys.readouterr().err.strip()
    missing = sorted({n for sets in needed.values() for n in sets})
    if not missing:
        assert status == 0 and ran and err == ""
        return
    assert status == 1
    assert len(err.splitlines()) == 1, err
    assert f"semisup {kind} {name}: data set" in err
    assert f"$SEMISUP_DATA={tmp_path}" in err and "`semisup datasets --fetch " in err
    assert all(n in err for n in missing)
    runnable = [p for p, sets in needed.items() if not sets]
    if runnable:
        assert ran == [runnable] and "skipping" in err
    else:
        assert ran == []


@pytest.mark.parametrize("argv", [["reproduce", "lapsvm", "--quick"],
                                  ["reproduce", "spore", "--quick", "--only", "1,2"],
                                  ["bench", "foundation", "--quick"]])
def test_a_command_without_data_prints_no_traceback(argv, tmp_path):
    env = {**__import__("os").environ, "SEMISUP_DATA": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "semisup.cli", *argv, "--out",
                          str(tmp_path / "out")], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "not found" in lines[0] and "--fetch" in lines[0]


def test_a_missing_set_no_part_declared_is_one_line_too(tmp_path, monkeypatch, capsys):
    from semisup.datasets import load_dataset
    from semisup.experiments._runner import run_command
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path))
    args = argparse.Namespace(kind="bench", paper="demo", data_home=None, blas_threads=1)
    assert run_command(args, lambda a: load_dataset("g50c")) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("semisup bench demo: data set 'g50c'")
    with pytest.raises(FileNotFoundError, match="other"):   # not a data set: raised as is
        run_command(args, lambda a: open(tmp_path / "other"))


def test_progress_is_on_by_default_and_quiet_turns_it_off(tmp_path, capsys):
    from semisup.experiments._checkpoint import TrialCache
    from semisup.experiments._runner import Unit, run_units
    units = [Unit(f"p{i}", _unit_value, (i,)) for i in range(2)]
    for argv, shown in (([], True), (["-q"], False), (["-v"], True)):
        args = _parse("reproduce", "lass", *argv)
        assert args.verbose is shown
        run_units(units, args, TrialCache(None))
        err = capsys.readouterr().err
        assert ("2/2 done" in err) is shown
