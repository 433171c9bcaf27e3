import os

import numpy as np
import pytest


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


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def require_dataset_dir(name: str):
    """Path of a shared data set; missing data fails under CI=true, else skips."""
    from semisup.datasets import data_home as _data_home  # noqa: WPS433
    try:
        base = _data_home()
    except Exception as exc:  # pragma: no cover - message path
        base, err = None, exc
    path = os.path.join(base, name) if base else None
    if path is None or not os.path.isdir(path):
        msg = f"data set {name!r} not found (looked in {base!r})"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return path
