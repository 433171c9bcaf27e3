"""LapRLS / LapSVM with a reduced kernel expansion at scale: ``semisup bench reduced`` (issue #31).

Five parts (``--only``; default all), each a section ``reduced:<part>`` of
``docs/benchmarks/lapsvm.md`` (``growth``: of ``scaling.md``; ``--quick``, at small sizes:
both under ``--out``):

``16k``: error and time against the basis size ``m`` on 16 000 MNIST points (10 labels per
class, the exact 10-NN graph), the full expansion (``n_basis=None``) beside; uniform,
k-means++ and leverage bases at the ``"auto"`` size. ``mnist``: all of MNIST, 10 and 100
labels per class, LapRLS and LapSVM at their defaults and ``HarmonicFunction`` on the same
graph. ``million``: 10^6 points of deformed MNIST (:func:`make_points`), 10 labels per
class, the approximate graph (pynndescent). ``growth``: time and peak memory against ``n``
at ``m = --growth-m`` on the same deformed MNIST, with the fitted exponents.
``crossover``: the full expansion against the reduced rule's ``m`` on MNIST subsets around
:data:`~semisup.lapsvm.reduced.AUTO_FULL_N`, where ``n_basis="auto"`` turns from one to the
other.

Every measurement (:func:`measure`) runs in a fresh subprocess under ``--blas-threads`` BLAS
threads: the wall time of ``fit`` (graph, kernel features and solve; the first-call costs
paid by an untimed warm-up fit on 500 points, 2000 with the approximate graph), the peak
resident memory of the child and its RSS before the fit, and the error on the unlabelled
points. Finished measurements are cached under ``--cache``, so an interrupted run resumes.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np

from .._progress import log
from ._bench import growth_exponent, in_child, load_mnist, measured, write_parts
from ._report import markdown_table
from ._runner import add_command, only_set, repo_docs, unit_cache

PARTS = ("16k", "mnist", "million", "growth", "crossover")
#: sizes of a full run and of ``--quick`` (a few minutes on two cores)
SIZES = dict(n16k=16_000, m16k=(1000, 2000, 3000, 6000), mnist=None, million=1_000_000,
             growth=(15_625, 31_250, 62_500, 125_000, 250_000, 500_000, 1_000_000),
             crossover=(3000, 4000, 6000, 8000, 10_000))
QUICK = dict(n16k=2_000, m16k=(250, 500, 1000), mnist=5_000, million=20_000,
             growth=(2_500, 5_000, 10_000, 20_000), crossover=(1000, 3000))
#: the library code a measurement runs, and the protocol's version (bumped by hand when the
#: measurement code changes): the cache's version
CODE = (("semisup.lapsvm", "semisup.baselines.harmonic", "semisup.graph", "semisup.kernels"),
        "reduced-2")


# ------------------------------------------------------------------------------------------
# Data

def _base_images(source: str, data_home=None):
    """``(images (N, side, side) float32 in [0, 1], labels)``: MNIST (70 000) or
    scikit-learn's digits (1797 8 x 8 images, shipped with scikit-learn: tests)."""
    if source == "digits":
        from sklearn.datasets import load_digits
        d = load_digits()
        return (d.images / 16.0).astype(np.float32), d.target.astype(np.int64)
    X, y = load_mnist(data_home)
    return X.reshape(-1, 28, 28), y


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


def _pca_axes(img, k, seed):
    from sklearn.decomposition import PCA
    p = PCA(k, svd_solver="randomized", random_state=seed).fit(img.reshape(img.shape[0], -1))
    return p.mean_.astype(np.float32), p.components_.T.astype(np.float32)


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
        if pca is not None:
            mean, axes = _pca_axes(img, pca, seed)
            X = (X - mean) @ axes
        return X, lab[idx]
    idx = rng.integers(0, N, int(n))
    P = None if pca is None else _pca_axes(img, pca, seed)
    X = np.empty((int(n), side * side if P is None else P[1].shape[1]), dtype=np.float32)
    for s in range(0, int(n), 50_000):
        chunk = _deform(img[idx[s:s + 50_000]], rng).reshape(-1, side * side)
        X[s:s + len(chunk)] = chunk if P is None else (chunk - P[0]) @ P[1]
    return X, lab[idx]


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

def measure(spec: dict) -> dict:
    """One fit in this process (:func:`._bench.measured`) and the error (%) on the
    unlabelled points.

    ``spec`` keys: ``source``, ``n``, ``deform``, ``pca``, ``seed`` (data),
    ``per_class`` (labels), ``method`` (``LapRLS``, ``LapSVM``, ``HarmonicFunction``),
    ``params`` (estimator keywords), ``knn_method`` and ``data_home``.
    """
    import warnings

    from sklearn.base import clone

    import semisup

    X, y = make_points(spec["source"], spec["n"], deform=spec["deform"], pca=spec["pca"],
                       seed=spec["seed"], data_home=spec.get("data_home"))
    y_semi = hide_labels(y, spec["per_class"], spec["seed"])
    kw = dict(knn_method=spec["knn_method"], n_neighbors=10)
    if spec["method"] != "HarmonicFunction":
        kw["random_state"] = spec["seed"]
    est = getattr(semisup, spec["method"])(**{**kw, **spec["params"]})
    # imports and pynndescent's numba compilation (on 2000 points: NN-descent proper)
    warm = 2000 if spec["knn_method"] == "approx" else 500
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = measured(lambda: est.fit(X, y_semi), lambda: (
            clone(est).fit(X[:warm], hide_labels(y[:warm], 5, 0)), caught.clear()))
    unl = y_semi == -1
    out.update(n=int(X.shape[0]), d=int(X.shape[1]),
               error=100.0 * float(np.mean(est.transduction_[unl] != y[unl])),
               warnings=sorted({str(w.message)[:200] for w in caught}))
    out.update({a: getattr(est, a) for a in ("n_basis_", "n_iter_", "setup_time_", "fit_time_")
                if hasattr(est, a)})
    if hasattr(est, "alpha_"):
        out["alpha_dtype"] = str(np.asarray(est.alpha_).dtype)
    return out


def run_child(spec: dict, args) -> dict:
    """:func:`measure` in a fresh ``python`` (:func:`._bench.in_child`), cached under
    ``--cache``; errors, timeouts and memory kills come back as ``{"failed": ...}``."""
    cache = unit_cache(args)
    key = hashlib.sha1(json.dumps({k: v for k, v in spec.items() if k != "data_home"},
                                  sort_keys=True).encode()).hexdigest()[:16]
    res = cache.get(key) if args.resume else None
    if res is None:
        res = in_child(f"{__name__}:measure", spec, timeout=args.timeout,
                       blas_threads=args.blas_threads)
        log(f"[reduced] {spec['method']} n={spec['n']} "
            f"{json.dumps(spec['params'], sort_keys=True)} {spec['knn_method']}: " + (
                res.get("failed") or f"{res['error']:.2f}% error, {res['seconds']:.1f} s "
                f"(CPU {res['cpu_seconds']:.1f} s), peak {res['peak_mib']:.0f} MiB"),
            args.verbose)
        if "failed" not in res:
            cache.put(key, res)
    return {**res, **spec}


# ------------------------------------------------------------------------------------------
# Parts: (title, notes, body) each

ISSUE = "Reduced expansion (issue #31): "
NOTES = ["- each fit in a fresh subprocess: wall time of `fit` (graph, kernel features and "
         "solve), peak RSS of the process (data included); error on the unlabelled points"]
COLS = ["method", "expansion", "m:", "error on U (%):", "fit (s), graph included:",
        "CPU (s):", "peak RSS (GiB):"]


def _size(args, name):
    return (QUICK if args.quick else SIZES)[name]


def _spec(args, **kw):
    return {**dict(source=args.source, n=None, deform=False, pca=None, seed=0, per_class=10,
                   method="LapRLS", params={}, knn_method="exact", data_home=args.data_home),
            **kw}


def _deformed(args, n, **kw):
    return _spec(args, n=n, deform=True, pca=50, knn_method="approx", **kw)


def _row(r, label):
    if "failed" in r:
        return [r["method"], label, "—", r["failed"], "—", "—", "—"]
    return [r["method"], label, r.get("n_basis_", "—"), f"{r['error']:.2f}",
            f"{r['seconds']:.1f}", f"{r['cpu_seconds']:.1f}", f"{r['peak_mib'] / 1024:.2f}"]


def part_16k(args):
    n = _size(args, "n16k")
    rows, summary = [], []
    for method in args.methods:
        def run(**params):
            return run_child(_spec(args, n=n, method=method, params=params), args)
        full = run(n_basis=None)
        rows.append(_row(full, "full (n_basis=None)"))
        auto = []
        for m in list(args.m or _size(args, "m16k")) + ["auto"]:
            for seed in range(args.reps or 2):
                r = run(n_basis=m, random_state=seed)
                rows.append(_row(r, f"uniform, n_basis={m!r}, draw {seed}"))
                auto += [r] if m == "auto" and "failed" not in r else []
        rows += [_row(run(n_basis="auto", basis=b), f"{b}, n_basis='auto'")
                 for b in ("kmeans++", "leverage")]
        if auto and "failed" not in full:
            mean = {k: np.mean([r[k] for r in auto])
                    for k in ("error", "seconds", "cpu_seconds", "peak_mib")}
            summary.append(
                f"- {method}, n_basis='auto' (m = {auto[0].get('n_basis_')}) against the full "
                f"model: error {mean['error'] - full['error']:+.2f} points, "
                f"{full['seconds'] / mean['seconds']:.1f}x faster (CPU time: "
                f"{full['cpu_seconds'] / mean['cpu_seconds']:.1f}x), "
                f"{mean['peak_mib'] / full['peak_mib']:.2f} of its peak memory (issue: within "
                "0.5 point, >= 5x, <= 0.2)")
    return (f"{ISSUE}(a) Error and time against m, MNIST n = {n} (10 classes, 10 labels per "
            "class, exact 10-NN graph)", NOTES, [markdown_table(rows, COLS), "", *summary, ""])


def part_mnist(args):
    n = _size(args, "mnist")
    rows = [[per_class, *_row(run_child(_spec(args, n=n, method=method, per_class=per_class),
                                        args), "defaults")]
            for per_class in (10, 100) for method in [*args.methods, "HarmonicFunction"]]
    return (f"{ISSUE}(b) All of MNIST ({'70 000' if n is None else n} points), exact 10-NN "
            "graph, defaults", NOTES, [
                markdown_table(rows, ["labels per class:", *COLS]), "",
                "Issue #31: LapRLS and LapSVM <= 60 s and <= 4 GB, graph included, "
                "and below HarmonicFunction's error at 100 labels per class.", ""])


def part_million(args):
    n = _size(args, "million")
    rows = [_row(run_child(_deformed(args, n, method=method), args), "defaults")
            for method in [*args.methods, "HarmonicFunction"]]
    return (f"{ISSUE}(c) {n} points of deformed MNIST (50 principal axes), 10 labels per "
            "class, approximate 10-NN graph (pynndescent)", NOTES,
            [markdown_table(rows, COLS), "", "Issue #31: within 10 minutes, graph included.", ""])


def part_growth(args):
    m = args.growth_m
    rows, summary = [], []
    for method in args.methods:
        ok = []
        for n in args.sizes or _size(args, "growth"):
            r = run_child(_deformed(args, n, method=method, params=dict(n_basis=m)), args)
            if "failed" in r:
                rows.append([method, n, m, r["failed"], "", "", ""])
                break
            ok.append(r)
            rows.append([method, n, r.get("n_basis_", m), f"{r['seconds']:.1f}",
                         f"{r['peak_mib']:.0f}", f"{r['base_mib']:.0f}", f"{r['error']:.2f}"])
        ns = [r["n"] for r in ok]
        summary.append([method, f"{growth_exponent(ns, [r['seconds'] for r in ok]):.2f}",
                        f"{growth_exponent(ns, [r['peak_mib'] - r['base_mib'] for r in ok]):.2f}"])
    return (f"{ISSUE}LapRLS / LapSVM against n at m = {m} (deformed MNIST, 50 principal axes, "
            "10 labels per class, approximate 10-NN graph)", NOTES,
            [markdown_table(rows, ["method", "n:", "m:", "fit (s), graph included:",
                                   "peak RSS (MiB):", "RSS before fit (MiB):",
                                   "error on U (%):"]), "",
             markdown_table(summary, ["method", "growth exponent of time (log-log LS):",
                                      "of peak RSS above the start:"]), ""])


def part_crossover(args):
    from ..lapsvm.reduced import AUTO_FULL_N, auto_n_basis
    rows = []
    for n in _size(args, "crossover"):
        m = auto_n_basis(n)
        for method in args.methods:
            direct = "newton" if method == "LapSVM" else "closed_form"
            # (label, estimator parameters, whether n_basis="auto" takes it at this n)
            for label, params, default in (
                    ("full, direct solve", dict(n_basis=None, solver=direct), n <= AUTO_FULL_N),
                    ("full, PCG (stability stop)", dict(n_basis=None, solver="pcg"), False),
                    (f"reduced, n_basis={m}", dict(n_basis=m), n > AUTO_FULL_N)):
                r = run_child(_spec(args, n=n, method=method, params=params), args)
                rows.append([n, *_row(r, label + (", the default" if default else ""))])
    return (f"{ISSUE}(d) Where n_basis='auto' turns from the full expansion to the reduced "
            "one, MNIST subsets (10 labels per class, exact 10-NN graph)", NOTES, [
                markdown_table(rows, ["n:", *COLS]), "",
                f"`n_basis='auto'` (with `solver='auto'`) solves the full expansion directly up "
                f"to {AUTO_FULL_N} points (where the direct solve's memory takes at most half "
                "the available memory), "
                "and takes the reduced expansion above (m = min(n, clip(sqrt(16 000 * 4000^2 "
                "/ n), 1000, 4000))); the early-stopped PCG is not a default because its "
                "iterate moves with the BLAS threads.", ""])


# ------------------------------------------------------------------------------------------
# Command line

OPTIONS = {
    "--methods": dict(nargs="+", default=["LapRLS", "LapSVM"], choices=("LapRLS", "LapSVM")),
    "--m": dict(type=int, nargs="+", default=None,
                help="16k: the basis sizes beside 'auto' (default 1000 2000 3000 6000)"),
    "--growth-m": dict(type=int, default=1000, help="growth: the fixed m"),
    "--sizes": dict(type=int, nargs="+", default=None,
                    help="growth: the n's (default 15 625 to 10^6 by doubling)"),
    "--timeout": dict(type=float, default=1800.0,
                      help="seconds before a measurement is killed (default 1800)"),
    "--source": dict(choices=("mnist", "digits"), default="mnist",
                     help="the images (digits: scikit-learn's 8x8 digits, for tests)"),
}


def _run(args) -> int:
    docs = None if args.quick else repo_docs()

    def path_of(part):
        name = "scaling" if part == "growth" else "lapsvm"
        return str(docs / "benchmarks" / f"{name}.md") if docs else \
            os.path.join(args.out, f"{name}.md")

    selected = [p for p in PARTS if p in only_set(args, PARTS)]
    return write_parts(args, selected, {"16k": part_16k, "mnist": part_mnist,
                                        "million": part_million, "growth": part_growth,
                                        "crossover": part_crossover},
                       path_of, "reduced")


def add_bench_parser(subparsers) -> None:
    """Add ``semisup bench reduced``."""
    add_command(
        subparsers, "reduced", _run, kind="bench", options=OPTIONS, only=PARTS, code=CODE,
        help="LapRLS/LapSVM reduced expansion: error vs m, MNIST, 10^6 points",
        description="The reduced expansion of LapRLS / LapSVM (issue #31): 16k (error and "
                    "time against m at n = 16 000, the full model beside), mnist (all 70 000, "
                    "10 and 100 labels per class, HarmonicFunction beside), million (10^6 "
                    "deformed MNIST points, approximate graph), growth (time and memory "
                    "against n at fixed m), crossover (the full expansion against the reduced "
                    "one around where n_basis='auto' turns). Each fit in a fresh subprocess.",
        needs=lambda a: {p: ("mnist",) * (a.source == "mnist") for p in only_set(a, PARTS)},
        only_help="which parts (default all)",
        quick_help="small sizes (n = 2000 / 5000 / 20 000, growth to 20 000), written under "
                   "--out",
        reps_help="16k: basis draws per uniform m (default 2)",
        unused=("--n-jobs", "--plot", "--assemble-only"))
