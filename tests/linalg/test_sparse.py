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
