"""The GPU engine's benchmark on MNIST (issue #32): ``python -m semisup.experiments.gpu``.

On a CUDA device (``--engine cupy``, the default) it times, each stage between device
synchronisations and after a warm-up on a small subset (CuPy compiles its kernels on first
use): the exact 10-NN graph of MNIST's 70 000 points (a sample of the lists checked against
a float64 brute force on the device), the engine's harmonic and Poisson solves at 10 labels
per class, the estimators ``HarmonicFunction().fit(X, y)`` and ``PoissonLearning().fit(X,
y)`` on CuPy arrays (the graph built on the device inside ``fit``, the fitted arrays left
there), LapRLS with the full float32 RBF kernel on all points (one-vs-rest), and
``LapRLS(kernel_dtype="float32")`` on the device arrays (graph, kernel and PCG in fit). Every stage
runs in its own ``try``: one failure does not lose the others. The record goes to
``OUT/gpu.md`` and ``OUT/gpu.json`` (``--out``, default ``$OUT`` or the working directory);
its last column holds this project's CPU figures for MNIST from ``docs/benchmarks`` (not
measured by the run).

``--engine numpy --n 3000`` runs the same code paths on the CPU (a check of the script, not
a benchmark). ``semisup bench gpu`` is the same, writing under its ``--out``.
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

from ..datasets.splits import labeled_per_class
from ..engines import arrays
from ._runner import add_common_options, add_options
from ._bench import load_mnist

#: the script's time budget (seconds); LapRLS is skipped when too little of it is left
BUDGET_S = 290
#: the stages, in order (``--only`` picks among them; the later ones need transfer and
#: knn_graph, which always run)
STAGES = ("transfer", "knn_graph", "harmonic", "poisson", "harmonic_fit", "poisson_fit",
          "reduced_fit", "laprls_8000", "lapsvm_8000", "laprls", "laprls_fit",
          "laprls_fit64", "lapsvm_fit", "lass_fit")
#: the same computations on this project's CPU machine (2 cores), from docs/benchmarks
#: (not measured by this script); "-" where no figure is recorded yet
CPU_FIGURES = {
    "knn_graph": "15.7 s (the library's exact search, scaling.md)",
    "harmonic": "2.24 s, 139 iterations (this script, --engine numpy; gpu.md)",
    "poisson": "0.87 s, 50 iterations (--engine numpy; gpu.md)",
    "harmonic_fit": "24.1 s, approximate graph (--engine numpy; gpu.md)",
    "poisson_fit": "4.80 s, approximate graph (--engine numpy; gpu.md)",
    "reduced_fit": "22.4 s (--engine numpy; gpu.md)",
    "laprls": "- (the 70 000-point kernel does not fit in 24 GiB)",
    "laprls_fit": "- (the kernel does not fit in 24 GiB)",
    "laprls_fit64": "- (the kernel does not fit in 24 GiB)",
    "lapsvm_fit": "- (the kernel does not fit in 24 GiB)",
    "lass_fit": "7.37 s, approximate graph (--engine numpy; gpu.md)",
    "laprls_8000": "10.5 s, 0.8895, the closed form (--engine numpy; gpu.md)",
    "lapsvm_8000": "11.7 s, 4 Newton steps, 0.8872 (--engine numpy; gpu.md)",
}
#: the estimators' fit stages: (estimator, parameters; the others at their defaults)
FITS = {"harmonic_fit": ("HarmonicFunction", dict(tol=1e-8)),
        "poisson_fit": ("PoissonLearning", dict(tol=1e-3)),
        "lass_fit": ("LaplacianAssignment", {}),
        "laprls_fit": ("LapRLS", dict(kernel_dtype="float32")),
        "laprls_fit64": ("LapRLS", {}),           # its default float64 kernel
        "lapsvm_fit": ("LapSVM", {}),
        "reduced_fit": ("LapRLS", dict(n_basis=2000, random_state=0)),
        # the direct solves of solver="auto" (up to 8000 points), on a seeded subset
        "laprls_8000": ("LapRLS", {}),
        "lapsvm_8000": ("LapSVM", {})}
#: the fits on a random subset of the points (seeded by ``seed``): its size
SUBSETS = {"laprls_8000": 8000, "lapsvm_8000": 8000}
#: the fits that hold an n x n kernel: skipped when under a minute of the budget is left
HEAVY = ("laprls_fit", "laprls_fit64", "lapsvm_fit")


def _say(msg):
    print(msg, flush=True)


def _modules(engine):
    if engine == "numpy":
        return np, (lambda: None)
    from ..engines.cupy import import_cupy
    cupy, _ = import_cupy()
    return cupy, (lambda: cupy.cuda.Device().synchronize())


def _device_info(xp):
    import scipy
    info = {"python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__}
    if xp is np:
        return {**info, "device": f"CPU ({os.cpu_count()} cores)"}
    rt = xp.cuda.runtime
    props = rt.getDeviceProperties(xp.cuda.Device().id)
    name = props["name"]
    return {**info, "device": name.decode() if isinstance(name, bytes) else str(name),
            "device_memory_GiB": round(props["totalGlobalMem"] / 2 ** 30, 1),
            "cupy": xp.__version__, "cuda_driver": rt.driverGetVersion(),
            "cuda_runtime": rt.runtimeGetVersion(),
            "cupy_tf32": os.environ.get("CUPY_TF32", "")}


def _timed(sync, fn):
    sync()
    t0 = time.perf_counter()
    out = fn()
    sync()
    return out, time.perf_counter() - t0


def _stage(record, name, fn):
    _say(f"[gpu bench] {name} ...")
    try:
        out = record["stages"][name] = fn()
        _say(f"[gpu bench] {name}: " + ", ".join(f"{k}={v}" for k, v in out.items()))
    except Exception as exc:     # one stage's failure must not lose the others
        record["stages"][name] = {"error": f"{type(exc).__name__}: {exc}"}
        _say(f"[gpu bench] {name} FAILED: {type(exc).__name__}: {exc}")
        traceback.print_exc()
        sys.stderr.flush()


def _product_times(xp, sync, Kmat, c, reps=10):
    """Milliseconds of one product of the kernel with ``c`` columns, in two layouts
    (``K V`` and ``(V^T K)^T``, equal for a symmetric ``K``), and the bandwidth of the
    first: what a PCG iteration of LapRLS costs at least (profile before optimising). For
    a float32 kernel also the float64-arithmetic product the estimators' PCG uses
    (:func:`semisup.linalg.xp.product_f64`), with its largest difference from the
    float64 product of the widened kernel (relative to the largest entry)."""
    from ..linalg.xp import product_f64
    V = xp.ones((Kmat.shape[0], c), dtype=Kmat.dtype)
    Vt = xp.ascontiguousarray(V.T)
    V64 = xp.asarray(np.random.default_rng(0).normal(size=(Kmat.shape[0], c)))
    fns = [("KV", lambda: Kmat @ V), ("VtK", lambda: Vt @ Kmat)]
    if Kmat.dtype == np.float32:
        fns.append(("f64", lambda: product_f64(Kmat, V64)))
    out = {}
    for name, fn in fns:
        fn()
        _, t = _timed(sync, lambda: [fn() for _ in range(reps)])
        out[f"product_{name}_ms"] = round(1e3 * t / reps, 3)
    out["product_KV_GBps"] = round(Kmat.nbytes / (out["product_KV_ms"] / 1e3) / 1e9, 1)
    if Kmat.dtype == np.float32:
        P = product_f64(Kmat, V64)
        step = 4096
        ref = xp.concatenate([Kmat[:, lo:lo + step].astype(xp.float64).T @ V64
                              for lo in range(0, Kmat.shape[1], step)])
        out["product_f64_rel_diff"] = float(xp.abs(P - ref).max() / xp.abs(ref).max())
    return out


def run(engine="cupy", n=None, data_dir=None, per_class=10, seed=0, laprls_iter=500,
        warmup=2000, only=None):
    """Run the benchmark; returns the record (a dict). ``only``: the stages to run (the
    transfer and the graph always run)."""
    import semisup
    from ..kernels import scale_sigma

    start = time.perf_counter()
    xp, sync = _modules(engine)
    record = {"engine": engine, "info": _device_info(xp), "stages": {}}
    _say(f"[gpu bench] {record['info']}")
    X_h, y = load_mnist(data_dir)
    if n is not None and n < X_h.shape[0]:
        idx = np.sort(np.random.default_rng(seed).choice(X_h.shape[0], n, replace=False))
        X_h, y = X_h[idx], y[idx]
    (n, d), K = X_h.shape, int(y.max()) + 1
    m = min(warmup, n)                      # the warm-up subset
    record["n"], record["d"] = int(n), int(d)
    lab = labeled_per_class(y, per_class, seed)
    labeled = np.zeros(n, dtype=bool)
    labeled[lab] = True
    state = {}

    def accuracy(pred):
        return round(float((pred[~labeled] == y[~labeled]).mean()), 4)

    def transfer():
        state["X"], t = _timed(sync, lambda: xp.asarray(X_h))
        return {"seconds": round(t, 4), "MB": round(X_h.nbytes / 2 ** 20, 1)}

    def knn():
        X = state["X"]
        arrays.knn_graph(*arrays.knn_exact(X[:m], 10))             # warm-up (compiles)
        (dist, ind), t_knn = _timed(sync, lambda: arrays.knn_exact(X, 10))
        (W, sigma), t_graph = _timed(sync, lambda: arrays.knn_graph(dist, ind))
        state["W"] = W
        # a sample of the lists against a float64 brute force on the same device
        s = np.random.default_rng(seed).choice(n, min(200, n), replace=False)
        d_ref, i_ref = map(arrays.to_host, arrays.knn_exact(X, 11, Q=X[xp.asarray(s)],
                                                            float32=False))
        d_s, i_s = (arrays.to_host(a[xp.asarray(s)]) for a in (dist, ind))
        keep = i_ref != s[:, None]      # the query search finds each point itself: drop it
        d_ref = np.array([r[k][:10] for r, k in zip(d_ref, keep)])
        i_ref = np.array([r[k][:10] for r, k in zip(i_ref, keep)])
        return {"knn_seconds": round(t_knn, 4), "graph_seconds": round(t_graph, 4),
                "total_seconds": round(t_knn + t_graph, 4), "edges": int(W.nnz // 2),
                "graph_sigma": round(sigma, 6),
                "sample_max_dist_diff": float(np.abs(d_s - d_ref).max()),
                "sample_rows_with_other_indices": int((i_s != i_ref).any(axis=1).sum())}

    def solve(name):
        W, W_m = state["W"], state["W"][:m][:, :m]
        if name == "harmonic":
            Y_l = np.eye(K)[y[lab]]
            arrays.harmonic_solve(W_m, labeled[:m], Y_l[:int(labeled[:m].sum())])  # warm-up
            (F, it, conv, unreached), t = _timed(
                sync, lambda: arrays.harmonic_solve(W, labeled, Y_l, tol=1e-8))
        else:
            arrays.poisson_solve(W_m, lab[lab < m], y[lab[lab < m]], K)          # warm-up
            (F, it, conv, unreached), t = _timed(
                sync, lambda: arrays.poisson_solve(W, lab, y[lab], K, tol=1e-3))
        return {"seconds": round(t, 4), "n_iter": it, "converged": conv,
                "unreached": int(unreached.size),
                "accuracy": accuracy(arrays.to_host(F).argmax(axis=1))}

    def laprls():
        left = BUDGET_S - (time.perf_counter() - start)
        if left < 60:
            raise TimeoutError(f"skipped: {left:.0f} s of the budget left")
        X, W = state["X"], state["W"]
        sigma = scale_sigma(X)
        Y_d = xp.asarray(np.where(labeled[:, None],
                                  np.where(y[:, None] == np.arange(K), 1.0, -1.0), 0.0))
        apply_L = arrays.laplacian_apply(W, "normalized")
        with warnings.catch_warnings():     # max_iter's warning: "converged" is recorded
            warnings.simplefilter("ignore")
            arrays.laprls_fit(arrays.rbf_kernel(X[:m], sigma), Y_d[:m],    # warm-up
                              arrays.laplacian_apply(W[:m][:, :m], "normalized"), max_iter=5)
            Kmat, t_kernel = _timed(sync, lambda: arrays.rbf_kernel(X, sigma))
            fit, t_solve = _timed(sync, lambda: arrays.laprls_fit(
                Kmat, Y_d, apply_L, gamma_A=1e-6, gamma_I=0.1, tol=1e-4,
                max_iter=laprls_iter))
        products = _product_times(xp, sync, Kmat, K)
        del Kmat
        return {"kernel_seconds": round(t_kernel, 4), "solve_seconds": round(t_solve, 4),
                **products,
                "total_seconds": round(t_kernel + t_solve, 4), "n_iter": fit.n_iter,
                "converged": fit.converged, "kernel_sigma": round(float(sigma), 6),
                "kernel_GiB": round(n * n * 4 / 2 ** 30, 2), "classes": "one-vs-rest, 10",
                "accuracy": accuracy(arrays.to_host(fit.decision).argmax(axis=1))}

    def estimator_fit(name):
        """The estimator of ``FITS[name]`` fitted on the device arrays (graph, kernel and
        solver inside fit), after an untimed warm-up fit on the first points and every
        label (CuPy compiles its kernels on first use)."""
        cls_name, params = FITS[name]
        if name in HEAVY and BUDGET_S - (time.perf_counter() - start) < 60:
            raise TimeoutError("skipped: under 60 s of the budget left")
        cls = getattr(semisup, cls_name)
        X, y_true, known = state["X"], y, labeled
        if name in SUBSETS and SUBSETS[name] < n:
            idx = np.sort(np.random.default_rng(seed).choice(n, SUBSETS[name], replace=False))
            X, y_true = X[xp.asarray(idx)], y[idx]
            known = np.zeros(idx.size, dtype=bool)
            known[labeled_per_class(y_true, per_class, seed)] = True
        y_train = np.where(known, y_true, -1)
        sub = np.union1d(np.arange(m), np.flatnonzero(y_train != -1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cls(**params).fit(X[xp.asarray(sub)], xp.asarray(y_train[sub]))
        y_dev = xp.asarray(y_train)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est, t = _timed(sync, lambda: cls(**params).fit(X, y_dev))
        out = {"estimator": f"{cls_name}({', '.join(f'{k}={v!r}' for k, v in params.items())})",
               "seconds": round(t, 4)}
        for key, attr in (("setup_seconds", "setup_time_"), ("solve_seconds", "fit_time_"),
                          ("n_iter", "n_iter_"), ("converged", "converged_"),
                          ("stop_reason", "stop_reason_"), ("n_basis", "n_basis_")):
            if getattr(est, attr, None) is not None:
                v = getattr(est, attr)
                out[key] = round(float(v), 4) if isinstance(v, float) else v
        out.update(edges=int(est.affinity_matrix_.nnz // 2),
                   transduction_type=type(est.transduction_).__module__.split(".")[0],
                   warnings="; ".join(sorted({str(w.message)[:80] for w in caught})) or "-",
                   points=int(y_true.size), accuracy=round(float(
                       (arrays.to_host(est.transduction_) == y_true)[~known].mean()), 4))
        return out

    stages = {"transfer": transfer, "knn_graph": knn, "laprls": laprls,
              **{s: (lambda s=s: solve(s)) for s in ("harmonic", "poisson")},
              **{s: (lambda s=s: estimator_fit(s)) for s in FITS}}
    wanted = set(STAGES if only is None else only) | {"transfer", "knn_graph"}
    for name in [s for s in STAGES if s in wanted]:
        _stage(record, name, stages[name])
        if name in ("transfer", "knn_graph") and "error" in record["stages"][name]:
            break                       # the later stages need the points and the graph
    record["wall_seconds"] = round(time.perf_counter() - start, 1)
    return record


def markdown(record) -> str:
    """The record as a markdown section."""
    return "\n".join(
        [f"## GPU engine on MNIST ({record['n']} points, {record['d']} features, "
         f"engine {record['engine']})", "", "| | |", "|---|---|",
         *(f"| {k} | {v} |" for k, v in record["info"].items()),
         "", "| stage | result | CPU, this project's machine (docs, not measured) |",
         "|---|---|---|",
         *(f"| {name} | " + ", ".join(f"{k} = {v}" for k, v in out.items())
           + f" | {CPU_FIGURES.get(name, '-')} |" for name, out in record["stages"].items()),
         "", f"Wall time of the script: {record['wall_seconds']} s. Labels: 10 per class "
         "(seeded draw); accuracies on the unlabelled points. Each timed stage ran after "
         "a warm-up on a 2000-point subset, between device synchronisations. "
         "harmonic / poisson: the engine's solves on the graph of knn_graph; "
         "harmonic_fit / poisson_fit: the estimators' fit on the device arrays, graph "
         "included (HarmonicFunction tol=1e-8, PoissonLearning tol=1e-3).", ""])


def run_bench(args) -> int:
    """The record under ``--out`` (``--quick``: 10 000 points)."""
    n = args.n if args.n is not None else (10_000 if args.quick else None)
    record = run(args.engine, n, args.data_home, laprls_iter=args.laprls_iter,
                 only=args.only)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gpu.json"), "w") as fh:
        json.dump(record, fh, indent=1, default=str)
    with open(os.path.join(args.out, "gpu.md"), "w") as fh:
        fh.write(markdown(record))
    _say(markdown(record))
    _say(f"[gpu bench] written: {os.path.join(args.out, 'gpu.md')}, gpu.json")
    return 0


def _options(p):
    add_options(p, {"--engine": dict(choices=("cupy", "numpy"), default="cupy"),
                    "--n": dict(type=int, default=None, help="a random subset of MNIST"),
                    "--laprls-iter": dict(type=int, default=500)})
    add_common_options(p, "gpu", "bench", only=STAGES,
                       only_help="which stages (default all; transfer and knn_graph always "
                                 "run)",
                       quick_help="10 000 MNIST points instead of 70 000",
                       unused=("--cache", "--reps", "--n-jobs", "--plot", "--resume",
                               "--assemble-only", "--blas-threads"))
    p.set_defaults(func=run_bench)
    return p


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench gpu``."""
    _options(subparsers.add_parser(
        "gpu", help="the GPU engine on MNIST: kNN graph, solves, estimators, LapRLS",
        description=__doc__.split("\n\n")[0]))


def main(argv=None):
    """The script (``tools/gpu_check.sh``): ``semisup bench gpu``'s options, the record
    under ``$OUT`` or the working directory by default."""
    p = _options(argparse.ArgumentParser(prog="semisup-bench-gpu",
                                         description=__doc__.split("\n\n")[0]))
    p.set_defaults(out=os.environ.get("OUT", "."))
    return run_bench(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
