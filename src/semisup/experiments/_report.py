"""Small helpers shared by the experiment modules: machine description, tables, files."""

from __future__ import annotations

import datetime
import os
import platform
import sys
import time


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numerical_stack() -> str:
    """numpy, scipy and the BLAS libraries loaded (version and kernel architecture).

    Records state it because results move with it: the same code on the same draws gave
    SPORE's graph-kernel baselines one vertex apart under two installs (docs/results/spore.md).
    """
    import numpy
    import scipy
    from threadpoolctl import threadpool_info

    blas = sorted({f"{i.get('internal_api', '?')} {i.get('version', '?')}"
                   + (f" ({i['architecture']})" if i.get("architecture") else "")
                   for i in threadpool_info() if i.get("user_api") == "blas"})
    return (f"numpy {numpy.__version__}, scipy {scipy.__version__}"
            + (f", {' / '.join(blas)}" if blas else ""))


def machine() -> str:
    """Platform, CPU, core count, Python and the numerical stack, for records."""
    return (f"{platform.platform()}, {_cpu()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, {numerical_stack()}")


def machine_and_load() -> str:
    """:func:`machine` and the load averages now: the header line of every report."""
    return f"{machine()}, load average {load_average(', ')}"


def load_average(sep: str = "/") -> str:
    """The 1, 5 and 15-minute load averages (how busy the machine was)."""
    return sep.join(f"{v:.2f}" for v in os.getloadavg())


def timed(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), wall seconds, process CPU seconds)``: the one timer of the
    experiments (CPU time counts every BLAS thread, and is the better measure of the work
    done on a machine shared with other jobs)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0, time.process_time() - c0


def best_of(fn, *args, repeat=5, warmup=False, **kwargs):
    """``(fn(*args, **kwargs), the best wall seconds of repeat calls)``, after one untimed
    call with ``warmup`` (numba compilation, caches): the timer of a benchmark row."""
    if warmup:
        fn(*args, **kwargs)
    runs = [timed(fn, *args, **kwargs) for _ in range(repeat)]
    return runs[-1][0], min(r[1] for r in runs)


def mean_sd(values, digits=2, sep=" ± ", scale=1.0, alone=False, empty="—") -> str:
    """``"mean ± sd"`` of ``values`` (times ``scale``; population sd, ``ddof=0``), each to
    ``digits`` decimals; ``empty`` for no value; with ``alone``, one value without its sd.

    Examples
    --------
    >>> mean_sd([1.0, 2.0]), mean_sd([0.5], 1, alone=True), mean_sd([1, 3], 1, "±", 0.5)
    ('1.50 ± 0.50', '0.5', '1.0±0.5')
    """
    import numpy as np
    v = scale * np.asarray(values, dtype=float)
    if not v.size:
        return empty
    if alone and v.size == 1:
        return f"{v.mean():.{digits}f}"
    return f"{v.mean():.{digits}f}{sep}{v.std():.{digits}f}"


def markdown_table(rows, cols) -> str:
    """A Markdown table with the header ``cols``: each row a dict (its values under ``cols``,
    ``""`` where absent) or a sequence of cells in ``cols`` order (so that two columns may
    share a header, e.g. "paper"). A column name ending in ``:`` is right-aligned (the
    ``:`` is not shown).

    Examples
    --------
    >>> print(markdown_table([{"a": 1}, [2, 3]], ["a", "b:"]))
    | a | b |
    |---|---:|
    | 1 |  |
    | 2 | 3 |
    """
    def line(cells):
        return "| " + " | ".join(str(c) for c in cells) + " |"
    return "\n".join([line(c.rstrip(":") for c in cols),
                      "|" + "".join("---:|" if c.endswith(":") else "---|" for c in cols)] + [
        line([r.get(c, "") for c in cols] if isinstance(r, dict) else r) for r in rows])


def paper_rows(text: str) -> dict:
    """A paper's table typed as printed, a row a line ``"method value value ..."``, as
    ``{method: [value, ...]}`` (the cells as strings).

    Examples
    --------
    >>> paper_rows("LS 1.0±0.1 2.0±0.2\\nPG 0.5±0.1 0.9±0.3")["PG"]
    ['0.5±0.1', '0.9±0.3']
    """
    return {row.split()[0]: row.split()[1:] for row in text.strip().splitlines()}


def write_text(path: str, text: str) -> str:
    """Write ``text`` to ``path``, creating its folder; return the path."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def kept_section(path: str, heading: str) -> list[str]:
    """The hand-written section ``heading`` of the report at ``path``, as lines.

    It runs from the ``heading`` line to the next ``## `` heading (or the end). Reports that
    are regenerated from a cache (``--assemble-only``) call this before overwriting, so the
    prose written over the tables (status, findings) survives a rewrite. A missing file or
    heading gives ``[]``.
    """
    try:
        with open(path) as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return []
    if heading not in lines:
        return []
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    section = lines[start:end]
    while section and not section[-1].strip():
        section.pop()
    return section + [""]


def command_line(args) -> str:
    """The ``semisup ...`` command that produced a record."""
    if sys.argv[1:]:
        return "semisup " + " ".join(sys.argv[1:])
    # called as a function (tests, notebooks): the parser's name, else the command's words
    name = getattr(args, "cmd_name", None) or " ".join(
        str(w) for w in (getattr(args, "command", None), getattr(args, "paper", None)
                         or getattr(args, "method", None)) if w)
    return f"semisup {name}".rstrip()


def header(args, *notes) -> str:
    """The header line of a report: the command, the UTC date and time, the machine and its
    load (:func:`machine_and_load`), then ``notes`` (what the command line does not say:
    total time, seed, ...). ``tools/compare_reports.py`` leaves the line out.

    Examples
    --------
    >>> import argparse
    >>> header(argparse.Namespace(cmd_name="lass"), "12 s in all").startswith("Command: `")
    True
    """
    now = datetime.datetime.now(datetime.timezone.utc)
    return (f"Command: `{command_line(args)}` — {now:%Y-%m-%d %H:%M} UTC, {machine_and_load()}"
            + "".join(f"; {n}" for n in notes) + ".")
