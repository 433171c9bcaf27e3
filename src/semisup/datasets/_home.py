"""Where the shared benchmark data lives: ``data_home``."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["data_home", "ENV_VAR", "HOW_TO_GET", "USER_DIR", "searched_places",
           "user_data_dir"]

#: Environment variable that overrides the default data directory.
ENV_VAR = "SEMISUP_DATA"

#: The per-user data directory: where ``fetch`` puts the sets by default.
USER_DIR = "~/semisup_data"

#: One line for messages about missing data: how a user gets it.
HOW_TO_GET = (
    f"The sets are not bundled: `semisup datasets --fetch all` (or --fetch NAME) downloads "
    f"them from their public sources into {USER_DIR} (or ${ENV_VAR}), checking each file's "
    f"sha256; or put each set's folder (e.g. g50c/) in one data directory and point "
    f"${ENV_VAR} at it, or pass data_home=...; each set's public source is listed in the "
    f"README (section 'Data') and in its folder's PROVENANCE.md.")


def user_data_dir() -> Path:
    """``~/semisup_data``, expanded now (so that a changed ``$HOME`` is followed)."""
    return Path(USER_DIR).expanduser().resolve()


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


def _default_candidates() -> list[Path]:
    """The places searched when neither an argument nor ``$SEMISUP_DATA`` is given."""
    return [user_data_dir(), *_checkout_candidates()]


def data_home(data_home: str | os.PathLike | None = None) -> str:
    """Absolute path of the directory that holds the benchmark data sets.

    Resolution order: the ``data_home`` argument, else the environment variable
    ``SEMISUP_DATA``, else ``~/semisup_data`` (where :func:`semisup.datasets.fetch` puts
    the sets), else ``../shared/datasets`` next to the repository checkout, else
    ``<repo>/shared/datasets``. An explicit argument or environment value is returned even if
    the directory does not exist (the loaders then say which set is missing where); the
    defaults are only used when they exist.

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
    candidates = _default_candidates()
    for path in candidates:
        if path.is_dir():
            return str(path.resolve())
    looked = ", ".join(str(p) for p in candidates)
    raise FileNotFoundError(
        f"no data directory found: no data_home argument, ${ENV_VAR} is not set, and none "
        f"of these exists: {looked}. Pass data_home=... or set {ENV_VAR}, or get the data "
        f"with `semisup datasets --fetch all`.")


def searched_places(data_home: str | os.PathLike | None = None) -> str:
    """Where :func:`data_home` looks, in order, as one line for messages.

    The places actually consulted: the argument alone when one is given, else
    ``$SEMISUP_DATA`` alone when it is set, else ``~/semisup_data`` and every checkout
    default.

    Parameters
    ----------
    data_home : str or path-like, optional
        Explicit data directory, as for :func:`data_home`.

    Returns
    -------
    str
        E.g. ``"$SEMISUP_DATA=/data"`` or ``"/home/me/semisup_data, /work/shared/datasets,
        /work/repo/shared/datasets ($SEMISUP_DATA not set)"``.
    """
    if data_home is not None:
        return f"data_home={str(Path(data_home).expanduser().resolve())}"
    env = os.environ.get(ENV_VAR)
    if env:
        return f"${ENV_VAR}={str(Path(env).expanduser().resolve())}"
    looked = ", ".join(str(p) for p in _default_candidates())
    return f"{looked} (${ENV_VAR} not set)"
