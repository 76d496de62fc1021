"""Sphinx configuration: the user guide in Markdown (MyST), the API reference from the
numpydoc docstrings. Built by ``.ci/run`` with warnings as errors::

    pip install -e ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""
import os
import re
import sys

sys.path.insert(0, os.path.abspath(".."))
import dptm  # noqa: E402  (the version shown is the package's own)

project = "dptm"
author = "dptm developers"
copyright = "dptm developers, BSD-3-Clause"
release = dptm.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
root_doc = "index"

# Markdown: headings get anchors (for links such as guide/cli.md#raw-text), ``$`` maths off.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# API reference: every public name documented once, in the order of the source.
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": False}
autosummary_generate = False
# numpydoc-style docstrings through napoleon, which renders the project's own section: the
# privacy contract of every private estimator.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_custom_sections = [("Privacy", "notes_style"), ("Privacy Contract", "notes_style"),
                            ("Privacy contract", "notes_style")]


def _skip_member(app, what, name, obj, skip, options):
    # scikit-learn's generated metadata-routing setters are not dptm's API.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


_ABS = re.compile(r"(?<![|\w`])\|([^|\s`][^|`]*?)\|(?![|\w`_])")


def _literal_bars(app, what, name, obj, options, lines):
    # Docstrings write absolute values and norms as |x| (plain-text maths); reST would read
    # them as substitutions, so they are shown literally.
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("|", "+-", "+=")):
            continue  # a line block or a grid table
        lines[i] = _ABS.sub(lambda m: "``|" + m.group(1) + "|``", line)


# Pages written beside the code they describe (the recommended model, the benchmark corpora):
# until one exists, a stub stands in for the build only (removed when it finishes).
_HERE = os.path.dirname(os.path.abspath(__file__))
_STUBS = {
    os.path.join("models", "private_batch_lda.md"):
        "# Document-level private batch VB: `PrivateBatchLDA` (recommended)\n\n"
        "Protects every document (add/remove one document, any length). See its entry in the\n"
        "[API reference](../api/estimators.rst) and the [benchmarks](../benchmarks/utility.md).\n",
    os.path.join("benchmarks", "corpora.md"):
        "# Corpora\n\nThe corpora of the benchmarks are set up by `bench/setup_corpora.sh`.\n",
}
_MADE = []


def _make_stubs(app):
    for rel, text in _STUBS.items():
        path = os.path.join(_HERE, rel)
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            _MADE.append(path)


def _remove_stubs(app, exception):
    for path in _MADE:
        os.remove(path)
    _MADE.clear()


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _literal_bars)
    app.connect("builder-inited", _make_stubs)
    app.connect("build-finished", _remove_stubs)

html_theme = "alabaster"
html_static_path = []
html_title = f"dptm {release}"
