"""Sphinx configuration: ``python -m sphinx -W -b html docs docs/_build/html``."""

import kernelscale

project = "kernelscale"
author = "the kernelscale developers"
copyright = "2026, the kernelscale developers"  # the footer's holder
release = version = kernelscale.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc",
              "sphinx_gallery.gen_gallery"]
autosummary_generate = True
autodoc_default_options = {"members": False, "inherited-members": False}
# the classes list their parameters and attributes in their docstrings; a table of every
# method would repeat scikit-learn's (fit, predict, get_params, ...)
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
exclude_patterns = ["_build"]
# the gallery: every script under examples/ is run at build time, its output and
# figures shown beside its code
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",
    "download_all_examples": False,
    "remove_config_comments": True,
}
html_theme = "alabaster"
# a fluid page, and wide code blocks that scroll (_static/custom.css) instead of being cut
html_theme_options = {"page_width": "auto", "body_max_width": "none"}
html_static_path = ["_static"]
templates_path = ["_templates"]
