"""BLAS threads of solvers whose products are too small to share between threads."""

from __future__ import annotations

import contextlib
import functools

from threadpoolctl import threadpool_limits

__all__ = ["one_blas_thread_when"]


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
