"""Very few labels: ``semisup bench lowlabel`` (issue 29, Calder et al. 2020's MNIST protocol).

MNIST 70 000 x 784 (pixels scaled to [0, 1]), 1 / 3 / 5 labels per class drawn by
:func:`semisup.datasets.splits.labeled_per_class` (``random_state`` = the draw), accuracy on
the unlabelled points as mean ± sd over the draws, for

* the library's estimators at their defaults: :class:`~semisup.PoissonLearning`,
  :class:`~semisup.PoissonMBO` (also with the true class fractions as ``class_priors``, the
  priors GraphLearning's Poisson-MBO is given), :class:`~semisup.HarmonicFunction` and
  :class:`~semisup.LaplacianAssignment`;
* GraphLearning 1.7.5's ``laplace``, ``poisson`` and ``poisson_mbo`` (with the true class
  priors, as in the paper) as the peer, when ``graphlearning`` is importable,

on two graphs: the library's own (``lib``: each distinct graph configuration of the methods'
defaults built once from X through the estimator's front-end, timed, and reused with
``affinity="precomputed"`` for every fit) and GraphLearning's ``gl.weightmatrix.knn(X, 10)``
(``gl``). Graph time and solve time are reported apart, at each ``--threads`` BLAS thread
count (the graphs and the fits of draw 0 are timed at each; later draws run at the first).

``--methods`` also takes ``PoissonLearning-self_tuning`` and ``PoissonMBO-self_tuning``
(opt-in): the two Poisson estimators with ``weights="self_tuning"``, on their own graph from X.

``--quick`` is a random subset of 5 000 points and 2 draws, written under ``--out``; a run
restricted by ``--rates``, ``--methods`` or ``--graphs`` also writes under ``--out``. The full
run writes ``docs/benchmarks/lowlabel.md``.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
import warnings

import numpy as np

from .._progress import log
from ._report import load_average, machine
from ._runner import add_common_options, blas_limit, repo_docs, run_command, write_report

QUICK_SAMPLES = 5000
RATES = (1, 3, 5)
GRAPHS = ("lib", "gl")
#: method key -> description in the record
METHODS = {
    "PoissonLearning": "semisup PoissonLearning()",
    "PoissonMBO": "semisup PoissonMBO()",
    "PoissonMBO-true": "semisup PoissonMBO(class_priors=true fractions)",
    "HarmonicFunction": "semisup HarmonicFunction()",
    "LaplacianAssignment": "semisup LaplacianAssignment()",
    "gl.laplace": "GraphLearning laplace",
    "gl.poisson": "GraphLearning poisson",
    "gl.poisson_mbo": "GraphLearning poisson_mbo (true class priors)",
}
#: opt-in rows (``--methods``): the Poisson estimators on the self-tuned graph from X (the
#: library's graph only), to choose their default weights
EXTRA_METHODS = {
    "PoissonLearning-self_tuning": "semisup PoissonLearning(weights=\"self_tuning\")",
    "PoissonMBO-self_tuning": "semisup PoissonMBO(weights=\"self_tuning\")",
}
ALL_METHODS = {**METHODS, **EXTRA_METHODS}
#: the slow ones (a minute or more a fit on MNIST), run on ``--mbo-reps`` draws
MBO_METHODS = ("PoissonMBO", "PoissonMBO-true", "gl.poisson_mbo", "PoissonMBO-self_tuning",
               "LaplacianAssignment")


def _graph_learning():
    try:
        import graphlearning
    except ImportError:
        return None
    return graphlearning


def _estimator(key, priors, **params):
    from .. import HarmonicFunction, LaplacianAssignment, PoissonLearning, PoissonMBO
    base, _, variant = key.partition("-")
    cls = {"PoissonLearning": PoissonLearning, "PoissonMBO": PoissonMBO,
           "HarmonicFunction": HarmonicFunction,
           "LaplacianAssignment": LaplacianAssignment}[base]
    if variant == "true":
        params["class_priors"] = priors
    elif variant == "self_tuning" and params.get("affinity") != "precomputed":
        params["weights"] = "self_tuning"
    return cls(**params)


def _graph_key(est):
    """The estimator's graph parameters (equal keys: the same graph from X)."""
    from ..graph.frontend import GRAPH_PARAMS
    p = est.get_params()
    return tuple((k, repr(p[k])) for k in GRAPH_PARAMS if k != "n_jobs")


def _fit_predict(key, W, y_semi, priors, gl):
    """Labels of every point by method ``key`` on the affinity ``W``."""
    if key.startswith("gl."):
        train = np.flatnonzero(y_semi != -1)
        name = key[3:]
        model = getattr(gl.ssl, name)(W, class_priors=priors) if name == "poisson_mbo" \
            else getattr(gl.ssl, name)(W)
        return np.asarray(model.fit_predict(train, y_semi[train]))
    est = _estimator(key, priors, affinity="precomputed")
    return est.fit(W, y_semi).transduction_


def _timed(fn, threads):
    with blas_limit(threads):
        t0 = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - t0


def _mean_sd(values):
    if not values:
        return "–"
    a = 100 * np.asarray(values)
    sd = a.std(ddof=1) if a.size > 1 else 0.0
    return f"{a.mean():.1f} ± {sd:.1f} ({a.size})"


def _load_mnist(args):
    from ..datasets import load_dataset
    data = load_dataset("mnist", data_home=args.data_home)
    X = np.asarray(data.data, dtype=np.float64)
    if X.max() > 1:
        X = X / 255.0
    y = np.asarray(data.target).astype(np.int64)
    return X, y


def run_bench(args) -> int:
    """``semisup bench lowlabel`` (under the ``--blas-threads`` limit)."""
    return run_command(args, _bench)


def _bench(args, data=None) -> int:
    from ..datasets.splits import labeled_per_class

    X, y = _load_mnist(args) if data is None else data
    if args.quick and X.shape[0] > QUICK_SAMPLES:
        idx = np.sort(np.random.default_rng(0).choice(X.shape[0], QUICK_SAMPLES,
                                                      replace=False))
        X, y = X[idx], y[idx]
    reps = args.reps or (2 if args.quick else 10)
    mbo_reps = min(args.mbo_reps or reps, reps)
    threads = args.threads
    gl = _graph_learning()
    methods = [m for m in args.methods if gl is not None or not m.startswith("gl.")]
    graphs = [g for g in args.graphs if gl is not None or g != "gl"]
    classes, y_idx = np.unique(y, return_inverse=True)
    priors = np.bincount(y_idx) / y.size
    n = y.size
    log(f"[lowlabel] {n} points, rates {args.rates}, {reps} draws ({mbo_reps} for MBO), "
        f"graphs {graphs}, methods {methods}", args.verbose)
    draws = {(r, d): labeled_per_class(y, r, random_state=d)
             for r in args.rates for d in range(reps)}

    def semi(r, d):
        ys = np.full_like(y, -1)
        ys[draws[r, d]] = y[draws[r, d]]
        return ys

    # ---- warm-up, untimed: numba compiles the graph and solver kernels on first use
    m0 = min(n, 2000)
    ys_w = np.full(m0, -1)
    first = [int(np.flatnonzero(y[:m0] == c)[0]) for c in np.unique(y[:m0])]
    ys_w[first] = y[:m0][first]
    for m in methods:
        if not m.startswith("gl."):
            _quiet(lambda: _estimator(m, priors).fit(X[:m0], ys_w))
    # ---- graphs: each built once per thread count (timed), the last build kept
    graph_rows, Ws = [], {}       # Ws[(graph, method)] -> affinity
    ours = [m for m in methods if not m.startswith("gl.")]
    if "lib" in graphs:
        built = {}
        # GraphLearning's methods get PoissonLearning's default graph
        for m in ours + (["PoissonLearning"] if len(ours) < len(methods) else []):
            est = _estimator(m, priors)
            gk = _graph_key(est)
            if gk not in built:
                ys0 = semi(args.rates[0], 0)
                times = {}
                for t in threads:
                    # the whole fit through the front-end, then the solve alone on its graph
                    fitted, t_fit = _timed(lambda: _quiet(lambda: _estimator(
                        m, priors).fit(X, ys0)), t)
                    W = fitted.affinity_matrix_
                    _, t_solve = _timed(lambda: _quiet(lambda: _fit_predict(
                        m, W, ys0, priors, gl)), t)
                    times[t] = (t_fit, max(t_fit - t_solve, 0.0))
                    log(f"[lowlabel] lib graph via {m} at {t} thread(s): fit {t_fit:.1f} s, "
                        f"graph {t_fit - t_solve:.1f} s", args.verbose)
                built[gk] = W
                params = dict(gk)
                graph_rows.append(dict(graph="lib", how=f"{m}().fit(X, y) front-end: "
                                       f"n_neighbors={params['n_neighbors']}, weights="
                                       f"{params['weights']}, knn_method="
                                       f"{params['knn_method']}{_resolved(params, n)}",
                                       edges=W.nnz // 2,
                                       times={t: v[1] for t, v in times.items()},
                                       fit={t: v[0] for t, v in times.items()}))
            Ws["lib", m] = built[gk]
    if "gl" in graphs:
        times = {}
        for t in threads:
            Wg, times[t] = _timed(lambda: gl.weightmatrix.knn(X, 10), t)
            log(f"[lowlabel] gl graph at {t} thread(s): {times[t]:.1f} s", args.verbose)
        import scipy.sparse as sp
        Wg = sp.csr_matrix(Wg)
        graph_rows.append(dict(graph="gl", how="gl.weightmatrix.knn(X, 10) (annoy, "
                               "self-tuned Gaussian)", edges=Wg.nnz // 2, times=times))
        for m in methods:
            if m not in EXTRA_METHODS:
                Ws["gl", m] = Wg
    if "lib" in graphs:
        for m in methods:
            if m.startswith("gl."):
                Ws["lib", m] = Ws["lib", "PoissonLearning"]
    # ---- fits
    acc, solve = {}, {}
    for g in graphs:
        for r in args.rates:
            for m in methods:
                if (g, m) not in Ws:
                    continue
                for d in range(mbo_reps if m in MBO_METHODS else reps):
                    ys = semi(r, d)
                    unl = ys == -1
                    for t in (threads if d == 0 else threads[:1]):
                        pred, sec = _timed(lambda: _quiet(lambda: _fit_predict(
                            m, Ws[g, m], ys, priors, gl)), t)
                        if d == 0:
                            solve[g, r, m, t] = sec
                    a = float(np.mean(pred[unl] == y[unl]))
                    acc.setdefault((g, r, m), []).append(a)
                    log(f"[lowlabel] {g} rate {r} draw {d} {m}: {100 * a:.2f} "
                        f"({sec:.1f} s)", args.verbose)
    text = _report(args, n, reps, mbo_reps, threads, graphs, methods, graph_rows, acc,
                   solve, gl)
    full = not args.quick and tuple(args.rates) == RATES and \
        set(args.methods) >= set(METHODS) and tuple(args.graphs) == GRAPHS
    docs = repo_docs()
    path = os.path.join(str(docs), "benchmarks", "lowlabel.md") if full and docs else \
        os.path.join(args.out, "lowlabel.md")
    os.makedirs(args.out, exist_ok=True)
    write_report(path, text, keep=["## What we find"])
    raw = {"acc": {"|".join(map(str, k)): v for k, v in acc.items()},
           "solve_seconds": {"|".join(map(str, k)): v for k, v in solve.items()},
           "graphs": graph_rows}
    with open(os.path.join(args.out, "lowlabel.json"), "w") as fh:
        json.dump(raw, fh, indent=1, default=str)
    print(text)
    print(f"\nWritten to {path}", file=sys.stderr)
    return 0


def _resolved(params, n):
    """What ``knn_method="auto"`` chose (the front-end's rule), for the record."""
    from .._optional import available
    from ..graph.neighbors import AUTO_APPROX_THRESHOLD
    if params["knn_method"] != repr("auto"):
        return ""
    if n > AUTO_APPROX_THRESHOLD and available("pynndescent"):
        return (f" (approximate: pynndescent NN-descent above {AUTO_APPROX_THRESHOLD} "
                "points, random_state=None)")
    return " (exact)"


def _version(dist):
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "(version unknown)"


def _quiet(fn):
    """``fn()`` without the estimators' warnings (the degeneracy warning of the Laplace
    methods at one label per class is the point of the benchmark, not news)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _report(args, n, reps, mbo_reps, threads, graphs, methods, graph_rows, acc, solve, gl):
    command = "semisup " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["bench"] else \
        "semisup bench lowlabel"
    th = ", ".join(f"{t} BLAS thread{'s' * (t > 1)}" for t in threads)
    lines = ["# Benchmark: very few labels (Poisson learning, Poisson-MBO, Laplace learning)",
             "",
             f"- command: `{command}`",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
             f"- machine: {machine()}",
             f"- load average at start (1/5/15 min): {load_average()}",
             f"- data: MNIST {n} x 784, pixels in [0, 1]"
             + (" (random subset, `--quick`)" if args.quick else ""),
             f"- labels: {', '.join(map(str, args.rates))} per class, draw d = "
             "`labeled_per_class(y, rate, random_state=d)`; "
             f"{reps} draws, {mbo_reps} for the slow rows (Poisson-MBO, LaplacianAssignment)",
             "- accuracy on the unlabelled points, mean ± sd over draws (number of draws)",
             f"- timings: {th} (threadpoolctl); the graphs and draw 0 at each, later draws "
             f"at {threads[0]}; after an untimed fit of each method on 2 000 points (numba "
             "compiles its kernels on first use)",
             ""]
    if gl is None:
        lines += ["GraphLearning (`graphlearning`, extra `[bench]`) is not importable here: "
                  "its graph and its methods are skipped.", ""]
    else:
        lines += [f"GraphLearning {_version('graphlearning')} is the peer; its "
                  "`poisson_mbo` is given the true class fractions as class priors (the "
                  "paper's setting), as is the row `PoissonMBO-true`.", ""]
    lines += ["## Graphs", "",
              "The library's graph is built once from X through the front-end of the first "
              "method using it (the whole fit timed, minus the same method's solve on the "
              "built graph) and passed to every method as `affinity=\"precomputed\"`.", "",
              "| graph | built by | edges | " + " | ".join(f"graph s ({t} thr)"
                                                         for t in threads) + " |",
              "|---|---|---|" + "---|" * len(threads)]
    for row in graph_rows:
        lines.append(f"| {row['graph']} | {row['how']} | {row['edges']} | "
                     + " | ".join(f"{row['times'][t]:.1f}" for t in threads) + " |")
    for row in graph_rows:
        if "fit" in row:
            lines += ["", "Whole fit at the defaults on X, graph included (draw 0, "
                      f"{args.rates[0]} label(s) per class): "
                      + ", ".join(f"{row['fit'][t]:.1f} s at {t} thread(s)"
                                  for t in threads) + "."]
    lines.append("")
    for g in graphs:
        lines += [f"## Accuracy (%) on the {g} graph", "",
                  "| method | " + " | ".join(f"{r} label{'s' * (r > 1)}/class"
                                             for r in args.rates) + " |",
                  "|---|" + "---|" * len(args.rates)]
        for m in methods:
            if any((g, r, m) in acc for r in args.rates):
                lines.append(f"| {ALL_METHODS[m]} | " + " | ".join(
                    _mean_sd(acc.get((g, r, m), [])) for r in args.rates) + " |")
        lines += ["", f"Solve seconds on the {g} graph (draw 0, graph excluded):", "",
                  "| method | " + " | ".join(f"{r}/class, {t} thr" for r in args.rates
                                             for t in threads) + " |",
                  "|---|" + "---|" * (len(args.rates) * len(threads))]
        for m in methods:
            if any((g, r, m, threads[0]) in solve for r in args.rates):
                lines.append(f"| {ALL_METHODS[m]} | " + " | ".join(
                    f"{solve[g, r, m, t]:.1f}" if (g, r, m, t) in solve else "–"
                    for r in args.rates for t in threads) + " |")
        lines.append("")
    return "\n".join(lines)


def _list(choices):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if choices is not None and t not in choices]
        if bad or not items:
            import argparse
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(bad) or 'empty list'}; choose from {', '.join(choices)}")
        return items
    return parse


def _ints(text):
    import argparse
    try:
        v = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers, got {text!r}") from None
    if not v or min(v) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return v


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench lowlabel``."""
    p = subparsers.add_parser(
        "lowlabel", help="Poisson learning / Poisson-MBO vs Laplace at 1-5 labels per class "
                         "on MNIST, with GraphLearning",
        description="MNIST 70 000, 1/3/5 labels per class: PoissonLearning, PoissonMBO, "
                    "HarmonicFunction and LaplacianAssignment at their defaults on the "
                    "library's graph and GraphLearning's, GraphLearning's laplace / poisson "
                    "/ poisson_mbo as the peer; accuracy mean ± sd over draws, graph and "
                    "solve seconds at 1 and 2 BLAS threads.")
    add_common_options(
        p, "lowlabel", "bench",
        reps_help="label draws per rate (default 10; --quick: 2)",
        quick_help=f"a random subset of {QUICK_SAMPLES} MNIST images, 2 draws (written "
                   "under --out)",
        unused=("--cache", "--n-jobs", "--plot", "--resume", "--assemble-only", "--only"))
    p.add_argument("--rates", type=_ints, default=list(RATES),
                   help="labels per class (comma list; default 1,3,5)")
    p.add_argument("--methods", type=_list(tuple(ALL_METHODS)), default=list(METHODS),
                   help="comma list of " + ", ".join(ALL_METHODS) + " (default all but the "
                        "two self_tuning rows)")
    p.add_argument("--graphs", type=_list(GRAPHS), default=list(GRAPHS),
                   help="lib (the library's graph from X), gl (GraphLearning's; needs "
                        "graphlearning and annoy); default both")
    p.add_argument("--mbo-reps", type=int, default=None,
                   help="draws for the slow rows: Poisson-MBO and LaplacianAssignment (default: --reps)")
    p.add_argument("--threads", type=_ints, default=[1, 2],
                   help="BLAS thread counts of the timings (default 1,2)")
    p.set_defaults(func=run_bench)
