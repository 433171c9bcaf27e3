"""Readers for the MATLAB v5 files: G50C, COIL20, USPST, PCMAC (Sindhwani's benchmark files).

Each ``parse_*`` takes the set's folder and returns a dict of arrays (the cached, parsed form);
split indices are converted from MATLAB's 1-based to 0-based here.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.io
import scipy.sparse as sp

from ._io import malformed

__all__ = ["parse_coil20", "parse_sindhwani", "read_mat"]


def read_mat(path, required) -> dict:
    """``scipy.io.loadmat`` with the variables ``required`` checked to be present."""
    try:
        mat = scipy.io.loadmat(path)
    except (ValueError, TypeError, OSError, NotImplementedError) as exc:
        # loadmat raises a zoo of errors on garbage (ValueError for unknown mat format,
        # TypeError on truncated streams, NotImplementedError for v7.3/HDF5).
        raise malformed(path, f"not a readable MATLAB v5 file ({exc})") from exc
    missing = [k for k in required if k not in mat]
    if missing:
        present = sorted(k for k in mat if not k.startswith("__"))
        raise malformed(path, f"variables {missing} missing (present: {present})")
    return mat


def _labels(path, y, n) -> np.ndarray:
    y = np.asarray(y).ravel()
    if y.shape[0] != n:
        raise malformed(path, f"{y.shape[0]} labels for {n} rows")
    return y.astype(np.int64)


def _split_indices(path, idx, n, name) -> np.ndarray:
    idx = np.asarray(idx, dtype=np.int64)
    if idx.ndim != 2:
        raise malformed(path, f"{name} should be a (n_splits, k) matrix, got shape {idx.shape}")
    if idx.size and (idx.min() < 1 or idx.max() > n):
        raise malformed(path, f"{name} holds indices outside 1..{n} "
                              f"(min {idx.min()}, max {idx.max()}); expected MATLAB 1-based")
    return idx - 1


def parse_sindhwani(folder, filename) -> dict:
    """G50C / USPST / PCMAC: ``X``, ``y`` and the 10 published splits ``idxLabs``/``idxUnls``.

    Returns ``data`` (dense float64, or CSR float64 for PCMAC), ``target`` (int64, as stored:
    +-1 for the binary sets, 0..9 for USPST) and ``splits = {"labeled": (10, l),
    "unlabeled": (10, u)}`` of 0-based row indices.
    """
    path = os.path.join(folder, filename)
    mat = read_mat(path, ["X", "y", "idxLabs", "idxUnls"])
    X = mat["X"]
    X = X.tocsr().astype(np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise malformed(path, f"X should be 2-D, got shape {X.shape}")
    n = X.shape[0]
    return {
        "data": X,
        "target": _labels(path, mat["y"], n),
        "splits": {"labeled": _split_indices(path, mat["idxLabs"], n, "idxLabs"),
                   "unlabeled": _split_indices(path, mat["idxUnls"], n, "idxUnls")},
    }


def parse_coil20(folder) -> dict:
    """COIL20.mat: ``X`` uint8 (1440, 1024) column-major 32x32 images, ``Y`` objects 1..20.

    Returns ``data`` float64 in [0, 1] (pixel order as stored, i.e. MATLAB column-major),
    ``images`` uint8 (1440, 32, 32) upright, and ``target`` the object id 1..20.
    """
    path = os.path.join(folder, "COIL20.mat")
    mat = read_mat(path, ["X", "Y"])
    X = np.asarray(mat["X"])
    if X.ndim != 2 or X.shape[1] != 1024:
        raise malformed(path, f"X should be (n, 1024) 32x32 images, got shape {X.shape}")
    images = X.reshape(-1, 32, 32).transpose(0, 2, 1)  # column-major -> upright
    return {
        "data": X.astype(np.float64) / 255.0,
        "images": np.ascontiguousarray(images, dtype=np.uint8),
        "target": _labels(path, mat["Y"], X.shape[0]),
    }
