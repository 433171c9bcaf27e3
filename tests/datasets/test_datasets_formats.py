"""The format readers on small files written here: correct parses (1-based -> 0-based, image
order, sparse rows, split location) and a clear ValueError naming the file for corrupt ones."""

import gzip
import os
import re
import struct

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from sklearn.preprocessing import MinMaxScaler

from semisup.datasets import load_dataset
from semisup.datasets._arff import parse_arff
from semisup.datasets._tabular import svm_scale
from semisup.datasets.registry import PANG_LEE_AUTHORS


def _malformed(path):
    return pytest.raises(ValueError, match=rf"malformed data file {re.escape(str(path))}")


# ---------------------------------------------------------------- writers (also used elsewhere)

def write_idx(path, arr, *, magic_type=0x08):
    arr = np.asarray(arr, dtype=np.uint8)
    header = bytes([0, 0, magic_type, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + arr.tobytes())


def write_mnist(folder, n_train=6, n_test=4, seed=0):
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    out = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = np.arange(n) % 10
        write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz"), images)
        write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz"), labels)
        out[prefix] = (images, labels)
    return out


def write_sindhwani(folder, filename, n=12, d=3, sparse=False, labs=None, y=None):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, d))
    if sparse:
        X = sp.csc_matrix(np.where(X > 0, X, 0))
    y = np.where(np.arange(n) % 2 == 0, 1, -1).reshape(-1, 1) if y is None else y
    perm = np.array([rng.permutation(n) + 1 for _ in range(2)], dtype=np.uint16)
    labs = perm[:, :4] if labs is None else labs
    scipy.io.savemat(os.path.join(folder, filename),
                     {"X": X, "y": y.astype(np.int16), "idxLabs": labs, "idxUnls": perm[:, 4:]})
    return X, perm


# ---------------------------------------------------------------- MAT

def test_mat_splits_become_zero_based(tmp_path):
    X, perm = write_sindhwani(tmp_path / "g50c", "g50c.mat")
    bunch = load_dataset("g50c", data_home=tmp_path)
    assert np.array_equal(bunch.data, X)
    assert np.array_equal(bunch.splits["labeled"], perm[:, :4].astype(int) - 1)
    assert np.array_equal(bunch.splits["unlabeled"], perm[:, 4:].astype(int) - 1)
    assert bunch.target.tolist() == [1, -1] * 6


def test_mat_sparse_x_becomes_csr(tmp_path):
    X, _ = write_sindhwani(tmp_path / "pcmac", "pcmac.mat", sparse=True)
    bunch = load_dataset("pcmac", data_home=tmp_path)
    assert sp.issparse(bunch.data) and bunch.data.format == "csr"
    assert np.array_equal(bunch.data.toarray(), X.toarray())


def test_mat_garbage_file(tmp_path):
    (tmp_path / "g50c").mkdir()
    path = tmp_path / "g50c" / "g50c.mat"
    path.write_bytes(b"this is not a MATLAB file at all" * 10)
    with _malformed(path):
        load_dataset("g50c", data_home=tmp_path)


def test_mat_missing_variable(tmp_path):
    (tmp_path / "uspst").mkdir()
    path = tmp_path / "uspst" / "uspst.mat"
    scipy.io.savemat(path, {"X": np.zeros((3, 2)), "y": np.zeros((3, 1))})
    message = r"uspst\.mat.*variables \['idxLabs', 'idxUnls'\] missing"
    with pytest.raises(ValueError, match=message):
        load_dataset("uspst", data_home=tmp_path)


def test_mat_zero_based_indices_are_rejected(tmp_path):
    labs = np.zeros((2, 4), dtype=np.uint16)
    write_sindhwani(tmp_path / "g50c", "g50c.mat", labs=labs)
    with pytest.raises(ValueError, match=r"g50c\.mat.*idxLabs.*outside 1\.\.12"):
        load_dataset("g50c", data_home=tmp_path)


def test_mat_label_count_mismatch(tmp_path):
    write_sindhwani(tmp_path / "g50c", "g50c.mat", y=np.ones((5, 1)))
    with pytest.raises(ValueError, match=r"g50c\.mat: 5 labels for 12 rows"):
        load_dataset("g50c", data_home=tmp_path)


def test_coil20_images_are_column_major(tmp_path):
    (tmp_path / "coil20").mkdir()
    img = np.arange(1024, dtype=np.uint16).reshape(32, 32) % 256  # upright image, row-major
    X = np.stack([img.T.ravel(), img.ravel()]).astype(np.uint8)   # row 0 stored column-major
    Y = np.array([[1], [11]], dtype=np.uint8)
    scipy.io.savemat(tmp_path / "coil20" / "COIL20.mat", {"X": X, "Y": Y})
    bunch = load_dataset("coil20b", data_home=tmp_path)
    assert np.array_equal(bunch.images[0], img)
    assert bunch.target.tolist() == [1, -1] and bunch.object.tolist() == [1, 11]
    assert np.allclose(bunch.data, X / 255.0)


def test_coil20_wrong_width(tmp_path):
    (tmp_path / "coil20").mkdir()
    path = tmp_path / "coil20" / "COIL20.mat"
    scipy.io.savemat(path, {"X": np.zeros((2, 100), np.uint8), "Y": np.ones((2, 1))})
    with pytest.raises(ValueError, match=r"COIL20\.mat.*\(n, 1024\)"):
        load_dataset("coil20", data_home=tmp_path)


# ---------------------------------------------------------------- IDX

def test_mnist_idx_roundtrip(tmp_path):
    parts = write_mnist(tmp_path / "mnist", n_train=7, n_test=5)
    bunch = load_dataset("mnist", data_home=tmp_path)
    expected = np.concatenate([parts["train"][0], parts["t10k"][0]]).reshape(12, 784)
    assert np.array_equal(bunch.data, expected.astype(np.float32) / np.float32(255))
    assert bunch.target.tolist() == list(range(7)) + list(range(5))
    assert bunch.splits["train"].tolist() == list(range(7))
    assert bunch.splits["test"].tolist() == list(range(7, 12))
    sub = load_dataset("mnist3vs8", data_home=tmp_path)
    assert sub.digit.tolist() == [3, 3] and sub.target.tolist() == [1, 1]
    assert sub.splits["train"].tolist() == [0] and sub.splits["test"].tolist() == [1]


@pytest.mark.parametrize("corruption, message", [
    ("magic", "bad IDX magic"), ("type", "type code 0x0d"),
    ("truncated", "declares shape"), ("gzip", "not a valid gzip stream")])
def test_mnist_corrupt_idx(tmp_path, corruption, message):
    write_mnist(tmp_path / "mnist")
    path = tmp_path / "mnist" / "t10k-images-idx3-ubyte.gz"
    raw = gzip.decompress(path.read_bytes())
    if corruption == "magic":
        path.write_bytes(gzip.compress(b"\x01\x02" + raw[2:]))
    elif corruption == "type":
        path.write_bytes(gzip.compress(raw[:2] + b"\x0d" + raw[3:]))
    elif corruption == "truncated":
        path.write_bytes(gzip.compress(raw[:-10]))
    else:
        path.write_bytes(b"plain bytes, not gzip")
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}.*{message}"):
        load_dataset("mnist", data_home=tmp_path)


def test_mnist_label_count_mismatch(tmp_path):
    write_mnist(tmp_path / "mnist", n_train=6)
    path = tmp_path / "mnist" / "train-labels-idx1-ubyte.gz"
    write_idx(path, np.zeros(5))
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}.*5.* labels for 6 images"):
        load_dataset("mnist", data_home=tmp_path)


# ---------------------------------------------------------------- ARFF / Mulan

ARFF_OK = """% a comment
@RELATION toy

@ATTRIBUTE 'first feature' NUMERIC
@attribute colour {red, green}
@attribute lab1 {0,1}
@attribute lab2 {0,1}

@data
% rows follow
1.5,green,1,0
-2,red,0,1
?,red,1,1
{0 4.25, 1 green, 3 1}
"""


def test_arff_dense_sparse_nominal_and_missing(tmp_path):
    path = tmp_path / "toy.arff"
    path.write_text(ARFF_OK)
    names, values = parse_arff(path)
    assert names == ["first feature", "colour", "lab1", "lab2"]
    expected = np.array([[1.5, 1, 1, 0], [-2, 0, 0, 1], [np.nan, 0, 1, 1], [4.25, 1, 0, 1]])
    np.testing.assert_array_equal(values, expected)


def test_arff_gzip_matches_plain(tmp_path):
    (tmp_path / "toy.arff.gz").write_bytes(gzip.compress(ARFF_OK.encode()))
    (tmp_path / "toy.arff").write_text(ARFF_OK)
    np.testing.assert_array_equal(parse_arff(tmp_path / "toy.arff.gz")[1],
                                  parse_arff(tmp_path / "toy.arff")[1])


@pytest.mark.parametrize("bad, message", [
    (ARFF_OK.replace("-2,red,0,1", "-2,red,0"), "line 12: 3 values, header declares 4"),
    (ARFF_OK.replace("1.5,green", "abc,green"), "line 11: attribute 'first feature' is numeric"),
    (ARFF_OK.replace("-2,red", "-2,blue"), "'blue' is not a declared value of nominal"),
    (ARFF_OK.split("@data")[0], "no @data section"),
    (ARFF_OK.replace("@data", ""), "line 11: unexpected header line '1.5,green,1,0'"),
    (ARFF_OK.replace("NUMERIC", "string"), "unsupported attribute type 'string'"),
    (ARFF_OK.replace("{0 4.25", "{9 4.25"), "bad sparse entry '9 4.25'"),
    ("just some text\n1,2,3\n", "line 1: unexpected header line"),
])
def test_arff_malformed(tmp_path, bad, message):
    path = tmp_path / "bad.arff"
    path.write_text(bad)
    with pytest.raises(ValueError, match=message) as err:
        parse_arff(path)
    assert str(path) in str(err.value)


def _mulan_files(folder, rows, train, test, labels=("l1", "l2"), xml_labels=None):
    os.makedirs(folder, exist_ok=True)
    head = "@relation m\n@attribute f1 numeric\n@attribute f2 numeric\n"
    head += "".join(f"@attribute {lab} {{0,1}}\n" for lab in labels) + "@data\n"

    def body(idx):
        return "".join(",".join(str(v) for v in rows[i]) + "\n" for i in idx)

    for name, idx in (("emotions", range(len(rows))), ("emotions-train", train),
                      ("emotions-test", test)):
        with open(os.path.join(folder, f"{name}.arff"), "w") as fh:
            fh.write(head + body(idx))
    xml_labels = labels if xml_labels is None else xml_labels
    with open(os.path.join(folder, "emotions.xml"), "w") as fh:
        fh.write('<?xml version="1.0"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">'
                 + "".join(f'<label name="{lab}"></label>' for lab in xml_labels)
                 + "</labels>\n")


ROWS = [[0.5, 1, 1, 0], [0.25, 2, 0, 1], [0.5, 1, 1, 0], [3, 4, 1, 1], [5, 6, 0, 0]]


def test_mulan_split_rows_located_even_with_duplicates(tmp_path):
    _mulan_files(tmp_path / "emotions", ROWS, train=[4, 0, 2], test=[1, 3])
    bunch = load_dataset("emotions", data_home=tmp_path)
    assert bunch.data.tolist() == [r[:2] for r in ROWS]
    assert bunch.target.tolist() == [r[2:] for r in ROWS] and bunch.target.dtype.kind == "i"
    assert bunch.label_names == ["l1", "l2"] and bunch.feature_names == ["f1", "f2"]
    assert bunch.train_idx.tolist() == [4, 0, 2] and bunch.test_idx.tolist() == [1, 3]


def test_mulan_split_files_must_partition(tmp_path):
    _mulan_files(tmp_path / "emotions", ROWS, train=[0, 1], test=[1, 3])
    with pytest.raises(ValueError, match="do not partition"):
        load_dataset("emotions", data_home=tmp_path)


def test_mulan_split_row_not_in_full_file(tmp_path):
    _mulan_files(tmp_path / "emotions", ROWS, train=[0, 1], test=[2, 3])
    path = tmp_path / "emotions" / "emotions-test.arff"
    path.write_text(path.read_text().replace("3,4,1,1", "3,4.5,1,1"))
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}: row 1 does not occur"):
        load_dataset("emotions", data_home=tmp_path)


def test_mulan_xml_label_missing_from_arff(tmp_path):
    _mulan_files(tmp_path / "emotions", ROWS, [0, 1, 2], [3, 4], xml_labels=("l1", "l9"))
    with pytest.raises(ValueError, match=r"labels \['l9'\] from the XML are not attributes"):
        load_dataset("emotions", data_home=tmp_path)


def test_mulan_non_binary_label(tmp_path):
    rows = [r[:] for r in ROWS]
    _mulan_files(tmp_path / "emotions", rows, [0, 1, 2], [3, 4])
    path = tmp_path / "emotions" / "emotions.arff"
    path.write_text(path.read_text().replace("@attribute l2 {0,1}", "@attribute l2 {0,1,2}")
                    .replace("5,6,0,0", "5,6,0,2"))
    with pytest.raises(ValueError, match="label columns hold values other than 0 and 1"):
        load_dataset("emotions", data_home=tmp_path)


def test_mulan_bad_xml(tmp_path):
    _mulan_files(tmp_path / "emotions", ROWS, [0, 1, 2], [3, 4])
    path = tmp_path / "emotions" / "emotions.xml"
    path.write_text("<labels><label name='a'>")
    with _malformed(path):
        load_dataset("emotions", data_home=tmp_path)


# ---------------------------------------------------------------- LIBSVM / UCI CSV

def test_svm_scale_matches_minmax_scaler(rng):
    X = rng.standard_normal((20, 4)) * [1, 10, 100, 0]
    scaled = svm_scale(X)
    expected = MinMaxScaler((-1, 1)).fit_transform(X)
    expected[:, 3] = 0.0  # svm-scale drops constant features (-> 0); MinMaxScaler maps to -1
    np.testing.assert_allclose(scaled, expected, atol=1e-12)


def test_diabetes_is_scaled_and_raw_kept(tmp_path):
    (tmp_path / "diabetes").mkdir()
    (tmp_path / "diabetes" / "diabetes").write_text(
        "-1 1:6 2:148 8:50\n+1 1:1 2:85 8:31\n+1 1:8 2:183 8:32\n")
    bunch = load_dataset("diabetes", data_home=tmp_path)
    assert bunch.data.shape == (3, 8)
    np.testing.assert_allclose(bunch.data[:, 0], [-1 + 2 * 5 / 7, -1, 1])
    assert np.all(bunch.data[:, 2] == 0)  # constant (absent) feature
    assert bunch.data_unscaled[0, 1] == 148 and bunch.target.tolist() == [-1, 1, 1]


@pytest.mark.parametrize("content, message", [
    ("+1 1:0.5 2:x\n", "not a LIBSVM file"),
    ("+1 1:0.5 14:1\n-1 1:0\n", "not a LIBSVM file with at most 13 features"),
    ("+1 1:0.5\n-1 1:0\n2 1:1\n", r"expected two classes including 1\.0"),
])
def test_libsvm_malformed(tmp_path, content, message):
    (tmp_path / "heart").mkdir()
    path = tmp_path / "heart" / "heart_scale"
    path.write_text(content)
    with pytest.raises(ValueError, match=message) as err:
        load_dataset("heart", data_home=tmp_path)
    assert str(path) in str(err.value)


def _sonar_row(value, label):
    return ",".join([str(value)] * 60) + f",{label}\n"


def test_uci_csv_labels_and_scaling(tmp_path):
    (tmp_path / "sonar").mkdir()
    (tmp_path / "sonar" / "sonar.all-data").write_text(
        _sonar_row(0.1, "R") + _sonar_row(0.3, "M") + _sonar_row(0.2, "M"))
    bunch = load_dataset("sonar", data_home=tmp_path)
    assert bunch.target.tolist() == [-1, 1, 1] and bunch.target_names == ["R", "M"]
    np.testing.assert_allclose(bunch.data[:, 7], [-1, 1, 0], atol=1e-12)


@pytest.mark.parametrize("content, message", [
    (_sonar_row(0.1, "R") + "0.1,0.2,R\n", "line 2: 3 fields, expected 60 features"),
    (_sonar_row(0.1, "R") + _sonar_row("x", "M"), "line 2: non-numeric"),
    (_sonar_row(0.1, "R") + _sonar_row(0.2, "R"), r"expected two classes including 'M'"),
    ("", "empty file"),
])
def test_uci_csv_malformed(tmp_path, content, message):
    (tmp_path / "sonar").mkdir()
    path = tmp_path / "sonar" / "sonar.all-data"
    path.write_text(content)
    with pytest.raises(ValueError, match=message) as err:
        load_dataset("sonar", data_home=tmp_path)
    assert str(path) in str(err.value)


# ---------------------------------------------------------------- npz

def test_facemit_npz(tmp_path):
    (tmp_path / "facemit").mkdir()
    X = np.arange(3 * 361, dtype=np.uint16).reshape(3, 19, 19) % 256
    np.savez(tmp_path / "facemit" / "cbcl_faces_train.npz", X=X.astype(np.uint8),
             y=np.array([1, 0, 1], np.int8))
    bunch = load_dataset("facemit", data_home=tmp_path)
    assert bunch.data.shape == (3, 361) and bunch.target.tolist() == [1, -1, 1]
    assert np.allclose(bunch.data[1], X[1].ravel() / 255.0)


@pytest.mark.parametrize("arrays, message", [
    (None, "not a readable npz archive"),
    ({"X": np.zeros((2, 19, 19), np.uint8)}, "arrays X and y expected"),
    ({"X": np.zeros((2, 19), np.uint8), "y": np.zeros(2)}, r"expected X \(n, 19, 19\)"),
    ({"X": np.zeros((2, 19, 19), np.uint8), "y": np.array([0, 2])}, "other than 0 and 1"),
])
def test_facemit_malformed(tmp_path, arrays, message):
    (tmp_path / "facemit").mkdir()
    path = tmp_path / "facemit" / "cbcl_faces_train.npz"
    if arrays is None:
        path.write_bytes(b"PK not really a zip")
    else:
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)
    with pytest.raises(ValueError, match=message) as err:
        load_dataset("facemit", data_home=tmp_path)
    assert str(path) in str(err.value)


# ---------------------------------------------------------------- Pang & Lee text tree

def write_pang_lee(root, n=3):
    for k, author in enumerate(PANG_LEE_AUTHORS):
        base = os.path.join(root, "pang_lee_scale_v1", "scaledata", author)
        os.makedirs(base, exist_ok=True)
        # \x85 and \x0c are ordinary latin-1 characters inside a review, not line breaks
        texts = [f"review {k}-{i} caf\xe9 \x85 page\x0cbreak" for i in range(n)]
        with gzip.open(os.path.join(base, f"subj.{author}.gz"), "wb") as fh:
            fh.write(("\n".join(texts) + "\n").encode("latin-1"))
        files = {"rating": [f"{0.1 * (i + k):.2f}" for i in range(n)],
                 "label.3class": [str(i % 3) for i in range(n)],
                 "label.4class": [str(i % 4) for i in range(n)],
                 "id": [str(100 * k + i) for i in range(n)]}
        for kind, lines in files.items():
            with open(os.path.join(base, f"{kind}.{author}"), "w") as fh:
                fh.write("\n".join(lines) + "\n")


def test_pang_lee_tree(tmp_path):
    write_pang_lee(tmp_path)
    bunch = load_dataset("pang_lee", data_home=tmp_path)
    assert len(bunch.texts) == 12 and bunch.data == bunch.texts
    assert bunch.texts[0] == "review 0-0 caf\xe9 \x85 page\x0cbreak"
    assert bunch.author.tolist() == [a for a in PANG_LEE_AUTHORS for _ in range(3)]
    np.testing.assert_allclose(bunch.target[3:6], [0.1, 0.2, 0.3])
    assert bunch.ids[3:6].tolist() == [100, 101, 102]
    assert bunch.label4.tolist()[:3] == [0, 1, 2]


def test_pang_lee_line_count_mismatch(tmp_path):
    write_pang_lee(tmp_path)
    author = PANG_LEE_AUTHORS[2]
    path = tmp_path / "pang_lee_scale_v1" / "scaledata" / author / f"rating.{author}"
    path.write_text("0.5\n0.6\n")
    message = re.escape(f"{path}: 2 lines but subj.{author}.gz has 3")
    with pytest.raises(ValueError, match=message):
        load_dataset("pang_lee", data_home=tmp_path)


def test_pang_lee_bad_number(tmp_path):
    write_pang_lee(tmp_path)
    author = PANG_LEE_AUTHORS[0]
    path = tmp_path / "pang_lee_scale_v1" / "scaledata" / author / f"label.3class.{author}"
    path.write_text("0\nx\n1\n")
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}: expected one int per line"):
        load_dataset("pang_lee", data_home=tmp_path)
