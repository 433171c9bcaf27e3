"""Shared plotting helpers; matplotlib is optional (extra ``[plot]``)."""

from __future__ import annotations

import os

from ._optional import require


def pyplot():
    """Return ``matplotlib.pyplot`` with a non-interactive backend, or fail naming the extra."""
    mpl = require("matplotlib", "plots (--plot)")
    if not os.environ.get("DISPLAY"):
        mpl.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, path: str) -> str:
    """Save ``fig`` to ``path`` (creating folders), close it, and return the path."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    pyplot().close(fig)
    return path
