"""PSD-cone projection by eigenvalue clipping and extreme eigenpairs of symmetric matrices.

All functions symmetrize their input first, ``(M + M^T) / 2``, because the iterates of
first-order SDP methods drift from exact symmetry by rounding and LAPACK's ``syevd`` reads
only one triangle.

Dense eigendecompositions cost O(n^3); in float32 LAPACK runs about twice as fast as in
float64 on n = 2000 (measured on one quiet core: 0.51 s vs 1.06 s for ``syevd``), which is
why the functions keep the input's floating dtype instead of promoting to float64.

:func:`nsd_part` and :func:`psd_part` serve the iterations that need only one side of the
spectrum (the FISTA prox of SPORE, the PSD clean-up): LAPACK ``syevr`` on an eigenvalue range
computes only the eigenvectors of that range after the tridiagonal reduction, and the
reduction is most of the cost when few eigenvalues lie there (measured on a SPORE FISTA
iterate, n = 2000, 166 negative eigenvalues, one thread: 0.28 s against 0.51 s for the full
``syevd`` in float32, 0.54 s against 1.06 s in float64; the reduction alone takes 0.23 s and
0.42 s). Above about a quarter of the spectrum on the computed side the full ``syevd`` is
faster again (n = 2000, float32: 0.47 s for 600 of the 2000 eigenpairs, 0.76 s for 1000).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse.linalg as spla

from .xp import array_modules

__all__ = ["symmetrize", "eigh_sym", "project_psd", "psd_split", "nsd_part", "psd_part",
           "top_eigpair", "min_eigenvalue", "arpack_start", "lanczos_max"]

#: above this size ``top_eigpair(method="auto")`` uses Lanczos (ARPACK) instead of LAPACK
LANCZOS_MIN_N = 400

#: :func:`nsd_part` computes one side of the spectrum by ``syevr`` on an eigenvalue range when
#: that side is expected to hold at most this fraction of the eigenvalues, else the full
#: ``syevd`` (measured crossover at n = 1000 and 2000, float32 and float64: 0.25-0.3)
SUBSET_MAX_FRACTION = 0.25


def _float(M) -> np.ndarray:
    M = np.asarray(M)
    if M.dtype not in (np.float32, np.float64):
        M = M.astype(np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {M.shape}.")
    return M


def symmetrize(M) -> np.ndarray:
    """Return ``(M + M^T) / 2`` as a new array (float32 or float64 kept)."""
    M = _float(M)
    return (M + M.T) * 0.5


def eigh_sym(M) -> tuple[np.ndarray, np.ndarray]:
    """All eigenpairs of the symmetric part of ``M`` (ascending), by LAPACK ``syevd``.

    O(n^3) time, O(n^2) memory; the input is not modified.
    """
    S = symmetrize(M)
    return sla.eigh(S, overwrite_a=True, check_finite=False, driver="evd")


def psd_split(M, timer=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split the symmetric part of ``M`` into its PSD and NSD parts with one eigendecomposition.

    Returns ``(P, N, w, V)`` with ``P = V max(w, 0) V^T`` (the Frobenius projection onto the
    PSD cone), ``N = V min(w, 0) V^T = sym(M) - P`` and the eigenpairs ``(w, V)`` of
    ``sym(M)``. Only the smaller of the two parts is formed by a matrix product
    (O(n^2 k) for k eigenvalues on that side); the other is the difference.
    """
    S = symmetrize(M)
    t0 = time.perf_counter()
    w, V = sla.eigh(S, check_finite=False, driver="evd")
    if timer is not None:
        timer[0] += time.perf_counter() - t0
    neg = w < 0
    k_neg = int(neg.sum())
    if k_neg <= w.size - k_neg:
        Vn = V[:, neg]
        N = (Vn * w[neg]) @ Vn.T
        P = S - N
    else:
        Vp = V[:, ~neg]
        P = (Vp * w[~neg]) @ Vp.T
        N = S - P
    return P, N, w, V


def _lapack_view(M, symmetric: bool, overwrite: bool):
    """``(S, L, overwrite)``: the symmetric matrix ``S`` to compute with, the same matrix as
    LAPACK should read it, and whether LAPACK may destroy it.

    ``symmetric``: ``M`` is exactly symmetric and is used as is (``(M + M^T) / 2`` would equal
    it bit for bit); otherwise ``S`` is the symmetrized copy, which is scratch. ``L`` is the
    transpose view of a C-ordered ``S`` (the same matrix): Fortran-ordered, so that the LAPACK
    wrapper works on it instead of copying it when it may be overwritten.
    """
    if symmetric:
        S = _float(M)
    else:
        S, overwrite = symmetrize(M), True
    return S, (S.T if S.flags.c_contiguous else S), overwrite


def _gram(V, w, sign):
    """``V diag(w) V^T`` for eigenvalues ``w`` of one sign (+1 or -1), as ``sign X X^T`` with
    ``X = V sqrt(|w|)``: numpy computes ``X @ X.T`` by ``syrk`` (half the flops of a general
    product) and returns an exactly symmetric matrix."""
    X = V * np.sqrt(np.abs(w)).astype(V.dtype, copy=False)
    G = X @ X.T
    if sign < 0:
        np.negative(G, out=G)
    return G


def _expected_side(n: int, expected) -> str:
    """Which eigenpairs to compute, ``"neg"``, ``"pos"`` or ``"full"``, from the expected
    number of negative eigenvalues (None: few)."""
    limit = SUBSET_MAX_FRACTION * n
    if expected is None or expected <= limit:
        return "neg"
    if n - expected <= limit:
        return "pos"
    return "full"


def _eigh_side(S, side: str, overwrite: bool):
    """Eigenpairs of one side of the spectrum (``"neg"``: ``(-inf, 0]``, ``"pos"``:
    ``(0, inf)``) by ``syevr``, or all of them (``"full"``) by ``syevd``.

    ``syevr``'s MRRR stage fails ("Internal Error", ``LinAlgError``) on some matrices
    with large clusters of equal eigenvalues (SPORE on a complete graph, issue #30): the
    side is then taken from a full ``syevd``. With ``overwrite`` LAPACK has destroyed ``S``
    by then and the error propagates; the caller retries without ``overwrite``.
    """
    if side == "full":
        return sla.eigh(S, check_finite=False, driver="evd", overwrite_a=overwrite)
    bounds = (-np.inf, 0.0) if side == "neg" else (0.0, np.inf)
    try:
        return sla.eigh(S, check_finite=False, driver="evr", overwrite_a=overwrite,
                        subset_by_value=bounds)
    except np.linalg.LinAlgError:
        if overwrite:
            raise
    w, V = sla.eigh(S, check_finite=False, driver="evd")
    keep = w <= 0 if side == "neg" else w > 0
    return w[keep], V[:, keep]


def _eigh_index(S, i: int):
    """The ``i``-th smallest eigenpair ``(w[i:i+1], V[:, i:i+1])`` of ``S``; ``syevr``, or
    a full ``syevd`` where ``syevr`` fails (see :func:`_eigh_side`)."""
    try:
        return sla.eigh(S, check_finite=False, subset_by_index=[i, i])
    except np.linalg.LinAlgError:
        w, V = sla.eigh(S, check_finite=False, driver="evd")
        return w[i:i + 1], V[:, i:i + 1]


def nsd_part(M, timer=None, *, expected=None, symmetric: bool = False,
             overwrite: bool = False):
    """NSD part ``N = V min(Lambda, 0) V^T`` of the symmetric part of ``M``.

    ``N = sym(M) - P_PSD(M)`` is ``prox_{tau sigma_A}`` for the PSD cone ``A`` (the step of
    SPORE's FISTA prox). Only one side of the spectrum is computed: the negative eigenpairs
    by ``syevr`` on the range ``(-inf, 0]`` when ``expected`` (the expected number of negative
    eigenvalues, e.g. the count of the previous, similar matrix; None: few) is at most
    :data:`SUBSET_MAX_FRACTION` of ``n``; the positive ones (``N = S - P``) when at most that
    fraction is expected positive; otherwise all of them by ``syevd``. Equals
    ``psd_split(M)[1]`` to rounding; O(n^3) for the reduction plus O(n^2 k) for k eigenpairs.

    Parameters
    ----------
    M : array of shape (n, n), float32 or float64 (kept)
    timer : one-element list, optional
        Accumulates the seconds spent in LAPACK.
    expected : int, optional
        Expected number of negative eigenvalues.
    symmetric : bool
        ``M`` is exactly symmetric: used as is, without the symmetrization (which would not
        change it) and its copy.
    overwrite : bool
        With ``symmetric``: ``M`` is scratch and LAPACK may destroy it (saves a copy).
        Then a ``LinAlgError`` of ``syevr`` (see :func:`_eigh_side`) propagates with ``M``
        destroyed: call again on a fresh ``M`` without ``overwrite``, which falls back to
        ``syevd``.

    Returns
    -------
    N : ndarray of shape (n, n), exactly symmetric
    k : int
        Number of negative eigenvalues.
    """
    S, L, ow = _lapack_view(M, symmetric, overwrite)
    n = S.shape[0]
    side = _expected_side(n, expected)
    t0 = time.perf_counter()
    try:
        w, V = _eigh_side(L, side, ow and side == "neg")   # S is needed afterwards otherwise
    except np.linalg.LinAlgError:
        if symmetric and overwrite:     # the caller's M is destroyed: it rebuilds M
            raise
        S, L, ow = _lapack_view(M, symmetric, False)    # a fresh sym(M) (or M itself)
        w, V = _eigh_side(L, side, False)               # falls back to syevd
    if timer is not None:
        timer[0] += time.perf_counter() - t0
    if side == "neg":
        k = w.size
        return (_gram(V, w, -1) if k else np.zeros_like(S)), k
    if side == "pos":
        k = n - w.size
        return _minus(S, _gram(V, w, 1), ow), k
    neg = w < 0
    k = int(np.count_nonzero(neg))
    if k <= n - k:
        return _gram(V[:, neg], w[neg], -1), k
    return _minus(S, _gram(V[:, ~neg], w[~neg], 1), ow), k


def _minus(S, G, in_place: bool):
    """``S - G``, into ``S`` when it is scratch."""
    if in_place:
        S -= G
        return S
    return S - G


def psd_part(M, timer=None, *, expected=None, symmetric: bool = False,
             overwrite: bool = False, v0=None):
    """PSD projection ``P = V max(Lambda, 0) V^T`` of the symmetric part of ``M`` and the top
    eigenpair of ``P``.

    The side of the spectrum is chosen as in :func:`nsd_part` (``P = S - N`` from the
    negative eigenpairs when few are expected); the top eigenpair then comes from Lanczos
    (:func:`top_eigpair`, float64, started from ``v0``: e.g. the previous iterate's
    eigenvector) for ``n >= LANCZOS_MIN_N``, for smaller ``n`` and when most of the spectrum
    is computed from the same ``syevd``/``syevr`` call. Equals ``psd_split(M)``'s ``P``,
    ``max(w[-1], 0)`` and ``V[:, -1]`` to rounding (the eigenvector up to sign).
    ``symmetric`` and ``overwrite`` as in :func:`nsd_part` (``P`` is then formed in ``M``).

    Returns
    -------
    P : ndarray of shape (n, n), exactly symmetric when ``M`` is
    k : int
        Number of negative eigenvalues of ``sym(M)``.
    lam : float
        ``lambda_1(P) = max(lambda_1(sym M), 0)``.
    v : ndarray of shape (n,), float64
        A unit eigenvector of ``sym(M)`` for its largest eigenvalue.
    """
    S, L, ow = _lapack_view(M, symmetric, overwrite)
    n = S.shape[0]
    side = _expected_side(n, expected) if n >= LANCZOS_MIN_N else "full"
    t0 = time.perf_counter()
    w, V = _eigh_side(L, side, False)                  # S is needed afterwards
    if timer is not None:
        timer[0] += time.perf_counter() - t0
    if side == "neg":
        k = w.size
        if k == n:                                   # P = 0: any unit vector; keep LAPACK's
            return np.zeros_like(S), k, 0.0, V[:, -1].astype(np.float64)
        if k:
            P = _minus(S, _gram(V, w, -1), ow)
        else:
            P = S if ow else S.copy()
        lam, v = top_eigpair(P, v0=v0, symmetric=True)
        return P, k, max(lam, 0.0), np.asarray(v, dtype=np.float64)
    if side == "pos":
        k = n - w.size
        if k == n:
            lam, v = top_eigpair(S, method="dense", symmetric=True)
            return np.zeros_like(S), k, 0.0, np.asarray(v, dtype=np.float64)
        return _gram(V, w, 1), k, max(float(w[-1]), 0.0), V[:, -1].astype(np.float64)
    neg = w < 0
    k = int(np.count_nonzero(neg))
    if k <= n - k:
        P = _minus(S, _gram(V[:, neg], w[neg], -1), ow) if k else (S if ow else S.copy())
    else:
        P = _gram(V[:, ~neg], w[~neg], 1) if k < n else np.zeros_like(S)
    return P, k, max(float(w[-1]), 0.0), V[:, -1].astype(np.float64)


def project_psd(M) -> np.ndarray:
    """Frobenius-norm projection of the symmetric part of ``M`` onto the PSD cone.

    ``P_PSD(M) = V max(Lambda, 0) V^T``; O(n^3).
    """
    return psd_split(M)[0]


def arpack_start(n: int, seed: int = 0) -> np.ndarray:
    """A fixed Lanczos start vector of length ``n`` (uniform in [-1, 1], seeded).

    ARPACK's own start is random, so the same matrix gave eigenvalues differing in their
    last digits from one call to the next (LASS's ADMM step, SPORE's path): every
    ``eigsh`` of the library without a warm start begins here instead.

    Examples
    --------
    >>> import numpy as np
    >>> bool(np.array_equal(arpack_start(5), arpack_start(5)))
    True
    """
    return np.random.default_rng(seed).uniform(-1.0, 1.0, int(n))


def lanczos_max(A, v0, *, tol: float = 1e-3, max_steps: int = 300) -> float:
    """Largest eigenvalue of the symmetric ``A`` by Lanczos, in ``v0``'s array module.

    The three-term recurrence ``beta_{j+1} q_{j+1} = A q_j - alpha_j q_j - beta_j q_{j-1}``
    (Golub & Van Loan, Algorithm 10.1.1) builds the tridiagonal ``T_m``; its largest
    eigenvalue ``theta`` (a lower bound on ``lambda_max(A)``) is accepted when the
    residual norm of its Ritz pair, ``|beta_{m+1} s_m|`` (``s`` the eigenvector of ``T_m``),
    is at most ``tol |theta|`` (ARPACK's test). Without reorthogonalisation: lost
    orthogonality only repeats converged Ritz values, never exceeds the spectrum. Only
    ``A @ q`` runs where ``A`` lives; ``T_m`` is solved on the host (two scalars a step).
    A start orthogonal to the top eigenvector returns a lower eigenvalue, as ARPACK does.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.diag([1.0, 2.0, 5.0])
    >>> round(lanczos_max(A, np.ones(3)), 10)
    5.0
    """
    xp, _ = array_modules(v0)
    n = v0.shape[0]
    q = v0 / float(xp.linalg.norm(v0))
    q_prev = xp.zeros_like(q)
    alphas, betas = [], []
    beta, theta = 0.0, 0.0
    for j in range(min(max_steps, n)):
        w = A @ q
        w = xp.asarray(w).ravel()
        alpha = float(xp.dot(w, q))
        w = w - alpha * q - beta * q_prev
        beta = float(xp.linalg.norm(w))
        alphas.append(alpha)
        if len(alphas) == 1:
            theta, s_last = alpha, 1.0
        else:
            ev, S = sla.eigh_tridiagonal(np.array(alphas), np.array(betas))
            theta, s_last = float(ev[-1]), float(S[-1, -1])
        if abs(beta * s_last) <= tol * abs(theta) or beta == 0.0:
            break
        betas.append(beta)
        q_prev, q = q, w / beta
    return theta


def top_eigpair(M, method: str = "auto", v0=None, tol: float = 1e-10,
                symmetric: bool = False):
    """Largest eigenvalue and a unit eigenvector of the symmetric part of ``M``.

    Parameters
    ----------
    M : array of shape (n, n)
    method : {"auto", "dense", "lanczos"}
        ``"dense"``: LAPACK on the top index only (O(n^3) reduction, but no full basis);
        ``"lanczos"``: ARPACK ``eigsh(which="LA")``, O(n^2) per matrix-vector product;
        ``"auto"``: Lanczos when ``n >= LANCZOS_MIN_N``.
    v0 : array of shape (n,), optional
        Starting vector for Lanczos (warm start from the previous eigenvector; default
        :func:`arpack_start`).
    tol : float
        Lanczos relative accuracy.
    symmetric : bool
        ``M`` is exactly symmetric: used without symmetrizing it (LAPACK reads one triangle).

    Returns
    -------
    lam : float
    v : ndarray of shape (n,)
    """
    S = _float(M) if symmetric else symmetrize(M)
    n = S.shape[0]
    if method not in ("auto", "dense", "lanczos"):
        raise ValueError(f"method must be 'auto', 'dense' or 'lanczos', got {method!r}.")
    if method == "dense" or (method == "auto" and n < LANCZOS_MIN_N) or n < 3:
        w, V = _eigh_index(S, n - 1)
        return float(w[0]), V[:, 0]
    try:
        # float64: ARPACK cannot reach tol = 1e-10 in float32 and fails ("no shifts")
        w, V = spla.eigsh(S.astype(np.float64, copy=False), k=1, which="LA",
                          v0=arpack_start(n) if v0 is None else v0, tol=tol)
    except spla.ArpackError:
        w, V = _eigh_index(S, n - 1)
    return float(w[0]), V[:, 0]


def min_eigenvalue(M) -> float:
    """Smallest eigenvalue of the symmetric part of a dense or sparse matrix."""
    if hasattr(M, "tocsr"):
        n = M.shape[0]
        if n >= LANCZOS_MIN_N:
            S = (M + M.T) * 0.5
            return float(spla.eigsh(S.astype(np.float64), k=1, which="SA", tol=1e-10,
                                    v0=arpack_start(n))[0][0])
        M = M.toarray()
    S = symmetrize(M)
    n = S.shape[0]
    return float(_eigh_index(S, 0)[0][0])
