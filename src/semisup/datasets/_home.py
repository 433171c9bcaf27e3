"""Where the shared benchmark data lives: ``data_home``."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["data_home", "ENV_VAR"]

#: Environment variable that overrides the default data directory.
ENV_VAR = "SEMISUP_DATA"


def _checkout_candidates() -> list[Path]:
    """``../shared/datasets`` and ``<repo>/shared/datasets`` for the checkout holding this file.

    The repository root is the first ancestor of this file that holds ``pyproject.toml``
    (src layout: ``<repo>/src/semisup/datasets/_home.py``); when none does (an installed
    wheel), the ancestor three levels up is used so that the answer stays predictable.
    """
    here = Path(__file__).resolve().parent
    root = next((p for p in here.parents if (p / "pyproject.toml").is_file()), None)
    if root is None:
        root = here.parents[2]
    return [root.parent / "shared" / "datasets", root / "shared" / "datasets"]


def data_home(data_home: str | os.PathLike | None = None) -> str:
    """Absolute path of the directory that holds the benchmark data sets.

    Resolution order: the ``data_home`` argument, else the environment variable
    ``SEMISUP_DATA``, else ``../shared/datasets`` next to the repository checkout, else
    ``<repo>/shared/datasets``. An explicit argument or environment value is returned even if
    the directory does not exist (the loaders then say which set is missing where); the
    checkout defaults are only used when they exist.

    Parameters
    ----------
    data_home : str or path-like, optional
        Explicit data directory; wins over everything else.

    Returns
    -------
    str
        Absolute path.

    Raises
    ------
    FileNotFoundError
        When neither an argument nor ``SEMISUP_DATA`` is given and no default directory
        exists; the message names every place looked at.
    """
    if data_home is not None:
        return str(Path(data_home).expanduser().resolve())
    env = os.environ.get(ENV_VAR)
    if env:
        return str(Path(env).expanduser().resolve())
    candidates = _checkout_candidates()
    for path in candidates:
        if path.is_dir():
            return str(path.resolve())
    looked = ", ".join(str(p) for p in candidates)
    raise FileNotFoundError(
        f"no data directory found: no data_home argument, ${ENV_VAR} is not set, and none "
        f"of these exists: {looked}. Pass data_home=... or set {ENV_VAR}.")
