import os

import numpy as np
import pytest

#: Optional dependencies (top-level module -> the pyproject extra that installs it). A test
#: module or test whose OWN import of one of them fails is skipped with a reason, so that the
#: suite runs cleanly without the extras (``make test-min``). An import of one of them that
#: fails inside the library is not skipped: the library must work without its extras.
OPTIONAL_DEPENDENCIES = {
    "cvxpy": "test",
    "hypothesis": "test",
    "numba": "fast",
    "pynndescent": "fast",
    "matplotlib": "plot",
    "ckmeans": "bench",
    "pandas": None,  # used by some tests only; not a dependency of semisup
}

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def optional_import_skip_reason(exc: BaseException | None) -> str | None:
    """Skip reason when ``exc`` is a test's own failed import of an optional dependency.

    Returns None (do not skip) for any other exception, and for an optional module whose
    import failed inside the library rather than in a file of the test suite.
    """
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.split(".")[0]
    if top not in OPTIONAL_DEPENDENCIES:
        return None
    # The innermost frame that is not importlib's own is the one holding the import.
    importer = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith("<frozen"):
            importer = filename
        tb = tb.tb_next
    if importer is None or not os.path.abspath(importer).startswith(_TESTS_DIR + os.sep):
        return None
    extra = OPTIONAL_DEPENDENCIES[top]
    how = f"pip install 'semisup[{extra}]'" if extra else f"pip install {top}"
    return f"optional dependency {top!r} is not installed ({how})"


class _Module(pytest.Module):
    """A test module that skips, with a reason, when it imports a missing optional package."""

    def collect(self):
        try:
            return list(super().collect())
        except self.CollectError as err:
            reason = optional_import_skip_reason(err.__cause__)
            if reason is None:
                raise
            pytest.skip(f"{self.path.name}: {reason}", allow_module_level=True)


def pytest_pycollect_makemodule(module_path, parent):
    return _Module.from_parent(parent, path=module_path)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    # The same for an import inside a test function.
    try:
        return (yield)
    except ModuleNotFoundError as exc:
        reason = optional_import_skip_reason(exc)
        if reason is None:
            raise
        pytest.skip(reason)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
