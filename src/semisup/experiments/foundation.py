"""Foundation: the harmonic-function baseline in ``semisup demo`` and ``semisup bench foundation``.

The benchmark has two parts, selected by ``--only knn,ssl`` (both by default):

``knn``
    exact (scikit-learn brute force) vs approximate (pynndescent) 10-NN graph of full MNIST
    (70 000 x 784, float32): time of each and recall of the approximate neighbour lists.
``ssl``
    on one 10-NN graph of MNIST with 10 labels per class: :class:`HarmonicFunction` vs
    scikit-learn's ``LabelPropagation`` / ``LabelSpreading`` (given the same graph through a
    callable kernel) vs GraphLearning's Laplace learning (``graphlearning``, used when
    importable): fit time on the given graph and accuracy on the unlabeled points.

Results go to ``docs/benchmarks/foundation.md`` (``--quick``: ``<--out>/foundation.md``) with
the command, machine and load average. ``--cache`` keeps the neighbour lists, so a later
``--only ssl`` run reuses them instead of searching again; ``--n-jobs`` is the threads of the
neighbour searches (default -1: all cores).
"""

from __future__ import annotations

import datetime
import os
import sys
import time
import warnings

import numpy as np

from .._progress import log
from ..datasets.splits import labeled_per_class
from ._report import load_average as _load, machine as _machine, timed
from ._runner import add_common_options, only_set, out_dir, report_path, run_command

PARTS = ("knn", "ssl")
QUICK_SAMPLES = 5000


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
    X, y = make_moons(200, noise=0.05, random_state=0)
    digits = load_digits()
    for name, X, y, per_class, k in [
        ("two moons (200 pts, 2 labels)", X, y, 1, 7),
        ("digits (1797 pts, 10 labels/class)", digits.data, digits.target, 10, 10),
    ]:
        y_semi = _semi_labels(y, per_class, rng)
        t0 = time.perf_counter()
        model = HarmonicFunction(n_neighbors=k).fit(X, y_semi)
        seconds = time.perf_counter() - t0
        unl = y_semi == -1
        acc = float(np.mean(model.transduction_[unl] == y[unl]))
        log(f"[foundation] {name}: accuracy {acc:.4f} in {seconds:.2f} s", verbose)
        rows.append(dict(method="HarmonicFunction", data=name, metric="accuracy (unlabeled)",
                         score=acc, seconds=seconds))
    return rows


# --------------------------------------------------------------------------------------------
# Benchmark






def _bench_knn(X, args, lines, cache):
    from ..graph import knn_search
    from .._optional import available

    k = args.n_neighbors
    lines += [f"## (a) Exact vs approximate {k}-NN graph, MNIST {X.shape[0]} x {X.shape[1]} "
              "float32", "",
              "| method | seconds | recall vs exact | load average (1/5/15 min) |",
              "|---|---|---|---|"]
    log(f"[bench] exact {k}-NN search on {X.shape} ...", args.verbose)
    (dist, ind), t_exact, _ = timed(knn_search, X, k, method="exact", n_jobs=args.n_jobs)
    _store(cache, "exact", (dist, ind), args)
    lines.append(f"| exact (scikit-learn brute force) | {t_exact:.1f} | 1 | {_load()} |")
    log(f"[bench] exact: {t_exact:.1f} s", args.verbose)
    if not available("pynndescent"):
        lines += ["", "pynndescent is not installed (extra `[fast]`): approximate search "
                  "skipped.", ""]
        return
    # NN-descent's numba kernels compile on first use: time that once, on a small subset.
    _, t_jit, _ = timed(knn_search, X[:2000], k, method="approx", n_jobs=args.n_jobs,
                        random_state=0)
    log(f"[bench] pynndescent warm-up (compilation): {t_jit:.1f} s", args.verbose)
    (adist, aind), t_approx, _ = timed(knn_search, X, k, method="approx", n_jobs=args.n_jobs,
                                       random_state=0)
    _store(cache, "approx", (adist, aind), args)
    hits = (np.sort(aind, axis=1)[:, :, None] == np.sort(ind, axis=1)[:, None, :]).any(2)
    recall = float(hits.mean())
    lines.append(f"| approximate (pynndescent, random_state=0) | {t_approx:.1f} | "
                 f"{recall:.4f} | {_load()} |")
    lines += ["", f"The approximate time excludes pynndescent's one-off numba compilation "
              f"({t_jit:.1f} s, measured on a 2000-point warm-up). Recall is the fraction of the "
              "exact neighbour lists found by the approximate search.", ""]
    log(f"[bench] approx: {t_approx:.1f} s, recall {recall:.4f}", args.verbose)


def _cache_file(kind, args):
    n = args.n_samples or "all"
    return os.path.join(args.cache, f"mnist-{n}-{args.n_neighbors}nn-{kind}.npz")


def _store(cache, kind, neighbors, args):
    """Keep neighbour lists in memory and, with ``--cache``, on disk for part (b)."""
    cache[kind] = neighbors
    if args.cache:
        os.makedirs(args.cache, exist_ok=True)
        np.savez(_cache_file(kind, args), dist=neighbors[0], ind=neighbors[1])


def _cached(kind, args):
    if args.cache and os.path.exists(_cache_file(kind, args)):
        with np.load(_cache_file(kind, args)) as z:
            return z["dist"], z["ind"]
    return None


def _graph_learning():
    try:
        import graphlearning  # noqa: F401
    except ImportError:
        return None
    return graphlearning


def _bench_ssl(X, y, args, lines, cache):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.semi_supervised import LabelPropagation, LabelSpreading

    from ..graph import graph_from_neighbors, knn_search

    k = args.n_neighbors
    if args.graph not in cache:
        log(f"[bench] {args.graph} {k}-NN search for the SSL benchmark ...", args.verbose)
        _store(cache, args.graph, knn_search(X, k, method=args.graph, n_jobs=args.n_jobs,
                                             random_state=0), args)
    W = graph_from_neighbors(*cache[args.graph], weights=args.weights)
    gl = _graph_learning()
    n = X.shape[0]
    lines += [f"## (b) Label propagation on the same {args.graph} {k}-NN graph of MNIST "
              f"({n} points, {args.weights} weights, {W.nnz} non-zeros), "
              f"{args.labels_per_class} labels per class", "",
              "Fit time on the given graph (wall clock and CPU; the graph itself is not "
              "timed), accuracy on the unlabeled points, and the largest error of the label "
              "distributions against the exact harmonic solution (HarmonicFunction with "
              "tol=1e-12, not timed; LabelSpreading solves a different problem). One row per "
              "method and label draw.", "",
              "| method | draw | seconds | CPU seconds | accuracy | max error vs exact | "
              "iterations | load average |",
              "|---|---|---|---|---|---|---|---|"]

    def kernel(_a, _b=None):
        return W.copy()  # scikit-learn normalizes the matrix it receives in place

    summary = {}
    for draw in range(args.reps or 1):
        rng = np.random.default_rng(draw)
        y_semi = _semi_labels(y, args.labels_per_class, rng)
        unl = y_semi == -1
        exact = _fit_ours(W, y_semi, 1e-12)[2]
        runs = []
        for tol in args.tol:
            runs.append((f"semisup HarmonicFunction (tol={tol:g})",
                         lambda tol=tol: _fit_ours(W, y_semi, tol)))
        if gl is not None:
            runs.append(("GraphLearning laplace (tol=1e-5, its default)",
                         lambda: _fit_gl(gl, W, y_semi)))
        runs.append(("scikit-learn LabelPropagation (same graph)",
                     lambda: _fit_sklearn(LabelPropagation(kernel=kernel), X, y_semi, True)))
        runs.append(("scikit-learn LabelSpreading (same graph)",
                     lambda: _fit_sklearn(LabelSpreading(kernel=kernel), X, y_semi, False)))
        for name, fn in runs:
            log(f"[bench] draw {draw}: {name} ...", args.verbose)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                (pred, n_iter, F), seconds, cpu = timed(fn)
            acc = float(np.mean(pred[unl] == y[unl]))
            err = "-" if F is None else f"{np.abs(F - exact).max():.1e}"
            summary.setdefault(name, []).append((seconds, cpu, acc))
            lines.append(f"| {name} | {draw} | {seconds:.2f} | {cpu:.2f} | {acc:.4f} | {err} | "
                         f"{n_iter} | {_load()} |")
            log(f"[bench]   {seconds:.2f} s, accuracy {acc:.4f}", args.verbose)
    if gl is None:
        lines += ["", "GraphLearning (`graphlearning`) is not importable in this environment: "
                  "its row is missing. Install it next to semisup to compare.", ""]
    lines += ["", "Mean over draws:", "", "| method | seconds | CPU seconds | accuracy |",
              "|---|---|---|---|"]
    for name, vals in summary.items():
        s, c, a = np.mean(vals, axis=0)
        lines.append(f"| {name} | {s:.2f} | {c:.2f} | {a:.4f} |")
    lines.append("")
    return summary


def _fit_ours(W, y_semi, tol):
    from ..baselines.harmonic import HarmonicFunction
    m = HarmonicFunction(affinity="precomputed", tol=tol).fit(W, y_semi)
    return m.transduction_, m.n_iter_, m.label_distributions_


def _fit_gl(gl, W, y_semi):
    train = np.nonzero(y_semi != -1)[0]
    model = gl.ssl.laplace(W)
    u = model.fit(train, y_semi[train])
    return np.argmax(u, axis=1), "-", u


def _fit_sklearn(model, X, y_semi, harmonic):
    model.fit(X, y_semi)
    F = model.label_distributions_ if harmonic else None
    return model.transduction_, model.n_iter_, F


def run_bench(args) -> int:
    """``semisup bench foundation`` (under the ``--blas-threads`` limit)."""
    return run_command(args, _bench)


def _bench(args) -> int:
    from ..datasets import load_dataset

    parts = only_set(args, PARTS)
    if args.quick and not args.n_samples:
        args.n_samples = QUICK_SAMPLES
    log("[bench] loading MNIST ...", args.verbose)
    data = load_dataset("mnist", data_home=args.data_home)
    X = np.ascontiguousarray(data.data, dtype=np.float32)
    y = np.asarray(data.target)
    if args.n_samples:
        idx = np.random.default_rng(0).choice(X.shape[0], args.n_samples, replace=False)
        X, y = X[idx], y[idx]
    command = "semisup " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["bench"] else \
        "semisup bench foundation"
    lines = ["# Benchmark: foundation (kNN graphs, harmonic-function baseline)", "",
             f"- command: `{command}`",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
             f"- machine: {_machine()}",
             f"- load average at start (1/5/15 min): {_load()}",
             f"- data: MNIST {X.shape[0]} x {X.shape[1]} float32 in [0, 1]", ""]
    cache: dict = {}
    if "knn" not in parts and _cached(args.graph, args) is not None:
        cache[args.graph] = _cached(args.graph, args)
        lines += [f"Neighbour lists of (b) read from {_cache_file(args.graph, args)}.", ""]
    if "knn" in parts:
        _bench_knn(X, args, lines, cache)
    summary = _bench_ssl(X, y, args, lines, cache) if "ssl" in parts else None
    if summary:
        gl = [np.mean(v, axis=0) for name, v in summary.items()
              if name.startswith("GraphLearning")]
        if gl:
            g = gl[0]
            lines += ["Target: solve no slower than GraphLearning at equal accuracy "
                      f"(GraphLearning: {g[0]:.2f} s wall, {g[1]:.2f} s CPU, accuracy "
                      f"{g[2]:.4f}).", ""]
            for name, v in summary.items():
                if name.startswith("semisup"):
                    o = np.mean(v, axis=0)
                    lines.append(f"- {name}: {o[0]:.2f} s wall ({o[0] / g[0]:.2f}x), "
                                 f"{o[1]:.2f} s CPU ({o[1] / g[1]:.2f}x), accuracy {o[2]:.4f}")
            lines.append("")
    out_dir(args)
    out = report_path(args)
    with open(out, "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))
    print(f"\nWritten to {out}", file=sys.stderr)
    return 0


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench foundation``."""
    p = subparsers.add_parser(
        "foundation", help="kNN graph and harmonic-function benchmarks on MNIST",
        description="Benchmarks of the foundation: (a) exact vs approximate kNN graph of MNIST, "
                    "(b) HarmonicFunction vs scikit-learn LabelPropagation/LabelSpreading and "
                    "GraphLearning's Laplace learning on the same graph (--only knn,ssl; "
                    "default both).")
    add_common_options(
        p, "foundation", "bench", only=PARTS, needs={"knn": ("mnist",), "ssl": ("mnist",)},
        only_help="knn = (a) exact vs approximate graph, ssl = (b) label propagation "
                  "methods (default both)",
        reps_help="random label draws for (b) (default 1)",
        quick_help=f"a random subset of {QUICK_SAMPLES} MNIST images (written under --out)",
        n_jobs_default=-1, n_jobs_help="threads of the neighbour searches",
        unused=("--plot", "--resume", "--assemble-only"))
    p.add_argument("--n-neighbors", type=int, default=10)
    p.add_argument("--labels-per-class", type=int, default=10)
    p.add_argument("--graph", choices=("exact", "approx"), default="exact",
                   help="graph used by (b) (reused from (a) when both run)")
    p.add_argument("--weights", choices=("binary", "heat"), default="binary",
                   help="edge weights of the graph used by (b)")
    p.add_argument("--tol", type=float, nargs="+", default=[1e-8, 1e-6],
                   help="CG tolerance(s) of HarmonicFunction")
    p.add_argument("--n-samples", type=int, default=None,
                   help="random subset of MNIST (quick check; default all 70 000)")
    p.set_defaults(func=run_bench)
