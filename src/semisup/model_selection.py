"""Model selection for semi-supervised data: transductive cross-validation.

scikit-learn's splitters hold out *points*, and its default scoring counts the unlabeled
points (``-1``) as errors. A semi-supervised or transductive fit should instead see every
point, labeled or not, while part of the *labels* is hidden and scored. Three pieces make
``GridSearchCV`` (and ``cross_val_score``) do that for every semisup estimator without a
hand-written loop::

    from sklearn.model_selection import GridSearchCV
    from semisup.model_selection import TransductiveSplit, labeled_scorer, transductive_target

    search = GridSearchCV(HarmonicFunction(), {"n_neighbors": [5, 10, 20]},
                          cv=TransductiveSplit(n_splits=5, random_state=0),
                          scoring=labeled_scorer())
    search.fit(X, transductive_target(y))       # y: class labels, -1 unlabeled

* :class:`TransductiveSplit` splits the *labeled* points into folds. Each training set is
  every point; the held-out labeled points appear in it through negative indices
  (``i - n``), which select the same rows of ``X``.
* :func:`transductive_target` wraps ``y`` so that indexing it with such a training set
  returns the held-out labels as ``-1`` (NaN for a regression target, ``-1`` rows for a
  multi-label matrix): the fit sees all points and none of the held-out labels.
* :func:`labeled_scorer` scores only labeled entries; for the held-out points of a
  transductive split it reads the fitted estimator's ``transduction_`` (the fit saw them),
  so transductive estimators without an out-of-sample rule are scored too. Through a
  :class:`~sklearn.pipeline.Pipeline` it reads the final step's ``transduction_``.

The final refit (``refit=True``) sees all labels. Pass ``error_score="raise"`` to
``GridSearchCV`` / ``cross_val_score``: scikit-learn turns any exception of a fit or a scorer
into a NaN score and a warning by default, and a search whose every score is NaN returns its
first candidate as ``best_params_``.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import is_regressor
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score, r2_score
from sklearn.model_selection import BaseCrossValidator, KFold, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target

from ._validation import UNLABELED, _labeled_mask

__all__ = ["TransductiveSplit", "TransductiveTarget", "transductive_target",
           "labeled_scorer"]


def _hidden_value(y):
    """What a hidden label becomes: -1, or NaN for a continuous (regression) target."""
    if y.ndim == 1 and y.dtype.kind == "f":
        lab = y[~np.isnan(y)]
        lab = lab[lab != UNLABELED] if lab.size else lab
        if lab.size and type_of_target(lab) == "continuous":
            return np.nan
    return UNLABELED


class TransductiveTarget(np.ndarray):
    """``y`` that hides the labels a :class:`TransductiveSplit` training set holds out.

    Indexing with an integer array whose negative entries ``i - n`` alias row ``i`` returns
    a plain array with those rows' labels hidden (-1, or NaN for a regression target).
    Indexing with non-negative integers returns a ``TransductiveTarget`` that remembers the
    positions (``positions``) among the ``n_total`` rows of the whole target, so
    :func:`labeled_scorer` can read them from ``transduction_``. Everything else behaves as
    the plain array.
    """

    def __new__(cls, y):
        arr = np.asarray(y)
        if arr.dtype.kind == "U":      # room for "-1"
            arr = arr.astype(object)
        obj = arr.view(cls)
        obj.positions = None
        obj.n_total = arr.shape[0] if arr.ndim else None
        obj.hidden_value = _hidden_value(arr)
        return obj

    def __array_finalize__(self, obj):
        self.positions = getattr(obj, "positions", None)
        self.n_total = getattr(obj, "n_total", None)
        self.hidden_value = getattr(obj, "hidden_value", UNLABELED)

    def __reduce__(self):   # pickles (joblib workers) as what it is
        return (TransductiveTarget, (self.view(np.ndarray),))

    def __getitem__(self, key):
        base = self.view(np.ndarray)
        k = key[0] if isinstance(key, tuple) and len(key) == 2 and key[1] is Ellipsis \
            else key
        if isinstance(k, (list, np.ndarray)):
            k = np.asarray(k)
            if k.dtype.kind in "iu" and k.ndim == 1:
                out = np.array(base[k])
                hidden = k < 0
                if hidden.any():
                    if out.dtype.kind in "iub" and isinstance(self.hidden_value, float):
                        out = out.astype(np.float64)
                    out[hidden] = self.hidden_value
                    return out
                out = out.view(TransductiveTarget)
                # positions among the whole target's rows, also when indexed twice
                out.positions = k.copy() if self.positions is None else self.positions[k]
                out.n_total = self.n_total
                out.hidden_value = self.hidden_value
                return out
        return base[key]


def transductive_target(y) -> TransductiveTarget:
    """Wrap ``y`` (labels with -1 unlabeled) for :class:`TransductiveSplit`; see the module."""
    return TransductiveTarget(y)


class TransductiveSplit(BaseCrossValidator):
    """K-fold over the labeled points; every training set holds every point.

    Parameters
    ----------
    n_splits : int, default=5
        Folds of the labeled points (at least 2).
    stratify : bool, default=True
        Stratify the folds by class when every class has at least ``n_splits`` labels
        (classification targets only); otherwise plain K-fold.
    shuffle : bool, default=True
    random_state : int, RandomState or None, default=None

    Notes
    -----
    ``split(X, y)`` yields ``(train, test)``: ``test`` the held-out labeled points,
    ``train`` every index with the held-out ones written ``i - n`` (the same rows of ``X``).
    ``y`` must be wrapped with :func:`transductive_target` so that the fit does not see the
    held-out labels; a plain ``y`` is refused.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.model_selection import TransductiveSplit, transductive_target
    >>> y = transductive_target([0, 1, -1, 0, 1, -1, 0, 1])
    >>> train, test = next(TransductiveSplit(n_splits=2, random_state=0).split(None, y))
    >>> np.sort(np.where(train < 0, train + 8, train)).tolist()   # every point
    [0, 1, 2, 3, 4, 5, 6, 7]
    >>> bool(np.all(y[train][test] == -1))                         # held-out labels hidden
    True
    """

    def __init__(self, n_splits=5, *, stratify=True, shuffle=True, random_state=None):
        if not isinstance(n_splits, numbers.Integral) or n_splits < 2:
            raise ValueError(f"n_splits must be an integer >= 2, got {n_splits!r}.")
        self.n_splits = n_splits
        self.stratify = stratify
        self.shuffle = shuffle
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.n_splits

    def split(self, X, y, groups=None):
        if y is None:
            raise ValueError("TransductiveSplit needs y (labels, -1 unlabeled).")
        if not isinstance(y, TransductiveTarget):
            raise TypeError("TransductiveSplit hides held-out labels through the target: pass "
                            "y wrapped as semisup.model_selection.transductive_target(y) "
                            "(a plain y would let every fit see the held-out labels).")
        arr = y.view(np.ndarray)
        n = arr.shape[0]
        if arr.ndim == 1:
            labeled = (~np.isnan(arr) if arr.dtype.kind == "f"
                       and isinstance(y.hidden_value, float) else _labeled_mask(arr))
        else:
            labeled = np.any(arr != UNLABELED, axis=1)
        lab = np.flatnonzero(labeled)
        if lab.size < self.n_splits:
            raise ValueError(f"y has {lab.size} labeled point(s), fewer than "
                             f"n_splits={self.n_splits}.")
        rs = check_random_state(self.random_state) if self.shuffle else None
        kw = dict(n_splits=self.n_splits, shuffle=self.shuffle, random_state=rs)
        strata = arr[lab] if arr.ndim == 1 else None
        if (self.stratify and strata is not None and not isinstance(y.hidden_value, float)
                and np.unique(strata, return_counts=True)[1].min() >= self.n_splits):
            folds = StratifiedKFold(**kw).split(lab, strata.astype(str))
        else:
            folds = KFold(**kw).split(lab)
        for _, held in folds:
            test = np.sort(lab[held])
            train = np.arange(n)
            train[test] -= n
            yield train, test


_METRICS = {
    "accuracy": accuracy_score,
    "balanced_accuracy": balanced_accuracy_score,
    "f1_macro": lambda t, p: f1_score(t, p, average="macro"),
    "r2": r2_score,
}


def _final_step(estimator):
    """The estimator that was fitted on the labels: the last step of a (nested) Pipeline."""
    while isinstance(estimator, Pipeline):
        estimator = estimator.steps[-1][1]
    return estimator


class _LabeledScorer:
    def __init__(self, metric):
        self.metric = metric

    @staticmethod
    def _predictions(estimator, X, y):
        """The predictions to score: ``transduction_`` at the held-out positions when the
        fit saw every point (the final step's, through a Pipeline: a transduction needs no
        transform of ``X``), else ``estimator.predict(X)`` (through the Pipeline's
        transforms)."""
        positions = getattr(y, "positions", None)
        n_total = getattr(y, "n_total", None)
        final = _final_step(estimator)
        trans = getattr(final, "transduction_", None)
        if positions is None or trans is None:
            return estimator.predict(X)
        trans = np.asarray(trans)
        if len(trans) == n_total:
            return trans[positions]
        try:
            return estimator.predict(X)
        except Exception as exc:
            raise ValueError(
                f"labeled_scorer cannot score {type(final).__name__}: its transduction_ has "
                f"{len(trans)} rows, not the {n_total} of the target, so the fit did not see "
                "the held-out points (split with TransductiveSplit, whose training sets hold "
                f"every point), and predict on them failed: {exc}") from exc

    def _func(self, estimator):
        m = self.metric
        if m is None:
            m = "r2" if is_regressor(estimator) else "accuracy"
        return _METRICS[m] if isinstance(m, str) else m

    def __call__(self, estimator, X, y, sample_weight=None):
        y_pred = self._predictions(estimator, X, y)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        y_pred = np.asarray(y_pred)
        if y.ndim == 1:
            mask = ~np.isnan(y) if y.dtype.kind == "f" and is_regressor(estimator) \
                else _labeled_mask(y)
            if not mask.any():
                raise ValueError("the scored y has no labeled entry (all are -1).")
            return float(self._func(estimator)(y[mask], y_pred[mask]))
        mask = y != UNLABELED
        return float(self._func(estimator)(y[mask], y_pred.reshape(y.shape)[mask]))

    def __repr__(self):
        return f"labeled_scorer(metric={self.metric!r})"


def labeled_scorer(metric=None):
    """A scorer ``(estimator, X, y) -> float`` over the labeled entries of ``y`` only.

    Parameters
    ----------
    metric : {"accuracy", "balanced_accuracy", "f1_macro", "r2"}, callable or None
        ``metric(y_true, y_pred)``; None: accuracy for classifiers, R^2 for regressors.
        Multi-label targets are scored over their observed entries.

    Notes
    -----
    For the held-out points of a :class:`TransductiveSplit` (the fit saw them) the
    predictions are ``estimator.transduction_`` at their positions; for a
    :class:`~sklearn.pipeline.Pipeline`, its final step's ``transduction_`` (the rows the
    final step was fitted on are the rows of ``X``, transformed). Otherwise
    ``estimator.predict(X)``, through the pipeline's transforms. A transductive estimator
    that cannot be scored (fitted without the held-out points) raises a ``ValueError``
    saying so; pass ``error_score="raise"`` to the search, which otherwise turns it into a
    NaN score.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from semisup import HarmonicFunction
    >>> from semisup.model_selection import (TransductiveSplit, labeled_scorer,
    ...                                      transductive_target)
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 1, (30, 2)), rng.normal(5, 1, (30, 2))]
    >>> y = np.full(60, -1)
    >>> y[[0, 1, 2, 30, 31, 32]] = [0, 0, 0, 1, 1, 1]
    >>> search = GridSearchCV(make_pipeline(StandardScaler(), HarmonicFunction()),
    ...                       {"harmonicfunction__n_neighbors": [5, 10]},
    ...                       cv=TransductiveSplit(n_splits=3, random_state=0),
    ...                       scoring=labeled_scorer(), error_score="raise")
    >>> float(search.fit(X, transductive_target(y)).best_score_)
    1.0
    """
    if metric is not None and not callable(metric) and metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)}, a callable or None, "
                         f"got {metric!r}.")
    return _LabeledScorer(metric)
