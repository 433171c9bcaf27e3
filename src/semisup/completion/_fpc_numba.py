"""Compiled FPC stage for small dense problems (optional ``[fast]`` extra, numba).

One continuation stage of :func:`semisup.completion.fpc.fpc_path` (gradient step, Gram
shrinkage with the exact-SVD fallback, MC-1 row reset, losses, relative-change stop) in
one compiled loop. On the paper's synthetic problems (a 31 x 100 stacked matrix) numpy
spends most of each ~0.25 ms iteration in call overhead around a 31 x 31 ``eigh``; here
the iteration is the LAPACK/BLAS work alone. Same arithmetic as the numpy path up to
summation order (tested to agree to 1e-9 in ``tests/completion/test_fpc_numba.py``).
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
                max_inner, F_prev, G, gb, min_rel_tau, history, h0):
    """Iterate one stage in place on ``Z``, ``b``, ``G``, ``gb`` (``Z`` wide: m <= n).

    Returns ``(f, nuc, rank_out, rank, n_iter, converged, n_gram, n_exact, h)`` with
    ``h`` the next free slot of ``history``.
    """
    m, n = Z.shape
    f = 0.0
    nuc = 0.0
    rank_out = 0
    rank = 0
    n_gram = 0
    n_exact = 0
    h = h0
    converged = False
    it = 0
    ones = np.ones(n)
    for it in range(1, max_inner + 1):
        if use_b:
            for i in range(b.shape[0]):
                b[i] -= tau_b * gb[i]
        A = Z - tau_Z * G
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
        f = _smooth(Z, b, use_b, Yo, MYf, Xo, MXf, cy, nX, G, gb)
        F = f + mu * nuc
        history[h] = F
        h += 1
        if abs(F_prev - F) < tol * abs(F_prev):
            converged = True
            break
        F_prev = F
    return f, nuc, rank_out, rank, it, converged, n_gram, n_exact, h
