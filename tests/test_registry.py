"""The method registry is the one list of the public estimators, and it is complete.

Every public estimator is in :data:`semisup._registry.REGISTRY`; every entry is exported
from ``semisup``, documented (the API reference is generated from the registry, a user-guide
page and gallery example name it), in the common, docstring and defaults tests, and its
``reproduce`` / ``bench`` commands exist.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator, is_classifier, is_regressor

import semisup
from semisup._registry import KINDS, REGISTRY, SETTINGS, TARGETS, by_name
from semisup.experiments import BENCH, REPRODUCE
from semisup.graph.frontend import GraphMixin

ROOT = Path(__file__).resolve().parents[1]
IDS = [m.name for m in REGISTRY]


def _test_module(name):
    """A sibling test module, imported by path (the tests are not a package)."""
    spec = importlib.util.spec_from_file_location(f"_registry_check_{name}",
                                                  ROOT / "tests" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod                  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_every_public_estimator_is_in_the_registry():
    exported = {n for n in semisup.__all__
                if isinstance(getattr(semisup, n), type)
                and issubclass(getattr(semisup, n), BaseEstimator)}
    assert exported == set(IDS)
    assert len(IDS) == len(set(IDS)), "an estimator is listed twice"


@pytest.mark.parametrize("method", REGISTRY, ids=IDS)
def test_entry_is_exported_and_describes_its_estimator(method):
    cls = getattr(semisup, method.name)
    assert cls is method.load() and cls.__module__.startswith(method.module)
    assert by_name(method.name) is method
    assert method.kind in KINDS and method.setting in SETTINGS
    assert method.targets and set(method.targets) <= set(TARGETS)
    assert method.takes_graph == issubclass(cls, GraphMixin)
    assert (method.setting == "transductive") == hasattr(cls, "_check_same_points")
    est = cls(**method.check_params)
    assert is_regressor(est) == (method.setting == "regression")
    assert is_classifier(est) == (method.setting != "regression")
    assert set(method.check_grid) <= set(est.get_params()) and len(method.check_grid) == 1


@pytest.mark.parametrize("method", REGISTRY, ids=IDS)
def test_entry_is_documented(method):
    guide = ROOT / "docs" / "user_guide" / f"{method.guide}.rst"
    assert guide.exists(), f"no user-guide page {guide}"
    assert method.name in guide.read_text(encoding="utf-8"), f"{guide} never names it"
    toctree = (ROOT / "docs" / "user_guide" / "index.rst").read_text(encoding="utf-8")
    assert re.search(rf"^\s+{method.guide}$", toctree, re.MULTILINE), \
        f"{method.guide} is not in the user guide's toctree"
    if method.example is not None:
        example = ROOT / "examples" / f"{method.example}.py"
        assert example.exists(), f"no gallery example {example}"
        assert method.name in example.read_text(encoding="utf-8")


def test_api_reference_lists_the_registry():
    """docs/conf.py writes the estimators' list (api/_gen_semisup.rst) from the registry, and
    the API index includes it."""
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    assert "ESTIMATORS = [m.name for m in REGISTRY]" in conf
    index = (ROOT / "docs" / "api" / "index.rst").read_text(encoding="utf-8")
    assert ".. include:: _gen_semisup.rst" in index


@pytest.mark.parametrize("method", REGISTRY, ids=IDS)
def test_entry_commands_exist(method):
    assert set(method.reproduce) <= set(REPRODUCE), method.reproduce
    assert set(method.bench) <= set(BENCH), method.bench


def test_every_entry_is_in_the_common_docstring_and_defaults_tests():
    common = _test_module("test_common")
    assert [c.name for c in common.CASES] == IDS
    docs = _test_module("test_docstring_examples")
    assert set(docs.ESTIMATORS) == set(IDS)
    defaults = _test_module("test_defaults")
    covered = {E.__name__ for E, _ in defaults.SEMI} | defaults.DEDICATED
    assert covered == set(IDS), set(IDS) ^ covered


def test_contributing_page_lists_the_registry_and_is_linked():
    page = (ROOT / "docs" / "contributing.rst").read_text(encoding="utf-8")
    assert "src/semisup/_registry.py" in page
    places = re.findall(r"^\d+\. ", page, re.MULTILINE)
    assert 0 < len(places) <= 8, "adding a method must touch at most 8 places"
    index = (ROOT / "docs" / "index.rst").read_text(encoding="utf-8")
    assert re.search(r"^\s+contributing$", index, re.MULTILINE)
