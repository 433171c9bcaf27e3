"""Reader for the IDX format of MNIST (LeCun's ``*-idx?-ubyte.gz``), via ``np.frombuffer``."""

from __future__ import annotations

import os

import numpy as np

from ._io import malformed, read_bytes

__all__ = ["parse_idx", "parse_mnist"]

# IDX magic: two zero bytes, a type code (0x08 = unsigned byte), the number of dimensions.
_UBYTE = 0x08


def parse_idx(path) -> np.ndarray:
    """Parse one IDX file of unsigned bytes into an array of its declared shape (zero copy)."""
    raw = read_bytes(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise malformed(path, "bad IDX magic number (expected 0x0000 then type and ndim)")
    if raw[2] != _UBYTE:
        raise malformed(path, f"IDX type code 0x{raw[2]:02x}; only unsigned bytes (0x08) "
                              "are supported")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise malformed(path, "file ends inside the IDX header")
    shape = tuple(int(d) for d in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    expected = int(np.prod(shape)) if shape else 0
    if len(raw) - header != expected:
        raise malformed(path, f"IDX header declares shape {shape} = {expected} bytes but "
                              f"{len(raw) - header} bytes follow")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(shape)


def parse_mnist(folder) -> dict:
    """The four MNIST files: ``images`` uint8 (70000, 784) (train rows first), ``target``,
    and ``n_train`` (60000)."""
    parts = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        img_path = os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz")
        lab_path = os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz")
        images = parse_idx(img_path)
        labels = parse_idx(lab_path)
        if images.ndim != 3 or images.shape[1:] != (28, 28):
            raise malformed(img_path, f"expected (n, 28, 28) images, got {images.shape}")
        if labels.ndim != 1 or labels.shape[0] != images.shape[0]:
            raise malformed(lab_path, f"{labels.shape} labels for {images.shape[0]} images")
        if labels.max(initial=0) > 9:
            raise malformed(lab_path, f"label {labels.max()} outside 0..9")
        parts[split] = (images.reshape(len(images), 784), labels)
    images = np.concatenate([parts["train"][0], parts["test"][0]])
    target = np.concatenate([parts["train"][1], parts["test"][1]]).astype(np.int64)
    return {"images": images, "target": target, "n_train": len(parts["train"][1])}
