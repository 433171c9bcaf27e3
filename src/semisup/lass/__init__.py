"""LASS: Laplacian-smoothed soft assignment of items to categories (Carreira-Perpiñán & Wang).

The paper: "LASS: a simple assignment model with Laplacian smoothing", AAAI 2014.

``LaplacianAssignment`` is the estimator; the solver functions work on arrays:
:func:`solve` (ADMM, or with ``solver="apg"`` -- the default for large graphs -- the
accelerated projected gradient of :mod:`semisup.lass.apg`), :func:`lass_multipliers` and
:func:`kkt_residual` (optimality certificate), :func:`objective`, :func:`lass_transform`
(out-of-sample mapping).
"""

from .admm import LassResult, auto_rho, closed_form_lam0, solve
from .estimator import LaplacianAssignment
from .kkt import kkt_residual, lass_multipliers, objective
from .outofsample import lass_transform

__all__ = [
    "LaplacianAssignment",
    "LassResult",
    "solve",
    "auto_rho",
    "closed_form_lam0",
    "lass_multipliers",
    "kkt_residual",
    "objective",
    "lass_transform",
]
