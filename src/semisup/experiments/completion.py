"""Goldberg, Zhu, Recht, Xu & Nowak (NIPS 2010): transduction with matrix completion.

``semisup reproduce completion`` runs the paper's experiments (spec ``matrix_completion.md``
§7, §10): the synthetic grid (24 settings, meta-average), the number of tasks (t = 2 vs 10),
music emotions and yeast at omega in {40, 60, 80} % beside an all-features "oracle" SVM;
label and imputation errors of MC-1, MC-b and impute-then-SVM pipelines, the best and its
ties (paired t-test, alpha = 0.05) in bold. ``semisup bench completion`` times yeast's CV
grid, imputation against fancyimpute's ``SoftImpute``, the shrinkage methods and whole
continuation paths (numpy vs numba).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np

from .._progress import log
from ._report import best_of, header, load_average as _load, markdown_table, timed
from ._runner import add_command, blas_limit, cache_dir, only_set, out_dir
from ._runner import report_path, run_unit_groups, write_report

PARTS = ("synthetic", "tasks", "emotions", "yeast")
#: what the cached trials' code version hashes (:func:`._checkpoint.code_version`); bump the
#: protocol when the trial code below changes
CODE = (("semisup.completion", "semisup.datasets"), "v1")
OMEGAS = (0.4, 0.6, 0.8)
METHODS = ("MC-1", "MC-b", "FPC+SVM", "EM+SVM", "Mean+SVM", "Zero+SVM")
#: hand-written sections of docs/results/completion.md, kept when the report is rewritten
KEPT = ("## What we find, plainly", "## How these tables were made",
        "## Through the public estimators (2026-11-25)")
#: MatrixCompletionTransducer's settings that the paper's protocol fixes (spec §5-§7), given
#: explicitly so that a change of the estimator's defaults cannot move the paper's tables
MC_PROTOCOL = dict(mu="cv", lam_grid=(1e-3, 1e-2, 1e-1, 1.0), mu_final=1e-5, eta=0.25,
                   tol=1e-5, step_factor=3.8, max_inner=10_000, n_folds=5, svd="auto",
                   solver="fpc", graph_features=None)
#: trials per synthetic setting, per number of tasks and per real-data omega; synthetic lam
TRIALS = {"full": (10, 10, 10, "cv"), "quick": (1, 3, 2, "1")}
#: real data sets: EM components (0: no EM+SVM), the report's section title
REAL = {"emotions": (4, "Music emotions (n = 593, d = 72, t = 6)"),
        "yeast": (0, "Yeast (n = 2417, d = 103, t = 14)")}
#: measure: table title, scale, decimals
MEASURES = {"label": ("Transductive label error (%)", 100, 1),
            "impute": ("Relative feature imputation error", 1, 3)}
#: synthetic findings "<what> lowers MC-1 label error": (setting, from, to, what)
FACTORS = (("sigma2", 0.1, 0.01, "lower noise"), ("r", 4, 2, "lower rank"),
           ("n", 100, 400, "more items"), ("omega", 0.1, 0.4, "more observed entries"))


# ------------------------------------------------------------------------------ trials
def _standardizer(X, M):
    cnt = np.maximum(M.sum(axis=0), 1)
    mean = np.where(M, X, 0.0).sum(axis=0) / cnt
    std = np.sqrt((np.where(M, X - mean, 0.0) ** 2).sum(axis=0) / cnt)
    std[std == 0] = 1.0
    return mean, std


def run_trial(X, Y, MX, MY, *, lam, em_k, standardize, seed, oracle=False,
              methods=METHODS):
    """All methods on one masked problem (items as rows; ``X``, ``Y`` hold the truth).

    Returns ``{method: {"label": error, "impute": error or None, ...}}``.
    """
    from ..completion import MatrixCompletionTransducer
    from ..completion.baselines import (impute_em, impute_fpc, impute_mean, impute_zero,
                                        svm_per_task)
    from ..completion.metrics import imputation_error, label_error

    mean, std = _standardizer(X, MX) if standardize else (0.0, 1.0)
    Xs = np.where(MX, (X - mean) / std, 0.0)

    def mc(variant):   # scores +1/-1 from the estimator's {0, 1} labels, features, choices
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # items with nothing observed
            est = MatrixCompletionTransducer(
                variant=variant, lam=lam, standardize=standardize, random_state=seed,
                **MC_PROTOCOL).fit(np.where(MX, X, np.nan),
                                   np.where(MY, (Y > 0).astype(np.int8), -1))
        return (2.0 * est.transduction_ - 1.0, est.features_,
                dict(lam=est.lam_, mu=est.mu_, rank=est.rank_))

    def svm(F):        # one linear SVM per task on the imputed features
        return svm_per_task((F - mean) / std, Y, MY, random_state=seed), F, {}

    fpc = {k: MC_PROTOCOL[k] for k in ("mu_final", "eta", "n_folds")}
    runs = {"MC-1": lambda: mc("mc1"), "MC-b": lambda: mc("mcb"),
            "FPC+SVM": lambda: svm(impute_fpc(Xs, MX, random_state=seed, **fpc)[0] * std
                                   + mean),
            "EM+SVM": lambda: svm(impute_em(Xs, MX, em_k, random_state=seed) * std + mean),
            "Mean+SVM": lambda: svm(impute_mean(X, MX)),
            "Zero+SVM": lambda: svm(impute_zero(X, MX))}
    out = {}
    for name in (m for m in METHODS if m in methods and (m != "EM+SVM" or em_k)):
        (S, F, chosen), seconds, _ = timed(runs[name])
        out[name] = dict(label=label_error(Y, S, MY), impute=imputation_error(X, F, MX),
                         **chosen, seconds=seconds)
    if oracle:
        out["Oracle SVM"] = dict(label=label_error(Y, svm(X)[0], MY), impute=None)
    return out


def _synthetic_trial(setting, seed, lam):
    from ..datasets.completion_synthetic import make_completion_problem
    p = make_completion_problem(seed, **setting)
    return run_trial(p.X.T, p.Y.T, p.MX.T, p.MY.T, lam=lam, em_k=1, standardize=False,
                     seed=seed)


def _tasks_trial(t, seed, lam):
    from ..datasets.completion_synthetic import make_completion_problem
    p = make_completion_problem(seed, t=t, d=20, n=100, r=2, sigma2=0.01, omega=0.2)
    return run_trial(p.X.T, p.Y.T, p.MX.T, p.MY.T, lam=lam, em_k=0, standardize=False,
                     seed=seed, methods=("MC-1", "MC-b"))


def _real_trial(X, Y, omega, seed, em_k):
    return run_trial(X, Y, *_masks(X, Y, omega, seed), lam=1.0, em_k=em_k, standardize=True,
                     seed=seed, oracle=True)


def _load_real(name, data_home):
    """A multi-label data set as float features and +1/-1 labels."""
    from ..datasets import load_dataset
    b = load_dataset(name, data_home=data_home)
    return np.asarray(b.data, dtype=float), 2.0 * np.asarray(b.target, dtype=float) - 1.0


def _masks(X, Y, omega, seed):
    """Observed masks of ``X`` then ``Y``: a random ``omega`` share of each one's entries."""
    from ..datasets.completion_synthetic import _exact_mask
    rng = np.random.default_rng(seed)
    return [_exact_mask(rng, A.shape, omega) for A in (X, Y)]


# ------------------------------------------------------------------------------ tables
def _cell(v, scale, digits):
    """``mean (sd)`` of ``v`` times ``scale`` (sd 0 for one value)."""
    v = np.asarray(v, dtype=float)
    sd = scale * v.std(ddof=1) if v.size > 1 else 0
    return f"{scale * v.mean():.{digits}f} ({sd:.{digits}f})"


def _tables(rows, first, level, drop=()):
    """One table per measure under a ``level`` heading: the ``first`` columns, then one per
    method; ``rows``: (first-column cells, trials). ``drop``: methods bolded against but not
    shown in the imputation table."""
    from ..completion.metrics import best_and_ties
    lines = []
    for measure, (title, scale, digits) in MEASURES.items():
        table = []
        for cells, trials in rows:
            vals = {m: [tr[m][measure] for tr in trials] for m in (*METHODS, "Oracle SVM")
                    if m in trials[0] and trials[0][m].get(measure) is not None}
            bold = best_and_ties({m: v for m, v in vals.items() if m != "Oracle SVM"})
            table.append({**dict(zip(first, cells)), **{
                m: ("**{}**" if bold.get(m) else "{}").format(_cell(v, scale, digits))
                for m, v in vals.items() if measure == "label" or m not in drop}})
        lines += [f"{level} {title}", "", markdown_table(table, list(table[0])), ""]
    return lines


def _tasks_stats(tk):
    """``{(method, measure): (values at t = 2, at t = 10, two-sample t-test p)}``."""
    from scipy import stats
    out = {}
    for m in ("MC-1", "MC-b"):
        for measure in MEASURES:
            a, b = (np.array([tr[m][measure] for tr in tk[t]]) for t in (2, 10))
            out[m, measure] = a, b, stats.ttest_ind(a, b).pvalue if a.size > 1 else np.nan
    return out


def _mean(trials, m, measure):
    return float(np.mean([tr[m][measure] for tr in trials]))


def _pc(x):
    return f"{100 * x:.1f} %"


# --------------------------------------------------------------- the paper's findings
def _findings_synthetic(syn, tk):
    allt = [tr for s in syn for tr in s["trials"]]
    lab = {m: _mean(allt, m, "label") for m in METHODS}
    imp = {m: _mean(allt, m, "impute") for m in METHODS if m != "Zero+SVM"}
    order, by_imp = sorted(lab, key=lab.get), sorted(imp, key=imp.get)
    rows = [("MC-1 best for labels (meta-average)",
             f"best: {order[0]} ({_pc(lab[order[0]])}); MC-1 {_pc(lab['MC-1'])}",
             order[0] == "MC-1"),
            ("MC-b close behind MC-1 for labels",
             f"MC-b rank {order.index('MC-b') + 1} of 6, {_pc(lab['MC-b'])}",
             order.index("MC-b") <= 2),
            ("MC-b / MC-1 best for imputation (meta-average)",
             "order: " + ", ".join(f"{k} {imp[k]:.3f}" for k in by_imp),
             by_imp[0] in ("MC-1", "MC-b"))]
    for key, lo, hi, what in FACTORS:
        a, b = (float(np.mean([tr["MC-1"]["label"] for s in syn if s["setting"][key] == v
                               for tr in s["trials"]])) for v in (lo, hi))
        rows.append((f"{what} lowers MC-1 label error", f"{_pc(a)} → {_pc(b)}", b < a))
    for (m, measure), (a, b, p) in (_tasks_stats(tk).items() if tk is not None else ()):
        better = b.mean() < a.mean()
        rows.append((f"t = 10 significantly beats t = 2 for {m} ({measure})",
                     f"{a.mean():.3f} → {b.mean():.3f} (p = {p:.2g})", (better and p < 0.05)
                     or ("direction only, not significant" if better else False)))
    return rows


def _findings_real(name, res):
    from scipy import stats

    from ..completion.metrics import best_and_ties
    rows = []
    for om, trials in res.items():
        lab = {m: _mean(trials, m, "label") for m in trials[0]
               if m != "Oracle SVM" and not m.startswith("_")}
        best, tag = min(lab, key=lab.get), f"ω={100 * om:.0f}%"
        if name == "emotions":
            bold = best_and_ties({m: [tr[m]["label"] for tr in trials] for m in lab})
            rows.append((f"{tag}: MC-1 best or tied" + ("" if om >= 0.6 else " / close"),
                         f"best {best} {_pc(lab[best])}, MC-1 {_pc(lab['MC-1'])}",
                         bold.get("MC-1", False)
                         or (om < 0.6 and sorted(lab, key=lab.get).index("MC-1") <= 1)))
        else:
            svm = min(lab[m] for m in lab if m.endswith("SVM"))
            imp = {m: _mean(trials, m, "impute") for m in ("MC-1", "MC-b", "FPC+SVM")}
            rows += [(f"{tag}: MC-b lowest label error",
                      f"best {best} {_pc(lab[best])}, MC-b {_pc(lab['MC-b'])}", best == "MC-b"),
                     (f"{tag}: MC-1 beats every SVM pipeline",
                      f"MC-1 {_pc(lab['MC-1'])}, best SVM {_pc(svm)}", lab["MC-1"] < svm),
                     (f"{tag}: FPC+SVM imputes better than MC",
                      ", ".join(f"{k} {v:.3f}" for k, v in imp.items()),
                      imp["FPC+SVM"] < min(imp["MC-1"], imp["MC-b"]))]
        ora = np.array([tr["Oracle SVM"]["label"] for tr in trials])
        for m in (("MC-1",) if name == "emotions" else ("MC-b", "MC-1")):
            v = np.array([tr[m]["label"] for tr in trials])
            p = stats.ttest_rel(v, ora).pvalue if v.size > 1 else float("nan")
            if name == "emotions":
                claim = f"{tag}: MC-1 tied with the oracle SVM" + (
                    "" if om == 0.8 else " (paper: at 80 %)")
                ok = bool(p >= 0.05)
            else:
                claim = f"{tag}: {m} significantly beats the oracle SVM"
                ok = bool(p < 0.05 and v.mean() < ora.mean())
            rows.append((claim, f"{m} {_pc(v.mean())}, oracle {_pc(ora.mean())}, p = {p:.3g}",
                         ok if np.isfinite(p) else None))
    return rows


def _findings_md(rows):
    return ["| paper's finding | ours | holds |", "|---|---|---|"] + [
        f"| {claim} | {ours} | "
        f"{ok if isinstance(ok, str) else 'yes' if ok else 'n/a' if ok is None else 'no'} |"
        for claim, ours, ok in rows]


# ------------------------------------------------------------------------------ reproduce
def _plot(results, outdir):
    from ..plotting import pyplot, save
    plt = pyplot()
    for name in (n for n in REAL if n in results):
        res = results[name]
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, measure in zip(axes, MEASURES):
            for m, r in res[OMEGAS[0]][0].items():
                if not m.startswith("_") and r.get(measure) is not None:
                    ax.errorbar([100 * o for o in res], [_mean(res[o], m, measure) for o in res],
                                yerr=[np.std([tr[m][measure] for tr in res[o]]) for o in res],
                                label=m, marker="o", capsize=3)
            ax.set(xlabel="observed entries ω (%)", title=f"{name}: {measure}", ylabel=(
                "label error" if measure == "label" else "relative imputation error"))
        axes[0].legend(fontsize=8)
        save(fig, os.path.join(outdir, f"completion_{name}.png"))
    if "synthetic" in results:
        allt = [tr for s in results["synthetic"] for tr in s["trials"]]
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.bar(METHODS, [100 * _mean(allt, m, "label") for m in METHODS])
        ax.set(ylabel="meta-average label error (%)", title="synthetic grid")
        ax.tick_params(axis="x", rotation=30)
        save(fig, os.path.join(outdir, "completion_synthetic.png"))


def _write_results(results, args, elapsed, path):
    # trial counts as run (a resumed report may combine runs with different settings)
    if "synthetic" in results:
        args.trials_synthetic = len(results["synthetic"][0]["trials"])
    if "tasks" in results:
        args.trials_tasks = len(results["tasks"][2])
    lines = [
        "# Transduction with matrix completion (Goldberg et al., NIPS 2010): reproduction", "",
        header(args, f"{elapsed / 60:.0f} min") + (
            " Tables assembled (`--assemble-only`) from the trials cached in "
            f"`{cache_dir(args, 'trials')}`." if getattr(args, "assemble_only", False) else ""),
        "", "The paper's table numbers were lost in the text extraction of our copy of the "
        "paper, so only its qualitative findings stand beside ours. Cells: mean (standard "
        "deviation) over trials; **bold** = best and those not significantly different "
        "from it (two-tailed paired t-test, α = 0.05; the oracle SVM is not a candidate).", "",
        "Protocol: " + ("**quick** — " if args.quick else "") + f"synthetic "
        f"{args.trials_synthetic} trial(s) per setting ({args.trials_tasks} for the tasks "
        "experiment) with MC " + ("λ = 1 fixed, μ by CV" if args.lam_synthetic != "cv" else
                                  "(λ, μ) by 5-fold CV") +
        "; real data: mask trials per ω as in each section's heading, MC λ = 1 and μ by CV, "
        "features standardised by their observed entries; SVMs: LinearSVC(hinge) per task, "
        "C by 5-fold CV over 1e-3..1e3; EM(1) on synthetic, EM(4) on emotions, none on yeast.",
        ""]
    if "synthetic" in results:
        syn = results["synthetic"]
        rows = [((f"{s['sigma2']:g}", str(s["r"]), str(s["n"]), f"{100 * s['omega']:.0f}%"),
                 r["trials"]) for r in syn for s in [r["setting"]]]
        rows.append((("**meta-average**", "", "", ""), [tr for r in syn for tr in r["trials"]]))
        # zero imputation scores 1 by definition (the paper omits it)
        lines += ["## Synthetic grid (t = 10, d = 20)", ""] + _tables(
            rows, ("σ²", "r", "n", "ω"), "###", drop=("Zero+SVM",))
    if "tasks" in results:
        lines += ["## Number of tasks (ω = 20 %, n = 100, r = 2, σ² = 0.01, d = 20)", "",
                  "| method | measure | t = 2 | t = 10 | two-sample t-test p |",
                  "|---|---|---|---|---|"]
        for (m, measure), (a, b, p) in _tasks_stats(results["tasks"]).items():
            _, scale, digits = MEASURES[measure]
            lines.append(f"| {m} | {'label error (%)' if measure == 'label' else 'imputation'}"
                         f" | {_cell(a, scale, digits)} | {_cell(b, scale, digits)} | {p:.3g} |")
        lines.append("")
    if "synthetic" in results:
        lines += ["### Paper's synthetic findings vs ours", ""] + _findings_md(
            _findings_synthetic(results["synthetic"], results.get("tasks"))) + [""]
    for name, (_, title) in REAL.items():
        if name in results:
            res = results[name]
            lines += [f"## {title}: {len(res[OMEGAS[0]])} mask trial(s) per ω", ""]
            lines += _tables([((f"{100 * om:.0f}%",), tr) for om, tr in res.items()], ("ω",),
                             "####")
            lines += [f"### Paper's {name} findings vs ours", ""] + _findings_md(
                _findings_real(name, res)) + [""]
    return write_report(path, "\n".join(lines) + "\n", keep=KEPT)


def _reproduce(args) -> int:
    *trials, args.lam_synthetic = TRIALS["quick" if args.quick else "full"]
    args.trials_synthetic, args.trials_tasks, args.trials_real = (args.reps or n for n in trials)
    lam = "cv" if args.lam_synthetic == "cv" else float(args.lam_synthetic)
    only = only_set(args, PARTS)
    out_dir(args)
    t0 = time.perf_counter()
    results = {}
    if "synthetic" in only:
        from ..datasets.completion_synthetic import synthetic_grid
        grid, n = list(synthetic_grid()), args.trials_synthetic
        got = run_unit_groups(args, f"synthetic-{n}x-lam{lam}", _synthetic_trial,
                              [[(s, 1000 * i + k, lam) for k in range(n)]
                               for i, s in enumerate(grid)])
        results["synthetic"] = [dict(setting=s, trials=t) for s, t in zip(grid, got) if t]
    if "tasks" in only:   # the same seeds for t = 2 and 10: X0 and W's first rows are shared
        n = args.trials_tasks
        results["tasks"] = dict(zip((2, 10), run_unit_groups(
            args, f"tasks-{n}x-lam{lam}", _tasks_trial,
            [[(t, 50_000 + k, lam) for k in range(n)] for t in (2, 10)])))
    for name, (em_k, _) in REAL.items():
        if name in only:   # --assemble-only computes nothing: no data needed
            X, Y = (None, None) if args.assemble_only else _load_real(name, args.data_home)
            n = args.trials_real
            results[name] = dict(zip(OMEGAS, run_unit_groups(
                args, f"{name}-{n}x", _real_trial,
                [[(X, Y, om, 7000 + 100 * i + k, em_k) for k in range(n)]
                 for i, om in enumerate(OMEGAS)])))
    results = {k: v for k, v in results.items()
               if v and (isinstance(v, list) or all(v.values()))}
    if not results:
        raise SystemExit(f"nothing computed or cached for {sorted(only)} in "
                         f"{cache_dir(args, 'trials')}")
    raw = os.path.join(args.out, "completion_results.json")
    with open(raw, "w") as fh:
        json.dump(results, fh, default=float)
    path = _write_results(results, args, time.perf_counter() - t0, report_path(args))
    if args.plot:
        _plot(results, args.out)
    print(f"wrote {path} and {raw}")
    return 0


def add_reproduce_parser(subparsers):
    add_command(
        subparsers, "completion", _reproduce,
        help="Goldberg et al. 2010: MC-1/MC-b vs impute+SVM baselines",
        only=PARTS, only_help="experiments to run (default all)",
        needs={"synthetic": (), "tasks": (), "emotions": ("emotions",), "yeast": ("yeast",)},
        code=CODE, cache_sub="trials", n_jobs_help="trials run in parallel processes",
        reps_help="trials per synthetic setting, number of tasks and real-data omega "
                  "(default 10; --quick: 1, 3 and 2)",
        quick_help="fewer trials (see --reps) and lam = 1 on the synthetic grid")


# ------------------------------------------------------------------------------ demo
def demo_rows(verbose: bool = False) -> list[dict]:
    """MC-1 and MC-b (lam = 1, mu by 5-fold CV along a path ending at 1e-3, shorter than the
    paper's 1e-5 to keep the demo to seconds) on a small generated problem, vs mean
    imputation + LinearSVC."""
    from ..completion import MatrixCompletionTransducer
    from ..completion.baselines import impute_mean, svm_per_task
    from ..completion.metrics import label_error
    from ..datasets.completion_synthetic import make_completion_problem

    p = make_completion_problem(0, t=6, d=15, n=120, r=2, sigma2=0.01, omega=0.4)
    rows = []
    for name in ("MC-1", "MC-b"):
        est, seconds, _ = timed(MatrixCompletionTransducer(
            variant=name.replace("-", "").lower(), lam=1.0, mu="cv", mu_final=1e-3,
            random_state=0).fit, *p.as_estimator_input())
        rows.append((f"MatrixCompletionTransducer ({name})",
                     label_error(p.Y, est.decision_scores_.T, p.MY), seconds))
        log(f"[completion] {name} label error {rows[-1][1]:.3f}", verbose)
    S, seconds, _ = timed(svm_per_task, impute_mean(p.X.T, p.MX.T), p.Y.T, p.MY.T,
                          random_state=0)
    rows.append(("Mean imputation + LinearSVC", label_error(p.Y.T, S, p.MY.T), seconds))
    return [dict(method=m, data="synthetic low-rank (n=120, d=15, t=6, 40% observed)",
                 metric="label error (unobserved)", score=s, seconds=t) for m, s, t in rows]


# ------------------------------------------------------------------------------ bench
#: each imputation method is timed this many times; the best time is reported
IMPUTE_REPEAT = 3
#: SoftImpute at its defaults, run by the Python that has fancyimpute (argv: in.npz out.npy)
SOFTIMPUTE = f"""import json, sys, time, numpy as np
from fancyimpute import SoftImpute
Xin, times = np.load(sys.argv[1])["Xin"], []
for _ in range({IMPUTE_REPEAT}):
    t0 = time.perf_counter()
    Xh = SoftImpute(verbose=False).fit_transform(Xin)
    times.append(time.perf_counter() - t0)
np.save(sys.argv[2], Xh)
print(json.dumps({{"seconds": min(times)}}))
"""


def _bench_yeast(args):
    from ..completion.fpc import fpc_path
    from ..completion.model_selection import cv_label_errors, mu_grid
    X, Y = _load_real("yeast", args.data_home)
    MX, MY = _masks(X, Y, 0.4, 0)
    mean, std = _standardizer(X, MX)
    data, lams, rows = (((X - mean) / std).T, MX.T, Y.T, MY.T), MC_PROTOCOL["lam_grid"], []
    for variant in args.variants:
        grid = mu_grid(*data, variant)
        (errs, _), t_cv, _ = timed(cv_label_errors, *data, variant=variant, lams=lams,
                                   grid=grid, rng=np.random.default_rng(1), n_jobs=args.n_jobs)
        i, j = np.unravel_index(np.nanargmin(errs), errs.shape)
        path, t_fit, _ = timed(fpc_path, *data, variant=variant, lam=lams[i], mus=grid[:j + 1])
        rows.append([variant, args.n_jobs or 1, f"{t_cv:.1f}", f"{t_fit:.1f}",
                     f"**{t_cv + t_fit:.1f}**", grid.size, int(path.n_iter.sum()),
                     f"({lams[i]:g}, {grid[j]:.3g})", _load()])
        log(f"[bench] yeast {variant}: CV {t_cv:.1f} s + refit {t_fit:.1f} s", args.verbose)
    return ("Yeast, ω = 40 %: CV grid (4 λ × 5 folds, full paths) + refit",
            ("variant", "n_jobs", "CV seconds", "refit seconds", "total", "stages",
             "refit iterations", "selected (λ, μ)", "load average"), rows,
            "Target: ≤ 60 s per variant. 20 full continuation paths (μ from 0.25 σ1 down to "
            "1e-5) plus the refit.")


def _softimpute(X, M, python):
    """A row for SoftImpute on ``X`` with the entries outside ``M`` missing."""
    import tempfile

    from ..completion.metrics import imputation_error
    if not (python and os.path.exists(python)):
        return ["fancyimpute SoftImpute", "not importable (pass --fancyimpute-python PATH to "
                "a Python that has it)", "", ""]
    with tempfile.TemporaryDirectory() as tmp:
        inp, outp = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npy")
        np.savez(inp, Xin=np.where(M, X, np.nan))
        res = subprocess.run([python, "-c", SOFTIMPUTE, inp, outp], capture_output=True,
                             text=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1",
                                                 OMP_NUM_THREADS="1"))
        if res.returncode:
            return ["fancyimpute SoftImpute",
                    f"failed: {res.stderr.strip().splitlines()[-1]}", "", ""]
        t = json.loads(res.stdout.strip().splitlines()[-1])["seconds"]
        return [f"fancyimpute SoftImpute (defaults; subprocess {python})", f"{t:.2f}",
                f"{imputation_error(X, np.load(outp), M):.2e}", _load()]


def _bench_impute(args):
    import importlib.util

    from ..completion.baselines import impute_fpc
    from ..completion.fpc import fpc_path
    from ..completion.metrics import imputation_error
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 5)) @ rng.standard_normal((5, 300))
    M = rng.random(X.shape) >= 0.7
    rows = []
    for svd in ("auto", "gram"):   # ours: continuation down to the paper's final mu, no CV
        path, t = best_of(fpc_path, X.T, M.T, mu_final=1e-5, svd=svd, random_state=0,
                          repeat=IMPUTE_REPEAT)
        rows.append([f"semisup FPC, continuation to μ = 1e-05, svd={svd} ({path.n_iter.sum()}"
                     f" iterations; {path.svd_methods})", f"{t:.2f}",
                     f"{imputation_error(X, path.Z.T, M):.2e}", _load()])
        log(f"[bench] ours svd={svd}: {t:.2f} s", args.verbose)
    if args.with_cv:
        (F, info), t, _ = timed(impute_fpc, X, M, random_state=0)
        rows.append([f"semisup FPC+CV (5 folds, μ = {info['mu']:.3g} chosen)", f"{t:.2f}",
                     f"{imputation_error(X, F, M):.2e}", _load()])
    rows.append(_softimpute(X, M, sys.executable if importlib.util.find_spec("fancyimpute")
                            else args.fancyimpute_python))
    return ("Imputation: 2000 × 300 rank-5 matrix, 70 % missing",
            ("method", "seconds", "relative imputation error", "load average"), rows,
            f"Seconds: best of {IMPUTE_REPEAT} runs of each method, one BLAS thread (with the "
            "`[fast]` extra our sparse products run on all cores). SoftImpute at its defaults "
            "(shrinkage σ_max/50, threshold 1e-3, ≤ 100 iterations, a full SVD each). Ours: "
            "FPC with continuation (η = 0.25) from 0.25 σ1 to μ = 1e-5, step |Ω_X|, stage "
            "tolerance 1e-5; svd=auto keeps the iterate low rank + sparse, svd=gram is the "
            "dense route. Target: ≥ 10× faster than SoftImpute at equal or lower error.")


def _bench_shrink(args):
    from ..linalg.lowrank import shrink
    rng, rows = np.random.default_rng(0), []
    for (m, n, r) in ((118, 2417, 5), (118, 2417, 60), (300, 2000, 5), (300, 2000, 100),
                      (31, 400, 3)):
        A = rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) * 10 + \
            0.01 * rng.standard_normal((m, n))
        exact = shrink(A, 1.0, method="exact")
        warm = dict(rank_estimate=exact.rank, V0=exact.Vt)
        ms = [np.mean([timed(shrink, A, 1.0, method=k, random_state=0, **warm)[1]
                       for _ in range(5)]) * 1e3 for k in ("exact", "gram", "randomized")]
        rows.append([f"{m} × {n}", exact.rank, *(f"{t:.1f} ms" for t in ms),
                     shrink(A, 1.0, **warm).method])
    return ("Singular value shrinkage: seconds per call",
            ("shape", "rank above τ", "exact (gesdd)", "gram",
             "randomized (warm, k = rank + 10)", "auto picks"), rows,
            f"Load average at the end: {_load()}.")


def _bench_path(args):
    from ..completion.fpc import fpc_path
    from ..datasets.completion_synthetic import make_completion_problem
    rows = []
    for variant in ("mc1", "mcb"):
        for n in (100, 400):
            p = make_completion_problem(0, t=10, d=20, n=n, r=2, sigma2=0.01, omega=0.2)
            with blas_limit(1):
                (res, t_np), (_, t_nb) = (best_of(fpc_path, p.X, p.MX, p.Y, p.MY, variant=variant,
                                                  lam=1.0, backend=be, warn=False, repeat=3)
                                          for be in ("numpy", "numba"))
            rows.append([variant, f"{31 if variant == 'mc1' else 30} × {n}",
                         int(res.n_iter.sum()), f"{t_np:.3f}", f"{t_nb:.3f}",
                         f"{t_np / t_nb:.1f}x"])
    return ("Whole continuation paths on the synthetic grid: numpy vs compiled stage",
            ("variant", "t × n (stacked matrix)", "iterations", "numpy (s)", "numba (s)",
             "speed-up"), rows,
            "One FPC path (lam = 1, the paper's mu grid to 1e-5) per cell, best of 3, one BLAS "
            "thread; `backend=\"numba\"` runs each stage in one compiled loop, `\"numpy\"` is "
            "the reference loop; both give the same iterates (tests/completion/"
            f"test_fpc_numba.py). Load average at the end: {_load()}.")


#: the benchmark's parts in the record's order, under the headings "## (a)", "## (b)", ...
BENCH = {"yeast": _bench_yeast, "impute": _bench_impute, "shrink": _bench_shrink,
         "path": _bench_path}
HEADS = {part: f"## ({c})" for part, c in zip(BENCH, "abcd")}


def _bench(args) -> int:
    out_dir(args)
    path = report_path(args)
    old = open(path).read() if os.path.exists(path) else ""   # other parts' sections kept
    sections = {part: sec for sec in re.split(r"(?m)^(?=## \([a-d]\))", old)[1:]
                for part, head in HEADS.items() if sec.startswith(head)}
    for part in (p for p in BENCH if p in only_set(args, BENCH)):
        title, cols, rows, note = BENCH[part](args)
        sections[part] = "\n".join([
            f"{HEADS[part]} {title}", "", header(args, f"BLAS threads: {args.blas_threads}"),
            "", markdown_table([dict(zip(cols, r)) for r in rows], cols), "", note, ""]) + "\n"
    text = "\n".join([
        "# Benchmark: transduction with matrix completion", "",
        "Re-run everything with `semisup bench completion` (or some parts with `--only`; the "
        "others are kept from the previous record). Each section says when and where it "
        "ran; the load average column shows how busy the machine was.", "",
        *(sections[p] for p in BENCH if p in sections)])
    write_report(path, text)
    print(text)
    return 0


def add_bench_parser(subparsers):
    add_command(
        subparsers, "completion", _bench, kind="bench",
        help="FPC speed: yeast CV grid, SoftImpute, SVD", only=tuple(BENCH),
        n_jobs_help="parallel CV runs of the yeast part",
        needs={"yeast": ("yeast",), "impute": (), "shrink": (), "path": ()},
        quick_help="the same runs, the record written under --out",
        unused=("--cache", "--reps", "--plot", "--resume", "--assemble-only"),
        only_help="parts to run (default all; the others are kept)",
        options={"--variants": dict(type=lambda s: s.split(","), default=["mc1", "mcb"]),
                 "--with-cv": dict(action="store_true",
                                   help="(b): also time FPC with 5-fold CV of mu"),
                 "--fancyimpute-python": dict(default=os.environ.get(
                     "SEMISUP_FANCYIMPUTE_PYTHON", "/work/venvs/completion/bin/python"),
                     help="Python with fancyimpute, used when it is not importable here")})
