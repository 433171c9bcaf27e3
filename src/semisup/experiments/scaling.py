"""Scaling benchmarks: ``semisup bench scaling``, three parts (``--only`` or their flags;
``growth`` when none is given), each rewriting its own section of
``docs/benchmarks/scaling.md`` (``--quick``: smaller sizes, under ``--out``).

``knn_mnist``: the exact 10-NN graph of MNIST by :func:`semisup.graph.knn_search` against
scikit-learn's ``kneighbors_graph(mode="distance")`` on the first ``--sklearn-n`` points:
times, and the directed edges that differ with whether each is a distance tie.
``growth``: every estimator at geometrically growing ``n``, each fit in a fresh subprocess
(the BLAS's own thread count): wall time, peak resident memory, the growth exponent
(least squares on log-log), a log-log figure with ``--plot``; a method stops after a fit
over ``--max-seconds``; a subset of ``--methods`` writes its record under ``--out``.
``cluster``: LapRLS and LapSVM (PCG, stability stop) on a Dask ``LocalCluster`` whose
workers each hold less than the kernel, against the in-memory path (extra ``[dask]``).
Run figures you record under the exclusive CPU lock.

"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .._progress import log
from ..datasets.splits import labeled_per_class
from ._bench import growth_exponent, in_child, load_mnist, measured, write_parts
from ._report import markdown_table, timed
from ._runner import add_command, only_set, report_path


# ------------------------------------------------------------------------------------------
# Exact kNN graph of MNIST against scikit-learn

def compare_neighbors(dist, ind, dist_ref, ind_ref, rtol=1e-6):
    """Directed edges of ``ind`` not in ``ind_ref`` (per row), and how many are ties.

    An edge ``i -> j`` of ``ind`` only is a *tie* when its distance equals the reference's
    k-th distance of row ``i`` (to ``rtol``; scikit-learn returns float32 distances for
    float32 input): either choice is then an exact k-nearest list.
    """
    differ = ties = 0
    for i in np.flatnonzero((np.sort(ind, 1) != np.sort(ind_ref, 1)).any(axis=1)):
        only = np.setdiff1d(ind[i], ind_ref[i])
        differ += only.size
        kth = dist_ref[i, -1]
        d_only = dist[i][np.isin(ind[i], only)]
        ties += int(np.sum(np.abs(d_only - kth) <= rtol * max(kth, 1e-300)))
    return differ, ties


def run_knn_mnist(args):
    from sklearn.neighbors import kneighbors_graph

    from ..graph import knn_search

    X = load_mnist(args.data_home)[0][:args.n_samples or None]
    (n, d), k = X.shape, args.n_neighbors
    n_ref = min(args.sklearn_n or n, n)
    (dist, ind), t_ours, _ = timed(knn_search, X, k, method="exact")
    log(f"[scaling] semisup exact {k}-NN of {X.shape}: {t_ours:.1f} s", args.verbose)
    (d_sub, i_sub), t_sub, _ = timed(knn_search, X[:n_ref], k, method="exact") \
        if n_ref < n else ((dist, ind), t_ours, 0)
    A, t_ref, _ = timed(kneighbors_graph, X[:n_ref], k, mode="distance", include_self=False)
    log(f"[scaling] scikit-learn kneighbors_graph on {n_ref}: {t_ref:.1f} s", args.verbose)
    A = A.tocsr()
    A.sort_indices()
    order = np.argsort(A.data.reshape(n_ref, k), axis=1, kind="stable")
    i_ref, d_ref = (np.take_along_axis(a.reshape(n_ref, k), order, 1) for a in (A.indices, A.data))
    differ, ties = compare_neighbors(d_sub, i_sub, d_ref, i_ref)
    rows = (np.sort(i_sub, 1) == np.sort(i_ref, 1)).all(axis=1)   # the same neighbours
    ref = np.sort(d_ref[rows], 1)
    rel = float((np.abs(np.sort(d_sub[rows], 1) - ref) / np.maximum(ref, 1e-300)).max()) \
        if rows.any() else 0.0
    verdict = ("none differ" if differ == 0 else "all ties" if differ == ties
               else f"{differ - ties} NOT ties")
    ours = "semisup `knn_search(method='exact')`"
    rows = ([[ours, n, f"{t_ours:.1f}"]] + [[ours, n_ref, f"{t_sub:.1f}"]] * (n_ref < n)
            + [["scikit-learn `kneighbors_graph(mode='distance')`", n_ref, f"{t_ref:.1f}"]])
    body = markdown_table(rows, ["search", "points:", "seconds:"]).splitlines()
    return ("Exact kNN graph of MNIST: semisup vs scikit-learn",
            [f"- data: MNIST {n} x {d} float32 in [0, 1], k = {k}"],
            body + ["", f"- speed-up at n = {n_ref}: **{t_ref / t_sub:.2f}x**",
                    f"- directed edges that differ: {differ} of {n_ref * k} "
                    f"({differ / (n_ref * k):.2e}); ties among them: {ties} ({verdict})",
                    "- largest relative difference of the distances on rows with the same "
                    f"neighbours: {rel:.1e}", ""])


# ------------------------------------------------------------------------------------------
# Time and memory against n, each fit in a fresh process

#: method -> (family, what is fitted); graph methods grow to --max-n-graph, the others to
#: --max-n-kernel (dense n x n kernels, SDPs, SVDs of the n x d matrix)
GROWTH_METHODS = {
    "knn_graph": ("graph", "exact 10-NN graph (semisup.graph.knn_graph)"),
    "HarmonicFunction": ("graph", "10-NN heat graph, harmonic solve"),
    "LaplacianAssignment": ("graph", "10-NN heat graph, LASS (APG at its defaults)"),
    "LapRLS": ("kernel", "rbf kernel + 10-NN graph, defaults (reduced above 8000)"),
    "LapSVM": ("kernel", "rbf kernel + 10-NN graph, defaults (reduced above 8000)"),
    "SPORE": ("kernel", "10-NN graph, IIP (defaults: 4-hop power, 20 inner)"),
    "MatrixCompletionTransducer": ("kernel",
                                   "MC-1, 20 features, 20% missing, mu = 1e-2, graph features"),
    "ClusteredRegressor": ("graph", "least squares, 50 features in 5 clusters"),
}


def _growth_data(method, n, seed=0):
    """Two Gaussian classes in 10-D with 10 labels per class (-1: unlabelled)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 10)) + 2.5 * y[:, None] * np.eye(10)[0]
    semi = np.full(n, -1)
    lab = labeled_per_class(y, 10, rng)
    semi[lab] = y[lab]
    if method == "MatrixCompletionTransducer":
        F = rng.normal(size=(n, 3)) @ rng.normal(size=(3, 20)) + y[:, None]
        F[rng.random(F.shape) < 0.2] = np.nan
        return F, semi
    if method == "ClusteredRegressor":
        w = np.repeat(rng.normal(size=5), 10)
        Z = rng.normal(size=(n, 50))
        return Z, Z @ w + 0.1 * rng.normal(size=n)
    return X, semi


def _growth_fitter(method):
    """``fit(X, y)`` for ``method``, with every import done (imports are not timed)."""
    import semisup
    from ..graph import knn_graph

    if method == "knn_graph":
        return lambda X, y: knn_graph(X, 10, method="exact")
    return (semisup.MatrixCompletionTransducer(mu=1e-2) if method == "MatrixCompletionTransducer"
            else semisup.ClusteredRegressor(5, random_state=0) if method == "ClusteredRegressor"
            else getattr(semisup, method)(knn_method="exact")).fit


def growth_child(method: str, n: int) -> dict:
    """One fit in this process (:func:`measured`), after a warm-up fit on 50 points."""
    X, y = _growth_data(method, n)
    fit = _growth_fitter(method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = measured(lambda: fit(X, y), lambda: fit(*_growth_data(method, 50, seed=1)))
    return dict(method=method, n=n, **out)


def _cap(args, method):
    return args.max_n_graph if GROWTH_METHODS[method][0] == "graph" else args.max_n_kernel


def run_growth(args):
    methods = args.methods or list(GROWTH_METHODS)
    unknown = sorted(set(methods) - set(GROWTH_METHODS))
    if unknown:
        raise SystemExit(f"--methods: unknown {unknown}; choose from {list(GROWTH_METHODS)}")
    results = {}
    for method in methods:
        n, rows = args.start_n, results.setdefault(method, [])
        while n <= _cap(args, method):
            rows.append({"n": n, **in_child(f"{__name__}:growth_child", method, n,
                                            timeout=max(10 * args.max_seconds, 60))})
            log(f"[scaling] {method} n={n}: " + (rows[-1].get("failed") or
                f"{rows[-1]['seconds']:.2f} s, peak {rows[-1]['peak_mib']:.0f} MiB"),
                args.verbose)
            if "failed" in rows[-1] or rows[-1]["seconds"] > args.max_seconds:
                break
            n = int(round(n * args.factor))
    fits, summary = [], []
    for method, rows in results.items():
        fits += [[method, GROWTH_METHODS[method][1], r["n"], r["failed"], "", ""]
                 if "failed" in r else
                 [method, GROWTH_METHODS[method][1], r["n"], f"{r['seconds']:.3f}",
                  f"{r['peak_mib']:.0f}", f"{r['base_mib']:.0f}"] for r in rows]
        ok = [r for r in rows if "failed" not in r]
        big = [r for r in ok if r["seconds"] >= 1.0]   # start-up dominates the fits below 1 s
        use = big if len(big) >= 3 else ok
        last = rows[-1]
        why = (last["failed"] if "failed" in last else
               f"time ({last['seconds']:.0f} s > {args.max_seconds:g} s)"
               if last["seconds"] > args.max_seconds else f"the cap n <= {_cap(args, method)}")
        expo = growth_exponent([r["n"] for r in use], [r["seconds"] for r in use])
        summary.append([method, f"{expo:.2f}", ok[-1]["n"] if ok else "-", why])
    body = [markdown_table(fits, ["method", "fitted", "n:", "seconds:", "peak RSS (MiB):",
                                  "RSS before fit (MiB):"]), "",
            markdown_table(summary, ["method", "growth exponent of time (log-log LS):",
                                     "largest n fitted:", "what stopped it"]), ""]
    if args.plot:
        png = os.path.join(os.path.dirname(report_path(args, "scaling")), "scaling_growth.png")
        _plot_growth(results, png)
        body += [f"Log-log plot: `{os.path.basename(png)}`, beside this record.", ""]
    return ("Time and peak memory against n",
            ["- data: two Gaussian classes in 10-D, 10 labels per class; each fit in a fresh "
             f"subprocess; a method stops after a fit over {args.max_seconds:g} s"], body)


def _plot_growth(results, path):
    from .._optional import require

    plt = require("matplotlib.pyplot", "the --plot figure")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, key, label, title in zip(axes, ("seconds", "peak_mib"),
                                     ("fit time (s)", "peak RSS (MiB)"), ("time", "memory")):
        for method, rows in results.items():
            ok = [r for r in rows if "failed" not in r]
            if ok:
                ax.loglog([r["n"] for r in ok], [r[key] for r in ok], "o-", label=method)
        ax.set(xlabel="n", ylabel=label, title=title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------
# LapRLS / LapSVM with a kernel larger than any one worker's memory

def _fit_record(est, X, y):
    _, total, _ = timed(est.fit, X, y)
    head = X[:200].compute() if hasattr(X, "chunks") else X[:200]
    return dict(total=total, setup=est.setup_time_, solve=est.fit_time_, n_iter=est.n_iter_,
                per_iter=est.fit_time_ / max(est.n_iter_, 1),
                decision=np.asarray(est.decision_function(head)))


def run_cluster(args):
    """LapRLS and LapSVM on a LocalCluster whose workers each hold less than the kernel,
    against the in-memory path, in one run."""
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    import semisup

    n, n_mem = args.cluster_n, args.memory_n or args.cluster_n
    dtype = np.dtype(args.kernel_dtype)
    kw = dict(gamma_A=args.gamma_A, gamma_I=args.gamma_I, kernel_dtype=dtype.name,
              solver="pcg", early_stopping="stability", knn_method="exact")
    where = {"mem": f"in memory (one process), n = {n_mem}",
             "dask": f"{args.workers} Dask workers, n = {n}"}
    runs = {}
    for name in args.cluster_methods:
        runs[name, "mem"] = _fit_record(getattr(semisup, name)(**kw), *_growth_data(name, n_mem))
        log(f"[scaling] {name} in memory n={n_mem}: {runs[name, 'mem']['total']:.1f} s",
            args.verbose)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=args.worker_memory, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40,
                      env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}) as cluster, \
            Client(cluster):
        for name in args.cluster_methods:
            X, y = _growth_data(name, n)
            runs[name, "dask"] = _fit_record(getattr(semisup, name)(**kw),
                                             da.from_array(X, chunks=(4096, -1)), y)
            log(f"[scaling] {name} on the cluster n={n}: {runs[name, 'dask']['total']:.1f} s",
                args.verbose)
    body = [f"- cluster: LocalCluster({args.workers} worker processes, 1 thread each, "
            f"memory_limit={args.worker_memory}) on this machine",
            f"- estimators: gamma_A={args.gamma_A:g}, gamma_I={args.gamma_I:g}, "
            f"kernel_dtype={dtype.name}, solver='pcg', early_stopping='stability'", ""]
    rows = [[name, where[w], f"{r['total']:.1f}", f"{r['setup']:.1f}", f"{r['solve']:.1f}",
             r["n_iter"], f"{r['per_iter']:.3f}"] for (name, w), r in runs.items()]
    body += [markdown_table(rows, ["method", "where", "total fit (s):",
                                   "set-up: graph + kernel (s):", "PCG (s):", "iterations:",
                                   "s / iteration:"]), ""]
    for name in args.cluster_methods:
        mem, dist = runs[name, "mem"], runs[name, "dask"]
        same = ("; largest difference of the decision values: "
                f"{float(np.abs(dist['decision'] - mem['decision']).max()):.1e}"
                if n == n_mem else "")
        body.append(f"- {name}: a PCG iteration on the cluster takes "
                    f"{dist['per_iter'] / mem['per_iter']:.2f}x the in-memory one{same}")
    return ("LapRLS / LapSVM beyond one worker's memory",
            [f"- data: two Gaussian classes in 10-D, 10 labels per class; n = {n} on the "
             f"cluster (a {dtype.name} kernel of {n * n * dtype.itemsize / 1e9:.1f} GB), "
             f"n = {n_mem} in one process"], body + [""])


# ------------------------------------------------------------------------------------------
# Command line

PARTS = {"knn_mnist": run_knn_mnist, "growth": run_growth, "cluster": run_cluster}
#: --quick: the same parts at sizes that take a minute or two
QUICK = dict(n_samples=10_000, max_n_graph=16_000, max_n_kernel=4_000, cluster_n=4_000,
             max_seconds=10.0)
OPTIONS = {
    **{f"--{p.replace('_', '-')}": dict(action="store_true", help=f"same as --only {p}")
       for p in PARTS},
    "--cluster-n": dict(type=int, default=40_000),
    "--memory-n": dict(type=int, default=None,
                       help="--cluster: n of the in-memory comparison (default --cluster-n)"),
    "--workers": dict(type=int, default=4),
    "--worker-memory": dict(default="3GB"),
    "--kernel-dtype": dict(default="float32", choices=("float32", "float64")),
    "--cluster-methods": dict(nargs="+", default=["LapRLS", "LapSVM"]),
    "--gamma-A": dict(type=float, default=1e-2, help="--cluster: gamma_A"),
    "--gamma-I": dict(type=float, default=1e-1, help="--cluster: gamma_I"),
    "--n-neighbors": dict(type=int, default=10),
    "--n-samples": dict(type=int, default=None,
                        help="--knn-mnist: first points of MNIST only (default all 70 000)"),
    "--sklearn-n": dict(type=int, default=None,
                        help="--knn-mnist: scikit-learn on the first this many points only"),
    "--methods": dict(nargs="+", default=None,
                      help=f"--growth: estimators (default all: {', '.join(GROWTH_METHODS)}; "
                           "a subset writes its record under --out)"),
    "--start-n": dict(type=int, default=1000),
    "--factor": dict(type=float, default=2.0, help="--growth: ratio of the n's"),
    "--max-n-graph": dict(type=int, default=1_000_000),
    "--max-n-kernel": dict(type=int, default=40_000),
    "--max-seconds": dict(type=float, default=60.0,
                          help="--growth: stop a method after a fit longer than this"),
}


def _parts(args):
    return only_set(args, [p for p in PARTS if getattr(args, p)] or ["growth"])


def _run_bench(args) -> int:
    if args.quick:
        for name, value in QUICK.items():
            old = getattr(args, name)
            setattr(args, name, value if old is None else min(old, value))
    # a subset of the growth methods is a partial run: under --out, never over the record
    # of every method
    path = (os.path.join(args.out, "scaling.md") if args.methods
            else report_path(args, "scaling"))
    return write_parts(args, _parts(args), PARTS, lambda part: path, "scaling", echo=True)


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench scaling``."""
    add_command(
        subparsers, "scaling", _run_bench, kind="bench", options=OPTIONS, only=tuple(PARTS),
        help="time and memory against n; exact kNN of MNIST vs scikit-learn",
        description="Scaling benchmarks: knn_mnist (exact kNN graph of MNIST against "
                    "scikit-learn), growth (every estimator at growing n: time, peak "
                    "memory, growth exponent; the default), cluster (LapRLS/LapSVM on a "
                    "LocalCluster whose workers hold less than the kernel).",
        needs=lambda a: {p: ("mnist",) * (p == "knn_mnist") for p in _parts(a)},
        only_help="which parts (default growth)",
        quick_help="smaller sizes (MNIST 10 000 points, n up to 16 000 / 4 000, cluster n "
                   "4 000), written under --out",
        unused=("--cache", "--reps", "--n-jobs", "--resume", "--assemble-only"))
