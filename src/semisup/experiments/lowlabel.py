"""Very few labels: ``semisup bench lowlabel`` (issue 29, Calder et al. 2020's MNIST protocol).

MNIST 70 000 x 784 (pixels in [0, 1]), 1 / 3 / 5 labels per class drawn by
:func:`semisup.datasets.splits.labeled_per_class` (``random_state`` = the draw), accuracy on
the unlabelled points as mean ± sd over the draws, for the library's estimators at their
defaults (:class:`~semisup.PoissonLearning`, :class:`~semisup.PoissonMBO`, also with the true
class fractions as ``class_priors`` as GraphLearning's Poisson-MBO is given,
:class:`~semisup.HarmonicFunction`, :class:`~semisup.LaplacianAssignment`) and GraphLearning
1.7.5's ``laplace``, ``poisson`` and ``poisson_mbo`` as the peer when it is importable, on
two graphs: the library's own (``lib``: each distinct graph configuration of the methods'
defaults built once from X through the estimator's front-end, timed, and reused with
``affinity="precomputed"``) and GraphLearning's ``gl.weightmatrix.knn(X, 10)`` (``gl``).
Graph and solve times are reported apart at each ``--threads`` BLAS thread count (the graphs
and the fits of draw 0 at each; later draws at the first). ``--methods`` also takes the
opt-in rows ``PoissonLearning-self_tuning`` and ``PoissonMBO-self_tuning`` (their own graph
with ``weights="self_tuning"``).

``--quick`` is a random subset of 5 000 points and 2 draws, written under ``--out``, as is a
run restricted by ``--rates``, ``--methods`` or ``--graphs``; the full run writes
``docs/benchmarks/lowlabel.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import numpy as np

from .._progress import log
from ._bench import bench_header, load_mnist
from ._report import markdown_table, timed
from ._runner import (add_command, blas_limit, repo_docs, say_written, write_report)

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
    import semisup
    base, _, variant = key.partition("-")
    if variant == "true":
        params["class_priors"] = priors
    elif variant == "self_tuning" and params.get("affinity") != "precomputed":
        params["weights"] = "self_tuning"
    return getattr(semisup, base)(**params)


def _graph_key(est):
    """The estimator's graph parameters (equal keys: the same graph from X)."""
    from ..graph.frontend import GRAPH_PARAMS
    p = est.get_params()
    return tuple((k, repr(p[k])) for k in GRAPH_PARAMS if k != "n_jobs")


def _fit_predict(key, W, y_semi, priors, gl):
    """Labels of every point by method ``key`` on the affinity ``W``."""
    if key.startswith("gl."):
        train = np.flatnonzero(y_semi != -1)
        kw = dict(class_priors=priors) if key == "gl.poisson_mbo" else {}
        return np.asarray(getattr(gl.ssl, key[3:])(W, **kw).fit_predict(train, y_semi[train]))
    return _estimator(key, priors, affinity="precomputed").fit(W, y_semi).transduction_


def _timed(fn, threads=None):
    """``(fn(), wall seconds)`` under ``threads`` BLAS threads, without the estimators'
    warnings (the degeneracy warning of the Laplace methods at one label per class is the
    point of the benchmark, not news)."""
    with blas_limit(threads), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, wall, _ = timed(fn)
    return out, wall


def _mean_sd(values):
    if not values:
        return "–"
    a = 100 * np.asarray(values)
    return f"{a.mean():.1f} ± {a.std(ddof=1) if a.size > 1 else 0.0:.1f} ({a.size})"


def _resolved(params, n, d):
    """What ``knn_method="auto"`` chose (the front-end's rule), for the record."""
    from ..graph.neighbors import auto_search_method
    if params["knn_method"] != repr("auto"):
        return ""
    if auto_search_method(n, d) == "approx":
        return " (approximate: pynndescent NN-descent, random_state=None)"
    return " (exact)"


def _lib_graphs(X, ys0, methods, priors, threads, gl, verbose):
    """``({method: affinity}, graph rows)``: each distinct graph of the methods' defaults
    (GraphLearning's methods get PoissonLearning's) built once per thread count through
    the front-end (the whole fit timed, minus the solve on the built graph)."""
    ours = [m for m in methods if not m.startswith("gl.")]
    built, Ws, rows = {}, {}, []
    for m in ours + (["PoissonLearning"] if len(ours) < len(methods) else []):
        gk = _graph_key(_estimator(m, priors))
        if gk not in built:
            times = {}
            for t in threads:
                fitted, t_fit = _timed(lambda: _estimator(m, priors).fit(X, ys0), t)
                W = fitted.affinity_matrix_
                _, t_solve = _timed(lambda: _fit_predict(m, W, ys0, priors, gl), t)
                times[t] = (t_fit, max(t_fit - t_solve, 0.0))
                log(f"[lowlabel] lib graph via {m} at {t} thread(s): fit {t_fit:.1f} s, "
                    f"graph {t_fit - t_solve:.1f} s", verbose)
            built[gk] = W
            p = dict(gk)
            rows.append(dict(graph="lib", how=f"{m}().fit(X, y) front-end: n_neighbors="
                             f"{p['n_neighbors']}, weights={p['weights']}, knn_method="
                             f"{p['knn_method']}{_resolved(p, *X.shape)}", edges=W.nnz // 2,
                             times={t: v[1] for t, v in times.items()},
                             fit={t: v[0] for t, v in times.items()}))
        Ws[m] = built[gk]
    return {m: Ws[m if m in ours else "PoissonLearning"] for m in methods}, rows


def _bench(args, data=None) -> int:
    from ..datasets.splits import labeled_per_class

    head = bench_header(args)
    X, y = load_mnist(args.data_home, np.float64) if data is None else data
    if args.quick and X.shape[0] > QUICK_SAMPLES:
        idx = np.sort(np.random.default_rng(0).choice(X.shape[0], QUICK_SAMPLES,
                                                      replace=False))
        X, y = X[idx], y[idx]
    n, threads = y.size, args.threads
    reps = args.reps or (2 if args.quick else 10)
    mbo_reps = min(args.mbo_reps or reps, reps)
    gl = _graph_learning()
    methods = [m for m in args.methods if gl is not None or not m.startswith("gl.")]
    graphs = [g for g in args.graphs if gl is not None or g != "gl"]
    priors = np.bincount(np.unique(y, return_inverse=True)[1]) / n
    log(f"[lowlabel] {n} points, rates {args.rates}, {reps} draws ({mbo_reps} for MBO), "
        f"graphs {graphs}, methods {methods}", args.verbose)

    def semi(r, d):
        ys = np.full_like(y, -1)
        lab = labeled_per_class(y, r, random_state=d)
        ys[lab] = y[lab]
        return ys

    # warm-up, untimed: numba compiles the graph and solver kernels on first use
    m0 = min(n, 2000)
    ys_w = np.full(m0, -1)
    first = [int(np.flatnonzero(y[:m0] == c)[0]) for c in np.unique(y[:m0])]
    ys_w[first] = y[:m0][first]
    for m in methods:
        if not m.startswith("gl."):
            _timed(lambda: _estimator(m, priors).fit(X[:m0], ys_w))
    Ws, graph_rows = {}, []       # Ws[graph, method] -> affinity
    if "lib" in graphs:
        lib, graph_rows = _lib_graphs(X, semi(args.rates[0], 0), methods, priors, threads,
                                      gl, args.verbose)
        Ws.update({("lib", m): W for m, W in lib.items()})
    if "gl" in graphs:
        import scipy.sparse as sp
        times = {}
        for t in threads:
            Wg, times[t] = _timed(lambda: gl.weightmatrix.knn(X, 10), t)
            log(f"[lowlabel] gl graph at {t} thread(s): {times[t]:.1f} s", args.verbose)
        Wg = sp.csr_matrix(Wg)
        graph_rows.append(dict(graph="gl", how="gl.weightmatrix.knn(X, 10) (annoy, "
                               "self-tuned Gaussian)", edges=Wg.nnz // 2, times=times))
        Ws.update({("gl", m): Wg for m in methods if m not in EXTRA_METHODS})
    acc, solve = {}, {}
    for g in graphs:
        for r in args.rates:
            for m in [m for m in methods if (g, m) in Ws]:
                for d in range(mbo_reps if m in MBO_METHODS else reps):
                    ys = semi(r, d)
                    unl = ys == -1
                    for t in (threads if d == 0 else threads[:1]):
                        pred, sec = _timed(lambda: _fit_predict(m, Ws[g, m], ys, priors, gl), t)
                        if d == 0:
                            solve[g, r, m, t] = sec
                    acc.setdefault((g, r, m), []).append(float(np.mean(pred[unl] == y[unl])))
                    log(f"[lowlabel] {g} rate {r} draw {d} {m}: {100 * acc[g, r, m][-1]:.2f} "
                        f"({sec:.1f} s)", args.verbose)
    text = _report(args, head, n, reps, mbo_reps, graphs, methods, graph_rows, acc, solve, gl)
    full = not args.quick and tuple(args.rates) == RATES and \
        set(args.methods) >= set(METHODS) and tuple(args.graphs) == GRAPHS
    docs = repo_docs()
    path = os.path.join(str(docs), "benchmarks", "lowlabel.md") if full and docs else \
        os.path.join(args.out, "lowlabel.md")
    os.makedirs(args.out, exist_ok=True)
    write_report(path, text, keep=["## What we find"])
    with open(os.path.join(args.out, "lowlabel.json"), "w") as fh:
        json.dump({"acc": {"|".join(map(str, k)): v for k, v in acc.items()},
                   "solve_seconds": {"|".join(map(str, k)): v for k, v in solve.items()},
                   "graphs": graph_rows}, fh, indent=1, default=str)
    print(text)
    say_written(path, args.verbose)
    return 0


def _report(args, head, n, reps, mbo_reps, graphs, methods, graph_rows, acc, solve, gl):
    from importlib.metadata import PackageNotFoundError, version
    threads, rates = args.threads, args.rates
    lines = ["# Benchmark: very few labels (Poisson learning, Poisson-MBO, Laplace learning)",
             "", *head,
             f"- data: MNIST {n} x 784, pixels in [0, 1]"
             + (" (random subset, `--quick`)" if args.quick else ""),
             f"- labels: {', '.join(map(str, rates))} per class, draw d = "
             "`labeled_per_class(y, rate, random_state=d)`; "
             f"{reps} draws, {mbo_reps} for the slow rows (Poisson-MBO, LaplacianAssignment)",
             "- accuracy on the unlabelled points, mean ± sd over draws (number of draws)",
             f"- timings: {', '.join(f'{t} BLAS thread' + 's' * (t > 1) for t in threads)} "
             f"(threadpoolctl); the graphs and draw 0 at each, later draws at {threads[0]}; "
             "after an untimed fit of each method on 2 000 points (numba compiles its "
             "kernels on first use)", ""]
    if gl is None:
        lines += ["GraphLearning (`graphlearning`, extra `[bench]`) is not importable here: "
                  "its graph and its methods are skipped.", ""]
    else:
        try:
            gl_version = version("graphlearning")
        except PackageNotFoundError:
            gl_version = "(version unknown)"
        lines += [f"GraphLearning {gl_version} is the peer; its `poisson_mbo` is given the "
                  "true class fractions as class priors (the paper's setting), as is the row "
                  "`PoissonMBO-true`.", ""]
    lines += ["## Graphs", "",
              "The library's graph is built once from X through the front-end of the first "
              "method using it (the whole fit timed, minus the same method's solve on the "
              "built graph) and passed to every method as `affinity=\"precomputed\"`.", "",
              markdown_table([[r["graph"], r["how"], r["edges"],
                               *(f"{r['times'][t]:.1f}" for t in threads)] for r in graph_rows],
                             ["graph", "built by", "edges",
                              *(f"graph s ({t} thr)" for t in threads)])]
    lines += [line for r in graph_rows if "fit" in r for line in (
        "", f"Whole fit at the defaults on X, graph included (draw 0, {rates[0]} label(s) per "
            "class): " + ", ".join(f"{r['fit'][t]:.1f} s at {t} thread(s)" for t in threads)
            + ".")]
    lines.append("")
    for g in graphs:
        accuracy = [[ALL_METHODS[m], *(_mean_sd(acc.get((g, r, m), [])) for r in rates)]
                    for m in methods if any((g, r, m) in acc for r in rates)]
        seconds = [[ALL_METHODS[m], *(f"{solve[g, r, m, t]:.1f}" if (g, r, m, t) in solve
                                      else "–" for r in rates for t in threads)]
                   for m in methods if any((g, r, m, threads[0]) in solve for r in rates)]
        lines += [f"## Accuracy (%) on the {g} graph", "", markdown_table(
                      accuracy, ["method", *(f"{r} label{'s' * (r > 1)}/class" for r in rates)]),
                  "", f"Solve seconds on the {g} graph (draw 0, graph excluded):", "",
                  markdown_table(seconds, ["method", *(f"{r}/class, {t} thr" for r in rates
                                                       for t in threads)]), ""]
    return "\n".join(lines)


def _comma(choices=None):
    """An option's type: a comma list of ``choices``, or of positive integers (None)."""
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        if choices is None:
            items = [int(t) if t.isdigit() else 0 for t in items]
        if not items or any(t < 1 if choices is None else t not in choices for t in items):
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected a comma list of "
                + ("positive integers" if choices is None else ", ".join(choices)))
        return items
    return parse


OPTIONS = {
    "--rates": dict(type=_comma(), default=list(RATES),
                    help="labels per class (comma list; default 1,3,5)"),
    "--methods": dict(type=_comma(tuple(ALL_METHODS)), default=list(METHODS),
                      help="comma list of " + ", ".join(ALL_METHODS) + " (default all but "
                           "the two self_tuning rows)"),
    "--graphs": dict(type=_comma(GRAPHS), default=list(GRAPHS),
                     help="lib (the library's graph from X), gl (GraphLearning's; needs "
                          "graphlearning and annoy); default both"),
    "--mbo-reps": dict(type=int, default=None, help="draws for the slow rows: Poisson-MBO "
                       "and LaplacianAssignment (default: --reps)"),
    "--threads": dict(type=_comma(), default=[1, 2],
                      help="BLAS thread counts of the timings (default 1,2)"),
}


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench lowlabel``."""
    add_command(
        subparsers, "lowlabel", _bench, kind="bench", options=OPTIONS,
        help="Poisson learning / Poisson-MBO vs Laplace at 1-5 labels per class "
                         "on MNIST, with GraphLearning",
        description="MNIST 70 000, 1/3/5 labels per class: PoissonLearning, PoissonMBO, "
                    "HarmonicFunction and LaplacianAssignment at their defaults on the "
                    "library's graph and GraphLearning's, GraphLearning's laplace / poisson "
                    "/ poisson_mbo as the peer; accuracy mean ± sd over draws, graph and "
                    "solve seconds at 1 and 2 BLAS threads.",
        reps_help="label draws per rate (default 10; --quick: 2)",
        quick_help=f"a random subset of {QUICK_SAMPLES} MNIST images, 2 draws (written "
                   "under --out)",
        unused=("--cache", "--n-jobs", "--plot", "--resume", "--assemble-only", "--only"))
