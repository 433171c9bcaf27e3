"""The one list of the public estimators, and what the rest of the project reads from each.

Adding a method is one entry here (``docs/contributing.rst`` lists the files to write):
``semisup.__init__`` exports it, the common tests (``tests/test_common.py``), the docstring
tests, the defaults matrix (``tests/test_defaults.py``, ``semisup bench defaults``), the
command line (``semisup methods``) and the API reference (``docs/conf.py``) read it, and
``tests/test_registry.py`` checks that the entry is exported, documented (API reference,
user-guide page, gallery example) and its commands exist.

This module imports nothing: ``import semisup`` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Method", "REGISTRY", "KINDS", "SETTINGS", "TARGETS", "by_name"]

#: what a method learns from: a graph, a kernel (with a graph regulariser), a low-rank
#: completion, or a clustering of the tasks / features
KINDS = ("graph", "kernel", "completion", "clustering")
#: ``semi-supervised``: ``-1`` marks unlabelled points and ``predict`` takes new points;
#: ``transductive``: labels only the points it was fitted on; ``supervised``: a classifier
#: fitted on labelled points; ``regression``: NaN marks an unlabelled target
SETTINGS = ("semi-supervised", "transductive", "supervised", "regression")
TARGETS = ("binary", "multiclass", "multilabel", "continuous")


@dataclass(frozen=True)
class Method:
    """One public estimator.

    Attributes
    ----------
    name : str
        The class name, exported as ``semisup.<name>``.
    module : str
        The module that defines it.
    kind : str
        One of :data:`KINDS`; ``"graph"`` and ``"kernel"`` methods take the shared graph
        parameters (:mod:`semisup.graph.frontend`).
    setting : str
        One of :data:`SETTINGS`.
    targets : tuple of str
        The target types ``fit`` takes (:data:`TARGETS`).
    guide : str
        Its user-guide page, ``docs/user_guide/<guide>.rst``.
    example : str or None
        A gallery example using it, ``examples/<example>.py``.
    reproduce, bench : tuple of str
        Its ``semisup reproduce`` and ``semisup bench`` commands; ``"defaults"`` in
        ``bench`` puts it in the defaults matrix (``semisup bench defaults``).
    views : bool
        ``fit`` takes a list of views (several graphs) rather than one ``X``.
    check_params : dict
        Constructor parameters for the common tests' small problems (60 points).
    check_grid : dict
        A two-value grid of one parameter for the common grid-search test.
    easy_problems : tuple of str
        The problems of ``tests/test_defaults.py`` on which its defaults must come near the
        harmonic function (empty: a dedicated test there).
    dense_max_n : int or None
        Above this many points the defaults matrix marks it not applicable (dense ``n x n``
        iterates).
    """

    name: str
    module: str
    kind: str
    setting: str
    targets: tuple[str, ...]
    guide: str
    example: str | None = None
    reproduce: tuple[str, ...] = ()
    bench: tuple[str, ...] = ()
    views: bool = False
    check_params: dict = field(default_factory=dict)
    check_grid: dict = field(default_factory=dict)
    easy_problems: tuple[str, ...] = ()
    dense_max_n: int | None = None

    @property
    def takes_graph(self) -> bool:
        """Whether it takes the shared graph parameters."""
        return self.kind in ("graph", "kernel")

    @property
    def binary_only(self) -> bool:
        return "multiclass" not in self.targets and "continuous" not in self.targets

    def load(self):
        """The estimator class (imports its module)."""
        import importlib
        return getattr(importlib.import_module(self.module), self.name)


_CLASSES = ("binary", "multiclass")

REGISTRY: tuple[Method, ...] = (
    Method("HarmonicFunction", "semisup.baselines.harmonic", "graph", "semi-supervised",
           _CLASSES, "harmonic", "plot_harmonic_vs_label_spreading",
           bench=("foundation", "scaling", "defaults"),
           check_grid={"n_neighbors": [5, 10]},
           easy_problems=("moons", "breast_cancer", "digits", "iris")),
    Method("LaplacianAssignment", "semisup.lass", "graph", "semi-supervised", _CLASSES,
           "lass", "plot_lass_assignments",
           reproduce=("lass",), bench=("lass", "scaling", "defaults"),
           check_grid={"lam": [0.01, 0.1]},
           easy_problems=("moons", "breast_cancer", "digits", "iris")),
    Method("PoissonLearning", "semisup.poisson", "graph", "semi-supervised", _CLASSES,
           "lowlabel", "plot_very_few_labels", bench=("lowlabel", "defaults"),
           check_grid={"n_neighbors": [5, 10]},
           easy_problems=("moons", "breast_cancer", "digits", "iris")),
    Method("PoissonMBO", "semisup.poisson", "graph", "semi-supervised", _CLASSES,
           "lowlabel", "plot_very_few_labels", bench=("lowlabel", "defaults"),
           check_grid={"mu": [0.5, 1.0]},
           easy_problems=("moons", "breast_cancer", "digits", "iris")),
    Method("LapSVM", "semisup.lapsvm", "kernel", "semi-supervised", _CLASSES, "lapsvm",
           "plot_lapsvm_stopping", reproduce=("lapsvm",),
           bench=("lapsvm", "reduced", "scaling", "defaults"), check_grid={"gamma_I": [0.1, 1.0]},
           easy_problems=("moons", "breast_cancer", "digits", "iris")),
    Method("LapRLS", "semisup.lapsvm", "kernel", "semi-supervised", _CLASSES, "lapsvm",
           reproduce=("lapsvm",), bench=("lapsvm", "reduced", "scaling", "defaults"),
           check_grid={"gamma_I": [0.1, 1.0]},
           easy_problems=("moons", "breast_cancer", "digits", "iris")),
    # binary methods; more classes one-vs-rest inside the estimator (_transductive.py)
    Method("SPORE", "semisup.spore", "graph", "transductive", _CLASSES, "spore",
           "plot_spore_graph", reproduce=("spore",), bench=("spore", "scaling", "defaults"),
           check_grid={"beta": [0.1, 1.0]}, dense_max_n=2000),
    Method("MultiGraphSPORE", "semisup.spore", "graph", "transductive", _CLASSES, "spore",
           reproduce=("spore",), bench=("spore",), views=True,
           check_params={"views": [slice(0, 4), slice(4, 8)]},
           check_grid={"beta": [0.1, 1.0]}),
    Method("GraphKernelSVM", "semisup.baselines.graph_kernels", "graph", "transductive",
           _CLASSES, "spore", reproduce=("spore",), bench=("defaults",),
           check_grid={"c": [0.1, 1.0]},
           easy_problems=("moons", "breast_cancer", "digits_3v8", "digits", "iris")),
    Method("MatrixCompletionTransducer", "semisup.completion", "completion", "transductive",
           _CLASSES + ("multilabel",), "completion", "plot_matrix_completion",
           reproduce=("completion",), bench=("completion", "scaling", "defaults"),
           check_params={"mu": 1e-2}, check_grid={"lam": [0.1, 1.0]},
           easy_problems=("breast_cancer", "digits_3v8")),
    Method("ClusteredClassifier", "semisup.clustering", "clustering", "supervised", _CLASSES,
           "clustering", reproduce=("clustering",), bench=("clustering", "defaults"),
           check_params={"n_clusters": 2}, check_grid={"alpha": [1e-3, 1e-2]}),
    Method("ClusteredRegressor", "semisup.clustering", "clustering", "regression",
           ("continuous",), "clustering", "plot_clustered_features",
           reproduce=("clustering",), bench=("clustering", "scaling"),
           check_params={"n_clusters": 2}, check_grid={"alpha": [1e-3, 1e-2]}),
)


def by_name(name: str) -> Method:
    """The registry entry of the estimator ``name``."""
    for m in REGISTRY:
        if m.name == name:
            return m
    raise KeyError(f"no public estimator named {name!r}; known: "
                   f"{', '.join(m.name for m in REGISTRY)}.")
