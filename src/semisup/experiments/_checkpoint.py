"""Resumable experiment runs: one JSON file per finished unit of work (trial, split, draw).

The paper reproductions take hours at the full protocol. Each unit is written to
``<folder>/<key>.json`` as soon as it returns (atomically: a temporary file renamed), and a
re-run with the same folder loads the finished units instead of recomputing them, so a
run can be interrupted, continued later, or spread over several sessions. Keys must name
everything that changes the result (data set, protocol, seed), since a key found on disk is
trusted.
"""

from __future__ import annotations

import json
import os
import re
import time

from .._progress import log

__all__ = ["TrialCache", "run_jobs"]


class TrialCache:
    """A folder of JSON results keyed by strings (``None`` folder: no caching)."""

    def __init__(self, folder: str | None):
        self.folder = folder
        if folder is not None:
            os.makedirs(folder, exist_ok=True)

    def _path(self, key: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_.=+,-]+", key):
            raise ValueError(f"cache key {key!r} must use letters, digits and _.=+,- only")
        return os.path.join(self.folder, key + ".json")

    def get(self, key: str):
        """The stored result, or ``None``."""
        if self.folder is None or not os.path.exists(self._path(key)):
            return None
        with open(self._path(key)) as fh:
            return json.load(fh)

    def __contains__(self, key: str) -> bool:
        return self.folder is not None and os.path.exists(self._path(key))

    def put(self, key: str, value) -> None:
        if self.folder is None:
            return
        path = self._path(key)
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
