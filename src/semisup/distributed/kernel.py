"""A kernel matrix held as row blocks on the Dask workers, for LapSVM / LapRLS (PCG).

The primal PCG solver (:func:`semisup.lapsvm.pcg.pcg`) reads the training kernel only
through ``K.shape`` and the products ``K @ V`` (one per iteration, all one-vs-all columns at
once; two more every ``refresh_every`` iterations). :class:`DaskKernel` provides exactly
that: the row blocks ``k(X_b, X)`` are computed on the workers by
:func:`semisup.kernels.kernel_matrix` and kept there (``persist=True``) or recomputed for
every product (``persist=False``, for clusters whose memory cannot hold the kernel); a
product ships ``V`` (``n x c``) to the workers and gathers ``K V`` (``n x c``). The kernel is
never gathered.
"""

from __future__ import annotations

import numpy as np

from ..kernels import kernel_matrix
from ._dask import is_dask_array, require_dask

#: bytes of one row block of the kernel (a task's output)
BLOCK_BYTES = 128 * 2 ** 20
#: kernel_matrix's default block_bytes (its row blocks are 1/24 of it per column)
_INMEMORY_BLOCK_BYTES = 64 * 2 ** 20


def _kernel_block(Xb, rid, Y, *, symmetric, kernel, params, out_dtype):
    if symmetric and Xb.shape[0] == Y.shape[0]:
        # one block: the in-memory call itself (its X @ X.T is a symmetric rank-k update)
        return kernel_matrix(np.asarray(Xb), None, kernel, dtype=out_dtype, **params)
    K = kernel_matrix(np.asarray(Xb), np.asarray(Y), kernel, dtype=out_dtype, **params)
    if symmetric and kernel == "rbf":
        K[np.arange(K.shape[0]), rid] = 1.0  # as the in-memory symmetric kernel: exactly 1
    return K


def _wait_if_distributed(collection):
    """Block until a persisted collection is in the workers' memory (with a Client)."""
    try:
        from distributed import default_client, wait
        default_client()
    except (ImportError, ValueError):  # no distributed, or no Client: persist was eager
        return
    wait(collection)


class DaskKernel:
    """Kernel ``K[i, j] = k(x_i, y_j)`` as row blocks on the Dask workers.

    Parameters
    ----------
    X : dask array or ndarray of shape (n, d)
        Row points.
    Y : dask array or ndarray of shape (m, d), optional
        Column points; ``None`` for the symmetric training kernel ``k(X, X)``.
    kernel, sigma, degree, gamma, coef0, dtype :
        As in :func:`semisup.kernels.kernel_matrix` (float32 halves the workers' memory and
        the products' traffic; the products are returned in float64).
    persist : bool
        Keep the blocks in the workers' memory (``True``), or recompute them for every
        product (``False``: memory of one block per task, a kernel evaluation per product).
    chunk_rows : int, optional
        Rows per block; default about :data:`BLOCK_BYTES` per block, rounded to a multiple
        of :func:`~semisup.kernels.kernel_matrix`'s own row blocks so that every entry is
        computed by the same BLAS call shape as the in-memory kernel (equal bits with
        equal BLAS threading; otherwise entries agree to an ulp).

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from semisup.distributed import DaskKernel
    >>> X = da.from_array(np.random.default_rng(0).normal(size=(200, 3)), chunks=50)
    >>> K = DaskKernel(X, sigma=1.0)
    >>> (K @ np.ones(200)).shape
    (200,)
    """

    ndim = 2

    def __init__(self, X, Y=None, kernel="rbf", *, sigma=1.0, degree=3, gamma=1.0, coef0=0.0,
                 dtype=np.float64, persist=True, chunk_rows=None):
        da = require_dask("a kernel on Dask workers")
        self.dtype = np.dtype(dtype)
        symmetric = Y is None
        X = X if is_dask_array(X) else da.from_array(np.asarray(X))
        Y = X if symmetric else (Y if is_dask_array(Y) else da.from_array(np.asarray(Y)))
        if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
            raise ValueError(f"X and Y must be 2-D with the same features, got {X.shape} "
                             f"and {Y.shape}.")
        m = Y.shape[0]
        if chunk_rows is None:
            # a multiple of kernel_matrix's own row block (its default block_bytes): each
            # block is then computed by the same products as in memory, bit for bit
            inner = max(1, int(_INMEMORY_BLOCK_BYTES // (8 * 3 * max(m, 1))))
            chunk_rows = inner * max(1, int(BLOCK_BYTES // max(m * self.dtype.itemsize, 1))
                                     // inner)
        rows = int(chunk_rows)
        X = X.rechunk({0: min(rows, max(X.shape[0], 1)), 1: -1})
        Y1 = Y.rechunk({0: -1, 1: -1})
        rid = da.arange(X.shape[0], chunks=(X.chunks[0],))
        params = dict(sigma=float(sigma), degree=int(degree), gamma=float(gamma),
                      coef0=float(coef0))
        K = da.blockwise(_kernel_block, "ij", X, "ik", rid, "i", Y1, "jk",
                         symmetric=symmetric, kernel=kernel, params=params,
                         out_dtype=self.dtype, dtype=self.dtype,
                         concatenate=True)
        self.persisted = bool(persist)
        self.blocks = K.persist() if persist else K
        if persist:
            _wait_if_distributed(self.blocks)  # the kernel's cost belongs to its set-up
        self.shape = (X.shape[0], m)
        self.size = self.shape[0] * self.shape[1]

    def __matmul__(self, V):
        """``K @ V`` computed on the workers, gathered as a float64 ndarray.

        NumPy's precision rules: a float32 ``V`` gives a float32 product (what PCG's
        ``kernel_matvec`` asks for), a float64 ``V`` a float64 one (the blocks are cast on
        the workers), as for an in-memory ``K``.
        """
        V = np.asarray(V)
        if V.dtype not in (np.float32, np.float64):
            V = V.astype(np.float64)
        if V.shape[0] != self.shape[1]:
            raise ValueError(f"K has {self.shape[1]} columns but V has {V.shape[0]} rows.")
        dtype = np.result_type(self.dtype, V.dtype)
        blocks = self.blocks if self.dtype == dtype else self.blocks.astype(dtype)
        out = (blocks @ V).compute()
        return np.asarray(out, dtype=np.float64)

    def max_abs(self) -> float:
        """Largest ``|K_ij|`` (a reduction on the workers)."""
        return float(abs(self.blocks).max().compute()) if self.size else 0.0

    def rows(self, index) -> np.ndarray:
        """Rows ``K[index, :]`` gathered to the client (e.g. the labelled points')."""
        return np.asarray(self.blocks[np.asarray(index)].compute())

    def diagonal(self) -> np.ndarray:
        """``diag(K)`` (square kernels)."""
        return np.asarray(require_dask().diagonal(self.blocks).compute())

    def __repr__(self):
        where = "persisted on the workers" if self.persisted else "recomputed per product"
        return f"DaskKernel(shape={self.shape}, dtype={self.dtype.name}, {where})"
