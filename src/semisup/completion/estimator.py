"""``MatrixCompletionTransducer``: multi-label transduction with missing features.

Goldberg, Zhu, Recht, Xu & Nowak, "Transduction with Matrix Completion: Three Birds with
One Stone" (NIPS 2010). Features and labels of all items are stacked into one matrix
assumed (nearly) low rank; the missing labels are read off its completion (MC-b, eq. 3, or
MC-1, eq. 4), solved by fixed point continuation (:mod:`semisup.completion.fpc`).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._progress import log
from .fpc import continuation_grid, fpc_path
from .metrics import sign_pm
from .model_selection import cv_label_errors, observed_sigma1

__all__ = ["MatrixCompletionTransducer", "check_completion_input"]

LAMBDA_GRID = (1e-3, 1e-2, 1e-1, 1.0)


def _check_features(X):
    """Items-as-rows features with NaN (dense) or absent entries (sparse) as missing."""
    if sp.issparse(X):
        coo = sp.coo_matrix(X)
        n, d = coo.shape
        Xd = np.zeros((n, d))
        M = np.zeros((n, d), dtype=bool)
        Xd[coo.row, coo.col] = coo.data
        M[coo.row, coo.col] = True
        if not np.isfinite(coo.data).all():
            raise ValueError("X (sparse) has NaN or infinite stored entries; a sparse X "
                             "marks missing features by leaving them out.")
    else:
        Xd = np.array(X, dtype=np.float64)     # copy: never mutate the input
        if Xd.ndim != 2:
            raise ValueError(f"X must be 2-D (items x features), got shape {Xd.shape}.")
        if np.isinf(Xd).any():
            raise ValueError(f"X contains {int(np.isinf(Xd).sum())} infinite value(s); "
                             "only NaN marks a missing feature.")
        M = ~np.isnan(Xd)
        Xd[~M] = 0.0
    n, d = Xd.shape
    if n < 2 or d < 1:
        raise ValueError(f"X must have at least 2 items and 1 feature, got shape {(n, d)}.")
    empty_feat = np.flatnonzero(~M.any(axis=0))
    if empty_feat.size:
        raise ValueError(f"feature column(s) {empty_feat[:10].tolist()} have no observed "
                         "entry: nothing can be imputed for them; drop them.")
    return Xd, M


def _check_labels(Y, n):
    """+1/-1 labels; 0 or NaN mark unobserved entries; a 1-D y is one task."""
    Yd = np.array(Y, dtype=np.float64) if not sp.issparse(Y) else Y.toarray().astype(float)
    one_d = Yd.ndim == 1
    if one_d:
        Yd = Yd[:, None]
    if Yd.ndim != 2:
        raise ValueError(f"Y must be 1-D or 2-D (items x tasks), got shape {Yd.shape}.")
    if Yd.shape[0] != n:
        raise ValueError(f"Y has {Yd.shape[0]} rows but X has {n} items.")
    if np.isinf(Yd).any():
        raise ValueError("Y contains infinite values; labels are +1/-1 and 0 or NaN marks "
                         "an unobserved label.")
    obs = np.isfinite(Yd) & (Yd != 0)
    bad = obs & (np.abs(Yd) != 1)
    if bad.any():
        vals = np.unique(Yd[bad])[:5].tolist()
        raise ValueError(f"Y holds values other than +1/-1 (e.g. {vals}); 0 or NaN marks an "
                         "unobserved label. A 0/1 label matrix must be converted first "
                         "(2 * Y - 1) and its unobserved entries set to 0 or NaN.")
    empty = np.flatnonzero(~obs.any(axis=0))
    if empty.size:
        raise ValueError(f"task(s) {empty[:10].tolist()} have no observed label: there is no "
                         "information to predict them; drop those columns.")
    Yd = np.where(obs, Yd, 0.0)
    return Yd, obs, one_d


def check_completion_input(X, Y):
    """Validate ``(X, Y)`` and return ``(X, MX, Y, MY, one_d)`` with items as rows.

    Raises ValueError for mismatched shapes, infinite features, labels other than
    +1/-1/0/NaN, a task with no observed label or a feature with no observed entry. An
    item with no observed entry at all is allowed (the paper's sparse settings have them)
    but draws a ``UserWarning``: its column of ``Z`` shrinks to zero, so its labels are the
    bias (MC-b) or what the all-ones row implies (MC-1), and its features are zero.
    """
    Xd, MX = _check_features(X)
    Yd, MY, one_d = _check_labels(Y, Xd.shape[0])
    empty_item = np.flatnonzero(~MX.any(axis=1) & ~MY.any(axis=1))
    if empty_item.size:
        warnings.warn(f"{empty_item.size} item(s) (e.g. {empty_item[:5].tolist()}) have no "
                      "observed feature and no observed label: their predictions rest on "
                      "the bias only.", UserWarning, stacklevel=3)
    return Xd, MX, Yd, MY, one_d


class MatrixCompletionTransducer(BaseEstimator):
    """Transductive multi-label classification and feature imputation by matrix completion.

    Completes the stacked matrix ``[Y; X]`` (MC-b, paper eq. 3) or ``[Y; X; 1^T]`` (MC-1,
    eq. 4) under a nuclear-norm penalty with logistic loss on the observed labels and
    squared loss on the observed features::

        MC-b:  min_{Z,b} mu ||Z||_* + lam/|Omega_Y| sum_{Omega_Y} log(1+exp(-y_ij(Z_ij+b_i)))
                                    + 1/(2|Omega_X|) sum_{Omega_X} (Z_{t+k,j} - x_kj)^2
        MC-1:  the same without b, with Z's last row fixed to 1^T.

    Solved by fixed point continuation along ``mu_1 = eta sigma_1 > ... > mu``; with
    ``mu="cv"`` (and/or ``lam="cv"``) 5-fold cross-validation on the observed entries picks
    the pair with the lowest held-out label error (spec §7), costing one continuation run
    per ``lam`` per fold.

    Parameters
    ----------
    variant : {"mc1", "mcb"}, default="mc1"
        All-ones row (MC-1) or explicit bias (MC-b).
    lam : float or "cv", default=1.0
        Label-loss weight ``lambda``; "cv" searches ``lam_grid``.
    mu : float or "cv", default="cv"
        Nuclear-norm weight; "cv" searches the continuation path down to ``mu_final``.
    lam_grid : sequence of float, default=(1e-3, 1e-2, 1e-1, 1)
    mu_final : float, default=1e-5
        Last value of the continuation (and of the CV search).
    eta : float, default=0.25
        Continuation decay.
    tol : float, default=1e-5
        Relative objective change ending each stage.
    step_factor : float, default=3.8
        ``c`` in ``tau_Z = min(c |Omega_Y| / lam, |Omega_X|)``, ``tau_b = c |Omega_Y|/(lam n)``.
    max_inner : int, default=10000
        Iteration cap per continuation stage.
    n_folds : int, default=5
    standardize : bool, default=False
        Centre and scale every feature by its observed entries before completing (spec §10
        default for real data); ``features_`` are returned in the original units.
    svd : {"auto", "exact", "gram", "randomized"}, default="auto"
        Shrinkage method (:func:`semisup.linalg.lowrank.shrink`).
    n_jobs : int, optional
        Parallel CV runs (joblib).
    random_state : None, int or Generator
        Seeds the CV folds and the randomized SVD.
    verbose : bool, default=False

    Attributes
    ----------
    labels_ : ndarray (n, t), or (n,) when ``Y`` was 1-D
        Completed labels in {-1, +1} (observed labels are replaced by the model's signs;
        use ``Y`` itself where it is observed).
    scores_ : ndarray, same shape
        Real-valued label scores ``Z_ij (+ b_i)``.
    features_ : ndarray (n, d)
        Denoised and imputed features.
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
    cv_errors_ : ndarray (len(lam_grid), len(mu_grid_)) or None
        Mean held-out label error (NaN where no fold reached that ``mu``).
    n_iter_ : ndarray
        Iterations per refit stage.
    objective_path_ : ndarray
        Objective at the end of each refit stage.
    path_ : FPCPath
        The refit's full record.
    """

    def __init__(self, variant="mc1", lam=1.0, mu="cv", *, lam_grid=LAMBDA_GRID,
                 mu_final=1e-5, eta=0.25, tol=1e-5, step_factor=3.8, max_inner=10_000,
                 n_folds=5, standardize=False, svd="auto", n_jobs=None, random_state=None,
                 verbose=False):
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
        self.svd = svd
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        if self.variant not in ("mc1", "mcb"):
            raise ValueError(f"variant must be 'mc1' or 'mcb', got {self.variant!r}.")
        for name in ("lam", "mu"):
            v = getattr(self, name)
            if isinstance(v, str):
                if v != "cv":
                    raise ValueError(f"{name} must be a positive float or 'cv', got {v!r}.")
            elif not isinstance(v, numbers.Real) or not v > 0:
                raise ValueError(f"{name} must be a positive float or 'cv', got {v!r}.")
        if not 0 < self.eta < 1:
            raise ValueError(f"eta must lie in (0, 1), got {self.eta}.")
        if not 0 < self.step_factor < 4:
            raise ValueError("step_factor must lie in (0, 4) for the step sizes to be "
                             f"convergent, got {self.step_factor}.")

    def fit(self, X, Y):
        """Complete features and labels.

        Parameters
        ----------
        X : array-like (n, d) with NaN for missing features, or a sparse matrix whose
            stored entries (explicit zeros included) are the observed features.
        Y : array-like (n, t) or (n,)
            +1/-1 labels; 0 or NaN marks an unobserved label.
        """
        self._check_params()
        Xd, MX, Yd, MY, one_d = check_completion_input(X, Y)
        self._fit_data = (Xd, MX)
        n, d = Xd.shape
        if self.standardize:
            cnt = MX.sum(axis=0)
            mean = Xd.sum(axis=0) / cnt          # unobserved entries are stored as 0
            std = np.sqrt((np.where(MX, Xd - mean, 0.0) ** 2).sum(axis=0) / cnt)
            std[std == 0] = 1.0
        else:
            mean, std = np.zeros(d), np.ones(d)
        Xs = np.where(MX, (Xd - mean) / std, 0.0)
        # stacked (spec) orientation: items are columns
        Xt, MXt, Yt, MYt = Xs.T, MX.T, Yd.T, MY.T
        rng = np.random.default_rng(self.random_state)
        fpc_kw = dict(tol=self.tol, c=self.step_factor, max_inner=self.max_inner,
                      svd=self.svd)
        sigma1 = observed_sigma1(Xt, MXt, Yt, MYt, self.variant)
        tune_mu = self.mu == "cv"
        grid = continuation_grid(sigma1, self.mu_final if tune_mu else self.mu, self.eta)
        lams = list(self.lam_grid) if self.lam == "cv" else [float(self.lam)]
        self.mu_grid_ = grid
        if tune_mu or len(lams) > 1:
            log(f"[completion] CV: {len(lams)} lam x {self.n_folds} folds, "
                f"{grid.size} mu values", self.verbose)
            errs, _ = cv_label_errors(Xt, MXt, Yt, MYt, variant=self.variant, lams=lams,
                                      grid=grid, n_folds=self.n_folds, rng=rng,
                                      n_jobs=self.n_jobs, random_state=rng, **fpc_kw)
            if not tune_mu:      # only the last grid value (the given mu) is a candidate
                errs[:, :-1] = np.nan
            self.cv_errors_ = errs
            i, j = np.unravel_index(np.nanargmin(errs), errs.shape)
        else:
            self.cv_errors_ = None
            i, j = 0, grid.size - 1
        self.lam_ = lams[i]
        self.mu_ = float(grid[j])
        path = fpc_path(Xt, MXt, Yt, MYt, variant=self.variant, lam=self.lam_,
                        mus=grid[:j + 1], random_state=rng, **fpc_kw)
        t = Yd.shape[1]
        Z = path.Z
        S = Z[:t] + path.b[:, None] if path.b is not None else Z[:t]
        self.path_ = path
        self.mu_path_ = path.mus
        self.n_iter_ = path.n_iter
        self.objective_path_ = path.objective
        self.rank_ = int(path.rank[-1])
        self.bias_ = path.b
        scores = S.T
        self.scores_ = scores[:, 0] if one_d else scores
        self.labels_ = sign_pm(self.scores_)
        self.features_ = Z[t:t + d].T * std + mean
        self.n_features_in_ = d
        self.n_tasks_ = t
        return self

    def _check_same_items(self, X):
        check_is_fitted(self, "features_")
        if X is None:
            return
        Xd, MX = _check_features(X)
        X0, M0 = self._fit_data
        if Xd.shape != X0.shape or not (np.array_equal(MX, M0) and np.array_equal(Xd, X0)):
            raise ValueError("MatrixCompletionTransducer is transductive: it only predicts "
                             "and completes the items passed to fit (call fit on all items).")

    def transform(self, X=None):
        """Completed (denoised and imputed) features of the fitted items, ``(n, d)``."""
        self._check_same_items(X)
        return self.features_.copy()

    def fit_transform(self, X, Y=None, **fit_params):
        if Y is None:
            raise ValueError("fit_transform needs the label matrix Y.")
        return self.fit(X, Y).features_.copy()

    def predict(self, X=None):
        """Completed labels (+1/-1) of the fitted items."""
        self._check_same_items(X)
        return self.labels_.copy()

    def decision_function(self, X=None):
        """Label scores of the fitted items."""
        self._check_same_items(X)
        return self.scores_.copy()
