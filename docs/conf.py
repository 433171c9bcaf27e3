"""Sphinx configuration of the semisup documentation (built by ``make docs``)."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE / "tools"))

import semisup  # noqa: E402
from semisup._registry import REGISTRY  # noqa: E402

project = "semisup"
author = "the semisup developers"
copyright = "the semisup developers"
release = version = semisup.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 copied into _static: formulas render offline too
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "api/_gen_*",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["semisup.css"]

# -- API reference ---------------------------------------------------------------------
autosummary_imported_members = True
autodoc_default_options = {"inherited-members": False}
autodoc_typehints = "none"          # numpydoc's Parameters section carries the types
numpydoc_show_class_members = False  # the class template lists methods itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
add_module_names = False

# -- Markdown (the results and benchmark records, rendered unchanged) --------------------
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 4
# the records are written for GitHub: their links to the source tree and to each other are
# plain relative paths, which MyST reports as unresolved cross-references
suppress_warnings = ["myst.xref_missing", "myst.header"]

# -- Gallery ---------------------------------------------------------------------------
# SEMISUP_DOCS_GALLERY selects which examples run (a regular expression on the path, as
# sphinx-gallery's filename_pattern); the rest are rendered with their code but no output.
# CI runs them all (each takes seconds); set it to e.g. "plot_harmonic" for a quick build.
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": os.environ.get("SEMISUP_DOCS_GALLERY", "/plot_"),
    "doc_module": ("semisup",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"semisup": None},
    "download_all_examples": False,
    "show_memory": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    # Examples written for an API a colleague is converting right now; each entry is removed
    # once the estimator accepts it (sphinx-gallery then fails the build if it passes, so a
    # stale entry cannot hide).
    "expected_failing_examples": [],
}

# -- HTML ------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"semisup {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_prev_next": True,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
    "navigation_with_keys": False,
}
html_sidebars = {"index": [], "results/*": [], "benchmarks/*": []}
html_show_sourcelink = False
html_copy_source = False


# -- The API lists: every name in each public module's __all__ ----------------------------
# Generated at build time so that a new public name (e.g. datasets.fetch) is documented
# without editing the reference; each list is included by its page, api/<package>.rst (the
# estimators' by api/index.rst), so that the sidebar shows one entry per package.

#: the estimators documented at the top level, from the method registry (their packages'
#: lists skip them); tests/test_registry.py checks that api/index.rst includes this list
ESTIMATORS = [m.name for m in REGISTRY]
API_MODULES = [
    "semisup.graph", "semisup.kernels", "semisup.datasets", "semisup.model_selection",
    "semisup.lass", "semisup.lapsvm", "semisup.clustering", "semisup.completion",
    "semisup.spore", "semisup.poisson", "semisup.baselines.harmonic",
    "semisup.baselines.graph_kernels",
    "semisup.distributed", "semisup.engines",
]


def public_names(modname):
    """A module's ``__all__``, or its public functions and classes defined there."""
    mod = importlib.import_module(modname)
    if hasattr(mod, "__all__"):
        names = list(mod.__all__)
    else:
        names = [n for n, obj in vars(mod).items()
                 if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                 and getattr(obj, "__module__", None) == modname]
    out = []
    for n in names:
        obj = getattr(mod, n)
        if n in ESTIMATORS:
            continue
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue  # constants (REGISTRY, ...) are described in the module docstring
        out.append(n)
    return out


def _write_lists():
    files = []
    dest = HERE / "api"   # beside api/index.rst, so that ":toctree: ../generated/" means the same
    lists = {"semisup": ESTIMATORS}
    lists.update({m: public_names(m) for m in API_MODULES})
    for modname, names in lists.items():
        lines = [f".. currentmodule:: {modname}", "", ".. autosummary::",
                 "   :toctree: ../generated/", "   :nosignatures:", ""]
        lines += [f"   {n}" for n in names]
        text = "\n".join(lines) + "\n"
        path = dest / f"_gen_{modname}.rst"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        files.append(str(path))
    return files


# the included lists are not documents of their own, so autosummary is told to read them
autosummary_generate = _write_lists()

# autosummary's one-line summaries stop at the first ". " that is not a known abbreviation,
# which cut the API lists at "(eq." ("Solve SPORE (eq." ...): the docstrings cite the
# papers' equations in their first sentence.
import sphinx.ext.autosummary as _autosummary  # noqa: E402

_autosummary.WELL_KNOWN_ABBREVIATIONS = tuple(_autosummary.WELL_KNOWN_ABBREVIATIONS) + (
    " eq.", "(eq.", " eqs.", "(eqs.")


# -- Docstring sections numpydoc does not know -------------------------------------------
# A few solver docstrings have a "Complexity" section; numpydoc would drop it (with a
# warning), so it is moved into "Notes" (created before "Examples" when absent) first.
_MOVED_SECTIONS = ("Complexity",)
# numpydoc also parses the raw docstring for signatures, where the move has not happened
for _title in _MOVED_SECTIONS:
    warnings.filterwarnings("ignore", message=f"Unknown section {_title}", category=UserWarning)


def _section_bounds(lines):
    """(title, start, end) of each numpydoc section: a title line over a dashes line."""
    heads = [i for i in range(len(lines) - 1)
             if lines[i].strip() and set(lines[i + 1].strip()) == {"-"}
             and len(lines[i + 1].strip()) >= 3]
    return [(lines[h].strip(), h, heads[k + 1] if k + 1 < len(heads) else len(lines))
            for k, h in enumerate(heads)]


def _move_unknown_sections(app, what, name, obj, options, lines):
    for title in _MOVED_SECTIONS:
        found = [s for s in _section_bounds(lines) if s[0] == title]
        if not found:
            continue
        _, start, end = found[0]
        body = [ln for ln in lines[start + 2:end]]
        while body and not body[-1].strip():
            body.pop()
        del lines[start:end]
        para = [f"**{title}.** " + body[0].strip()] + body[1:] if body else []
        notes = [s for s in _section_bounds(lines) if s[0] == "Notes"]
        if notes:
            _, _, nend = notes[0]
            lines[nend:nend] = ["", *para, ""]
        else:
            later = [s for s in _section_bounds(lines) if s[0] in ("References", "Examples")]
            at = later[0][1] if later else len(lines)
            lines[at:at] = ["Notes", "-----", *para, ""]


def setup(app):
    # before numpydoc (priority 500) parses the sections
    app.connect("autodoc-process-docstring", _move_unknown_sections, priority=400)
