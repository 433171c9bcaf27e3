"""The SVM dual of SPORE's eq. 3, now :mod:`semisup.linalg.svm_dual` (shared with the
graph-kernel baselines); this name stays for existing imports."""

from ..linalg.svm_dual import (SVMDualResult, sign_predictions, solve_box_qp, svm_dual,
                               svm_scores)

__all__ = ["SVMDualResult", "solve_box_qp", "svm_dual", "svm_scores", "sign_predictions"]
