"""A small ARFF reader (dense and sparse rows, numeric and nominal attributes) and the Mulan
multi-label sets built on it (emotions, yeast: ARFF + XML label list, standard train/test)."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

import numpy as np

from ._io import malformed, read_text

__all__ = ["parse_arff", "parse_mulan", "read_mulan_labels"]

_ATTR = re.compile(r"""@attribute\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s+(.+)$""",
                   re.IGNORECASE)
_NUMERIC = {"numeric", "real", "integer"}


def _nominal_values(path, spec: str) -> list[str]:
    if not (spec.startswith("{") and spec.endswith("}")):
        raise malformed(path, f"unsupported attribute type {spec!r} (numeric or nominal only)")
    return [v.strip().strip("'\"") for v in spec[1:-1].split(",")]


def _column_decoder(values: list[str]):
    """Nominal values that are all numbers keep their numeric value; otherwise their code."""
    try:
        return {v: float(v) for v in values}
    except ValueError:
        return {v: float(i) for i, v in enumerate(values)}


def parse_arff(path) -> tuple[list[str], np.ndarray]:
    """Parse an ARFF file into attribute names and a float64 matrix (n_rows, n_attributes).

    Numeric attributes are parsed as floats (``?`` -> NaN); nominal attributes whose declared
    values are numbers keep that number, other nominal values become their 0-based code.
    Sparse rows (``{index value, ...}``) are supported; string/date attributes are not.

    Raises
    ------
    ValueError
        Naming the file and the line when the header or a data row cannot be parsed.
    """
    text = read_text(path, encoding="latin-1")
    lines = text.split("\n")
    names, decoders = [], []
    data_start = None
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        low = line.lower()
        if low.startswith("@relation"):
            continue
        if low.startswith("@attribute"):
            m = _ATTR.match(line)
            if m is None:
                raise malformed(path, f"line {lineno}: cannot parse attribute {line[:80]!r}")
            name, spec = m.group(1).strip("'\""), m.group(2).strip()
            names.append(name)
            decoders.append(None if spec.lower() in _NUMERIC
                            else _column_decoder(_nominal_values(path, spec)))
            continue
        if low.startswith("@data"):
            data_start = lineno
            break
        raise malformed(path, f"line {lineno}: unexpected header line {line[:80]!r}")
    if data_start is None or not names:
        raise malformed(path, "no @attribute declarations or no @data section (not ARFF?)")
    rows = []
    d = len(names)
    for lineno, raw in enumerate(lines[data_start:], start=data_start + 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        rows.append(_parse_row(path, lineno, line, names, decoders, d))
    if not rows:
        raise malformed(path, "the @data section holds no rows")
    return names, np.array(rows, dtype=np.float64)


def _parse_row(path, lineno, line, names, decoders, d) -> list[float]:
    if line.startswith("{"):
        if not line.endswith("}"):
            raise malformed(path, f"line {lineno}: unterminated sparse row")
        row = [0.0] * d
        body = line[1:-1].strip()
        for item in filter(None, (s.strip() for s in body.split(","))):
            parts = item.split(None, 1)
            if len(parts) != 2 or not parts[0].isdigit() or int(parts[0]) >= d:
                raise malformed(path, f"line {lineno}: bad sparse entry {item!r}")
            j = int(parts[0])
            row[j] = _value(path, lineno, parts[1].strip(), names[j], decoders[j])
        return row
    fields = line.split(",")
    if len(fields) != d:
        raise malformed(path, f"line {lineno}: {len(fields)} values, header declares {d} "
                              "attributes")
    return [_value(path, lineno, f.strip(), names[j], decoders[j])
            for j, f in enumerate(fields)]


def _value(path, lineno, token, name, decoder) -> float:
    token = token.strip("'\"")
    if token == "?":
        return float("nan")
    if decoder is None:
        try:
            return float(token)
        except ValueError:
            raise malformed(path, f"line {lineno}: attribute {name!r} is numeric but holds "
                                  f"{token!r}") from None
    try:
        return decoder[token]
    except KeyError:
        raise malformed(path, f"line {lineno}: {token!r} is not a declared value of nominal "
                              f"attribute {name!r}") from None


def read_mulan_labels(path) -> list[str]:
    """Label names from a Mulan ``<labels><label name=.../></labels>`` XML file."""
    try:
        root = ET.fromstring(read_text(path))
    except ET.ParseError as exc:
        raise malformed(path, f"not well-formed XML ({exc})") from exc
    labels = [el.get("name") for el in root.iter() if el.tag.split("}")[-1] == "label"]
    if not labels or any(lab is None for lab in labels):
        raise malformed(path, "no <label name=...> elements")
    return labels


def _split_arrays(path, names, values, label_set):
    is_label = np.array([n in label_set for n in names])
    missing = label_set - set(names)
    if missing:
        raise malformed(path, f"labels {sorted(missing)} from the XML are not attributes")
    Y = values[:, is_label]
    if not np.isin(Y, (0.0, 1.0)).all():
        raise malformed(path, "label columns hold values other than 0 and 1")
    X = values[:, ~is_label]
    if np.isnan(X).any():
        raise malformed(path, "missing values ('?') in the features")
    return X, Y.astype(np.int64), [n for n, lab in zip(names, is_label) if lab]


def _locate_rows(full, part, path) -> np.ndarray:
    """Indices in ``full`` of the rows of ``part`` (exact byte match; duplicates consumed in
    order)."""
    where: dict[bytes, list[int]] = {}
    for i, row in enumerate(full):
        where.setdefault(row.tobytes(), []).append(i)
    out = np.empty(len(part), dtype=np.int64)
    for i, row in enumerate(part):
        bucket = where.get(row.tobytes())
        if not bucket:
            raise malformed(path, f"row {i} does not occur in the full data file")
        out[i] = bucket.pop(0)
    return out


def parse_mulan(folder, stem, suffix=".arff") -> dict:
    """A Mulan set: ``<stem><suffix>`` (all rows), ``<stem>-train/-test<suffix>`` and
    ``<stem>.xml``.

    Returns ``data`` (float64 features), ``target`` (n x t int 0/1, label columns in the ARFF
    attribute order), ``label_names``, ``feature_names``, and ``train_idx`` / ``test_idx``
    (0-based rows of ``data`` forming the standard split), when both split files exist.
    """
    xml_path = os.path.join(folder, f"{stem}.xml")
    label_set = set(read_mulan_labels(xml_path))
    full_path = os.path.join(folder, f"{stem}{suffix}")
    names, values = parse_arff(full_path)
    X, Y, label_names = _split_arrays(full_path, names, values, label_set)
    out = {"data": X, "target": Y, "label_names": label_names,
           "feature_names": [n for n in names if n not in label_set]}
    split_paths = [os.path.join(folder, f"{stem}-{s}{suffix}") for s in ("train", "test")]
    if all(os.path.isfile(p) for p in split_paths):
        idx = []
        for p in split_paths:
            part_names, part = parse_arff(p)
            if part_names != names:
                raise malformed(p, f"attributes differ from those of {full_path}")
            idx.append(_locate_rows(values, part, p))
        both = np.concatenate(idx)
        if len(np.unique(both)) != len(values) or len(both) != len(values):
            raise malformed(split_paths[0], "train and test files do not partition the full "
                                            "data file")
        out["train_idx"], out["test_idx"] = idx
    return out
