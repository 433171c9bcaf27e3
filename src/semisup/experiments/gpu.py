"""The GPU engine's benchmark on MNIST (issue #32): ``python -m semisup.experiments.gpu``.

On a CUDA device (``--engine cupy``, the default) it times, after a warm-up on a small
subset (CuPy compiles its kernels on first use): the exact 10-NN graph of MNIST's 70 000
points (scaled to [0, 1]), the harmonic (HarmonicFunction) and Poisson-learning solves at 10
labels per class, the estimators themselves (``HarmonicFunction().fit(X, y)`` and
``PoissonLearning().fit(X, y)`` on a CuPy ``X`` and ``y``: the graph built on the device
inside ``fit``, the fitted arrays left there), and LapRLS with the full float32 RBF kernel on
all points (one-vs-rest, 10 classes, the kernel on the device), each stage synchronised. A
sample of the kNN lists is checked against a float64 brute-force search on the device.
Every stage runs in its own ``try`` (one failure does not lose the others). The record goes
to ``OUT/gpu.md`` and ``OUT/gpu.json`` (``--out``, default ``$OUT`` or the working
directory); its last column holds this project's CPU figures (2 cores) from
``docs/benchmarks``, which the script does not measure.

``--engine numpy --n 3000`` runs the same code paths on the CPU (a check of the script, not
a benchmark; the estimators then take their CPU path). ``semisup bench gpu`` is the same.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback
import warnings

import numpy as np

from ..engines import arrays

#: the script's time budget (seconds); LapRLS is skipped when too little of it is left
BUDGET_S = 290

#: the stages, in order (``--only`` picks among them; the later ones need transfer and
#: knn_graph, which always run)
STAGES = ("transfer", "knn_graph", "harmonic", "poisson", "harmonic_fit", "poisson_fit",
          "laprls")

#: the same computations on this project's CPU machine (2 cores), from docs/benchmarks
#: (not measured by this script); "-" where no figure is recorded yet
CPU_FIGURES = {
    "knn_graph": "15.7 s (exact 10-NN of MNIST 70 000, docs/benchmarks/foundation.md)",
    "harmonic": "6.1-7.1 s wall, tol=1e-8, 126 CG iterations (foundation.md)",
    "poisson": "-",
    "harmonic_fit": "graph + solve: about 22 s (foundation.md: 15.7 + 6.1-7.1)",
    "poisson_fit": "-",
    "laprls": "- (LapRLS stops at 16 000 points in memory on this machine, issue #32)",
}


def _say(msg):
    print(msg, flush=True)


def _modules(engine):
    if engine == "numpy":
        return np, (lambda: None)
    from ..engines.cupy import import_cupy
    cupy, _ = import_cupy()
    return cupy, (lambda: cupy.cuda.Device().synchronize())


def _device_info(xp):
    info = {"python": platform.python_version(), "numpy": np.__version__}
    import scipy
    info["scipy"] = scipy.__version__
    if xp is np:
        info["device"] = f"CPU ({os.cpu_count()} cores)"
        return info
    rt = xp.cuda.runtime
    props = rt.getDeviceProperties(xp.cuda.Device().id)
    name = props["name"]
    info["device"] = name.decode() if isinstance(name, bytes) else str(name)
    info["device_memory_GiB"] = round(props["totalGlobalMem"] / 2 ** 30, 1)
    info["cupy"] = xp.__version__
    info["cuda_driver"] = rt.driverGetVersion()
    info["cuda_runtime"] = rt.runtimeGetVersion()
    info["cupy_tf32"] = os.environ.get("CUPY_TF32", "")
    return info


def _load(n, data_dir, seed):
    from ..datasets import load_dataset
    ds = load_dataset("mnist", data_home=data_dir)
    X = np.asarray(ds.data, dtype=np.float32)
    X /= max(float(X.max()), 1.0)            # [0, 1] (the pixels are 0..255)
    y = np.asarray(ds.target).astype(np.int64)
    if n is not None and n < X.shape[0]:
        idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
        X, y = X[idx], y[idx]
    return X, y


def _labels(y, per_class, seed):
    rng = np.random.default_rng(seed)
    return np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), per_class,
                                              replace=False) for c in np.unique(y)]))


def _timed(sync, fn):
    sync()
    t0 = time.perf_counter()
    out = fn()
    sync()
    return out, time.perf_counter() - t0


def _stage(record, name, fn):
    _say(f"[gpu bench] {name} ...")
    try:
        out = fn()
        record["stages"][name] = out
        _say(f"[gpu bench] {name}: " + ", ".join(f"{k}={v}" for k, v in out.items()))
    except Exception as exc:     # one stage's failure must not lose the others
        record["stages"][name] = {"error": f"{type(exc).__name__}: {exc}"}
        _say(f"[gpu bench] {name} FAILED: {type(exc).__name__}: {exc}")
        traceback.print_exc()
        sys.stderr.flush()


def run(engine="cupy", n=None, data_dir=None, per_class=10, seed=0, laprls_iter=500,
        warmup=2000, only=None):
    """Run the benchmark; returns the record (a dict). ``only``: the stages to run (the
    transfer and the graph always run)."""
    start = time.perf_counter()
    xp, sync = _modules(engine)
    record = {"engine": engine, "info": _device_info(xp), "stages": {}}
    _say(f"[gpu bench] {record['info']}")
    X_h, y = _load(n, data_dir, seed)
    n = X_h.shape[0]
    record["n"], record["d"] = int(n), int(X_h.shape[1])
    lab = _labels(y, per_class, seed)
    labeled = np.zeros(n, dtype=bool)
    labeled[lab] = True
    K = int(y.max()) + 1
    state = {}

    def accuracy(pred):
        return round(float((pred[~labeled] == y[~labeled]).mean()), 4)

    def transfer():
        X, t = _timed(sync, lambda: xp.asarray(X_h))
        state["X"] = X
        return {"seconds": round(t, 4), "MB": round(X_h.nbytes / 2 ** 20, 1)}

    def knn():
        X = state["X"]
        Xw = X[:min(warmup, n)]
        arrays.knn_graph(*arrays.knn_exact(Xw, 10))             # warm-up (compiles)
        (dist, ind), t_knn = _timed(sync, lambda: arrays.knn_exact(X, 10))
        (W, sigma), t_graph = _timed(sync, lambda: arrays.knn_graph(dist, ind))
        state["W"] = W
        # a sample of the lists against a float64 brute force on the same device
        s = np.random.default_rng(seed).choice(n, min(200, n), replace=False)
        d_ref, i_ref = arrays.knn_exact(X, 11, Q=X[xp.asarray(s)], float32=False)
        d_s = arrays.to_host(dist[xp.asarray(s)])
        i_s = arrays.to_host(ind[xp.asarray(s)])
        d_ref, i_ref = arrays.to_host(d_ref), arrays.to_host(i_ref)
        # the query search includes each point itself (at distance 0): drop it
        keep = i_ref != s[:, None]
        d_ref = np.array([r[k][:10] for r, k in zip(d_ref, keep)])
        i_ref = np.array([r[k][:10] for r, k in zip(i_ref, keep)])
        return {"knn_seconds": round(t_knn, 4), "graph_seconds": round(t_graph, 4),
                "total_seconds": round(t_knn + t_graph, 4), "edges": int(W.nnz // 2),
                "graph_sigma": round(sigma, 6),
                "sample_max_dist_diff": float(np.abs(d_s - d_ref).max()),
                "sample_rows_with_other_indices": int((i_s != i_ref).any(axis=1).sum())}

    def harmonic():
        W = state["W"]
        Y_l = np.eye(K)[y[lab]]
        m = min(warmup, n)                                          # warm-up
        arrays.harmonic_solve(W[:m][:, :m], labeled[:m], Y_l[:int(labeled[:m].sum())])
        (F, it, conv, unreached), t = _timed(
            sync, lambda: arrays.harmonic_solve(W, labeled, Y_l, tol=1e-8))
        return {"seconds": round(t, 4), "n_iter": it, "converged": conv,
                "unreached": int(unreached.size),
                "accuracy": accuracy(arrays.to_host(F).argmax(axis=1))}

    def poisson():
        W = state["W"]
        m = min(warmup, n)
        wl = lab[lab < m]
        arrays.poisson_solve(W[:m][:, :m], wl, y[wl], K)
        (U, it, conv, unreached), t = _timed(
            sync, lambda: arrays.poisson_solve(W, lab, y[lab], K, tol=1e-3))
        return {"seconds": round(t, 4), "n_iter": it, "converged": conv,
                "unreached": int(unreached.size),
                "accuracy": accuracy(arrays.to_host(U).argmax(axis=1))}

    def laprls():
        left = BUDGET_S - (time.perf_counter() - start)
        if left < 60:
            raise TimeoutError(f"skipped: {left:.0f} s of the budget left")
        from ..kernels import scale_sigma
        X, W = state["X"], state["W"]
        sigma = scale_sigma(X)
        Y = np.where(labeled[:, None], np.where(y[:, None] == np.arange(K), 1.0, -1.0), 0.0)
        Y_d = xp.asarray(Y)
        apply_L = arrays.laplacian_apply(W, "normalized")
        m = min(warmup, n)                                          # warm-up
        arrays.laprls_fit(arrays.rbf_kernel(X[:m], sigma), Y_d[:m],
                          arrays.laplacian_apply(W[:m][:, :m], "normalized"), max_iter=5)
        Kmat, t_kernel = _timed(sync, lambda: arrays.rbf_kernel(X, sigma))
        fit, t_solve = _timed(sync, lambda: arrays.laprls_fit(
            Kmat, Y_d, apply_L, gamma_A=1e-6, gamma_I=1.0, tol=1e-4, max_iter=laprls_iter))
        del Kmat
        return {"kernel_seconds": round(t_kernel, 4), "solve_seconds": round(t_solve, 4),
                "total_seconds": round(t_kernel + t_solve, 4), "n_iter": fit.n_iter,
                "converged": fit.converged, "kernel_sigma": round(float(sigma), 6),
                "kernel_GiB": round(n * n * 4 / 2 ** 30, 2), "classes": "one-vs-rest, 10",
                "accuracy": accuracy(arrays.to_host(fit.decision).argmax(axis=1))}

    def estimator_fit(cls, **params):
        """``cls(**params).fit(X, y)`` on the device arrays (the graph built inside fit),
        after a warm-up fit on the first ``warmup`` points."""
        from .. import HarmonicFunction, PoissonLearning
        est_cls = {"HarmonicFunction": HarmonicFunction,
                   "PoissonLearning": PoissonLearning}[cls]
        X = state["X"]
        y_train = np.where(labeled, y, -1)
        sub = np.union1d(np.arange(min(warmup, n)), lab)      # warm-up: every label kept
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est_cls(**params).fit(X[xp.asarray(sub)], xp.asarray(y_train[sub]))
        y_dev = xp.asarray(y_train)
        est, t = _timed(sync, lambda: est_cls(**params).fit(X, y_dev))
        pred = arrays.to_host(est.transduction_)
        out = {"seconds": round(t, 4), "n_iter": int(est.n_iter_),
               "edges": int(est.affinity_matrix_.nnz // 2),
               "transduction_type": type(est.transduction_).__module__.split(".")[0],
               "accuracy": accuracy(pred)}
        del est
        return out

    def harmonic_fit():
        return estimator_fit("HarmonicFunction", tol=1e-8)

    def poisson_fit():
        return estimator_fit("PoissonLearning", tol=1e-3)

    stages = {"transfer": transfer, "knn_graph": knn, "harmonic": harmonic,
              "poisson": poisson, "harmonic_fit": harmonic_fit, "poisson_fit": poisson_fit,
              "laprls": laprls}
    wanted = set(STAGES if only is None else only) | {"transfer", "knn_graph"}
    for name in STAGES:
        if name not in wanted:
            continue
        fn = stages[name]
        _stage(record, name, fn)
        if name in ("transfer", "knn_graph") and "error" in record["stages"][name]:
            break                       # the later stages need the points and the graph
    record["wall_seconds"] = round(time.perf_counter() - start, 1)
    return record


def markdown(record) -> str:
    """The record as a markdown section."""
    info = record["info"]
    lines = [f"## GPU engine on MNIST ({record['n']} points, {record['d']} features, "
             f"engine {record['engine']})", "",
             "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in info.items()]
    lines += ["", "| stage | result | CPU, this project's machine (docs, not measured) |",
              "|---|---|---|"]
    for name, out in record["stages"].items():
        lines.append(f"| {name} | " + ", ".join(f"{k} = {v}" for k, v in out.items())
                     + f" | {CPU_FIGURES.get(name, '-')} |")
    lines += ["", f"Wall time of the script: {record['wall_seconds']} s. Labels: 10 per class "
              "(seeded draw); accuracies on the unlabelled points. Each timed stage ran after "
              "a warm-up on a 2000-point subset, between device synchronisations. "
              "harmonic / poisson: the engine's solves on the graph of knn_graph; "
              "harmonic_fit / poisson_fit: the estimators' fit on the device arrays, graph "
              "included (HarmonicFunction tol=1e-8, PoissonLearning tol=1e-3).", ""]
    return "\n".join(lines)


def _add_arguments(p):
    p.add_argument("--engine", choices=("cupy", "numpy"), default="cupy")
    p.add_argument("--n", type=int, default=None, help="a random subset of MNIST")
    p.add_argument("--laprls-iter", type=int, default=500)


def _write(record, out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "gpu.json"), "w") as fh:
        json.dump(record, fh, indent=1, default=str)
    with open(os.path.join(out, "gpu.md"), "w") as fh:
        fh.write(markdown(record))
    _say(markdown(record))
    _say(f"[gpu bench] written: {os.path.join(out, 'gpu.md')}, gpu.json")


def run_bench(args) -> int:
    """``semisup bench gpu``: the record under ``--out`` (``--quick``: 10 000 points)."""
    n = args.n if args.n is not None else (10_000 if args.quick else None)
    record = run(args.engine, n, args.data_home, laprls_iter=args.laprls_iter,
                 only=args.only)
    _write(record, args.out)
    return 0


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench gpu``."""
    from ._runner import add_common_options
    p = subparsers.add_parser(
        "gpu", help="the GPU engine on MNIST: kNN graph, solves, estimators, LapRLS",
        description=__doc__.split("\n\n")[0])
    _add_arguments(p)
    add_common_options(p, "gpu", "bench", only=STAGES,
                       only_help="which stages (default all; transfer and knn_graph always "
                                 "run)",
                       quick_help="10 000 MNIST points instead of 70 000",
                       unused=("--cache", "--reps", "--n-jobs", "--plot", "--resume",
                               "--assemble-only", "--blas-threads"))
    p.set_defaults(func=run_bench)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="semisup-bench-gpu", description=__doc__.split(
        "\n\n")[0])
    _add_arguments(parser)
    parser.add_argument("--data-home", default=None,
                        help="directory of the MNIST IDX files (default: $SEMISUP_DATA)")
    parser.add_argument("--out", default=os.environ.get("OUT", "."),
                        help="where gpu.md and gpu.json go (default: $OUT or .)")
    parser.add_argument("--only", nargs="+", choices=STAGES, default=None)
    args = parser.parse_args(argv)
    record = run(args.engine, args.n, args.data_home, laprls_iter=args.laprls_iter,
                 only=args.only)
    _write(record, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
