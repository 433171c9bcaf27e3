"""semisup: learning from few labels with structure — graphs, low rank and clusters.

Public estimators are imported lazily so that ``import semisup`` stays cheap and a method's
optional dependencies are only needed when that method is used.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_PUBLIC = {
    "HarmonicFunction": "semisup.baselines.harmonic",
    "LaplacianAssignment": "semisup.lass",
    "LapSVM": "semisup.lapsvm",
    "LapRLS": "semisup.lapsvm",
    "ClusteredRegressor": "semisup.clustering",
    "ClusteredClassifier": "semisup.clustering",
    "MatrixCompletionTransducer": "semisup.completion",
    "SPORE": "semisup.spore",
    "MultiGraphSPORE": "semisup.spore",
    "PoissonLearning": "semisup.poisson",
    "PoissonMBO": "semisup.poisson",
    "load_dataset": "semisup.datasets",
    "knn_graph": "semisup.graph",
    "laplacian": "semisup.graph",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name):
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'semisup' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_PUBLIC))
