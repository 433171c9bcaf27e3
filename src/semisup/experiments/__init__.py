"""One module per paper: the protocols that reproduce its tables, figures and benchmarks.

Each module listed in :data:`PAPERS` provides

``add_reproduce_parser(subparsers)``
    add its ``semisup reproduce <name>`` sub-command (``set_defaults(func=...)``);
``add_bench_parser(subparsers)``
    add its ``semisup bench <name>`` sub-command;
``demo_rows(verbose=False) -> list[dict]``
    train its methods on built-in data for ``semisup demo``; each row has the keys
    ``method``, ``data``, ``metric``, ``score`` and ``seconds``.
"""

from __future__ import annotations

import importlib

#: command name -> module implementing it
PAPERS = {
    "lass": "semisup.experiments.lass",
    "lapsvm": "semisup.experiments.lapsvm",
    "clustering": "semisup.experiments.clustering",
    "completion": "semisup.experiments.completion",
    "spore": "semisup.experiments.spore",
    "foundation": "semisup.experiments.foundation",
}


def load_papers():
    """Import each paper module that exists, in :data:`PAPERS` order."""
    mods = {}
    for name, path in PAPERS.items():
        try:
            mods[name] = importlib.import_module(path)
        except ModuleNotFoundError as exc:
            if exc.name != path:
                raise
    return mods
