"""data_home resolution order, list_datasets without data, and the cache's isolation."""

import os
from pathlib import Path

import numpy as np
import pytest

from semisup.datasets import REGISTRY, _home, data_home, list_datasets, load_dataset


@pytest.fixture(autouse=True)
def _no_user_directory(tmp_path, monkeypatch):
    # ~/semisup_data is searched before the checkout defaults: keep a real one (fetched
    # data on the machine running the tests) out of these resolution-order tests.
    monkeypatch.setattr(_home, "USER_DIR", str(tmp_path / "no-such-user-dir"))


def test_argument_wins_over_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path / "env"))
    assert data_home(tmp_path / "arg") == str((tmp_path / "arg").resolve())


def test_environment_wins_over_checkout_default(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path))
    assert data_home() == str(tmp_path.resolve())


def test_checkout_default_is_shared_datasets_next_to_repo(monkeypatch):
    monkeypatch.delenv("SEMISUP_DATA", raising=False)
    repo = Path(_home.__file__).resolve().parents[3]
    if not (repo / "pyproject.toml").is_file():
        pytest.skip("semisup is not imported from a source checkout (src layout)")
    candidates = _home._checkout_candidates()
    assert candidates == [repo.parent / "shared" / "datasets", repo / "shared" / "datasets"]
    existing = [c for c in candidates if c.is_dir()]
    if existing:
        assert data_home() == str(existing[0].resolve())


def test_second_checkout_candidate_is_used(tmp_path, monkeypatch):
    monkeypatch.delenv("SEMISUP_DATA", raising=False)
    second = tmp_path / "repo" / "shared" / "datasets"
    second.mkdir(parents=True)
    monkeypatch.setattr(_home, "_checkout_candidates",
                        lambda: [tmp_path / "nope" / "datasets", second])
    assert data_home() == str(second.resolve())


def test_nothing_found_names_every_place(tmp_path, monkeypatch):
    monkeypatch.delenv("SEMISUP_DATA", raising=False)
    places = [tmp_path / "a" / "datasets", tmp_path / "b" / "datasets"]
    monkeypatch.setattr(_home, "_checkout_candidates", lambda: places)
    with pytest.raises(FileNotFoundError) as err:
        data_home()
    for p in places:
        assert str(p) in str(err.value)
    assert "SEMISUP_DATA" in str(err.value)
    assert all(not r["found"] for r in list_datasets())


def test_user_directory_comes_after_environment_and_before_checkout(tmp_path, monkeypatch):
    user, checkout = tmp_path / "user" / "semisup_data", tmp_path / "clone" / "datasets"
    monkeypatch.delenv("SEMISUP_DATA", raising=False)
    monkeypatch.setattr(_home, "USER_DIR", str(user))
    monkeypatch.setattr(_home, "_checkout_candidates", lambda: [checkout])
    assert _home.searched_places().startswith(f"{user}, {checkout}")
    checkout.mkdir(parents=True)
    assert data_home() == str(checkout.resolve())      # ~/semisup_data absent: skipped
    user.mkdir(parents=True)
    assert data_home() == str(user.resolve())          # present: wins over the checkout
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path / "env"))
    assert data_home() == str((tmp_path / "env").resolve())   # the variable wins over it


def test_user_directory_follows_home(tmp_path, monkeypatch):
    monkeypatch.setattr(_home, "USER_DIR", "~/semisup_data")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _home.user_data_dir() == (tmp_path / "semisup_data").resolve()


def test_missing_set_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        load_dataset("g50c", data_home=tmp_path)
    msg = str(err.value)
    assert os.path.join(str(tmp_path.resolve()), "g50c", "g50c.mat") in msg
    assert "data_home argument" in msg


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError) as err:
        load_dataset("g50")
    for name in ("g50c", "coil20b", "mnist3vs8", "pang_lee", "breast-cancer"):
        assert name in str(err.value)


def test_paper_spellings_are_accepted(tmp_path):
    folder = tmp_path / "heart"
    folder.mkdir()
    (folder / "heart_scale").write_text("+1 1:0.5\n-1 1:-0.5\n")
    assert load_dataset("HEART", data_home=tmp_path).data.shape == (2, 13)
    with pytest.raises(FileNotFoundError, match="coil20b"):
        load_dataset("COIL20(B)", data_home=tmp_path)
    with pytest.raises(ValueError, match="unknown data set 3"):
        load_dataset(3)


def test_list_datasets_on_empty_directory(tmp_path):
    rows = list_datasets(data_home=tmp_path)
    assert rows and not any(r["found"] for r in rows)
    assert all(r["path"].startswith(str(tmp_path.resolve())) for r in rows)


def test_returned_arrays_do_not_alias_the_cache(tmp_path):
    folder = tmp_path / "heart"
    folder.mkdir()
    (folder / "heart_scale").write_text("+1 1:0.5 2:-1\n-1 1:-0.25 13:1\n")
    first = load_dataset("heart", data_home=tmp_path)
    first.data[:] = 99.0
    first.target[:] = 7
    second = load_dataset("heart", data_home=tmp_path)
    assert second.data[0, 0] == 0.5 and second.data[1, 12] == 1.0
    assert second.target.tolist() == [1, -1]
    assert second.data.flags.writeable


def test_verify_checks_sha256(tmp_path):
    folder = tmp_path / "heart"
    folder.mkdir()
    (folder / "heart_scale").write_text("+1 1:0.5\n-1 1:-0.5\n")
    load_dataset("heart", data_home=tmp_path)  # verify is off by default
    with pytest.raises(ValueError, match="checksum mismatch.*heart_scale"):
        load_dataset("heart", data_home=tmp_path, verify=True)


def test_verify_accepts_the_shared_files():
    from shared_data import require_dataset_dir
    require_dataset_dir("heart")
    require_dataset_dir("g50c")
    assert load_dataset("heart", verify=True).data.shape == (270, 13)
    assert load_dataset("g50c", verify=True).data.shape == (550, 50)


def test_mnist_float_data_is_a_fresh_array_each_call(tmp_path):
    from test_datasets_formats import write_mnist
    write_mnist(tmp_path / "mnist", n_train=6, n_test=4)
    a = load_dataset("mnist", data_home=tmp_path)
    a.data[:] = -1
    b = load_dataset("mnist", data_home=tmp_path)
    assert b.data.min() >= 0 and b.data.dtype == np.float32


def test_file_replaced_on_disk_is_parsed_again(tmp_path):
    folder = tmp_path / "heart"
    folder.mkdir()
    path = folder / "heart_scale"
    path.write_text("+1 1:0.5\n-1 1:-0.5\n")
    assert load_dataset("heart", data_home=tmp_path).data[0, 0] == 0.5
    path.write_text("+1 1:0.75\n-1 1:-0.5\n-1 1:0\n")
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse-clock file systems
    assert load_dataset("heart", data_home=tmp_path).data[:, 0].tolist() == [0.75, -0.5, 0]


# --- tests that need data: skip (or fail under CI=true) saying where they looked ---------

def _no_data_directory(tmp_path, monkeypatch):
    """A fresh clone: no $SEMISUP_DATA, no ~/semisup_data, none of the checkout defaults."""
    user = tmp_path / "user" / "semisup_data"
    checkout = [tmp_path / "clone-parent" / "shared" / "datasets",
                tmp_path / "clone" / "shared" / "datasets"]
    monkeypatch.delenv("SEMISUP_DATA", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(_home, "USER_DIR", str(user))
    monkeypatch.setattr(_home, "_checkout_candidates", lambda: checkout)
    return [user, *checkout]


def test_missing_data_directory_skips_naming_every_place(tmp_path, monkeypatch):
    from shared_data import require_dataset_dir
    places = _no_data_directory(tmp_path, monkeypatch)
    with pytest.raises(pytest.skip.Exception) as skip:
        require_dataset_dir("emotions")
    reason = str(skip.value)
    assert "'emotions'" in reason and "None" not in reason
    for p in places:
        assert str(p) in reason
    assert "SEMISUP_DATA" in reason and "README" in reason and "PROVENANCE.md" in reason


def test_missing_set_in_data_directory_skips_naming_its_folder(tmp_path, monkeypatch):
    from shared_data import require_dataset_dir
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path))
    with pytest.raises(pytest.skip.Exception) as skip:
        require_dataset_dir("g50c")
    assert str(tmp_path.resolve() / "g50c") in str(skip.value)


def test_missing_data_fails_under_ci(tmp_path, monkeypatch):
    from shared_data import require_dataset_dir
    _no_data_directory(tmp_path, monkeypatch)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_dataset_dir("g50c")


def test_present_data_is_returned_even_under_ci(tmp_path, monkeypatch):
    from shared_data import require_dataset_dir
    (tmp_path / "g50c").mkdir()
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    assert require_dataset_dir("g50c") == str(tmp_path.resolve() / "g50c")


def test_searched_places_follows_the_resolution_order(tmp_path, monkeypatch):
    places = _no_data_directory(tmp_path, monkeypatch)
    assert _home.searched_places(tmp_path / "arg") == f"data_home={(tmp_path / 'arg').resolve()}"
    looked = _home.searched_places()
    assert all(str(p) in looked for p in places) and "SEMISUP_DATA not set" in looked
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path))
    assert _home.searched_places() == f"$SEMISUP_DATA={tmp_path.resolve()}"


# --- where each set comes from: DESCR, README and PROVENANCE.md agree ----------------------

def test_every_folder_has_a_public_source_in_descr_and_readme():
    import re

    from semisup.datasets._describe import SOURCES
    folders = {info.folder for info in REGISTRY.values()}
    assert set(SOURCES) == folders
    readme = Path(__file__).resolve().parents[2] / "README.md"
    if not readme.is_file():
        pytest.skip("no README.md beside the tests (not a source checkout)")
    text = readme.read_text(encoding="utf-8")
    data = text[text.index("## Data"):]
    data = data[:data.index("\n## ", 1)]
    for folder, source in SOURCES.items():
        row = next((line for line in data.splitlines() if f"| `{folder}/` |" in line), None)
        assert row is not None, f"README 'Data' table has no row for {folder}/"
        for repo in re.findall(r"GitHub ([\w.-]+/[\w.-]+)", source):
            assert f"`{repo}`" in row, (folder, repo)


@pytest.mark.parametrize("folder", sorted({info.folder for info in REGISTRY.values()}))
def test_stated_source_is_the_one_in_provenance(folder):
    import re

    from semisup.datasets._describe import SOURCES
    from shared_data import require_dataset_dir
    path = Path(require_dataset_dir(folder)) / "PROVENANCE.md"
    provenance = path.read_text(encoding="utf-8")
    source_section = provenance[provenance.index("## Source"):provenance.index("## Licence")]
    repos = re.findall(r"GitHub ([\w.-]+/[\w.-]+)", SOURCES[folder])
    assert repos
    for repo in repos:
        assert f"`{repo}`" in source_section, (folder, repo)



def test_pm1_sets_offer_a_01_target_and_say_why(tmp_path):
    """Issue #30 item 7: g50c-like targets are +1 / -1, and -1 is also the unlabeled
    marker: ``target01`` gives 0 / 1 and the description says why."""
    (tmp_path / "diabetes").mkdir()
    (tmp_path / "diabetes" / "diabetes").write_text(
        "-1 1:6 2:148 8:50\n+1 1:1 2:85 8:31\n+1 1:8 2:183 8:32\n")
    b = load_dataset("diabetes", data_home=tmp_path)
    assert b.target.tolist() == [-1, 1, 1] and b.target01.tolist() == [0, 1, 1]
    assert "target01" in b.DESCR and "unlabeled" in b.DESCR
