"""Sphinx configuration for the documentation site (``make docs`` builds it into ``site/``).

Why Sphinx, with MyST-NB and furo: the docstrings of ``interp`` are
reStructuredText (``:func:`` roles, grid tables, literal blocks), which Sphinx
renders natively and resolves into links; MyST lets the guides stay Markdown
(they read the same on GitHub); MyST-NB renders the executed notebooks;
sphinx-click writes every command's ``--help`` from the click commands
themselves, so the reference cannot drift from the CLI.

``-W`` (the Makefile's flags) turns every warning into a failure, broken
internal links and anchors included (MyST reports them as warnings).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent

project = "interp"
author = "the interp developers"
copyright = "2026, the interp developers"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx_click",
]
exclude_patterns = ["_build", "jupyter_execute", "**.ipynb_checkpoints"]

# Markdown guides: GitHub-style heading anchors, so `page.md#a-heading` links resolve (and a wrong one warns).
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
suppress_warnings = ["myst.header"]  # a results page opens with a title one level above its moved sections

# The API reference: one page per module, from the docstrings (Google-style sections, reST roles).
autosummary_generate = True
autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
    # A module's page documents what it defines; a package's re-exports (the `interp` facade's names) link there.
    "ignore-module-all": True,
    # scikit-learn's metadata-routing setters, which its estimators add to every subclass: not ours to document.
    "exclude-members": "set_fit_request,set_score_request,set_predict_request,set_transform_request,set_partial_fit_request",
}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
default_role = "code"  # a single-backticked word in a docstring is code, as on GitHub

# The tutorials: the notebooks of examples/, executed at build time (cached between builds under build/).
# INTERP_DOCS_EXECUTE=off renders them without running (the suite's build: tests/test_notebook.py runs them).
nb_execution_mode = os.environ.get("INTERP_DOCS_EXECUTE", "cache")
nb_execution_cache_path = str(REPO / "build" / "jupyter_cache")
# No per-cell limit: on a busy machine the DAS notebook's training cell passed 900 s and failed the build; a cell that
# fails still fails it (nb_execution_raise_on_error), and the suite runs the notebooks under its own watch.
nb_execution_timeout = -1
nb_execution_raise_on_error = True
nb_execution_show_tb = True

html_theme = "furo"
html_title = "interp"
html_static_path = ["_static"] if (DOCS / "_static").is_dir() else []  # a copy of this file elsewhere (a test) has none
html_css_files = ["tables.css"]  # long commands in table cells wrap (the benchmark summary's command column)


def _copy_notebooks() -> None:
    """Copy ``examples/*.ipynb`` beside the tutorials page (generated, git-ignored): Sphinx reads only its source folder."""
    target = DOCS / "tutorials"
    for notebook in sorted((REPO / "examples").glob("*.ipynb")):
        copy = target / notebook.name
        if not copy.exists() or copy.read_bytes() != notebook.read_bytes():
            shutil.copyfile(notebook, copy)


_copy_notebooks()

#: How deep the sidebar's navigation tree goes: the pages of the index (1), the tutorials and the API's top module (2),
#: the API's layers (3). furo renders the tree afresh on every page; the whole tree (the API's 189 module pages
#: nested down to every module) cost a third of the build; each layer's page lists its modules.
NAVIGATION_DEPTH = 3


def _navigation_key(app, pagename: str) -> tuple | None:
    """What the shown tree of a page deeper than :data:`NAVIGATION_DEPTH` depends on: its folder (the links are relative)
    and its ancestors down to that depth (the entries marked current); ``None`` for a page the tree itself shows."""
    parents = getattr(app, "_interp_parents", None)
    if parents is None:
        parents = {child: parent for parent, children in app.env.toctree_includes.items() for child in children}
        app._interp_parents = parents
    chain, doc = [], pagename
    while doc in parents and len(chain) <= len(parents):
        doc = parents[doc]
        chain.append(doc)
    shown = [doc for doc in reversed(chain) if doc != app.config.root_doc]
    if len(shown) < NAVIGATION_DEPTH:
        return None
    return pagename.rpartition("/")[0], tuple(shown[:NAVIGATION_DEPTH])


def _shallow_navigation(app, pagename, templatename, context, doctree) -> None:
    """Before furo's own handler: its navigation tree (the one call with ``maxdepth=-1``) goes :data:`NAVIGATION_DEPTH`
    deep, rendered once for the pages below that depth that would show the same tree (the API's modules of one layer)."""
    toctree = context.get("toctree")
    if toctree is None:
        return
    key = _navigation_key(app, pagename)
    rendered = app.__dict__.setdefault("_interp_navigation", {})

    def shallow(**kwargs):
        if kwargs.get("maxdepth") != -1:
            return toctree(**kwargs)
        kwargs["maxdepth"] = NAVIGATION_DEPTH
        if key is None:
            return toctree(**kwargs)
        if key not in rendered:
            rendered[key] = toctree(**kwargs)
        return rendered[key]

    context["toctree"] = shallow


def setup(app):
    app.connect("html-page-context", _shallow_navigation, priority=400)  # furo's handler runs at the default, 500
