"""One machinery for every ``semisup reproduce`` and ``semisup bench`` command.

* **Options** (:func:`add_common_options`): one spelling for all commands, ``--out``,
  ``--cache``, ``--reps``, ``--n-jobs``, ``--quick``, ``--plot``, ``--resume`` /
  ``--no-resume``, ``--assemble-only``, ``--only``, ``-v/--verbose`` (progress, on by
  default) / ``-q/--quiet``, ``--blas-threads``
  and ``--data-home``. A module adds its own options next to them, under other names.
* **Where things go** (:func:`out_dir`, :func:`cache_dir`, :func:`report_path`): figures,
  raw results and the cache under ``--out`` (default ``out/<paper>``, relative to the
  current directory). The report goes to the repository's ``docs/results/<paper>.md``
  (``docs/benchmarks/<name>.md`` for a benchmark), found from this package's location, only
  for a run of the whole protocol (no ``--quick``, ``--reps`` or ``--only``; a benchmark:
  no ``--quick``) from a source checkout; every other run writes it under ``--out``, so a
  quick run never touches docs/.
* **Units of work** (:func:`run_units`): each unit is cached as one JSON file
  (:class:`._checkpoint.TrialCache`) as soon as it finishes, run in parallel by joblib with
  one BLAS thread per worker when ``--n-jobs`` > 1, and timed (CPU and wall seconds, stored
  with a dict result under ``"_timing"``). ``--resume`` (default) reuses cached units,
  ``--no-resume`` recomputes them, ``--assemble-only`` computes nothing (units not in the
  cache come back as ``None``).
* **BLAS** (:func:`blas_limit`): the whole command runs under ``--blas-threads`` threads
  (:func:`run_command`).
* **Report** (:func:`write_report`): generated text with the hand-written sections of the
  previous report kept (:func:`._report.kept_section`).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .._progress import log
from ._checkpoint import TrialCache, code_version, run_jobs
from ._report import kept_section, timed, write_text

__all__ = ["Unit", "add_common_options", "add_options", "out_dir", "cache_dir", "report_path",
           "is_full_run", "blas_limit", "run_command", "run_units", "run_unit_groups",
           "write_report", "repo_docs", "only_set", "refuse_empty_assembly", "timing_summary",
           "add_command"]


# ----------------------------------------------------------------------------- options
def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {v}")
    return v


def _n_jobs(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v == 0:
        raise argparse.ArgumentTypeError("--n-jobs must be >= 1 or negative (-1: all cores)")
    return v


def _comma_list(choices):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError("--only takes a comma list, e.g. --only 1,2")
        if choices is not None:
            bad = [t for t in items if t not in choices]
            if bad:
                raise argparse.ArgumentTypeError(
                    f"--only: unknown {', '.join(bad)}; choose from {', '.join(choices)}")
        return items
    return parse


def add_common_options(p, paper: str, kind: str = "reproduce", *, only=None,
                       only_help="which tables/parts to run (comma list; default all)",
                       reps_help="repetitions (splits, draws) per table (default: the "
                                 "protocol's; --quick: fewer)",
                       quick_help="a small, fast variant (written under --out, never to "
                                  "docs/)",
                       n_jobs_default=1, blas_default=1, cache_sub="cache",
                       n_jobs_help=None, unused=(), needs=None, code=None) -> None:
    """Add the options shared by every ``semisup reproduce``/``bench`` command to ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    paper : str
        Its name (``lass``, ``lapsvm``, ...): the default ``--out`` is ``out/<paper>`` and
        the full run's report ``docs/results/<paper>.md`` (``docs/benchmarks`` for bench).
    kind : {"reproduce", "bench"}
    only : sequence of str, optional
        The values ``--only`` accepts (None: any).
    cache_sub : str, default="cache"
        The cache's folder under ``--out`` when ``--cache`` is not given.
    n_jobs_help : str, optional
        What ``--n-jobs`` runs in parallel for this command.
    unused : sequence of str
        Shared options this command accepts but does not use (e.g. ``"--resume"`` for a
        benchmark that caches nothing); their help says so.
    needs : dict or callable, optional
        The data sets each part reads: ``{part: (registry names)}`` over every part
        (``--only`` selects among them), or ``needs(args)`` giving that dict for the parts
        selected. :func:`run_command` checks them before running anything.
    code : (tuple of str, str), optional
        The code version of the cached units (:func:`unit_cache`): the library modules the
        protocol's methods start from (``("semisup.lass", ...)``) and the protocol's own
        version, bumped by hand when the experiment code that computes a unit changes.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> add_common_options(p, "demo", only=("1", "2"))
    >>> a = p.parse_args(["--only", "2", "--no-resume"])
    >>> a.only, a.resume, a.out
    (['2'], False, 'out/demo')
    """
    if kind not in ("reproduce", "bench"):
        raise ValueError(f"kind must be 'reproduce' or 'bench', got {kind!r}")
    g = p.add_argument_group("common options (every reproduce/bench command)")
    unused = set(unused)

    def say(option, text):
        return "accepted by every command; not used by this one" if option in unused \
            else text

    g.add_argument("--out", default=os.path.join("out", paper),
                   help=f"folder for figures, raw results, the cache and any report that is "
                        f"not the full run's (default out/{paper}, relative to the current "
                        "directory)")
    g.add_argument("--cache", default=None,
                   help=say("--cache", f"folder of finished units, one JSON file each "
                                       f"(default <--out>/{cache_sub})"))
    g.add_argument("--reps", type=_positive_int, default=None, help=say("--reps", reps_help))
    g.add_argument("--n-jobs", type=_n_jobs, default=n_jobs_default,
                   help=say("--n-jobs", (n_jobs_help or "units run in parallel processes, "
                                         "one BLAS thread each")
                            + f" (default {n_jobs_default}; -1: all cores)"))
    g.add_argument("--quick", action="store_true", help=quick_help)
    g.add_argument("--plot", action="store_true",
                   help=say("--plot", "save PNG figures under --out"))
    g.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                   help=say("--resume", "reuse the units found in --cache (default); "
                                        "--no-resume recomputes them"))
    g.add_argument("--assemble-only", action="store_true",
                   help=say("--assemble-only", "compute nothing: rebuild the report from the "
                                               "units in --cache"))
    g.add_argument("--only", type=_comma_list(None if only is None else tuple(only)),
                   default=None,
                   help=say("--only", only_help
                            + (f"; of {','.join(only)}" if only is not None else "")))
    g.add_argument("--blas-threads", type=_positive_int, default=blas_default,
                   help=f"BLAS/LAPACK threads of the whole run (default {blas_default})")
    g.add_argument("--data-home", default=None,
                   help="data directory (default: $SEMISUP_DATA or ../shared/datasets)")
    g.add_argument("-v", "--verbose", action="store_true", default=True,
                   help="progress on stderr as it runs (the default)")
    g.add_argument("-q", "--quiet", dest="verbose", action="store_false",
                   help="no progress lines")
    p.set_defaults(paper=paper, kind=kind, cache_sub=cache_sub, needs=needs, code=code)


def add_options(p, options: dict) -> None:
    """A command's own options declared as data: ``p.add_argument(flag, **keywords)`` for
    each ``flag: keywords`` of ``options``."""
    for flag, kw in options.items():
        p.add_argument(flag, **kw)


def add_command(subparsers, name, body, help, *, description=None, options=None,
                kind="reproduce", defaults=None, **common):
    """Add the command ``name`` (``semisup <kind> <name>``) running ``body(args)`` through
    :func:`run_command`: its parser, the common options (``common``: the keywords of
    :func:`add_common_options`), its own ``options`` (:func:`add_options`) and ``defaults``.
    """
    raw = description and "\n" in description     # a module docstring keeps its lines
    p = subparsers.add_parser(name, help=help, description=description, formatter_class=(
        argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter))
    add_common_options(p, name, kind, **common)
    add_options(p, options or {})
    p.set_defaults(func=_command(body), **(defaults or {}))
    return p


@functools.lru_cache(maxsize=None)
def _command(body):
    """:func:`run_command` of ``body``, named as ``body`` (its module), one object per body
    (two parsers built agree)."""
    return functools.update_wrapper(functools.partial(run_command, body=body), body)


def only_set(args, default):
    """The tables/parts selected by ``--only`` (``default``: all of them), as a list."""
    return list(args.only) if getattr(args, "only", None) else list(default)


# ----------------------------------------------------------------------------- paths
def repo_docs() -> Path | None:
    """The repository's ``docs/`` folder when this package runs from a source checkout
    (``<repo>/src/semisup``), else None. Found from the package's location, never from the
    current directory."""
    root = Path(__file__).resolve().parents[3]
    if (root / "pyproject.toml").is_file() and (root / "docs").is_dir():
        return root / "docs"
    return None


def out_dir(args) -> str:
    """``--out``, created."""
    os.makedirs(args.out, exist_ok=True)
    return args.out


def cache_dir(args, default_sub: str | None = None) -> str:
    """``--cache``, by default ``<--out>/<sub>`` (the command's ``cache_sub``)."""
    sub = default_sub or getattr(args, "cache_sub", None) or "cache"
    return getattr(args, "cache", None) or os.path.join(args.out, sub)


def unit_cache(args, default_sub: str | None = None) -> TrialCache:
    """The command's cache of units (:func:`cache_dir`), versioned by the code that computes
    them (the command's ``code``: :func:`._checkpoint.code_version`), so that a unit
    computed by other code is recomputed rather than trusted."""
    code = getattr(args, "code", None)
    return TrialCache(cache_dir(args, default_sub),
                      version=code_version(tuple(code[0]), code[1]) if code else None)


def is_full_run(args) -> bool:
    """True for the whole protocol: no ``--quick``, ``--reps`` or ``--only``.

    A benchmark is "full" unless ``--quick``: its parts (``--only``) are sections of one
    record, which the command merges or rewrites as it always did.
    """
    if getattr(args, "quick", False):
        return False
    if getattr(args, "kind", "reproduce") == "bench":
        return True
    return not (getattr(args, "reps", None) or getattr(args, "only", None))


def report_path(args, name: str | None = None) -> str:
    """Where the command's Markdown report goes.

    The repository's ``docs/results/<name>.md`` (``docs/benchmarks/<name>.md`` for
    ``bench``) for a full run (:func:`is_full_run`) from a source checkout;
    ``<--out>/<name>.md`` otherwise, so ``--quick``, ``--reps`` and ``--only`` reproductions
    and ``--quick`` benchmarks never overwrite the published reports.
    """
    name = name or args.paper
    docs = repo_docs()
    if is_full_run(args) and docs is not None:
        sub = "results" if getattr(args, "kind", "reproduce") == "reproduce" else "benchmarks"
        return str(docs / sub / f"{name}.md")
    return os.path.join(args.out, f"{name}.md")


def refuse_empty_assembly(args, n_found: int, where: str) -> None:
    """Stop an ``--assemble-only`` run that found nothing in the cache.

    Its report would hold empty tables; for a full run that report is the published one in
    docs/, so nothing is written: SystemExit naming the folder searched.
    """
    if getattr(args, "assemble_only", False) and n_found == 0:
        raise SystemExit(f"--assemble-only: nothing cached in {where}; no report written "
                         "(run without --assemble-only to compute, or give --cache)")


# ----------------------------------------------------------------------------- BLAS
def blas_limit(n_threads):
    """A context capping BLAS/LAPACK threads (threadpoolctl); ``None``: no cap."""
    import contextlib
    if n_threads is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits
    return threadpool_limits(int(n_threads))


def missing_data(names, data_home=None) -> list[str]:
    """The data sets among ``names`` (registry names) whose files are not found; parses
    nothing."""
    from ..datasets import list_datasets
    found = {r["name"]: r["found"] for r in list_datasets(data_home)}
    return [n for n in dict.fromkeys(names) if not found.get(n, False)]


def missing_data_line(args, missing) -> str:
    """One line: which sets are missing, where they were looked for, the fetch command."""
    from ..datasets import REGISTRY
    from ..datasets._home import searched_places
    folders = dict.fromkeys(REGISTRY[n].folder if n in REGISTRY else n for n in missing)
    return (f"semisup {args.kind} {args.paper}: data set{'s' * (len(missing) > 1)} "
            f"{', '.join(missing)} not found (looked in {searched_places(args.data_home)}); "
            f"get {'them' if len(missing) > 1 else 'it'} with "
            f"`semisup datasets --fetch {' '.join(folders)}`")


def _needed(args) -> dict:
    """``{part: data sets}`` of the selected parts, from the command's ``needs`` (a dict over
    every part, filtered by ``--only``, or a callable of ``args``)."""
    needs = getattr(args, "needs", None)
    if needs is None:
        return {}
    if callable(needs):
        return dict(needs(args))
    return {p: needs[p] for p in only_set(args, needs)}


def run_command(args, body):
    """``body(args)`` under the ``--blas-threads`` limit (the whole command).

    The data sets that the selected parts need (the command's ``needs``) are looked up
    first. When some are missing, one line on stderr says which, where they were looked
    for and the command that fetches them; the parts that do not need them run
    (``--only`` narrowed to them, so the report goes under ``--out``) and the exit status
    is 1; when no part can run, nothing runs. A data set missing that no part declared ends
    the same way (one line, status 1) instead of a traceback.
    """
    needed = {} if getattr(args, "assemble_only", False) else _needed(args)
    missing = missing_data([n for sets in needed.values() for n in sets],
                           getattr(args, "data_home", None))
    if missing:
        kept = [p for p, sets in needed.items() if not set(sets) & set(missing)]
        skipped = [p for p in needed if p not in kept]
        line = missing_data_line(args, missing)
        if not kept:
            print(line, file=sys.stderr, flush=True)
            return 1
        print(f"{line}; skipping {', '.join(skipped)}, running {', '.join(kept)}",
              file=sys.stderr, flush=True)
        args.only = kept
    try:
        with blas_limit(getattr(args, "blas_threads", None)):
            status = body(args)
    except FileNotFoundError as exc:
        text = str(exc)
        if not (text.startswith("data set ") or text.startswith("no data directory")):
            raise
        print(f"semisup {args.kind} {args.paper}: {text}", file=sys.stderr, flush=True)
        return 1
    return 1 if missing else status


# ----------------------------------------------------------------------------- units
@dataclass
class Unit:
    """One unit of work: ``fn(*args, **kwargs)`` cached under ``key``.

    The key must name everything that changes the result (data set, protocol, seed,
    repetition), since a key found in the cache is trusted.
    """

    key: str
    fn: object
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


def _timed_call(fn, args, kwargs, one_thread):
    """``fn(*args, **kwargs)`` with its CPU and wall seconds (under 1 BLAS thread if asked);
    a dict result carries them under ``"_timing"``."""
    with blas_limit(1 if one_thread else None):
        out, wall, cpu = timed(fn, *args, **kwargs)
    timing = {"cpu_seconds": cpu, "wall_seconds": wall}
    if isinstance(out, dict):
        out = {**out, "_timing": timing}
    return out


def run_units(units, args=None, cache: TrialCache | None = None, desc: str = "units", *,
              n_jobs=None, resume=None, assemble_only=None, progress=None):
    """Results of ``units`` (in order), computed or loaded from the cache.

    The options come from the command's ``args`` (``--n-jobs``, ``--resume``,
    ``--assemble-only``, ``--verbose``) unless given here. With ``assemble_only`` nothing is
    computed and a unit absent from the cache gives ``None``; with ``resume`` False every
    unit is recomputed (and re-cached). Units run in ``n_jobs`` joblib processes, each under
    one BLAS thread when ``n_jobs > 1``. Each dict result gets its CPU and wall seconds
    under ``"_timing"``. Progress (one line per finished unit on stderr) is on unless
    ``--quiet`` (``args.verbose`` False).

    Examples
    --------
    >>> out = run_units([Unit("a", dict, kwargs=dict(x=1))], None, TrialCache(None),
    ...                 progress=False)
    >>> out[0]["x"], sorted(out[0]["_timing"])
    (1, ['cpu_seconds', 'wall_seconds'])
    """
    def opt(value, name, default):
        return value if value is not None else getattr(args, name, default)

    units = list(units)
    if cache is None:
        cache = unit_cache(args)
    keys = [u.key for u in units]
    if opt(assemble_only, "assemble_only", False):
        return [cache.get(k) for k in keys]
    if not opt(resume, "resume", True):
        todo = [u for u in units if u.key in cache]
        for u in todo:  # recompute: forget the stored result first
            os.remove(cache._path(u.key))
    n_jobs = opt(n_jobs, "n_jobs", 1)
    parallel = n_jobs not in (None, 1)
    jobs = [(_timed_call, (u.fn, u.args, u.kwargs, parallel), {}) for u in units]
    progress = opt(progress, "verbose", True)
    return run_jobs(jobs, keys, cache, n_jobs=n_jobs if parallel else None,
                    verbose=progress, desc=desc)


def run_unit_groups(args, desc, fn, groups):
    """``fn(*a)`` for each argument tuple ``a`` of each group (a table's cells, say), as
    units of the command's cache keyed ``<desc>-<index>`` (:func:`run_units`); per group,
    its finished results (``--assemble-only`` leaves out those not cached)."""
    flat = [a for g in groups for a in g]
    res = iter(run_units([Unit(f"{desc}-{k}", fn, a) for k, a in enumerate(flat)], args,
                         unit_cache(args), desc=f"{args.paper} {desc}"))
    return [[r for r in [next(res) for _ in g] if r is not None] for g in groups]


def timing_summary(results) -> dict:
    """Total CPU and wall seconds and unit count over results carrying ``"_timing"``."""
    ts = [r["_timing"] for r in results if isinstance(r, dict) and "_timing" in r]
    return dict(units=len(ts), cpu_seconds=sum(t["cpu_seconds"] for t in ts),
                wall_seconds=sum(t["wall_seconds"] for t in ts))


# ----------------------------------------------------------------------------- report
def write_report(path: str, text: str, keep=(), after: str | None = None) -> str:
    """Write the report ``text`` to ``path``, keeping hand-written sections.

    Each heading in ``keep`` (e.g. ``"## What we find, plainly"``) is looked up in the file
    already at ``path`` (:func:`._report.kept_section`); the sections found are inserted
    after the line ``after`` of ``text`` (default: after the first paragraph following the
    title), in ``keep`` order. Returns the path.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "r.md")
    >>> _ = write_text(p, "# R\\n\\nold\\n\\n## Findings\\n\\nkept prose\\n\\n## T\\n\\nold table\\n")
    >>> _ = write_report(p, "# R\\n\\nnew\\n\\n## T\\n\\nnew table\\n", keep=["## Findings"])
    >>> "kept prose" in open(p).read() and "new table" in open(p).read()
    True
    """
    kept = [line for h in keep for line in kept_section(path, h)]
    lines = text.splitlines()
    if kept:
        if after is not None and after in lines:
            at = lines.index(after) + 1
        else:  # after the title's first paragraph
            at = next((i for i in range(1, len(lines)) if lines[i].startswith("## ")),
                      len(lines))
        if at and lines[at - 1].strip():
            kept = [""] + kept
        lines = lines[:at] + kept + lines[at:]
    return write_text(path, "\n".join(lines).rstrip("\n") + "\n")


def say_written(path: str, verbose=True) -> None:
    log(f"wrote {path}", verbose)
