"""Sphinx configuration: ``python -m sphinx -W -b html docs docs/_build/html``."""

import kernelscale

project = "kernelscale"
author = "the kernelscale developers"
release = version = kernelscale.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc"]
autosummary_generate = True
autodoc_default_options = {"members": False, "inherited-members": False}
# the classes list their parameters and attributes in their docstrings; a table of every
# method would repeat scikit-learn's (fit, predict, get_params, ...)
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path = []
templates_path = ["_templates"]
