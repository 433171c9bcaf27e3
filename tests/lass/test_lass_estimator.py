"""LaplacianAssignment: fit/transform/predict, out-of-sample oracle, SSL equivalence."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import (check_no_attributes_set_in_init,
                                            check_parameters_default_constructible)

from semisup.graph import knn_graph, laplacian
from semisup.lass import LaplacianAssignment, kkt_residual, lass_transform


@pytest.fixture
def moons():
    X, y = make_moons(200, noise=0.06, random_state=0)
    G = np.zeros((200, 2))
    G[np.nonzero(y == 0)[0][0], 0] = 1
    G[np.nonzero(y == 1)[0][0], 1] = 1
    return X, y, G


def test_two_moons_one_tag_per_moon(moons):
    X, y, G = moons
    m = LaplacianAssignment(lam=0.1, n_neighbors=10, tol=1e-7, max_iter=5000).fit(X, G)
    assert m.converged_ and m.assignments_.shape == (200, 2)
    assert (m.assignments_.argmax(1) == y).mean() > 0.95
    np.testing.assert_allclose(m.assignments_.sum(1), 1, atol=1e-12)
    L = laplacian(m.affinity_matrix_)
    mu, Xi = m.multipliers_
    assert kkt_residual(m.assignments_, L, G, 0.1, mu, Xi)["max"] < 1e-5
    assert m.objective_ == pytest.approx(m.history_["objective"][-1], rel=1e-4)
    assert m.solver_ == "apg"       # lam * degree <= 10: APG (certified gap) by default
    assert len(m.history_["objective"]) == m.n_iter_
    assert (m.predict(X) == y).mean() > 0.95


def test_precomputed_affinity_and_sparse_G_give_the_same_fit(moons):
    X, _, G = moons
    W = knn_graph(X, 10)
    a = LaplacianAssignment(lam=0.1, affinity="precomputed").fit(W, sp.csr_matrix(G))
    b = LaplacianAssignment(lam=0.1, weights="binary").fit(X, G)
    np.testing.assert_allclose(a.assignments_, b.assignments_, atol=1e-12)
    Wq = knn_graph(X, 10)[:5]  # affinities of 5 "new" items to the training set
    np.testing.assert_allclose(a.transform(Wq), lass_transform(a.assignments_, Wq, None, 0.1))


def test_transform_matches_brute_force_augmented_problem(moons, cvx_lass):
    cp = pytest.importorskip("cvxpy")
    X, _, G = moons
    m = LaplacianAssignment(lam=0.3, weights="heat", tol=1e-8, max_iter=5000).fit(X, G)
    rng = np.random.default_rng(3)
    Xq = X[:4] + 0.05 * rng.normal(size=(4, 2))
    Gq = rng.uniform(-1, 1, size=(4, 2))
    Wq = m._query_affinity(Xq).toarray()
    Z = m.assignments_
    out = m.transform(Xq, Gq)
    for i in range(4):
        # augmented LASS objective with the trained rows fixed: new edges counted once
        z = cp.Variable(2)
        F = 0.3 * sum(Wq[i, n] * cp.sum_squares(z - Z[n]) for n in np.nonzero(Wq[i])[0]) \
            - Gq[i] @ z
        cp.Problem(cp.Minimize(F), [cp.sum(z) == 1, z >= 0]).solve(solver="CLARABEL")
        np.testing.assert_allclose(out[i], z.value, atol=1e-7)


def test_transform_limits_and_overrides(moons):
    X, _, G = moons
    m = LaplacianAssignment(lam=0.1).fit(X, G)
    Xq = X[:3]
    Gq = np.array([[0, 1.0], [1.0, 0], [0, 0]])
    zbar = m.transform(Xq)                                  # g = 0: neighbour average
    np.testing.assert_allclose(m.transform(Xq, Gq, lam=np.inf), zbar)
    np.testing.assert_allclose(m.transform(Xq, Gq, lam=0.0)[:2], [[0, 1], [1, 0]])
    np.testing.assert_allclose(m.transform(Xq, Gq, lam=0.0)[2], [0.5, 0.5])
    per_query = m.transform(Xq, Gq, lam=np.array([0.0, np.inf, 0.1]))
    np.testing.assert_allclose(per_query[1], zbar[1])
    np.testing.assert_array_equal(m.predict(Xq, Gq, lam=0.0)[:2], [1, 0])


def test_lass_with_clamped_one_hot_labels_reproduces_harmonic_ssl():
    harmonic = pytest.importorskip("semisup.baselines.harmonic")
    X, y = make_moons(150, noise=0.08, random_state=1)
    rng = np.random.default_rng(0)
    labeled = np.zeros(150, bool)
    labeled[rng.choice(150, 12, replace=False)] = True
    y_ssl = np.where(labeled, y, -1)
    ssl = harmonic.HarmonicFunction(n_neighbors=8).fit(X, y_ssl)
    Zh = ssl.label_distributions_
    W = ssl.affinity_matrix_
    L = laplacian(W)
    lam = 1.0
    LZ = L @ Zh
    idx = np.nonzero(labeled)[0]
    # the finite clamping threshold c0 of spec §7
    c0 = max(2 * lam * (LZ[n, y[n]] - LZ[n]).max() for n in idx)
    G = np.zeros((150, 2))
    G[idx, y[idx]] = 1.01 * c0 + 1e-9
    m = LaplacianAssignment(lam=lam, affinity="precomputed", tol=1e-12,
                            max_iter=100000).fit(W, G)
    np.testing.assert_allclose(m.assignments_, Zh, atol=1e-8)


def test_warm_start_reuses_the_admm_state(moons):
    X, _, G = moons
    m = LaplacianAssignment(lam=0.1, rho=0.5, warm_start=True, tol=1e-7,
                            max_iter=5000).fit(X, G)
    first = m.n_iter_
    m.fit(X, G)
    assert m.n_iter_ < 5 < first


def test_sklearn_conventions():
    est = LaplacianAssignment()
    check_parameters_default_constructible("LaplacianAssignment", est)
    check_no_attributes_set_in_init("LaplacianAssignment", est)
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize("params, X_bad, G_bad, exc, match", [
    (dict(affinity="precomputed"), np.array([[0, 1.0], [0.5, 0]]), None, ValueError,
     "symmetric"),
    (dict(affinity="precomputed"), np.array([[0, -1.0], [-1.0, 0]]), None, ValueError,
     "negative"),
    (dict(), "nan", None, ValueError, "NaN"),
    (dict(), None, "wrong-shape", ValueError, "shape"),
    (dict(lam=-1), None, None, ValueError, "lam"),
    (dict(rho=0), None, None, ValueError, "rho"),
    (dict(affinity="rbf"), None, None, ValueError, "affinity"),
])
def test_bad_input_is_refused(moons, params, X_bad, G_bad, exc, match):
    X, _, G = moons
    if isinstance(X_bad, str):
        X = X.copy()
        X[3, 1] = np.nan
    elif X_bad is not None:
        X, G = X_bad, np.ones((2, 2))
    if G_bad == "wrong-shape":
        G = G[:-1]
    with pytest.raises(exc, match=match):
        LaplacianAssignment(**params).fit(X, G)


def test_transform_refuses_wrong_shapes(moons):
    X, _, G = moons
    m = LaplacianAssignment(lam=0.1).fit(X, G)
    with pytest.raises(ValueError, match="features"):
        m.transform(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="G_new"):
        m.transform(X[:2], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="lam"):
        m.transform(X[:2], lam=-1.0)


def test_memory_refusal(moons, monkeypatch):
    X, _, G = moons
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", "1000")
    with pytest.raises(MemoryError, match="needs about"):
        LaplacianAssignment().fit(X, G)


# -- keep_path: the iterates of the fit (issue #17: Figure 1 reads them) -------------------
@pytest.mark.parametrize("solver", ["direct", "cg", "apg"])
def test_keep_path_records_the_iterates_without_changing_the_fit(moons, solver):
    from semisup.linalg.simplex import project_simplex_rows
    X, y, G = moons
    kw = dict(lam=0.1, solver=solver, tol=1e-6, max_iter=3000)
    plain = LaplacianAssignment(**kw).fit(X, G)
    m = LaplacianAssignment(keep_path=True, **kw).fit(X, G)
    path = m.history_["scores"]
    np.testing.assert_array_equal(m.assignments_, plain.assignments_)
    np.testing.assert_array_equal(m.history_["objective"], plain.history_["objective"])
    assert m.n_iter_ == plain.n_iter_ == len(path) and "scores" not in plain.history_
    assert all(Z.shape == (200, 2) for Z in path)
    if solver == "apg":        # feasible iterates: the last one is the fit
        np.testing.assert_array_equal(path[-1], m.assignments_)
    else:                      # ADMM's Z-updates: the fit is the last one projected
        np.testing.assert_array_equal(project_simplex_rows(path[-1]), m.assignments_)
        np.testing.assert_allclose(path[-1].sum(1), 1, atol=1e-10)
    # out of sample, per iterate
    staged = list(m.staged_transform(X[:20]))
    assert len(staged) == m.n_iter_
    np.testing.assert_allclose(staged[-1], m.transform(X[:20]), atol=1e-6)
    np.testing.assert_array_equal(list(m.staged_predict(X[:20]))[-1], m.predict(X[:20]))
    with pytest.raises(ValueError, match="keep_path=True"):
        next(plain.staged_predict(X[:5]))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("solver", ["direct", "apg"])
def test_keep_path_equals_the_solver_callback(moons, solver):
    from semisup.lass import solve
    X, _, G = moons
    W = knn_graph(X, 10)
    m = LaplacianAssignment(lam=0.1, affinity="precomputed", solver=solver, rho=1.0,
                            max_iter=200, keep_path=True).fit(W, G)
    seen = []
    solve(laplacian(W), G, 0.1, solver=solver, rho=1.0, max_iter=200,
          callback=lambda t, Z, Y, U: seen.append((t, Z.copy())))
    assert [t for t, _ in seen] == list(range(1, m.n_iter_ + 1))
    for (_, Z), Zm in zip(seen, m.history_["scores"]):
        np.testing.assert_array_equal(Zm, Z)


def test_keep_path_fills_the_rows_of_isolated_items(moons):
    X, y, G = moons
    W = knn_graph(X, 10).tolil()
    W[5, :] = 0                          # item 5 (untagged) and item 7 (tagged) alone
    W[:, 5] = 0
    W[7, :] = 0
    W[:, 7] = 0
    G = G.copy()
    G[7] = [0.2, 0.7]
    m = LaplacianAssignment(lam=0.1, affinity="precomputed", solver="direct",
                            keep_path=True).fit(W.tocsr(), G)
    path = m.history_["scores"]
    assert len(path) == m.n_iter_ > 0
    for Z in path:
        assert Z.shape == (200, 2)
        np.testing.assert_array_equal(Z[[5, 7]], m.assignments_[[5, 7]])
    np.testing.assert_allclose(m.assignments_[[5, 7]], [[0.5, 0.5], [0, 1]])
    # lam = 0: closed form, no iterations
    m0 = LaplacianAssignment(lam=0, keep_path=True).fit(X, G)
    assert m0.n_iter_ == 0 and m0.history_["scores"] == []


# -- issue #30 item 9 ------------------------------------------------------------------------
def _four_nodes(edges):
    A = np.zeros((4, 4))
    for i, j, w in edges:
        A[i, j] = A[j, i] = w
    G = np.zeros((4, 2))
    G[0, 0] = G[3, 1] = 1.0
    return A, G


@pytest.mark.parametrize("solver", ["direct", "cg"])
@pytest.mark.parametrize("edges, msg", [
    # two components, weights 1 and 1e-241: rho* = 2 lam sqrt(mu_2 mu_N) underflowed to 0
    ([(0, 3, 1.0), (1, 2, 1e-241)], "no expert information"),
    ([(1, 2, 1.0), (0, 3, 1e-241)], "negligible against G"),
    # one component joined by 1e-241: ADMM ended on a wrong assignment after max_iter
    ([(0, 1, 1.0), (1, 2, 1e-241), (2, 3, 1.0)], "numerically disconnected"),
])
def test_lass_admm_on_weights_1_and_1e241_fits_with_a_warning(solver, edges, msg):
    import warnings as w
    A, G = _four_nodes(edges)
    with pytest.warns(UserWarning, match=msg):
        with w.catch_warnings():
            w.simplefilter("error", ConvergenceWarning)
            m = LaplacianAssignment(1e-3, affinity="precomputed", solver=solver).fit(A, G)
    ref = LaplacianAssignment(1e-3, affinity="precomputed", solver="apg",
                              tol=1e-10).fit(A, G)
    # the APG oracle's objective (certified gap), to ADMM's tolerance
    assert m.objective_ <= ref.objective_ + 1e-4
    np.testing.assert_array_equal(m.transduction_[[0, 3]], [0, 1])


def test_lass_precomputed_subnormal_W_is_finite():
    """W * 1e-310: dividing L by its scale multiplied by 1 / scale = inf (NaN in L)."""
    X, _ = make_moons(40, noise=0.05, random_state=0)
    W = knn_graph(X, 5, weights="heat")
    G = np.zeros((40, 2))
    G[0, 0] = G[1, 1] = 1.0
    with pytest.warns(UserWarning, match="negligible"):
        m = LaplacianAssignment(affinity="precomputed").fit(W * 1e-310, G)
    assert np.isfinite(m.assignments_).all()
    # lam L is below the rounding of G: the lam = 0 solution
    np.testing.assert_allclose(m.assignments_[2:], 0.5)
    # a scale that keeps lam L visible: the same assignments as W, with lam rescaled
    a = LaplacianAssignment(1e-2, affinity="precomputed", solver="apg", tol=1e-10)
    b = LaplacianAssignment(1e-2 * 2.0 ** 900, affinity="precomputed", solver="apg",
                            tol=1e-10)
    np.testing.assert_allclose(b.fit(W * 2.0 ** -900, G).assignments_,
                               a.fit(W, G).assignments_, atol=1e-6)


def test_lass_float_column_G_is_refused_not_read_as_labels():
    """An (N, 1) float G (one category) was read as class labels {0, 1}."""
    X, _ = make_moons(30, noise=0.05, random_state=0)
    G = np.zeros((30, 2))
    G[:3, 0] = 1.0
    G[3:6, 1] = 0.5
    for col in (G[:, :1], G[:, 1:]):
        with pytest.raises(ValueError, match="at least 2 categories"):
            LaplacianAssignment().fit(X, col)
    # a column of labels with -1 (unlabeled) is still read as labels
    y = np.full((30, 1), -1.0)
    y[:3], y[3:6] = 0.0, 1.0
    with pytest.warns(Warning, match="column-vector"):
        m = LaplacianAssignment().fit(X, y)
    np.testing.assert_array_equal(m.classes_, [0.0, 1.0])


def test_lass_sparse_G_too_large_is_refused_before_densifying():
    """A 10^5 x 10^6 sparse G: numpy's 'Unable to allocate' (densified first) instead of
    the library's estimate."""
    N = 10 ** 5
    W = sp.diags([np.ones(N - 1), np.ones(N - 1)], [-1, 1], format="csr")
    G = sp.csr_matrix((np.ones(2), ([0, 1], [0, 1])), shape=(N, 10 ** 6))
    with pytest.raises(MemoryError, match="LASS on 100000 items x 1000000 categories needs"):
        LaplacianAssignment(affinity="precomputed").fit(W, G)
