"""Detecting the degenerate (near-constant) solutions of Laplace learning at low label rates.

With the labels fixed and the graph growing, the Laplace (harmonic) solution tends to a
constant away from the labelled points, with spikes at them (Nadler, Srebro & Zhou 2009;
Calder et al. 2020, §2): the decision then follows tiny fluctuations and one class takes
most points (HarmonicFunction is at chance on MNIST at one label per class). The measure here
is how much the scores vary over the unlabelled points, relative to how far the labelled
points' scores lie from them:

.. math:: \\rho = \\frac{\\operatorname{median}_{i \\in U} \\|F_i - c\\|_1}
                       {\\operatorname{median}_{j \\in L} \\|F_j - c\\|_1},
          \\qquad c = \\operatorname{median}_{i \\in U} F_i \\ \\text{(per column)}.

Measured with HarmonicFunction at its defaults (10-NN heat graph): sklearn digits 0.81 (10
labels per class), 0.51 (3), 0.28 (1); two moons 0.37 (5 labels per class), 0.53 (1); MNIST
subsets at one label per class 0.034 (5 000 points), 0.021 (20 000), at five 0.17 (5 000,
67 % accuracy) and 0.097 (20 000, 60 %); 4 000 points uniform in a 5-cube split in two, one
label per class, 0.008 (51 %). LaplacianAssignment gives the same values, LapRLS 0.44-0.92 on
the small sets. :data:`FLATNESS_WARN` lies between the two groups.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..engines import array_namespace

__all__ = ["DegenerateSolutionWarning", "FLATNESS_WARN", "MIN_UNLABELED", "flatness",
           "warn_if_flat"]

#: ``rho`` below which the solution is called degenerate (see the module's measurements)
FLATNESS_WARN = 0.1
#: fewer unlabelled points than this: no check (the degeneracy is a large-graph effect)
MIN_UNLABELED = 500


class DegenerateSolutionWarning(UserWarning):
    """A graph solution is nearly constant away from the labelled points."""


def flatness(F, labeled) -> float:
    """The ratio ``rho`` of the module docstring (``inf`` when it is undefined).

    Parameters
    ----------
    F : array of shape (n,) or (n, K)
        Scores of the points (label distributions, assignments or decision values), numpy
        or of an engine's array type (e.g. CuPy: computed where ``F`` lives; only the two
        medians come back).
    labeled : ndarray of bool of shape (n,)
    """
    xp = array_namespace(F)
    F = xp.asarray(F, dtype=xp.float64)
    F = F[:, None] if F.ndim == 1 else F
    labeled = np.asarray(labeled, dtype=bool)
    if labeled.all() or not labeled.any():
        return np.inf
    lab = xp.asarray(labeled)
    c = xp.median(F[~lab], axis=0)
    r = xp.abs(F - c).sum(axis=1)
    spike = float(xp.median(r[lab]))
    return float(xp.median(r[~lab])) / spike if spike > 0 else np.inf


def warn_if_flat(F, labeled, estimator: str, *, stacklevel: int = 4) -> float:
    """Warn (once per call) when ``F`` is degenerate on a large graph; return ``rho``.

    The check runs when there are at least :data:`MIN_UNLABELED` unlabelled points and
    warns when ``rho < FLATNESS_WARN``, naming PoissonLearning. Cost O(n K).
    """
    labeled = np.asarray(labeled, dtype=bool)
    if int((~labeled).sum()) < MIN_UNLABELED:
        return np.inf
    rho = flatness(F, labeled)
    if rho < FLATNESS_WARN:
        warnings.warn(
            f"{estimator}: the solution is nearly constant away from the labelled points "
            f"(spread ratio {rho:.3g} < {FLATNESS_WARN}): with {int(labeled.sum())} labels "
            f"on {labeled.size} points, Laplace-type learning degenerates and its decisions "
            "follow small fluctuations. Use semisup.PoissonLearning (or PoissonMBO), made "
            "for very few labels, or label more points.", DegenerateSolutionWarning,
            stacklevel=stacklevel)
    return rho
