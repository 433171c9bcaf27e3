"""The primal LapSVM / LapRLS objective (Melacci & Belkin 2011, eq. 7) and its gradients (eq. 9).

Notation (the paper's, with a boolean mask instead of ordering the labelled points first):

* ``y`` — n-vector (or n x c matrix for one-vs-all), ``+1/-1`` on labelled points, ``0`` on
  unlabelled ones; the labelled set is ``y != 0``.
* ``f = K alpha + 1 b`` on the training points.
* error vectors ``E = {i labelled : y_i f_i < 1}`` (squared hinge) or all labelled points
  (squared loss, LapRLS).

Objective (eq. 7)::

    obj = 1/2 ( sum_{i in E} (f_i - y_i)^2 + gamma_A alpha^T K alpha + gamma_I f^T L f )

Preconditioned gradient (eq. 9, preconditioner ``P = diag(1, K)``)::

    ghat_a = I_E (f - y) + gamma_A alpha + gamma_I L f,   grad_a = K ghat_a
    ghat_b = 1^T I_E (f - y) + gamma_I 1^T L f,            grad_b = ghat_b

``L`` is never multiplied by ``K``: every function here takes ``L`` through
:func:`laplacian_operator`, which applies a (sparse) ``L0`` ``p`` times to vectors.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..linalg.xp import array_modules

__all__ = [
    "laplacian_operator",
    "kernel_matvec",
    "error_mask",
    "objective",
    "gradient",
    "preconditioned_gradient",
    "Gradient",
]


def laplacian_operator(L, power: int = 1) -> Callable[[np.ndarray], np.ndarray]:
    """Return ``v -> L^power v`` without forming ``L^power``.

    Parameters
    ----------
    L : sparse matrix, ndarray or LinearOperator of shape (n, n)
        A symmetric PSD Laplacian (e.g. from :func:`semisup.graph.laplacian`).
    power : int
        The iterated-Laplacian degree ``p``. Applying a sparse ``L0`` ``p`` times costs
        ``O(p nnz(L0))`` per vector, whereas ``L0^p`` fills in like the p-step
        neighbourhood.

    Returns
    -------
    apply : callable
        Maps an (n,) or (n, c) float64 array to ``L^p`` times it.
    """
    p = int(power)
    if p != power or p < 1:
        raise ValueError(f"power must be a positive integer, got {power!r}.")
    if sp.issparse(L):
        L = sp.csr_matrix(L, dtype=np.float64)
    elif not isinstance(L, spla.LinearOperator):
        L = np.asarray(L, dtype=np.float64)

    def apply(v):
        out = v
        for _ in range(p):
            out = L @ out
        return np.asarray(out, dtype=np.float64)

    return apply


def kernel_matvec(K, V: np.ndarray) -> np.ndarray:
    """``K @ V`` in K's precision, returned as float64 of ``V``'s array module (numpy, or
    CuPy for a kernel held on a GPU).

    Mixing a float32 ``K`` with a float64 vector would make NumPy copy all of ``K`` to
    float64 on every product; casting the (small) vector instead keeps the product at
    float32 memory traffic, which is what bounds its speed. A kernel operator with a true
    ``float64_products`` attribute (the device's float32 kernel,
    :func:`semisup.linalg.xp.product_f64`) takes the float64 ``V`` itself.
    """
    if (getattr(K, "dtype", None) == np.float32 and not sp.issparse(K)
            and not getattr(K, "float64_products", False)):
        # (an ndarray, or a kernel operator such as semisup.distributed.DaskKernel)
        out = K @ V.astype(np.float32)
    else:
        out = K @ V
    xp = array_modules(V)[0]
    return xp.asarray(out, dtype=xp.float64)


def error_mask(f: np.ndarray, y: np.ndarray, hinge: bool = True) -> np.ndarray:
    """Error-vector indicator: labelled points with ``y_i f_i < 1`` (all labelled if not hinge)."""
    labeled = y != 0
    if not hinge:
        return labeled
    return labeled & (y * f < 1.0)


def _bias_vector(b, like):
    xp = array_modules(like)[0]
    return xp.zeros(like.shape[1:]) if b is None else xp.asarray(b, dtype=xp.float64)


def objective(K, apply_L, y, alpha, b=None, *, gamma_A: float, gamma_I: float,
              hinge: bool = True, Kalpha: np.ndarray | None = None) -> np.ndarray | float:
    """Primal objective, eq. 7 (squared hinge) or eq. 14's loss (squared, ``hinge=False``).

    Parameters
    ----------
    K : ndarray (n, n)
        Gram matrix (float64 or float32).
    apply_L : callable
        ``v -> L v`` (see :func:`laplacian_operator`).
    y : ndarray (n,) or (n, c)
        ``+1/-1`` labelled, ``0`` unlabelled.
    alpha : ndarray, same shape as ``y``
    b : float or ndarray (c,), optional
        Bias; ``None`` means no bias.
    gamma_A, gamma_I : float
        Ambient and intrinsic regularisation weights.
    hinge : bool
        Squared hinge (LapSVM) if true, squared loss on all labelled points (LapRLS) if false.
    Kalpha : ndarray, optional
        ``K alpha`` if already known (saves the O(n^2) product).

    Returns
    -------
    obj : float, or ndarray (c,) for a matrix ``y`` (of ``alpha``'s array module: numpy, or
    CuPy on the device path)
    """
    xp = array_modules(alpha)[0]
    alpha = xp.asarray(alpha, dtype=xp.float64)
    Ka = kernel_matvec(K, alpha) if Kalpha is None else Kalpha
    f = Ka + _bias_vector(b, alpha)
    E = error_mask(f, y, hinge)
    r = xp.where(E, f - y, 0.0)
    val = 0.5 * ((r * r).sum(axis=0) + gamma_A * (alpha * Ka).sum(axis=0)
                 + gamma_I * (f * apply_L(f)).sum(axis=0))
    return float(val) if np.ndim(val) == 0 else val


class Gradient(NamedTuple):
    """Gradient and preconditioned gradient, each as ``(b part, alpha part)``.

    ``grad_b`` / ``ghat_b`` are ``None`` without a bias. ``grad_a = K ghat_a`` and
    ``grad_b = ghat_b`` (preconditioner ``diag(1, K)``).
    """

    grad_b: np.ndarray | float | None
    grad_a: np.ndarray
    ghat_b: np.ndarray | float | None
    ghat_a: np.ndarray

    def stacked(self, which: str = "grad") -> np.ndarray:
        """``[b, alpha]`` vector (``alpha`` alone without a bias), as in the paper's ``z``."""
        gb, ga = (self.grad_b, self.grad_a) if which == "grad" else (self.ghat_b, self.ghat_a)
        return ga if gb is None else np.concatenate([np.atleast_1d(gb), ga])


def preconditioned_gradient(f, y, alpha, Lf, *, gamma_A, gamma_I, use_bias, hinge=True):
    """``(ghat_b, ghat_a)`` from quantities already at hand (no kernel product), eq. 9; the
    arrays of any one module (numpy, or CuPy on a GPU)."""
    E = error_mask(f, y, hinge)
    r = array_modules(f)[0].where(E, f - y, 0.0)
    ghat_a = r + gamma_A * alpha + gamma_I * Lf
    ghat_b = (r.sum(axis=0) + gamma_I * Lf.sum(axis=0)) if use_bias else None
    return ghat_b, ghat_a


def gradient(K, apply_L, y, alpha, b=None, *, gamma_A: float, gamma_I: float,
             hinge: bool = True) -> Gradient:
    """Gradient of eq. 7 and the preconditioned gradient ``P^{-1} grad`` (eq. 9).

    The ``gamma_I 1^T L f`` term of the bias gradient is kept, so a normalised Laplacian
    (for which ``L 1 != 0``) is handled correctly with a bias (spec pitfall 5).
    Cost: two ``O(n^2)`` kernel products (``K alpha`` and ``K ghat_a``) and one ``L`` product.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    use_bias = b is not None
    f = kernel_matvec(K, alpha) + _bias_vector(b, alpha)
    Lf = apply_L(f)
    ghat_b, ghat_a = preconditioned_gradient(f, y, alpha, Lf, gamma_A=gamma_A,
                                             gamma_I=gamma_I, use_bias=use_bias, hinge=hinge)
    grad_a = kernel_matvec(K, ghat_a)
    return Gradient(ghat_b, grad_a, ghat_b, ghat_a)
