"""Resumable experiment runs: one JSON file per finished unit of work (trial, split, draw).

The paper reproductions take hours at the full protocol. Each unit is written to
``<folder>/<key>.json`` as soon as it returns (atomically: a temporary file renamed), and a
re-run with the same folder loads the finished units instead of recomputing them, so a
run can be interrupted, continued later, or spread over several sessions. Keys must name
everything that changes the result (data set, settings, seed); the code that computes it is
named by the cache's version (:func:`code_version`: the experiment's protocol constant and a
hash of the library code its methods use), stored with each result.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import time
from pathlib import Path

from .._progress import log

__all__ = ["TrialCache", "code_version", "run_jobs"]


class TrialCache:
    """A folder of JSON results keyed by strings (``None`` folder: no caching).

    With a ``version`` (see :func:`code_version`) each result is stored with it, and a
    result stored under another version (or none) is not found: a unit computed by other
    code is recomputed, never trusted.
    """

    def __init__(self, folder: str | None, version: str | None = None):
        self.folder = folder
        self.version = version
        if folder is not None:
            os.makedirs(folder, exist_ok=True)

    def _path(self, key: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_.=+,-]+", key):
            raise ValueError(f"cache key {key!r} must use letters, digits and _.=+,- only")
        return os.path.join(self.folder, key + ".json")

    def get(self, key: str):
        """The stored result, or ``None`` (also when stored by another code version)."""
        if self.folder is None or not os.path.exists(self._path(key)):
            return None
        with open(self._path(key)) as fh:
            stored = json.load(fh)
        if self.version is None:
            return stored
        if not (isinstance(stored, dict) and stored.get("code_version") == self.version):
            return None
        return stored["result"]

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def put(self, key: str, value) -> None:
        if self.folder is None:
            return
        path = self._path(key)
        if self.version is not None:
            value = {"code_version": self.version, "result": value}
        with open(path + ".tmp", "w") as fh:
            json.dump(value, fh, default=_jsonable)
        os.replace(path + ".tmp", path)

    def run(self, key: str, fn, *args, **kwargs):
        """``fn(*args, **kwargs)``, or its stored result."""
        if key in self:
            return self.get(key)
        out = fn(*args, **kwargs)
        self.put(key, out)
        return self.get(key) if self.folder is not None else out


def _module_file(name: str) -> Path | None:
    """The source file of module ``semisup.<...>`` ``name`` (a package's ``__init__.py``)."""
    root = Path(__file__).resolve().parents[1]
    rel = Path(*name.split(".")[1:])
    for path in (root / rel / "__init__.py", root / rel.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _imports(name: str, tree: ast.Module, is_package: bool) -> set[str]:
    """The ``semisup`` modules that module ``name`` imports (anywhere in its body)."""
    base = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "semisup"}
        elif isinstance(node, ast.ImportFrom):
            pkg = (base[:len(base) - node.level + 1] if node.level else [])
            mod = ".".join(pkg + (node.module.split(".") if node.module else []))
            if mod.split(".")[0] != "semisup":
                continue
            found.add(mod)
            found |= {f"{mod}.{a.name}" for a in node.names}   # submodules imported by name
    return found


def _without_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return tree


@functools.lru_cache(maxsize=None)
def code_version(roots: tuple[str, ...], protocol: str = "") -> str:
    """A hash of the code that computes a unit: ``protocol`` and every ``semisup`` module
    reached from the modules ``roots`` by static imports (the method's package and all it
    uses), each read as its syntax tree without docstrings or comments, so that a change of
    code (not of prose) gives another version. Examples: ``code_version(("semisup.lass",),
    "v1")``.
    """
    seen, todo, digest = set(), list(roots), hashlib.sha256(protocol.encode())
    while todo:
        name = todo.pop()
        if name in seen or name.startswith("semisup.experiments"):
            continue
        seen.add(name)
        path = _module_file(name)
        if path is None:       # a name imported from a module, not a module
            continue
        tree = ast.parse(path.read_text())
        todo += sorted(_imports(name, tree, path.name == "__init__.py") - seen)
        digest.update(name.encode() + ast.dump(_without_docstrings(tree)).encode())
    return digest.hexdigest()[:16]


def _jsonable(v):
    import numpy as np
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")


def run_jobs(jobs, keys, cache: TrialCache, n_jobs=None, wrap=None, verbose=False,
             desc="jobs"):
    """Run ``(fn, args, kwargs)`` jobs, skipping those whose key is in ``cache``.

    Results are stored as each job finishes (also with ``n_jobs > 1``, through joblib's
    generator output) and returned in job order, as loaded from JSON (tuples become lists,
    numpy scalars plain numbers). ``wrap(fn, *args, **kwargs)`` runs each job (e.g. under a
    BLAS thread limit).
    """
    if len(keys) != len(jobs) or len(set(keys)) != len(keys):
        raise ValueError("one distinct key per job is required")
    wrap = wrap or (lambda fn, *a, **kw: fn(*a, **kw))
    res = [cache.get(k) for k in keys]
    todo = [i for i, k in enumerate(keys) if k not in cache]
    if len(todo) < len(jobs):
        log(f"[{desc}] {len(jobs) - len(todo)}/{len(jobs)} reused from {cache.folder}", verbose)
    if todo:
        log(f"[{desc}] computing {len(todo)} of {len(jobs)}"
            + (f" in {n_jobs} processes" if n_jobs not in (None, 1) else "") + " ...", verbose)
    t0 = time.perf_counter()

    def done(i, r):
        cache.put(keys[i], r)
        res[i] = cache.get(keys[i]) if cache.folder is not None else r
        log(f"[{desc}] {sum(x is not None for x in res)}/{len(jobs)} done ({keys[i]}; "
            f"{time.perf_counter() - t0:.0f} s)", verbose)

    if n_jobs in (None, 1):
        for i in todo:
            fn, a, kw = jobs[i]
            done(i, wrap(fn, *a, **kw))
        return res
    from joblib import Parallel, delayed
    out = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(wrap)(jobs[i][0], *jobs[i][1], **jobs[i][2]) for i in todo)
    for i, r in zip(todo, out):
        done(i, r)
    return res
