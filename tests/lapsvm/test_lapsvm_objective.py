import numpy as np
import pytest

from semisup.lapsvm import gradient, laplacian_operator, objective

from lapsvm_problems import moons, tv1, tv3


def _fd_gradient(P, z, use_bias, hinge, eps=1e-6):
    apply_L = laplacian_operator(P["L"], P["power"])

    def obj(zz):
        b, a = (zz[0], zz[1:]) if use_bias else (None, zz)
        return objective(P["K"], apply_L, P["y"], a, b, gamma_A=P["gamma_A"],
                         gamma_I=P["gamma_I"], hinge=hinge)

    g = np.zeros_like(z)
    for i in range(z.size):
        e = np.zeros_like(z)
        e[i] = eps
        g[i] = (obj(z + e) - obj(z - e)) / (2 * eps)
    return g


def test_objective_and_gradients_match_tv_lapsvm_1():
    P = tv1()
    z0 = np.array([0.1, 0.2, -0.1, 0.0, 0.3, -0.2, 0.1, -0.3])
    apply_L = laplacian_operator(P["L"])
    kw = dict(gamma_A=P["gamma_A"], gamma_I=P["gamma_I"])
    assert objective(P["K"], apply_L, P["y"], z0[1:], z0[0], **kw) == pytest.approx(
        1.7290707203203557, rel=1e-12)
    g = gradient(P["K"], apply_L, P["y"], z0[1:], z0[0], **kw)
    np.testing.assert_allclose(g.stacked("grad"), [0.2501211023, -1.5992587611, -1.7632574068,
                                                   -1.1358077153, -0.4339500109, 1.9989138752,
                                                   2.2031119489, 2.1327507837], atol=1e-9)
    np.testing.assert_allclose(g.stacked("ghat"), [0.2501211023, -0.748064384, -0.7341547642,
                                                   -0.6525900456, 0.0474379339, 0.8095509705,
                                                   0.7630440165, 0.7648973752], atol=1e-9)
    # the preconditioner P = diag(1, K): grad = P ghat
    np.testing.assert_allclose(g.grad_a, P["K"] @ g.ghat_a, rtol=1e-14)


@pytest.mark.parametrize("use_bias", [False, True])
@pytest.mark.parametrize("hinge", [False, True])
@pytest.mark.parametrize("problem", ["tv3", "moons_normalized"])
def test_gradient_matches_finite_differences(problem, hinge, use_bias, rng):
    if problem == "tv3":
        P = tv3()
    else:
        P = moons(5, n=60, kind="normalized")
        P.update(gamma_A=1e-2, gamma_I=1.0, power=2)
    n = P["K"].shape[0]
    z = rng.normal(scale=0.3, size=n + use_bias)
    fd = _fd_gradient(P, z, use_bias, hinge)
    b, a = (z[0], z[1:]) if use_bias else (None, z)
    g = gradient(P["K"], laplacian_operator(P["L"], P["power"]), P["y"], a, b,
                 gamma_A=P["gamma_A"], gamma_I=P["gamma_I"], hinge=hinge)
    err = np.linalg.norm(g.stacked() - fd) / np.linalg.norm(fd)
    assert err < 1e-7


def test_objective_vectorised_over_columns_equals_per_column(rng):
    P = tv3()
    apply_L = laplacian_operator(P["L"], 2)
    Y = np.stack([P["y"], -P["y"]], axis=1)
    A = rng.normal(size=(40, 2))
    both = objective(P["K"], apply_L, Y, A, np.array([0.1, -0.2]), gamma_A=0.1, gamma_I=0.2)
    for j, b in enumerate([0.1, -0.2]):
        assert both[j] == pytest.approx(objective(P["K"], apply_L, Y[:, j], A[:, j], b,
                                                  gamma_A=0.1, gamma_I=0.2), rel=1e-13)


def test_laplacian_power_applied_lazily_equals_matrix_power(rng):
    P = tv3()
    v = rng.normal(size=40)
    L2 = (P["L"] @ P["L"]).toarray()
    np.testing.assert_allclose(laplacian_operator(P["L"], 2)(v), L2 @ v, rtol=1e-12)
    with pytest.raises(ValueError):
        laplacian_operator(P["L"], 0)
