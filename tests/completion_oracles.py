"""Shared material of the matrix-completion tests: the spec's tiny instance and
independent oracles (MC-b's optimum by cvxpy, the paper's step at a fixed point)."""

import numpy as np
import pytest

# the spec's tiny instance (matrix_completion.md §12)
X = np.array([[0.5, -1.2, 0.3, 2.0, -0.7, 1.1],
              [1.5, 0.4, -0.9, 0.8, 0.2, -1.3],
              [-0.6, 0.9, 1.4, -0.2, 0.5, 0.7]])
Y = np.array([[1, -1, 1, 1, -1, 1],
              [-1, -1, 1, -1, 1, 1]], dtype=float)
MX = np.array([[1, 1, 0, 1, 0, 1], [0, 1, 1, 1, 1, 0], [1, 0, 1, 0, 1, 1]], dtype=bool)
MY = np.array([[1, 0, 1, 0, 1, 0], [0, 1, 1, 1, 0, 0]], dtype=bool)


def cvxpy_mcb(Xr, MXr, Yr, MYr, lam, mu):
    """MC-b (eq. 5 with a bias row) solved by Clarabel: ``(value, Z, b)``."""
    cp = pytest.importorskip("cvxpy")
    t, n = Yr.shape
    d = Xr.shape[0]
    Z = cp.Variable((t + d, n))
    b = cp.Variable(t)
    iy, jy = np.nonzero(MYr)
    ix, jx = np.nonzero(MXr)
    margins = cp.multiply(Yr[iy, jy], (Z[:t] + cp.reshape(b, (t, 1), order="F")
                                       @ np.ones((1, n)))[iy, jy])
    obj = (mu * cp.normNuc(Z) + lam / iy.size * cp.sum(cp.logistic(-margins))
           + 0.5 / ix.size * cp.sum_squares(Z[t:][ix, jx] - Xr[ix, jx]))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL)
    return prob.value, Z.value, b.value


def mc1_step_change(Z, X, MX, Y, MY, lam, mu):
    """Largest change of ``Z`` under one more gradient-shrink-project step of the paper
    (MC-1, steps of eq. 10 with c = 6): zero at a fixed point."""
    from semisup.completion.fpc import smooth_part, step_sizes
    from semisup.linalg.lowrank import shrink
    tau_Z, _ = step_sizes(MY.sum(), MX.sum(), lam, 6)
    _, G, _ = smooth_part(Z, None, X, MX, Y, MY, lam)
    Z2 = shrink(Z - tau_Z * G, tau_Z * mu, method="exact").Z
    Z2[-1] = 1.0
    return float(np.abs(Z2 - Z).max())
