"""Transduction with matrix completion (Goldberg, Zhu, Recht, Xu & Nowak, NIPS 2010).

MC-b and MC-1 by fixed point continuation (:mod:`.fpc`), cross-validation along the
continuation path (:mod:`.model_selection`), the paper's impute-then-SVM baselines
(:mod:`.baselines`) and measures (:mod:`.metrics`).
"""

from .estimator import MatrixCompletionTransducer, pm_to_indicator
from .fpc import FPCPath, continuation_grid, fpc_path

__all__ = ["MatrixCompletionTransducer", "pm_to_indicator", "FPCPath", "continuation_grid",
           "fpc_path"]
