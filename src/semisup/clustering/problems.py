"""Problem instances: objective and gradient for clustered features and clustered samples.

Feature clustering (spec §2.1, §2.3; paper eq. (2) and appendix 7.1)::

    min_{W, b}  Loss(Y, Xc W + 1 b^T) + (lam/2) ||W||_F^2    s.t. the d rows of W take <= Q values

with ``Xc`` the column-centred design (kept implicit so that sparse X stays sparse). For the
squared loss Y is centred too and no intercept is optimised (it is recovered afterwards);
for the logistic loss the intercept ``b`` is the last row of the variable and is never
projected.

Sample clustering (spec §2.2; paper eq. (3)/(4))::

    min_{W^1..W^n}  (1/n) sum_i loss(Y_i, x_i^T W^i) + (lam/2) sum_i ||W^i||_F^2
                    s.t. the n matrices W^i take <= Q values

with the variable stored as an array of shape (n, d, K).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from ..linalg.lowrank import spectral_norm_sq
from .losses import loss_grad, loss_value

__all__ = ["CenteredDesign", "FeatureProblem", "SampleProblem"]


class CenteredDesign:
    """``Xc = X - 1 mean^T`` applied without forming it (X dense or sparse)."""

    def __init__(self, X, center=True):
        self.X = X
        self.n, self.d = X.shape
        mean = np.asarray(X.mean(axis=0)).ravel() if center else np.zeros(X.shape[1])
        self.mean = mean

    def matmat(self, W):
        return np.asarray(self.X @ W) - self.mean @ W

    def rmatmat(self, G):
        return np.asarray(self.X.T @ G) - np.outer(self.mean, G.sum(axis=0))

    def spectral_norm_sq(self):
        """Largest squared singular value of Xc.

        Exact (top eigenvalue of the smaller Gram matrix) when min(n, d) <= 500; otherwise
        Lanczos on Xc as an operator (:func:`semisup.linalg.lowrank.spectral_norm_sq`),
        O(nnz(X)) per product, without forming Xc.
        """
        m = min(self.n, self.d)
        if m <= 500:
            Xd = self.X.toarray() if sp.issparse(self.X) else np.asarray(self.X)
            Xc = Xd - self.mean
            G = Xc.T @ Xc if self.d <= self.n else Xc @ Xc.T
            return float(sla.eigvalsh(G, subset_by_index=[m - 1, m - 1])[0])
        return spectral_norm_sq(self.operator())

    def operator(self) -> LinearOperator:
        """Xc as a ``LinearOperator`` (``Xc @ w``, ``Xc.T @ r``), O(nnz(X) + n + d) a product."""
        return LinearOperator((self.n, self.d), dtype=np.float64,
                              matvec=lambda w: self.matmat(np.reshape(w, (self.d, 1))).ravel(),
                              rmatvec=lambda g: self.rmatmat(np.reshape(g, (self.n, 1))).ravel(),
                              matmat=self.matmat, rmatmat=self.rmatmat)


class FeatureProblem:
    """Objective, gradient and Lipschitz constant of feature clustering (see module doc).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    Y : ndarray of shape (n, K)
        Targets (centred by the caller for the squared loss) or one-hot / 0-1 labels.
    lam : float
        Ridge weight lambda >= 0.
    loss : {"squared", "logistic"}
    intercept : bool
        Optimise an unpenalised, unprojected intercept (last row of the variable).
    center : bool
        Centre the columns of X (implicitly); off reproduces the paper's formulas verbatim.
    """

    def __init__(self, X, Y, lam, loss, intercept, center=True):
        self.A = CenteredDesign(X, center)
        self.Y, self.lam, self.loss, self.intercept = Y, float(lam), loss, intercept
        self.d = X.shape[1]

    def split(self, T):
        return (T[:-1], T[-1]) if self.intercept else (T, None)

    def scores(self, T):
        W, b = self.split(T)
        F = self.A.matmat(W)
        return F if b is None else F + b

    def objective(self, T):
        W, _ = self.split(T)
        return loss_value(self.scores(T), self.Y, self.loss) + 0.5 * self.lam * float(np.sum(W * W))

    def gradient(self, T):
        W, _ = self.split(T)
        G = loss_grad(self.scores(T), self.Y, self.loss)
        gW = self.A.rmatmat(G) + self.lam * W
        return np.vstack([gW, G.sum(axis=0)]) if self.intercept else gW

    def lipschitz(self):
        """Upper bound on the gradient's Lipschitz constant (the loss curvature times ||Xc||^2/n)."""
        curv = 1.0 if self.loss == "squared" else (0.25 if self.Y.shape[1] == 1 else 0.5)
        s2 = self.A.spectral_norm_sq()
        if self.intercept:  # the ones column is orthogonal to the centred columns
            s2 = max(s2, self.A.n)
        return curv * s2 / self.A.n + self.lam


class SampleProblem:
    """Objective and gradient of sample clustering with one predictor per sample.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (n, K)
    lam : float
    loss : {"squared", "logistic"}
    """

    def __init__(self, X, Y, lam, loss):
        self.X, self.Y, self.lam, self.loss = np.asarray(X, dtype=np.float64), Y, float(lam), loss

    def scores(self, W):
        return np.einsum("id,idk->ik", self.X, W)

    def objective(self, W):
        return loss_value(self.scores(W), self.Y, self.loss) + 0.5 * self.lam * float(np.sum(W * W))

    def gradient(self, W):
        G = loss_grad(self.scores(W), self.Y, self.loss)
        return np.einsum("id,ik->idk", self.X, G) + self.lam * W

    def lipschitz(self):
        """The Hessian is block diagonal with blocks x_i x_i^T / n: max_i ||x_i||^2/n + lam."""
        curv = 1.0 if self.loss == "squared" else (0.25 if self.Y.shape[1] == 1 else 0.5)
        return curv * float(np.max(np.sum(self.X ** 2, axis=1))) / self.X.shape[0] + self.lam
