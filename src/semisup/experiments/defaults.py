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


def run_bench(args):
    return run_command(args, _run)


def _run(args):
    problems = only_set(args, PROBLEMS)
    rows = []
    for threads in (1, 2):
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
    add_common_options(p, "defaults", "bench", only=PROBLEMS,
                       only_help="which problems (default all)",
                       quick_help="smaller digits and multi-label problems (under --out)")
    p.set_defaults(func=run_bench)
