"""``fetch``: download benchmark sets from their public sources, verify, place them.

Each file goes to a staging directory inside the data directory, is checked (see
:mod:`._sources`), post-processed and checked again; only when every file of the set is good
are they moved into the set's folder (``os.replace``, atomic per file) and a PROVENANCE.md
written. On any failure the staging directory is removed: nothing half-written is left.
"""

from __future__ import annotations

import datetime
import hashlib
import http.client
import io
import os
import pickle
import posixpath
import shutil
import struct
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

from ._describe import SOURCES, fetch_command
from ._home import ENV_VAR, HOW_TO_GET, searched_places, user_data_dir
from ._io import sha256_file
from ._sources import MANIFEST, FileSource, stored_sha256
from .registry import REGISTRY

__all__ = ["FetchError", "MIRROR_ENV_VAR", "describe_sources", "fetch"]

#: Environment variable naming a mirror laid out as ``<base>/<folder>/<file as stored>``.
MIRROR_ENV_VAR = "SEMISUP_DATA_MIRROR"

_CHUNK = 1 << 16
_TIMEOUT = 60


class FetchError(RuntimeError):
    """A file could not be downloaded or failed its checks; the message says which and why."""


# --- choosing what to fetch ------------------------------------------------------------

def _folders_for(name) -> list[str]:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (a data set, a folder or 'all'), got {name!r}")
    if name == "all":
        return list(MANIFEST)
    key = name.lower().replace("(", "").replace(")", "")
    if key in MANIFEST:
        return [key]
    if key in REGISTRY:
        return [REGISTRY[key].folder]
    valid = ", ".join(["all", *MANIFEST, *(n for n in REGISTRY if n not in MANIFEST)])
    raise ValueError(f"unknown data set {name!r} for name; valid names: {valid}")


def _target_home(data_home) -> Path:
    if data_home is not None:
        return Path(data_home).expanduser().resolve()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser().resolve()
    return user_data_dir()


# --- downloading ----------------------------------------------------------------------

class _Progress:
    """Plain-text progress on stderr: bytes so far / total (when the server says)."""

    def __init__(self, label: str, total: int | None, enabled: bool):
        self.label, self.total, self.enabled = label, total, enabled
        self.live = enabled and sys.stderr.isatty()
        self.done, self._last = 0, 0.0

    def _line(self) -> str:
        if self.total:
            frac = min(self.done / self.total, 1.0)
            bar = "#" * int(30 * frac)
            return (f"  {self.label} [{bar:<30}] {self.done / 1e6:.1f} / "
                    f"{self.total / 1e6:.1f} MB ({self.done} / {self.total} bytes)")
        return f"  {self.label} {self.done / 1e6:.1f} MB ({self.done} bytes)"

    def update(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self.live and now - self._last > 0.1:
            self._last = now
            sys.stderr.write("\r" + self._line())
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write(("\r" if self.live else "") + self._line() + "\n")
            sys.stderr.flush()


def _download(url: str, dest: Path, label: str, verbose: bool, where: str) -> tuple[str, str]:
    """Stream ``url`` into ``dest``; return (sha256, git blob id) of the bytes received."""
    request = urllib.request.Request(url, headers={"User-Agent": "semisup-fetch"})
    sha, received, total, cut = hashlib.sha256(), 0, None, False
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT) as resp, \
                open(dest, "wb") as out:
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            progress = _Progress(label, total, verbose)
            try:
                while True:
                    try:
                        block = resp.read(_CHUNK)
                    except http.client.IncompleteRead as exc:  # connection closed early
                        block, cut = exc.partial, True
                    out.write(block)
                    sha.update(block)
                    received += len(block)
                    progress.update(len(block))
                    if cut or not block:
                        break
            finally:
                progress.close()
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{where}: download failed: HTTP {exc.code} {exc.reason} from "
                         f"{url}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"{where}: download failed from {url}: {reason!r}") from None
    if cut or (total is not None and received != total):
        raise FetchError(f"{where}: truncated download from {url}: received {received} "
                         f"bytes, expected {total if total is not None else 'more'} "
                         f"(Content-Length)")
    return sha.hexdigest(), _git_blob_id(dest, received)


def _git_blob_id(path: Path, size: int) -> str:
    h = hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check(where: str, url: str, what: str, expected: str, got: str) -> None:
    if expected != got:
        raise FetchError(f"{where}: checksum mismatch for {url}: {what} expected {expected}, "
                         f"got {got}; the download is corrupt or a different version "
                         f"(nothing was kept)")


# --- post-processing ------------------------------------------------------------------

def _gzip_bytes(data: bytes) -> bytes:
    """``gzip -9`` with Python's header: no name, mtime 0, XFL 2, OS 255 (reproducible)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = comp.compress(data) + comp.flush()
    trailer = struct.pack("<LL", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + body + trailer


def _drop_lines(data: bytes, n: int) -> bytes:
    parts = data.split(b"\n", n)
    if len(parts) <= n:
        raise ValueError(f"has fewer than {n + 1} lines")
    return parts[n]


def _tar_member(data: bytes, member: str, sha256: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        # Compared as normalised paths: some tar tools write "./name".
        info = next((m for m in tar.getmembers()
                     if posixpath.normpath(m.name) == posixpath.normpath(member)), None)
        if info is None:
            raise ValueError(f"has no member {member}")
        if not info.isfile():
            raise ValueError(f"member {member} is not a regular file")
        content = tar.extractfile(info).read()
    got = hashlib.sha256(content).hexdigest()
    if got != sha256:
        raise ValueError(f"member {member}: sha256 expected {sha256}, got {got}")
    return content


class _ArraysOnly(pickle.Unpickler):
    """Unpickles numpy arrays, dtypes and scalars; refuses every other global."""

    _NUMPY = {("multiarray", "_reconstruct"), ("multiarray", "scalar"),
              ("numeric", "_frombuffer")}

    def find_class(self, module, name):
        import numpy as np
        if (module, name) in {("numpy", "ndarray"), ("numpy", "dtype")}:
            return getattr(np, name)
        if (module, name) == ("_codecs", "encode"):  # bytes in protocol-2 pickles
            import codecs
            return codecs.encode
        prefix, _, sub = module.rpartition(".")
        if prefix in ("numpy.core", "numpy._core") and (sub, name) in self._NUMPY:
            import importlib
            try:  # the same functions live in numpy._core (numpy >= 2) or numpy.core
                return getattr(importlib.import_module(f"numpy._core.{sub}"), name)
            except ImportError:
                return getattr(importlib.import_module(f"numpy.core.{sub}"), name)
        raise pickle.UnpicklingError(f"global {module}.{name} is not allowed")


def _pickle_to_npz(data: bytes) -> bytes:
    """CBCL training pickle (list of (19x19 image, label)) -> npz with X uint8, y int8."""
    import numpy as np
    pairs = _ArraysOnly(io.BytesIO(data)).load()
    X = np.stack([np.asarray(image, dtype=np.uint8) for image, _ in pairs])
    y = np.asarray([int(label) for _, label in pairs], dtype=np.int8)
    buf = io.BytesIO()
    np.savez_compressed(buf, X=X, y=y)  # zip entries dated 1980-01-01: reproducible bytes
    return buf.getvalue()


def _post_process(step: tuple | None, data: bytes) -> bytes:
    if step is None:
        return data
    kind = step[0]
    if kind == "gzip":
        return _gzip_bytes(data)
    if kind == "drop_lines":
        return _drop_lines(data, step[1])
    if kind == "tar_member_gzip":
        return _gzip_bytes(_tar_member(data, step[1], step[2]))
    if kind == "pickle_to_npz":
        return _pickle_to_npz(data)
    raise ValueError(f"unknown post-processing step {kind!r}")


# --- one file, one set ---------------------------------------------------------------

def _mirror_url(base: str, folder: str, file: str) -> str:
    quoted = "/".join(urllib.parse.quote(p, safe="+") for p in (folder, *file.split("/")))
    return f"{base.rstrip('/')}/{quoted}"


def _fetch_file(src: FileSource, folder: str, staging: Path, base_url: str | None,
                verbose: bool) -> Path:
    """Download, verify and post-process one file into ``staging``; return its path there."""
    final_sha = stored_sha256(folder, src.file)
    url = _mirror_url(base_url, folder, src.file) if base_url else src.url
    where = f"data set {folder!r}, file {src.file!r}"
    staged = staging / src.file
    staged.parent.mkdir(parents=True, exist_ok=True)
    raw = staging / f".{Path(src.file).name}.download"
    sha, blob = _download(url, raw, src.file, verbose, where)
    if base_url:  # a mirror serves files as stored
        _check(where, url, "sha256 (PROVENANCE.md)", final_sha, sha)
        os.replace(raw, staged)
        return staged
    if src.download_sha256:
        _check(where, url, "sha256 of the download", src.download_sha256, sha)
    if src.git_blob:
        _check(where, url, "git blob id of the download", src.git_blob, blob)
    if src.post is None:
        _check(where, url, "sha256 (PROVENANCE.md)", final_sha, sha)
        os.replace(raw, staged)
        return staged
    try:
        data = _post_process(src.post, raw.read_bytes())
    except (ValueError, pickle.UnpicklingError, tarfile.TarError, OSError, EOFError) as exc:
        raise FetchError(f"{where}: post-processing {src.post[0]!r} of {url} failed: "
                         f"{exc}") from None
    finally:
        raw.unlink()
    got = hashlib.sha256(data).hexdigest()
    _check(where, url, f"sha256 after {src.post[0]!r} (PROVENANCE.md)", final_sha, got)
    staged.write_bytes(data)
    return staged


def _provenance_text(folder: str, base_url: str | None) -> str:
    s = MANIFEST[folder]
    today = datetime.date.today().isoformat()
    origin = (f"from the mirror {base_url} (files as stored, checked against the sha256 "
              f"below)" if base_url else "from the public sources below")
    lines = [f"# {folder}: {SOURCES[folder]}", "",
             f"Fetched by `semisup.datasets.fetch` on {today} {origin}.", "", "## Source", ""]
    lines += [f"- {f.origin} -> placed as `{f.file}` ({f.url})" for f in s.files]
    lines += ["", "## Licence / terms", "", f"- {s.licence}", "",
              "## Files placed here (sha256 of the file as stored here)", "",
              "| file | sha256 | checked on fetching |", "|---|---|---|"]
    lines += [f"| `{f.file}` | `{stored_sha256(folder, f.file)}` | "
              f"{'sha256 of PROVENANCE.md (mirror)' if base_url else f.checks} |"
              for f in s.files]
    lines += ["", "_Written by semisup's fetch; the shared copy's PROVENANCE.md also records "
              "what was measured on loading._", ""]
    return "\n".join(lines)


def _present(folder_path: Path, folder: str, src: FileSource) -> bool:
    path = folder_path / src.file
    return path.is_file() and sha256_file(path) == stored_sha256(folder, src.file)


def _fetch_set(folder: str, home: Path, base_url: str | None, force: bool,
               verbose: bool) -> Path:
    target = home / folder
    todo = [f for f in MANIFEST[folder].files
            if force or not _present(target, folder, f)]
    if not todo:
        if verbose:
            print(f"{folder}: already present and verified in {target}", file=sys.stderr)
        return target
    if verbose:
        print(f"{folder}: fetching {len(todo)} file(s) into {target}", file=sys.stderr)
    try:
        home.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder}.", suffix=".fetching", dir=home))
    except OSError as exc:
        raise FetchError(f"data set {folder!r}: cannot write in {home}: {exc}") from None
    try:
        staged = [(f, _fetch_file(f, folder, staging, base_url, verbose)) for f in todo]
        for f, path in staged:
            dest = target / f.file
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
        # Keep a PROVENANCE.md already there (e.g. the shared copy's, which says more).
        if force or not (target / "PROVENANCE.md").is_file():
            tmp = staging / "PROVENANCE.md"
            tmp.write_text(_provenance_text(folder, base_url), encoding="utf-8")
            os.replace(tmp, target / "PROVENANCE.md")
    except OSError as exc:
        raise FetchError(f"data set {folder!r}: cannot write in {target}: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def fetch(name: str = "all", *, data_home=None, base_url: str | None = None,
          force: bool = False, verbose: bool = True) -> list[str]:
    """Download benchmark data sets from their public sources into the data directory.

    Every file is checked against the checksums its folder's ``PROVENANCE.md`` records: the
    downloaded bytes (sha256 and/or git blob id), then the file as stored, after the
    documented post-processing (gzip, header lines removed, pickle to npz, ...). A set's
    files are staged inside the data directory and moved into ``<data_home>/<folder>/``
    only when all of them pass, together with a generated ``PROVENANCE.md``; on any error
    (HTTP error, truncated download, wrong checksum, interrupt) nothing is left behind.
    Files already present with the right sha256 are not downloaded again.

    Parameters
    ----------
    name : str, default "all"
        A data set (``semisup.datasets.names()``, e.g. ``"heart"``, ``"mnist3vs8"``), a
        folder (``"pang_lee_scale_v1"``), or ``"all"``.
    data_home : str or path-like, optional
        Where to place the sets. Default: ``$SEMISUP_DATA`` when set, else
        ``~/semisup_data`` (which :func:`semisup.datasets.data_home` also searches).
    base_url : str, optional
        A mirror laid out like the data directory: ``<base_url>/<folder>/<file as stored>``
        (``http(s)://`` or ``file://``); files are fetched as stored and checked against
        PROVENANCE.md's sha256. Default: ``$SEMISUP_DATA_MIRROR`` when set, else the public
        sources.
    force : bool, default False
        Download every file again, even when a verified copy is present.
    verbose : bool, default True
        Progress (bytes downloaded / total) on stderr.

    Returns
    -------
    list of str
        The folders of the fetched sets.

    Raises
    ------
    ValueError
        Unknown ``name`` (the message lists the valid ones).
    FetchError
        A download failed or a file failed its checks; the message names the set, the file,
        the URL and what went wrong (expected vs received sha256 or bytes).

    Examples
    --------
    >>> from semisup.datasets import fetch, load_dataset
    >>> fetch("heart")                                    # doctest: +SKIP
    ['/home/me/semisup_data/heart']
    >>> load_dataset("heart").data.shape                  # doctest: +SKIP
    (270, 13)
    """
    folders = _folders_for(name)
    if base_url is None:
        base_url = os.environ.get(MIRROR_ENV_VAR) or None
    if base_url is not None and not (isinstance(base_url, str) and base_url.startswith(
            ("http://", "https://", "file://"))):
        raise ValueError(f"base_url must be an http://, https:// or file:// URL (from "
                         f"base_url= or ${MIRROR_ENV_VAR}), got {base_url!r}")
    home = _target_home(data_home)
    return [str(_fetch_set(folder, home, base_url, force, verbose)) for folder in folders]


def describe_sources(data_home=None, *, all_found: bool = True) -> str:
    """Where each set comes from and the command that downloads it (``semisup datasets``).

    Parameters
    ----------
    data_home : str or path, optional
        The data directory the sets were looked for in (see :func:`data_home`).
    all_found : bool, default=True
        Whether every set was found; if not, the text ends with how to get them.

    Returns
    -------
    str
        One entry per data folder (its public source and its ``semisup datasets --fetch``
        command), the places searched, and how to fetch every set or use a mirror.

    Examples
    --------
    >>> from semisup.datasets import describe_sources
    >>> "semisup datasets --fetch all" in describe_sources()
    True
    """
    lines = ["Where each set comes from, and the command that downloads it (checking "
             "sha256):"]
    # each folder under the names `semisup datasets` lists (and load_dataset takes), with
    # the folder only where no set is named after it (pang_lee in pang_lee_scale_v1)
    entries = []
    for folder, source in SOURCES.items():
        sets = [info.name for info in REGISTRY.values() if info.folder == folder] or [folder]
        label = ", ".join(sets) + ("" if folder in sets else f" (folder {folder})")
        entries.append((label, source, folder if folder in sets else sets[0],
                        MANIFEST[folder].note))
    width = max(len(e[0]) for e in entries)
    for label, source, name, note in entries:
        lines.append(f"  {label:<{width}}  {source}\n  {'':<{width}}  -> "
                     f"{fetch_command(name)}"
                     + (f"\n  {'':<{width}}     ({note})" if note else ""))
    lines += ["", f"Looked in {searched_places(data_home)}.",
              f"Get every set: {fetch_command('all')} (into --data-home, else $SEMISUP_DATA, "
              f"else ~/semisup_data; --mirror URL or ${MIRROR_ENV_VAR} for a mirror laid out "
              f"as <URL>/<folder>/<file>)."]
    if not all_found:
        lines.append(f"Some sets were not found. {HOW_TO_GET}")
    return "\n".join(lines)
