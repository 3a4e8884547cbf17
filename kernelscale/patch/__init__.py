"""Existing scikit-learn code on kernelscale, unchanged: ``patch_sklearn()``.

After :func:`patch_sklearn`, the names ``sklearn.svm.SVC``, ``SVR``, ``OneClassSVM``,
``LinearSVC``, ``sklearn.kernel_approximation.RBFSampler``, ``Nystroem``,
``PolynomialCountSketch`` and ``sklearn.kernel_ridge.KernelRidge`` are classes that keep
scikit-learn's name, signature, defaults, validation and fitted attributes, and fit
with kernelscale's solvers and kernels. A fit kernelscale cannot honour (a parameter
it does not implement, data beyond its route) runs scikit-learn's own code instead,
with one INFO line on the ``kernelscale`` logger; ``verbose=True`` prints, for every
fit, which ran it. :func:`unpatch_sklearn` puts scikit-learn's own classes back (the
very objects). The names are scikit-learn-intelex's, whose patch works the same way.

Code must look the names up after patching (``from sklearn.svm import SVC`` after
:func:`patch_sklearn`, or ``sklearn.svm.SVC`` at call time), as with sklearnex.
"""

from __future__ import annotations

import contextlib

from ._routing import ROUTES, apply, fit_counts, is_patched, reset_fit_counts, restore, set_verbose

__all__ = ["patch_sklearn", "unpatch_sklearn", "sklearn_is_patched", "sklearn_patched",
           "get_patch_names", "fit_counts", "reset_fit_counts"]


def get_patch_names():
    """The scikit-learn class names the patch routes.

    Returns
    -------
    names : list of str

    Examples
    --------
    >>> from kernelscale.patch import get_patch_names
    >>> "SVC" in get_patch_names()
    True
    """
    return list(ROUTES)


def _names(name):
    if name is None:
        return list(ROUTES)
    names = [name] if isinstance(name, str) else list(name)
    unknown = [n for n in names if n not in ROUTES]
    if unknown:
        raise ValueError(f"kernelscale does not patch {unknown}; it patches {list(ROUTES)}.")
    return names


def patch_sklearn(name=None, *, verbose=False):
    """Route scikit-learn's SVM, kernel approximation and kernel ridge classes to kernelscale.

    Parameters
    ----------
    name : str or list of str, default=None
        The classes to route (see :func:`get_patch_names`); None: all of them.
    verbose : bool, default=False
        Print, for every fit of a routed class, whether kernelscale ran it (and on
        what) or scikit-learn's code did (and why).

    Examples
    --------
    >>> import kernelscale
    >>> kernelscale.patch_sklearn()
    >>> from sklearn.svm import SVC
    >>> SVC.__module__
    'kernelscale.patch._libsvm'
    >>> kernelscale.unpatch_sklearn()
    """
    names = _names(name)
    set_verbose(verbose)
    apply(names)


def unpatch_sklearn(name=None):
    """Put scikit-learn's own classes back (the very objects ``patch_sklearn`` replaced).

    Parameters
    ----------
    name : str or list of str, default=None
        None: every routed class.
    """
    restore(_names(name))
    if not any(is_patched(n) for n in ROUTES):
        set_verbose(False)


def sklearn_is_patched(name=None, return_map=False):
    """Whether scikit-learn's names are routed to kernelscale.

    Parameters
    ----------
    name : str or list of str, default=None
        None: all of them.
    return_map : bool, default=False
        Return ``{name: bool}`` instead of one bool (all routed).

    Returns
    -------
    patched : bool or dict
    """
    states = {n: is_patched(n) for n in _names(name)}
    return states if return_map else all(states.values())


@contextlib.contextmanager
def sklearn_patched(name=None, *, verbose=False):
    """``with sklearn_patched(): ...``: patched inside the block, as before after it.

    Examples
    --------
    >>> from kernelscale.patch import sklearn_patched
    >>> import sklearn.svm
    >>> with sklearn_patched("SVC"):
    ...     sklearn.svm.SVC.__module__
    'kernelscale.patch._libsvm'
    >>> sklearn.svm.SVC.__module__
    'sklearn.svm._classes'
    """
    names = [n for n in _names(name) if not is_patched(n)]
    patch_sklearn(names, verbose=verbose)
    try:
        yield
    finally:
        unpatch_sklearn(names)
