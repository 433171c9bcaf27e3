"""``MatrixCompletionTransducer``: multi-label transduction with missing features.

Goldberg, Zhu, Recht, Xu & Nowak, "Transduction with Matrix Completion: Three Birds with
One Stone" (NIPS 2010). Features and labels of all items are stacked into one matrix
assumed (nearly) low rank; the missing labels are read off its completion (MC-b, eq. 3, or
MC-1, eq. 4), solved by fixed point continuation (:mod:`semisup.completion.fpc`).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils import check_array
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_feature_names

from .._base import TransductiveMixin, _fingerprint, _fit_context
from .._progress import log
from .._validation import check_memory, check_multilabel_target, check_semisup_labels
from .fpc import continuation_grid, fpc_path
from .graph_features import spectral_features
from .model_selection import CV_PATIENCE, cv_label_errors, held_out_error, observed_sigma1

__all__ = ["MatrixCompletionTransducer", "pm_to_indicator"]

LAMBDA_GRID = (1e-3, 1e-2, 1e-1, 1.0)

#: largest |feature| accepted: squares and SVDs of larger values overflow float64
MAX_ABS_FEATURE = 1e100

#: dense float64 arrays of the size of X that a fit holds at once (the observed values, the
#: standardised copy, the iterate Z, its gradient and the shrinkage's work space), plus the
#: boolean mask of observed entries
N_DENSE_COPIES = 6


def _check_features_memory(shape):
    n, d = shape
    check_memory((N_DENSE_COPIES * 8.0 + 1.0) * n * d,
                 f"MatrixCompletionTransducer on a {n} x {d} feature matrix (dense, "
                 f"{N_DENSE_COPIES} float64 copies: the completion is dense)",
                 "Complete fewer items or features at a time (e.g. a random subset of the "
                 "features), or reduce the features first (e.g. TruncatedSVD).")


def _check_features(X, sparse_absent="zero"):
    """Items-as-rows features and their observed mask: NaN marks a missing entry; the
    absent entries of a sparse X are zeros (scikit-learn's reading) or, with
    ``sparse_absent="missing"``, missing."""
    if sp.issparse(X):
        _check_features_memory(X.shape)             # before densifying anything
        coo = sp.coo_matrix(X)
        n, d = coo.shape
        if np.isinf(coo.data).any():
            raise ValueError(f"X contains {int(np.isinf(coo.data).sum())} infinite "
                             "value(s); only NaN marks a missing feature.")
        Xd = np.zeros((n, d))
        M = np.full((n, d), sparse_absent == "zero")
        Xd[coo.row, coo.col] = coo.data
        M[coo.row, coo.col] = True
        nan = np.isnan(Xd)
        M[nan] = False
        Xd[nan] = 0.0
    else:
        Xa = np.asarray(X)
        if Xa.dtype.kind == "c":
            raise ValueError("Complex data not supported: X must be real (NaN marks a "
                             "missing feature).")
        if Xa.ndim != 2:
            raise ValueError(f"X must be 2-D (items x features), got shape {Xa.shape}.")
        _check_features_memory(Xa.shape)            # before the dense working copies
        # scikit-learn's checks and messages (shape, dtype), NaN allowed: a missing entry
        Xd = check_array(Xa, dtype=np.float64, copy=True, ensure_all_finite="allow-nan",
                         ensure_min_samples=2, input_name="X")
        if np.isinf(Xd).any():
            raise ValueError(f"X contains {int(np.isinf(Xd).sum())} infinite value(s); "
                             "only NaN marks a missing feature.")
        M = ~np.isnan(Xd)
        Xd[~M] = 0.0
    n, d = Xd.shape
    top = float(np.abs(Xd[M]).max()) if M.any() else 0.0
    if top > MAX_ABS_FEATURE:
        raise ValueError(f"X has entries up to {top:.3g}, too large for the squared loss and "
                         f"the SVDs in float64 (limit {MAX_ABS_FEATURE:g}): rescale X, e.g. "
                         "StandardScaler, before completing.")
    if n < 2 or d < 1:
        raise ValueError(f"X must have at least 2 items and 1 feature, got shape {(n, d)}.")
    empty_feat = np.flatnonzero(~M.any(axis=0))
    if empty_feat.size:
        raise ValueError(f"feature column(s) {empty_feat[:10].tolist()} have no observed "
                         "entry: nothing can be imputed for them; drop them"
                         + (" (the absent entries of a sparse X are missing with "
                            "sparse_absent='missing'; 'zero' reads them as zeros)."
                            if sp.issparse(X) and sparse_absent == "missing" else "."))
    return Xd, M


def _warn_empty_items(MX, MY):
    empty_item = np.flatnonzero(~MX.any(axis=1) & ~MY.any(axis=1))
    if empty_item.size:
        warnings.warn(f"{empty_item.size} item(s) (e.g. {empty_item[:5].tolist()}) have no "
                      "observed feature and no observed label: their predictions rest on "
                      "the bias only.", UserWarning, stacklevel=4)


def pm_to_indicator(Y_pm):
    """Convert the paper's coding (+1/-1, 0 or NaN unobserved) to the library's.

    Returns an int8 matrix with 1 (positive), 0 (negative) and -1 (unobserved), the target
    :class:`MatrixCompletionTransducer` takes.

    Examples
    --------
    >>> import numpy as np
    >>> pm_to_indicator(np.array([[1, -1], [0, np.nan]]))
    array([[ 1,  0],
           [-1, -1]], dtype=int8)
    """
    Y = np.asarray(Y_pm, dtype=np.float64)
    out = np.full(Y.shape, -1, dtype=np.int8)
    out[Y == 1] = 1
    out[Y == -1] = 0
    return out


def _warn_pm_coding(y):
    """The paper's coding (+1 / -1, 0 unobserved) uses the library's three values with
    other meanings; zeros outnumbering both other values fit it better than ours (there
    the unobserved entries, -1, are usually the most frequent)."""
    if y is None or sp.issparse(y):
        return
    ya = np.asarray(y)
    if ya.dtype.kind not in "iuf":
        return
    vals, counts = np.unique(ya, return_counts=True)
    if vals.size == 3 and np.array_equal(vals, [-1, 0, 1]) and counts[1] > counts[[0, 2]].max():
        warnings.warn(
            f"y holds -1, 0 and 1 with 0 the most frequent ({counts[1]} of {ya.size}); it is "
            "read as the library's coding (1 positive, 0 negative, -1 unobserved). If it is "
            "the paper's coding (+1 / -1, 0 unobserved), convert it with "
            "semisup.completion.pm_to_indicator(y) first.", UserWarning, stacklevel=4)


def _encode_target(y, n):
    """The estimator's target in the solver's +1/-1 coding.

    Returns ``(Y_pm (n, t), observed (n, t), classes, multilabel)``. A 1-D ``y`` holds class
    labels with -1 for unlabeled items: two classes are one task (``classes_[1]`` positive),
    more are one task per class (one-vs-rest). A 2-D ``y`` is a {0, 1} indicator matrix with
    -1 for unobserved entries (scikit-learn's multi-label format).
    """
    if y is not None and not sp.issparse(y):
        y = np.asarray(y)
    if y is not None and (sp.issparse(y) or (y.ndim == 2 and y.shape[1] > 1)):
        Y, observed = check_multilabel_target(y, n, name="y")
        return np.where(observed, 2.0 * Y - 1.0, 0.0), observed, np.array([0, 1]), True
    y, classes, labeled = check_semisup_labels(y, n, estimator="MatrixCompletionTransducer")
    idx = np.searchsorted(classes, y[labeled])
    if classes.size == 2:
        Ypm = np.zeros((n, 1))
        Ypm[labeled, 0] = np.where(idx == 1, 1.0, -1.0)
    else:
        Ypm = np.zeros((n, classes.size))
        Ypm[labeled] = -1.0
        Ypm[np.flatnonzero(labeled), idx] = 1.0
    return Ypm, Ypm != 0, classes, False


def _cv_possible(Y, MY, criterion, n_folds):
    """Whether the observed labels (items as rows) can be cross-validated: at least
    ``n_folds`` observed entries (per-entry folds), or two labelled items of every class
    (item folds: a class with one label has none left to train on when it is held out)."""
    if criterion == "entry":
        return int(MY.sum()) >= n_folds
    items = np.flatnonzero(MY.any(axis=1))
    cls = (Y[items, 0] > 0) if Y.shape[1] == 1 else np.argmax(Y[items], axis=1)
    return np.unique(cls, return_counts=True)[1].min() >= 2


def _constant_error(criterion, n_classes):
    """Held-out error of a constant prediction: 1/2 for the balanced error, about
    ``1 - 1/K`` for the argmax error on class-stratified folds."""
    return 0.5 if criterion == "balanced" else 1.0 - 1.0 / n_classes


def _fit_labels_stage(X, MX, Y, MY, variant, lam, grid, tune_mu, rng, fpc_kw):
    """Fallback for too few labels to cross-validate: the grid index of the largest
    ``mu`` whose completion has the lowest error on the observed labels themselves (the
    path stops once it reproduces all of them). The error is per entry, i.e. the sign of
    every one-vs-rest score: an argmax among label rows still near 0 reproduces the
    labels by margins of 1e-6 (digits, one label per class: every item one class)."""
    if not tune_mu:
        return grid.size - 1
    t = Y.shape[0]
    err = np.full(grid.size, np.inf)

    def record(k, mu, Z, b):
        err[k] = held_out_error(Z[:t] if b is None else Z[:t] + b[:, None], Y, MY)
        return err[k] == 0.0

    fpc_path(X, MX, Y, MY, variant=variant, lam=lam, mus=grid, callback=record,
             random_state=rng, **(fpc_kw | {"warn": False}))
    return int(np.argmin(err))


class MatrixCompletionTransducer(TransductiveMixin, TransformerMixin, ClassifierMixin,
                                 BaseEstimator, auto_wrap_output_keys=None):
    """Transductive multi-label classification and feature imputation by matrix completion.

    Completes the stacked matrix ``[Y; X]`` (MC-b, Goldberg et al. 2010, eq. 3) or
    ``[Y; X; 1^T]`` (MC-1, eq. 4) under a nuclear-norm penalty with logistic loss on the
    observed labels and squared loss on the observed features::

        MC-b:  min_{Z,b} mu ||Z||_* + lam/|Omega_Y| sum_{Omega_Y} log(1+exp(-y_ij(Z_ij+b_i)))
                                    + 1/(2|Omega_X|) sum_{Omega_X} (Z_{t+k,j} - x_kj)^2
        MC-1:  the same without b, with Z's last row fixed to 1^T.

    Solved by fixed point continuation along ``mu_1 = eta sigma_1 > ... > mu`` (by default
    with accelerated steps, ``solver="apg"``: same problem and same fixed point); with
    ``mu="cv"`` (and/or ``lam="cv"``) cross-validation on the observed entries picks the pair
    with the lowest held-out label error (spec §7), costing one continuation run per ``lam``
    per fold.

    Labels follow the library's convention: ``fit(X, y)`` with a 1-D ``y`` of class labels
    and ``-1`` for unlabeled items (two classes are one task; more are one task per class,
    one-vs-rest, and the label is the class of the largest score), or a 2-D ``{0, 1}``
    indicator matrix with ``-1`` for unobserved entries (several binary tasks). The paper's
    +1/-1 coding is internal (:func:`pm_to_indicator` converts data stored in it; a ``y``
    of -1, 0 and 1 whose most frequent value is 0 draws a warning naming it).

    The cross-validation criterion follows the target. An indicator matrix is scored per
    held-out entry (the paper's protocol). A 1-D ``y`` holds out whole labelled items,
    stratified by class, and scores the held-out items' labels: the argmax class for
    more than two classes, the balanced error (mean of the two classes' error rates) for
    two, so that predicting one class everywhere never wins. Each fold's path stops at
    the first of :data:`~semisup.completion.model_selection.CV_PATIENCE` successive
    values that did not improve on its best. When a class has a single label (nothing
    left to train on when it is held out) or an indicator matrix has fewer observed
    entries than folds, ``mu`` (and ``lam``) cannot be cross-validated: the fit then
    takes the largest ``mu`` of the path whose completion reproduces the most observed
    labels (all of them, usually), with ``lam = max(lam_grid)`` if ``lam="cv"``, and sets
    ``cv_fallback_``. The same fallback is taken when no ``mu`` did better on the held-out
    items than a constant prediction (balanced error 1/2, argmax error ``1 - 1/K``): the
    first stages, whose scores are all about 0, would otherwise win (moons with 3 labels
    per class: accuracy 0.500 in two of three draws, 0.81-0.87 with the fallback).
    The fallback is also taken when the stage CV chose does not classify the observed
    labels themselves better than a constant (breast cancer with 3 labels per class: a
    stage whose scores were all 0 won a six-label CV by chance; every item one class).

    Spectral features (``graph_features``, on by default for class labels): on its own the
    completion predicts each label linearly from the (denoised) features, and does not
    follow clusters that no linear function of ``X`` separates. The fit therefore appends
    ``k`` columns ``G`` to ``X``: the first nontrivial generalized eigenvectors of
    ``W v = lambda D v`` (Laplacian eigenmaps, Belkin & Niyogi 2003), ``W`` the symmetric
    10-nearest-neighbour heat-kernel graph of the rows of ``X`` (the graph estimators'
    default graph; :func:`~semisup.completion.graph_features.spectral_features`), built
    on the standardised rows when ``standardize=True`` and with NaN entries
    mean-imputed (an item with no observed feature has its spectral features
    unobserved too). Every column of ``G`` has the same spread and the block's total
    variance is ``graph_weight`` times that of ``d`` features of the median variance
    (``d`` when standardised), so that it weighs like the features and a feature of a
    much larger scale (raw wine's proline) keeps its weight. ``"auto"`` takes
    ``k = K - 1`` for ``K`` classes, the embedding in which spectral clustering separates
    ``K`` clusters (Ng, Jordan & Weiss 2001; the trivial eigenvector is the bias), and at
    most ``d``: the feature loss is averaged over the ``d + k`` columns, so at a fixed
    ``mu`` more spectral columns than features would more than halve its weight. An
    indicator ``y`` (several binary tasks, the paper's setting) gets none. ``features_``
    holds the ``d`` original features only. ``graph_features=None`` is the paper's
    method (``semisup reproduce completion`` uses it).

    Measured (``tools/mc_spectral_features.py`` in the source tree; mean accuracy on the
    unlabelled items over draws 0-2, ``random_state`` = the draw's seed;
    ``graph_features=None`` -> ``"auto"``; LabelSpreading with a kNN
    kernel and LogisticRegression on the labelled points beside; ``k = K``, ``2K`` and
    ``min(10, d)`` were measured too and lost on average, 0.847, 0.809 and 0.822 over
    the cells below against 0.860). Digits (all 1 797), 3 labels per class: 0.762 /
    0.777 / 0.757 -> 0.869 / 0.874 / 0.902 (LabelSpreading 0.854 / 0.861 / 0.878,
    LogisticRegression 0.777 / 0.805 / 0.770; without the spectral features the best of
    the whole path chosen on the test labels was 0.762 on draw 0); 1 label per class
    0.537 -> 0.782, 10: 0.885 -> 0.952 (LabelSpreading 0.638, 0.956). Binary digits ("0 or
    1" against the rest, 100 random labels): error 0.122 / 0.111 / 0.144 -> 0.085 / 0.069
    / 0.100 (LogisticRegression 0.129 / 0.113 / 0.146). Digits "3 against 8" with 1, 3, 5
    labels per class: 0.746 -> 0.983, 0.875 -> 0.953, 0.880 -> 0.922. Iris (raw), 1 and 3
    per class: 0.694 -> 0.909, 0.669 -> 0.957. Two moons (standardised / raw), 1 and 3:
    0.774 -> 0.990, 0.842 -> 0.994 / 0.678 -> 0.849, 0.834 -> 0.980. Wine: 0.756 -> 0.825,
    0.860 -> 0.955 / 0.739 -> 0.739, 0.639 -> 0.775. Breast cancer: 0.760 -> 0.831, 0.831
    -> 0.845 / 0.581 -> 0.564, 0.721 -> 0.718 (its raw kNN graph follows one feature of
    large scale; LogisticRegression 0.82-0.91 wins on both). ``make_classification(1500,
    241, n_informative=20)`` with 100 labels: 0.695 -> 0.718 (LogisticRegression 0.705),
    at about the same time.

    When to use it: multi-label data with missing features and labels (the paper's
    setting), where it imputes and classifies at once. On single-label classification
    with complete features a graph method (:class:`~semisup.HarmonicFunction`) is as
    accurate on clustered data and much faster.

    Which way ``lam`` goes: it weights the label loss against the feature loss and the
    nuclear norm, so a larger ``lam`` fits the observed labels harder and a smaller one
    lets the low-rank structure of the features decide (the opposite of LASS,
    :class:`~semisup.LaplacianAssignment`, whose ``lam`` weights the smoothness term:
    larger there means smoother, less bound to the labels).
    The default ``lam=0.01`` (the paper tunes it, see ``lam="cv"``; measured without the
    spectral features) beat ``lam=1`` on the
    binary digits task above (0.142 / 0.136 / 0.197 at ``lam=1``, below
    LogisticRegression in every draw) and on 7 of the 8 moons and wine cells of the
    defaults matrix (1 and 3 labels per class, raw and standardised; standardised wine
    with 3 per class: 0.860 against 0.909), and its larger steps (``tau_Z`` grows as
    ``1/lam``) make a fit several times faster (1 500 x 241: 7 s against about
    50 s at ``lam=1``). ``lam="cv"`` over ``lam_grid`` costs one path per value and fold;
    it gave 0.122 / 0.108 / 0.125 on binary digits, but with a few labels per class it
    chooses on a coarse held-out error (standardised wine: 0.88 against 0.86 at 3 labels
    per class, 0.73 against 0.76 at one, where the fallback takes the largest ``lam``).

    Parameters
    ----------
    variant : {"mc1", "mcb"}, default="mc1"
        All-ones row (MC-1) or explicit bias (MC-b).
    lam : float or "cv", default=0.01
        Label-loss weight ``lambda``: larger fits the observed labels harder (the opposite
        of LASS's ``lam``; see above); "cv" searches ``lam_grid``.
    mu : float or "cv", default="cv"
        Nuclear-norm weight; "cv" searches the continuation path down to ``mu_final``,
        each fold stopping once its held-out error has been worse than its best for
        :data:`~semisup.completion.model_selection.CV_PATIENCE` successive values.
    lam_grid : sequence of float, default=(1e-3, 1e-2, 1e-1, 1)
    mu_final : float, default=1e-5
        Last value of the continuation (and of the CV search).
    eta : float, default=0.25
        Continuation decay.
    tol : float, default=1e-5
        Relative objective change ending each stage.
    step_factor : float, default=3.8
        ``c`` in ``tau_Z = min(c |Omega_Y| / lam, |Omega_X|)``, ``tau_b = c |Omega_Y|/(lam n)``.
        With ``solver="apg"`` the steps are scaled down where the accelerated step needs it
        (:func:`~semisup.completion.fpc.accelerated_step_scale`): never for MC-1 with
        ``c < 4``; above, MC-1's fixed point (which depends on the step) moves with the scale.
    max_inner : int, default=10000
        Iteration cap per continuation stage.
    n_folds : int, default=5
    standardize : bool, default=False
        Centre and scale every feature by its observed entries before completing (spec §10
        default for real data); ``features_`` are returned in the original units.
    sparse_absent : {"zero", "missing"}, default="zero"
        What the absent entries of a sparse ``X`` mean: zeros, as for every scikit-learn
        estimator (a TF-IDF matrix is fully observed), or missing features (the stored
        entries, explicit zeros included, are the observed ones). NaN marks a missing
        entry in either case, and in a dense ``X``.
    graph_features : "auto", int or None, default="auto"
        Number ``k`` of spectral features (Laplacian eigenmaps of the kNN graph of ``X``)
        appended to the features before completing (see above); ``"auto"``: ``K - 1``
        for class labels of ``K`` classes (at most ``d``), none for an indicator ``y``;
        at most ``n - 2`` are used. ``None``: the features alone (the paper's method).
    graph_weight : float, default=1.0
        Total variance of the spectral block relative to that of ``d`` features of the
        median variance.
    svd : {"auto", "exact", "gram", "randomized"}, default="auto"
        Shrinkage method (:func:`semisup.linalg.lowrank.shrink`).
    solver : {"apg", "fpc"}, default="apg"
        ``"fpc"``: the paper's fixed point iteration. ``"apg"``: the same gradient-shrink
        step (same step sizes for MC-1) taken at a Nesterov-extrapolated point with
        adaptive restart (:func:`~semisup.completion.fpc_path`); it converges to the same
        MC-b optimum / MC-1 fixed point. On the 2 400 x 300 problem of
        ``semisup bench defaults`` (120 observed labels) the stage at ``mu = 9e-4`` stopped
        after 152 iterations instead of 1 726, closer to that stage's optimum (objective
        gap 8e-4 instead of 1.8e-2), and the default fit took 30-38 s instead of 536 s
        (docs/benchmarks/completion.md). Use ``"fpc"`` to reproduce the paper's runs.
    n_jobs : int, optional
        Parallel CV runs (joblib).
    random_state : None, int or Generator
        Seeds the CV folds and the randomized SVD.
    verbose : int, default=0
        1: one line per CV fold path and per refit stage on stderr; 2: also one line per
        stage of every fold path.

    Attributes
    ----------
    classes_ : ndarray
        The classes of a 1-D ``y``; ``[0, 1]`` for an indicator matrix.
    transduction_ : ndarray (n,) or (n, t)
        Completed labels of every fitted item: classes for a 1-D ``y``, a {0, 1} matrix for
        an indicator ``y`` (observed labels are replaced by the model's; use ``y`` itself
        where it is observed).
    decision_scores_ : ndarray (n,) or (n, t)
        Real-valued label scores ``Z_ij (+ b_i)`` (one column per class when there are more
        than two classes; positive means ``classes_[1]`` for two).
    features_ : ndarray (n, d)
        Denoised and imputed features.
    graph_features_ : ndarray (n, k) or None
        The appended spectral features, scaled as completed (None when none were).
    rank_ : int
        Rank of the completed ``Z``.
    bias_ : ndarray (t,) or None
        ``b`` of MC-b.
    lam_, mu_ : float
        The selected (or given) parameters.
    mu_path_ : ndarray
        Continuation values run in the refit (ending at ``mu_``).
    mu_grid_ : ndarray
        The shared CV grid (``mu_path_`` is its prefix).
    cv_errors_ : ndarray of shape ``(len(lam_grid), len(mu_grid_))`` or None
        Mean held-out label error (NaN where no fold reached that ``mu``).
    cv_criterion_ : {"entry", "argmax", "balanced"}
        The held-out label error used (see above).
    cv_fallback_ : bool
        True when ``mu`` / ``lam`` were to be cross-validated but the labels were too few,
        or no ``mu`` beat a constant prediction in CV (see above).
    n_iter_ : int
        FPC iterations of the refit, all stages.
    n_iter_per_stage_ : ndarray
        Iterations per refit stage.
    objective_path_ : ndarray
        Objective at the end of each refit stage.
    path_ : FPCPath
        The refit's full record.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names of ``X`` when it has string column names (a DataFrame).
    n_tasks_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import MatrixCompletionTransducer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 2)) @ rng.normal(size=(2, 20))    # rank-2 features
    >>> y = (X[:, 0] > 0).astype(int)
    >>> y_train = np.where(rng.random(100) < 0.3, y, -1)             # -1: unlabeled
    >>> mc = MatrixCompletionTransducer(mu=1e-3).fit(X, y_train)
    >>> float((mc.transduction_ == y).mean()) > 0.9
    True
    """

    _parameter_constraints = {
        "variant": [StrOptions({"mc1", "mcb"})],
        "lam": [Interval(Real, 0, None, closed="neither"), StrOptions({"cv"})],
        "mu": [Interval(Real, 0, None, closed="neither"), StrOptions({"cv"})],
        "lam_grid": ["array-like"],
        "mu_final": [Interval(Real, 0, None, closed="neither")],
        "eta": [Interval(Real, 0, 1, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        # c < 4 keeps the step sizes convergent
        "step_factor": [Interval(Real, 0, 4, closed="neither")],
        "max_inner": [Interval(Integral, 1, None, closed="left")],
        "n_folds": [Interval(Integral, 2, None, closed="left")],
        "standardize": ["boolean"],
        "sparse_absent": [StrOptions({"zero", "missing"})],
        "graph_features": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                           None],
        "graph_weight": [Interval(Real, 0, None, closed="neither")],
        "svd": [StrOptions({"auto", "exact", "gram", "randomized"})],
        "solver": [StrOptions({"apg", "fpc"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, variant="mc1", lam=1e-2, mu="cv", *, lam_grid=LAMBDA_GRID,
                 mu_final=1e-5, eta=0.25, tol=1e-5, step_factor=3.8, max_inner=10_000,
                 n_folds=5, standardize=False, sparse_absent="zero", graph_features="auto",
                 graph_weight=1.0, svd="auto", solver="apg", n_jobs=None,
                 random_state=None, verbose=0):
        self.variant = variant
        self.lam = lam
        self.mu = mu
        self.lam_grid = lam_grid
        self.mu_final = mu_final
        self.eta = eta
        self.tol = tol
        self.step_factor = step_factor
        self.max_inner = max_inner
        self.n_folds = n_folds
        self.standardize = standardize
        self.sparse_absent = sparse_absent
        self.graph_features = graph_features
        self.graph_weight = graph_weight
        self.svd = svd
        self.solver = solver
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = True       # NaN marks a missing feature
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_label = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Complete features and labels.

        Parameters
        ----------
        X : array-like or sparse matrix (n, d)
            Features, NaN for a missing one (the absent entries of a sparse matrix: see
            ``sparse_absent``).
        y : array-like (n,) or (n, t)
            Class labels with -1 for unlabeled items, or a {0, 1} indicator matrix with -1
            for unobserved entries.

        Returns
        -------
        self
        """
        if y is None:
            check_semisup_labels(y, estimator="MatrixCompletionTransducer")
        lam_grid = np.asarray(self.lam_grid, dtype=np.float64).ravel()
        if self.lam == "cv" and (lam_grid.size == 0 or not np.all(lam_grid > 0)):
            raise ValueError("lam_grid must hold positive numbers, got "
                             f"{list(self.lam_grid)!r}.")
        _check_feature_names(self, X, reset=True)
        Xd, MX = _check_features(X, self.sparse_absent)
        _warn_pm_coding(y)
        Yd, MY, classes, multilabel = _encode_target(y, Xd.shape[0])
        _warn_empty_items(MX, MY)
        n, d = Xd.shape
        if self.standardize:
            cnt = MX.sum(axis=0)
            mean = Xd.sum(axis=0) / cnt          # unobserved entries are stored as 0
            std = np.sqrt((np.where(MX, Xd - mean, 0.0) ** 2).sum(axis=0) / cnt)
            std[std == 0] = 1.0
        else:
            mean, std = np.zeros(d), np.ones(d)
        Xs = np.where(MX, (Xd - mean) / std, 0.0)
        self.graph_features_ = None
        if self.graph_features is not None:
            Xs, MX = self._append_graph_features(Xs, MX, None if multilabel else classes.size)
        # stacked (spec) orientation: items are columns
        Xt, MXt, Yt, MYt = Xs.T, MX.T, Yd.T, MY.T
        rng = np.random.default_rng(self.random_state)
        fpc_kw = dict(tol=self.tol, c=self.step_factor, max_inner=self.max_inner,
                      svd=self.svd, solver=self.solver)
        sigma1 = observed_sigma1(Xt, MXt, Yt, MYt, self.variant)
        tune_mu = self.mu == "cv"
        grid = continuation_grid(sigma1, self.mu_final if tune_mu else self.mu, self.eta)
        lams = list(lam_grid) if self.lam == "cv" else [float(self.lam)]
        self.mu_grid_ = grid
        criterion = "entry" if multilabel else ("balanced" if classes.size == 2 else
                                                 "argmax")
        self.cv_criterion_ = criterion
        tune = tune_mu or len(lams) > 1
        self.cv_fallback_ = tune and not _cv_possible(Yd, MY, criterion, self.n_folds)
        if self.cv_fallback_:
            lams = [max(lams)]
            log(f"[MatrixCompletionTransducer] too few labels to cross-validate: the path "
                f"stops where it reproduces the observed labels (lam={lams[0]:g})",
                self.verbose)
            self.cv_errors_ = None
            i, j = 0, _fit_labels_stage(Xt, MXt, Yt, MYt, self.variant, lams[0], grid,
                                        tune_mu, rng, fpc_kw)
        elif tune:
            log(f"[MatrixCompletionTransducer] CV: {len(lams)} lam x {self.n_folds} folds, "
                f"{grid.size} mu values", self.verbose)
            errs, per = cv_label_errors(Xt, MXt, Yt, MYt, variant=self.variant, lams=lams,
                                        grid=grid, n_folds=self.n_folds, rng=rng,
                                        n_jobs=self.n_jobs, random_state=rng,
                                        patience=CV_PATIENCE if tune_mu else None,
                                        verbose=self.verbose, criterion=criterion,
                                        **fpc_kw)
            # compare only mu values every fold reached (a fold stops past its minimum)
            errs[~np.isfinite(per).all(axis=1)] = np.nan
            if not tune_mu:      # only the last grid value (the given mu) is a candidate
                errs[:, :-1] = np.nan
            self.cv_errors_ = errs
            if criterion == "entry":
                i, j = np.unravel_index(np.nanargmin(errs), errs.shape)
            elif tune_mu and np.nanmin(errs) >= _constant_error(criterion, classes.size):
                # no mu beat a constant prediction on the held-out items (a handful of
                # labels: moons with 3 per class chose the first stage, every score 0)
                self.cv_fallback_ = True
                log("[MatrixCompletionTransducer] no mu did better than a constant "
                    "prediction in CV: the path stops where it reproduces the observed "
                    "labels", self.verbose)
                i = int(np.argmax(lams))
                j = _fit_labels_stage(Xt, MXt, Yt, MYt, self.variant, lams[i], grid,
                                      tune_mu, rng, fpc_kw)
            else:
                # exact ties hold the same held-out predictions: the smaller mu gives them
                # with larger margins (the first stages' scores are ~0, and a refit there
                # flipped every binary digits prediction to the positive class)
                i, j = np.argwhere(errs == np.nanmin(errs))[-1]
        else:
            self.cv_errors_ = None
            i, j = 0, grid.size - 1
        t = Yd.shape[1]

        def refit(i, j):
            log(f"[MatrixCompletionTransducer] refit: lam={lams[i]:g}, mu={grid[j]:.3g} "
                f"({j + 1} continuation stages)", self.verbose)
            path = fpc_path(Xt, MXt, Yt, MYt, variant=self.variant, lam=lams[i],
                            mus=grid[:j + 1], random_state=rng, verbose=bool(self.verbose),
                            **fpc_kw)
            return path, path.Z[:t] + path.b[:, None] if path.b is not None else path.Z[:t]

        path, S = refit(i, j)
        if (tune_mu and not self.cv_fallback_ and criterion != "entry"
                and held_out_error(S, Yt, MYt, criterion)
                >= _constant_error(criterion, classes.size)):
            # the stage CV chose does not separate its own labels (every score ~0: with 3
            # labels per class of breast cancer a stage won a 6-label CV by chance and
            # every item got one class): as when no mu beats a constant
            self.cv_fallback_ = True
            log("[MatrixCompletionTransducer] the chosen mu does not fit the observed "
                "labels better than a constant: the path stops where it reproduces them",
                self.verbose)
            i = int(np.argmax(lams))
            j = _fit_labels_stage(Xt, MXt, Yt, MYt, self.variant, lams[i], grid, tune_mu,
                                  rng, fpc_kw)
            path, S = refit(i, j)
        self.lam_ = lams[i]
        self.mu_ = float(grid[j])
        Z, S = path.Z, S.T
        self.path_ = path
        self.mu_path_ = path.mus
        self.n_iter_per_stage_ = np.asarray(path.n_iter)
        self.n_iter_ = int(np.sum(path.n_iter))
        self.objective_path_ = path.objective
        self.rank_ = int(path.rank[-1])
        self.bias_ = path.b
        self.classes_ = classes
        if multilabel:
            self.decision_scores_ = S
            self.transduction_ = (S >= 0).astype(np.int64)
        elif classes.size == 2:
            self.decision_scores_ = S[:, 0]
            self.transduction_ = classes[(S[:, 0] >= 0).astype(np.intp)]
        else:
            self.decision_scores_ = S
            self.transduction_ = classes[np.argmax(S, axis=1)]
        self.features_ = Z[t:t + d].T * std + mean
        self.n_features_in_ = d
        self.n_tasks_ = t
        self._fit_X_fingerprint = _fingerprint(X)
        return self

    def _append_graph_features(self, Xs, MX, n_classes):
        """``[Xs, G]`` and its observed mask: ``G`` the spectral features of the rows (NaN
        entries mean-imputed; unobserved for a row with no observed entry), scaled so that
        the block's total variance is ``graph_weight`` times that of ``d`` features of the
        median variance. ``n_classes``: None for an indicator target."""
        n, d = Xs.shape
        k = self.graph_features
        if k == "auto":
            # spectral clustering's embedding of K clusters: K - 1 nontrivial eigenvectors
            # (the trivial one is the bias). The feature loss is averaged over the d + k
            # columns: at a fixed mu more spectral columns than features would more than
            # halve its weight
            k = 0 if n_classes is None else min(n_classes - 1, d)
        k = min(int(k), n - 2)                          # a graph of n items has n - 1
        if k < 1:
            return Xs, MX
        _check_features_memory((n, d + k))             # before the graph and its eigenvectors
        cnt = MX.sum(axis=0)
        col_mean = Xs.sum(axis=0) / cnt              # unobserved entries are stored as 0
        Xg = np.where(MX, Xs, col_mean)
        var = (np.where(MX, Xs - col_mean, 0.0) ** 2).sum(axis=0) / cnt
        seed = self.random_state if isinstance(self.random_state, Integral) else 0
        G = spectral_features(Xg, k, random_state=seed)
        G_std = G.std(axis=0)
        G_std[G_std == 0] = 1.0                       # a constant column (isolated points)
        # every column the same spread; the block's total variance graph_weight * that of
        # d features of the median variance (d when standardize=True): a feature of a
        # much larger scale than the others (raw wine's proline) keeps its weight
        scale = np.sqrt(self.graph_weight * d * max(np.median(var), np.finfo(float).tiny)
                        / k)
        G = G / G_std * scale
        self.graph_features_ = G
        # an item with no observed feature sits at the mean in the graph: the graph says
        # nothing about it, its spectral features are unobserved too
        MG = np.repeat(MX.any(axis=1)[:, None], k, axis=1)
        return np.hstack([Xs, np.where(MG, G, 0.0)]), np.hstack([MX, MG])

    def transform(self, X=None):
        """Completed (denoised and imputed) features of the fitted items, ``(n, d)``."""
        self._check_same_points(X)
        return self.features_.copy()

    def fit_transform(self, X, y=None, **fit_params):
        """Fit and return the completed features ``features_``."""
        return self.fit(X, y).features_.copy()

