"""Benchmark data: loaders for the shared data sets and synthetic generators.

``load_dataset(name)`` parses the original files under the data directory (see
:func:`data_home`); ``fetch(name)`` downloads them from their public sources, checking every
file's sha256; ``list_datasets()`` says which sets are present without parsing;
:mod:`semisup.datasets.synthetic` generates the papers' toy data.
"""

from __future__ import annotations

from ._fetch import FetchError, describe_sources, fetch
from ._home import data_home
from ._load import list_datasets, load_dataset
from .preprocessing import equalize_histograms
from .registry import REGISTRY, names

__all__ = ["REGISTRY", "FetchError", "data_home", "describe_sources", "equalize_histograms",
           "fetch", "list_datasets", "load_dataset", "names"]
