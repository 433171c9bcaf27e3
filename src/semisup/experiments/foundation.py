"""Foundation: the harmonic-function baseline in ``semisup demo`` and ``semisup bench foundation``.

The benchmark has two parts, selected by ``--only knn,ssl`` (both by default): ``knn``, the
exact (scikit-learn brute force) against the approximate (pynndescent) 10-NN graph of MNIST,
time and recall; ``ssl``, on one 10-NN graph of MNIST with 10 labels per class,
:class:`HarmonicFunction` against scikit-learn's ``LabelPropagation`` / ``LabelSpreading``
(the same graph as a callable kernel) and GraphLearning's Laplace learning (when
importable): fit time on the given graph and accuracy on the unlabeled points. ``--cache``
keeps the neighbour lists for a later ``--only ssl``; ``--n-jobs`` is the threads of the
neighbour searches.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from .._progress import log
from ..datasets.splits import labeled_per_class
from ._report import header, load_average as _load, timed, write_text
from ._runner import add_command, only_set, report_path

PARTS = ("knn", "ssl")
QUICK_SAMPLES = 5000


#: the options of ``semisup bench foundation`` beside the common ones
OPTIONS = {
    "--n-neighbors": dict(type=int, default=10),
    "--labels-per-class": dict(type=int, default=10),
    "--graph": dict(choices=("exact", "approx"), default="exact",
                    help="graph used by (b) (reused from (a) when both run)"),
    "--weights": dict(choices=("binary", "heat"), default="binary",
                      help="edge weights of the graph used by (b)"),
    "--tol": dict(type=float, nargs="+", default=[1e-8, 1e-6],
                  help="CG tolerance(s) of HarmonicFunction"),
    "--n-samples": dict(type=int, default=None,
                        help="random subset of MNIST (quick check; default all 70 000)"),
}


def _semi_labels(y, per_class, rng):
    """Copy of ``y`` with all but ``per_class`` random points per class set to -1."""
    out = np.full(y.shape, -1, dtype=np.int64)
    idx = labeled_per_class(y, per_class, rng)
    out[idx] = y[idx]
    return out


def demo_rows(verbose: bool = False) -> list[dict]:
    """HarmonicFunction on two moons (generated) and scikit-learn's digits, 10 labels/class."""
    from sklearn.datasets import load_digits, make_moons

    from ..baselines.harmonic import HarmonicFunction

    rng = np.random.default_rng(0)
    rows = []
    for name, (X, y), per_class, k in [
            ("two moons (200 pts, 2 labels)", make_moons(200, noise=0.05, random_state=0), 1, 7),
            ("digits (1797 pts, 10 labels/class)", load_digits(return_X_y=True), 10, 10)]:
        y_semi = _semi_labels(y, per_class, rng)
        model, seconds, _ = timed(HarmonicFunction(n_neighbors=k).fit, X, y_semi)
        acc = float(np.mean(model.transduction_[y_semi == -1] == y[y_semi == -1]))
        log(f"[foundation] {name}: accuracy {acc:.4f} in {seconds:.2f} s", verbose)
        rows.append(dict(method="HarmonicFunction", data=name, metric="accuracy (unlabeled)",
                         score=acc, seconds=seconds))
    return rows


# ----------------------------------------------------------------------------- benchmark
def _cache_file(kind, args):
    return os.path.join(args.cache, f"mnist-{args.n_samples or 'all'}-{args.n_neighbors}nn-"
                                    f"{kind}.npz")


def _search(X, kind, args, found):
    """``kind`` neighbour lists of ``X`` (seconds of the search), kept in ``found`` and, with
    ``--cache``, on disk for part (b)."""
    from ..graph import knn_search
    found[kind], secs, _ = timed(knn_search, X, args.n_neighbors, method=kind,
                                 n_jobs=args.n_jobs, random_state=0)
    if args.cache:
        os.makedirs(args.cache, exist_ok=True)
        np.savez(_cache_file(kind, args), dist=found[kind][0], ind=found[kind][1])
    return secs


def _bench_knn(X, args, found):
    """(a): exact against approximate neighbour search, time and recall."""
    from .._optional import available
    from ..graph import knn_search
    k = args.n_neighbors
    lines = [f"## (a) Exact vs approximate {k}-NN graph, MNIST {X.shape[0]} x {X.shape[1]} "
             "float32", "", "| method | seconds | recall vs exact | load average (1/5/15 min) |",
             "|---|---|---|---|",
             f"| exact (scikit-learn brute force) | {_search(X, 'exact', args, found):.1f} | 1 | "
             f"{_load()} |"]
    if not available("pynndescent"):
        return lines + ["", "pynndescent is not installed (extra `[fast]`): approximate search "
                        "skipped.", ""]
    # NN-descent's numba kernels compile on first use: time that once, on a small subset
    _, t_jit, _ = timed(knn_search, X[:2000], k, method="approx", n_jobs=args.n_jobs,
                        random_state=0)
    t_approx = _search(X, "approx", args, found)
    ind, aind = found["exact"][1], found["approx"][1]
    recall = float((np.sort(aind, axis=1)[:, :, None]
                    == np.sort(ind, axis=1)[:, None, :]).any(2).mean())
    log(f"[bench] exact and approx searches; recall {recall:.4f}", args.verbose)
    return lines + [f"| approximate (pynndescent, random_state=0) | {t_approx:.1f} | "
                    f"{recall:.4f} | {_load()} |", "",
                    "The approximate time excludes pynndescent's one-off numba compilation "
                    f"({t_jit:.1f} s, measured on a 2000-point warm-up). Recall is the fraction "
                    "of the exact neighbour lists found by the approximate search.", ""]


def _methods(W, X, y_semi, tols):
    """``name -> fit()`` giving (labels, iterations, label distributions or None): ours at
    each CG tol, GraphLearning's Laplace learning when importable, scikit-learn's two."""
    from sklearn.semi_supervised import LabelPropagation, LabelSpreading

    from .._optional import available
    from ..baselines.harmonic import HarmonicFunction

    def ours(tol):
        m = HarmonicFunction(affinity="precomputed", tol=tol).fit(W, y_semi)
        return m.transduction_, m.n_iter_, m.label_distributions_

    def gl():
        import graphlearning
        train = np.nonzero(y_semi != -1)[0]
        u = graphlearning.ssl.laplace(W).fit(train, y_semi[train])
        return np.argmax(u, axis=1), "-", u

    def sk(cls, harmonic):   # scikit-learn normalises the matrix it receives in place
        m = cls(kernel=lambda _a, _b=None: W.copy()).fit(X, y_semi)
        return m.transduction_, m.n_iter_, m.label_distributions_ if harmonic else None

    runs = {f"semisup HarmonicFunction (tol={tol:g})": lambda tol=tol: ours(tol) for tol in tols}
    if available("graphlearning"):
        runs["GraphLearning laplace (tol=1e-5, its default)"] = gl
    runs["scikit-learn LabelPropagation (same graph)"] = lambda: sk(LabelPropagation, True)
    runs["scikit-learn LabelSpreading (same graph)"] = lambda: sk(LabelSpreading, False)
    return runs, ours(1e-12)[2]


def _bench_ssl(X, y, args, found):
    """(b): the label propagation methods on one graph, per label draw and their means."""
    from sklearn.exceptions import ConvergenceWarning

    from ..graph import graph_from_neighbors

    if args.graph not in found:
        _search(X, args.graph, args, found)
    W = graph_from_neighbors(*found[args.graph], weights=args.weights)
    lines = [f"## (b) Label propagation on the same {args.graph} {args.n_neighbors}-NN graph "
             f"of MNIST ({X.shape[0]} points, {args.weights} weights, {W.nnz} non-zeros), "
             f"{args.labels_per_class} labels per class", "",
             "Fit time on the given graph (wall clock and CPU; the graph itself is not "
             "timed), accuracy on the unlabeled points, and the largest error of the label "
             "distributions against the exact harmonic solution (HarmonicFunction with "
             "tol=1e-12, not timed; LabelSpreading solves a different problem). One row per "
             "method and label draw.", "",
             "| method | draw | seconds | CPU seconds | accuracy | max error vs exact | "
             "iterations | load average |", "|---|---|---|---|---|---|---|---|"]
    summary = {}
    for draw in range(args.reps or 1):
        y_semi = _semi_labels(y, args.labels_per_class, np.random.default_rng(draw))
        unl = y_semi == -1
        runs, exact = _methods(W, X, y_semi, args.tol)
        for name, fn in runs.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                (pred, n_iter, F), seconds, cpu = timed(fn)
            acc = float(np.mean(pred[unl] == y[unl]))
            err = "-" if F is None else f"{np.abs(F - exact).max():.1e}"
            summary.setdefault(name, []).append((seconds, cpu, acc))
            lines.append(f"| {name} | {draw} | {seconds:.2f} | {cpu:.2f} | {acc:.4f} | {err} | "
                         f"{n_iter} | {_load()} |")
            log(f"[bench] draw {draw}: {name}: {seconds:.2f} s, accuracy {acc:.4f}",
                args.verbose)
    if not any(n.startswith("GraphLearning") for n in summary):
        lines += ["", "GraphLearning (`graphlearning`) is not importable in this environment: "
                  "its row is missing. Install it next to semisup to compare.", ""]
    mean = {name: np.mean(v, axis=0) for name, v in summary.items()}
    lines += ["", "Mean over draws:", "", "| method | seconds | CPU seconds | accuracy |",
              "|---|---|---|---|", *(f"| {n} | {s:.2f} | {c:.2f} | {a:.4f} |"
                                      for n, (s, c, a) in mean.items()), ""]
    g = next((v for n, v in mean.items() if n.startswith("GraphLearning")), None)
    if g is not None:
        lines += ["Target: solve no slower than GraphLearning at equal accuracy (GraphLearning: "
                  f"{g[0]:.2f} s wall, {g[1]:.2f} s CPU, accuracy {g[2]:.4f}).", "",
                  *(f"- {n}: {o[0]:.2f} s wall ({o[0] / g[0]:.2f}x), {o[1]:.2f} s CPU "
                    f"({o[1] / g[1]:.2f}x), accuracy {o[2]:.4f}"
                    for n, o in mean.items() if n.startswith("semisup")), ""]
    return lines


def _bench(args) -> int:
    from ..datasets import load_dataset

    parts = only_set(args, PARTS)
    args.n_samples = args.n_samples or (QUICK_SAMPLES if args.quick else None)
    data = load_dataset("mnist", data_home=args.data_home)
    X, y = np.ascontiguousarray(data.data, dtype=np.float32), np.asarray(data.target)
    if args.n_samples:
        idx = np.random.default_rng(0).choice(X.shape[0], args.n_samples, replace=False)
        X, y = X[idx], y[idx]
    lines = ["# Benchmark: foundation (kNN graphs, harmonic-function baseline)", "",
             header(args), "", f"Data: MNIST {X.shape[0]} x {X.shape[1]} float32 in [0, 1].",
             ""]
    found: dict = {}
    if "knn" in parts:
        lines += _bench_knn(X, args, found)
    elif args.cache and os.path.exists(_cache_file(args.graph, args)):
        with np.load(_cache_file(args.graph, args)) as z:
            found[args.graph] = z["dist"], z["ind"]
        lines += [f"Neighbour lists of (b) read from {_cache_file(args.graph, args)}.", ""]
    if "ssl" in parts:
        lines += _bench_ssl(X, y, args, found)
    out = write_text(report_path(args), "\n".join(lines))
    print("\n".join(lines))
    print(f"\nWritten to {out}", file=sys.stderr)
    return 0


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench foundation``."""
    add_command(
        subparsers, "foundation", _bench, kind="bench", options=OPTIONS,
        help="kNN graph and harmonic-function benchmarks on MNIST",
        description="Benchmarks of the foundation: (a) exact vs approximate kNN graph of MNIST, "
                    "(b) HarmonicFunction vs scikit-learn LabelPropagation/LabelSpreading and "
                    "GraphLearning's Laplace learning on the same graph (--only knn,ssl; "
                    "default both).",
        only=PARTS, needs={"knn": ("mnist",), "ssl": ("mnist",)},
        only_help="knn = (a) exact vs approximate graph, ssl = (b) label propagation "
                  "methods (default both)",
        reps_help="random label draws for (b) (default 1)",
        quick_help=f"a random subset of {QUICK_SAMPLES} MNIST images (written under --out)",
        n_jobs_default=-1, n_jobs_help="threads of the neighbour searches",
        unused=("--plot", "--resume", "--assemble-only"))
