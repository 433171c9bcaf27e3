"""The docstring examples: they run, and every public estimator has one.

(a) The doctests of every semisup module that has them run and pass (doctest.DocTestFinder
over the package's modules). A module whose import, or whose examples, need an optional
dependency that is not installed (an extra such as ``[fast]`` or ``[plot]``) is skipped,
naming it.
(b) Every public estimator's class docstring has an "Examples" section (numpydoc), the
scikit-learn convention the documentation relies on. A name in :data:`PENDING` is one whose
section is being written: its test is a strict xfail, so it starts failing as soon as the
section exists — then remove the name from PENDING.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest

import semisup

#: the public estimators (the top-level ones and the graph-kernel baseline)
ESTIMATORS = {
    "HarmonicFunction": "semisup",
    "LaplacianAssignment": "semisup",
    "LapSVM": "semisup",
    "LapRLS": "semisup",
    "ClusteredRegressor": "semisup",
    "ClusteredClassifier": "semisup",
    "MatrixCompletionTransducer": "semisup",
    "SPORE": "semisup",
    "MultiGraphSPORE": "semisup",
    "PoissonLearning": "semisup",
    "PoissonMBO": "semisup",
    "GraphKernelSVM": "semisup.baselines.graph_kernels",
}

#: estimators whose Examples section is being added (strict xfail: remove a name once its
#: section exists). LaplacianAssignment and MatrixCompletionTransducer got theirs with the
#: {0, 1, -1} label conversion.
PENDING: set[str] = set()

#: top-level modules of the optional extras (see tests/conftest.py)
_OPTIONAL = {"numba", "pynndescent", "matplotlib", "cvxpy", "ckmeans"}


def _module_names():
    names = ["semisup"]
    for info in pkgutil.walk_packages(semisup.__path__, prefix="semisup."):
        names.append(info.name)
    return sorted(names)


def _source(modname) -> str:
    """A module's source text, found without importing it."""
    spec = importlib.util.find_spec(modname)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return ""
    return Path(spec.origin).read_text(encoding="utf-8")


#: the modules whose source holds a doctest prompt (the others have nothing to run)
DOCTEST_MODULES = [m for m in _module_names() if ">>> " in _source(m)]


def _import_or_skip(name):
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if missing.split(".")[0] in _OPTIONAL or "pip install semisup[" in str(exc):
            pytest.skip(f"{name} needs an optional extra: {exc}")
        raise


def _doctests(module):
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, module.__name__) if t.examples]


def test_walk_finds_the_modules_with_doctests():
    names = _module_names()
    for expected in ("semisup.graph", "semisup.kernels", "semisup.datasets",
                     "semisup.model_selection", "semisup.lapsvm.estimator",
                     "semisup.baselines.graph_kernels"):
        assert expected in names
    for expected in ("semisup.kernels", "semisup.lapsvm.estimator",
                     "semisup.baselines.harmonic"):
        assert expected in DOCTEST_MODULES


@pytest.mark.parametrize("modname", DOCTEST_MODULES)
def test_module_doctests(modname):
    module = _import_or_skip(modname)
    tests = _doctests(module)
    # a prompt in the source that the finder does not see (e.g. in a comment or a private
    # helper's string) would be an example nobody runs
    assert tests, f"{modname} has '>>> ' in its source but no doctest the finder collects"
    runner = _Runner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                     verbose=False)
    report: list[str] = []
    state = np.random.get_state()
    try:
        for t in tests:
            runner.run(t, out=report.append)
    finally:
        np.random.set_state(state)
    if runner.failures and runner.missing:
        # an example that imports an optional dependency which is not installed
        pytest.skip(f"{modname}'s examples need {sorted(runner.missing)} (not installed)")
    assert runner.failures == 0, "".join(report)


class _Runner(doctest.DocTestRunner):
    """Records the non-semisup modules an example failed to import."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.missing: set[str] = set()

    def report_unexpected_exception(self, out, test, example, exc_info):
        exc = exc_info[1]
        if isinstance(exc, ImportError):
            name = (getattr(exc, "name", None) or "").split(".")[0]
            if name and name != "semisup":
                self.missing.add(name)
        super().report_unexpected_exception(out, test, example, exc_info)


_EXAMPLES = re.compile(r"^Examples\n-{8,}\n(?P<body>.*?)(?=^\S[^\n]*\n-{3,}\n|\Z)",
                       re.MULTILINE | re.DOTALL)


def _has_examples(cls) -> bool:
    """Whether the class docstring has a numpydoc "Examples" section with a doctest."""
    doc = inspect.getdoc(cls) or ""
    m = _EXAMPLES.search(doc)
    return bool(m and ">>> " in m.group("body"))


def test_examples_section_detection():
    class With:
        """Summary.

        Examples
        --------
        >>> 1 + 1
        2
        """

    class Without:
        """Summary.

        Notes
        -----
        Examples are elsewhere; ``>>> `` alone is not a section.
        """

    class Empty:
        """Summary.

        Examples
        --------
        See the gallery.

        Notes
        -----
        >>> 1
        1
        """

    assert _has_examples(With)
    assert not _has_examples(Without)
    assert not _has_examples(Empty)


def _estimator_params():
    for name, modname in ESTIMATORS.items():
        marks = ()
        if name in PENDING:
            marks = pytest.mark.xfail(strict=True, reason="Examples section being added")
        yield pytest.param(name, modname, marks=marks, id=name)


@pytest.mark.parametrize("name, modname", list(_estimator_params()))
def test_estimator_has_examples_section(name, modname):
    cls = getattr(importlib.import_module(modname), name)
    assert _has_examples(cls), f"{name}'s class docstring has no Examples section"
