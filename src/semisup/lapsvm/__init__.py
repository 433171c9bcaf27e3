"""Laplacian SVM and Laplacian RLS trained in the primal (Melacci & Belkin, JMLR 2011).

Estimators: :class:`LapSVM`, :class:`LapRLS`. Functional cores on a precomputed kernel ``K``
and Laplacian ``L``: :func:`objective`, :func:`gradient`, :func:`newton`, :func:`pcg`
(with :func:`exact_line_search`), :func:`laprls_closed_form`, :func:`dual_lapsvm`
(the original dual baseline), :func:`svm_fit` and :func:`rlsc_fit` (supervised baselines),
and the stopping rules in :mod:`semisup.lapsvm.stopping`.
"""

from .dual import dual_lapsvm
from .estimator import LapRLS, LapSVM
from .newton import laprls_closed_form, newton
from .objective import gradient, laplacian_operator, objective
from .pcg import exact_line_search, pcg
from .result import SolverResult
from .supervised import rlsc_fit, svm_fit

__all__ = [
    "LapSVM",
    "LapRLS",
    "objective",
    "gradient",
    "laplacian_operator",
    "newton",
    "laprls_closed_form",
    "pcg",
    "exact_line_search",
    "dual_lapsvm",
    "svm_fit",
    "rlsc_fit",
    "SolverResult",
]
