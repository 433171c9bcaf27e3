"""Importing dask on demand, and recognising dask arrays without importing dask."""

from __future__ import annotations

import importlib

EXTRA_HINT = "pip install 'semisup[dask]'"


def require_dask(purpose: str = "distributed computation"):
    """``dask.array``, or ImportError naming the extra ``[dask]`` that installs it.

    Examples
    --------
    >>> from semisup.distributed import require_dask
    >>> da = require_dask("a distributed kNN graph")  # doctest: +SKIP
    """
    try:
        importlib.import_module("dask")
        return importlib.import_module("dask.array")
    except ImportError as exc:
        raise ImportError(f"dask is needed for {purpose} but is not installed. Install it "
                          f"with: {EXTRA_HINT}") from exc


def is_dask_array(x) -> bool:
    """Whether ``x`` is a ``dask.array.Array`` (checked without importing dask)."""
    return type(x).__module__.split(".")[:2] == ["dask", "array"] and hasattr(x, "chunks")
