"""Reader for the Pang & Lee "scale dataset v1.0" text tree (``scaledata/<Author>/...``)."""

from __future__ import annotations

import os

import numpy as np

from ._io import malformed, read_text

__all__ = ["parse_pang_lee"]


def _lines(path, encoding="latin-1") -> list[str]:
    # split on "\n" only: str.splitlines would also split on \x85 and \x0c, which occur as
    # ordinary latin-1 characters in the review texts.
    text = read_text(path, encoding=encoding)
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


def _numbers(path, dtype) -> np.ndarray:
    lines = _lines(path)
    try:
        return np.array([dtype(s) for s in lines], dtype=dtype)
    except ValueError:
        raise malformed(path, f"expected one {dtype.__name__} per line") from None


def parse_pang_lee(folder, authors) -> dict:
    """Concatenate the reviews of ``authors`` (in that order).

    Returns ``texts`` (list of str, one review each), ``target`` (float rating in [0, 1]),
    ``author`` (str per review), ``label3`` / ``label4`` (int 0..2 / 0..3 classes) and
    ``ids`` (int review ids).
    """
    texts, rating, label3, label4, ids, author = [], [], [], [], [], []
    root = os.path.join(folder, "scaledata")
    for name in authors:
        base = os.path.join(root, name)
        subj = _lines(os.path.join(base, f"subj.{name}.gz"))
        cols = {
            "rating": _numbers(os.path.join(base, f"rating.{name}"), float),
            "label.3class": _numbers(os.path.join(base, f"label.3class.{name}"), int),
            "label.4class": _numbers(os.path.join(base, f"label.4class.{name}"), int),
            "id": _numbers(os.path.join(base, f"id.{name}"), int),
        }
        for kind, col in cols.items():
            if len(col) != len(subj):
                raise malformed(os.path.join(base, f"{kind}.{name}"),
                                f"{len(col)} lines but subj.{name}.gz has {len(subj)} reviews")
        if cols["rating"].min() < 0 or cols["rating"].max() > 1:
            raise malformed(os.path.join(base, f"rating.{name}"), "ratings outside [0, 1]")
        texts.extend(subj)
        rating.append(cols["rating"])
        label3.append(cols["label.3class"])
        label4.append(cols["label.4class"])
        ids.append(cols["id"])
        author.extend([name] * len(subj))
    return {"texts": texts, "target": np.concatenate(rating),
            "author": np.array(author), "label3": np.concatenate(label3).astype(np.int64),
            "label4": np.concatenate(label4).astype(np.int64),
            "ids": np.concatenate(ids).astype(np.int64)}
