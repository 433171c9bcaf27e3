import numpy as np
import pytest
import scipy.sparse as sp

from semisup.linalg.psd import (eigh_sym, min_eigenvalue, project_psd, psd_split,
                                symmetrize, top_eigpair)


def _sym(rng, n):
    M = rng.standard_normal((n, n))
    return (M + M.T) / 2


def test_project_psd_satisfies_moreau_optimality(rng):
    # P = P_PSD(M) iff P psd, N = M - P nsd and <P, N> = 0 (Moreau decomposition).
    M = _sym(rng, 30)
    P, N, w, V = psd_split(M)
    assert np.linalg.eigvalsh(P).min() > -1e-10
    assert np.linalg.eigvalsh(N).max() < 1e-10
    assert abs(np.sum(P * N)) < 1e-9
    np.testing.assert_allclose(P + N, M, atol=1e-12)
    np.testing.assert_allclose(project_psd(M), P)


def test_project_psd_matches_cvxpy(rng):
    cp = pytest.importorskip("cvxpy")
    M = _sym(rng, 8)
    X = cp.Variable((8, 8), PSD=True)
    cp.Problem(cp.Minimize(cp.sum_squares(X - M))).solve(solver="CLARABEL")
    np.testing.assert_allclose(project_psd(M), X.value, atol=1e-6)


def test_psd_split_forms_the_smaller_side_correctly(rng):
    # mostly positive and mostly negative spectra take different code paths
    for shift in (-3.0, 3.0):
        M = _sym(rng, 20) + shift * np.eye(20)
        P, N, _, _ = psd_split(M)
        w, V = np.linalg.eigh(M)
        np.testing.assert_allclose(P, (V * np.maximum(w, 0)) @ V.T, atol=1e-10)


def test_asymmetric_input_is_symmetrized(rng):
    M = rng.standard_normal((6, 6))
    np.testing.assert_allclose(project_psd(M), project_psd(symmetrize(M)))
    w, _ = eigh_sym(M)
    np.testing.assert_allclose(w, np.linalg.eigvalsh((M + M.T) / 2))


def test_float32_is_kept(rng):
    M = _sym(rng, 10).astype(np.float32)
    assert project_psd(M).dtype == np.float32


@pytest.mark.parametrize("method", ["dense", "lanczos", "auto"])
def test_top_eigpair(rng, method):
    M = _sym(rng, 50)
    lam, v = top_eigpair(M, method=method)
    w = np.linalg.eigvalsh(M)
    assert lam == pytest.approx(w[-1], abs=1e-8)
    np.testing.assert_allclose(M @ v, lam * v, atol=1e-6)
    assert np.linalg.norm(v) == pytest.approx(1.0)


def test_top_eigpair_rejects_unknown_method(rng):
    with pytest.raises(ValueError, match="method"):
        top_eigpair(np.eye(3), method="power")


def test_min_eigenvalue_dense_and_sparse(rng):
    U = np.triu(rng.random((500, 500)) < 0.02, 1)
    A = (U | U.T).astype(float)
    ref = np.linalg.eigvalsh(A)[0]
    assert min_eigenvalue(A[:60, :60]) == pytest.approx(np.linalg.eigvalsh(A[:60, :60])[0])
    assert min_eigenvalue(sp.csr_matrix(A)) == pytest.approx(ref, abs=1e-7)


def test_non_square_is_rejected():
    with pytest.raises(ValueError, match="square"):
        project_psd(np.zeros((3, 4)))


def test_top_eigpair_lanczos_on_float32(rng):
    # ARPACK cannot reach tol=1e-10 in float32; the function must still answer
    B = rng.standard_normal((450, 450)).astype(np.float32)
    M = (B + B.T) / 2
    lam, v = top_eigpair(M, method="lanczos")
    assert lam == pytest.approx(np.linalg.eigvalsh(M.astype(np.float64))[-1], rel=1e-5)


def _spectrum(rng, n, n_neg):
    """Symmetric matrix with exactly ``n_neg`` negative eigenvalues."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = np.concatenate([-rng.uniform(0.5, 2, n_neg), rng.uniform(0.5, 2, n - n_neg)])
    return (Q * w) @ Q.T


# n >= LANCZOS_MIN_N (400) so that psd_part takes its one-sided paths, not only the full one
@pytest.mark.parametrize("n_neg", [0, 20, 250, 480, 500])
@pytest.mark.parametrize("expected", [None, 20, 250, 480])
def test_nsd_and_psd_parts_equal_the_full_split_on_every_path(rng, n_neg, expected):
    from semisup.linalg.psd import nsd_part, psd_part
    M = _spectrum(rng, 500, n_neg)
    P, N, w, V = psd_split(M)
    Nk, k = nsd_part(M, expected=expected)
    assert k == n_neg
    np.testing.assert_allclose(Nk, N, atol=1e-10)
    np.testing.assert_array_equal(Nk, Nk.T)
    Pk, k, lam, v = psd_part(M, expected=expected)
    assert k == n_neg
    np.testing.assert_allclose(Pk, P, atol=1e-10)
    assert lam == pytest.approx(max(w[-1], 0.0), abs=1e-9)
    if n_neg < 500:                     # the top eigenvector, up to sign
        assert abs(abs(v @ V[:, -1]) - 1) < 1e-8


def test_nsd_part_symmetric_overwrite_and_dtype(rng):
    from semisup.linalg.psd import nsd_part, psd_part
    M = _spectrum(rng, 450, 30).astype(np.float32)
    M = (M + M.T) / 2
    keep = M.copy()
    N_ref = psd_split(M.astype(np.float64))[1]
    N, k = nsd_part(M, symmetric=True)          # not overwritten unless asked
    np.testing.assert_array_equal(M, keep)
    assert N.dtype == np.float32 and k == 30
    np.testing.assert_allclose(N, N_ref, atol=2e-5)
    P, k, lam, v = psd_part(M.copy(), symmetric=True, overwrite=True, expected=30)
    assert P.dtype == np.float32
    np.testing.assert_allclose(P, keep - N_ref, atol=2e-5)
    # an asymmetric input uses its symmetric part
    A = rng.standard_normal((450, 450))
    np.testing.assert_allclose(nsd_part(A)[0], psd_split(A)[1], atol=1e-10)


def test_lanczos_calls_start_from_a_fixed_vector():
    """ARPACK's own start vector is random: the same matrix gave eigenvectors differing in
    their last digits (and possibly sign) from one call to the next. Every Lanczos call
    without a warm start begins at ``arpack_start``, so two calls agree exactly."""
    from semisup.linalg.psd import LANCZOS_MIN_N, arpack_start
    rng = np.random.default_rng(5)
    n = LANCZOS_MIN_N + 10
    A = rng.normal(size=(n, n))
    M = A @ A.T / n
    lam1, v1 = top_eigpair(M)
    lam2, v2 = top_eigpair(M)
    assert lam1 == lam2 and np.array_equal(v1, v2)
    lam, v = top_eigpair(M, v0=arpack_start(n))              # the same start, given
    assert lam == lam1 and np.array_equal(v, v1)
    np.testing.assert_allclose(lam1, np.linalg.eigvalsh(M)[-1], rtol=1e-9)   # dense oracle
    S = sp.csr_matrix(M - 2 * np.eye(n))
    assert min_eigenvalue(S) == min_eigenvalue(S)
