"""What the lines of ``src/semisup/experiments/`` are: blank, comment, docstring, declared
data, statements (issue #28's count of the experiments' size).

Usage::

    python tools/experiments_lines.py [REV ...]

Without ``REV`` the working tree is counted; each ``REV`` (a commit) is counted from git.
Per module and in total: all lines (``wc -l``), blank lines, comment lines, docstring lines
(module, class and function docstrings), declared data (module-level assignments to
upper-case names, e.g. a paper's table, and module-level loops over ``_``-prefixed names
that build them) and the rest, the statements.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = "src/semisup/experiments"
KINDS = ("blank", "comment", "docstring", "data", "statements")


def classify(source: str) -> dict:
    """Lines of ``source`` per kind (:data:`KINDS`) and ``"lines"`` in all."""
    lines = source.splitlines()
    kind = ["statements"] * (len(lines) + 1)          # 1-based

    def mark(node, what):
        for i in range(node.lineno, node.end_lineno + 1):
            kind[i] = what

    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) and t.id.lstrip("_").isupper() for t in targets):
                mark(node, "data")
        elif (isinstance(node, ast.For) and isinstance(node.target, ast.Name)
              and node.target.id.startswith("_")):
            mark(node, "data")
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                mark(first, "docstring")
    for i, line in enumerate(lines, 1):
        if not line.strip():
            kind[i] = "blank"
        elif line.lstrip().startswith("#") and kind[i] == "statements":
            kind[i] = "comment"
    out = {k: kind[1:].count(k) for k in KINDS}
    out["lines"] = len(lines)
    return out


def sources(rev: str | None) -> dict:
    """``{module file name: source}`` of the folder in the working tree or at ``rev``."""
    if rev is None:
        return {p.name: p.read_text() for p in sorted((ROOT / FOLDER).glob("*.py"))}
    names = subprocess.run(["git", "ls-tree", "--name-only", f"{rev}:{FOLDER}"], cwd=ROOT,
                           check=True, capture_output=True, text=True).stdout.split()
    return {n: subprocess.run(["git", "show", f"{rev}:{FOLDER}/{n}"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
            for n in sorted(names) if n.endswith(".py")}


def table(rev: str | None) -> str:
    rows, total = [], dict.fromkeys(("lines",) + KINDS, 0)
    for name, text in sources(rev).items():
        c = classify(text)
        rows.append(f"| {name} | " + " | ".join(str(c[k]) for k in ("lines",) + KINDS) + " |")
        for k in total:
            total[k] += c[k]
    head = ["| module | lines | " + " | ".join(KINDS) + " |",
            "|---" + "|---:" * (len(KINDS) + 1) + "|"]
    foot = "| **all** | " + " | ".join(f"**{total[k]}**" for k in ("lines",) + KINDS) + " |"
    return "\n".join([f"{FOLDER} at {rev or 'the working tree'}", "", *head, *rows, foot])


if __name__ == "__main__":
    for rev in sys.argv[1:] or [None]:
        print(table(rev), end="\n\n")
