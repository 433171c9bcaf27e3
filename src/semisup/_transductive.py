"""Pieces shared by the transductive binary SVMs on a graph: SPORE and the graph-kernel
baselines (below both, so that a baseline never imports a method).

Both solve a bias-free SVM on the labelled vertices of a kernel that is block diagonal over
the graph's connected components, and label every vertex by the sign of its score.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils.validation import _num_samples

from ._validation import check_semisup_labels
from .graph import connected_components
from .linalg.svm_dual import sign_predictions

__all__ = ["n_vertices", "binary_labels", "warn_unreached", "transduce"]


def n_vertices(X):
    """Number of vertices read from the input alone (before any graph is built), or None."""
    try:
        return int(_num_samples(X))
    except TypeError:
        return None


def binary_labels(y, n, name):
    """``(classes, labeled, signed)``: the two classes, the labelled vertices' indices and
    ``+1`` for ``classes[1]`` / ``-1`` elsewhere; an error naming ``name`` unless binary."""
    y, classes, labeled = check_semisup_labels(y, n, estimator=name)
    if classes.size != 2:
        raise ValueError(f"Only binary classification is supported: {name} is a binary "
                         f"method and y has {classes.size} classes ({classes.tolist()}) among "
                         "its labeled points. Use one-vs-rest for more.")
    signed = np.where(y == classes[1], 1.0, -1.0)
    return classes, np.flatnonzero(labeled), signed


def warn_unreached(A, labeled, name, stacklevel=4):
    """Warn about unlabelled vertices in components without a label; return their number.

    Every kernel these estimators use is block diagonal over the connected components
    (K(G) is zero on non-edges; (cI + L)^-1 too), so such a vertex gets the score 0: it
    carries no information and goes to the larger labelled class.
    """
    n_comp, comp = connected_components(A)
    has_label = np.bincount(comp[labeled], minlength=n_comp) > 0
    unlabeled = np.ones(A.shape[0], dtype=bool)
    unlabeled[labeled] = False
    k = int((unlabeled & ~has_label[comp]).sum())
    if k:
        warnings.warn(f"{k} unlabeled vertex(es) lie in graph components without any labeled "
                      f"vertex (isolated vertices included); {name} gives them the score 0 "
                      "and assigns them to the class with more labeled vertices. Label a "
                      "vertex in each component, or use a graph that connects them (e.g. "
                      "more n_neighbors).", UserWarning, stacklevel=stacklevel)
    return k


def transduce(scores, classes, labeled, signed):
    """Labels from scores (:func:`semisup.linalg.svm_dual.sign_predictions`: exact ties to
    the larger labelled class); labelled vertices keep their labels."""
    s = sign_predictions(scores, signed, labeled)
    s[labeled] = signed[labeled]
    return np.where(s > 0, classes[1], classes[0])
