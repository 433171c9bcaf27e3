"""The contract every public estimator follows.

* **Labels.** ``-1`` marks an unlabeled point (:func:`semisup._validation.check_semisup_labels`);
  multi-label targets are ``{0, 1}`` indicator matrices with ``-1`` for an unobserved entry
  (:func:`semisup._validation.check_multilabel_target`). Regressors, whose targets can be
  ``-1``, mark an unlabeled target with NaN.
* **Parameters** are validated declaratively by scikit-learn's ``_parameter_constraints``
  machinery (``@_fit_context``), so an error names the public parameter and its allowed
  values; graph parameters come from :mod:`semisup.graph.frontend`.
* **Fitted attributes.** ``transduction_`` holds the labels of the training points of every
  semi-supervised or transductive estimator, ``classes_`` the classes, ``n_iter_`` an int.
* **Methods.** ``fit``, ``predict``, ``fit_predict`` (returns ``transduction_``) and
  ``score`` (accuracy over the labeled entries of ``y``: ``-1`` entries are ignored).
  Transductive estimators (no out-of-sample rule) predict only the points they were fitted on.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context  # noqa: F401  (re-exported for the estimators)
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import UNLABELED, _labeled_mask

__all__ = ["SemiSupervisedMixin", "TransductiveMixin", "UNLABELED", "_fit_context",
           "labeled_accuracy"]


def _store_init_params(estimator, params) -> None:
    """Store each argument of an ``__init__`` (its ``locals()``) unchanged on ``estimator``.

    scikit-learn's rule: ``__init__`` keeps its parameters as given and does nothing else
    (validation happens in ``fit``). One line in every ``__init__`` instead of a block of
    ``self.x = x`` that repeats the graph parameters in each graph estimator.
    """
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


def labeled_accuracy(y_true, y_pred) -> float:
    """Accuracy over the labeled entries of ``y_true`` (``-1`` entries are ignored).

    For multi-label indicator targets the mean over observed entries.
    """
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        if y_true.ndim == 2 and y_true.shape[1] == 1 and y_pred.ndim == 1:
            y_true = y_true.ravel()
        else:
            raise ValueError(f"y has shape {y_true.shape} but the predictions have shape "
                             f"{y_pred.shape}.")
    if y_true.ndim == 1:
        mask = _labeled_mask(y_true)
    else:
        mask = y_true != UNLABELED
    if not mask.any():
        raise ValueError("y has no labeled entry to score (all are -1).")
    return float(np.mean(y_true[mask] == y_pred[mask]))


class SemiSupervisedMixin:
    """Mixin of semi-supervised classifiers: ``fit_predict`` and a labeled-only ``score``.

    Place it first among the bases (before ``ClassifierMixin``/``BaseEstimator``), as
    scikit-learn's mixins are.
    """

    _estimator_type = "classifier"

    def fit_predict(self, X, y, **fit_params):
        """Fit on labeled and unlabeled points and return ``transduction_``."""
        return self.fit(X, y, **fit_params).transduction_

    def score(self, X, y, sample_weight=None):
        """Accuracy of ``predict(X)`` over the labeled entries of ``y`` (``-1`` ignored)."""
        y = np.asarray(y)
        y_pred = self.predict(X)
        if sample_weight is None:
            return labeled_accuracy(y, y_pred)
        mask = _labeled_mask(y) if y.ndim == 1 else np.all(y != UNLABELED, axis=1)
        w = np.asarray(sample_weight, dtype=np.float64)[mask]
        hit = (y[mask] == y_pred[mask]) if y.ndim == 1 else \
            np.all(y[mask] == y_pred[mask], axis=1)
        return float(np.average(hit, weights=w))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        tags.target_tags.required = True
        if tags.classifier_tags is None:
            from sklearn.utils import ClassifierTags
            tags.classifier_tags = ClassifierTags()
        return tags


class TransductiveMixin(SemiSupervisedMixin):
    """Estimators that label only the points they were fitted on (no out-of-sample rule).

    ``predict(X)`` accepts exactly the ``X`` passed to ``fit`` (checked) and returns
    ``transduction_``. Subclasses set ``self._fit_X_fingerprint = _fingerprint(X)`` in
    ``fit``.
    """

    def _check_same_points(self, X):
        check_is_fitted(self, "transduction_")
        if X is None:
            return
        self._validate_query(X)
        if _fingerprint(X) != self._fit_X_fingerprint:
            raise ValueError(f"{type(self).__name__} is transductive: it labels only the "
                             "points it was fitted on, and this X is not the X passed to "
                             "fit. Fit on all points (labeled and unlabeled, -1) instead; "
                             "transduction_ holds their labels.")

    def _validate_query(self, X):
        """The checks any estimator makes on ``X`` at predict time (2-D, finite, as many
        features as in ``fit``), so that their errors read the same here."""
        if isinstance(X, (list, tuple)) and X and (sp.issparse(X[0]) or np.ndim(X[0]) == 2):
            return                                  # several views: checked by the digest
        allow_nan = self.__sklearn_tags__().input_tags.allow_nan
        validate_data(self, X, reset=False, accept_sparse=True, dtype=None,
                      ensure_all_finite="allow-nan" if allow_nan else True,
                      ensure_min_samples=1)

    def decision_function(self, X=None):
        """Scores of the fitted points, ``decision_scores_`` (``X``: the ``X`` of ``fit``).

        For two classes positive means ``classes_[1]``; the sign gives ``transduction_``
        except where an estimator keeps the given labels of labelled points and on exact
        ties (score 0: the larger labelled class).
        """
        self._check_same_points(X)
        return self.decision_scores_.copy()

    def predict(self, X=None):
        """Labels of the fitted points (``X`` must be the ``X`` passed to ``fit``)."""
        self._check_same_points(X)
        return self.transduction_.copy()


def _fingerprint(X):
    """A cheap digest identifying an input (shape and contents), dense, sparse or a list."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    items = X if isinstance(X, (list, tuple)) and X and (
        sp.issparse(X[0]) or np.ndim(X[0]) == 2) else [X]
    for A in items:
        if sp.issparse(A):
            A = sp.csr_matrix(A, dtype=np.float64, copy=True)
            A.sum_duplicates()
            A.eliminate_zeros()
            parts = (np.asarray(A.shape), A.indptr, A.indices, A.data)
        else:
            a = np.asarray(A)
            if a.dtype.kind == "O":
                a = a.astype(np.float64)
            parts = (np.asarray(a.shape), np.ascontiguousarray(a, dtype=np.float64))
        for p in parts:
            h.update(np.ascontiguousarray(p).tobytes())
    return h.hexdigest()
