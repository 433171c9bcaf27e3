"""The spec's literal test graphs (spore.md §11)."""

import numpy as np

EDGES = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (3, 4), (4, 5), (4, 6), (5, 6), (5, 7),
         (6, 7), (0, 7)]
EDGES2 = [(0, 1), (2, 3), (4, 5), (6, 7), (0, 4), (1, 5), (2, 6), (3, 7), (0, 2), (5, 7)]
Y = np.array([1, 1, 1, 1, -1, -1, -1, -1], dtype=float)
S = np.array([0, 1, 2, 5, 6])


def adjacency(edges, n=8):
    A = np.zeros((n, n))
    for i, j in edges:
        A[i, j] = A[j, i] = 1.0
    return A


def spec_V():
    V = np.round(np.sin(np.arange(64) * 1.3 + 0.5).reshape(8, 8), 3)
    return (V + V.T) / 2


def random_graph(n, p, rng):
    U = np.triu(rng.random((n, n)) < p, 1)
    return (U | U.T).astype(float)
