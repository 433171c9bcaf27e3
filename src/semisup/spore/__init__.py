"""SPORE and MKL-SPORE (Shivanna, Chatterjee, Sankaran, Bhattacharyya & Bach, NIPS 2015).

``SPORE`` learns an orthonormal embedding of a graph (a kernel in the elliptope K(G)) by IIP,
an infeasible inexact projected subgradient method whose projections are FISTA runs;
``MultiGraphSPORE`` combines several graphs (eq. 17). Solvers: :mod:`.svm_dual`, :mod:`.iip`,
:mod:`.mkl`; the optimum through the labelled block in :mod:`.reduced`; cvxpy references in
:mod:`.sdp`.
"""

from .estimator import MultiGraphSPORE, SPORE
from .iip import IIPResult, iip_spore
from .mkl import MKLResult, mkl_spore
from .reduced import ReducedResult, spore_optimum

__all__ = ["SPORE", "MultiGraphSPORE", "iip_spore", "IIPResult", "mkl_spore", "MKLResult",
           "spore_optimum", "ReducedResult"]
