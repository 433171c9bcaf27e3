"""Cross-validation along the continuation path (spec §7, paper §5 "Parameter tuning").

``Omega_X`` and ``Omega_Y`` are each split into ``n_folds`` disjoint random parts; fold ``f``
trains on the other parts of both and scores the held-out part of ``Omega_Y`` (label
error; for feature-only FPC the held-out part of ``Omega_X``, imputation error). All folds
and the refit share one absolute ``mu`` grid started from the full observed matrix, so one
continuation run per ``lam`` per fold scores every ``mu``.
"""

from __future__ import annotations

import time

import numpy as np

from .._progress import log
from .fpc import continuation_grid, fpc_path, initial_point, _Problem
from .metrics import sign_pm

__all__ = ["fold_masks", "observed_sigma1", "mu_grid", "cv_label_errors",
           "cv_imputation_errors"]


def fold_masks(mask, n_folds: int, rng):
    """Split the True entries of ``mask`` into ``n_folds`` disjoint random held-out masks."""
    idx = np.flatnonzero(mask)
    if idx.size < n_folds:
        raise ValueError(f"only {idx.size} observed entries for {n_folds}-fold "
                         "cross-validation; fix mu and lam instead of 'cv'.")
    parts = np.array_split(rng.permutation(idx), n_folds)
    out = []
    for p in parts:
        h = np.zeros(mask.size, dtype=bool)
        h[p] = True
        out.append(h.reshape(mask.shape))
    return out


def observed_sigma1(X, MX, Y, MY, variant):
    """Largest singular value of the observed-entries stack (with ``1^T`` for MC-1)."""
    prob = _Problem(X, MX, Y, MY, 1.0, variant)
    return initial_point(prob.observed_matrix())[1]


def mu_grid(X, MX, Y, MY, variant, mu_final=1e-5, eta=0.25):
    """The shared absolute ``mu`` grid of spec §7."""
    return continuation_grid(observed_sigma1(X, MX, Y, MY, variant), mu_final, eta)


#: a fold's continuation path stops once its held-out label error has been worse than its
#: best for this many successive mu values (each eta = 1/4 times the last): the small-mu
#: stages are the slow ones, and past the minimum they only overfit (None: run the whole grid)
CV_PATIENCE = 3


class _PastMinimum:
    """Early stop of one fold's path: True once ``patience`` successive held-out errors
    were worse than the best so far.

    Two kinds of stage do not count. Before the first improvement the error sits flat at its
    starting value (at large ``mu`` the completion is ~0). An error equal to the best is not
    past the minimum: a fold holds few labels (4 on breast cancer with 10 per class, 8 in
    the paper's tasks experiment), so its error moves in coarse steps and ties it for
    stages before it falls again. Counting ties stopped such paths early and moved the
    paper's t = 2 cell from 15.4 % to 17.0 % (one trial: 13.1 % -> 28.1 %).

    Examples
    --------
    >>> stop = _PastMinimum(2)
    >>> [stop(e) for e in (.5, .5, .4, .4, .4, .3, .35, .36)]
    [False, False, False, False, False, False, False, True]
    """

    def __init__(self, patience):
        self.patience, self.first, self.best, self.worse = patience, None, np.inf, 0

    def __call__(self, err):
        if self.first is None:
            self.first = self.best = err
        elif err <= self.best:
            self.best, self.worse = err, 0
        elif self.best < self.first:
            self.worse += 1
        return self.patience is not None and self.worse >= self.patience


def _fold_label_errors(X, MX, Y, MY, hx, hy, variant, lam, grid, fpc_kw, patience=None,
                       verbose=0, name=""):
    t0 = time.perf_counter()
    err = np.full(grid.size, np.nan)
    t = Y.shape[0]
    yh = Y[hy]
    stop = _PastMinimum(patience)

    def record(k, mu, Z, b):
        S = Z[:t] if b is None else Z[:t] + b[:, None]
        err[k] = float((sign_pm(S[hy]) != yh).mean())
        return stop(err[k])

    path = fpc_path(X, MX & ~hx, Y, MY & ~hy, variant=variant, lam=lam, mus=grid,
                    callback=record, verbose=verbose >= 2, **fpc_kw)
    if verbose:
        k = int(np.nanargmin(err)) if np.isfinite(err).any() else -1
        log(f"[cv] {name}lam={lam:g}: {path.mus.size} mu values, {int(path.n_iter.sum())} "
            f"iterations, best held-out label error {err[k]:.3f} at mu={grid[k]:.3g} "
            f"[{time.perf_counter() - t0:.1f}s]")
    return err


def _run(jobs, n_jobs):
    if n_jobs in (None, 1):
        return [f(*a) for f, a in jobs]
    from joblib import Parallel, delayed
    return Parallel(n_jobs=n_jobs)(delayed(_one_blas_thread)(f, *a) for f, a in jobs)


def _one_blas_thread(f, *args):
    """Run ``f`` with one BLAS thread: parallel folds on few cores must not oversubscribe
    (a 1000 x 1000 eigh ran 8.6x slower with two OpenBLAS threads on a loaded 2-core
    machine)."""
    from threadpoolctl import threadpool_limits
    with threadpool_limits(1):
        return f(*args)


def cv_label_errors(X, MX, Y, MY, *, variant, lams, grid, n_folds=5, rng=None,
                    n_jobs=None, patience=None, verbose=0, **fpc_kw):
    """Held-out label error of every ``(lam, mu)`` pair.

    Parameters
    ----------
    X, MX, Y, MY : arrays in the stacked orientation (see :func:`fpc_path`).
    variant : {"mcb", "mc1"}
    lams : sequence of float
    grid : ndarray
        Shared decreasing ``mu`` grid.
    n_folds : int
    rng : Generator
    n_jobs : int, optional
        Run the ``len(lams) * n_folds`` continuation runs in parallel (joblib).
    patience : int, optional
        End a fold's path once its held-out error has been worse than its best for this
        many successive grid values (the rest stay NaN; :class:`_PastMinimum`); None runs
        the whole grid.
    verbose : int
        1: one line per fold path on stderr (from the worker when ``n_jobs`` is set);
        2: also one line per continuation stage.
    **fpc_kw
        Passed to :func:`fpc_path` (``tol``, ``c``, ``max_inner``, ``svd``, ...).

    Returns
    -------
    errors : ndarray (len(lams), grid.size)
        Mean over folds (NaN where no fold reached that ``mu``).
    per_fold : ndarray (len(lams), n_folds, grid.size)
    """
    rng = np.random.default_rng(rng)
    hxs = fold_masks(MX, n_folds, rng)
    hys = fold_masks(MY, n_folds, rng)
    fpc_kw.setdefault("warn", False)
    jobs = [(_fold_label_errors, (X, MX, Y, MY, hx, hy, variant, lam, grid, fpc_kw,
                                  patience, int(verbose), f"fold {f + 1}/{n_folds} "))
            for lam in lams for f, (hx, hy) in enumerate(zip(hxs, hys))]
    per = np.asarray(_run(jobs, n_jobs)).reshape(len(lams), n_folds, grid.size)
    return _nanmean_folds(per), per


def _nanmean_folds(per):
    cnt = np.isfinite(per).sum(axis=1)
    tot = np.where(np.isfinite(per), per, 0.0).sum(axis=1)
    return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def _fold_imputation_errors(X, MX, hx, grid, fpc_kw):
    err = np.full(grid.size, np.nan)
    xh = X[hx]
    den = float((xh * xh).sum()) or 1.0

    def record(k, mu, Z, b):
        err[k] = float(((Z[hx] - xh) ** 2).sum()) / den

    fpc_path(X, MX & ~hx, mus=grid, callback=record, **fpc_kw)
    return err


def cv_imputation_errors(X, MX, *, grid, n_folds=5, rng=None, n_jobs=None, **fpc_kw):
    """Held-out relative imputation error of feature-only FPC along ``grid``.

    Returns ``(errors (grid.size,), per_fold (n_folds, grid.size))``.
    """
    rng = np.random.default_rng(rng)
    fpc_kw.setdefault("warn", False)
    jobs = [(_fold_imputation_errors, (X, MX, hx, grid, fpc_kw))
            for hx in fold_masks(MX, n_folds, rng)]
    per = np.asarray(_run(jobs, n_jobs))
    return _nanmean_folds(per[None])[0], per
