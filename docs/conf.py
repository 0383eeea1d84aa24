"""Sphinx configuration of gpubcast's documentation (``make docs``; docs/developer/docs.md says why
Sphinx and how the pages, the generated tables and the tested examples fit together)."""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))        # gpubcast_docs: the tables generated from the code
sys.path.insert(0, str(DOCS.parent))           # the gpubcast of this tree, installed or not

import gpubcast  # noqa: E402 - after the path above

project = "gpubcast"
author = "the gpubcast authors"
release = version = gpubcast.__version__
copyright = "gpubcast authors"  # noqa: A001 - Sphinx's setting name

extensions = [
    "myst_parser",            # the pages are Markdown (CommonMark + MyST directives)
    "sphinx.ext.autodoc",     # the API reference from the docstrings
    "gpubcast_docs",          # op, dtype, rule-example and contract tables from the code; docstrings as written
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
# Markdown headings get anchors, so [text](page.md#a-heading) links resolve (checked by -W)
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]
# ``code`` in a docstring is code; a single `name` too (the docstrings use both)
default_role = "literal"

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"show-inheritance": False}
html_theme = "alabaster"
html_title = f"gpubcast {release}"
html_theme_options = {
    "description": "Broadcasting elementwise ops with ONNX and OpenVINO semantics, on NVIDIA GPUs and CPUs",
    "fixed_sidebar": True,
    "show_relbars": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
html_static_path = []
html_show_sourcelink = False

# warnings are errors in `make docs` (-W); these are the only ones not wanted at all
suppress_warnings = []
nitpicky = False
