"""Optional dependencies: import on demand, or fail naming the extra that provides them."""

from __future__ import annotations

import importlib
from types import ModuleType

# module name -> (pip extra, purpose)
_EXTRAS = {
    "pynndescent": ("fast", "approximate nearest neighbours"),
    "numba": ("fast", "compiled dynamic programs"),
    "matplotlib": ("plot", "plotting"),
    "cvxpy": ("test", "reference convex solvers"),
    "pytest": ("test", "the test suite"),
    "hypothesis": ("test", "property-based tests"),
    "dask": ("dask", "dask arrays and a dask.distributed cluster"),
    "cupy": ("gpu", "the GPU engine"),
}


def require(module: str, purpose: str | None = None) -> ModuleType:
    """Import an optional dependency, or raise ImportError naming the extra to install.

    Parameters
    ----------
    module : str
        Importable module name, e.g. ``"pynndescent"`` or ``"matplotlib.pyplot"``.
    purpose : str, optional
        What the caller needs it for; shown in the error message.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        extra, default_purpose = _EXTRAS.get(top, ("all", top))
        raise ImportError(
            f"{top} is needed for {purpose or default_purpose} but is not installed. "
            f"Install it with: pip install 'semisup[{extra}]'"
        ) from exc


def available(module: str) -> bool:
    """Whether an optional dependency can be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
