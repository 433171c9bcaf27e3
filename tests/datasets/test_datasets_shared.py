"""Every shared set loads with the shape and class counts its PROVENANCE.md states.

Missing data skips these tests, or fails them when CI=true (``require_dataset_dir``).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from shared_data import require_dataset_dir

from semisup.datasets import REGISTRY, list_datasets, load_dataset
from semisup.datasets._load import verify_checksums

# name -> (shape of data, {label: count}) as stated in each PROVENANCE.md (derived sets: from
# the parent's counts; binary sets as int +-1).
EXPECTED = {
    "g50c": ((550, 50), {-1: 275, 1: 275}),
    "coil20": ((1440, 1024), {k: 72 for k in range(1, 21)}),
    "coil20b": ((1440, 1024), {1: 720, -1: 720}),
    "uspst": ((2007, 256), dict(enumerate([327, 273, 206, 178, 196, 140, 174, 173, 160, 180]))),
    "uspstb": ((2007, 256), {1: 327 + 273 + 206 + 178 + 196, -1: 140 + 174 + 173 + 160 + 180}),
    "pcmac": ((1946, 7511), {-1: 961, 1: 985}),
    "facemit": ((6977, 361), {1: 2429, -1: 4548}),
    "breast-cancer": ((683, 10), {-1: 444, 1: 239}),
    "diabetes": ((768, 8), {-1: 268, 1: 500}),
    "fourclass": ((862, 2), {-1: 555, 1: 307}),
    "heart": ((270, 13), {-1: 150, 1: 120}),
    "ionosphere": ((351, 34), {-1: 126, 1: 225}),
    "sonar": ((208, 60), {-1: 97, 1: 111}),
}
MNIST_TRAIN = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
MNIST_TEST = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def _load(name):
    require_dataset_dir(REGISTRY[name].folder)
    return load_dataset(name)


def _counts(y):
    values, counts = np.unique(y, return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shape_and_class_counts_match_provenance(name):
    bunch = _load(name)
    shape, counts = EXPECTED[name]
    assert bunch.data.shape == shape == REGISTRY[name].shape
    assert bunch.target.shape == (shape[0],)
    assert bunch.target.dtype.kind == "i"
    assert _counts(bunch.target) == counts
    assert len(counts) == REGISTRY[name].classes
    assert np.isfinite(bunch.data.data if sp.issparse(bunch.data) else bunch.data).all()
    assert name in bunch.DESCR


@pytest.mark.parametrize("name, n_unlabeled", [("g50c", 500), ("uspst", 1957),
                                                ("uspstb", 1957), ("pcmac", 1896)])
def test_published_splits_are_zero_based_partitions(name, n_unlabeled):
    bunch = _load(name)
    n = bunch.data.shape[0]
    lab, unl = bunch.splits["labeled"], bunch.splits["unlabeled"]
    assert lab.shape == (10, 50) and unl.shape == (10, n_unlabeled)
    assert lab.min() >= 0 and unl.min() == 0 and max(lab.max(), unl.max()) == n - 1
    for i in range(10):
        assert np.array_equal(np.sort(np.r_[lab[i], unl[i]]), np.arange(n))


def test_g50c_first_labeled_index_is_file_value_minus_one():
    import scipy.io
    path = require_dataset_dir("g50c")
    raw = scipy.io.loadmat(f"{path}/g50c.mat")
    bunch = load_dataset("g50c")
    assert np.array_equal(bunch.splits["labeled"], raw["idxLabs"].astype(int) - 1)
    assert np.array_equal(bunch.data, raw["X"])


def test_pcmac_is_sparse_with_unit_rows():
    bunch = _load("pcmac")
    assert sp.isspmatrix_csr(bunch.data) or isinstance(bunch.data, sp.csr_array)
    assert bunch.data.nnz == 106221
    norms = np.sqrt(bunch.data.multiply(bunch.data).sum(axis=1)).A.ravel()
    assert np.allclose(norms, 1.0)


def test_coil20_images_and_binary_rule():
    bunch = _load("coil20b")
    assert bunch.images.shape == (1440, 32, 32)
    # images are the data rows read column-major (MATLAB order)
    assert np.array_equal(bunch.images[5].T.ravel() / 255.0, bunch.data[5])
    assert np.array_equal(bunch.target == 1, bunch.object <= 10)
    assert bunch.data.min() >= 0 and bunch.data.max() <= 1


def test_uspstb_groups_first_five_digits():
    bunch = _load("uspstb")
    assert np.array_equal(bunch.target == 1, np.isin(bunch.digit, [0, 1, 2, 3, 4]))


@pytest.mark.parametrize("name, scaled", [("diabetes", True), ("ionosphere", True),
                                          ("sonar", True), ("heart", False)])
def test_binary_sets_in_minus_one_one(name, scaled):
    bunch = _load(name)
    X = bunch.data
    assert X.min() >= -1 and X.max() <= 1
    if scaled:
        varying = X.max(axis=0) > X.min(axis=0)
        assert np.allclose(X[:, varying].min(axis=0), -1)
        assert np.allclose(X[:, varying].max(axis=0), 1)
        assert bunch.data_unscaled.shape == X.shape


def test_ionosphere_constant_feature_maps_to_zero():
    bunch = _load("ionosphere")
    assert np.all(bunch.data_unscaled[:, 1] == 0) and np.all(bunch.data[:, 1] == 0)
    assert bunch.target_names == ["b", "g"]


@pytest.mark.parametrize("name, n, d, t, n_train, cardinality", [
    ("emotions", 593, 72, 6, 391, 1.868), ("yeast", 2417, 103, 14, 1500, 4.237)])
def test_multilabel_sets(name, n, d, t, n_train, cardinality):
    bunch = _load(name)
    assert bunch.data.shape == (n, d)
    assert bunch.target.shape == (n, t) and set(np.unique(bunch.target)) == {0, 1}
    assert len(bunch.label_names) == t and len(bunch.feature_names) == d
    assert bunch.target.sum(axis=1).mean() == pytest.approx(cardinality, abs=5e-4)
    assert len(bunch.train_idx) == n_train and len(bunch.test_idx) == n - n_train
    assert np.array_equal(np.sort(np.r_[bunch.train_idx, bunch.test_idx]), np.arange(n))
    assert np.array_equal(bunch.splits["train"], bunch.train_idx)


def test_emotions_label_names_and_train_cardinality():
    bunch = _load("emotions")
    assert bunch.label_names == ["amazed-suprised", "happy-pleased", "relaxing-calm",
                                 "quiet-still", "sad-lonely", "angry-aggresive"]
    assert bunch.target[bunch.train_idx].sum(axis=1).mean() == pytest.approx(1.813, abs=5e-4)
    assert bunch.target[bunch.test_idx].sum(axis=1).mean() == pytest.approx(1.975, abs=5e-4)


def test_yeast_split_cardinalities():
    bunch = _load("yeast")
    assert bunch.label_names == [f"Class{i}" for i in range(1, 15)]
    assert bunch.target[bunch.train_idx].sum(axis=1).mean() == pytest.approx(4.228, abs=5e-4)
    assert bunch.target[bunch.test_idx].sum(axis=1).mean() == pytest.approx(4.252, abs=5e-4)


def test_pang_lee_per_author_counts():
    bunch = _load("pang_lee")
    expected = {  # n, 3-class counts, 4-class counts, rating range (PROVENANCE.md)
        "Dennis+Schwartz": (1027, [359, 427, 241], [171, 440, 302, 114], (0.1, 0.9)),
        "James+Berardinelli": (1307, [186, 491, 630], [138, 292, 596, 281], (0.05, 0.99)),
        "Scott+Renshaw": (902, [239, 349, 314], [115, 295, 334, 158], (0.0, 1.0)),
        "Steve+Rhodes": (1770, [413, 648, 709], [191, 526, 766, 287], (0.1, 0.9)),
    }
    assert len(bunch.texts) == len(bunch.data) == len(bunch.target) == 5006
    assert bunch.target.dtype == np.float64
    for author, (n, c3, c4, (lo, hi)) in expected.items():
        mask = bunch.author == author
        assert mask.sum() == n
        assert np.bincount(bunch.label3[mask]).tolist() == c3
        assert np.bincount(bunch.label4[mask]).tolist() == c4
        assert bunch.target[mask].min() == pytest.approx(lo)
        assert bunch.target[mask].max() == pytest.approx(hi)
    assert all(isinstance(t, str) and t for t in bunch.texts)
    assert len(np.unique(bunch.ids)) > 5000


@pytest.fixture(scope="module")
def mnist():
    return _load("mnist")


def test_mnist_shape_scale_and_split_counts(mnist):
    assert mnist.data.shape == (70000, 784) and mnist.data.dtype == np.float32
    assert mnist.data.min() == 0.0 and mnist.data.max() == 1.0
    train, test = mnist.splits["train"], mnist.splits["test"]
    assert np.array_equal(train, np.arange(60000))
    assert np.array_equal(test, 60000 + np.arange(10000))
    assert np.bincount(mnist.target[train]).tolist() == MNIST_TRAIN
    assert np.bincount(mnist.target[test]).tolist() == MNIST_TEST
    pixels = mnist.data[:60000]  # a view, not a 188 MB copy
    mean = pixels.mean(dtype=np.float64)
    std = pixels.std(dtype=np.float64)
    assert (round(mean, 4), round(std, 4)) == (0.1307, 0.3081)


def test_mnist3vs8_matches_lapsvm_table2(mnist):
    # Melacci & Belkin (2011), Tables 1-2: 13966 points; |L|+|U|+|V| = 80+11822+80 training
    # points and |T| = 1984 test points.
    sub = load_dataset("mnist3vs8")
    assert sub.data.shape == (13966, 784) and sub.data.dtype == np.float32
    assert len(sub.splits["train"]) == 80 + 11822 + 80
    assert len(sub.splits["test"]) == 1984
    assert np.array_equal(sub.target == 1, sub.digit == 3)
    keep = np.isin(mnist.target, (3, 8))
    assert np.array_equal(sub.data, mnist.data[keep])


@pytest.mark.parametrize("name, table2", [
    ("g50c", (50, 314, 50, 136)), ("coil20b", (40, 1000, 40, 360)),
    ("pcmac", (50, 1358, 50, 488)), ("uspstb", (50, 1409, 50, 498)),
    ("coil20", (40, 1000, 40, 360)), ("uspst", (50, 1409, 50, 498))])
def test_sizes_match_lapsvm_table2(name, table2):
    bunch = _load(name)
    assert bunch.data.shape[0] == sum(table2)
    assert len(np.unique(bunch.target)) == {"coil20": 20, "uspst": 10}.get(name, 2)


def test_list_datasets_reports_every_set_found():
    for name in ("g50c", "heart"):
        require_dataset_dir(REGISTRY[name].folder)
    rows = list_datasets()
    assert [r["name"] for r in rows] == list(REGISTRY)
    for row in rows:
        assert {"name", "found", "shape", "classes", "format", "path"} <= set(row)
    by_name = {r["name"]: r for r in rows}
    assert by_name["g50c"]["found"] and by_name["g50c"]["shape"] == (550, 50)


@pytest.mark.parametrize("name, filename", [("emotions", "emotions.arff"),
                                            ("yeast", "yeast-test.arff.gz")])
def test_arff_parser_matches_scipy_loadarff(name, filename):
    import gzip
    import io

    from scipy.io import arff

    from semisup.datasets._arff import parse_arff
    path = f"{require_dataset_dir(name)}/{filename}"
    names, values = parse_arff(path)
    opener = gzip.open if filename.endswith(".gz") else open
    with opener(path, "rt") as fh:
        records, meta = arff.loadarff(io.StringIO(fh.read()))
    assert names == list(meta.names())
    for j, col in enumerate(names):
        # nominal {0,1} columns come back from scipy as bytes b"0" / b"1"
        np.testing.assert_array_equal(values[:, j], records[col].astype(float))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_registry_sha256_matches_provenance_table(name):
    import re
    info = REGISTRY[name]
    folder = require_dataset_dir(info.folder)
    with open(f"{folder}/PROVENANCE.md", encoding="utf-8") as fh:
        table = dict(re.findall(r"^\| `([^`]+)` \| \d+ \| `([0-9a-f]{64})` \|", fh.read(),
                                flags=re.MULTILINE))
    assert table == info.files
    verify_checksums(info, folder)  # and the files on disk have those checksums
