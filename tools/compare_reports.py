"""Compare the reports of two ``semisup reproduce/bench`` runs, timings aside.

Usage::

    python tools/compare_reports.py OLD NEW

``OLD`` and ``NEW`` are report files, or folders: then every ``*.md`` under them (by
relative path) is compared, plus each ``stdout`` file. What is ignored, since it moves
between two runs of the same code:

* the ``Command:`` line (date, machine, load average, total seconds) and any line that
  names the machine or the load average;
* in Markdown tables, the columns whose header names a time, a speed, memory or the load
  (``seconds``, ``ms``, ``time``, ``wall``, ``CPU``, ``RSS``, ``MiB``, ``speed``, ...);
* in prose, durations (``12.3 s``, ``4 min``, ``0.02 core-h``), dates and clock times, and the two folders
  themselves (so ``--out`` paths compare equal).

Everything else must match character for character. Exit status 0 when all match, 1 with
a unified diff of the normalised texts otherwise.
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

TIMING_HEADER = re.compile(
    r"second|\bsecs?\b|\bs\)|\(s\b|\bms\b|time|wall|cpu|rss|mib|gib|memory|load|speed|"
    r"fastest|per s\b|/ ?s\b|core-h|\bh\b|minutes?|\bs$", re.I)
DROP_LINE = re.compile(r"^(Command:|Machine:|Load|Date:)|load average|cores, Python", re.I)
DURATION = re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?\s?(s|sec|seconds|min|ms|h|x|core-h)\b")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?")


def _split_row(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def normalise(text: str, roots=()) -> list[str]:
    """The lines of ``text`` with what moves between runs removed (see module doc)."""
    for root in roots:
        text = text.replace(str(root), "<ROOT>")
    out, drop = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = _split_row(line)
            if drop is None:     # header row of a new table
                drop = {i for i, c in enumerate(cells) if TIMING_HEADER.search(c)}
            out.append("| " + " | ".join(c for i, c in enumerate(cells) if i not in drop))
            continue
        drop = None
        if DROP_LINE.search(line):
            continue
        out.append(DURATION.sub("<t>", DATE.sub("<date>", line)))
    return out


def _pairs(old: Path, new: Path):
    if old.is_file():
        return [(old, new)]
    names = sorted({p.relative_to(old) for p in old.rglob("*")
                    if p.is_file() and (p.suffix == ".md" or p.name == "stdout")})
    return [(old / n, new / n) for n in names]


def compare(old, new) -> list[str]:
    """Unified diff lines (empty when the reports match, timings aside)."""
    old, new = Path(old), Path(new)
    diff = []
    for a, b in _pairs(old, new):
        if not b.exists():
            diff.append(f"missing in NEW: {b}")
            continue
        la = normalise(a.read_text(), (old,))
        lb = normalise(b.read_text(), (new,))
        diff += difflib.unified_diff(la, lb, str(a), str(b), lineterm="")
    return diff


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    diff = compare(*argv)
    print("\n".join(diff) if diff else "identical (timings aside)")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
