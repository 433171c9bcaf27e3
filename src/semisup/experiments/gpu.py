"""The GPU engine's benchmark on MNIST (issue #32): ``python -m semisup.experiments.gpu``.

On a CUDA device (``--engine cupy``, the default) it times, after a warm-up on a small
subset (CuPy compiles its kernels on first use): the exact 10-NN graph of MNIST's 70 000
points (scaled to [0, 1]), the harmonic (HarmonicFunction) and Poisson-learning solves at 10
labels per class, and LapRLS with the full float32 RBF kernel on all points (one-vs-rest,
10 classes, the kernel on the device), each stage synchronised. A sample of the kNN lists is
checked against a float64 brute-force search on the device. Every stage runs in its own
``try`` (one failure does not lose the others). The record goes to ``OUT/gpu.md`` and
``OUT/gpu.json`` (``--out``, default ``$OUT`` or the working directory).

``--engine numpy --n 3000`` runs the same code paths on the CPU (a check of the script, not
a benchmark).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback

import numpy as np

from ..engines import arrays

#: the script's time budget (seconds); LapRLS is skipped when too little of it is left
BUDGET_S = 330


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
        warmup=2000):
    """Run the benchmark; returns the record (a dict)."""
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
        from ..lapsvm.estimator import _scale_sigma
        X, W = state["X"], state["W"]
        sigma = _scale_sigma(X)
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

    for name, fn in (("transfer", transfer), ("knn_graph", knn), ("harmonic", harmonic),
                     ("poisson", poisson), ("laprls", laprls)):
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
    lines += ["", "| stage | result |", "|---|---|"]
    for name, out in record["stages"].items():
        lines.append(f"| {name} | " + ", ".join(f"{k} = {v}" for k, v in out.items()) + " |")
    lines += ["", f"Wall time of the script: {record['wall_seconds']} s. Labels: 10 per class "
              "(seeded draw); accuracies on the unlabelled points. Each timed stage ran after "
              "a warm-up on a 2000-point subset, between device synchronisations.", ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="semisup-bench-gpu", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--engine", choices=("cupy", "numpy"), default="cupy")
    parser.add_argument("--n", type=int, default=None, help="a random subset of MNIST")
    parser.add_argument("--data-dir", default=None,
                        help="directory of the MNIST IDX files (default: $SEMISUP_DATA)")
    parser.add_argument("--out", default=os.environ.get("OUT", "."),
                        help="where gpu.md and gpu.json go (default: $OUT or .)")
    parser.add_argument("--laprls-iter", type=int, default=500)
    args = parser.parse_args(argv)
    record = run(args.engine, args.n, args.data_dir, laprls_iter=args.laprls_iter)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gpu.json"), "w") as fh:
        json.dump(record, fh, indent=1, default=str)
    with open(os.path.join(args.out, "gpu.md"), "w") as fh:
        fh.write(markdown(record))
    _say(markdown(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
