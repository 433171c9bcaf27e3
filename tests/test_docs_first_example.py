"""The first example of the README and of the documentation's front page (#30 item 8): one
and the same code, which runs, and scores only the points whose label was hidden."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_example():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## A short example", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def _rst_example(path):
    return _rst_example_from_text((ROOT / path).read_text(encoding="utf-8"))


def test_readme_and_docs_index_show_the_same_first_example():
    readme = _readme_example()
    assert _rst_example("docs/index.rst") == readme
    overview = (ROOT / "docs/user_guide/overview.rst").read_text(encoding="utf-8")
    first = overview.split("A first example\n", 1)[1]
    assert _rst_example_from_text(first) == readme


def _rst_example_from_text(text):
    block = text.split(".. code-block:: python\n\n", 1)[1]
    lines = []
    for line in block.splitlines():
        if line and not line.startswith("   "):
            break
        lines.append(line[3:])
    return "\n".join(lines).strip() + "\n"


def test_first_example_runs_and_scores_only_the_unlabelled_points():
    code = _readme_example()
    assert "[hidden]" in code and "== y)" not in code   # no score over all points
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue().split("\n")
    assert float(printed[0]) > 0.9 and float(printed[1]) > 0.9, printed
    assert printed[2] == "[0 1]", printed
    # the comments say what the lines print (a changed default must update them)
    said = re.findall(r"\.mean\(\)\)\s+# ([0-9.]+)", code)
    assert [f"{float(p):.2f}" for p in printed[:2]] == said, (printed, said)
