"""Losses on a score matrix F (n x K) and their gradients dLoss/dF (spec §2, appendix 7.1).

* ``squared``:  (1/(2n)) ||F - Y||_F^2
* ``logistic`` with K = 1: (1/n) sum_i log(1 + exp(-s_i f_i)), labels s in {-1, +1} given as
  Y in {0, 1} (binary classification with a single weight vector, so that the 1-D exact
  projection applies);
* ``logistic`` with K >= 2: multinomial, (1/n) sum_i [logsumexp(F_i) - <F_i, Y_i>], Y one-hot.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit, logsumexp, softmax

__all__ = ["loss_value", "loss_grad", "LOSSES"]

LOSSES = ("squared", "logistic")


def loss_value(F, Y, loss):
    """Mean loss of scores ``F`` (n, K) against targets ``Y`` (n, K)."""
    n = F.shape[0]
    if loss == "squared":
        return 0.5 * float(np.sum((F - Y) ** 2)) / n
    if F.shape[1] == 1:
        s = 2.0 * Y - 1.0
        return -float(np.sum(log_expit(s * F))) / n
    return float(np.sum(logsumexp(F, axis=1)) - np.sum(F * Y)) / n


def loss_grad(F, Y, loss):
    """Gradient of :func:`loss_value` with respect to ``F``."""
    n = F.shape[0]
    if loss == "squared":
        return (F - Y) / n
    if F.shape[1] == 1:
        return (expit(F) - Y) / n
    return (softmax(F, axis=1) - Y) / n
