"""Readers for the small binary benchmark sets: LIBSVM text files and UCI CSV files, plus the
``svm-scale`` rescaling to [-1, 1] used where the LIBSVM ``*_scale`` file is missing."""

from __future__ import annotations

import os

import numpy as np
from sklearn.datasets import load_svmlight_file

from ._io import malformed, read_text

__all__ = ["parse_libsvm", "parse_uci_csv", "svm_scale"]


def svm_scale(X: np.ndarray, lower: float = -1.0, upper: float = 1.0) -> np.ndarray:
    """Map each feature linearly from its [min, max] to [lower, upper] (LIBSVM ``svm-scale``).

    Constant features become 0, as ``svm-scale`` drops them from its sparse output.
    """
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = hi - lo
    const = span == 0
    scaled = lower + (upper - lower) * (X - lo) / np.where(const, 1.0, span)
    scaled[:, const] = 0.0
    return scaled


def _pm1(path, y, positive) -> np.ndarray:
    """Binary labels as int +-1; ``positive`` is the raw label mapped to +1."""
    classes = np.unique(y)
    if len(classes) != 2 or positive not in classes:
        raise malformed(path, f"expected two classes including {positive!r}, found "
                              f"{classes.tolist()}")
    return np.where(y == positive, 1, -1).astype(np.int64)


def parse_libsvm(folder, filename, n_features: int, scale: bool = False) -> dict:
    """A LIBSVM text file as dense ``data`` (float64) and ``target`` in {-1, +1}.

    With ``scale=True`` the features are rescaled to [-1, 1] (svm-scale defaults) and the
    unscaled values are kept as ``data_unscaled``.
    """
    path = os.path.join(folder, filename)
    try:
        X, y = load_svmlight_file(path, n_features=n_features)
    except ValueError as exc:
        raise malformed(path, f"not a LIBSVM file with at most {n_features} features "
                              f"({exc})") from exc
    X = X.toarray()
    out = {"target": _pm1(path, y, 1.0)}
    if scale:
        out["data"], out["data_unscaled"] = svm_scale(X), X
    else:
        out["data"] = X
    return out


def parse_uci_csv(folder, filename, n_features: int, positive: str) -> dict:
    """A UCI CSV file (numeric features, class label last, no header).

    Returns ``data`` rescaled to [-1, 1] (svm-scale defaults, as LIBSVM's ``*_scale`` versions
    used by SPORE), ``data_unscaled``, ``target`` (+1 for ``positive``, -1 for the other
    class) and ``target_names`` (the raw class strings, index 0 for -1 and 1 for +1).
    """
    path = os.path.join(folder, filename)
    rows = [ln for ln in read_text(path).split("\n") if ln.strip()]
    if not rows:
        raise malformed(path, "empty file")
    X = np.empty((len(rows), n_features))
    labels = []
    for i, line in enumerate(rows):
        fields = line.strip().split(",")
        if len(fields) != n_features + 1:
            raise malformed(path, f"line {i + 1}: {len(fields)} fields, expected "
                                  f"{n_features} features + class")
        try:
            X[i] = [float(f) for f in fields[:-1]]
        except ValueError:
            raise malformed(path, f"line {i + 1}: non-numeric feature value") from None
        labels.append(fields[-1].strip())
    labels = np.array(labels)
    target = _pm1(path, labels, positive)
    negative = str(np.unique(labels[target == -1])[0])
    return {"data": svm_scale(X), "data_unscaled": X, "target": target,
            "target_names": [negative, positive]}
