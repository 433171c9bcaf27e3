"""``load_dataset`` and ``list_datasets``: parse once per process, hand out fresh copies."""

from __future__ import annotations

import copy
import functools
import os

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from . import _describe
from ._arff import parse_mulan
from ._home import ENV_VAR, data_home as _data_home
from ._idx import parse_mnist
from ._io import sha256_file
from ._matlab import parse_coil20, parse_sindhwani
from ._npz import parse_facemit
from ._pang_lee import parse_pang_lee
from ._tabular import parse_libsvm, parse_uci_csv
from .registry import PANG_LEE_AUTHORS, REGISTRY, DatasetInfo

__all__ = ["list_datasets", "load_dataset"]

# name -> parser(folder) for the sets stored as files; derived sets reuse their source's parse.
_PARSERS = {
    "g50c": lambda f: parse_sindhwani(f, "g50c.mat"),
    "coil20": parse_coil20,
    "uspst": lambda f: parse_sindhwani(f, "uspst.mat"),
    "pcmac": lambda f: parse_sindhwani(f, "pcmac.mat"),
    "mnist": parse_mnist,
    "facemit": parse_facemit,
    "emotions": lambda f: parse_mulan(f, "emotions", ".arff"),
    "yeast": lambda f: parse_mulan(f, "yeast", ".arff.gz"),
    "breast-cancer": lambda f: parse_libsvm(f, "breast-cancer_scale", 10),
    "diabetes": lambda f: parse_libsvm(f, "diabetes", 8, scale=True),
    "fourclass": lambda f: parse_libsvm(f, "fourclass_scale", 2),
    "heart": lambda f: parse_libsvm(f, "heart_scale", 13),
    "ionosphere": lambda f: parse_uci_csv(f, "ionosphere.data", 34, positive="g"),
    "sonar": lambda f: parse_uci_csv(f, "sonar.all-data", 60, positive="M"),
    "pang_lee": lambda f: parse_pang_lee(f, PANG_LEE_AUTHORS),
}
_SOURCE = {"coil20b": "coil20", "uspstb": "uspst", "mnist3vs8": "mnist"}


def _freeze(obj):
    """Mark every array in a parsed result read-only, so the cache cannot be edited in place."""
    if isinstance(obj, np.ndarray):
        obj.flags.writeable = False
    elif sp.issparse(obj):
        for arr in (obj.data, obj.indices, obj.indptr):
            arr.flags.writeable = False
    elif isinstance(obj, dict):
        for v in obj.values():
            _freeze(v)
    return obj


@functools.lru_cache(maxsize=None)
def _parsed(source: str, folder: str, stamp: tuple) -> dict:
    # ``stamp`` (size and mtime of every file) is only part of the key: a file replaced on
    # disk is parsed again instead of being served stale from the cache.
    return _freeze(_PARSERS[source](folder))


def _stamp(info: DatasetInfo, folder: str) -> tuple:
    stats = (os.stat(os.path.join(folder, f)) for f in info.files)
    return tuple((st.st_size, st.st_mtime_ns) for st in stats)


def _fresh(obj):
    """A writable deep copy of a cached value (arrays, sparse matrices, lists, dicts)."""
    if isinstance(obj, np.ndarray) or sp.issparse(obj):
        return obj.copy()
    if isinstance(obj, dict):
        return {k: _fresh(v) for k, v in obj.items()}
    return copy.deepcopy(obj)


def _to_unit_float32(images) -> np.ndarray:
    """uint8 pixels -> float32 in [0, 1], dividing in place to avoid a second copy."""
    out = images.astype(np.float32)
    out /= np.float32(255.0)
    return out


def _finish_mnist(raw) -> dict:
    n_train = raw["n_train"]
    n = len(raw["target"])
    return {"data": _to_unit_float32(raw["images"]),
            "target": raw["target"].copy(),
            "splits": {"train": np.arange(n_train), "test": np.arange(n_train, n)}}


def _finish_mnist3vs8(raw) -> dict:
    keep = np.flatnonzero(np.isin(raw["target"], (3, 8)))
    digit = raw["target"][keep]
    n_train = int(np.searchsorted(keep, raw["n_train"]))
    return {"data": _to_unit_float32(raw["images"][keep]),
            "target": np.where(digit == 3, 1, -1).astype(np.int64),
            "digit": digit.copy(),
            "splits": {"train": np.arange(n_train), "test": np.arange(n_train, len(keep))}}


def _finish_binary(raw, original: str, positive) -> dict:
    out = _fresh(raw)
    out[original] = out["target"]
    out["target"] = np.where(positive(out[original]), 1, -1).astype(np.int64)
    return out


def _finish(name: str, raw: dict) -> dict:
    if name == "mnist":
        return _finish_mnist(raw)
    if name == "mnist3vs8":
        return _finish_mnist3vs8(raw)
    if name == "coil20b":
        return _finish_binary(raw, "object", lambda obj: obj <= 10)
    if name == "uspstb":
        return _finish_binary(raw, "digit", lambda digit: digit <= 4)
    out = _fresh(raw)
    if name == "pang_lee":
        out["data"] = list(out["texts"])
    if "train_idx" in out:
        out["splits"] = {"train": out["train_idx"].copy(), "test": out["test_idx"].copy()}
    return out


def _info(name: str) -> DatasetInfo:
    """Registry entry for ``name``; the papers' spellings (``COIL20(B)``, ``MNIST3VS8``) and
    the Pang-Lee folder name are accepted too."""
    key = name.lower().replace("(", "").replace(")", "") if isinstance(name, str) else name
    key = {"pang_lee_scale_v1": "pang_lee"}.get(key, key)
    try:
        return REGISTRY[key]
    except (KeyError, TypeError):
        valid = ", ".join(REGISTRY)
        raise ValueError(f"unknown data set {name!r}; valid names: {valid}") from None


def _origin(data_home) -> str:
    if data_home is not None:
        return "the data_home argument"
    if os.environ.get(ENV_VAR):
        return f"${ENV_VAR}"
    return "the default: ~/semisup_data, else next to the checkout"


def _check_present(info: DatasetInfo, home: str, origin: str) -> str:
    folder = os.path.join(home, info.folder)
    missing = [os.path.join(folder, f) for f in info.files
               if not os.path.isfile(os.path.join(folder, f))]
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more"
                                          if len(missing) > 3 else "")
        raise FileNotFoundError(
            f"data set {info.name!r} not found: missing {shown} (data directory {home}, from "
            f"{origin}; set ${ENV_VAR} or pass data_home=..., or download it with "
            f"`semisup datasets --fetch {info.name}`)")
    return folder


def verify_checksums(info: DatasetInfo, folder: str) -> None:
    """Raise ValueError if a file's sha256 differs from the one PROVENANCE.md states."""
    for rel, expected in info.files.items():
        path = os.path.join(folder, rel)
        got = sha256_file(path)
        if got != expected:
            raise ValueError(f"checksum mismatch for {path}: sha256 {got}, PROVENANCE.md "
                             f"states {expected}; the file is corrupt or a different version")


def load_dataset(name: str, data_home=None, *, verify: bool = False) -> Bunch:
    """Load a benchmark data set from the shared data directory.

    Files are parsed once per process (cached on the set, the resolved directory and the
    files' size and mtime); every call returns fresh, writable copies, so callers may modify
    what they get.

    Derived sets (Melacci & Belkin 2011, "Laplacian SVMs trained in the primal", Sec. 6 and
    Tables 1-2; spec ``methods/lapsvm.md`` Sec. 10):

    * ``coil20b`` -- COIL20(B), "discriminates between the first 10 and the last 10
      objects": target +1 for objects 1-10, -1 for 11-20 (original id in ``object``).
    * ``uspstb`` -- USPST(B), "the first 5 digits and the remaining ones": +1 for digits
      0-4, -1 for 5-9 (original digit in ``digit``).
    * ``mnist3vs8`` -- MNIST3VS8, "separate digit 3 from digit 8": +1 for 3, -1 for 8, with
      the fixed MNIST train (11982) / test (1984) split in ``splits``.
    * ``diabetes``, ``ionosphere``, ``sonar`` -- rescaled per feature to [-1, 1] as LIBSVM's
      ``svm-scale`` does (the ``*_scale`` files are missing); raw values in ``data_unscaled``.

    Label convention: binary sets have int targets +1 / -1 (as the LapSVM and SPORE papers
    write them) and the same labels as 0 / 1 in ``target01`` (1 for +1). Use ``target01``
    to hide labels for semi-supervised learning: semisup marks an unlabeled point with
    ``-1``, which in ``target`` is a class (``y = np.where(mask, b.target01, -1)``; with
    ``target`` every negative example would read as unlabeled). Multi-class sets keep
    their original labels; multi-label sets (``emotions``, ``yeast``) have an n x t int
    0/1 ``target``; ``pang_lee`` has the float rating.

    Parameters
    ----------
    name : str
        One of ``semisup.datasets.names()``: ``g50c coil20 coil20b uspst uspstb pcmac mnist
        mnist3vs8 facemit emotions yeast breast-cancer diabetes fourclass heart ionosphere
        sonar pang_lee``; case and parentheses are ignored, so the papers' ``COIL20(B)`` or
        ``MNIST3VS8`` work too.
    data_home : str or path-like, optional
        Data directory; default from :func:`semisup.datasets.data_home`.
    verify : bool, default False
        Check every file's sha256 against the one recorded in PROVENANCE.md first (reads
        every byte: about 0.1 s for MNIST's 11 MB).

    Returns
    -------
    sklearn.utils.Bunch
        Always ``data``, ``target`` and ``DESCR`` (which lists the set's other fields and
        conventions); ``target01`` for the +1 / -1 binary sets; ``splits`` where published splits exist (a dict of 0-based row-index
        arrays: ``labeled``/``unlabeled`` of shape (10, k) for G50C, USPST, PCMAC;
        ``train``/``test`` for MNIST and the Mulan sets); e.g. ``images``, ``label_names``,
        ``texts``, ``author``, ``label3``, ``label4``, ``ids`` for the sets that have them.

    Raises
    ------
    ValueError
        Unknown name (the message lists the valid ones), a malformed file (the message names
        the file and the problem) or, with ``verify=True``, a checksum mismatch.
    FileNotFoundError
        The set's files are not in the data directory (the message says where it looked).
    """
    info = _info(name)
    home = _data_home(data_home)
    folder = _check_present(info, home, _origin(data_home))
    if verify:
        verify_checksums(info, folder)
    source = _SOURCE.get(info.name, info.name)
    raw = _parsed(source, os.path.realpath(folder), _stamp(info, folder))
    out = _finish(info.name, raw)
    target = np.asarray(out["target"])
    pm1 = target.ndim == 1 and target.dtype.kind in "iu" and set(np.unique(target)) == {-1, 1}
    if pm1:
        # -1 is a class of these sets and semisup's marker of an unlabeled point: give the
        # 0/1 coding beside the papers' one, so that masking labels with -1 is unambiguous
        out["target01"] = (target > 0).astype(target.dtype)
    out["DESCR"] = _describe.describe(info, folder, pm1=pm1)
    return Bunch(**out)


def list_datasets(data_home=None) -> list[dict]:
    """Every known data set with whether its files are present; parses nothing.

    Returns
    -------
    list of dict
        Keys ``name``, ``found`` (bool), ``shape`` (of ``data``), ``classes`` (number of
        classes, of labels for multi-label sets, None for the rating regression),
        ``format``, ``path`` (the set's folder), ``task`` and ``description``.
        When no data directory can be resolved every set is reported as not found.
    """
    try:
        home = _data_home(data_home)
    except FileNotFoundError:
        home = None
    rows = []
    for info in REGISTRY.values():
        folder = os.path.join(home, info.folder) if home else None
        found = folder is not None and all(os.path.isfile(os.path.join(folder, f))
                                           for f in info.files)
        rows.append({"name": info.name, "found": found, "shape": info.shape,
                     "classes": info.classes if info.task != "regression" else None,
                     "format": info.format, "path": folder or "(no data directory)",
                     "task": info.task, "description": info.description})
    return rows
