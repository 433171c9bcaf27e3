"""The ``semisup`` command: demo, datasets, and the reproduce/bench structure."""

import importlib
import math

import pytest

from semisup import cli
from semisup.experiments import PAPERS, load_papers

DEMO_KEYS = {"method", "data", "metric", "score", "seconds"}


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


@pytest.mark.parametrize("argv", [["--help"], ["reproduce", "--help"], ["bench", "--help"],
                                  ["bench", "foundation", "--help"]])
def test_help_pages(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: semisup" in out
    if argv[:2] == ["bench", "foundation"]:
        for flag in ("--knn", "--ssl", "--n-neighbors", "--labels-per-class", "--output"):
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
    for flag in ("--quick", "--plot", "--out", "--data-home"):
        assert flag in out, f"semisup reproduce {name} lacks {flag}"


def test_missing_subcommand_is_an_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        cli.main(["bench", "no-such-method"])
