"""Locating the shared benchmark data in tests (importable as ``shared_data``).

A test that needs a benchmark set calls :func:`require_dataset_dir` first (before anything
that resolves the data directory): without the data it skips, with a reason naming where it
looked and how to get the data, so that a fresh clone passes ``make test``; under
``CI=true`` missing data fails instead, so that CI (which has the data) never skips silently.
"""

import os

import pytest


def missing_data_reason(name: str) -> str | None:
    """Why data set folder ``name`` is unavailable, or None when it is present."""
    from semisup.datasets import _home

    try:
        base = _home.data_home()
    except FileNotFoundError:
        base = None
    if base is not None and os.path.isdir(os.path.join(base, name)):
        return None
    where = (os.path.join(base, name) if base is not None
             else f"no data directory: looked in {_home.searched_places()}")
    return f"data set folder {name!r} not found ({where}). {_home.HOW_TO_GET}"


def require_dataset_dir(name: str) -> str:
    """Path of a shared data set's folder; missing data skips, or fails under CI=true."""
    reason = missing_data_reason(name)
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: missing data is a failure)")
        pytest.skip(reason)
    from semisup.datasets import data_home

    return os.path.join(data_home(), name)
