"""``semisup bench defaults``: every public estimator at its default parameters.

Each estimator is fitted as a new user would, with no parameter but what the data needs
(and ``random_state=0``, so that the record is reproducible), on
breast cancer (569 x 30, standardised), digits (1 797 x 64) and a generated 2 400 x 300
multi-label problem (6 labels, low rank, the size of the Mulan sets), with 10 labels per
class (semi-supervised estimators; the rest of the labels hidden) or a 70/30 split
(supervised estimators). Recorded: fit seconds (wall and CPU) and accuracy on the hidden or
held-out labels, once with one BLAS thread and once with two, in
``docs/benchmarks/defaults.md``. Estimators that cannot take a problem (binary-only
estimators on multi-class data, SPORE's dense n x n iterates on the 2 400-point set)
are marked "not applicable" rather than silently skipped.

A second part (``--only baselines``) sets each semi-supervised estimator at its defaults
beside the labelled points alone (scikit-learn's ``LogisticRegression`` trained on them) and
scikit-learn's ``LabelSpreading(kernel="knn")`` at its defaults, with 1 and 3 labels per
class, on standardised and raw features, on breast cancer and two moons (binary), wine and
the first 600 digits (multi-class): the mean accuracy on the unlabelled points over a few
label draws, and where an estimator loses to either.
"""

from __future__ import annotations

import resource
import warnings

import numpy as np

from .._progress import log
from .._registry import REGISTRY, by_name
from ..datasets.splits import labeled_per_class
from ._report import header, markdown_table, timed
from ._runner import add_command, blas_limit, is_full_run, only_set, report_path, write_report

__all__ = ["add_bench_parser"]

PROBLEMS = ("breast_cancer", "digits", "multilabel")
#: the parts ``--only`` selects: the problems above and the comparison with the baselines
PARTS = PROBLEMS + ("baselines",)
#: the registry's estimators with "defaults" among their bench commands, in its order
ESTIMATORS = tuple(m.name for m in REGISTRY if "defaults" in m.bench)
SUPERVISED = {m.name for m in REGISTRY if m.setting == "supervised"}
LABELS_PER_CLASS = 10
#: the baseline matrix: binary (breast cancer, moons) and multi-class (wine, digits) data
BASELINE_PROBLEMS = ("breast_cancer", "moons", "wine", "digits")
BASELINE_PER_CLASS = (1, 3)
SCALINGS = ("standardised", "raw")
#: the two references: the labelled points alone, and scikit-learn's graph method
BASELINES = ("LogisticRegression", "LabelSpreading")
#: the estimators compared (the semi-supervised and transductive ones of the matrix)
COMPARED = tuple(e for e in ESTIMATORS if e not in SUPERVISED)
#: below the better reference by more than this (mean accuracy over the draws) is a loss
LOSS_MARGIN = 0.01
#: label draws per cell (seeds 0, 1, 2), as in tests/test_defaults.py
BASELINE_DRAWS = 3
#: the baseline table's column names
SHORT = {"LogisticRegression": "LogReg (labelled)", "HarmonicFunction": "Harmonic",
         "LaplacianAssignment": "LASS", "PoissonLearning": "Poisson",
         "MatrixCompletionTransducer": "MC"}


def _load(name):
    """``(X, y)`` of a scikit-learn data set (moons: 300 points, noise 0.1, seed 0)."""
    import sklearn.datasets as ds
    if name == "moons":
        return ds.make_moons(300, noise=0.1, random_state=0)
    return getattr(ds, f"load_{name}")(return_X_y=True)


def _standardise(X):
    from sklearn.preprocessing import StandardScaler
    return StandardScaler().fit_transform(X)


def _problem(name, quick):
    """The fits' problems: standardised breast cancer, digits (500 with ``quick``), and the
    generated low-rank multi-label set."""
    if name == "breast_cancer":
        X, y = _load(name)
        return _standardise(X), y
    if name == "digits":
        X, y = _load(name)
        return (X[:500], y[:500]) if quick else (X, y)
    n, d, t = (400, 60, 6) if quick else (2400, 300, 6)
    rng = np.random.default_rng(0)
    U = rng.normal(size=(n, 4))
    X = U @ rng.normal(size=(4, d)) + 0.1 * rng.normal(size=(n, d))
    return X, (U @ rng.normal(size=(4, t)) + 0.3 * rng.normal(size=(n, t)) > 0).astype(int)


def _hide(y, rng):
    """Labels seen by the fit: LABELS_PER_CLASS per class (per task), -1 elsewhere."""
    ys = np.full(y.shape, -1)
    if y.ndim == 1:
        idx = labeled_per_class(y, LABELS_PER_CLASS, rng)
        ys[idx] = y[idx]
        return ys
    for j in range(y.shape[1]):
        for c in (0, 1):
            idx = np.flatnonzero(y[:, j] == c)
            ys[rng.choice(idx, min(LABELS_PER_CLASS, idx.size), replace=False), j] = c
    return ys


def _make(name, seed):
    """``name`` at its defaults but ``random_state=seed`` where it has one (CV folds,
    clustering starts, SPORE's random choices), so that a run is reproducible."""
    est = by_name(name).load()()
    return est.set_params(random_state=seed) if "random_state" in est.get_params() else est


def _applicable(est, data, y):
    """Why ``est`` does not take the problem (None when it does)."""
    method = by_name(est)
    if data == "multilabel" and "multilabel" not in method.targets:
        return "multi-label target"
    if method.binary_only and np.unique(y).size > 2:
        return "binary only"
    if method.dense_max_n is not None and len(y) > method.dense_max_n:
        return "dense n x n iterates"
    return None


def _one(est_name, data, X, y, seed=0):
    """Fit ``est_name`` at its defaults (:func:`_make`): fit seconds, accuracy on the hidden
    (or held-out) labels, count of ConvergenceWarnings."""
    rng = np.random.default_rng(seed)
    est = _make(est_name, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if est_name in SUPERVISED:
            test = rng.random(len(y)) < 0.3
            _, wall, cpu = timed(est.fit, X[~test], y[~test])
            acc = float(np.mean(est.predict(X[test]) == y[test]))
        else:
            ys = _hide(y, rng)
            _, wall, cpu = timed(est.fit, X, ys)
            acc = float(np.mean(np.asarray(est.transduction_)[ys == -1] == y[ys == -1]))
    return dict(estimator=est_name, data=data, seconds=wall, cpu=cpu, accuracy=acc,
                convergence_warnings=sum(w.category.__name__ == "ConvergenceWarning"
                                         for w in caught))


# ------------------------------------------------------------- against the baselines
def baseline_problem(name, scaling="standardised"):
    """``(X, y)`` of the baseline matrix: ``scaling`` is ``"standardised"`` (scikit-learn's
    ``StandardScaler`` on all points, labelled or not) or ``"raw"``. Digits: the first 600
    images (SPORE's one-vs-rest on dense n x n iterates takes minutes on all 1 797)."""
    if name not in BASELINE_PROBLEMS:
        raise ValueError(f"no baseline problem {name!r}; known: {BASELINE_PROBLEMS}")
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
    X, y = _load(name)
    X, y = (X[:600], y[:600]) if name == "digits" else (X, y)
    return (_standardise(X) if scaling == "standardised" else X), y


def draw_labels(y, per_class, seed):
    """``per_class`` labels of each class drawn with ``seed``; ``-1`` elsewhere."""
    rng = np.random.default_rng(seed)
    ys = np.full(y.shape, -1)
    for c in np.unique(y):
        ys[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return ys


def _accuracy(name, X, y, per_class, seed):
    """Accuracy on the unlabelled points of a reference, or of an estimator at its defaults
    but ``random_state=seed``, with the labels of :func:`draw_labels` ``(seed)``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.semi_supervised import LabelSpreading
    ys = draw_labels(y, per_class, seed)
    u = ys == -1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # LabelSpreading's max_iter=30, estimators' caps
        if name == "LogisticRegression":
            pred = LogisticRegression(max_iter=5000).fit(X[~u], ys[~u]).predict(X[u])
        elif name == "LabelSpreading":
            pred = LabelSpreading(kernel="knn").fit(X, ys).transduction_[u]
        else:
            pred = np.asarray(_make(name, seed).fit(X, ys).transduction_)[u]
    return float(np.mean(pred == y[u]))


def compare_cell(data, scaling, per_class, draws=3, estimators=COMPARED):
    """One cell of the baseline matrix: ``name -> accuracies`` on the unlabelled points of
    the label draws with seeds ``0 .. draws - 1``, for each reference and estimator
    (``name -> str``, the reason, for an estimator that does not apply or whose fit raised).
    """
    X, y = baseline_problem(data, scaling)
    out = {}
    for name in BASELINES + tuple(estimators):
        why = None if name in BASELINES else _applicable(name, data, y)
        try:
            out[name] = why or [_accuracy(name, X, y, per_class, s) for s in range(draws)]
        except Exception as exc:  # noqa: BLE001 - recorded in the table, not hidden
            if name in BASELINES:
                raise
            out[name] = f"fit raised {type(exc).__name__}: {str(exc)[:60]}"
    return out


def losses(cell):
    """``{estimator: (its mean, the better reference's mean, that reference)}`` for the
    estimators of ``cell`` (:func:`compare_cell`) below a reference by more than
    :data:`LOSS_MARGIN`."""
    ref = max(BASELINES, key=lambda b: float(np.mean(cell[b])))
    rv = float(np.mean(cell[ref]))
    return {n: (float(np.mean(a)), rv, ref) for n, a in cell.items() if n not in BASELINES
            and not isinstance(a, str) and float(np.mean(a)) < rv - LOSS_MARGIN}


def _baseline_report(args):
    draws = args.reps or (2 if args.quick else BASELINE_DRAWS)
    rows, lost, n_cells = [], [], 0
    for data in BASELINE_PROBLEMS:
        for scaling in SCALINGS:
            for k in BASELINE_PER_CLASS:
                cell = compare_cell(data, scaling, k, draws=draws)
                bad, where = losses(cell), f"{data} ({scaling}, {k} per class)"
                log(f"[defaults] baselines {where}: " + ", ".join(
                    f"{n} {np.mean(a):.3f}" for n, a in cell.items() if not isinstance(a, str)),
                    args.verbose)
                rows.append({"data": data, "features": scaling, "labels / class": k, **{
                    SHORT.get(n, n): ("n/a" if not a.startswith("fit raised") else "error")
                    if isinstance(a, str) else f"**{np.mean(a):.3f}**" if n in bad
                    else f"{np.mean(a):.3f}" for n, a in cell.items()}})
                lost += [f"{n} on {where}: {m:.3f} against {ref} {rv:.3f}"
                         for n, (m, rv, ref) in bad.items()]
                lost += [f"{n} on {where}: {a}" for n, a in cell.items()
                         if isinstance(a, str) and a.startswith("fit raised")]
                n_cells += sum(not isinstance(a, str) for n, a in cell.items()
                               if n not in BASELINES)
    return ["## Against the labelled points alone and LabelSpreading", "",
            f"Mean accuracy on the unlabelled points over {draws} label draws (seeds 0 to "
            f"{draws - 1}), every estimator at its defaults; *LogReg (labelled)* is "
            "scikit-learn's `LogisticRegression(max_iter=5000)` trained on the labelled "
            "points alone, *LabelSpreading* is `LabelSpreading(kernel=\"knn\")` at its "
            "other defaults. Standardised: `StandardScaler` on all points. A value in "
            f"**bold** is below the better of the two references by more than {LOSS_MARGIN}; "
            "n/a: the estimator does not take the problem.", "",
            markdown_table(rows, list(rows[0])), "",
            f"Below a reference ({len(lost)} of {n_cells} estimator cells), or failed:", "",
            *([f"- {t}" for t in lost] or ["- none"])]


def _run(args):
    parts = only_set(args, PARTS)
    rows = []
    for threads in (1, 2) if set(parts) & set(PROBLEMS) else ():
        with blas_limit(threads):
            for data in (p for p in parts if p in PROBLEMS):
                X, y = _problem(data, args.quick)
                for est in ESTIMATORS:
                    why = _applicable(est, data, y)
                    r = dict(estimator=est, data=data, **({"fit s": f"n/a ({why})"} if why
                                                          else _row(_one(est, data, X, y))))
                    rows.append({**r, "BLAS threads": threads})
                    log(f"[defaults] {threads} thread(s) {data:13s} {est:27s} "
                        f"{r['fit s']:>7s} s  accuracy {r.get('accuracy', '-')}", args.verbose)
    peak = f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    text = ["# Default fits of every estimator (`semisup bench defaults`)", "",
            header(args, peak), "", "## The fits", "",
            "Each estimator at its defaults (no parameter set but random_state=0 where it has "
            "one, so that a run is reproducible), 10 labels per class (per "
            "task for the multi-label problem) and the accuracy on the hidden labels; the "
            "clustered classifier (supervised) on a 70/30 split. Seconds are the wall time "
            "of `fit`; CPU is this process's CPU time (both threads counted; not the "
            "worker processes' of SPORE's one-vs-rest tasks).", "",
            *([] if is_full_run(args) else
              ["*(quick run: smaller digits and multi-label problems)*", ""]),
            markdown_table(rows, ["estimator", "data", "BLAS threads", "fit s", "CPU s",
                                  "accuracy", "ConvergenceWarnings"]), ""]
    if "baselines" in parts:
        text += [*_baseline_report(args), ""]
    path = write_report(report_path(args, "defaults"), "\n".join(text), keep=["## What we find"])
    print("\n".join(text))
    print(f"report: {path}")
    return 0


def _row(r):
    return {"fit s": f"{r['seconds']:.2f}", "CPU s": f"{r['cpu']:.2f}",
            "accuracy": f"{r['accuracy']:.3f}", "ConvergenceWarnings": r["convergence_warnings"]}


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench defaults``."""
    add_command(subparsers, "defaults", _run, kind="bench", only=PARTS,
                help="every estimator at its defaults: time and accuracy",
                description=__doc__.split("\n\n")[1],
                only_help="which problems, and 'baselines' for the comparison with "
                          "LogisticRegression and LabelSpreading (default all)",
                quick_help="smaller digits and multi-label problems, two label draws (under "
                           "--out)")
