"""Reader for the MIT CBCL faces ``.npz`` (the training part of FACEMIT)."""

from __future__ import annotations

import os
import zipfile

import numpy as np

from ._io import malformed

__all__ = ["parse_facemit"]


def parse_facemit(folder) -> dict:
    """``cbcl_faces_train.npz``: ``X`` uint8 (n, 19, 19), ``y`` 1 = face, 0 = non-face.

    Returns ``data`` float64 (n, 361) = pixels / 255, ``images`` uint8 (n, 19, 19) and
    ``target`` +1 (face) / -1 (non-face).
    """
    path = os.path.join(folder, "cbcl_faces_train.npz")
    try:
        with np.load(path, allow_pickle=False) as npz:
            X, y = npz["X"], npz["y"]
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise malformed(path, f"not a readable npz archive ({exc})") from exc
    except KeyError:
        raise malformed(path, "arrays X and y expected in the archive") from None
    if X.ndim != 3 or X.shape[1:] != (19, 19) or len(y) != len(X):
        raise malformed(path, f"expected X (n, 19, 19) and y (n,), got {X.shape}, {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise malformed(path, "y holds values other than 0 and 1")
    return {"data": X.reshape(len(X), -1).astype(np.float64) / 255.0,
            "images": np.asarray(X, dtype=np.uint8),
            "target": np.where(y == 1, 1, -1).astype(np.int64)}
