"""Parameter constraints, declared once per estimator as a table (as scikit-learn does).

Every estimator lists what each constructor parameter may be in a class
attribute ``_parameter_constraints`` (``{name: [constraint, ...]}``); ``fit``
calls :func:`validate_params` first, so a bad value is one clear error before
any work, worded the same way in every estimator. A constraint is ``None``, an
:class:`Interval`, an :class:`Options` set of strings, or one of the names in
:data:`NAMED` (``"boolean"``, ``"random_state"``, ``"memory"``, ...).
"""

from __future__ import annotations

import numbers

import numpy as np

from ._config import parse_memory

__all__ = ["InvalidParameterError", "Interval", "Options", "validate_params", "NAMED", "N_JOBS",
           "VERBOSE"]


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter with a value it cannot take (a ValueError and a TypeError)."""


class Interval:
    """Numbers of one kind (``"int"`` or ``"real"``) between two bounds.

    Parameters
    ----------
    kind : {"int", "real"}
    left, right : float or None
        Bounds; None is unbounded.
    closed : {"both", "left", "right", "neither"}, default="both"
    inf : bool, default=False
        Also accept ``+inf`` (e.g. ``C=np.inf``, a hard margin).
    """

    def __init__(self, kind, left=None, right=None, *, closed="both", inf=False):
        self.kind, self.left, self.right, self.closed, self.inf = kind, left, right, closed, inf

    def accepts(self, value):
        if isinstance(value, (bool, np.bool_)):
            return False
        if self.kind == "int":
            if not isinstance(value, numbers.Integral):
                return False
        elif not isinstance(value, numbers.Real):
            return False
        if value != value:  # NaN
            return False
        if value == np.inf:
            return self.inf
        if not np.isfinite(value):
            return False
        if self.left is not None:
            if value < self.left or (value == self.left and self.closed in ("right", "neither")):
                return False
        if self.right is not None:
            if value > self.right or (value == self.right and self.closed in ("left", "neither")):
                return False
        return True

    def describe(self):
        noun = "an int" if self.kind == "int" else "a float"
        lo = "[" if self.closed in ("both", "left") else "("
        hi = "]" if self.closed in ("both", "right") else ")"
        if self.left is not None and self.right is not None:
            text = f"{noun} in {lo}{self.left}, {self.right}{hi}"
        elif self.left is not None:
            text = f"{noun} {'>=' if lo == '[' else '>'} {self.left}"
        elif self.right is not None:
            text = f"{noun} {'<=' if hi == ']' else '<'} {self.right}"
        else:
            text = f"a finite {'int' if self.kind == 'int' else 'float'}"
        return text + (" (inf allowed)" if self.inf else "")


class Options:
    """One of a fixed set of strings."""

    def __init__(self, *values):
        self.values = values

    def accepts(self, value):
        return isinstance(value, str) and value in self.values

    def describe(self):
        return "one of " + ", ".join(repr(v) for v in self.values)


def _is_random_state(value):
    # scikit-learn's rule (``check_random_state``): None, a seed RandomState takes,
    # or a RandomState; a Generator is refused here, not deep inside a fit
    if value is None or isinstance(value, np.random.RandomState):
        return True
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) \
        and 0 <= value <= 2**32 - 1


def _is_memory(value):
    if value is None:
        return True
    try:
        parse_memory(value)
    except (TypeError, ValueError):
        return False
    return True


def _is_dtype(value):
    if value is None:
        return True
    try:
        return np.dtype(value) in (np.dtype(np.float32), np.dtype(np.float64))
    except TypeError:
        return False


#: named constraints -> (test, description)
NAMED = {
    "boolean": (lambda v: isinstance(v, (bool, np.bool_)), "True or False"),
    "random_state": (_is_random_state, "None, an int in [0, 2**32 - 1] or a "
                     "numpy.random.RandomState (scikit-learn's rule; a Generator is not one)"),
    "memory": (_is_memory, "None, a number of bytes or a size such as '2G'"),
    "dtype": (_is_dtype, "'float32', 'float64' or None"),
    "dict": (lambda v: isinstance(v, dict), "a dict"),
    "callable": (callable, "a callable"),
    "transformer": (lambda v: hasattr(v, "fit") and hasattr(v, "transform"),
                    "a transformer (with fit and transform)"),
    "regressor": (lambda v: hasattr(v, "fit") and hasattr(v, "predict"),
                  "a regressor (with fit and predict)"),
    "array-like": (lambda v: hasattr(v, "__len__"), "an array-like"),
    "splitter": (lambda v: hasattr(v, "split"), "a cross-validation splitter"),
}

#: ``n_jobs``: None (one thread), a positive count, or -1 (every core)
N_JOBS = [None, Interval("int", 1), Interval("int", -1, -1)]
#: ``verbose``: an int >= 0 or a bool
VERBOSE = [Interval("int", 0), "boolean"]


def _accepts(constraint, value):
    if constraint is None:
        return value is None
    if isinstance(constraint, str):
        return NAMED[constraint][0](value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.accepts(value)


def _describe(constraint):
    if constraint is None:
        return "None"
    if isinstance(constraint, str):
        return NAMED[constraint][1]
    if isinstance(constraint, type):
        return f"a {constraint.__name__}"
    return constraint.describe()


def validate_params(estimator):
    """Check every constructor parameter of ``estimator`` against its constraint table.

    Raises
    ------
    InvalidParameterError
        Naming the parameter, the value, and what it may be.

    Examples
    --------
    >>> from kernelscale import LinearSVC
    >>> from kernelscale._constraints import validate_params
    >>> try:
    ...     validate_params(LinearSVC(C=-1))
    ... except ValueError as exc:
    ...     print(exc)
    LinearSVC: C=-1 is not valid; it must be a float > 0.
    """
    table = getattr(type(estimator), "_parameter_constraints", {})
    for name, value in estimator.get_params(deep=False).items():
        allowed = table.get(name)
        if allowed is None or any(_accepts(c, value) for c in allowed):
            continue
        text = " or ".join(_describe(c) for c in allowed)
        raise InvalidParameterError(
            f"{type(estimator).__name__}: {name}={value!r} is not valid; it must be {text}.")
