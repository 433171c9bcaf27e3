"""Poisson learning and Poisson-MBO (Calder, Cook, Thorpe & Slepčev, ICML 2020)."""

from .estimator import PoissonLearning, PoissonMBO
from .mbo import poisson_mbo, volume_projection
from .solve import poisson_solve, poisson_source

__all__ = ["PoissonLearning", "PoissonMBO", "poisson_solve", "poisson_source", "poisson_mbo",
           "volume_projection"]
