"""The import graph of ``src/semisup``: no circle, and no module importing a higher layer.

Every module is parsed (``ast``, so nothing is imported and function-level imports count
too); ``from semisup import Name`` counts as an import of the module that defines ``Name``.
The layers, bottom to top, are :data:`LAYERS`; a module may import its own layer or lower
ones, and a method package never imports another method (a piece two methods need lives in
a lower layer: ``_transductive``, ``baselines``, ``linalg``, ``graph``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import semisup

SRC = Path(semisup.__file__).resolve().parent

#: bottom to top; a module belongs to the layer of its longest listed prefix
LAYERS = (
    ("semisup", "semisup._validation", "semisup._optional", "semisup._progress",
     "semisup._threads", "semisup._registry"),
    ("semisup.datasets",),
    ("semisup.linalg",),
    ("semisup.engines",),                           # the interface and the registry
    ("semisup.graph", "semisup.kernels", "semisup.model_selection", "semisup._base"),
    ("semisup._transductive",),
    ("semisup.baselines",),
    ("semisup.lass", "semisup.lapsvm", "semisup.clustering", "semisup.completion",
     "semisup.spore", "semisup.poisson"),
    # engine implementations: they may use graph/ and linalg/ (the GPU engine's array-module
    # code shares the CPU search's certificate); graph/ finds them only through the engines
    # registry (by name, loaded on first use)
    ("semisup.distributed", "semisup.engines.cupy", "semisup.engines.arrays"),
    ("semisup.plotting", "semisup.experiments"),
    ("semisup.cli",),
)
METHODS = LAYERS[7]

#: imports running up that are known and owned elsewhere (issue #28): each must disappear
#: (the test fails when one is gone, so that the entry is removed with the fix)
KNOWN_UPWARD: set = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """The semisup modules ``name`` imports (at any depth of its code)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "semisup")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "semisup":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:
                    out.add(sub)
                elif target == "semisup" and alias.name in semisup._PUBLIC:
                    out.add(semisup._PUBLIC[alias.name])
                else:
                    out.add(target)
    out.discard(name)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _group(name: str) -> str:
    """The listed prefix a module belongs to (its package, or the module itself)."""
    best = ""
    for layer in LAYERS:
        for prefix in layer:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > len(best):
                best = prefix
    assert best, f"{name} is in no layer: add it to LAYERS"
    return best


def _layer(name: str) -> int:
    group = _group(name)
    return next(i for i, layer in enumerate(LAYERS) if group in layer)


def test_every_module_is_in_a_layer_and_the_parser_sees_imports():
    for name in MODULES:
        _layer(name)
    assert "semisup.graph.neighbors" in GRAPH["semisup.graph.frontend"] or \
        "semisup.engines" in GRAPH["semisup.graph.frontend"]
    # a function-level import is seen
    assert "semisup.baselines.graph_kernels" in GRAPH["semisup.experiments.spore"]


def test_no_module_imports_a_higher_layer():
    upward = {(a, b) for a, targets in GRAPH.items() for b in targets
              if _layer(b) > _layer(a)}
    new = sorted(upward - KNOWN_UPWARD)
    assert not new, "imports from a higher layer:\n" + "\n".join(f"  {a} -> {b}"
                                                                  for a, b in new)
    fixed = sorted(KNOWN_UPWARD - upward)
    assert not fixed, f"fixed, remove from KNOWN_UPWARD: {fixed}"


def test_methods_do_not_import_each_other():
    crossing = sorted((a, b) for a, targets in GRAPH.items() for b in targets
                      if _group(a) in METHODS and _group(b) in METHODS
                      and _group(a) != _group(b))
    assert not crossing, crossing


def test_graph_never_imports_an_engine_implementation():
    for a, targets in GRAPH.items():
        if _group(a) == "semisup.graph":
            assert not {b for b in targets if _group(b) in LAYERS[8]}, a


def test_no_import_cycle():
    """Depth-first search for a back edge; reports one cycle."""
    state: dict[str, int] = {}          # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(GRAPH):
        if node not in state:
            visit(node)
