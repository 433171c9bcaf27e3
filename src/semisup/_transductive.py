"""Pieces shared by the transductive SVMs on a graph: SPORE and the graph-kernel baselines
(below both, so that a baseline never imports a method).

Both solve a bias-free SVM on the labelled vertices of a kernel that is block diagonal over
the graph's connected components, and label every vertex by its score. The SVM is binary;
more classes are solved one-vs-rest here, inside the estimators, so that ``-1`` stays the
unlabelled marker (scikit-learn's ``OneVsRestClassifier`` would read it as a class):
:func:`ovr_labels` gives one ``{-1, +1}`` column per binary task, the estimator solves each
column on the graph and kernel it built once, and :func:`transduce` turns the stacked scores
into labels by :func:`decide`, the one rule ``predict`` follows.
"""

from __future__ import annotations

import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils.validation import _num_samples

from ._validation import check_semisup_labels
from .graph import connected_components

__all__ = ["n_vertices", "n_tasks", "ovr_labels", "warn_unreached", "one_vs_rest", "decide",
           "transduce"]


def n_vertices(X):
    """Number of vertices read from the input alone (before any graph is built), or None."""
    try:
        return int(_num_samples(X))
    except TypeError:
        return None


def n_tasks(y, name):
    """Binary problems one-vs-rest needs for ``y`` (1 for two classes, else the number of
    classes), read from the labels alone (cheap: before any graph is built)."""
    _, classes, _ = check_semisup_labels(y, estimator=name)
    return 1 if classes.size == 2 else classes.size


def ovr_labels(y, n, name):
    """``(classes, labeled, signed)`` of the one-vs-rest problems of ``y`` (-1 unlabelled).

    ``signed`` has shape ``(n, T)``: for two classes ``T = 1`` and the column is ``+1`` for
    ``classes[1]``, ``-1`` elsewhere; for ``K > 2`` classes ``T = K`` and column ``k`` is
    ``+1`` for ``classes[k]``, ``-1`` elsewhere (unlabelled rows are read by no solver).
    ``labeled`` holds the indices of the labelled vertices. Errors name ``name``.
    """
    y, classes, labeled = check_semisup_labels(y, n, estimator=name)
    if classes.size == 2:
        signed = np.where(y == classes[1], 1.0, -1.0)[:, None]
    else:
        signed = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
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


def one_vs_rest(solve, signed, *, keep=None, n_jobs=1):
    """Run ``solve(column)`` on each one-vs-rest column of ``signed``; return the list of
    its results and the stacked scores: ``(n,)`` for one task, ``(n, T)`` for several.

    ``solve`` takes a ``{-1, +1}`` vector of shape ``(n,)`` and returns ``(scores,
    result)``; everything that does not depend on the labels (graph, kernel, start) is
    built once by the caller and closed over. ``keep(result)``, when given, is called in
    this process on each result in task order as soon as it is there (to move the arrays a
    task returns into the estimator's preallocated stack, so that no more than the running
    tasks' arrays are alive at once).

    ``n_jobs`` > 1 runs the tasks in that many worker processes (joblib's loky backend,
    whatever backend the caller has configured: threads would share one BLAS thread limit,
    which a task sets and lifts). The tasks are independent and each worker receives the
    same closure, so the results are those of the tasks run one after the other (to the
    bit for SPORE's tasks, which run under one BLAS thread in either place).
    """
    cols = [signed[:, t] for t in range(signed.shape[1])]
    if n_jobs > 1 and len(cols) > 1:
        runs = Parallel(n_jobs=min(n_jobs, len(cols)), backend="loky",
                        return_as="generator")(delayed(solve)(c) for c in cols)
    else:
        runs = map(solve, cols)
    out = []
    for s, r in runs:
        if keep is not None:
            keep(r)
        out.append((s, r))
    scores = [s for s, _ in out]
    return [r for _, r in out], scores[0] if len(out) == 1 else np.column_stack(scores)


def _class_counts(labeled, signed):
    """Labelled vertices per class (``classes`` order) from the one-vs-rest columns."""
    pos = (signed[labeled] > 0).sum(axis=0)
    return np.r_[labeled.size - pos[0], pos[0]] if signed.shape[1] == 1 else pos


def decide(scores, labeled, signed):
    """Class indices (into ``classes``) from scores: the one rule of ``predict``.

    Two classes (``scores`` of shape ``(n,)``): 1 where the score is positive, 0 where it
    is negative. More (``(n, K)``): the argmax. An exact tie (score 0, or several maxima)
    goes to the tied class with more labelled vertices, the later one in ``classes`` when
    they have as many (ties are common: a vertex the labels do not reach scores exactly
    0, spore.md §3.1). With two classes this is
    :func:`semisup.linalg.svm_dual.sign_predictions`. Labelled vertices are not clamped.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup._transductive import decide, ovr_labels
    >>> y = np.array([0, 1, 1, 2, -1, -1, -1])          # class 1 has the most labels
    >>> _, labeled, signed = ovr_labels(y, 7, "example")
    >>> scores = np.zeros((7, 3))
    >>> scores[4] = [0.9, 0.1, 0.2]                     # argmax
    >>> scores[5] = [0.5, 0.0, 0.5]                     # tie of classes 0 and 2 (one label each)
    >>> decide(scores, labeled, signed)[4:].tolist()    # row 6 unreached: all 0
    [0, 2, 1]
    """
    scores = np.asarray(scores, dtype=np.float64)
    counts = _class_counts(np.asarray(labeled), signed)
    if scores.ndim == 1:
        scores = np.c_[-scores, scores]
    tied = scores == scores.max(axis=1, keepdims=True)
    # among the tied maxima: most labelled vertices first, then the later class
    rank = np.lexsort((np.arange(counts.size), counts))
    key = np.empty_like(rank)
    key[rank] = np.arange(rank.size)
    return np.argmax(np.where(tied, key + 1, 0), axis=1)


def transduce(scores, classes, labeled, signed):
    """Labels of every vertex: :func:`decide` on ``scores``; labelled vertices keep their
    labels."""
    idx = decide(scores, labeled, signed)
    idx[labeled] = (signed[labeled, 0] > 0 if signed.shape[1] == 1
                    else np.argmax(signed[labeled], axis=1))
    return np.asarray(classes)[idx]
