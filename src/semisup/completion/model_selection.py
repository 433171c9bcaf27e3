"""Cross-validation along the continuation path (spec §7, paper §5 "Parameter tuning").

``Omega_X`` and ``Omega_Y`` are each split into ``n_folds`` disjoint random parts; fold ``f``
trains on the other parts of both and scores the held-out part of ``Omega_Y`` (label
error; for feature-only FPC the held-out part of ``Omega_X``, imputation error). All folds
and the refit share one absolute ``mu`` grid started from the full observed matrix, so one
continuation run per ``lam`` per fold scores every ``mu``.

The held-out label error is the paper's per-entry sign error (``criterion="entry"``, the
multi-label protocol). For a single-label target it cannot be used: with one-vs-rest
columns "every score negative" errs on 1/K of the entries and wins the search (digits, 3
labels per class: accuracy 0.099), and on an unbalanced binary task "every item negative"
is as hard to beat. Such targets hold out whole labelled items, stratified by class, and
score the argmax label (``"argmax"``) or the balanced error (``"balanced"``, the mean of
the two classes' error rates), neither of which a constant prediction can win.
"""

from __future__ import annotations

import time

import numpy as np

from .._progress import log
from .fpc import continuation_grid, fpc_path, initial_point, _Problem
from .metrics import sign_pm

__all__ = ["fold_masks", "item_fold_masks", "observed_sigma1", "mu_grid", "held_out_error",
           "cv_label_errors", "cv_imputation_errors", "CRITERIA"]

#: weight of the plain error added to the mean balanced one when ``(lam, mu)`` is chosen
#: (not in a fold's stopping rule): it only breaks ties, where the
#: balanced error cannot tell "every item positive" from "every item negative" (the first
#: stages of a path, whose scores are 0, predict the positive class: a binary digits fit
#: returned it for every item, error 0.80)
BALANCED_TIE_BREAK = 1e-6

#: held-out label errors: per entry (the paper's, multi-label), argmax class of a
#: one-vs-rest single-label target, balanced error of one binary task
CRITERIA = ("entry", "argmax", "balanced")


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


def _item_classes(Y, MY, items):
    """Class index of labelled items: the sign of a single task, else the +1 row."""
    if Y.shape[0] == 1:
        return (Y[0, items] > 0).astype(np.intp)
    return np.argmax(np.where(MY[:, items], Y[:, items], -np.inf), axis=0)


def item_fold_masks(Y, MY, n_folds: int, rng):
    """Hold out whole labelled items (all their observed labels), stratified by class.

    The labelled items (columns of ``MY`` with an observed entry) of each class are dealt
    in random order to the folds, one after another, so that every fold holds out about
    ``1/n_folds`` of every class and a class with at least two labelled items keeps one in
    every training part. Fewer labelled items than folds leave the extra folds empty
    (dropped). Returns a list of boolean masks shaped like ``MY``.

    Examples
    --------
    >>> Y = np.array([[1., -1, 1, -1, 1, -1]])
    >>> h = item_fold_masks(Y, np.ones((1, 6), bool), 3, np.random.default_rng(0))
    >>> [int(m.sum()) for m in h], [sorted(Y[m].tolist()) for m in h]
    ([2, 2, 2], [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0]])
    """
    items = np.flatnonzero(MY.any(axis=0))
    cls = _item_classes(Y, MY, items)
    order = np.concatenate([rng.permutation(items[cls == c]) for c in np.unique(cls)])
    fold = (rng.integers(n_folds) + np.arange(order.size)) % n_folds
    out = []
    for f in range(n_folds):
        h = np.zeros(MY.shape, dtype=bool)
        cols = order[fold == f]
        h[:, cols] = MY[:, cols]
        if cols.size:
            out.append(h)
    return out


def held_out_error(S, Y, hy, criterion="entry"):
    """Label error of the scores ``S`` on the held-out entries ``hy`` (stacked orientation).

    ``"entry"``: fraction of entries whose sign (``sign(0) = +1``) is wrong. ``"argmax"``:
    fraction of held-out items whose largest score is not in their +1 row. ``"balanced"``
    (one task): mean over the classes present of the fraction of that class's held-out
    items on the wrong side of 0.

    Examples
    --------
    >>> Y = np.array([[1., -1, -1, -1]])
    >>> everything_negative = np.full((1, 4), -1.0)
    >>> held_out_error(everything_negative, Y, Y != 0), held_out_error(
    ...     everything_negative, Y, Y != 0, "balanced")
    (0.25, 0.5)
    """
    if criterion == "entry":
        return float((sign_pm(S[hy]) != Y[hy]).mean())
    cols = np.flatnonzero(hy.any(axis=0))
    if criterion == "argmax":
        true = _item_classes(Y, hy, cols)
        return float((np.argmax(S[:, cols], axis=0) != true).mean())
    wrong = sign_pm(S[0, cols]) != Y[0, cols]
    pos = Y[0, cols] > 0
    return float(np.mean([wrong[k].mean() for k in (pos, ~pos) if k.any()]))


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

    With ``count_ties=True`` (the single-label criteria) a tie does count once the error
    has improved: past the point where the labels are fitted the item-level error sits
    flat for the rest of the path, whose small-``mu`` stages are the slow ones (a binary
    1 500 x 241 fit ran all 13 stages down to ``mu = 1e-5``), and the search keeps the
    largest ``mu`` among tied values anyway.

    Examples
    --------
    >>> stop = _PastMinimum(2)
    >>> [stop(e) for e in (.5, .5, .4, .4, .4, .3, .35, .36)]
    [False, False, False, False, False, False, False, True]
    >>> stop = _PastMinimum(2, count_ties=True)
    >>> [stop(e) for e in (.5, .5, .4, .4, .4)]
    [False, False, False, False, True]
    """

    def __init__(self, patience, count_ties=False):
        self.patience, self.first, self.best, self.worse = patience, None, np.inf, 0
        self.count_ties = count_ties

    def __call__(self, err):
        if self.first is None:
            self.first = self.best = err
        elif err < self.best or (err == self.best and not self.count_ties):
            self.best, self.worse = err, 0
        elif self.best < self.first:
            self.worse += 1
        return self.patience is not None and self.worse >= self.patience


def _fold_label_errors(X, MX, Y, MY, hx, hy, variant, lam, grid, fpc_kw, patience=None,
                       verbose=0, name="", criterion="entry"):
    t0 = time.perf_counter()
    err = np.full(grid.size, np.nan)
    t = Y.shape[0]
    stop = _PastMinimum(patience, count_ties=criterion != "entry")
    plain = np.full(grid.size, np.nan)

    def record(k, mu, Z, b):
        S = Z[:t] if b is None else Z[:t] + b[:, None]
        err[k] = held_out_error(S, Y, hy, criterion)
        if criterion == "balanced":
            plain[k] = held_out_error(S, Y, hy)
        return stop(err[k])

    path = fpc_path(X, MX & ~hx, Y, MY & ~hy, variant=variant, lam=lam, mus=grid,
                    callback=record, verbose=verbose >= 2, **fpc_kw)
    if verbose:
        k = int(np.nanargmin(err)) if np.isfinite(err).any() else -1
        log(f"[cv] {name}lam={lam:g}: {path.mus.size} mu values, {int(path.n_iter.sum())} "
            f"iterations, best held-out label error {err[k]:.3f} at mu={grid[k]:.3g} "
            f"[{time.perf_counter() - t0:.1f}s]")
    return err + BALANCED_TIE_BREAK * plain if criterion == "balanced" else err


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
                    n_jobs=None, patience=None, verbose=0, criterion="entry", **fpc_kw):
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
    criterion : {"entry", "argmax", "balanced"}
        Held-out label error (:func:`held_out_error`; ``"balanced"`` plus
        :data:`BALANCED_TIE_BREAK` times the plain error). ``"entry"`` splits ``Omega_Y``
        by entry (the paper); the others hold out whole labelled items, stratified by
        class (:func:`item_fold_masks`; fewer folds when there are fewer labelled items).
    **fpc_kw
        Passed to :func:`fpc_path` (``tol``, ``c``, ``max_inner``, ``svd``, ...).

    Returns
    -------
    errors : ndarray (len(lams), grid.size)
        Mean over folds (NaN where no fold reached that ``mu``).
    per_fold : ndarray (len(lams), n_folds_used, grid.size)
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}.")
    rng = np.random.default_rng(rng)
    if criterion == "entry":
        hxs = fold_masks(MX, n_folds, rng)
        hys = fold_masks(MY, n_folds, rng)
    else:
        hys = item_fold_masks(Y, MY, n_folds, rng)
        hxs = fold_masks(MX, len(hys), rng)
    k = len(hys)
    fpc_kw.setdefault("warn", False)
    jobs = [(_fold_label_errors, (X, MX, Y, MY, hx, hy, variant, lam, grid, fpc_kw,
                                  patience, int(verbose), f"fold {f + 1}/{k} ", criterion))
            for lam in lams for f, (hx, hy) in enumerate(zip(hxs, hys))]
    per = np.asarray(_run(jobs, n_jobs)).reshape(len(lams), k, grid.size)
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
