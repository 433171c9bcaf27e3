"""LapRLS / LapSVM with a reduced kernel expansion at scale: ``semisup bench reduced`` (issue #31).

Four parts, selected by ``--only`` (a comma list; default all):

``16k``
    accuracy and time against the basis size ``m`` on an MNIST subset of 16 000 points (10
    classes, 10 labels per class, the exact 10-NN graph), the full expansion
    (``n_basis=None``, the n x n kernel) side by side; uniform, k-means++ and leverage bases
    at the ``"auto"`` size.
``mnist``
    all of MNIST (70 000 x 784), 10 and 100 labels per class, the exact 10-NN graph:
    LapRLS and LapSVM at their defaults (the reduced expansion) and ``HarmonicFunction`` on
    the same graph.
``million``
    10^6 points of deformed MNIST (each a random MNIST image moved by a sub-pixel shift of
    at most half a pixel each way, with noise, projected on the 50 leading principal axes of
    MNIST), 10 labels per class, the graph by ``knn_method="approx"`` (pynndescent).
``growth``
    time and peak memory against ``n`` at a fixed ``m`` (``--growth-m``) on the same deformed
    MNIST, with the fitted exponent of time.

Every measurement runs in a fresh subprocess (:func:`measure`): the wall time of ``fit``
(graph, kernel features and solve included; the first-call costs, imports and
pynndescent's compilation, are paid by an untimed warm-up fit on 500 points, 2000 with
the approximate graph), the peak
resident memory of the child (``resource.getrusage``: data, graph, features and solve) and
the RSS before the fit, and the error on the unlabelled points. Finished measurements are
cached as JSON under ``--cache`` (keyed by the measurement and the code version), so an
interrupted run resumes.

Each part rewrites its own section, between HTML comment markers ``reduced:<part>``, of
``docs/benchmarks/lapsvm.md`` (``growth``: of ``docs/benchmarks/scaling.md``) and keeps the
rest of the file (a ``--quick`` run, at small sizes, writes both under ``--out``). The children run under
``--blas-threads`` BLAS threads (the issue's "two cores": ``--blas-threads 2``).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

from .._progress import log
from ._report import load_average, machine
from ._runner import add_common_options, only_set, repo_docs, run_command, say_written

PARTS = ("16k", "mnist", "million", "growth")
#: sizes of a full run and of ``--quick`` (a few minutes on two cores)
SIZES = dict(n16k=16_000, m16k=(1000, 2000, 3000, 6000), mnist=None, million=1_000_000,
             growth=(15_625, 31_250, 62_500, 125_000, 250_000, 500_000, 1_000_000))
QUICK = dict(n16k=2_000, m16k=(250, 500, 1000), mnist=5_000, million=20_000,
             growth=(2_500, 5_000, 10_000, 20_000))
#: bumped by hand when the measurement code changes (part of the cache key)
PROTOCOL = "reduced-1"


# ------------------------------------------------------------------------------------------
# Data

def _base_images(source: str, data_home=None):
    """``(images (N, side, side) float32 in [0, 1], labels)``: MNIST (70 000) or
    scikit-learn's digits (1797 8 x 8 images, shipped with scikit-learn: tests)."""
    if source == "digits":
        from sklearn.datasets import load_digits
        d = load_digits()
        return (d.images / 16.0).astype(np.float32), d.target.astype(np.int64)
    from ..datasets import load_dataset
    ds = load_dataset("mnist", data_home=data_home)
    X = np.asarray(ds.data, dtype=np.float32)
    X /= max(float(X.max()), 1.0)
    return X.reshape(-1, 28, 28), np.asarray(ds.target).astype(np.int64)


def _moved(img, pad, dx, dy):
    """Each image moved by its own integer ``(dx, dy)`` in {-1, 0, 1}^2 (``pad``: the images
    with a one-pixel zero border)."""
    side = img.shape[1]
    out = np.empty_like(img)
    for a in (-1, 0, 1):
        for b in (-1, 0, 1):
            g = np.flatnonzero((dx == a) & (dy == b))
            out[g] = pad[g, 1 + b:1 + b + side, 1 + a:1 + a + side]
    return out


def _deform(img, rng, amp=0.5, noise=0.02):
    """Each image moved by a continuous sub-pixel shift, uniform in ``[-amp, amp]^2``
    (bilinear interpolation: the images of one digit trace a 2-D translation manifold),
    plus Gaussian noise of sd ``noise``, clipped to [0, 1]. Whole-pixel shifts move an MNIST
    image as far as another digit's: on 20 000 points, HarmonicFunction's error (10 labels
    per class) was 24 % with 1-pixel shifts, 10 % with these."""
    c = img.shape[0]
    pad = np.pad(img, ((0, 0), (1, 1), (1, 1)))
    fx, fy = rng.uniform(-amp, amp, (2, c)).astype(np.float32)
    sx, sy = np.sign(fx).astype(int), np.sign(fy).astype(int)
    ax, ay = np.abs(fx)[:, None, None], np.abs(fy)[:, None, None]
    zero = np.zeros(c, dtype=int)
    out = ((1 - ax) * (1 - ay) * img + ax * (1 - ay) * _moved(img, pad, sx, zero)
           + (1 - ax) * ay * _moved(img, pad, zero, sy) + ax * ay * _moved(img, pad, sx, sy))
    out += rng.normal(0.0, noise, out.shape).astype(np.float32)
    return np.clip(out, 0.0, 1.0, out=out)


def make_points(source: str = "mnist", n: int | None = None, *, deform: bool = False,
                pca: int | None = None, seed: int = 0, data_home=None):
    """``(X float32 (n, d), y)``: a subset of the images (``deform=False``; all for
    ``n=None``), or ``n`` deformed copies of random images (:func:`_deform`), optionally
    projected on the ``pca`` leading principal axes of the original images.

    Built in chunks of 50 000, so the peak is the output plus one chunk of images.

    Examples
    --------
    >>> X, y = make_points("digits", 300, deform=True, pca=10, seed=1)
    >>> X.shape, X.dtype, y.shape
    ((300, 10), dtype('float32'), (300,))
    """
    img, lab = _base_images(source, data_home)
    N, side, _ = img.shape
    rng = np.random.default_rng(seed)
    if not deform:
        idx = np.arange(N) if n is None or n >= N else np.sort(rng.choice(N, n, replace=False))
        X = img[idx].reshape(len(idx), -1)
        return (X if pca is None else _project(img, X, pca, seed)), lab[idx]
    idx = rng.integers(0, N, int(n))
    P = None if pca is None else _pca_axes(img, pca, seed)
    X = np.empty((int(n), side * side if P is None else P[1].shape[1]), dtype=np.float32)
    for s in range(0, int(n), 50_000):
        chunk = _deform(img[idx[s:s + 50_000]], rng).reshape(-1, side * side)
        X[s:s + len(chunk)] = chunk if P is None else (chunk - P[0]) @ P[1]
    return X, lab[idx]


def _pca_axes(img, k, seed):
    from sklearn.decomposition import PCA
    flat = img.reshape(img.shape[0], -1)
    p = PCA(k, svd_solver="randomized", random_state=seed).fit(flat)
    return p.mean_.astype(np.float32), p.components_.T.astype(np.float32)


def _project(img, X, k, seed):
    mean, axes = _pca_axes(img, k, seed)
    return (X - mean) @ axes


def hide_labels(y, per_class: int, seed: int = 0):
    """Copy of ``y`` with ``per_class`` random labels per class kept, the rest -1."""
    rng = np.random.default_rng(seed + 1000)
    out = np.full(y.shape, -1, dtype=np.int64)
    for c in np.unique(y):
        pick = np.flatnonzero(y == c)
        out[rng.choice(pick, min(per_class, pick.size), replace=False)] = c
    return out


# ------------------------------------------------------------------------------------------
# One measurement (in a child process)

def _estimator(method, params, knn_method, seed):
    import semisup
    kw = dict(knn_method=knn_method, n_neighbors=10)
    if method != "HarmonicFunction":
        kw["random_state"] = seed
    return getattr(semisup, method)(**{**kw, **params})


def measure(spec: dict) -> dict:
    """One fit in this process: wall seconds, peak RSS (MiB), RSS before the fit (MiB)
    and the error (%) on the unlabelled points.

    ``spec`` keys: ``source``, ``n``, ``deform``, ``pca``, ``seed`` (data),
    ``per_class`` (labels), ``method`` (``LapRLS``, ``LapSVM``, ``HarmonicFunction``),
    ``params`` (estimator keywords), ``knn_method`` and ``data_home``.
    """
    import resource
    import warnings

    from sklearn.base import clone

    X, y = make_points(spec["source"], spec["n"], deform=spec["deform"], pca=spec["pca"],
                       seed=spec["seed"], data_home=spec.get("data_home"))
    y_semi = hide_labels(y, spec["per_class"], spec["seed"])
    est = _estimator(spec["method"], spec["params"], spec["knn_method"], spec["seed"])
    caught = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # imports and pynndescent's numba compilation (on 2000 points: NN-descent proper)
        warm = 2000 if spec["knn_method"] == "approx" else 500
        clone(est).fit(X[:warm], hide_labels(y[:warm], 5, 0))
        caught.clear()
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0, c0 = time.perf_counter(), time.process_time()
        est.fit(X, y_semi)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024     # KiB on Linux
    unl = y_semi == -1
    out = dict(seconds=seconds, cpu_seconds=cpu, peak_mib=peak, base_mib=base, n=int(X.shape[0]),
               d=int(X.shape[1]),
               error=100.0 * float(np.mean(est.transduction_[unl] != y[unl])),
               warnings=sorted({str(w.message)[:200] for w in caught}))
    for attr in ("n_basis_", "n_iter_", "setup_time_", "fit_time_"):
        if hasattr(est, attr):
            out[attr] = getattr(est, attr)
    if hasattr(est, "alpha_"):
        out["alpha_dtype"] = str(np.asarray(est.alpha_).dtype)
    return out


def _key(spec) -> str:
    from ._checkpoint import code_version
    text = json.dumps({k: v for k, v in spec.items() if k != "data_home"}, sort_keys=True)
    version = code_version(("semisup.lapsvm", "semisup.baselines.harmonic",
                            "semisup.graph", "semisup.kernels"), PROTOCOL)
    return hashlib.sha1((text + version).encode()).hexdigest()[:16]


def run_child(spec: dict, args) -> dict:
    """:func:`measure` in a fresh ``python`` (cached under ``--cache``); errors, timeouts
    and memory kills come back as ``{"failed": ...}``."""
    cache = args.cache or os.path.join(args.out, "cache")
    path = os.path.join(cache, f"{_key(spec)}.json")
    if args.resume and os.path.exists(path):
        with open(path) as fh:
            return {**json.load(fh), **spec}
    env = dict(os.environ, **{v: str(args.blas_threads) for v in (
        "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    code = ("import json, sys; from semisup.experiments.reduced import measure; "
            "print('@@' + json.dumps(measure(json.loads(sys.argv[1]))))")
    label = (f"{spec['method']} n={spec['n']} "
             f"{json.dumps(spec['params'], sort_keys=True)} {spec['knn_method']}")
    try:
        out = subprocess.run([sys.executable, "-c", code, json.dumps(spec)], env=env,
                             capture_output=True, text=True, timeout=args.timeout)
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("@@")]
        if lines:
            res = json.loads(lines[-1][2:])
        else:
            err = (out.stderr.strip().splitlines() or ["no output"])[-1]
            res = dict(failed=f"exit {out.returncode}: {err[:200]}")
    except subprocess.TimeoutExpired:
        res = dict(failed=f"killed after {args.timeout:.0f} s")
    log(f"[reduced] {label}: " + (res.get("failed") or
        f"{res['error']:.2f}% error, {res['seconds']:.1f} s "
        f"(CPU {res['cpu_seconds']:.1f} s), peak {res['peak_mib']:.0f} MiB"),
        args.verbose)
    if "failed" not in res:
        os.makedirs(cache, exist_ok=True)
        with open(path, "w") as fh:
            json.dump(res, fh)
    return {**res, **spec}


# ------------------------------------------------------------------------------------------
# Parts

def _spec(args, **kw):
    base = dict(source=args.source, n=None, deform=False, pca=None, seed=0, per_class=10,
                method="LapRLS", params={}, knn_method="exact", data_home=args.data_home)
    return {**base, **kw}


def _row(r, label):
    if "failed" in r:
        return f"| {r['method']} | {label} | — | {r['failed']} | — | — | — |"
    return (f"| {r['method']} | {label} | {r.get('n_basis_', '—')} | {r['error']:.2f} | "
            f"{r['seconds']:.1f} | {r['cpu_seconds']:.1f} | {r['peak_mib'] / 1024:.2f} |")


HEAD = ["| method | expansion | m | error on U (%) | fit (s), graph included | CPU (s) | "
        "peak RSS (GiB) |", "|---|---|---:|---:|---:|---:|---:|"]


def part_16k(args, sizes) -> list[str]:
    n = sizes["n16k"]
    lines = [f"### (a) Error and time against m, MNIST n = {n} (10 classes, 10 labels per "
             "class, exact 10-NN graph)", "", *HEAD]
    summary = []
    for method in args.methods:
        full = run_child(_spec(args, n=n, method=method, params=dict(n_basis=None)), args)
        lines.append(_row(full, "full (n_basis=None)"))
        rows = []
        for m in list(args.m or sizes["m16k"]) + ["auto"]:
            for seed in range(args.reps or 2):
                r = run_child(_spec(args, n=n, method=method, seed=0,
                                    params=dict(n_basis=m, random_state=seed)), args)
                rows.append(r)
                lines.append(_row(r, f"uniform, n_basis={m!r}, draw {seed}"))
        for basis in ("kmeans++", "leverage"):
            r = run_child(_spec(args, n=n, method=method,
                                params=dict(n_basis="auto", basis=basis)), args)
            lines.append(_row(r, f"{basis}, n_basis='auto'"))
        auto = [r for r in rows if r["params"]["n_basis"] == "auto" and "failed" not in r]
        if auto and "failed" not in full:
            err = np.mean([r["error"] for r in auto])
            sec = np.mean([r["seconds"] for r in auto])
            cpu = np.mean([r["cpu_seconds"] for r in auto])
            mem = np.mean([r["peak_mib"] for r in auto])
            summary.append(f"- {method}, n_basis='auto' (m = {auto[0].get('n_basis_')}) "
                           f"against the full model: error {err - full['error']:+.2f} "
                           f"points, {full['seconds'] / sec:.1f}x faster (CPU time: "
                           f"{full['cpu_seconds'] / cpu:.1f}x), "
                           f"{mem / full['peak_mib']:.2f} of its peak memory (issue: within "
                           "0.5 point, >= 5x, <= 0.2)")
    return lines + [""] + summary + [""]


def part_mnist(args, sizes) -> list[str]:
    n = sizes["mnist"]
    lines = [f"### (b) All of MNIST ({'70 000' if n is None else n} points), exact 10-NN "
             "graph, defaults", "", "| labels per class | " + HEAD[0][2:],
             "|---:" + HEAD[1]]
    for per_class in (10, 100):
        for method in list(args.methods) + ["HarmonicFunction"]:
            r = run_child(_spec(args, n=n, method=method, per_class=per_class), args)
            lines.append(f"| {per_class} " + _row(r, "defaults"))
    return lines + ["", "Issue #31: LapRLS and LapSVM <= 60 s and <= 4 GB, graph included, "
                    "and below HarmonicFunction's error at 100 labels per class.", ""]


def _deformed(args, n, **kw):
    return _spec(args, n=n, deform=True, pca=50, knn_method="approx", **kw)


def part_million(args, sizes) -> list[str]:
    n = sizes["million"]
    lines = [f"### (c) {n} points of deformed MNIST (50 principal axes), 10 labels per "
             "class, approximate 10-NN graph (pynndescent)", "", *HEAD]
    for method in list(args.methods) + ["HarmonicFunction"]:
        lines.append(_row(run_child(_deformed(args, n, method=method), args), "defaults"))
    return lines + ["", "Issue #31: within 10 minutes, graph included.", ""]


def growth_exponent(ns, ts) -> float:
    """Least-squares slope of log t against log n (nan with fewer than two points).

    >>> round(growth_exponent([1, 2, 4], [3, 6, 12]), 6)
    1.0
    """
    ns, ts = np.asarray(ns, float), np.asarray(ts, float)
    ok = (ns > 0) & (ts > 0)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(ns[ok]), np.log(ts[ok]), 1)[0])


def part_growth(args, sizes) -> list[str]:
    m = args.growth_m
    lines = [f"### LapRLS / LapSVM against n at m = {m} (deformed MNIST, 50 "
             "principal axes, 10 labels per class, approximate 10-NN graph)", "",
             "| method | n | m | fit (s), graph included | peak RSS (MiB) | RSS before fit "
             "(MiB) | error on U (%) |", "|---|---:|---:|---:|---:|---:|---:|"]
    summary = ["", "| method | growth exponent of time (log-log LS) | of peak RSS above the "
               "start |", "|---|---:|---:|"]
    for method in args.methods:
        ok = []
        for n in sizes["growth"]:
            r = run_child(_deformed(args, n, method=method, params=dict(n_basis=m)), args)
            if "failed" in r:
                lines.append(f"| {method} | {n} | {m} | {r['failed']} | | | |")
                break
            ok.append(r)
            lines.append(f"| {method} | {n} | {r.get('n_basis_', m)} | {r['seconds']:.1f} | "
                         f"{r['peak_mib']:.0f} | {r['base_mib']:.0f} | {r['error']:.2f} |")
        ns = [r["n"] for r in ok]
        summary.append(f"| {method} | {growth_exponent(ns, [r['seconds'] for r in ok]):.2f} | "
                       f"{growth_exponent(ns, [r['peak_mib'] - r['base_mib'] for r in ok]):.2f} |")
    return lines + summary + [""]


# ------------------------------------------------------------------------------------------
# Record and command line

def write_section(path: str, tag: str, lines: list[str], title: str) -> None:
    """Replace the section ``tag`` of ``path`` (between HTML comment markers), or append it."""
    begin, end = f"<!-- {tag} -->", f"<!-- /{tag} -->"
    body = "\n".join([begin, *lines, end])
    text = open(path).read() if os.path.exists(path) else f"# {title}\n"
    pat = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    text = pat.sub(lambda _: body, text) if pat.search(text) else \
        text.rstrip("\n") + "\n\n" + body + "\n"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def _paths(args):
    docs = repo_docs()
    if args.quick or docs is None:
        return (os.path.join(args.out, "lapsvm.md"), os.path.join(args.out, "scaling.md"))
    return str(docs / "benchmarks" / "lapsvm.md"), str(docs / "benchmarks" / "scaling.md")


def _header(args) -> list[str]:
    command = ("semisup " + " ".join(sys.argv[1:])) if sys.argv[1:2] == ["bench"] else \
        "semisup bench reduced"
    return [f"- command: `{command}`",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
            f"- machine: {machine()}, BLAS threads {args.blas_threads}",
            f"- load average at start (1/5/15 min): {load_average(' / ')}",
            "- each fit in a fresh subprocess: wall time of `fit` (graph, kernel features and "
            "solve), peak RSS of the process (data included); error on the unlabelled points",
            ""]


def _run(args) -> int:
    sizes = dict(QUICK if args.quick else SIZES)
    if args.sizes:
        sizes["growth"] = tuple(args.sizes)
    parts = only_set(args, PARTS)
    lapsvm_md, scaling_md = _paths(args)
    run = {"16k": part_16k, "mnist": part_mnist, "million": part_million}
    for part in (p for p in PARTS if p in parts):
        head = _header(args)
        lines = run[part](args, sizes) if part in run else part_growth(args, sizes)
        path = scaling_md if part == "growth" else lapsvm_md
        write_section(path, f"reduced:{part}", [lines[0].replace("### ", "## Reduced "
                                                                 "expansion (issue #31): "),
                                                "", *head, *lines[2:]],
                      "Benchmark: " + ("scaling" if part == "growth" else "lapsvm"))
        say_written(path, args.verbose)
    return 0


def _needs(args):
    parts = only_set(args, PARTS)
    return {p: (("mnist",) if args.source == "mnist" else ()) for p in parts}


def run_bench(args) -> int:
    return run_command(args, _run)


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench reduced``."""
    p = subparsers.add_parser(
        "reduced", help="LapRLS/LapSVM reduced expansion: error vs m, MNIST, 10^6 points",
        description="The reduced expansion of LapRLS / LapSVM (issue #31): 16k (error and "
                    "time against m at n = 16 000, the full model beside), mnist (all 70 000, "
                    "10 and 100 labels per class, HarmonicFunction beside), million (10^6 "
                    "deformed MNIST points, approximate graph), growth (time and memory "
                    "against n at fixed m). Each fit in a fresh subprocess.")
    p.add_argument("--methods", nargs="+", default=["LapRLS", "LapSVM"],
                   choices=("LapRLS", "LapSVM"))
    p.add_argument("--m", type=int, nargs="+", default=None,
                   help="16k: the basis sizes beside 'auto' (default 1000 2000 3000 6000)")
    p.add_argument("--growth-m", type=int, default=1000, help="growth: the fixed m")
    p.add_argument("--sizes", type=int, nargs="+", default=None,
                   help="growth: the n's (default 15 625 to 10^6 by doubling)")
    p.add_argument("--timeout", type=float, default=1800.0,
                   help="seconds before a measurement is killed (default 1800)")
    p.add_argument("--source", choices=("mnist", "digits"), default="mnist",
                   help="the images (digits: scikit-learn's 8x8 digits, for tests)")
    add_common_options(p, "reduced", "bench", only=PARTS, needs=_needs,
                       only_help="which parts (default all)",
                       quick_help="small sizes (n = 2000 / 5000 / 20 000, growth to 20 000), "
                                  "written under --out",
                       reps_help="16k: basis draws per uniform m (default 2)",
                       code=(("semisup.lapsvm",), PROTOCOL),
                       unused=("--n-jobs", "--plot", "--assemble-only"))
    p.set_defaults(func=run_bench)
