"""Small LapSVM problems shared by the tests (the spec's test vectors and two moons)."""

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_moons

from semisup.graph import knn_graph, laplacian
from semisup.kernels import rbf_kernel


def tv1():
    """TV-LAPSVM-1: 7 points in 1-D, path graph, unnormalised L, hinge active."""
    x = np.array([0.0, 0.5, 1.5, 2.0, 3.5, 4.0, 4.2])
    y = np.array([1, 1, 1, 0, -1, -1, -1], dtype=float)
    K = np.exp(-(x[:, None] - x[None, :]) ** 2 / 2)
    W = sp.diags([np.ones(6), np.ones(6)], [1, -1], format="csr")
    L = laplacian(W, "unnormalized")
    return dict(K=K, L=L, y=y, x=x, gamma_A=0.01, gamma_I=0.1, power=1)


def tv3():
    """TV-LAPSVM-3: seeded blobs, 5-NN heat graph, normalised L^2, ill-conditioned K."""
    rng = np.random.default_rng(2024)
    X = np.vstack([rng.normal(size=(20, 2)) + [-1.5, 0], rng.normal(size=(20, 2)) + [1.5, 0]])
    y = np.zeros(40)
    y[:5], y[20:25] = 1, -1
    K = rbf_kernel(X, sigma=1.0)
    L = laplacian(knn_graph(X, 5, weights="heat"), "normalized")
    return dict(K=K, L=L, y=y, X=X, gamma_A=1e-3, gamma_I=1e-2, power=2)


def moons(n_per_class_labeled=1, n=200, seed=0, kind="unnormalized"):
    """Two moons (spec §14): sigma = 0.35 Gaussian, 6-NN heat graph."""
    X, t = make_moons(n, noise=0.1, random_state=seed)
    yt = np.where(t == 1, 1.0, -1.0)
    rng = np.random.default_rng(seed)
    y = np.zeros(n)
    for c in (-1.0, 1.0):
        idx = rng.choice(np.flatnonzero(yt == c), n_per_class_labeled, replace=False)
        y[idx] = c
    K = rbf_kernel(X, sigma=0.35)
    L = laplacian(knn_graph(X, 6, weights="heat"), kind)
    return dict(K=K, L=L, y=y, X=X, truth=yt)
