"""Compiled FPC stage for small dense problems (optional ``[fast]`` extra, numba).

One continuation stage of :func:`semisup.completion.fpc.fpc_path` (gradient step, Gram
shrinkage with the exact-SVD fallback, MC-1 row reset, losses, relative-change stop) in
one compiled loop. On the paper's synthetic problems (a 31 x 100 stacked matrix) numpy
spends most of each ~0.25 ms iteration in call overhead around a 31 x 31 ``eigh``; here
the iteration is the LAPACK/BLAS work alone. Same arithmetic as the numpy path up to
summation order, for both solvers ("fpc" and the accelerated "apg"; tested to agree to
1e-9 in ``tests/completion/test_fpc_numba.py`` and ``tests/completion/test_fpc_apg.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _smooth(Z, b, use_b, Yo, MYf, Xo, MXf, cy, nX, G, gb):
    """Loss value; writes the gradient into ``G`` (and ``gb``). Mirrors ``_Problem.smooth``."""
    t, n = Yo.shape
    d = Xo.shape[0]
    f = 0.0
    for i in range(t):
        bi = b[i] if use_b else 0.0
        acc = 0.0
        for j in range(n):
            y = Yo[i, j]
            mg = y * (Z[i, j] + bi)
            if MYf[i, j] != 0.0:
                # log(1 + exp(-mg)), stable for both signs
                if mg > 0.0:
                    f += cy * math.log1p(math.exp(-mg))
                else:
                    f += cy * (-mg + math.log1p(math.exp(mg)))
            # expit(-mg) = 1 / (1 + exp(mg)), stable for both signs
            if mg > 0.0:
                e = math.exp(-mg)
                s = e / (1.0 + e)
            else:
                s = 1.0 / (1.0 + math.exp(mg))
            g = -cy * s * y
            G[i, j] = g
            acc += g
        if use_b:
            gb[i] = acc
    sq = 0.0
    for k in range(d):
        for j in range(n):
            r = (Z[t + k, j] - Xo[k, j]) * MXf[k, j]
            sq += r * r
            G[t + k, j] = r / nX
    f += 0.5 * sq / nX
    for i in range(t + d, Z.shape[0]):
        for j in range(n):
            G[i, j] = 0.0
    return f


@njit(cache=True)
def _core_nuclear(U, sig, c, n):
    """Singular values of the MC-1 iterate after the last-row reset (see
    ``fpc._projected_core_svals``): eigenvalues of ``Gb^(1/2) Ga Gb^(1/2)``, the symmetric
    form of ``Ga Gb``. Returns (nuclear norm, numerical rank)."""
    m, r = U.shape
    Ga = np.zeros((r + 1, r + 1))
    for a in range(r):
        for bb in range(r):
            acc = 0.0
            for i in range(m - 1):
                acc += U[i, a] * U[i, bb]
            Ga[a, bb] = acc * sig[a] * sig[bb]
    Ga[r, r] = 1.0
    Gb = np.zeros((r + 1, r + 1))
    for a in range(r):
        Gb[a, a] = 1.0
        Gb[a, r] = c[a]
        Gb[r, a] = c[a]
    Gb[r, r] = n
    w, Q = np.linalg.eigh(Gb)
    for a in range(r + 1):
        w[a] = math.sqrt(max(w[a], 0.0))
    S = (Q * w) @ Q.T
    ev = np.linalg.eigvalsh(S @ Ga @ S)
    sv = np.sqrt(np.maximum(ev, 0.0))
    top = sv.max()
    nuc = sv.sum()
    rank = 0
    for a in range(r + 1):
        if sv[a] > 1e-10 * max(top, 1e-300):
            rank += 1
    return nuc, rank


@njit(cache=True)
def dense_stage(Z, b, use_b, mc1, Yo, MYf, Xo, MXf, cy, nX, tau_Z, tau_b, mu, tol,
                max_inner, F_prev, G, gb, min_rel_tau, history, h0, accel, work, bwork):
    """Iterate one stage in place on ``Z``, ``b``, ``G``, ``gb`` (``Z`` wide: m <= n).

    ``G``, ``gb`` hold the gradient at ``Z`` on entry and on exit. With ``accel`` (solver
    "apg") the step is taken at the FISTA point ``Y = Z + beta (Z - Z_old)`` with the
    gradient restart; ``work`` (3 x m x n) and ``bwork`` (2 x t) are scratch space.

    Returns ``(f, nuc, rank_out, rank, n_iter, converged, n_gram, n_exact, h, n_restart)``
    with ``h`` the next free slot of ``history``.
    """
    m, n = Z.shape
    t = b.shape[0]
    f = 0.0
    nuc = 0.0
    rank_out = 0
    rank = 0
    n_gram = 0
    n_exact = 0
    n_restart = 0
    h = h0
    converged = False
    it = 0
    ones = np.ones(n)
    theta = 1.0
    have_old = False
    Z_old = work[0]
    Yk = work[1]
    Gy = work[2]
    b_old = bwork[0]
    yb = bwork[1]
    for it in range(1, max_inner + 1):
        extrap = False
        if accel:
            theta_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * theta * theta))
            beta = (theta - 1.0) / theta_next
            theta = theta_next
            extrap = beta > 0.0 and have_old
        if extrap:
            for i in range(m):
                for j in range(n):
                    Yk[i, j] = Z[i, j] + beta * (Z[i, j] - Z_old[i, j])
            for i in range(t):
                yb[i] = b[i] + beta * (b[i] - b_old[i])
            # gradient at the extrapolated point (its value is not needed)
            _smooth(Yk, yb, use_b, Yo, MYf, Xo, MXf, cy, nX, Gy, gb)
            A = Yk - tau_Z * Gy
        else:
            A = Z - tau_Z * G
        if accel:
            Z_old[:, :] = Z
            for i in range(t):
                b_old[i] = b[i]
        if use_b:
            for i in range(t):
                b[i] = (yb[i] if extrap else b[i]) - tau_b * gb[i]
        tau = tau_Z * mu
        w, V = np.linalg.eigh(A @ A.T)
        top = max(w[m - 1], 0.0)
        if tau >= min_rel_tau * math.sqrt(top):
            n_gram += 1
            r = 0
            for a in range(m):
                if w[a] > tau * tau:
                    r += 1
            # the r largest eigenpairs, in decreasing order
            Uk = np.empty((m, r))
            s = np.empty(r)
            for a in range(r):
                s[a] = math.sqrt(w[m - 1 - a])
                for i in range(m):
                    Uk[i, a] = V[i, m - 1 - a]
            sig = s - tau
            Z[:, :] = ((Uk * (sig / s)) @ Uk.T) @ A
            if mc1:
                c = (Uk.T @ (A @ ones)) / s
        else:
            n_exact += 1
            Uf, sf, Vt = np.linalg.svd(A, full_matrices=False)
            r = 0
            for a in range(sf.shape[0]):
                if sf[a] > tau:
                    r += 1
            Uk = np.ascontiguousarray(Uf[:, :r])
            sig = sf[:r] - tau
            Z[:, :] = (Uk * sig) @ np.ascontiguousarray(Vt[:r])
            if mc1:
                c = np.ascontiguousarray(Vt[:r]) @ ones
        rank = r
        if mc1:
            for j in range(n):
                Z[m - 1, j] = 1.0
            nuc, rank_out = _core_nuclear(Uk, sig, c, float(n))
        else:
            nuc = sig.sum()
            rank_out = r
        if extrap:
            # gradient restart: <Y - Z_new, Z_new - Z_old> > 0 in the step's metric
            g = 0.0
            for i in range(m):
                for j in range(n):
                    g += (Yk[i, j] - Z[i, j]) * (Z[i, j] - Z_old[i, j])
            g /= tau_Z
            if use_b and tau_b > 0.0:
                gbv = 0.0
                for i in range(t):
                    gbv += (yb[i] - b[i]) * (b[i] - b_old[i])
                g += gbv / tau_b
            if g > 0.0:
                theta = 1.0
                n_restart += 1
        have_old = True
        f = _smooth(Z, b, use_b, Yo, MYf, Xo, MXf, cy, nX, G, gb)
        F = f + mu * nuc
        history[h] = F
        h += 1
        if abs(F_prev - F) < tol * abs(F_prev):
            converged = True
            break
        F_prev = F
    return f, nuc, rank_out, rank, it, converged, n_gram, n_exact, h, n_restart


@njit(cache=True)
def _expit_neg(mg):
    """``1 / (1 + exp(mg))``, stable for both signs."""
    if mg > 0.0:
        e = math.exp(-mg)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(mg))


@njit(cache=True)
def step_input(Z, Z_old, beta, b, b_old, use_b, Yo, Xo, MXf, all_x, cy, nX, tau_Z, tau_b,
               A, b_new):
    """One pass: ``A = Y - tau_Z grad f(Y)`` and ``b_new = b_Y - tau_b g_b(Y)`` at the point
    ``Y = Z + beta (Z - Z_old)`` (``beta = 0``: the plain FPC step from ``Z``), without
    forming ``Y`` or the gradient. For the large dense problems of ``fpc_path``, where
    numpy's separate passes over ``(t+d) x n`` arrays cost as much as the shrinkage."""
    t, n = Yo.shape
    d = Xo.shape[0]
    m = Z.shape[0]
    for i in range(t):
        bi = b[i] + beta * (b[i] - b_old[i]) if use_b else 0.0
        acc = 0.0
        for j in range(n):
            y = Z[i, j] + beta * (Z[i, j] - Z_old[i, j])
            lab = Yo[i, j]
            g = 0.0
            if lab != 0.0:         # unobserved labels are stored as 0: no loss term
                g = -cy * _expit_neg(lab * (y + bi)) * lab
            A[i, j] = y - tau_Z * g
            acc += g
        if use_b:
            b_new[i] = bi - tau_b * acc
    c = tau_Z / nX
    for k in range(d):
        for j in range(n):
            y = Z[t + k, j] + beta * (Z[t + k, j] - Z_old[t + k, j])
            r = y - Xo[k, j]
            if not all_x:
                r *= MXf[k, j]
            A[t + k, j] = y - c * r
    for i in range(t + d, m):
        for j in range(n):
            A[i, j] = Z[i, j] + beta * (Z[i, j] - Z_old[i, j])


@njit(cache=True)
def value_and_restart(Z_new, b_new, Z, Z_old, beta, b, b_old, use_b, extrap, Yo, MYf, Xo,
                      MXf, all_x, cy, nX, tau_Z, tau_b):
    """One pass: the loss value at ``(Z_new, b_new)`` and, when ``extrap``, the gradient
    restart quantity ``<Y - Z_new, Z_new - Z>`` (in the step's metric) with
    ``Y = Z + beta (Z - Z_old)`` recomputed on the fly. Returns ``(f, g)``."""
    t, n = Yo.shape
    d = Xo.shape[0]
    m = Z.shape[0]
    f = 0.0
    g = 0.0
    for i in range(t):
        bi = b_new[i] if use_b else 0.0
        for j in range(n):
            if MYf[i, j] != 0.0:
                mg = Yo[i, j] * (Z_new[i, j] + bi)
                if mg > 0.0:
                    f += cy * math.log1p(math.exp(-mg))
                else:
                    f += cy * (-mg + math.log1p(math.exp(mg)))
    sq = 0.0
    for k in range(d):
        for j in range(n):
            r = Z_new[t + k, j] - Xo[k, j]
            if not all_x:
                r *= MXf[k, j]
            sq += r * r
    f += 0.5 * sq / nX
    if extrap:
        for i in range(m):
            for j in range(n):
                zn = Z_new[i, j]
                z = Z[i, j]
                y = z + beta * (z - Z_old[i, j])
                g += (y - zn) * (zn - z)
        g /= tau_Z
        if use_b and tau_b > 0.0:
            gbv = 0.0
            for i in range(t):
                yb = b[i] + beta * (b[i] - b_old[i])
                gbv += (yb - b_new[i]) * (b_new[i] - b[i])
            g += gbv / tau_b
    return f, g
