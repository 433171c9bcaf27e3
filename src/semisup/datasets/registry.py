"""The benchmark data sets known to :func:`semisup.datasets.load_dataset`.

Each entry records where the set lives under the data directory, which files it needs (with
the sha256 that ``PROVENANCE.md`` states for them), its format, and the shape and number of
classes the loader returns -- enough for :func:`list_datasets` to answer without parsing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DatasetInfo", "PANG_LEE_AUTHORS", "REGISTRY", "names"]


@dataclass(frozen=True)
class DatasetInfo:
    """Static facts about one loadable data set.

    Attributes
    ----------
    name : str
        Name passed to ``load_dataset``.
    folder : str
        Folder under the data directory.
    files : dict
        Relative path (inside ``folder``) -> sha256 of the file, as stated in PROVENANCE.md.
    format : str
        Original file format.
    shape : tuple
        Shape of the returned ``data`` (for text sets: ``(n_documents,)``).
    classes : int
        Number of classes (for multi-label sets: number of labels; regression: 0).
    description : str
        One line: what the set is and, for derived sets, how it is derived.
    task : str
        ``"binary"``, ``"multiclass"``, ``"multilabel"`` or ``"regression"``.
    """

    name: str
    folder: str
    files: dict = field(default_factory=dict)
    format: str = ""
    shape: tuple = ()
    classes: int = 0
    description: str = ""
    task: str = "binary"


_PL = "scaledata"
_AUTHORS = ("Dennis+Schwartz", "James+Berardinelli", "Scott+Renshaw", "Steve+Rhodes")
_PL_SHA = {
    "Dennis+Schwartz": {
        "id": "f7eb85839454406ed767752cedbff8d9ea8f059d3811366aec75aa24ebb0c515",
        "label.3class": "38fd3819797f0857fce3371e81f87f239ac37bf3657dc0baeda7db18997ec9a3",
        "label.4class": "4040ceabf677075a69041c6bac25ef38376856d3e25bd4205e0abbae6bf36d6a",
        "rating": "b9057227d5b1324f49d5f402f1cad0ae472f3d130f35a24a5334ab7db6726be7",
        "subj": "c292a8e4fddcc064387e7b578f49a91c22ce31ea14d76418be9aac7d4da21ba2",
    },
    "James+Berardinelli": {
        "id": "5e902c3fd5c7325c119215b888c56c14d42f9b4eb9e72eb0e33b69e8a1f23d73",
        "label.3class": "330f37acc631d278f21d63ed2dd6857d40ced7ca203b258f4d4e65527d1cc645",
        "label.4class": "e75f0b5bd3047ff6475a8073ca43e995b3024dc0c3036222ea9c9613b1130212",
        "rating": "91abefa233432a2b92a82e0cb40706bd38e48e1ce4165e7a16584a6ec1dd8ed0",
        "subj": "fd226ca9177b2fa1ba39f2aebd46dccae2cf5337cb0c6bb0ad1c77a27243a968",
    },
    "Scott+Renshaw": {
        "id": "689d7e036d0fc77b220b5cd36db9ef70a9da8d43167aef0e6a34bfaabc5c00fc",
        "label.3class": "baebc32f2c21ce9247e5ba6c7f59c8fb5f381fc48a9a1e2146d8d95a84ce377c",
        "label.4class": "2044fe4964d2a1201c9aa76f5729c213f5a876b76288bf708f7c9d78672367ee",
        "rating": "cbe4f07da184e0c68a1051503c91c2474bb23c8d6b433e57d99dc2a8ae43760c",
        "subj": "52e6bffaa1eb2d75ceaa1daf08485b58bd607c919eb6005b257c2e61cafe1f1a",
    },
    "Steve+Rhodes": {
        "id": "160fa461df139b36a687a3d08d6abaf871ff271b331ad315cc2ab89cd48436d4",
        "label.3class": "21a7753c10cb71def6461f13a89f8f2c28920848333987fe6175f1e6ed3e4732",
        "label.4class": "c5d98f32b6558a63100136e947039541565b4274e8509b9b5aaa4bba1a9f9411",
        "rating": "bbbe28efbe998827cfe2737a25d19977091a2deea141461eb8e241ce6f5bc03d",
        "subj": "abf76f2b6902b0c54fa63aeee5e510c0a49d941a51df9855c2bbf1868dd03e6f",
    },
}


def _pang_lee_files() -> dict:
    files = {}
    for author in _AUTHORS:
        for kind, sha in _PL_SHA[author].items():
            suffix = ".gz" if kind == "subj" else ""
            files[f"{_PL}/{author}/{kind}.{author}{suffix}"] = sha
    return files


_SHA = {  # file name -> sha256 from the set's PROVENANCE.md
    "g50c.mat": "9f0d95cb5884d817c1165861b347a428bcc255566d1e74c871bd0de58b23423f",
    "COIL20.mat": "b22b9beb0668f707990eda2b5f922384fd3e6d63d6df7ede3a3b5e2319c4e397",
    "uspst.mat": "53577dbe246b303b07e5a03bcd7ea93582c8c2bbfac1508040f829d24c4a4918",
    "pcmac.mat": "2254d508519ae589afd132a3d00cd6b6de0d29caacc00168daa9fa1984618c09",
    "train-images-idx3-ubyte.gz":
        "71524e2cd1ad2968737f7f2f2ff69cbfc32df8ccddff51593f7cb2d4e0eb5b64",
    "train-labels-idx1-ubyte.gz":
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    "t10k-images-idx3-ubyte.gz":
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "t10k-labels-idx1-ubyte.gz":
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    "cbcl_faces_train.npz": "56fa704cf5179c7e0e0deb22dc1a8913d56ee0d1048f2a344409b1524b857ffe",
    "emotions.arff": "6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b",
    "emotions-train.arff": "bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98",
    "emotions-test.arff": "f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f",
    "emotions.xml": "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0",
    "yeast.arff.gz": "679b93061c68a6f243785f3a3907cfa0bad93f690d1ad0a3dab1abb1ac94de2c",
    "yeast-train.arff.gz": "faf769ad1b29072250d54a2b366753ba40ec8311d393daea732922dc8287662f",
    "yeast-test.arff.gz": "e06e2934c48c796bc1f4f62822cdeb85b69a8303a32b7175a732fa35b297480e",
    "yeast.xml": "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247",
    "breast-cancer_scale": "8fe6bce62147e0715a192378d29acf839b4a8a71d75ae4c88245a3526c20a6e4",
    "diabetes": "10d47c73b59dc75e55d91e4969f9c21627a3aacb9cc6059ce85de77f8a58b57a",
    "fourclass_scale": "e27b003cd53d3141f8266b7e1db0d43e69f2824cc94c1d885fb27c8f2145a511",
    "heart_scale": "5defa0a4c4c5bdaf3f55ae3828310252e8565c13ee37ce279e0b86d82e7f4ce9",
    "ionosphere.data": "46d52186b84e20be52918adb93e8fb9926b34795ff7504c24350ae0616a04bbd",
    "sonar.all-data": "e90434cdbf00fcf93ffa911fe447ae25606979658e60f1d32e155c3b5240234d",
}


def _files(*names) -> dict:
    return {n: _SHA[n] for n in names}


_MNIST = _files("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
_EMOTIONS = _files("emotions.arff", "emotions-train.arff", "emotions-test.arff",
                   "emotions.xml")
_YEAST = _files("yeast.arff.gz", "yeast-train.arff.gz", "yeast-test.arff.gz", "yeast.xml")
_LAPSVM = "(Melacci & Belkin 2011, Sec. 6)"

_ENTRIES = [
    DatasetInfo("g50c", "g50c", _files("g50c.mat"), "MAT v5", (550, 50), 2,
                "G50C: two 50-d Gaussians, 5% Bayes error (Chapelle & Zien 2005); "
                "10 published splits"),
    DatasetInfo("coil20", "coil20", _files("COIL20.mat"), "MAT v5", (1440, 1024), 20,
                "COIL-20, 32x32 grey images of 20 objects x 72 views", "multiclass"),
    DatasetInfo("coil20b", "coil20", _files("COIL20.mat"), "MAT v5 (derived)", (1440, 1024), 2,
                f"COIL20(B): objects 1-10 (+1) vs 11-20 (-1) {_LAPSVM}"),
    DatasetInfo("uspst", "uspst", _files("uspst.mat"), "MAT v5", (2007, 256), 10,
                "USPST: USPS test digits 16x16 (Sindhwani); 10 published splits",
                "multiclass"),
    DatasetInfo("uspstb", "uspst", _files("uspst.mat"), "MAT v5 (derived)", (2007, 256), 2,
                f"USPST(B): digits 0-4 (+1) vs 5-9 (-1) {_LAPSVM}"),
    DatasetInfo("pcmac", "pcmac", _files("pcmac.mat"), "MAT v5", (1946, 7511), 2,
                "PCMAC: 20-Newsgroups ibm.pc vs mac hardware, sparse TF-IDF; "
                "10 published splits"),
    DatasetInfo("mnist", "mnist", _MNIST, "IDX gz", (70000, 784), 10,
                "MNIST handwritten digits, 60000 train + 10000 test", "multiclass"),
    DatasetInfo("mnist3vs8", "mnist", _MNIST, "IDX gz (derived)", (13966, 784), 2,
                "MNIST3VS8: digit 3 (+1) vs digit 8 (-1), 11982 train + 1984 test"),
    DatasetInfo("facemit", "facemit", _files("cbcl_faces_train.npz"), "npz", (6977, 361), 2,
                "MIT CBCL faces 19x19, TRAINING PART ONLY (face +1 / non-face -1)"),
    DatasetInfo("emotions", "emotions", _EMOTIONS, "ARFF + Mulan XML", (593, 72), 6,
                "Mulan emotions, multi-label (6 labels), standard 391/202 split",
                "multilabel"),
    DatasetInfo("yeast", "yeast", _YEAST, "ARFF.gz + Mulan XML", (2417, 103), 14,
                "Mulan yeast, multi-label (14 labels), standard 1500/917 split", "multilabel"),
    DatasetInfo("breast-cancer", "breast-cancer", _files("breast-cancer_scale"), "LIBSVM",
                (683, 10), 2,
                "UCI Breast Cancer Wisconsin, LIBSVM breast-cancer_scale (feature 1 is an id)"),
    DatasetInfo("diabetes", "diabetes", _files("diabetes"), "LIBSVM", (768, 8), 2,
                "Pima Indians diabetes, LIBSVM, scaled here to [-1, 1] (svm-scale defaults)"),
    DatasetInfo("fourclass", "fourclass", _files("fourclass_scale"), "LIBSVM", (862, 2), 2,
                "LIBSVM fourclass_scale (Ho & Kleinberg 1996)"),
    DatasetInfo("heart", "heart", _files("heart_scale"), "LIBSVM", (270, 13), 2,
                "Statlog heart, LIBSVM heart_scale"),
    DatasetInfo("ionosphere", "ionosphere", _files("ionosphere.data"), "UCI CSV", (351, 34), 2,
                "UCI ionosphere, scaled here to [-1, 1] like LIBSVM ionosphere_scale "
                "(g +1, b -1)"),
    DatasetInfo("sonar", "sonar", _files("sonar.all-data"), "UCI CSV", (208, 60), 2,
                "UCI sonar, scaled here to [-1, 1] like LIBSVM sonar_scale (M +1, R -1)"),
    DatasetInfo("pang_lee", "pang_lee_scale_v1", _pang_lee_files(), "text tree", (5006,), 0,
                "Pang & Lee scale data v1.0: 5006 movie reviews of 4 authors, rating in [0, 1]",
                "regression"),
]

#: name -> DatasetInfo, in the order ``list_datasets`` reports them.
REGISTRY: dict[str, DatasetInfo] = {e.name: e for e in _ENTRIES}

#: The authors of the Pang-Lee tree, in the order their reviews are concatenated.
PANG_LEE_AUTHORS = _AUTHORS


def names() -> list[str]:
    """Valid names for ``load_dataset``, in registry order."""
    return list(REGISTRY)
