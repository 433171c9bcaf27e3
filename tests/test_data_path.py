"""The path of ``X`` through a fit: how many times it enters a module of semisup (issue #28).

A *visit* is a stretch of execution in one module of ``src/semisup`` whose frame holds ``X``
(the user's array or an equal copy) as an argument: a call into another module and the
return back up to a caller both start one (the innermost semisup frame holding ``X`` decides
the module). Each round trip is a place where ``X`` is validated, its engine detected or its
data read again; the estimators look the engine up once per fit and hand it down
(:func:`semisup.engines.engine_for_types`), the front-end validates in-memory points itself
and the kNN search trusts them (``knn_search_in_memory(validated=True)``).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_moons

import semisup
from semisup.graph import knn_search
from semisup.graph.neighbors import knn_search_in_memory

SRC = str(Path(semisup.__file__).resolve().parent)

#: the most module visits of X through each estimator's fit (issue #28: at most 10 for LapSVM;
#: the graph-only estimators go through the front-end's route alone)
LIMITS = {"LapSVM": 10, "LapRLS": 10, "HarmonicFunction": 7, "PoissonLearning": 7}


def _moons(n=200):
    X, t = make_moons(n, noise=0.1, random_state=0)
    y = np.full(n, -1)
    y[:5], y[n // 2:n // 2 + 5] = t[:5], t[n // 2:n // 2 + 5]
    return X, y


def trace_visits(run, X):
    """The module visits of ``X`` while ``run()`` executes: ``[(module, [functions])]``,
    the module a path relative to the package (``"graph/frontend.py"``)."""
    def holds_x(v):
        return v is X or (isinstance(v, np.ndarray) and v.shape == X.shape
                          and np.array_equal(v, X))

    stack, visits = [], []   # (frame id, module) of the semisup frames holding X

    def enter(module, what):
        if not visits or visits[-1][0] != module:
            visits.append((module, []))
        if what not in visits[-1][1]:
            visits[-1][1].append(what)

    def profile(frame, event, arg):
        code = frame.f_code
        if not code.co_filename.startswith(SRC):
            return
        if event == "call":
            args = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
            if any(holds_x(frame.f_locals.get(a)) for a in args):
                module = code.co_filename[len(SRC) + 1:].replace("\\", "/")
                stack.append((id(frame), module))
                enter(module, code.co_name)
        elif event == "return" and stack and stack[-1][0] == id(frame):
            stack.pop()
            if stack:
                enter(stack[-1][1], "(return)")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys.setprofile(profile)
        try:
            run()
        finally:
            sys.setprofile(None)
    return visits


def _report(visits):
    return "\n".join(f"{i:3d} {m}: {', '.join(fs)}" for i, (m, fs) in enumerate(visits, 1))


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_x_visits_few_modules_on_its_way_through_fit(name):
    X, y = _moons()
    est = getattr(semisup, name)()
    visits = trace_visits(lambda: est.fit(X, y), X)
    assert len(visits) <= LIMITS[name], f"{name}.fit:\n{_report(visits)}"
    modules = [m for m, _ in visits]
    # the engine is looked up by type (engines/ never sees X), the points checked once
    assert not any(m.startswith("engines/") for m in modules), _report(visits)
    assert "_validation.py" not in modules, _report(visits)
    assert modules[0] == modules[-1]       # it comes back to the estimator, and ends there
    if name in ("LapSVM", "LapRLS"):
        assert modules.count("kernels.py") == 1, _report(visits)


def test_the_counter_sees_each_round_trip():
    """The counter counts: a direct kNN search keeps its own checks (validation, then the
    search), which show as visits to _validation.py and back; the validated path skips
    them."""
    X, _ = _moons(60)
    checked = trace_visits(lambda: knn_search(X, 5), X)
    modules = [m for m, _ in checked]
    assert modules[:4] == ["graph/neighbors.py", "graph/engine.py", "graph/neighbors.py",
                           "_validation.py"], _report(checked)
    assert modules.count("graph/neighbors.py") >= 3
    trusted = trace_visits(lambda: knn_search_in_memory(X, 5, validated=True), X)
    assert [m for m, _ in trusted] == ["graph/neighbors.py"], _report(trusted)
    np.testing.assert_array_equal(knn_search_in_memory(X, 5, validated=True)[1],
                                  knn_search(X, 5)[1])


def test_direct_searches_still_refuse_bad_points():
    X, _ = _moons(20)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains 1 NaN or infinite"):
        knn_search(X, 3)
    with pytest.raises(ValueError, match="X contains 1 NaN or infinite"):
        knn_search_in_memory(X, 3)
    y = np.full(20, -1)
    y[:2] = [0, 1]
    with pytest.raises(ValueError, match="NaN"):
        semisup.LapSVM().fit(X, y)
