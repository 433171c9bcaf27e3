"""Conditional gradient (Frank–Wolfe) on normalised equivalence matrices (Algorithm 2; spec §5).

For the squared loss the inner minimisation over the cluster values is explicit, leaving a
problem over ``M = Z (Z^T Z)^{-1} Z^T``:

* features (paper §3.2, spec §5.1)::

      psi(M) = (1/(2n)) tr( Y^T (I + Xc M Xc^T / (lam n))^{-1} Y )

* samples (appendix 7.3, spec §5.2)::

      psi(M) = (1/(2n)) tr( Y^T (I + (X X^T o M) / (lam n))^{-1} Y )

Frank–Wolfe minimises psi over the convex hull of the equivalence matrices; its linear
minimisation oracle is k-means on the rows of ``(-grad psi)^{1/2}``, which is exact 1-D
k-means of ``u = Xc^T z`` for single-output feature clustering, and k-means++ on the rows of
``diag(beta) X`` for samples. The duality gap ``-<N_t - M_t, grad psi(M_t)>`` certifies
``psi(M_t) - min_hull psi``.

Rounding. The paper outputs the last oracle's partition ("FW rounding"). Near the relaxed
optimum that oracle is k-means of ``u = Xc^T z``, whose within-group spread (the residual's
correlations, of order sigma sqrt(n)) swamps the between-group signal ``lam n v_q`` unless
lam is large, so the last oracle is close to an arbitrary partition of the optimal face even
when the relaxed optimum M itself is close to the true equivalence matrix (measured on the
Table 2 setting: ||M - M*||_F / ||M*||_F = 0.03, last oracle error 14 against 0.1 for the
max-weight atom). ``rounding="best"`` (default) returns instead the visited atom with the
smallest psi; it is never worse, in objective, than the last oracle or the start M_0.
"""

from __future__ import annotations

import contextlib
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .._progress import log
from .._validation import check_memory, warn_convergence
from ..linalg.kmeans1d import kmeans1d
from .problems import CenteredDesign
from .projections import group_sums, indicator, project_kmeans

__all__ = ["FWResult", "indicator", "psi_features", "psi_samples", "cluster_values",
           "ridge_per_group", "fw_feature_clustering", "fw_sample_clustering",
           "fw_features_nbytes", "fw_samples_nbytes"]

_DENSE_MAX_N = 1500  # feature FW keeps the n x n matrix Xc M Xc^T up to this n


class FWResult(NamedTuple):
    """FW output: rounded partition ``labels`` and values ``V`` (Q, K) or experts (Q, d, K);
    the relaxed M as ``atoms`` (list of label vectors) with ``weights``; per-iteration
    ``psi`` and ``gaps``."""

    labels: np.ndarray
    V: np.ndarray
    atoms: list
    weights: np.ndarray
    psi: list
    gaps: list
    n_iter: int
    converged: bool


def _relabel(labels):
    """Canonical labels (numbered by first occurrence) so identical partitions compare equal."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty_like(first)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inv.ravel()]


def _as_2d(y):
    y = np.asarray(y, dtype=np.float64)
    return y[:, None] if y.ndim == 1 else y


def cluster_values(A, Y, labels, lam):
    """v*(Z) = (Z^T Xc^T Xc Z + lam n Z^T Z)^{-1} Z^T Xc^T Y (spec §5.1), shape (Q, K).

    ``A`` is a :class:`~semisup.clustering.problems.CenteredDesign`.
    """
    labels = _relabel(labels)
    Z = indicator(labels)
    XZ = A.matmat(Z)
    lhs = XZ.T @ XZ + lam * A.n * np.diag(Z.sum(axis=0))
    return labels, np.linalg.solve(lhs, XZ.T @ _as_2d(Y))


def psi_features(X, y, labels, lam, center=False):
    """psi(M) for the feature partition ``labels`` (spec §5.1) via the explicit minimiser."""
    A = CenteredDesign(X, center)
    Y = _as_2d(y)
    labels, V = cluster_values(A, Y, labels, lam)
    W = V[labels]
    R = A.matmat(W) - Y
    return 0.5 * float(np.sum(R * R)) / A.n + 0.5 * lam * float(np.sum(W * W))


def ridge_per_group(X, Y, labels, lam, n_groups, previous=None):
    """Experts v_q = (n lam s_q I + X_q^T X_q)^{-1} X_q^T Y_q (spec §5.2), shape (Q, d, K).

    An empty group keeps ``previous[q]`` (zeros when not given). With ``lam = 0`` each
    expert is the minimum-norm least-squares fit (a group smaller than d is not an error).
    """
    n, d = X.shape
    Y = _as_2d(Y)
    V = np.zeros((n_groups, d, Y.shape[1])) if previous is None else previous.copy()
    for q in range(n_groups):
        idx = labels == q
        s = int(idx.sum())
        if s == 0:
            continue
        Xq = X[idx]
        if lam > 0:
            V[q] = np.linalg.solve(Xq.T @ Xq + n * lam * s * np.eye(d), Xq.T @ Y[idx])
        else:  # no ridge: X_q^T X_q is singular whenever s < d
            V[q] = np.linalg.lstsq(Xq, Y[idx], rcond=None)[0]
    return V


def psi_samples(X, y, labels, lam):
    """psi(M) for the sample partition ``labels`` (spec §5.2) = sum of per-group ridge costs."""
    X = np.asarray(X, dtype=np.float64)
    Y = _as_2d(y)
    n = X.shape[0]
    labels = _relabel(labels)
    Q = int(labels.max()) + 1
    V = ridge_per_group(X, Y, labels, lam, Q)
    R = np.einsum("id,idk->ik", X, V[labels]) - Y
    return 0.5 * float(np.sum(R * R)) / n + 0.5 * lam * float(np.sum(V[labels] ** 2))


def _oracle_features(U, n_clusters, random_state):
    """argmax_N tr(U^T N U): exact 1-D k-means for one output, k-means++ otherwise."""
    if U.shape[1] == 1:
        labels = kmeans1d(U[:, 0], n_clusters).labels
    else:
        labels = project_kmeans(U, n_clusters, random_state=random_state).labels
    return _relabel(labels)


def _best_atom(candidates, psi_of):
    """The candidate partition with the smallest psi (duplicates evaluated once)."""
    seen, best, best_psi = set(), None, np.inf
    for labels in candidates:
        key = labels.tobytes()
        if key in seen:
            continue
        seen.add(key)
        value = psi_of(labels)
        if value < best_psi:
            best, best_psi = labels, value
    return best


@contextlib.contextmanager
def _singular_relaxation(lam):
    """Turn the Cholesky failure of I + H/(lam n) into an error about lam: once H/(lam n)
    exceeds ~1/eps the identity is lost to rounding and the matrix is numerically singular."""
    try:
        yield
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise ValueError(f"the Frank-Wolfe relaxation is numerically singular at lam={lam:.3g} "
                         "(alpha in ClusteredRegressor / ClusteredClassifier): the "
                         "relaxation divides by lam, which is too small relative to "
                         "||X||^2 / n; use a larger lam, or projected gradient "
                         f"(solver='pg') instead. ({exc})") from None


def _trace_N(U, labels):
    """tr(U^T N U) = sum_q ||sum_{i in q} U_i||^2 / s_q."""
    sums = group_sums(U, labels, int(labels.max()) + 1)
    return float(np.sum(sums ** 2 / np.bincount(labels)[:, None]))


class _FeatureMixture:
    """M = sum_k theta_k N_k kept as atoms; solves (I + Xc M Xc^T/(lam n)) z = Y.

    Small n: the n x n matrix H = Xc M Xc^T is updated in O(n^2 Q) per step and factorised
    (O(n^3/3)). Large n: Woodbury in the r = sum_k Q_k columns of
    A = [sqrt(theta_k) Xc Z_k (Z_k^T Z_k)^{-1/2}], with the Gram of the blocks cached.
    """

    def __init__(self, A, ln, dense):
        self.A, self.ln, self.dense = A, ln, dense
        self.atoms, self.weights, self.blocks = [], [], []
        self.gram = np.zeros((0, 0))
        self.H = np.zeros((A.n, A.n)) if dense else None

    def block(self, labels):
        Z = indicator(labels)
        return self.A.matmat(Z) / np.sqrt(Z.sum(axis=0))

    def add(self, labels):
        key = labels.tobytes()
        for k, a in enumerate(self.atoms):
            if a.tobytes() == key:
                return k
        B = self.block(labels)
        if not self.dense:
            old = np.hstack(self.blocks) if self.blocks else np.zeros((self.A.n, 0))
            cross = old.T @ B
            self.gram = np.block([[self.gram, cross], [cross.T, B.T @ B]])
            self.blocks.append(B)
        self.atoms.append(labels)
        self.weights.append(0.0)
        return len(self.atoms) - 1

    def solve(self, Y, weights=None, H=None):
        """z = (I + Xc M Xc^T/(lam n))^{-1} Y and u^T M u = z^T Xc M Xc^T z."""
        ln = self.ln
        if self.dense:
            H = self.H if H is None else H
            with _singular_relaxation(ln / self.A.n):
                z = ln * sla.cho_solve(sla.cho_factor(ln * np.eye(self.A.n) + H), Y)
            return z, float(np.sum(z * (H @ z)))
        weights = self.weights if weights is None else weights
        if not self.blocks:
            return Y.copy(), 0.0
        scale = np.concatenate([np.full(b.shape[1], np.sqrt(w))
                                for b, w in zip(self.blocks, weights)])
        Amat = np.hstack(self.blocks) * scale
        G = scale[:, None] * self.gram * scale[None, :]
        with _singular_relaxation(ln / self.A.n):
            c = sla.solve(ln * np.eye(G.shape[0]) + G, Amat.T @ Y, assume_a="pos")
        z = Y - Amat @ c
        return z, float(np.sum((Amat.T @ z) ** 2))

    def step(self, k, gamma, Y, commit=True):
        """Solve at M + gamma (N_k - M); commit the move if asked."""
        weights = [(1 - gamma) * w for w in self.weights]
        weights[k] += gamma
        H = None
        if self.dense:
            B = self.block(self.atoms[k])
            H = (1 - gamma) * self.H + gamma * (B @ B.T)
        out = self.solve(Y, weights, H)
        if commit:
            self.weights = weights
            if self.dense:
                self.H = H
        return out


_FW_CONSTRAINTS = {
    "Y": ["array-like"],
    "n_clusters": [Interval(Integral, 1, None, closed="left")],
    "lam": [Interval(Real, 0, None, closed="neither")],  # the relaxation divides by lam
    "labels0": ["array-like", None],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, None, None, closed="neither")],
    "line_search": ["boolean"],
    "rounding": [StrOptions({"best", "last"})],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


@validate_params({**_FW_CONSTRAINTS, "X": ["array-like", "sparse matrix"],
                  "center": ["boolean"]}, prefer_skip_nested_validation=True)
def fw_feature_clustering(X, Y, n_clusters, lam, *, labels0=None, max_iter=1000, tol=1e-8,
                          center=True, line_search=False, rounding="best", random_state=None,
                          verbose=False) -> FWResult:
    """Frank–Wolfe on equivalence matrices for feature clustering (Algorithm 2, spec §5.1).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    Y : ndarray of shape (n,) or (n, K)
        Targets, centred by the caller when ``center`` (squared loss).
    n_clusters : int
    lam : float
        Ridge weight lambda > 0.
    labels0 : ndarray of shape (d,), optional
        Initial partition M_0 (the LSK partition in the paper's experiments); None starts
        from M_0 = 0, which gives the same M_1 = N_0 as any start up to the first gradient.
    max_iter : int
        T; iterations t = 0..T-1.
    tol : float
        Stop when the duality gap falls below ``tol``.
    center : bool
        Centre the columns of X implicitly.
    line_search : bool
        False: the classical step 2/(t+2) (paper). True: backtracking on that step (halve
        until psi decreases), which makes psi monotone; stops when no step decreases psi.
    rounding : {"best", "last"}
        Partition returned: "best" the atom of the run (M_0 and every oracle) with the
        smallest psi; "last" the last oracle's (the paper's FW rounding, see the module
        docstring for why it is poor on noisy problems).
    random_state : seed of the k-means++ oracle (multi-output Y only).
    verbose : bool

    Returns
    -------
    FWResult
        ``V`` of shape (Q, K): the optimal values for the rounded partition.

    Notes
    -----
    Per iteration O(n^2 Q + n^3/3) (n <= 1500, n x n form) or O(n r^2 + r^3) (Woodbury,
    r = number of columns of the atoms) plus O(nnz(X) K) and the oracle O(Q d log d).
    ``rounding="best"`` adds O(nnz(X) Q + n Q^2) per distinct atom at the end.
    Memory: :func:`fw_features_nbytes` (refused with a ``MemoryError`` before any work when
    it does not fit).
    """
    if not sp.issparse(X):
        X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    check_memory(fw_features_nbytes(n, n_clusters, max_iter),
                 f"Frank-Wolfe on feature clusters (n = {n}, up to {max_iter} atoms of "
                 f"{n_clusters} columns)", "Lower max_iter (fw_max_iter in the estimators) "
                 "or use projected gradient (solver='pg').")
    A = CenteredDesign(X, center)
    Y = _as_2d(Y)
    mix = _FeatureMixture(A, lam * n, dense=n <= _DENSE_MAX_N)
    if labels0 is not None:
        k0 = mix.add(_relabel(np.asarray(labels0)))
        mix.step(k0, 1.0, Y)
    z, uMu = mix.solve(Y)
    psis, gaps = [], []
    converged = False
    labels = None
    t = 0
    for t in range(max_iter):
        U = A.rmatmat(z)
        psis.append(0.5 * float(np.sum(Y * z)) / n)
        labels = _oracle_features(U, n_clusters, random_state)
        gap = (_trace_N(U, labels) - uMu) / (2 * lam * n * n)
        gaps.append(gap)
        if verbose and t % 50 == 0:
            log(f"[fw] iter {t} psi {psis[-1]:.8g} gap {gap:.3g}")
        if gap < tol:
            converged = True
            break
        k = mix.add(labels)
        gamma = 2.0 / (t + 2)
        if line_search:
            while gamma > 1e-12:
                z_new, uMu_new = mix.step(k, gamma, Y, commit=False)
                if 0.5 * float(np.sum(Y * z_new)) / n < psis[-1]:
                    break
                gamma *= 0.5
            if gamma <= 1e-12:  # no decreasing FW step: stationary for this oracle
                converged = True
                break
        z, uMu = mix.step(k, gamma, Y)
    if not converged:
        warn_convergence(f"Frank-Wolfe stopped after max_iter={max_iter} iterations with duality "
                         f"gap {gaps[-1]:.3g} > tol={tol}; its O(1/t) rate is slow: increase "
                         "max_iter, raise tol, or refine with projected gradient "
                         "(solver='fwpg' in the estimators).")
    if rounding == "best":
        def psi_of(lab):
            lab, V = cluster_values(A, Y, lab, lam)
            W = V[lab]
            R = A.matmat(W) - Y
            return 0.5 * float(np.sum(R * R)) / n + 0.5 * lam * float(np.sum(W * W))
        labels = _best_atom([*mix.atoms, labels], psi_of)
    labels, V = cluster_values(A, Y, labels, lam)
    return FWResult(labels, V, mix.atoms, np.array(mix.weights), psis, gaps, t + 1, converged)


def fw_features_nbytes(n_samples, n_clusters, max_iter):
    """Peak memory of :func:`fw_feature_clustering`, worst case (every iteration a new
    atom): two n x n float64 matrices for n <= 1500, else the Woodbury blocks, n x r with
    r = n_clusters (max_iter + 1) columns, held about three times (blocks, their stack, the
    scaled stack), plus their r x r Gram matrix."""
    n = float(n_samples)
    if n <= _DENSE_MAX_N:
        return 2.0 * 8.0 * n * n
    r = float(n_clusters) * (max_iter + 1)
    return 8.0 * (3.0 * n * r + 2.0 * r * r)


def fw_samples_nbytes(n_samples):
    """Peak memory of :func:`fw_sample_clustering`: four n x n float64 matrices (``X X^T``,
    the current and the candidate ``H``, the matrix being factorised)."""
    return 4.0 * 8.0 * float(n_samples) ** 2


@validate_params({**_FW_CONSTRAINTS, "X": ["array-like"],
                  "n_init": [Interval(Integral, 1, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def fw_sample_clustering(X, Y, n_clusters, lam, *, labels0=None, max_iter=200, tol=1e-8,
                         line_search=False, rounding="best", random_state=None, n_init=3,
                         verbose=False) -> FWResult:
    """Frank–Wolfe on equivalence matrices for sample clustering (spec §5.2, appendix 7.3).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Dense design (append a ones column for per-expert intercepts).
    Y : ndarray of shape (n,) or (n, K)
    n_clusters : int
    lam : float
        lambda > 0.
    labels0 : ndarray of shape (n,), optional
        Initial partition; None starts from M_0 = 0.
    max_iter, tol, line_search, rounding : as in :func:`fw_feature_clustering`.
    random_state, n_init : seeding and restarts of the k-means++ oracle (approximate, so
        the gap is an estimate and may even be negative).

    Returns
    -------
    FWResult
        ``V`` of shape (Q, d, K): the ridge experts of the rounded partition.

    Raises
    ------
    MemoryError
        Before any work, when the n x n matrices (:func:`fw_samples_nbytes`) do not fit.

    Notes
    -----
    Per iteration O(n^3 / 3) (Cholesky of the n x n system) + k-means of n points in R^{dK}.
    ``rounding="best"`` adds Q ridge solves, O(n d^2 + Q d^3), per distinct atom.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = _as_2d(Y)
    n = X.shape[0]
    check_memory(fw_samples_nbytes(n), f"Frank-Wolfe on sample clusters (n = {n}: n x n "
                 "matrices X X^T, the relaxed equivalence matrix and its factorisation)",
                 "Use alternating minimisation (solver='am' in ClusteredRegressor / "
                 "ClusteredClassifier, O(n d) memory) or fewer samples.")
    ln = lam * n
    K = X @ X.T

    def k_times_equiv(labels, H=None, gamma=1.0):
        """(1 - gamma) H + gamma K o N, N the equivalence matrix of ``labels`` (H = 0 when
        None): K o N has the diagonal blocks K_qq / s_q, the rest 0, so only they are added
        (2x faster than forming K o N, the same numbers)."""
        out = np.zeros_like(K) if H is None else (1 - gamma) * H
        for q, s in enumerate(np.bincount(labels)):
            block = np.ix_(*2 * (np.flatnonzero(labels == q),))
            out[block] += gamma * (K[block] / s)
        return out

    def solve(H):
        A = H / ln
        A.flat[:: n + 1] += 1.0
        with _singular_relaxation(lam):
            return sla.cho_solve(sla.cho_factor(A, overwrite_a=True, check_finite=False), Y,
                                 check_finite=False)

    H = np.zeros((n, n)) if labels0 is None else k_times_equiv(_relabel(np.asarray(labels0)))
    beta = solve(H)
    psis, gaps, atoms, weights = [], [], [], []
    converged = False
    labels = None
    t = 0
    for t in range(max_iter):
        psis.append(0.5 * float(np.sum(Y * beta)) / n)
        B = np.einsum("id,ik->idk", X, beta).reshape(n, -1)
        labels = _relabel(project_kmeans(B, n_clusters, random_state=random_state,
                                         n_init=n_init).labels)
        gap = (_trace_N(B, labels) - float(np.sum(beta * (H @ beta)))) / (2 * lam * n * n)
        gaps.append(gap)
        if verbose and t % 20 == 0:
            log(f"[fw-samples] iter {t} psi {psis[-1]:.8g} gap {gap:.3g}")
        if gap < tol:
            converged = True
            break
        gamma = 2.0 / (t + 2)
        while True:
            H_new = k_times_equiv(labels, H, gamma)
            beta_new = solve(H_new)
            if not line_search or 0.5 * float(np.sum(Y * beta_new)) / n < psis[-1]:
                break
            gamma *= 0.5
            if gamma <= 1e-12:
                break
        if line_search and gamma <= 1e-12:  # no decreasing step for this oracle
            converged = True
            break
        H, beta = H_new, beta_new
        weights = [(1 - gamma) * w for w in weights] + [gamma]
        atoms.append(labels)
    if not converged:
        warn_convergence(f"Frank-Wolfe (samples) stopped after max_iter={max_iter} iterations with "
                         f"gap {gaps[-1]:.3g} > tol={tol}; increase max_iter or refine with "
                         "alternating minimisation.")
    if rounding == "best":
        start = [] if labels0 is None else [_relabel(np.asarray(labels0))]
        labels = _best_atom([*start, *atoms, labels], lambda lab: psi_samples(X, Y, lab, lam))
    Q = int(labels.max()) + 1
    V = ridge_per_group(X, Y, labels, lam, Q)
    return FWResult(labels, V, atoms, np.array(weights), psis, gaps, t + 1, converged)
