"""Kernel names, the resolution of ``gamma`` and :func:`make_kernel`."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .._constraints import Interval, Options
from ._base import Kernel
from ._kernels import (
    RBF,
    CallableKernel,
    Exponential,
    Laplacian,
    Linear,
    Polynomial,
    Sigmoid,
    check_widths,
)
from ._metric import Metric, check_metric

__all__ = ["KERNELS", "check_kernel", "make_kernel", "resolve_gamma", "check_widths",
           "DEFAULT_DEGREE", "DEFAULT_COEF0", "KERNEL_CONSTRAINTS"]

KERNELS = ("linear", "polynomial", "rbf", "laplacian", "exponential", "sigmoid")
_ALIASES = {"poly": "polynomial", "gaussian": "rbf"}
_CLASSES = {"linear": Linear, "polynomial": Polynomial, "rbf": RBF, "laplacian": Laplacian,
            "exponential": Exponential, "sigmoid": Sigmoid}
#: the kernels a gamma of per-feature widths or a metric is defined for
SHIFT_INVARIANT = ("rbf", "laplacian", "exponential")

#: The polynomial kernel's defaults in every estimator and map (scikit-learn's SVC).
DEFAULT_DEGREE = 3
DEFAULT_COEF0 = 0.0

class _KernelConstraint:
    """A kernel name, a callable or a :class:`Kernel` (a constraint of ``validate_params``)."""

    def accepts(self, value):
        return isinstance(value, Kernel) or callable(value) or (
            isinstance(value, str) and (value in KERNELS or value in _ALIASES))

    def describe(self):
        return ("a kernel name ('rbf', 'laplacian', 'exponential', 'polynomial' / 'poly', "
                "'sigmoid', 'linear'), a callable or a kernelscale.kernels.Kernel")


#: The constraints of the kernel parameters every kernel estimator and map shares.
KERNEL_CONSTRAINTS = {
    "kernel": [_KernelConstraint()],
    "gamma": [Options("scale", "auto"), Interval("real", 0, None, closed="neither"),
              "array-like", Metric],
    "degree": [Interval("int", 1, None)],
    "coef0": [Interval("real")],
    "kernel_params": [None, "dict"],
}

# elements per block of the variance passes: 8 MB float64 temporaries
_VARIANCE_BLOCK = 1 << 20


def check_kernel(kernel):
    """Return the canonical kernel name, or the callable / :class:`Kernel` itself.

    Parameters
    ----------
    kernel : str, callable or Kernel
        One of ``"linear"``, ``"polynomial"`` / ``"poly"``, ``"rbf"`` /
        ``"gaussian"``, ``"laplacian"``, a callable, or a :class:`Kernel` object.

    Returns
    -------
    kernel : str, callable or Kernel

    Examples
    --------
    >>> from kernelscale.kernels import check_kernel
    >>> check_kernel("poly")
    'polynomial'
    """
    if isinstance(kernel, Kernel) or callable(kernel):
        return kernel
    if isinstance(kernel, str) and kernel in _ALIASES:
        return _ALIASES[kernel]
    if isinstance(kernel, str) and kernel in KERNELS:
        return kernel
    raise ValueError(
        f"Unknown kernel={kernel!r}; expected one of 'linear', 'polynomial' ('poly'), "
        "'rbf' ('gaussian'), 'laplacian', 'exponential', 'sigmoid', a callable k(X, Y) "
        "returning the Gram block, "
        "or a kernelscale.kernels.Kernel object."
    )


def _row_blocks(n_rows, n_columns):
    step = max(1, _VARIANCE_BLOCK // max(n_columns, 1))
    return ((start, min(start + step, n_rows)) for start in range(0, n_rows, step))


def scaled_variance(X):
    """``(v, s)``: the variance of all entries of ``X / s`` in float64, and ``s = max |X|``.

    ``X.var() = v s^2``, computed without overflow for features of any magnitude
    (two passes over row blocks, so no float64 copy of ``X`` is made).
    """
    if sp.issparse(X):
        data = np.asarray(X.data, dtype=np.float64)
        s = float(np.max(np.abs(data))) if data.size else 0.0
        if not s > 0:
            return 0.0, 1.0
        total = X.shape[0] * X.shape[1]
        scaled = data / s
        mean = scaled.sum() / total
        deviations = np.sum((scaled - mean) ** 2) + (total - data.size) * mean * mean
        return float(deviations / total), s
    n, d = X.shape
    s = max((float(np.max(np.abs(X[a:b]))) for a, b in _row_blocks(n, d)), default=0.0)
    if not s > 0:
        return 0.0, 1.0
    total = n * d
    mean = sum(float(np.sum(np.asarray(X[a:b], dtype=np.float64) / s))
               for a, b in _row_blocks(n, d)) / total
    squares = sum(float(np.sum((np.asarray(X[a:b], dtype=np.float64) / s - mean) ** 2))
                  for a, b in _row_blocks(n, d))
    return squares / total, s


def resolve_gamma(gamma, X=None):
    """Return the numeric kernel scale for ``gamma``.

    Parameters
    ----------
    gamma : {"scale", "auto"}, float, array-like of shape (n_features,) or Metric
        ``"scale"``: ``1 / (n_features * X.var())`` (scikit-learn's convention;
        1.0 when X has zero variance), computed in float64 without overflow.
        ``"auto"``: ``1 / n_features``. A float > 0 is returned as is; a 1-D array
        is per-feature widths (:func:`check_widths`); a :class:`Metric` or a
        d x d matrix is a metric (:func:`check_metric`).
    X : {ndarray, sparse matrix} of shape (n_samples, n_features), default=None
        Data that ``"scale"`` and ``"auto"`` are computed from.

    Returns
    -------
    gamma : float, ndarray of shape (n_features,) or Metric

    Raises
    ------
    ValueError
        When ``"scale"`` gives no usable number (features so large that
        ``1 / X.var()`` underflows to 0): rescale the features or pass a float.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import resolve_gamma
    >>> resolve_gamma("auto", np.zeros((3, 4)))
    0.25
    """
    if isinstance(gamma, str):
        if gamma not in ("scale", "auto"):
            raise ValueError(f"Unknown gamma={gamma!r}; expected 'scale', 'auto' or a float > 0.")
        if X is None:
            raise ValueError(f"gamma={gamma!r} needs the training data to be resolved.")
        if gamma == "auto":
            return 1.0 / X.shape[1]
        variance, s = scaled_variance(X)
        if variance == 0:
            return 1.0
        value = 1.0 / (X.shape[1] * variance) / s / s
        if not (np.isfinite(value) and value > 0):
            raise ValueError(
                f"gamma='scale' = 1 / (n_features * X.var()) is {value:g} for these data "
                f"(their values reach {s:.3g}), which gives a constant kernel; rescale the "
                "features (e.g. sklearn.preprocessing.StandardScaler) or pass a numeric gamma.")
        return value
    if isinstance(gamma, Metric) or (not isinstance(gamma, (numbers.Real, str))
                                     and np.ndim(gamma) == 2):
        return check_metric(gamma, None if X is None else X.shape[1])
    if not isinstance(gamma, (numbers.Real, str)) and np.ndim(gamma) >= 1:
        return check_widths(gamma, None if X is None else X.shape[1])
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) \
            or not np.isfinite(gamma) or not gamma > 0:
        raise ValueError(f"gamma must be 'scale', 'auto', a finite float > 0 or one width per "
                         f"feature, got {gamma!r}.")
    return float(gamma)



def make_kernel(kernel="rbf", X=None, *, gamma="scale", degree=DEFAULT_DEGREE,
                coef0=DEFAULT_COEF0, kernel_params=None):
    """Build the :class:`Kernel` an estimator's parameters describe, resolved on ``X``.

    Parameters
    ----------
    kernel : str, callable or Kernel, default="rbf"
        A name (see :func:`check_kernel`), a callable ``k(X_block, Y, **kernel_params)``,
        or a :class:`Kernel` object (used as is; ``gamma``, ``degree`` and
        ``coef0`` are then ignored).
    X : {ndarray, sparse matrix} of shape (n_samples, n_features), default=None
        Training data that ``gamma="scale"`` / ``"auto"`` is resolved on.
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel (an error for named kernels).

    Returns
    -------
    kernel : Kernel

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import make_kernel
    >>> make_kernel("rbf", np.zeros((3, 4)), gamma="auto")
    RBF(gamma=0.25)
    >>> make_kernel("poly", gamma=0.5)
    Polynomial(gamma=0.5, degree=3, coef0=0.0)
    """
    kernel = check_kernel(kernel)
    if isinstance(kernel, Kernel):
        return kernel
    if callable(kernel):
        return CallableKernel(kernel, kernel_params)
    if kernel_params:
        raise ValueError("kernel_params is only used with a callable kernel.")
    if (isinstance(gamma, Metric) or (not isinstance(gamma, str) and np.ndim(gamma))) \
            and kernel not in SHIFT_INVARIANT:
        has = "no gamma" if kernel == "linear" else "one gamma: pass a float"
        what = "A metric" if isinstance(gamma, Metric) or np.ndim(gamma) == 2 else \
            "Per-feature widths (an array gamma)"
        raise ValueError(f"{what} needs a shift-invariant kernel ('rbf', 'laplacian' or "
                         f"'exponential'); the {kernel} kernel has {has}.")
    if kernel == "linear":
        return Linear()
    g = resolve_gamma(gamma, X)
    if kernel == "polynomial":
        return Polynomial(g, degree, coef0)
    if kernel == "sigmoid":
        return Sigmoid(g, coef0)
    return _CLASSES[kernel](g)
