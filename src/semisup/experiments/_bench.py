"""The benchmarks' records: ``semisup bench scaling``, ``reduced``, ``lowlabel`` and ``gpu``
write a Markdown record of sections (:func:`write_section`, :func:`write_parts`) headed by
the command, date, machine and load (:func:`bench_header`); a fit is measured in this
process (:func:`measured`: wall and CPU seconds, peak memory) or in a fresh one
(:func:`in_child`, so that its peak memory is its own); :func:`growth_exponent` fits time
against n on log-log axes.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ._report import command_line, load_average, machine, write_text
from ._runner import say_written

__all__ = ["load_mnist", "growth_exponent", "measured", "in_child", "bench_header",
           "write_section", "write_parts"]


def load_mnist(data_home=None, dtype=np.float32):
    """MNIST's 70 000 images as rows in [0, 1] (``dtype``) and their labels (int64)."""
    from ..datasets import load_dataset
    ds = load_dataset("mnist", data_home=data_home)
    return np.asarray(ds.data, dtype=dtype), np.asarray(ds.target).astype(np.int64)


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


def measured(fit, warm_up) -> dict:
    """``fit()`` after ``warm_up()`` (untimed: imports, compilation): its wall and CPU
    seconds, the process's peak resident memory and that before the fit (MiB)."""
    import resource
    warm_up()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024     # KiB on Linux
    t0, c0 = time.perf_counter(), time.process_time()
    fit()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(seconds=seconds, cpu_seconds=cpu, base_mib=base,
                peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def in_child(func: str, *args, timeout=None, blas_threads=None) -> dict:
    """``func(*args)`` (``"module:function"``, JSON in and out) in a fresh ``python``, so
    that its peak memory is its own, under ``blas_threads`` BLAS threads (None: the
    BLAS's default); an error, timeout or memory kill comes back as ``{"failed": why}``."""
    module, name = func.split(":")
    code = (f"import json, sys; from {module} import {name}; "
            f"print('@@' + json.dumps({name}(*json.loads(sys.argv[1]))))")
    env = None if blas_threads is None else dict(os.environ, **{v: str(blas_threads) for v in (
        "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    try:
        out = subprocess.run([sys.executable, "-c", code, json.dumps(args)], env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(failed=f"killed after {timeout:.0f} s")
    found = [line for line in out.stdout.splitlines() if line.startswith("@@")]
    if found:
        return json.loads(found[-1][2:])
    err = (out.stderr.strip().splitlines() or ["no output"])[-1]
    return dict(failed=f"exit {out.returncode}: {err[:200]}")


def bench_header(args, *notes) -> list[str]:
    """A record's header lines: the command, date, machine and load now, then ``notes``."""
    return [f"- command: `{command_line(args)}`",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
            f"- machine: {machine()}, OPENBLAS_NUM_THREADS="
            f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, BLAS threads "
            f"{args.blas_threads}",
            f"- load average at start (1/5/15 min): {load_average(' / ')}", *notes]


def write_section(path: str, tag: str, lines: list[str]) -> None:
    """Replace the section ``tag`` of the record ``path`` (between HTML comment markers),
    or append it; the rest of the file is kept (a new one is titled by its name)."""
    begin, end = f"<!-- {tag} -->", f"<!-- /{tag} -->"
    body = "\n".join([begin, *lines, end])
    text = open(path).read() if os.path.exists(path) else f"# Benchmark: {Path(path).stem}\n"
    pat = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    write_text(path, pat.sub(lambda _: body, text) if pat.search(text) else
               text.rstrip("\n") + "\n\n" + body + "\n")


def write_parts(args, selected, parts: dict, path_of, tag: str, echo=False) -> int:
    """Run each of the ``selected`` parts, ``parts[name](args) -> (title, notes, body)``,
    and write it as the section ``<tag>:<name>`` of the record ``path_of(name)``: the
    title, :func:`bench_header` (taken before the part runs) with the notes, the body
    (also printed with ``echo``)."""
    for name in selected:
        head = bench_header(args)
        title, notes, body = parts[name](args)
        lines = [f"## {title}", "", *head, *notes, "", *body]
        write_section(path_of(name), f"{tag}:{name}", lines)
        if echo:
            print("\n".join(lines))
        say_written(path_of(name), args.verbose)
    return 0
