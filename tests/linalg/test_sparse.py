import numpy as np
import pytest
import scipy.sparse as sp

from semisup._optional import available
from semisup.linalg.sparse import csr_dense_matmul


@pytest.mark.parametrize("backend", ["scipy", "auto"] + (["numba"] if available("numba") else []))
def test_csr_dense_matmul_matches_scipy(backend, rng):
    A = sp.random(300, 200, density=0.05, random_state=1, format="csr")
    X = np.asfortranarray(rng.standard_normal((200, 7)))     # any memory order
    ref = A @ X
    out = csr_dense_matmul(A, X, backend=backend)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    buf = np.empty_like(ref)
    assert csr_dense_matmul(A, X, out=buf, backend=backend) is buf
    np.testing.assert_allclose(buf, ref, rtol=1e-12, atol=1e-12)


def test_csr_dense_matmul_accepts_other_sparse_formats(rng):
    A = sp.random(50, 40, density=0.2, random_state=2, format="coo")
    X = rng.standard_normal((40, 3))
    np.testing.assert_allclose(csr_dense_matmul(A, X, backend="auto"), A @ X, rtol=1e-12)


def test_csr_dense_matmul_rejects_unknown_backend(rng):
    with pytest.raises(ValueError, match="backend"):
        csr_dense_matmul(sp.eye(3, format="csr"), np.ones((3, 1)), backend="gpu")


@pytest.mark.skipif(not available("numba"), reason="needs numba")
def test_compiled_product_refuses_operands_it_would_index_out_of_bounds():
    """Issue #30 item 9: the compiled loop reads X[indices[p]] and writes out[i] unchecked;
    its operands are checked first (a bad index was a write outside the array)."""
    from semisup.linalg._sparse_numba import check_csr_operands
    A = sp.random(6, 5, density=0.5, format="csr", random_state=0)
    X = np.ones((5, 2))
    with pytest.raises(ValueError, match="shape"):
        csr_dense_matmul(A, np.ones((4, 2)), backend="numba")
    with pytest.raises(ValueError, match="out must be"):
        csr_dense_matmul(A, X, np.empty((5, 2)), backend="numba")
    out = np.empty((6, 2))
    bad = A.indices.copy()
    bad[0] = 5
    with pytest.raises(ValueError, match=r"indices must lie in \[0, 5\)"):
        check_csr_operands(A.indptr, bad, A.data, X, out)
    bad[0] = -1
    with pytest.raises(ValueError, match="indices must lie"):
        check_csr_operands(A.indptr, bad, A.data, X, out)
    ptr = A.indptr.copy()
    ptr[-1] += 1
    with pytest.raises(ValueError, match="indptr"):
        check_csr_operands(ptr, A.indices, A.data, X, out)
    with pytest.raises(ValueError, match="indptr has"):
        check_csr_operands(A.indptr[:-1], A.indices, A.data, X, out)
    np.testing.assert_allclose(csr_dense_matmul(A, X, backend="numba"), A @ X)
