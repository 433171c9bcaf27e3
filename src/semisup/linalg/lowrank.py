"""Singular value shrinkage (the proximal operator of the nuclear norm).

``shrink(A, tau)`` returns ``U diag(max(sigma - tau, 0)) V^T`` for the thin SVD
``A = U diag(sigma) V^T``: the minimiser of ``tau ||Z||_* + 0.5 ||Z - A||_F^2``.

Three ways to get the singular triplets above ``tau``, chosen by ``method="auto"``:

``"exact"``
    LAPACK thin SVD (``gesdd``, falling back to ``gesvd`` when ``gesdd`` fails to
    converge, which happens on some completion iterates). ``O(m n min(m, n))``.
``"gram"``
    Eigendecomposition of the smaller Gram matrix ``A A^T`` (or ``A^T A``), then
    ``Z = (U diag((sigma - tau)_+ / sigma) U^T) A``: exact in exact arithmetic and several
    times faster than ``gesdd`` on wide matrices (a SYRK, an ``m x m`` ``eigh`` and one
    GEMM; the right singular vectors are formed only if asked for). Squaring loses accuracy for singular values below ``sqrt(eps) sigma_1``;
    the routine checks that ``tau >= 1e-6 sigma_1`` and otherwise falls back to
    ``"exact"``.
``"randomized"``
    Subspace iteration on a block of ``k`` vectors (warm-startable with the previous
    right singular vectors, which is what makes it cheap inside a proximal-gradient loop),
    ``O(m n k)`` per power step. The block is doubled until its smallest singular value
    falls below ``tau``, so every triplet that survives shrinkage is captured; if the block
    would exceed ``max(m, n) / RANDOMIZED_MAX_FRACTION`` it switches to ``"gram"``.

``"auto"`` uses ``"randomized"`` when a rank estimate is given (the previous iterate's
rank) and ``rank + oversampling <= min(m, n) / RANDOMIZED_MAX_FRACTION`` and
``min(m, n) >= RANDOMIZED_MIN_DIM``; otherwise ``"gram"``. The crossover constants were
measured by ``semisup bench completion --parts shrink`` (docs/benchmarks/completion.md):
on 118 x 2417 the Gram route beat a randomized rank-5 block, on 300 x 2000 it lost.

:func:`shrink_lowrank_plus_sparse` shrinks ``U diag(s) V^T + S`` (``S`` sparse) without
forming it: the proximal-gradient step of a completion problem whose gradient lives on the
observed entries.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .sparse import csr_dense_matmul

__all__ = ["ShrinkResult", "shrink", "shrink_lowrank_plus_sparse", "nuclear_norm",
           "spectral_norm_sq", "svd_thin"]

#: randomized SVD only when the block is at most min(m, n) / this
RANDOMIZED_MAX_FRACTION = 5
#: below this smaller dimension an exact factorisation is cheap enough
RANDOMIZED_MIN_DIM = 200
#: "gram" is accepted when tau >= GRAM_MIN_REL_TAU * sigma_1: a singular value near the
#: threshold then carries an absolute error about eps sigma_1^2 / (2 tau) <= 1.2e-10 sigma_1
GRAM_MIN_REL_TAU = 1e-6


class ShrinkResult:
    """Output of :func:`shrink`.

    Attributes
    ----------
    Z : ndarray of shape (m, n)
        The shrunk matrix.
    sigma : ndarray
        Singular values of ``Z`` (those of ``A`` above ``tau``, minus ``tau``), decreasing.
    U : ndarray of shape (m, rank)
        Left singular vectors of ``Z``.
    Vt : ndarray of shape (rank, n)
        Right singular vectors of ``Z`` (computed on first access by the "gram" method,
        which does not need them to form ``Z``).
    method : str
        The method actually used.
    """

    def __init__(self, Z, sigma, U, Vt, method, A=None):
        self.Z, self.sigma, self.U, self.method = Z, sigma, U, method
        self._Vt, self._A = Vt, A

    @property
    def Vt(self):
        if self._Vt is None:
            self._Vt = (self.U.T @ self._A) / (self.sigma + self._tau)[:, None]
            self._A = None
        return self._Vt

    def right_sums(self):
        """``Vt @ 1`` without forming ``Vt`` when it is lazy (``O(m n)``)."""
        if self._Vt is None:
            return (self.U.T @ self._A.sum(axis=1)) / (self.sigma + self._tau)
        return self._Vt.sum(axis=1)

    @property
    def rank(self) -> int:
        return int(self.sigma.size)

    @property
    def nuclear_norm(self) -> float:
        return float(self.sigma.sum())


def svd_thin(A):
    """Thin SVD by ``gesdd``, retried with ``gesvd`` when ``gesdd`` does not converge."""
    try:
        return sla.svd(A, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    except np.linalg.LinAlgError:
        return sla.svd(A, full_matrices=False, check_finite=False, lapack_driver="gesvd")


def spectral_norm_sq(A) -> float:
    """``||A||_2^2`` (e.g. the Lipschitz constant of a least-squares gradient, times n).

    ``A``: dense or sparse matrix, or a ``scipy.sparse.linalg.LinearOperator``. A dense SVD
    when a matrix's smaller side is at most 500; otherwise Lanczos (ARPACK ``svds``,
    deterministic start, relative tolerance 1e-10): a few dozen products with ``A`` instead
    of an ``O(m n min(m, n))`` SVD. On the movie-review design of the clustering paper
    (4 005 x 5 623) it takes 0.9 s where the SVD took 84 s.
    """
    import scipy.sparse as sp
    from scipy.sparse.linalg import LinearOperator, svds
    m = min(A.shape)
    if not isinstance(A, LinearOperator):
        if m <= 500:
            D = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
            return float(np.linalg.norm(D, 2) ** 2)
        A = A if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    s = svds(A, k=1, tol=1e-10, v0=np.ones(m) / np.sqrt(m), return_singular_vectors=False,
             solver="arpack")
    return float(s[0] ** 2)


def nuclear_norm(A) -> float:
    """Sum of singular values of ``A``."""
    return float(sla.svdvals(A, check_finite=False).sum())


def _shrink_exact(A, tau):
    U, s, Vt = svd_thin(A)
    keep = s > tau
    sk = s[keep] - tau
    Z = (U[:, keep] * sk) @ Vt[keep]
    return ShrinkResult(Z, sk, U[:, keep], Vt[keep], "exact")


def _shrink_gram(A, tau):
    m, n = A.shape
    wide = m <= n
    G = A @ A.T if wide else A.T @ A
    w, U = np.linalg.eigh(G)
    w, U = w[::-1], U[:, ::-1]
    if tau < GRAM_MIN_REL_TAU * np.sqrt(max(w[0], 0.0)):
        return None  # squaring would lose the triplets near the threshold
    keep = w > tau * tau
    if not keep.any():
        return ShrinkResult(np.zeros_like(A), np.zeros(0), np.zeros((m, 0)),
                            np.zeros((0, n)), "gram")
    s = np.sqrt(w[keep])
    Uk = U[:, keep]
    if wide:
        # Z = U diag((s - tau) / s) U^T A: an m x m matrix times A, one GEMM instead of the
        # two that forming V^T first would cost; V^T is computed only if asked for
        Z = ((Uk * ((s - tau) / s)) @ Uk.T) @ A
        res = ShrinkResult(Z, s - tau, Uk, None, "gram", A=A)
        res._tau = tau
        return res
    V = Uk                                  # n x k right singular vectors
    Ul = (A @ V) / s                        # m x k left singular vectors
    Z = (Ul * (s - tau)) @ V.T
    return ShrinkResult(Z, s - tau, Ul, V.T, "gram")


def _orth(Y):
    Q, _ = np.linalg.qr(Y)
    return Q


def _shrink_randomized(A, tau, k, V0, n_power, rng, max_block):
    m, n = A.shape
    while True:
        k = min(k, max_block)
        if V0 is not None and V0.shape[0] > 0:
            V0k = V0[:k].T
            extra = k - V0k.shape[1]
            Om = np.hstack([V0k, rng.standard_normal((n, extra))]) if extra > 0 else V0k
        else:
            Om = rng.standard_normal((n, k))
        Q = _orth(A @ Om)
        for _ in range(n_power):
            Q = _orth(A @ _orth(A.T @ Q))
        B = Q.T @ A
        Ub, s, Vt = svd_thin(B)
        if s[-1] <= tau:
            break
        if k >= max_block:
            return None  # the spectrum above tau does not fit a small block
        k *= 2
    keep = s > tau
    sk = s[keep] - tau
    U = Q @ Ub[:, keep]
    Z = (U * sk) @ Vt[keep]
    return ShrinkResult(Z, sk, U, Vt[keep], "randomized")


def shrink(A, tau: float, *, method: str = "auto", rank_estimate: int | None = None,
           V0=None, oversampling: int = 10, n_power: int | None = None, random_state=None
           ) -> ShrinkResult:
    """Singular value soft-thresholding ``S_tau(A)`` (prox of ``tau ||.||_*``).

    Parameters
    ----------
    A : ndarray of shape (m, n)
    tau : float
        Threshold, ``>= 0``.
    method : {"auto", "exact", "gram", "randomized"}
        How to compute the triplets above ``tau`` (see the module docstring).
    rank_estimate : int, optional
        Expected number of singular values above ``tau`` (e.g. the previous iterate's
        rank). ``"auto"`` uses the randomized method only when it is given and small.
    V0 : ndarray of shape (r, n), optional
        Right singular vectors to start the randomized range finder from.
    oversampling : int
        Extra block columns for the randomized method.
    n_power : int, optional
        Power (subspace) iterations of the randomized method per call; default 1 when
        warm-started from ``V0`` (inside an iterative solver the subspace iteration
        continues across calls), else 2.
    random_state : None, int or Generator

    Returns
    -------
    ShrinkResult
        ``Z``, the kept shrunk singular values ``sigma``, ``Vt`` and the method used.

    Notes
    -----
    Cost: ``"exact"`` ``O(m n min(m, n))``; ``"gram"`` two ``O(m n min(m, n))`` GEMMs
    plus an ``O(min(m, n)^3)`` eigendecomposition; ``"randomized"`` ``O(m n k)`` per power
    step with block size ``k = rank + oversampling``.
    """
    if tau < 0:
        raise ValueError(f"tau must be non-negative, got {tau}.")
    A = np.asarray(A, dtype=np.float64)
    m, n = A.shape
    small = min(m, n)
    max_block = max(1, small // RANDOMIZED_MAX_FRACTION)
    if method == "auto":
        use_rand = (rank_estimate is not None and small >= RANDOMIZED_MIN_DIM
                    and rank_estimate + oversampling <= max_block)
        method = "randomized" if use_rand else "gram"
    if method == "randomized":
        rng = np.random.default_rng(random_state)
        k = (rank_estimate or 0) + oversampling
        if n_power is None:
            n_power = 0 if V0 is not None and V0.shape[0] > 0 else 2
        res = _shrink_randomized(A, tau, k, V0, n_power, rng, max_block)
        if res is not None:
            return res
        method = "gram"
    if method == "gram":
        res = _shrink_gram(A, tau)
        if res is not None:
            return res
        method = "exact"
    if method == "exact":
        return _shrink_exact(A, tau)
    raise ValueError(f"unknown method {method!r}; use 'auto', 'exact', 'gram' or "
                     "'randomized'.")


def shrink_lowrank_plus_sparse(U, s, Vt, S, tau: float, *, rank_estimate: int, St=None,
                               oversampling: int = 10, n_power: int = 0, random_state=None,
                               max_block: int | None = None):
    """``shrink(U diag(s) Vt + S, tau)`` without forming the dense matrix.

    For proximal-gradient steps whose gradient lives on the observed entries only
    (``S`` sparse) and whose iterate is low rank (factors ``U, s, Vt``): the randomized
    range finder needs only products with ``A = U diag(s) Vt + S``, each
    ``O(nnz(S) k + (m + n) r k)``. The range finder starts from ``Vt`` (warm start), so
    ``n_power=0`` continues a subspace iteration across calls.

    Returns ``(U, sigma, Vt)`` of the result (``sigma`` already shrunk), or ``None`` when
    more than ``max_block`` (default ``min(m, n) / RANDOMIZED_MAX_FRACTION``) triplets
    exceed ``tau``: the caller should then switch to a dense method.
    """
    m, n = S.shape
    if max_block is None:
        max_block = max(1, min(m, n) // RANDOMIZED_MAX_FRACTION)
    rng = np.random.default_rng(random_state)
    if St is None:      # callers in a loop pass the CSR transpose to avoid rebuilding it
        St = S.T.tocsr()
    k = rank_estimate + oversampling

    def matvec(Om):          # A @ Om
        return U @ (s[:, None] * (Vt @ Om)) + csr_dense_matmul(S, Om)

    def rmatvec(Q):          # A^T @ Q
        return Vt.T @ (s[:, None] * (U.T @ Q)) + csr_dense_matmul(St, Q)

    while True:
        k = min(k, max_block)
        Om = Vt[:k].T
        if k > Om.shape[1]:
            Om = np.hstack([Om, rng.standard_normal((n, k - Om.shape[1]))])
        Q = _orth(matvec(Om))
        for _ in range(n_power):
            Q = _orth(matvec(_orth(rmatvec(Q))))
        B = rmatvec(Q).T                     # Q^T A, k x n
        Ub, sb, Vtb = svd_thin(B)
        if sb[-1] <= tau:
            break
        if k >= max_block:
            return None
        k *= 2
    keep = sb > tau
    return Q @ Ub[:, keep], sb[keep] - tau, Vtb[keep]
