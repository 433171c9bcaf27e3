"""How MatrixCompletionTransducer's ``graph_features="auto"`` (K - 1 spectral features) was
chosen: every cell, label draws 0-2, the estimator with no spectral features, with
``"auto"`` (K - 1), and with K, K - 1, 2K and min(10, d) given explicitly, beside
LogisticRegression on the labelled points and LabelSpreading(kernel="knn"). One JSON line
per cell and draw.

    python tools/mc_spectral_features.py [data ...] > out.jsonl

(data: digits, digits600, digits3v8, digits01, mkcls, moons, wine, bc, iris; default all.
About 10 minutes on two cores.) The 2026-11-26 results are in the estimator's docstring.
"""

import json
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import (load_breast_cancer, load_digits, load_iris, load_wine,
                              make_classification, make_moons)
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import LabelSpreading

from semisup import MatrixCompletionTransducer


def data(name):
    if name == "mkcls":
        return make_classification(1500, 241, n_informative=20, random_state=0)
    if name == "moons":
        return make_moons(300, noise=0.1, random_state=0)
    if name.startswith("digits"):
        X, y = load_digits(return_X_y=True)
        if name == "digits600":
            return X[:600], y[:600]
        if name == "digits3v8":
            keep = np.isin(y, (3, 8))
            return X[keep], y[keep]
        if name == "digits01":                 # "0 or 1" against the rest
            return X, np.isin(y, (0, 1)).astype(int)
        return X, y
    return {"wine": load_wine, "bc": load_breast_cancer, "iris": load_iris}[name](
        return_X_y=True)


def draw(y, per_class, seed):
    """-1 except ``per_class`` labels per class (``"r100"``: 100 random labels)."""
    rng = np.random.default_rng(seed)
    ys = np.full(len(y), -1)
    if per_class == "r100":
        idx = rng.choice(len(y), 100, replace=False)
        ys[idx] = y[idx]
        return ys
    for c in np.unique(y):
        ys[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return ys


CELLS = ([("digits", "raw", p) for p in (1, 3, 10)] + [("digits600", "raw", p) for p in (1, 3)]
         + [("digits3v8", "raw", p) for p in (1, 3, 5)]
         + [(d, s, p) for d in ("moons", "wine", "bc") for s in ("std", "raw") for p in (1, 3)]
         + [("iris", "raw", 1), ("iris", "raw", 3), ("digits01", "raw", "r100"),
            ("mkcls", "raw", "r100")])


def main(only):
    warnings.simplefilter("ignore")
    for name, scaling, per_class in CELLS:
        if only and name not in only:
            continue
        X, y = data(name)
        X = X.astype(float)
        if scaling == "std":
            X = StandardScaler().fit_transform(X)
        K = len(np.unique(y))
        variants = {"none": None, "auto": "auto", "K": K, "Km1": max(K - 1, 1), "2K": 2 * K,
                    "min10d": min(10, X.shape[1])}
        for seed in range(1 if name == "mkcls" else 3):
            ys = draw(y, per_class, seed)
            u = ys == -1
            rec = dict(data=name, X=scaling, per=per_class, seed=seed)
            lr = LogisticRegression(max_iter=2000).fit(X[~u], y[~u])
            rec["LR"] = float(np.mean(lr.predict(X[u]) == y[u]))
            ls = LabelSpreading(kernel="knn").fit(X, ys)
            rec["LS"] = float(np.mean(ls.transduction_[u] == y[u]))
            for v, k in variants.items():
                t = time.perf_counter()
                est = MatrixCompletionTransducer(graph_features=k, random_state=seed).fit(X, ys)
                rec[v] = float(np.mean(est.transduction_[u] == y[u]))
                rec[v + "_s"] = round(time.perf_counter() - t, 1)
            print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
