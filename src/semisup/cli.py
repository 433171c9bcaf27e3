"""The ``semisup`` command: ``demo``, ``methods``, ``datasets``, ``reproduce <paper>``,
``bench <method>``.

Experiment modules are imported only when their command runs: ``semisup --help`` and
``semisup --version`` import none of them (they pull in every estimator and take seconds).
"""

from __future__ import annotations

import argparse
import sys
import time

from . import __version__
from ._registry import REGISTRY
from .experiments import BENCH, PAPERS, REPRODUCE, load_paper, load_papers, owner


def _format_table(rows: list[dict], columns: list[str]) -> str:
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
              for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out)


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.4g}"
    return v


def cmd_demo(args) -> int:
    rows = []
    t0 = time.perf_counter()
    for name, mod in load_papers().items():
        if not hasattr(mod, "demo_rows"):
            continue
        print(f"[demo] {name} ...", file=sys.stderr, flush=True)
        for r in mod.demo_rows(verbose=args.verbose):
            rows.append({k: _fmt(v) for k, v in r.items()})
    print(_format_table(rows, ["method", "data", "metric", "score", "seconds"]))
    print(f"\nTotal {time.perf_counter() - t0:.1f} s.")
    return 0


def cmd_methods(args) -> int:
    """The public estimators (the method registry): what each learns from, the targets it
    takes, its user-guide page and its commands."""
    rows = [{"estimator": m.name, "kind": m.kind, "setting": m.setting,
             "targets": ", ".join(m.targets), "guide": f"user_guide/{m.guide}",
             "reproduce": ", ".join(m.reproduce) or "-", "bench": ", ".join(m.bench) or "-"}
            for m in REGISTRY]
    print(_format_table(rows, list(rows[0])))
    return 0


def _fetch_datasets(args) -> int:
    from .datasets import FetchError, fetch
    try:
        for name in args.fetch:
            for folder in fetch(name, data_home=args.data_home, base_url=args.mirror,
                                force=args.force, verbose=not args.quiet):
                print(f"{name}: ready in {folder}")
    except (FetchError, ValueError) as exc:
        print(f"semisup datasets --fetch: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_datasets(args) -> int:
    from .datasets import describe_sources, list_datasets
    if args.fetch:
        return _fetch_datasets(args)
    rows = list_datasets(data_home=args.data_home)
    print(_format_table(rows, ["name", "found", "shape", "classes", "format", "path"]))
    print()
    print(describe_sources(args.data_home, all_found=all(r["found"] for r in rows)))
    return 0


def _named_command(argv) -> tuple[str, str] | None:
    """``("reproduce", "lass")`` for ``semisup reproduce lass ...``; None otherwise."""
    words = [a for a in argv if not a.startswith("-")]
    if len(words) >= 2 and words[0] in ("reproduce", "bench"):
        return words[0], words[1]
    return None


def _not_loaded(kind: str, name: str):
    def run(args):
        raise SystemExit(f"semisup {kind} {name}: this command is not available "
                         f"(module {name!r} could not be loaded)")
    return run


def _add_experiment_parsers(subparsers, kind: str, commands: dict, wanted) -> None:
    """Each command's real parser where wanted (or all when ``wanted`` is True), else a stub.

    The stub only carries the one-line help, so that ``semisup <kind> --help`` lists every
    command without importing its module. A module adds all of its ``kind`` commands at once.
    """
    wanted_key = (owner(kind, wanted[1]) if isinstance(wanted, tuple) and wanted[0] == kind
                  else None)
    added = set()
    for name, help_text in commands.items():
        if name in subparsers.choices:  # added along with another command of its module
            continue
        key = owner(kind, name)
        if (wanted is True or key == wanted_key) and key in PAPERS and key not in added:
            add = getattr(load_paper(key), f"add_{kind}_parser", None)
            added.add(key)
            if add is not None:
                add(subparsers)
                if name in subparsers.choices:
                    continue
        subparsers.add_parser(name, help=help_text).set_defaults(func=_not_loaded(kind, name))


def build_parser(argv=None) -> argparse.ArgumentParser:
    """The ``semisup`` argument parser.

    Parameters
    ----------
    argv : list of str, optional
        The arguments about to be parsed. When given, only the experiment module that they
        name (``reproduce <paper>`` or ``bench <method>``) is imported; every other
        ``reproduce``/``bench`` command gets a stub carrying its help line. When None, every
        experiment module is imported and the parser is complete.
    """
    wanted = True if argv is None else _named_command(argv)
    parser = argparse.ArgumentParser(
        prog="semisup",
        description="Learning from few labels with structure: graphs, low rank and clusters.")
    parser.add_argument("--version", action="version", version=f"semisup {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="train every method on built-in data and print a table")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("methods", help="list the estimators: kind, targets, user-guide page "
                                       "and reproduce/bench commands")
    p.set_defaults(func=cmd_methods)

    p = sub.add_parser("datasets", help="list the benchmark data sets (found or not, shape, "
                                        "source) or download them (--fetch)")
    p.add_argument("--data-home", default=None,
                   help="data directory (default: $SEMISUP_DATA, else ~/semisup_data, else "
                        "../shared/datasets next to the checkout; --fetch writes to "
                        "$SEMISUP_DATA, else ~/semisup_data)")
    p.add_argument("--fetch", nargs="+", metavar="NAME",
                   help="download these sets (or 'all') from their public sources, "
                        "checking every file's sha256")
    p.add_argument("--mirror", default=None, metavar="URL",
                   help="with --fetch: a mirror laid out as URL/<folder>/<file> "
                        "(default: $SEMISUP_DATA_MIRROR, else the public sources)")
    p.add_argument("--force", action="store_true",
                   help="with --fetch: download again files already present and verified")
    p.add_argument("--quiet", action="store_true", help="with --fetch: no progress output")
    p.set_defaults(func=cmd_datasets)

    rep = sub.add_parser("reproduce", help="reproduce a paper's tables and figures")
    rep_sub = rep.add_subparsers(dest="paper", required=True)
    _add_experiment_parsers(rep_sub, "reproduce", REPRODUCE, wanted)
    bench = sub.add_parser("bench", help="run a benchmark and record it in docs/benchmarks")
    bench_sub = bench.add_subparsers(dest="method", required=True)
    _add_experiment_parsers(bench_sub, "bench", BENCH, wanted)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
