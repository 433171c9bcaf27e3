"""Fixtures of the LASS tests (helpers live in lass_oracles.py)."""

import numpy as np
import pytest

from lass_oracles import cvxpy_lass, path_graph, tv2_problem


@pytest.fixture
def cvx_lass():
    return cvxpy_lass


@pytest.fixture
def tv1():
    W = path_graph([1, 2, 1, 0.5])
    G = np.array([[1, 0, 0], [0, 0, 0], [0, 0.3, -0.5], [0, 0, 0], [0, 0, 0.8]], float)
    Zs = np.array([[1, 0, 0], [71 / 90, 19 / 90, 0], [41 / 60, 19 / 60, 0],
                   [41 / 90, 19 / 90, 1 / 3], [0, 0, 1]])
    mu = np.array([-71 / 90, 0, 1 / 60, 0, -7 / 15])
    Xi = np.array([[0, 26 / 45, 71 / 90], [0, 0, 0], [0, 0, 3 / 20], [0, 0, 0],
                   [43 / 180, 13 / 36, 0]])
    return W, G, 0.5, Zs, mu, Xi


@pytest.fixture
def tv2():
    return tv2_problem(0.4)
