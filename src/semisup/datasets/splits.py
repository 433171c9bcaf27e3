"""Split protocols: the LapSVM paper's L/U/V/T splits and "m labelled per class" splits.

Melacci & Belkin (2011, §6.2): 4-fold stratified cross-validation repeated with 3 random fold
assignments (12 splits). In each split one fold is the test set T; the other three are divided
at random into labelled L, unlabelled U and validation V, L and V each holding at least one
point of every class and otherwise unbalanced. Data sets with a fixed train/test division
(MNIST3VS8, FACEMIT) only get the random L/U/V division of the training part, with
class-balanced L and V.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import StratifiedKFold

__all__ = ["LAPSVM_SIZES", "lapsvm_splits", "fixed_train_test_splits",
           "labeled_per_class", "draw_with_every_class"]

#: Table 2 of the paper: |L|, |U|, |V|, |T| per split.
LAPSVM_SIZES = {
    "g50c": (50, 314, 50, 136),
    "coil20b": (40, 1000, 40, 360),
    "pcmac": (50, 1358, 50, 488),
    "uspstb": (50, 1409, 50, 498),
    "coil20": (40, 1000, 40, 360),
    "uspst": (50, 1409, 50, 498),
    "mnist3vs8": (80, 11822, 80, 1984),
    "facemit": (2, 23973, 50, 6997),
}


def _rng(random_state):
    return random_state if isinstance(random_state, np.random.Generator) else \
        np.random.default_rng(random_state)


def draw_with_every_class(y, pool, size: int, rng, balanced: bool = False) -> np.ndarray:
    """Draw ``size`` indices from ``pool`` containing at least one point of every class.

    ``balanced=True`` draws ``size / n_classes`` per class (remainder spread at random);
    otherwise one point per class, then the rest uniformly from the remaining pool.
    """
    pool = np.asarray(pool)
    classes = np.unique(y[pool])
    if size < classes.size:
        raise ValueError(f"cannot draw {size} points with one of each of {classes.size} "
                         "classes.")
    if size > pool.size:
        raise ValueError(f"cannot draw {size} points from a pool of {pool.size}.")
    if balanced:
        per = np.full(classes.size, size // classes.size)
        per[rng.choice(classes.size, size % classes.size, replace=False)] += 1
        out = []
        for c, m in zip(classes, per):
            members = pool[y[pool] == c]
            if m > members.size:
                raise ValueError(f"class {c!r} has {members.size} points, {m} requested.")
            out.append(rng.choice(members, m, replace=False))
        return np.sort(np.concatenate(out))
    first = np.array([rng.choice(pool[y[pool] == c]) for c in classes])
    rest = np.setdiff1d(pool, first)
    more = rng.choice(rest, size - classes.size, replace=False)
    return np.sort(np.concatenate([first, more]))


def _divide(y, train, n_labeled, n_validation, rng, balanced):
    L = draw_with_every_class(y, train, n_labeled, rng, balanced)
    V = draw_with_every_class(y, np.setdiff1d(train, L), n_validation, rng, balanced)
    U = np.setdiff1d(train, np.concatenate([L, V]))
    return L, U, V


def lapsvm_splits(y, n_labeled: int, n_validation: int, *, n_folds: int = 4,
                  n_repeats: int = 3, random_state=None) -> list[dict]:
    """The paper's 12 splits: stratified ``n_folds``-fold CV repeated ``n_repeats`` times.

    Parameters
    ----------
    y : array-like (n,)
        Class labels of the whole data set.
    n_labeled, n_validation : int
        |L| and |V| (Table 2; see :data:`LAPSVM_SIZES`). U is the rest of the training folds,
        so |U| and |T| follow from the fold sizes (Table 2's |T| is rounded: e.g. G50C's 550
        points give test folds of 137–138, not 136).
    n_folds, n_repeats : int
    random_state : int or Generator

    Returns
    -------
    list of dict
        ``n_folds * n_repeats`` dicts with sorted index arrays ``labeled``, ``unlabeled``,
        ``validation``, ``test``; they partition ``range(n)``.
    """
    y = np.asarray(y)
    rng = _rng(random_state)
    out = []
    for _ in range(n_repeats):
        skf = StratifiedKFold(n_folds, shuffle=True, random_state=int(rng.integers(2 ** 31)))
        for train, test in skf.split(np.zeros(len(y)), y):
            L, U, V = _divide(y, train, n_labeled, n_validation, rng, balanced=False)
            out.append(dict(labeled=L, unlabeled=U, validation=V, test=np.sort(test)))
    return out


def fixed_train_test_splits(y, train, test, n_labeled: int, n_validation: int, *,
                            n_splits: int = 12, balanced: bool = True,
                            random_state=None) -> list[dict]:
    """Random L/U/V divisions of a fixed training part (MNIST3VS8, FACEMIT protocol).

    ``L`` and ``V`` are class-balanced by default, as the paper did for these data sets.
    The test set is the same in every split.
    """
    y = np.asarray(y)
    rng = _rng(random_state)
    train, test = np.sort(np.asarray(train)), np.sort(np.asarray(test))
    out = []
    for _ in range(n_splits):
        L, U, V = _divide(y, train, n_labeled, n_validation, rng, balanced)
        out.append(dict(labeled=L, unlabeled=U, validation=V, test=test))
    return out


def labeled_per_class(y, m: int, random_state=None, pool=None) -> np.ndarray:
    """Indices of ``m`` random points of every class (from ``pool``, default all), sorted.

    Raises ValueError if a class has fewer than ``m`` points.
    """
    y = np.asarray(y)
    rng = _rng(random_state)
    pool = np.arange(len(y)) if pool is None else np.asarray(pool)
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}.")
    out = []
    for c in np.unique(y[pool]):
        members = pool[y[pool] == c]
        if members.size < m:
            raise ValueError(f"class {c!r} has {members.size} points; {m} requested.")
        out.append(rng.choice(members, m, replace=False))
    return np.sort(np.concatenate(out))
