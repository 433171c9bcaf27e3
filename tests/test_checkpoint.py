"""Resumable experiment runs (semisup.experiments._checkpoint) and their records."""

import math
import os

import numpy as np
import pytest

from semisup.experiments._checkpoint import TrialCache, run_jobs

CALLS = []


def _record(x):
    CALLS.append(x)
    return {"x": x, "root": np.sqrt(x), "vec": np.arange(2)}


def test_finished_jobs_are_stored_and_not_rerun(tmp_path):
    cache = TrialCache(str(tmp_path / "c"))
    jobs = [(_record, (float(i),), {}) for i in range(4)]
    keys = [f"t-{i}" for i in range(4)]
    CALLS.clear()
    first = run_jobs(jobs[:2], keys[:2], cache)
    assert CALLS == [0.0, 1.0]
    CALLS.clear()
    out = run_jobs(jobs, keys, cache)           # resumes: only the two new jobs run
    assert CALLS == [2.0, 3.0]
    assert out[:2] == first
    assert out[3] == {"x": 3.0, "root": math.sqrt(3.0), "vec": [0, 1]}
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [f"t-{i}.json"
                                                                   for i in range(4)]


def test_parallel_jobs_match_serial(tmp_path):
    jobs = [(math.sqrt, (float(i),), {}) for i in range(5)]
    keys = [f"s-{i}" for i in range(5)]
    par = run_jobs(jobs, keys, TrialCache(str(tmp_path)), n_jobs=2)
    assert par == [math.sqrt(i) for i in range(5)]
    assert run_jobs(jobs, keys, TrialCache(None)) == par


def test_bad_keys_are_refused(tmp_path):
    cache = TrialCache(str(tmp_path))
    with pytest.raises(ValueError, match="cache key"):
        cache.put("a/b", 1)
    with pytest.raises(ValueError, match="distinct key"):
        run_jobs([(abs, (1,), {})] * 2, ["k", "k"], cache)


def test_cache_run_returns_stored_value(tmp_path):
    cache = TrialCache(str(tmp_path))
    assert cache.run("a", lambda: (1, 2)) == [1, 2]
    assert cache.run("a", lambda: pytest.fail("recomputed")) == [1, 2]


def test_records_state_the_numerical_stack():
    # results move with the install (docs/results/spore.md), so every report header names it
    import numpy
    import scipy
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS)

    from semisup.experiments._report import machine

    line = machine()
    assert f"numpy {numpy.__version__}" in line and f"scipy {scipy.__version__}" in line
    assert "blas" in line.lower() and f"{os.cpu_count()} cores" in line


# --- the code version: a unit computed by other code is never trusted ---------------------

def test_a_result_of_another_code_version_is_recomputed(tmp_path):
    old = TrialCache(str(tmp_path), version="aaa")
    old.put("k", {"v": 1})
    assert old.get("k") == {"v": 1} and "k" in old
    new = TrialCache(str(tmp_path), version="bbb")
    assert new.get("k") is None and "k" not in new
    CALLS.clear()
    assert run_jobs([(_record, (4.0,), {})], ["k"], new)[0]["x"] == 4.0 and CALLS == [4.0]
    assert TrialCache(str(tmp_path), version="bbb").get("k")["x"] == 4.0
    assert "k" not in TrialCache(str(tmp_path), version="aaa")   # overwritten, not shared


def _package(root, body):
    pkg = root / "semisup" / "meth"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("from .solver import solve\n")
    (pkg / "solver.py").write_text(body)
    (root / "semisup" / "helper.py").write_text("def h():\n    return 1\n")


def test_code_version_follows_the_code_not_its_prose(tmp_path, monkeypatch):
    """The version hashes every module reached by imports from the roots (a change of a
    helper two imports away counts), ignores docstrings and comments, and includes the
    protocol constant."""
    from semisup.experiments import _checkpoint

    def module_file(name):
        rel = tmp_path.joinpath(*name.split("."))
        for p in (rel / "__init__.py", rel.with_suffix(".py")):
            if p.is_file():
                return p
        return None

    monkeypatch.setattr(_checkpoint, "_module_file", module_file)

    def version(body, protocol="v1", helper=None):
        _package(tmp_path, body)
        if helper:
            (tmp_path / "semisup" / "helper.py").write_text(helper)
        _checkpoint.code_version.cache_clear()
        return _checkpoint.code_version(("semisup.meth",), protocol)

    base = version('"""Doc."""\nfrom ..helper import h\n\ndef solve():\n    return h()\n')
    assert version('"""Other doc."""\nfrom ..helper import h\n\n\ndef solve():  # note\n'
                   '    """More prose."""\n    return h()\n') == base
    assert version('from ..helper import h\n\ndef solve():\n    return h() + 1\n') != base
    assert version('"""Doc."""\nfrom ..helper import h\n\ndef solve():\n    return h()\n',
                   protocol="v2") != base
    assert version('"""Doc."""\nfrom ..helper import h\n\ndef solve():\n    return h()\n',
                   helper="def h():\n    return 2\n") != base
