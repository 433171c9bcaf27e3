"""File helpers shared by the format readers: opening, checksums, uniform error messages."""

from __future__ import annotations

import gzip
import hashlib
import os

__all__ = ["malformed", "read_bytes", "read_text", "sha256_file"]


def malformed(path, what: str) -> ValueError:
    """The ValueError every reader raises for a file it cannot make sense of."""
    return ValueError(f"malformed data file {os.fspath(path)}: {what}")


def read_bytes(path) -> bytes:
    """Whole file as bytes, transparently gunzipped when the name ends in ``.gz``."""
    path = os.fspath(path)
    if not path.endswith(".gz"):
        with open(path, "rb") as fh:
            return fh.read()
    try:
        with gzip.open(path, "rb") as fh:
            return fh.read()
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise malformed(path, f"not a valid gzip stream ({exc})") from exc


def read_text(path, encoding: str = "utf-8") -> str:
    """Whole file as text (gunzipped if ``.gz``); undecodable bytes are a malformed file."""
    raw = read_bytes(path)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise malformed(path, f"not valid {encoding} text ({exc})") from exc


def sha256_file(path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes as stored (for ``.gz`` files: of the compressed bytes)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()
