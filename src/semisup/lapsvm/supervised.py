"""Supervised baselines of the paper's Table 4: SVM and RLSC on the labelled points only.

* SVM: ``min sum_i max(0, 1 - y_i f_i) + gamma_A ||f||_K^2``, i.e. libsvm with
  ``C = 1 / (2 gamma_A)``.
* RLSC: ``min 1/2 (sum_i (y_i - f_i)^2 + gamma_A alpha^T K alpha)`` — LapRLS with
  ``gamma_I = 0`` on the labelled points: ``(K + gamma_A I) alpha = y`` without a bias.

Both take the l x l kernel of the labelled points and return coefficients on them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.svm import SVC

from .newton import laprls_closed_form
from .result import SolverResult

__all__ = ["svm_fit", "rlsc_fit"]


def _columns(y):
    y = np.asarray(y, dtype=np.float64)
    return (y[:, None], True) if y.ndim == 1 else (y, False)


def svm_fit(K_ll, y_l, *, gamma_A: float, tol: float = 1e-6) -> SolverResult:
    """Kernel SVM (L1 hinge) on labelled points; ``y_l`` is ``+1/-1`` (l,) or (l, c)."""
    if not gamma_A > 0:
        raise ValueError(f"gamma_A must be positive for the SVM, got {gamma_A}.")
    Y, squeeze = _columns(y_l)
    K_ll = np.asarray(K_ll, dtype=np.float64)
    alphas, bs = np.zeros(Y.shape), np.zeros(Y.shape[1])
    for j in range(Y.shape[1]):
        svc = SVC(kernel="precomputed", C=1.0 / (2.0 * gamma_A), tol=tol).fit(K_ll, Y[:, j])
        alphas[svc.support_, j] = svc.dual_coef_[0]
        bs[j] = svc.intercept_[0]
    return SolverResult(alpha=alphas[:, 0] if squeeze else alphas,
                        b=float(bs[0]) if squeeze else bs, n_iter=1, converged=True,
                        stop_reason="libsvm")


def rlsc_fit(K_ll, y_l, *, gamma_A: float, use_bias: bool = False) -> SolverResult:
    """Regularised least-squares classifier (one ``O(l^3)`` solve)."""
    l = np.shape(K_ll)[0]
    return laprls_closed_form(np.asarray(K_ll, dtype=np.float64), sp.csr_matrix((l, l)), y_l,
                              gamma_A=gamma_A, gamma_I=0.0, use_bias=use_bias)
