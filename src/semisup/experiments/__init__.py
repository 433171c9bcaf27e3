"""One module per paper: the protocols that reproduce its tables, figures and benchmarks.

Each module listed in :data:`PAPERS` provides

``add_reproduce_parser(subparsers)``
    add its ``semisup reproduce <name>`` sub-command (``set_defaults(func=...)``);
``add_bench_parser(subparsers)``
    add its ``semisup bench <name>`` sub-command;
``demo_rows(verbose=False) -> list[dict]``
    train its methods on built-in data for ``semisup demo``; each row has the keys
    ``method``, ``data``, ``metric``, ``score`` and ``seconds``.

The command line imports a module only when its command runs (``semisup --help`` imports
none), so the names of the sub-commands and their one-line help are also listed here, in
:data:`REPRODUCE` and :data:`BENCH` (with :data:`OWNERS` for a command whose module is not its
namesake); a test checks them against the modules' parsers. A new ``reproduce`` or ``bench``
command is registered in both places.
"""

from __future__ import annotations

import importlib

#: command name -> module implementing it
PAPERS = {
    "lass": "semisup.experiments.lass",
    "lapsvm": "semisup.experiments.lapsvm",
    "clustering": "semisup.experiments.clustering",
    "completion": "semisup.experiments.completion",
    "spore": "semisup.experiments.spore",
    "foundation": "semisup.experiments.foundation",
    "scaling": "semisup.experiments.scaling",
    "defaults": "semisup.experiments.defaults",
    "gpu": "semisup.experiments.gpu",
    "lowlabel": "semisup.experiments.lowlabel",
    "reduced": "semisup.experiments.reduced",
}

#: ``semisup reproduce <name>`` sub-commands -> one-line help (shown without importing)
REPRODUCE = {
    "lass": "LASS (AAAI 2014): Figure 1 (two moons) and partial tagging",
    "lapsvm": "Melacci & Belkin 2011: LapSVM in the primal, Tables 3-7, Figs 3-7",
    "clustering": "Roulet et al. 2016: Tables 1-5",
    "completion": "Goldberg et al. 2010: MC-1/MC-b vs impute+SVM baselines",
    "spore": "SPORE (NIPS 2015): Tables 1, 2, 4 and the accuracy-vs-iterations / K0 study",
}

#: ``semisup bench <name>`` sub-commands -> one-line help (shown without importing)
BENCH = {
    "lass": "LASS: ADMM vs cvxpy, 100k fit, direct vs CG",
    "lapsvm": "LapSVM PCG timings, dual/Newton/PCG scaling",
    "clustering": "exact projections and the movie-review fit",
    "completion": "FPC speed: yeast CV grid, SoftImpute, SVD",
    "spore": "SPORE: Table 2 timing per digit pair; IIP vs cvxpy/SCS",
    "foundation": "kNN graph and harmonic-function benchmarks on MNIST",
    "scaling": "time and memory against n; exact kNN of MNIST vs scikit-learn",
    "defaults": "every estimator at its defaults: time and accuracy",
    "gpu": "the GPU engine on MNIST: kNN graph, solves, estimators, LapRLS",
    "lowlabel": "Poisson learning / Poisson-MBO vs Laplace at 1-5 labels per class on "
                "MNIST, with GraphLearning",
    "reduced": "LapRLS/LapSVM reduced expansion: error vs m, MNIST, 10^6 points",
}


#: ``(kind, command) -> key of PAPERS`` for a command not implemented by its namesake module,
#: e.g. ``("bench", "defaults"): "foundation"``; every other command belongs to ``PAPERS[name]``.
OWNERS: dict[tuple[str, str], str] = {}


def owner(kind: str, command: str) -> str:
    """Key in :data:`PAPERS` of the module that implements ``semisup <kind> <command>``."""
    return OWNERS.get((kind, command), command)


def load_paper(name: str):
    """Import the module of command ``name``; None when that module does not exist."""
    path = PAPERS[name]
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as exc:
        if exc.name != path:
            raise
        return None


def load_papers():
    """Import each paper module that exists, in :data:`PAPERS` order."""
    mods = {}
    for name in PAPERS:
        mod = load_paper(name)
        if mod is not None:
            mods[name] = mod
    return mods
