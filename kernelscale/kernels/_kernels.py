"""The kernels: RBF, Laplacian, polynomial, linear and wrapped callables."""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

from ._base import Kernel, ShiftInvariantKernel
from ._compiled import (
    exp_floor,
    l1_distances,
    rbf_exponent,
    scaled_exponent,
    shift_scale,
    squared_distances,
    tiny_floor,
)
from ._exp import exp_block32, rbf_exp32
from ._metric import Metric, check_metric
from ._products import gram_product

__all__ = ["RBF", "Laplacian", "Exponential", "Polynomial", "Sigmoid", "Linear",
           "CallableKernel", "check_widths"]


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not np.isfinite(value) or not value > 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}; pass a "
                         "positive float (or gamma='scale' to an estimator).")
    return float(value)


def _width(value):
    """A shift-invariant kernel's gamma: a number > 0, per-feature widths, or a metric."""
    if isinstance(value, Metric) or (not isinstance(value, (numbers.Real, str))
                                     and np.ndim(value) == 2):
        return check_metric(value)
    if not isinstance(value, (numbers.Real, str)) and np.ndim(value) >= 1:
        return check_widths(value)
    return _positive("gamma", value)


def _metric_work(Xb, shift, metric, dtype):
    """``(Xb - shift) L`` (the rows in the metric's coordinates), in float64, then cast."""
    centred = _scaled_work(Xb, 1.0, shift, np.float64) if shift is not None else \
        np.asarray(Xb, dtype=np.float64)
    return np.ascontiguousarray(centred @ metric.factor, dtype=dtype)


def check_widths(widths, n_features=None):
    """Per-feature kernel widths (``gamma_d``) as a read-only float64 array, or one clear error.

    One finite value >= 0 per feature, at least one of them > 0 (a width of 0
    makes the kernel ignore that feature).

    Examples
    --------
    >>> from kernelscale.kernels import check_widths
    >>> check_widths([0.5, 0.0, 2.0]).tolist()
    [0.5, 0.0, 2.0]
    """
    try:
        array = np.array(widths, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"gamma must be a float or one width per feature, got {widths!r}.") \
            from None
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"gamma as per-feature widths must be a 1-D array, got shape "
                         f"{array.shape}.")
    if n_features is not None and array.size != n_features:
        raise ValueError(f"gamma has {array.size} per-feature widths but the data have "
                         f"{n_features} features: give one width per feature.")
    bad = np.flatnonzero(~np.isfinite(array) | (array < 0))
    if bad.size:
        raise ValueError(f"gamma's per-feature widths must be finite and >= 0; width "
                         f"{bad[0]} is {array[bad[0]]!r}.")
    if not np.any(array > 0):
        raise ValueError("gamma's per-feature widths are all 0: the kernel would be constant; "
                         "give at least one width > 0.")
    array.setflags(write=False)
    return array


def _scaled_work(Xb, factor, shift, dtype):
    """``factor * (Xb - shift)`` computed in the input's precision, then cast (one pass)."""
    if Xb.dtype not in (np.float32, np.float64):
        Xb = np.asarray(Xb, dtype=np.float64)
    return shift_scale(Xb, shift, factor, dtype)


def _row_sqnorms(X):
    """Squared row norms of a dense or sparse block, in float64."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X, dtype=np.float64)


class RBF(ShiftInvariantKernel):
    """Gaussian RBF kernel ``exp(-gamma ||x - y||^2)``, or with per-feature widths.

    With an array ``gamma`` (one width >= 0 per feature, "automatic relevance
    determination") the kernel is ``exp(-sum_d gamma_d (x_d - y_d)^2)``: the
    isotropic kernel with ``gamma = 1`` on the columns scaled by
    ``sqrt(gamma_d)``. A width of 0 ignores its feature.

    Parameters
    ----------
    gamma : float or array-like of shape (n_features,), default=1.0
        Inverse squared length scale (> 0), or one per feature.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import RBF
    >>> RBF(gamma=0.25).gram(np.array([[0.0]]), np.array([[2.0]])).round(4)
    array([[0.3679]])
    """

    name = "rbf"
    sparse_products = True

    def __init__(self, gamma=1.0):
        self.gamma = _width(gamma)
        if isinstance(self.gamma, Metric):  # sparse rows are transformed, not multiplied
            self.sparse_products = False

    def get_params(self):
        return {"gamma": self.gamma}

    def _setup(self, Y):
        # Distances are shift invariant; centring both sides on Y's mean keeps
        # ||x||^2 + ||y||^2 - 2 x.y from cancelling catastrophically in float32.
        shift = np.asarray(Y.mean(axis=0), dtype=np.float64).ravel()
        if isinstance(self.gamma, Metric):
            return {"shift": shift, "metric": self.gamma}
        return {"shift": shift, "scale": np.sqrt(self.gamma)}

    def _work(self, Xb, setup, dtype):
        if "metric" in setup:
            return _metric_work(Xb, setup["shift"], setup["metric"], dtype)
        return _scaled_work(Xb, setup["scale"], setup["shift"], dtype)

    def _extra_bytes(self, n_columns, dtype):
        if isinstance(self.gamma, Metric):  # the centred block and its transform
            return 8 * (self.gamma.n_features + self.gamma.rank)
        return 0

    def _columns(self, Yw, setup):
        columns = {"sqnorm": np.einsum("ij,ij->i", Yw, Yw)}
        if "scale" in setup:  # the sparse path's (a metric densifies sparse rows)
            columns["shift_dot"] = Yw.astype(np.float64) @ (setup["scale"] * setup["shift"])
        return columns

    def _evaluate(self, Xw, Yw, setup, columns, out):
        gram_product(Xw, Yw, out)
        self._finish(out, np.einsum("ij,ij->i", Xw, Xw), columns["sqnorm"])

    def _evaluate_sparse(self, Xb, Yw, setup, columns, out):
        # sparse rows cannot be shifted without densifying them: expand
        # s(x - mu) . Yw and ||s(x - mu)||^2 in float64 instead (s: one scale, or
        # one per column, which scales the sparse rows without densifying them)
        s, mu = setup["scale"], setup["shift"]
        Xs = Xb * s if np.ndim(s) == 0 else Xb.multiply(s).tocsr()
        out[...] = np.asarray(Xs @ Yw.T, dtype=np.float64) - columns["shift_dot"]
        smu = s * mu
        x_sqnorm = _row_sqnorms(Xs) - 2.0 * (Xs @ smu) + smu @ smu
        self._finish(out, x_sqnorm.astype(out.dtype), columns["sqnorm"])

    def _distances(self, Xw, Yw, setup, columns, out):
        gram_product(Xw, Yw, out)
        squared_distances(out, np.einsum("ij,ij->i", Xw, Xw), columns["sqnorm"])

    def _column_scale(self):
        """``sqrt(gamma_d)`` with per-feature widths (the sparse path scales columns)."""
        if isinstance(self.gamma, Metric):
            return None
        return np.sqrt(self.gamma) if np.ndim(self.gamma) else None

    def _from_products(self, products, x_sqnorm, y_sqnorm, out):
        # with per-feature widths the products and norms come of scaled columns
        d2 = x_sqnorm[:, None] + y_sqnorm[None, :] - 2.0 * products
        np.maximum(d2, 0.0, out=d2)
        d2 *= -(1.0 if np.ndim(self.gamma) else self.gamma)
        np.exp(d2, out=d2)
        d2[d2 < tiny_floor(out.dtype)] = 0.0  # as every kernel block (see tiny_floor)
        out[...] = d2

    @staticmethod
    def _finish(out, x_sqnorm, y_sqnorm):
        x_sqnorm, y_sqnorm = (v.astype(out.dtype, copy=False) for v in (x_sqnorm, y_sqnorm))
        if out.dtype == np.float32:
            rbf_exp32(out, x_sqnorm, y_sqnorm, exp_floor(out.dtype))
        else:
            rbf_exponent(out, x_sqnorm, y_sqnorm, exp_floor(out.dtype))
            np.exp(out, out=out)


class Laplacian(ShiftInvariantKernel):
    """Laplacian kernel ``exp(-gamma ||x - y||_1)``, or with per-feature widths.

    With an array ``gamma`` the kernel is ``exp(-sum_d gamma_d |x_d - y_d|)``:
    the isotropic kernel with ``gamma = 1`` on the columns scaled by ``gamma_d``.

    Parameters
    ----------
    gamma : float or array-like of shape (n_features,), default=1.0
        Inverse length scale (> 0), or one per feature.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import Laplacian
    >>> float(Laplacian(gamma=0.5).gram(np.array([[0.0, 0.0]]), np.array([[1.0, -1.0]]))[0, 0])
    0.36787944117144233
    """

    name = "laplacian"

    def __init__(self, gamma=1.0):
        self.gamma = _width(gamma)

    def get_params(self):
        return {"gamma": self.gamma}

    def _work(self, Xb, setup, dtype):
        if isinstance(self.gamma, Metric):  # the kernel on X L
            return _metric_work(Xb, None, self.gamma, dtype)
        return _scaled_work(Xb, self.gamma, None, dtype)

    def _extra_bytes(self, n_columns, dtype):
        if isinstance(self.gamma, Metric):
            return 8 * (self.gamma.n_features + self.gamma.rank)
        return 0

    def _distances(self, Xw, Yw, setup, columns, out):
        l1_distances(Xw, Yw, out)

    def _evaluate(self, Xw, Yw, setup, columns, out):
        l1_distances(Xw, Yw, out)
        if out.dtype == np.float32:
            exp_block32(out, -1.0, exp_floor(out.dtype), out)
        else:
            scaled_exponent(out, out.dtype.type(-1.0), exp_floor(out.dtype))
            np.exp(out, out=out)


class Exponential(RBF):
    """Exponential (Laplace-type) kernel ``exp(-sqrt(gamma) ||x - y||_2)``, or with a metric.

    The Laplace kernel with the Euclidean norm, whose gradients the Recursive
    Feature Machine learns its metric from: with per-feature widths or a
    :class:`Metric` ``M`` as ``gamma``, ``exp(-sqrt((x - y)^T M (x - y)))``.
    ``gamma`` has the RBF kernel's meaning (an inverse squared length), so
    ``gamma="scale"`` gives both the same length scale. Positive definite in any
    dimension (the Matern kernel of smoothness 1/2).

    Parameters
    ----------
    gamma : float, array-like of shape (n_features,) or Metric, default=1.0

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import Exponential
    >>> float(Exponential(gamma=4.0).gram(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]))[0, 0])
    4.5399929762484854e-05
    """

    name = "exponential"
    # sparse rows are densified block by block (the norm's square root needs the
    # distances, which the shifted dense path keeps accurate in float32)
    sparse_products = False

    def __init__(self, gamma=1.0):
        self.gamma = _width(gamma)

    def _evaluate(self, Xw, Yw, setup, columns, out):
        self._distances(Xw, Yw, setup, columns, out)
        np.negative(out, out=out)
        np.exp(out, out=out)
        out[out < tiny_floor(out.dtype)] = 0.0

    def _distances(self, Xw, Yw, setup, columns, out):
        RBF._distances(self, Xw, Yw, setup, columns, out)
        np.sqrt(np.maximum(out, 0.0, out=out), out=out)

    def from_distances(self, D, factor=1.0, out=None):
        """``exp(-sqrt(factor) D)`` for ``D`` from :meth:`distances`: the kernel with
        ``gamma * factor`` (``D`` here is ``||x - y||`` in the kernel's coordinates)."""
        return ShiftInvariantKernel.from_distances(self, D, float(np.sqrt(factor)), out)


def _finite(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}.")
    return float(value)


class _OfProducts(Kernel):
    """A kernel of ``gamma x . y`` alone (``_finish`` maps the scaled products in place):
    the polynomial and sigmoid kernels share their products' computation."""

    sparse_products = True

    def _work(self, Xb, setup, dtype):
        return _scaled_work(Xb, math.sqrt(self.gamma), None, dtype)

    def _evaluate(self, Xw, Yw, setup, columns, out):
        gram_product(Xw, Yw, out)
        self._finish(out)

    def _evaluate_sparse(self, Xb, Yw, setup, columns, out):
        out[...] = math.sqrt(self.gamma) * np.asarray(Xb @ Yw.T, dtype=np.float64)
        self._finish(out)

    def _from_products(self, products, x_sqnorm, y_sqnorm, out):
        products *= self.gamma
        self._finish(products)
        out[...] = products


class Polynomial(_OfProducts):
    """Polynomial kernel ``(gamma x . y + coef0) ** degree``.

    The defaults are scikit-learn's ``SVC`` defaults (``degree=3``, ``coef0=0``),
    the same in every kernelscale estimator and map.

    Parameters
    ----------
    gamma : float, default=1.0
    degree : int, default=3
    coef0 : float, default=0.0

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import Polynomial
    >>> Polynomial(gamma=1.0, degree=2, coef0=0.0).gram(np.array([[1.0, 2.0]]),
    ...                                                 np.array([[3.0, 4.0]]))
    array([[121.]])
    """

    name = "polynomial"

    def __init__(self, gamma=1.0, degree=3, coef0=0.0):
        self.gamma = _positive("gamma", gamma)
        if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
            raise ValueError(f"degree must be an integer >= 1, got {degree!r}.")
        self.degree, self.coef0 = int(degree), _finite("coef0", coef0)

    def get_params(self):
        return {"gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}


    def _finish(self, out):
        if self.coef0 != 0.0:
            out += self.coef0
        np.power(out, self.degree, out=out)


    def diagonal(self, X):
        return (self.gamma * _row_sqnorms(X) + self.coef0) ** self.degree


class Sigmoid(_OfProducts):
    """Sigmoid kernel ``tanh(gamma x . y + coef0)`` (LIBSVM's and scikit-learn's).

    Not positive semi-definite for most parameters: SMO still solves its dual
    (LIBSVM's guard of a non-positive curvature), but the feature maps that
    approximate a positive semi-definite kernel do not apply to it.

    Parameters
    ----------
    gamma : float, default=1.0
    coef0 : float, default=0.0

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import Sigmoid
    >>> Sigmoid(gamma=0.5, coef0=0.0).gram(np.array([[1.0, 1.0]]),
    ...                                    np.array([[1.0, 0.0]])).round(4)
    array([[0.4621]])
    """

    name = "sigmoid"

    def __init__(self, gamma=1.0, coef0=0.0):
        self.gamma = _positive("gamma", gamma)
        self.coef0 = _finite("coef0", coef0)

    def get_params(self):
        return {"gamma": self.gamma, "coef0": self.coef0}


    def _finish(self, out):
        if self.coef0 != 0.0:
            out += self.coef0
        np.tanh(out, out=out)


    def diagonal(self, X):
        return np.tanh(self.gamma * _row_sqnorms(X) + self.coef0)

    def check_range(self, X, dtype):
        """Nothing to check: ``|tanh| <= 1`` in any dtype."""


class Linear(Kernel):
    """Linear kernel ``x . y``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import Linear
    >>> Linear().gram(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[11.]])
    """

    name = "linear"
    sparse_products = True

    def _work(self, Xb, setup, dtype):
        return np.ascontiguousarray(Xb, dtype=dtype)

    def _evaluate(self, Xw, Yw, setup, columns, out):
        gram_product(Xw, Yw, out)

    def _evaluate_sparse(self, Xb, Yw, setup, columns, out):
        out[...] = np.asarray(Xb @ Yw.T)

    def _from_products(self, products, x_sqnorm, y_sqnorm, out):
        out[...] = products

    def diagonal(self, X):
        return _row_sqnorms(X)


class CallableKernel(Kernel):
    """A user function ``function(X_block, Y, **kernel_params) -> Gram block`` as a kernel.

    The function sees the rows as they were given (sparse rows stay sparse) and
    must return a finite array of shape ``(len(X_block), len(Y))`` of a positive
    semi-definite kernel.

    Parameters
    ----------
    function : callable
    kernel_params : dict, default=None

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import CallableKernel
    >>> k = CallableKernel(lambda A, B, c=1.0: c * (A @ B.T), {"c": 2.0})
    >>> k.gram(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[22.]])
    """

    name = "callable"
    dense_input = False

    def __init__(self, function, kernel_params=None):
        if not callable(function):
            raise TypeError(f"function must be callable, got {function!r}.")
        self.function = function
        self.kernel_params = dict(kernel_params or {})

    def get_params(self):
        return {"function": self.function, "kernel_params": self.kernel_params}

    def _work(self, Xb, setup, dtype):
        return Xb  # the function sees the rows as given

    def _extra_bytes(self, n_columns, dtype):
        return np.dtype(dtype).itemsize * n_columns

    def _evaluate(self, Xw, Yw, setup, columns, out):
        block = np.asarray(self.function(Xw, Yw, **self.kernel_params))
        if block.shape != out.shape:
            raise ValueError(f"The callable kernel returned shape {block.shape}; expected "
                             f"{out.shape} (rows of X by rows of Y).")
        if not np.all(np.isfinite(block)):
            raise ValueError("The callable kernel returned NaN or infinite values.")
        out[...] = block

    def diagonal(self, X):
        return np.array([float(np.asarray(self.function(X[i:i + 1], X[i:i + 1],
                                                        **self.kernel_params)).ravel()[0])
                         for i in range(X.shape[0])])
