"""``semisup bench defaults``: every public estimator at its default parameters.

Each estimator is fitted as a new user would, with no parameter but what the data needs, on
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
the first 600 digits (multi-class): the mean accuracy on the unlabelled points over a few label draws, and
where an estimator loses to either.
"""

from __future__ import annotations

import os
import resource
import time
import warnings

import numpy as np

from .._progress import log
from .._registry import REGISTRY, by_name
from ..datasets.splits import labeled_per_class
from ._report import machine
from ._runner import (add_common_options, blas_limit, is_full_run, only_set, report_path,
                      run_command, write_report)

__all__ = ["add_bench_parser", "run_bench"]

PROBLEMS = ("breast_cancer", "digits", "multilabel")
#: the parts ``--only`` selects: the problems above and the comparison with the baselines
PARTS = PROBLEMS + ("baselines",)
#: the registry's estimators with "defaults" among their bench commands, in its order
ESTIMATORS = tuple(m.name for m in REGISTRY if "defaults" in m.bench)
BINARY_ONLY = {m.name for m in REGISTRY if m.binary_only}
SUPERVISED = {m.name for m in REGISTRY if m.setting == "supervised"}
LABELS_PER_CLASS = 10


def _problem(name, quick):
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.preprocessing import StandardScaler
    if name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
        return StandardScaler().fit_transform(X), y
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        return (X[:500], y[:500]) if quick else (X, y)
    n, d, t = (400, 60, 6) if quick else (2400, 300, 6)
    rng = np.random.default_rng(0)
    U = rng.normal(size=(n, 4))
    X = U @ rng.normal(size=(4, d)) + 0.1 * rng.normal(size=(n, d))
    Y = (U @ rng.normal(size=(4, t)) + 0.3 * rng.normal(size=(n, t)) > 0).astype(int)
    return X, Y


def _hide(y, rng):
    """Labels seen by the fit: LABELS_PER_CLASS per class (per task), -1 elsewhere."""
    if y.ndim == 2:
        ys = np.full(y.shape, -1)
        for j in range(y.shape[1]):
            for c in (0, 1):
                idx = np.flatnonzero(y[:, j] == c)
                ys[rng.choice(idx, min(LABELS_PER_CLASS, idx.size), replace=False), j] = c
        return ys
    ys = np.full(y.shape, -1)
    idx = labeled_per_class(y, LABELS_PER_CLASS, rng)
    ys[idx] = y[idx]
    return ys


def _make(name):
    return by_name(name).load()()


def _applicable(est, data, y):
    method = by_name(est)
    if data == "multilabel" and "multilabel" not in method.targets:
        return "multi-label target"
    if est in BINARY_ONLY and np.unique(y).size > 2:
        return "binary only"
    if method.dense_max_n is not None and len(y) > method.dense_max_n:
        return "dense n x n iterates"
    return None


def _one(est_name, data, X, y, seed=0):
    rng = np.random.default_rng(seed)
    est = _make(est_name)
    cpu0, t0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if est_name in SUPERVISED:
            test = rng.random(len(y)) < 0.3
            est.fit(X[~test], y[~test])
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            acc = float(np.mean(est.predict(X[test]) == y[test]))
        else:
            ys = _hide(y, rng)
            est.fit(X, ys)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            hidden = ys == -1
            acc = float(np.mean(np.asarray(est.transduction_)[hidden] == y[hidden]))
    conv = [str(w.message)[:70] for w in caught
            if w.category.__name__ == "ConvergenceWarning"]
    return dict(estimator=est_name, data=data, seconds=wall, cpu=cpu, accuracy=acc,
                convergence_warnings=len(conv))


# ------------------------------------------------------------- against the baselines
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


def baseline_problem(name, scaling="standardised"):
    """``(X, y)`` of the baseline matrix: ``scaling`` is ``"standardised"`` (scikit-learn's
    ``StandardScaler`` on all points, labelled or not) or ``"raw"``. Digits: the first 600
    images (10 classes; SPORE's one-vs-rest on dense n x n iterates takes minutes on all
    1 797)."""
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine, make_moons
    from sklearn.preprocessing import StandardScaler
    if name == "moons":
        X, y = make_moons(300, noise=0.1, random_state=0)
    elif name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
    elif name == "wine":
        X, y = load_wine(return_X_y=True)
    elif name == "digits":
        X, y = load_digits(return_X_y=True)
        X, y = X[:600], y[:600]
    else:
        raise ValueError(f"no baseline problem {name!r}; known: {BASELINE_PROBLEMS}")
    if scaling == "standardised":
        X = StandardScaler().fit_transform(X)
    elif scaling != "raw":
        raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
    return X, y


def draw_labels(y, per_class, seed):
    """``per_class`` labels of each class drawn with ``seed``; ``-1`` elsewhere."""
    rng = np.random.default_rng(seed)
    ys = np.full(y.shape, -1)
    for c in np.unique(y):
        ys[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return ys


def _reference(name, X, ys):
    """The labels a reference gives the points with ``ys == -1``."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.semi_supervised import LabelSpreading
    u = ys == -1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # LabelSpreading's max_iter=30
        if name == "LogisticRegression":
            return LogisticRegression(max_iter=5000).fit(X[~u], ys[~u]).predict(X[u])
        return LabelSpreading(kernel="knn").fit(X, ys).transduction_[u]


def compare_cell(data, scaling, per_class, draws=3, estimators=COMPARED):
    """One cell of the baseline matrix: for each reference and estimator, the accuracy on
    the unlabelled points of each of ``draws`` label draws (seeds ``0 .. draws - 1``). Every
    estimator runs at its defaults but ``random_state``, set to the draw's seed (the CV
    folds of MatrixCompletionTransducer, SPORE's random choices), so that a cell is
    reproducible.

    Returns a dict ``name -> list of accuracies`` (``name -> str``, the reason, for an
    estimator that does not apply or whose fit raised).
    """
    X, y = baseline_problem(data, scaling)
    out = {}
    for name in BASELINES + tuple(estimators):
        if name not in BASELINES:
            why = _applicable(name, data, y)
            if why:
                out[name] = why
                continue
        accs = []
        for seed in range(draws):
            ys = draw_labels(y, per_class, seed)
            u = ys == -1
            if name in BASELINES:
                pred = _reference(name, X, ys)
            else:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = _make(name)
                        if "random_state" in est.get_params():   # reproducible CV folds
                            est.set_params(random_state=seed)
                        pred = np.asarray(est.fit(X, ys).transduction_)[u]
                except Exception as exc:  # noqa: BLE001 - recorded in the table, not hidden
                    accs = f"fit raised {type(exc).__name__}: {str(exc)[:60]}"
                    break
            accs.append(float(np.mean(pred == y[u])))
        out[name] = accs
    return out


def losses(cell):
    """``{estimator: (its mean, the better reference's mean, that reference)}`` for the
    estimators of ``cell`` (:func:`compare_cell`) below a reference by more than
    :data:`LOSS_MARGIN`."""
    refs = {b: float(np.mean(cell[b])) for b in BASELINES}
    best = max(refs, key=refs.get)
    out = {}
    for name, accs in cell.items():
        if name in BASELINES or isinstance(accs, str):
            continue
        m = float(np.mean(accs))
        if m < refs[best] - LOSS_MARGIN:
            out[name] = (m, refs[best], best)
    return out


def _baseline_rows(args):
    draws = args.reps or (2 if args.quick else BASELINE_DRAWS)
    rows = []
    for data in BASELINE_PROBLEMS:
        for scaling in SCALINGS:
            for k in BASELINE_PER_CLASS:
                cell = compare_cell(data, scaling, k, draws=draws)
                rows.append(dict(data=data, scaling=scaling, per_class=k, cell=cell))
                log(f"[defaults] baselines {data:13s} {scaling:12s} {k} per class: "
                    + ", ".join(f"{n} {np.mean(a):.3f}" for n, a in cell.items()
                                if not isinstance(a, str)), args.verbose)
    return rows, draws


def _baseline_report(rows, draws):
    short = {"LogisticRegression": "LogReg (labelled)", "LabelSpreading": "LabelSpreading",
             "HarmonicFunction": "Harmonic", "LaplacianAssignment": "LASS",
             "PoissonLearning": "Poisson", "PoissonMBO": "PoissonMBO", "LapSVM": "LapSVM",
             "LapRLS": "LapRLS", "SPORE": "SPORE", "GraphKernelSVM": "GraphKernelSVM",
             "MatrixCompletionTransducer": "MC"}
    names = BASELINES + COMPARED
    lines = ["## Against the labelled points alone and LabelSpreading", "",
             f"Mean accuracy on the unlabelled points over {draws} label draws (seeds 0 to "
             f"{draws - 1}), every estimator at its defaults; *LogReg (labelled)* is "
             "scikit-learn's `LogisticRegression(max_iter=5000)` trained on the labelled "
             "points alone, *LabelSpreading* is `LabelSpreading(kernel=\"knn\")` at its "
             "other defaults. Standardised: `StandardScaler` on all points. A value in "
             f"**bold** is below the better of the two references by more than {LOSS_MARGIN}; "
             "n/a: the estimator does not take the problem.", "",
             "| data | features | labels / class | "
             + " | ".join(short.get(n, n) for n in names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    lost = []
    for r in rows:
        bad = losses(r["cell"])
        cells = []
        for n in names:
            a = r["cell"][n]
            if isinstance(a, str):
                cells.append("n/a" if not a.startswith("fit raised") else "error")
            elif n in bad:
                cells.append(f"**{np.mean(a):.3f}**")
            else:
                cells.append(f"{np.mean(a):.3f}")
        lines.append(f"| {r['data']} | {r['scaling']} | {r['per_class']} | "
                     + " | ".join(cells) + " |")
        lost += [f"{n} on {r['data']} ({r['scaling']}, {r['per_class']} per class): "
                 f"{m:.3f} against {ref} {rv:.3f}" for n, (m, rv, ref) in bad.items()]
        lost += [f"{n} on {r['data']} ({r['scaling']}, {r['per_class']} per class): {a}"
                 for n, a in r["cell"].items() if isinstance(a, str)
                 and a.startswith("fit raised")]
    lines += ["", f"Below a reference ({len(lost)} of "
              f"{sum(not isinstance(a, str) for r in rows for n, a in r['cell'].items() if n not in BASELINES)}"
              " estimator cells), or failed:", ""]
    lines += [f"- {t}" for t in lost] or ["- none"]
    return "\n".join(lines) + "\n"


def run_bench(args):
    return run_command(args, _run)


def _run(args):
    parts = only_set(args, PARTS)
    problems = [p for p in parts if p in PROBLEMS]
    rows = []
    for threads in (1, 2) if problems else ():
        with blas_limit(threads):
            for data in problems:
                X, y = _problem(data, args.quick)
                for est in ESTIMATORS:
                    why = _applicable(est, data, y)
                    if why:
                        rows.append(dict(estimator=est, data=data, threads=threads, skip=why))
                        continue
                    r = _one(est, data, X, y)
                    r["threads"] = threads
                    rows.append(r)
                    log(f"[defaults] {threads} thread(s) {data:13s} {est:27s} "
                        f"{r['seconds']:7.2f} s  accuracy {r['accuracy']:.3f}", args.verbose)
    text = _report(rows, args)
    if "baselines" in parts:
        text += "\n" + _baseline_report(*_baseline_rows(args))
    path = report_path(args, "defaults")
    write_report(path, text, keep=["## What we find"])
    print(text)
    print(f"report: {path}")
    return 0


def _report(rows, args):
    load = os.getloadavg()
    lines = ["# Default fits of every estimator (`semisup bench defaults`)", "",
             f"Command: `semisup bench defaults{' --quick' if args.quick else ''}`; machine: "
             f"{machine()}; load average at the end "
             f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}; peak RSS "
             f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB.", "",
             "## The fits", "",
             "Each estimator at its defaults (no parameter set), 10 labels per class (per "
             "task for the multi-label problem) and the accuracy on the hidden labels; the "
             "clustered classifier (supervised) on a 70/30 split. Seconds are the wall time "
             "of `fit`; CPU is the process CPU time (both threads counted).", ""]
    if not is_full_run(args):
        lines += ["*(quick run: smaller digits and multi-label problems)*", ""]
    lines += ["| estimator | data | BLAS threads | fit s | CPU s | accuracy | "
              "ConvergenceWarnings |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "skip" in r:
            lines.append(f"| {r['estimator']} | {r['data']} | {r['threads']} | "
                         f"n/a ({r['skip']}) | | | |")
        else:
            lines.append(f"| {r['estimator']} | {r['data']} | {r['threads']} | "
                         f"{r['seconds']:.2f} | {r['cpu']:.2f} | {r['accuracy']:.3f} | "
                         f"{r['convergence_warnings']} |")
    return "\n".join(lines) + "\n"


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench defaults``."""
    p = subparsers.add_parser(
        "defaults", help="every estimator at its defaults: time and accuracy",
        description=__doc__.split("\n\n")[1])
    add_common_options(p, "defaults", "bench", only=PARTS,
                       only_help="which problems, and 'baselines' for the comparison with "
                                 "LogisticRegression and LabelSpreading (default all)",
                       quick_help="smaller digits and multi-label problems, two label "
                                  "draws (under --out)")
    p.set_defaults(func=run_bench)
