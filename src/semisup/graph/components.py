"""Connected components and per-component splitting of graph problems."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components as _cc


def connected_components(W) -> tuple[int, np.ndarray]:
    """Number of connected components and the component label of each node."""
    n, labels = _cc(sp.csr_matrix(W), directed=False)
    return int(n), labels


def split_by_component(W) -> Iterator[tuple[np.ndarray, sp.csr_matrix]]:
    """Yield ``(indices, W_sub)`` for each connected component, largest first.

    A graph problem whose objective is a sum over components (Laplacian smoothing terms)
    can be solved per component and reassembled with ``out[indices] = solution``.
    """
    W = sp.csr_matrix(W)
    n_comp, labels = connected_components(W)
    order = np.argsort(-np.bincount(labels, minlength=n_comp), kind="stable")
    for c in order:
        idx = np.nonzero(labels == c)[0]
        yield idx, W[idx][:, idx].tocsr()
