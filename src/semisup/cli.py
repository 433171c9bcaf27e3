"""The ``semisup`` command: ``demo``, ``datasets``, ``reproduce <paper>``, ``bench <method>``."""

from __future__ import annotations

import argparse
import sys
import time

from .experiments import load_papers


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


def cmd_datasets(args) -> int:
    from .datasets import list_datasets
    rows = list_datasets(data_home=args.data_home)
    print(_format_table(rows, ["name", "found", "shape", "classes", "format", "path"]))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="semisup",
        description="Learning from few labels with structure: graphs, low rank and clusters.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="train every method on built-in data and print a table")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("datasets", help="list the benchmark data sets: found or not, shape")
    p.add_argument("--data-home", default=None,
                   help="data directory (default: $SEMISUP_DATA or ../shared/datasets)")
    p.set_defaults(func=cmd_datasets)

    rep = sub.add_parser("reproduce", help="reproduce a paper's tables and figures")
    rep_sub = rep.add_subparsers(dest="paper", required=True)
    bench = sub.add_parser("bench", help="run a benchmark and record it in docs/benchmarks")
    bench_sub = bench.add_subparsers(dest="method", required=True)
    for mod in load_papers().values():
        if hasattr(mod, "add_reproduce_parser"):
            mod.add_reproduce_parser(rep_sub)
        if hasattr(mod, "add_bench_parser"):
            mod.add_bench_parser(bench_sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
