"""BLAS threads of solvers whose products are too small to share between threads."""

from __future__ import annotations

import contextlib
import functools
import os

from joblib import effective_n_jobs
from threadpoolctl import threadpool_info, threadpool_limits

__all__ = ["one_blas_thread_when", "n_workers"]


def n_workers(n_jobs=None) -> int:
    """Workers of the library's own parallelism: ``n_jobs`` in joblib's meaning (-1: all
    cores), or for None the size of the BLAS's thread pool (at most the cores), so that a
    caller's ``threadpool_limits`` also limits it.

    Examples
    --------
    >>> n_workers(1)
    1
    >>> from threadpoolctl import threadpool_limits
    >>> with threadpool_limits(1, user_api="blas"):
    ...     n_workers()
    1
    """
    if n_jobs is not None:
        return max(1, effective_n_jobs(n_jobs))
    blas = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
    return max(1, min(max(blas, default=1), os.cpu_count() or 1))


def one_blas_thread_when(small):
    """Run the decorated solver with one BLAS thread when ``small(*args, **kwargs)``.

    On a 2-core machine the per-iteration products of small problems gain nothing from a
    second thread, and numpy's and SciPy's two OpenBLAS pools (plus scikit-learn's OpenMP
    runtime) take turns spinning on the cores: measured 3x-4x slower fits
    (``docs/benchmarks/defaults.md``). The limit is lifted when the solver returns, and
    never raises a limit the caller has set lower.

    Examples
    --------
    >>> import numpy as np
    >>> @one_blas_thread_when(lambda A: A.shape[0] <= 1000)
    ... def gram(A):
    ...     return A @ A.T
    >>> gram(np.eye(3)).shape
    (3, 3)
    """
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            limit = (threadpool_limits(1, user_api="blas") if small(*args, **kwargs)
                     else contextlib.nullcontext())
            with limit:
                return fn(*args, **kwargs)
        return wrapper
    return decorate
