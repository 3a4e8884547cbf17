"""Which scikit-learn classes the patch replaces, the replacing and restoring, and the
record of every patched fit: where it ran, and why it fell back."""

from __future__ import annotations

import importlib
import logging
import re
import threading
from collections import Counter

__all__ = ["ROUTES", "LOGGER", "original", "apply", "restore", "is_patched", "record",
           "fit_counts", "reset_fit_counts", "set_verbose"]

#: scikit-learn name -> (the modules that bind it, the kernelscale module defining the
#: replacement); the first module is the public one, the last the defining one
ROUTES = {
    "SVC": (("sklearn.svm", "sklearn.svm._classes"), "._libsvm"),
    "SVR": (("sklearn.svm", "sklearn.svm._classes"), "._libsvm"),
    "OneClassSVM": (("sklearn.svm", "sklearn.svm._classes"), "._libsvm"),
    "LinearSVC": (("sklearn.svm", "sklearn.svm._classes"), "._liblinear"),
    "RBFSampler": (("sklearn.kernel_approximation",), "._approximation"),
    "Nystroem": (("sklearn.kernel_approximation",), "._approximation"),
    "PolynomialCountSketch": (("sklearn.kernel_approximation",), "._approximation"),
    "KernelRidge": (("sklearn.kernel_ridge",), "._kernel_ridge"),
}

#: the ``kernelscale`` logger: one INFO line per fit that fell back to scikit-learn's code
LOGGER = logging.getLogger("kernelscale")

_ORIGINALS = {}  # (module, name) -> scikit-learn's own object, while patched
_LOCK = threading.Lock()
_COUNTS = Counter()
_STATE = {"verbose": False}


def original(name):
    """scikit-learn's own class ``name`` (patched or not): the replacement's base."""
    modules = ROUTES[name][0]
    defining = modules[-1]
    if (defining, name) in _ORIGINALS:
        return _ORIGINALS[(defining, name)]
    return getattr(importlib.import_module(defining), name)


def documented(name):
    """The docstring of the patched ``name``: a line on the routing, then scikit-learn's
    text up to its Examples (those are scikit-learn's, checked by its own doctest runner,
    whose numeric tolerance plain doctest lacks)."""
    text = original(name).__doc__ or ""
    cut = re.search(r"\n\s*Examples\n\s*-{8}", text)
    return (f"scikit-learn's ``{name}``, its fits run by kernelscale where it can (see "
            f"``kernelscale.patch``).\n\n    " + (text[:cut.start()] if cut else text))


def _replacement(name):
    module = importlib.import_module(ROUTES[name][1], __package__)
    return getattr(module, name)


def apply(names):
    """Bind each of ``names`` in scikit-learn's modules to kernelscale's class."""
    with _LOCK:
        for name in names:
            cls = _replacement(name)
            for module_name in ROUTES[name][0]:
                module = importlib.import_module(module_name)
                _ORIGINALS.setdefault((module_name, name), getattr(module, name))
                setattr(module, name, cls)


def restore(names):
    """Bind each of ``names`` back to scikit-learn's own class (the very object)."""
    with _LOCK:
        for name in names:
            for module_name in ROUTES[name][0]:
                if (module_name, name) in _ORIGINALS:
                    setattr(importlib.import_module(module_name), name,
                            _ORIGINALS.pop((module_name, name)))


def is_patched(name):
    return all((module, name) in _ORIGINALS for module in ROUTES[name][0])


def set_verbose(verbose):
    _STATE["verbose"] = bool(verbose)


def record(estimator, method, reason=None, how=None):
    """Count one patched call and say where it ran.

    ``reason`` None: kernelscale ran it (``how`` says on what); otherwise
    scikit-learn's own code ran it, for that reason (one line on the logger).
    """
    name = type(estimator).__name__
    where = "kernelscale" if reason is None else "scikit-learn"
    with _LOCK:
        _COUNTS[(name, where)] += 1
    if reason is not None:
        LOGGER.info("%s.%s: scikit-learn's code ran it: %s", name, method, reason)
    if _STATE["verbose"]:
        said = f"kernelscale ({how})" if reason is None else f"scikit-learn ({reason})"
        print(f"[kernelscale] {name}.{method}: {said}", flush=True)


def fit_counts():
    """``{class name: {"kernelscale": n, "scikit-learn": m}}`` of the patched calls so far."""
    with _LOCK:
        out = {}
        for (name, where), count in sorted(_COUNTS.items()):
            out.setdefault(name, {"kernelscale": 0, "scikit-learn": 0})[where] = count
        return out


def reset_fit_counts():
    with _LOCK:
        _COUNTS.clear()
