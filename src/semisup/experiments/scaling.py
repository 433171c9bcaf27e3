"""Scaling benchmarks: ``semisup bench scaling``.

Three parts, selected by ``--only`` (a comma list) or by their flags (``--growth`` runs
when none is given):

``--knn-mnist``
    the exact 10-NN graph of MNIST (70 000 x 784) by :func:`semisup.graph.knn_search`
    (tiled float32 products, certified selection, float64 re-rank) against scikit-learn's
    ``kneighbors_graph(mode="distance")`` on the first ``--sklearn-n`` points (all by
    default): times, and the directed edges that differ with whether each is a distance tie.
``--growth``
    every estimator at geometrically growing ``n`` (graph methods up to ``--max-n-graph``,
    kernel methods up to ``--max-n-kernel``), each fit in a fresh subprocess: wall time and
    peak resident memory (``resource.getrusage`` of the child), stopping a method once a fit
    exceeds ``--max-seconds``; the fitted growth exponent (least squares on log-log) and,
    with ``--plot``, a log-log figure.
``--cluster``
    LapRLS and LapSVM (PCG, stability stop) on a ``dask.distributed.LocalCluster`` of
    ``--workers`` processes whose ``--worker-memory`` is below the kernel's size (the kernel
    as :class:`~semisup.distributed.DaskKernel` row blocks), against the in-memory path at
    ``--memory-n``: set-up and per-iteration times in the same run (extra ``[dask]``).

Each part rewrites its own section of the record (``docs/benchmarks/scaling.md``; a
``--quick`` run, with smaller sizes, writes under ``--out`` instead) and keeps the rest of
the file; ``--plot`` draws the growth figure beside it (``scaling_growth.png``). One BLAS
thread unless ``--blas-threads`` says otherwise (the records of 2026-11-24/25 ran with the
BLAS's own two: ``--blas-threads 2``). Run figures you record under the exclusive CPU lock.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

from .._progress import log
from ..datasets.splits import labeled_per_class
from ._report import load_average, machine
from ._runner import (add_common_options, only_set, report_path, run_command,
                      say_written)

PARTS = ("knn_mnist", "growth", "cluster")
#: --quick: the same parts at sizes that take a minute or two
QUICK = dict(n_samples=10_000, max_n_graph=16_000, max_n_kernel=4_000, cluster_n=4_000,
             max_seconds=10.0)


# ------------------------------------------------------------------------------------------
# Report helpers

def _machine() -> str:
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            kb = int(fh.readline().split()[1])
        mem = f", {kb / 2 ** 20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    return f"{machine()}{mem}, OPENBLAS_NUM_THREADS={threads}"


def _command() -> str:
    return ("semisup " + " ".join(sys.argv[1:])) if sys.argv[1:2] == ["bench"] else \
        "semisup bench scaling"


def _header(title: str, data: str, args) -> list[str]:
    return [f"## {title}", "",
            f"- command: `{_command()}`",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
            f"- machine: {_machine()}, BLAS threads {args.blas_threads}",
            f"- load average at start (1/5/15 min): {load_average(' / ')}",
            f"- data: {data}", ""]


def write_section(path: str, part: str, lines: list[str]) -> None:
    """Replace the section of ``part`` in ``path`` (between HTML comment markers)."""
    begin, end = f"<!-- scaling:{part} -->", f"<!-- /scaling:{part} -->"
    body = "\n".join([begin, *lines, end])
    text = open(path).read() if os.path.exists(path) else "# Benchmark: scaling\n"
    pat = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    text = pat.sub(lambda _: body, text) if pat.search(text) else \
        text.rstrip("\n") + "\n\n" + body + "\n"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


# ------------------------------------------------------------------------------------------
# Exact kNN graph of MNIST against scikit-learn

def compare_neighbors(dist, ind, dist_ref, ind_ref, rtol=1e-6):
    """Directed edges of ``ind`` not in ``ind_ref`` (per row), and how many are ties.

    An edge ``i -> j`` of ``ind`` only is a *tie* when its distance equals the reference's
    k-th distance of row ``i`` (to ``rtol``; scikit-learn returns float32 distances for
    float32 input): either choice is then an exact k-nearest list.
    """
    n, k = ind.shape
    differ = ties = 0
    for i in np.flatnonzero((np.sort(ind, 1) != np.sort(ind_ref, 1)).any(axis=1)):
        only = np.setdiff1d(ind[i], ind_ref[i])
        differ += only.size
        kth = dist_ref[i, -1]
        d_only = dist[i][np.isin(ind[i], only)]
        ties += int(np.sum(np.abs(d_only - kth) <= rtol * max(kth, 1e-300)))
    return differ, ties


def run_knn_mnist(args) -> list[str]:
    from sklearn.neighbors import kneighbors_graph

    from ..datasets import load_dataset
    from ..graph import knn_search

    X = np.ascontiguousarray(load_dataset("mnist", data_home=args.data_home).data,
                             dtype=np.float32)
    if args.n_samples:
        X = X[:args.n_samples]
    k = args.n_neighbors
    n_ref = min(args.sklearn_n or X.shape[0], X.shape[0])
    lines = _header("Exact kNN graph of MNIST: semisup vs scikit-learn",
                    f"MNIST {X.shape[0]} x {X.shape[1]} float32 in [0, 1], k = {k}", args)
    t0 = time.perf_counter()
    dist, ind = knn_search(X, k, method="exact")
    t_ours = time.perf_counter() - t0
    log(f"[scaling] semisup exact {k}-NN of {X.shape}: {t_ours:.1f} s", args.verbose)
    if n_ref < X.shape[0]:
        t0 = time.perf_counter()
        d_sub, i_sub = knn_search(X[:n_ref], k, method="exact")
        t_ours_sub = time.perf_counter() - t0
    else:
        d_sub, i_sub, t_ours_sub = dist, ind, t_ours
    t0 = time.perf_counter()
    A = kneighbors_graph(X[:n_ref], k, mode="distance", include_self=False)
    t_ref = time.perf_counter() - t0
    log(f"[scaling] scikit-learn kneighbors_graph on {n_ref}: {t_ref:.1f} s", args.verbose)
    A = A.tocsr()
    A.sort_indices()
    i_ref = A.indices.reshape(n_ref, k)
    d_ref = A.data.reshape(n_ref, k)
    order = np.argsort(d_ref, axis=1, kind="stable")
    i_ref, d_ref = np.take_along_axis(i_ref, order, 1), np.take_along_axis(d_ref, order, 1)
    differ, ties = compare_neighbors(d_sub, i_sub, d_ref, i_ref)
    # distances of the common edges
    same = np.sort(i_sub, 1) == np.sort(i_ref, 1)
    rows = same.all(axis=1)
    dd = np.abs(np.sort(d_sub[rows], 1) - np.sort(d_ref[rows], 1))
    rel = float((dd / np.maximum(np.sort(d_ref[rows], 1), 1e-300)).max()) if rows.any() else 0
    verdict = ("none differ" if differ == 0 else "all ties" if differ == ties
               else f"{differ - ties} NOT ties")
    lines += ["| search | points | seconds |", "|---|---:|---:|",
              f"| semisup `knn_search(method='exact')` | {X.shape[0]} | {t_ours:.1f} |"]
    if n_ref < X.shape[0]:
        lines.append(f"| semisup `knn_search(method='exact')` | {n_ref} | {t_ours_sub:.1f} |")
    lines += [f"| scikit-learn `kneighbors_graph(mode='distance')` | {n_ref} | {t_ref:.1f} |",
              "",
              f"- speed-up at n = {n_ref}: **{t_ref / t_ours_sub:.2f}x**",
              f"- directed edges that differ: {differ} of {n_ref * k} "
              f"({differ / (n_ref * k):.2e}); ties among them: {ties} "
              f"({verdict})",
              f"- largest relative difference of the distances on rows with the same "
              f"neighbours: {rel:.1e}", ""]
    return lines


# ------------------------------------------------------------------------------------------
# Time and memory against n, each fit in a fresh process

#: method -> (family, what is fitted); graph methods grow to --max-n-graph, the others to
#: --max-n-kernel (dense n x n kernels, SDPs, SVDs of the n x d matrix)
GROWTH_METHODS = {
    "knn_graph": ("graph", "exact 10-NN graph (semisup.graph.knn_graph)"),
    "HarmonicFunction": ("graph", "10-NN heat graph, harmonic solve"),
    "LaplacianAssignment": ("graph", "10-NN heat graph, LASS ADMM / block CG"),
    "LapRLS": ("kernel", "rbf kernel + 10-NN graph, PCG, stability stop"),
    "LapSVM": ("kernel", "rbf kernel + 10-NN graph, PCG, stability stop"),
    "SPORE": ("kernel", "10-NN graph, IIP"),
    "MatrixCompletionTransducer": ("kernel", "MC-1, 20 features, 20% missing, mu = 1e-2"),
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
    if method == "MatrixCompletionTransducer":
        est = semisup.MatrixCompletionTransducer(mu=1e-2)
    elif method == "ClusteredRegressor":
        est = semisup.ClusteredRegressor(5, random_state=0)
    else:
        est = getattr(semisup, method)(knn_method="exact")
    return est.fit


def growth_child(method: str, n: int) -> dict:
    """One fit in this process: seconds, peak RSS and the RSS before the fit (MiB)."""
    import resource
    import warnings

    X, y = _growth_data(method, n)
    fit = _growth_fitter(method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit(*_growth_data(method, 50, seed=1))  # first-call costs (lazy imports) untimed
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        fit(X, y)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return dict(method=method, n=n, seconds=seconds, peak_mib=peak, base_mib=base)


def growth_exponent(ns, ts) -> float:
    """Least-squares slope of log t against log n (nan with fewer than two points)."""
    ns, ts = np.asarray(ns, float), np.asarray(ts, float)
    ok = (ns > 0) & (ts > 0)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(ns[ok]), np.log(ts[ok]), 1)[0])


def _run_child(method, n, timeout):
    code = ("import json, sys; from semisup.experiments.scaling import growth_child; "
            f"print('@@' + json.dumps(growth_child({method!r}, {int(n)})))")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(method=method, n=n, error=f"killed after {timeout:.0f} s")
    for line in out.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    err = (out.stderr.strip().splitlines() or ["no output"])[-1]
    if out.returncode < 0 or "MemoryError" in out.stderr:
        err = f"exit {out.returncode}: {err}"
    return dict(method=method, n=n, error=err[:160])


def run_growth(args) -> list[str]:
    methods = args.methods or list(GROWTH_METHODS)
    unknown = sorted(set(methods) - set(GROWTH_METHODS))
    if unknown:
        raise SystemExit(f"--methods: unknown {unknown}; choose from {list(GROWTH_METHODS)}")
    lines = _header("Time and peak memory against n",
                    "two Gaussian classes in 10-D, 10 labels per class; each fit in a fresh "
                    f"subprocess; a method stops after a fit over {args.max_seconds:g} s", args)
    results = {}
    for method in methods:
        family = GROWTH_METHODS[method][0]
        cap = args.max_n_graph if family == "graph" else args.max_n_kernel
        n, rows = args.start_n, []
        while n <= cap:
            r = _run_child(method, n, timeout=max(10 * args.max_seconds, 60))
            rows.append(r)
            msg = r.get("error") or f"{r['seconds']:.2f} s, peak {r['peak_mib']:.0f} MiB"
            log(f"[scaling] {method} n={n}: {msg}", args.verbose)
            if "error" in r or r["seconds"] > args.max_seconds:
                break
            n = int(round(n * args.factor))
        results[method] = rows
    lines += ["| method | fitted | n | seconds | peak RSS (MiB) | RSS before fit (MiB) |",
              "|---|---|---:|---:|---:|---:|"]
    summary = ["", "| method | growth exponent of time (log-log LS) | largest n fitted | "
               "what stopped it |", "|---|---:|---:|---|"]
    for method, rows in results.items():
        ok = [r for r in rows if "error" not in r]
        for r in rows:
            if "error" in r:
                lines.append(f"| {method} | {GROWTH_METHODS[method][1]} | {r['n']} | "
                             f"{r['error']} | | |")
            else:
                lines.append(f"| {method} | {GROWTH_METHODS[method][1]} | {r['n']} | "
                             f"{r['seconds']:.3f} | {r['peak_mib']:.0f} | "
                             f"{r['base_mib']:.0f} |")
        # the exponent from the fits above 1 s when there are enough (start-up dominates
        # below), else from all
        big = [r for r in ok if r["seconds"] >= 1.0]
        use = big if len(big) >= 3 else ok
        expo = growth_exponent([r["n"] for r in use], [r["seconds"] for r in use])
        last = rows[-1]
        family = GROWTH_METHODS[method][0]
        cap = args.max_n_graph if family == "graph" else args.max_n_kernel
        why = (last["error"] if "error" in last else
               f"time ({last['seconds']:.0f} s > {args.max_seconds:g} s)"
               if last["seconds"] > args.max_seconds else f"the cap n <= {cap}")
        summary.append(f"| {method} | {expo:.2f} | {ok[-1]['n'] if ok else '-'} | {why} |")
    lines += summary + [""]
    if args.plot:
        png = os.path.join(os.path.dirname(report_path(args, "scaling")), "scaling_growth.png")
        _plot_growth(results, png)
        lines += [f"Log-log plot: `{png}`.", ""]
    return lines


def _plot_growth(results, path):
    from .._optional import require

    plt = require("matplotlib.pyplot", "the --plot figure")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for method, rows in results.items():
        ok = [r for r in rows if "error" not in r]
        if not ok:
            continue
        ns = [r["n"] for r in ok]
        axes[0].loglog(ns, [r["seconds"] for r in ok], "o-", label=method)
        axes[1].loglog(ns, [r["peak_mib"] for r in ok], "o-", label=method)
    axes[0].set(xlabel="n", ylabel="fit time (s)", title="time")
    axes[1].set(xlabel="n", ylabel="peak RSS (MiB)", title="memory")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------
# LapRLS / LapSVM with a kernel larger than any one worker's memory

def _fit_record(est, X, y):
    t0 = time.perf_counter()
    est.fit(X, y)
    total = time.perf_counter() - t0
    return dict(total=total, setup=est.setup_time_, solve=est.fit_time_,
                n_iter=est.n_iter_, per_iter=est.fit_time_ / max(est.n_iter_, 1),
                decision=np.asarray(est.decision_function(X[:200] if not hasattr(X, "chunks")
                                                          else X[:200].compute())))


def run_cluster(args) -> list[str]:
    """LapRLS and LapSVM on a LocalCluster whose workers each hold less than the kernel,
    against the in-memory path, in one run."""
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    import semisup

    n, n_mem = args.cluster_n, args.memory_n or args.cluster_n
    dtype = np.dtype(args.kernel_dtype)
    kernel_gb = n * n * dtype.itemsize / 1e9
    lines = _header("LapRLS / LapSVM beyond one worker's memory",
                    f"two Gaussian classes in 10-D, 10 labels per class; n = {n} on the "
                    f"cluster (a {dtype.name} kernel of {kernel_gb:.1f} GB), n = {n_mem} "
                    "in one process", args)
    lines += [f"- cluster: LocalCluster({args.workers} worker processes, 1 thread each, "
              f"memory_limit={args.worker_memory}) on this machine",
              f"- estimators: gamma_A={args.gamma_A:g}, gamma_I={args.gamma_I:g}, "
              f"kernel_dtype={dtype.name}, solver='pcg', early_stopping='stability'", ""]
    kw = dict(gamma_A=args.gamma_A, gamma_I=args.gamma_I, kernel_dtype=dtype.name,
              solver="pcg", early_stopping="stability", knn_method="exact")
    rows = []
    for name in args.cluster_methods:
        X, y = _growth_data(name, n_mem)
        mem = _fit_record(getattr(semisup, name)(**kw), X, y)
        log(f"[scaling] {name} in memory n={n_mem}: {mem['total']:.1f} s", args.verbose)
        rows.append((name, f"in memory (one process), n = {n_mem}", mem))
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=args.worker_memory, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40,
                      env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}) as cluster, \
            Client(cluster):
        for name in args.cluster_methods:
            X, y = _growth_data(name, n)
            Xd = da.from_array(X, chunks=(4096, -1))
            dist = _fit_record(getattr(semisup, name)(**kw), Xd, y)
            log(f"[scaling] {name} on the cluster n={n}: {dist['total']:.1f} s", args.verbose)
            rows.append((name, f"{args.workers} Dask workers, n = {n}", dist))
    lines += ["| method | where | total fit (s) | set-up: graph + kernel (s) | PCG (s) | "
              "iterations | s / iteration |", "|---|---|---:|---:|---:|---:|---:|"]
    for name, where, r in rows:
        lines.append(f"| {name} | {where} | {r['total']:.1f} | {r['setup']:.1f} | "
                     f"{r['solve']:.1f} | {r['n_iter']} | {r['per_iter']:.3f} |")
    lines.append("")
    for name in args.cluster_methods:
        mem = [r for nm, w, r in rows if nm == name and w.startswith("in memory")][0]
        dist = [r for nm, w, r in rows if nm == name and not w.startswith("in memory")][0]
        ratio = dist["per_iter"] / mem["per_iter"]
        same = ""
        if n == n_mem:
            diff = float(np.abs(dist["decision"] - mem["decision"]).max())
            same = f"; largest difference of the decision values: {diff:.1e}"
        lines.append(f"- {name}: a PCG iteration on the cluster takes {ratio:.2f}x the "
                     f"in-memory one{same}")
    lines.append("")
    return lines


# ------------------------------------------------------------------------------------------
# Command line

def run_bench(args) -> int:
    return run_command(args, _run_bench)


def _parts(args):
    return only_set(args, [p for p in PARTS if getattr(args, p)] or ["growth"])


def _needs(args):
    return {p: ("mnist",) if p == "knn_mnist" else () for p in _parts(args)}


def _run_bench(args) -> int:
    parts = _parts(args)
    if args.quick:
        for name, value in QUICK.items():
            if getattr(args, name) is None or getattr(args, name) > value:
                setattr(args, name, value)
    path = report_path(args, "scaling")
    run = dict(knn_mnist=run_knn_mnist, growth=run_growth, cluster=run_cluster)
    for part in parts:
        lines = run[part](args)
        write_section(path, part, lines)
        print("\n".join(lines))
    say_written(path)
    return 0


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench scaling``."""
    p = subparsers.add_parser(
        "scaling", help="time and memory against n; exact kNN of MNIST vs scikit-learn",
        description="Scaling benchmarks: knn_mnist (exact kNN graph of MNIST against "
                    "scikit-learn), growth (every estimator at growing n: time, peak "
                    "memory, growth exponent; the default), cluster (LapRLS/LapSVM on a "
                    "LocalCluster whose workers hold less than the kernel).")
    p.add_argument("--knn-mnist", action="store_true", help="same as --only knn_mnist")
    p.add_argument("--growth", action="store_true", help="same as --only growth")
    p.add_argument("--cluster", action="store_true", help="same as --only cluster")
    p.add_argument("--cluster-n", type=int, default=40_000)
    p.add_argument("--memory-n", type=int, default=None,
                   help="--cluster: n of the in-memory comparison (default --cluster-n)")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--worker-memory", default="3GB")
    p.add_argument("--kernel-dtype", default="float32", choices=("float32", "float64"))
    p.add_argument("--cluster-methods", nargs="+", default=["LapRLS", "LapSVM"])
    p.add_argument("--gamma-A", type=float, default=1e-2, help="--cluster: gamma_A")
    p.add_argument("--gamma-I", type=float, default=1e-1, help="--cluster: gamma_I")
    p.add_argument("--n-neighbors", type=int, default=10)
    p.add_argument("--n-samples", type=int, default=None,
                   help="--knn-mnist: first points of MNIST only (default all 70 000)")
    p.add_argument("--sklearn-n", type=int, default=None,
                   help="--knn-mnist: scikit-learn on the first this many points only")
    p.add_argument("--methods", nargs="+", default=None,
                   help=f"--growth: estimators (default all: {', '.join(GROWTH_METHODS)})")
    p.add_argument("--start-n", type=int, default=1000)
    p.add_argument("--factor", type=float, default=2.0, help="--growth: ratio of the n's")
    p.add_argument("--max-n-graph", type=int, default=1_000_000)
    p.add_argument("--max-n-kernel", type=int, default=40_000)
    p.add_argument("--max-seconds", type=float, default=60.0,
                   help="--growth: stop a method after a fit longer than this")
    add_common_options(p, "scaling", "bench", only=PARTS, needs=_needs,
                       only_help="which parts (default growth)",
                       quick_help="smaller sizes (MNIST 10 000 points, n up to 16 000 / "
                                  "4 000, cluster n 4 000), written under --out",
                       unused=("--cache", "--reps", "--n-jobs", "--resume",
                               "--assemble-only"))
    p.set_defaults(func=run_bench)
