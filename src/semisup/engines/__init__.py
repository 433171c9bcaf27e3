"""Engines: the array work of an input runs where the input lives, chosen by its type.

The graph front-end (:class:`semisup.graph.frontend.GraphMixin`) and
:func:`semisup.graph.knn_search` ask :func:`engine_for` which engine serves their input and
call it; they never import a backend. The choice needs the input's type only:
:func:`engine_for_types` takes the types, so that an estimator looks its engine up once per
fit and hands it down (to the front-end, :func:`semisup.kernels.make_kernel`) instead of
every step detecting it again from ``X``. Dispatch runs one way: an engine implementation may
import :mod:`semisup.graph` (it reuses the graph recipes), the graph package never imports
an engine implementation, only this registry, which loads the implementation by name on
first use.

======== ==================================== ================================== ==========
engine   input (``type(x).__module__``)       implementation                     extra
======== ==================================== ================================== ==========
numpy    anything else (numpy, scipy.sparse)  ``semisup.graph.engine``           --
dask     ``dask.array...``                    ``semisup.distributed.engine``     ``[dask]``
cupy     ``cupy...``, ``cupyx...``            ``semisup.engines.cupy``           ``[gpu]``
======== ==================================== ================================== ==========

Writing an engine
-----------------
Subclass :class:`Engine` and implement

``check_points(est, X) -> X``
    Validate the training points where they live (2-D, numeric, finite, float64/float32)
    and refuse the graph parameters the engine does not support (``ValueError`` naming the
    parameter). The default asks the estimator (scikit-learn's ``validate_data``).
``knn_search(X, n_neighbors, *, metric="euclidean", Q=None, method="auto", n_jobs=None,
random_state=None) -> (dist, ind)``
    Exact (or, if the engine offers it, approximate) directed kNN lists, the point itself
    excluded when ``Q`` is None; numpy ``(m, k)`` arrays, distances ascending. A search that
    can skip its input checks for points that ``check_points`` validated may also take
    ``validated=False`` (the in-process one does; ``fit_knn_graph(..., validated=True)``
    passes it).
``fit_graph(est, X) -> GraphFit``
    The training graph: ``GraphFit(W, X, graph_sigma, state)``. The kNN recipe that every
    engine shares (width from the distances, weights, symmetrization, checks) is
    :func:`semisup.graph.engine.fit_knn_graph`, which calls the engine's ``knn_search``.
``query_affinity(est, state, X_new) -> (m, n_train) sparse``
    Affinities of validated new points (:func:`semisup.graph.engine.query_knn_affinity` for
    kNN graphs).

Optional, for an engine whose arrays stay off the host (``host_arrays = False``, ``xp`` and
``sparse`` its array modules): ``check_affinity(W, name)`` and ``check_query_affinity(W_new,
n_train, name)`` (precomputed affinities validated where they live), ``check_query_points``,
``to_host`` / ``from_host`` (predictions answer in the input's type), ``take_labels``, and
the solvers the estimators look up with ``getattr(engine, name, None)`` before falling back
on their CPU functions: ``harmonic_solve``, ``poisson_solve`` (HarmonicFunction,
PoissonLearning); LapSVM and LapRLS run their own PCG on the engine's ``kernel``
(:mod:`semisup.lapsvm._device`); see :class:`semisup.engines.cupy.CupyEngine`.

An engine reads the estimator's graph parameters and writes nothing on it: the front-end
sets ``affinity_matrix_``, ``graph_sigma_`` and its private ``_graph_state`` from the
:class:`GraphFit`. Then register it with :func:`register_engine` (the built-in ones are
registered at the bottom of this module): ``detect`` names the packages whose types the
engine serves (module prefixes, e.g. ``("cupy", "cupyx")``), so that recognising an input
imports nothing optional and needs only its type, and the
implementation is named as ``"module:attr"``, imported the first time an input of its kind
arrives. An implementation module that cannot be imported gives an ImportError naming the
extra that installs what it needs.

Examples
--------
>>> import numpy as np
>>> from semisup.engines import engine_for
>>> engine_for(np.zeros((3, 2))).name
'numpy'
>>> engine_for_types(np.ndarray, type(None)).name
'numpy'
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from .._optional import _EXTRAS
from ._base import Engine, GraphFit

__all__ = ["Engine", "GraphFit", "register_engine", "engine_for", "engine_for_types",
           "engine_name", "get_engine", "array_namespace", "DEFAULT_ENGINE"]

#: the in-process engine, for every input no registered engine recognises
DEFAULT_ENGINE = "numpy"


@dataclass(frozen=True)
class _Registration:
    matches: Callable[[str], bool] | None      # of a type's module name
    loader: str
    requires: str | None


_REGISTRY: dict[str, _Registration] = {}
_LOADED: dict[str, Engine] = {}


@lru_cache(maxsize=256)
def _stand_in(module: str):
    """An object whose type is defined in ``module``: what a ``detect(x)`` callable, which
    reads only ``type(x).__module__``, is shown when only the type is known."""
    return type("StandIn", (), {"__module__": module})()


def _module_matcher(detect):
    if detect is None:
        return None
    if isinstance(detect, str):
        detect = (detect,)
    if isinstance(detect, tuple):
        prefixes = detect
        return lambda mod: any(mod == p or mod.startswith(p + ".") for p in prefixes)
    return lambda mod: bool(detect(_stand_in(mod)))


def register_engine(name: str, detect, loader: str, *, requires: str | None = None) -> None:
    """Register an engine for the inputs ``detect`` recognises.

    Parameters
    ----------
    name : str
        The engine's name (its ``Engine.name``).
    detect : str, tuple of str or callable
        The packages whose types the engine serves (``"dask.array"``: the types defined in
        ``dask.array`` and its modules), or ``detect(x) -> bool`` looking only at
        ``type(x).__module__`` (nothing may be imported to recognise an input; it may be
        shown a stand-in of the type's module). ``None`` for the default engine.
    loader : str
        ``"package.module:Class"``, imported on first use; ``Class()`` is the engine.
    requires : str, optional
        The optional module the implementation needs; named, with its extra
        (:mod:`semisup._optional`), when the implementation cannot be imported.
    """
    if ":" not in loader:
        raise ValueError(f"loader must be 'module:attr', got {loader!r}.")
    _REGISTRY[name] = _Registration(_module_matcher(detect), loader, requires)
    _LOADED.pop(name, None)


def _name_of_module(mod: str) -> str:
    for name, reg in _REGISTRY.items():
        if reg.matches is not None and reg.matches(mod):
            return name
    return DEFAULT_ENGINE


def engine_name(x) -> str:
    """The name of the engine that serves ``x`` (:data:`DEFAULT_ENGINE` when none claims it)."""
    return _name_of_module(type(x).__module__ or "")


def get_engine(name: str) -> Engine:
    """The registered engine ``name``, its implementation imported on first use."""
    if name in _LOADED:
        return _LOADED[name]
    try:
        reg = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"no engine named {name!r}; registered: {sorted(_REGISTRY)}."
                         ) from None
    modname, attr = reg.loader.split(":")
    try:
        engine = getattr(importlib.import_module(modname), attr)()
    except ImportError as exc:
        extra, purpose = _EXTRAS.get(reg.requires or "", ("all", f"the {name} engine"))
        raise ImportError(f"the {name} engine ({reg.loader}, {purpose}) could not be "
                          f"loaded: {exc}. Install it with: pip install 'semisup[{extra}]'"
                          ) from exc
    _LOADED[name] = engine
    return engine


def engine_for_types(*types) -> Engine:
    """The engine serving inputs of these types (``None`` entries ignored; ``type(None)``
    too, so ``engine_for_types(type(X), type(W))`` takes an optional ``W``).

    What :func:`engine_for` answers for arrays of these types: the dispatch reads the type
    alone, so a caller that holds the arrays looks the engine up once and hands it down.
    """
    names = {_name_of_module(t.__module__ or "") for t in types
             if t is not None and t is not type(None)} - {DEFAULT_ENGINE}
    if len(names) > 1:
        raise ValueError(f"the inputs belong to different engines ({', '.join(sorted(names))})"
                         "; pass them all as one kind of array (e.g. np.asarray each).")
    return get_engine(names.pop() if names else DEFAULT_ENGINE)


def engine_for(*arrays) -> Engine:
    """The engine serving these arrays (``None`` entries ignored).

    In-memory inputs (numpy, scipy.sparse, lists, ...) go to the in-process engine; an
    input of a registered kind (a dask array, a CuPy array) to its engine, which may take
    in-memory arrays beside it (e.g. query points). Arrays of two different registered
    kinds cannot be mixed. The convenience form of :func:`engine_for_types`.
    """
    return engine_for_types(*(type(a) for a in arrays if a is not None))


def array_namespace(a):
    """The array module (``xp``) of ``a``'s engine: numpy, or e.g. CuPy for a CuPy array;
    what code written once for both calls its functions from."""
    return engine_for(a).xp


def _module_is(*prefixes):
    """``detect`` for the types defined in the packages ``prefixes`` (and their modules)."""
    return tuple(prefixes)


register_engine(DEFAULT_ENGINE, None, "semisup.graph.engine:InProcessEngine")
register_engine("dask", "dask.array", "semisup.distributed.engine:DaskEngine",
                requires="dask")
register_engine("cupy", ("cupy", "cupyx"), "semisup.engines.cupy:CupyEngine",
                requires="cupy")
