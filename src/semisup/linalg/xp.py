"""One code, two array modules: what solvers written once for numpy + scipy.sparse and for
CuPy + ``cupyx.scipy.sparse`` (a GPU) share.

A solver takes ``xp, sparse = array_modules(a)`` from its inputs and calls their functions;
what must be read on the host (a stopping test, a small eigenproblem) goes through
:func:`to_host`. The memory checks speak of the memory where the arrays live (the host's,
or the device's free memory and CuPy's pooled blocks). Nothing here imports CuPy unless a
CuPy array arrives. The engines (:mod:`semisup.engines.arrays`, the CuPy engine) and the
methods' device paths build on these functions.

Examples
--------
>>> import numpy as np
>>> from semisup.linalg.xp import array_modules, to_host
>>> xp, sparse = array_modules(np.ones(3))
>>> xp.__name__, sparse.__name__, to_host(np.ones(2)).tolist()
('numpy', 'scipy.sparse', [1.0, 1.0])
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import _fmt_bytes, available_memory

__all__ = ["array_modules", "to_host", "free_memory", "check_free_memory", "degrees",
           "laplacian_apply", "rbf_kernel", "product_f64"]


def array_modules(a):
    """``(xp, sparse)``: (numpy, scipy.sparse), or (cupy, cupyx.scipy.sparse) for CuPy
    arrays and ``cupyx`` sparse matrices."""
    if type(a).__module__.split(".")[0] in ("cupy", "cupyx"):
        import cupy
        import cupyx.scipy.sparse as cusparse
        return cupy, cusparse
    return np, sp


def to_host(a):
    """A numpy array (or scipy sparse matrix) of ``a``; numpy input is returned as is."""
    if hasattr(a, "get") and type(a).__module__.split(".")[0] in ("cupy", "cupyx"):
        return a.get()
    return a


def free_memory(xp) -> int:
    """Free bytes where ``xp``'s arrays live: the device's free memory plus CuPy's pooled
    free blocks, or the host's available memory."""
    if xp is np:
        return available_memory()
    free, _ = xp.cuda.runtime.memGetInfo()
    return int(free) + int(xp.get_default_memory_pool().free_bytes())


def _where(xp) -> str:
    return "host memory" if xp is np else "device memory"


def check_free_memory(xp, nbytes, what, hint=""):
    """Refuse ``nbytes`` that would not fit in 90% of the free memory of ``xp``'s device."""
    budget = 0.9 * free_memory(xp)
    if nbytes > budget:
        raise MemoryError(f"{what} needs about {_fmt_bytes(nbytes)} of {_where(xp)} but only "
                          f"{_fmt_bytes(budget)} is free. {hint}".rstrip())


def degrees(W):
    """``d_i = sum_j w_ij`` as a 1-D array of ``W``'s module."""
    d = W.sum(axis=1)
    return d.A1 if hasattr(d, "A1") else d.ravel()   # scipy's np.matrix, or an array


def laplacian_apply(W, kind="normalized"):
    """``v -> L v`` for ``L = D - W`` (``"unnormalized"``) or ``I - D^{-1/2} W D^{-1/2}``
    (``"normalized"``, isolated nodes with ``L_ii = 1``), without forming ``L``."""
    xp, _ = array_modules(W)
    d = xp.asarray(degrees(W))
    if kind == "unnormalized":
        return lambda V: (d[:, None] * V if V.ndim == 2 else d * V) - W @ V
    if kind != "normalized":
        raise ValueError(f"laplacian must be 'normalized' or 'unnormalized', got {kind!r}.")
    s = xp.where(d > 0, 1.0 / xp.sqrt(xp.where(d > 0, d, 1.0)), 0.0)

    def apply(V):
        S = s[:, None] if V.ndim == 2 else s
        return V - S * (W @ (S * V))
    return apply


def rbf_kernel(X, sigma, *, Y=None, dtype="float32", block_bytes=None):
    """The RBF kernel ``exp(-|x - y|^2 / (2 sigma^2))`` of ``X`` (against ``Y``, or itself)
    in ``X``'s module.

    Blocks of rows are computed in float64 (as :func:`semisup.kernels.kernel_matrix`) and
    stored as ``dtype``; the memory is checked first against the free memory of the device
    that holds ``X``. Without ``Y`` the diagonal is exactly 1.
    """
    xp, _ = array_modules(X)
    dtype = np.dtype(dtype)
    n = X.shape[0]
    Xd = X.astype(xp.float64)
    sq = (Xd * Xd).sum(axis=1)
    Yd, sq_y = (Xd, sq) if Y is None else (Y.astype(xp.float64), None)
    if sq_y is None:
        sq_y = (Yd * Yd).sum(axis=1)
    m = Yd.shape[0]
    kbytes = float(n) * m * dtype.itemsize
    check_free_memory(xp, kbytes, f"the {n}x{m} {dtype.name} RBF kernel",
                  "Use fewer points" + ("" if dtype == np.float32 else
                                        " or dtype='float32' (half the memory)") + ".")
    if block_bytes is None:
        block_bytes = min(2 ** 30, 0.5 * (free_memory(xp) - kbytes))
    rows = int(max(1, block_bytes // (3 * 8 * max(m, 1))))
    K = xp.empty((n, m), dtype=dtype)
    for lo in range(0, n, rows):
        G = Xd[lo:lo + rows] @ Yd.T
        d2 = xp.maximum(sq[lo:lo + rows, None] + sq_y[None, :] - 2.0 * G, 0.0)
        K[lo:lo + rows] = xp.exp(-d2 / (2.0 * sigma ** 2)).astype(dtype)
        del G, d2
    if Y is None:
        diag = xp.arange(n)
        K[diag, diag] = 1.0
    return K


def product_f64(K, V, *, block_bytes=2 ** 27):
    """``K^T V`` in float64 arithmetic of a float32 ``K``: each entry widened as it is
    read, every product and sum in float64; for the symmetric kernels PCG multiplies by,
    ``K V``.

    A float32 kernel halves the memory, but a float32 product (cuBLAS, or NumPy's BLAS)
    also rounds ``V`` to float32 and sums in float32: an error of ~1e-7 ``|K| |V|`` in
    each product, new at each call. PCG at a small ``gamma_A`` amplifies it by about
    ``1 / gamma_A`` (on all of MNIST on a GPU the paper's stability stop never held),
    while the stored kernel's own rounding is one fixed perturbation of the problem. On
    CuPy arrays a CUDA kernel (:mod:`semisup.linalg._cuda_products`) reads ``K`` once, as
    the float32 product does; with numpy (the engine's code run on the host, and its
    tests) blocks of ``K``'s columns are cast to float64 (``block_bytes`` each) and
    multiplied.

    Parameters
    ----------
    K : array (m, n), float32, C-contiguous (other dtypes: ``K.T @ V``)
    V : array (m,) or (m, c), cast to float64

    Returns
    -------
    array (n,) or (n, c), float64, of ``K``'s module

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[1.0, 0.5], [0.5, 1.0]], dtype=np.float32)
    >>> V = np.array([1.0, 1e-9])
    >>> product_f64(K, V).tolist()
    [1.0000000005, 0.500000001]
    >>> (K @ V.astype(np.float32)).tolist()     # a float32 product loses V's small part
    [1.0, 0.5]
    """
    xp, _ = array_modules(K)
    V = xp.asarray(V, dtype=xp.float64)
    if K.dtype != np.float32 or not K.flags.c_contiguous:
        return K.T @ V
    if xp is not np:
        from ._cuda_products import product_f64 as device_product
        return device_product(K, V)
    m, n = K.shape
    out = np.empty((n,) + V.shape[1:])
    cols = int(max(1, block_bytes // (8 * max(m, 1))))
    for lo in range(0, n, cols):
        out[lo:lo + cols] = K[:, lo:lo + cols].astype(np.float64).T @ V
    return out
