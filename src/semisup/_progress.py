"""Minimal progress reporting for long loops (no dependency): a line on stderr, rewritten."""

from __future__ import annotations

import sys
import time
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")


def progress(iterable: Iterable[T], desc: str = "", total: int | None = None,
             enable: bool = True, stream=None) -> Iterator[T]:
    """Yield from ``iterable``, printing ``desc i/total elapsed`` to stderr when enabled."""
    if not enable:
        yield from iterable
        return
    stream = stream or sys.stderr
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    start = time.perf_counter()
    tty = hasattr(stream, "isatty") and stream.isatty()
    i = 0
    for i, item in enumerate(iterable, 1):
        yield item
        elapsed = time.perf_counter() - start
        msg = f"{desc} {i}/{total if total is not None else '?'} [{elapsed:.1f}s]"
        if tty:
            stream.write("\r" + msg)
        elif total is None or i == total or i % max(1, (total or 10) // 10) == 0:
            stream.write(msg + "\n")
        stream.flush()
    if tty and i:
        stream.write("\n")
        stream.flush()


def log(msg: str, enable: bool = True) -> None:
    """Print a progress message to stderr when enabled."""
    if enable:
        print(msg, file=sys.stderr, flush=True)
