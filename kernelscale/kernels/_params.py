"""Kernel names and the resolution of ``gamma``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_float, check_int, check_option

__all__ = ["KERNELS", "check_kernel", "kernel_arguments", "resolve_gamma"]

KERNELS = ("linear", "polynomial", "rbf", "laplacian")
_ALIASES = {"poly": "polynomial", "gaussian": "rbf"}



def check_kernel(kernel):
    """Return the canonical kernel name (or the callable itself).

    Parameters
    ----------
    kernel : str or callable
        One of ``"linear"``, ``"polynomial"`` / ``"poly"``, ``"rbf"`` /
        ``"gaussian"``, ``"laplacian"``, or a callable.

    Returns
    -------
    kernel : str or callable
        The canonical name, or ``kernel`` unchanged if it is callable.

    Examples
    --------
    >>> from kernelscale.kernels import check_kernel
    >>> check_kernel("poly")
    'polynomial'
    """
    if callable(kernel):
        return kernel
    if isinstance(kernel, str) and kernel in _ALIASES:
        return _ALIASES[kernel]
    if isinstance(kernel, str) and kernel in KERNELS:
        return kernel
    raise ValueError(
        f"Unknown kernel={kernel!r}; expected one of 'linear', 'polynomial' ('poly'), "
        "'rbf' ('gaussian'), 'laplacian', or a callable k(X, Y) returning the Gram block."
    )


def _variance(X):
    if sp.issparse(X):
        mean = X.mean()
        return float(X.multiply(X).mean() - mean * mean)
    return float(np.asarray(X, dtype=np.float64).var())


def resolve_gamma(gamma, X=None):
    """Return the numeric kernel scale for ``gamma``.

    Parameters
    ----------
    gamma : {"scale", "auto"} or float
        ``"scale"``: ``1 / (n_features * X.var())`` (scikit-learn's convention;
        1.0 when X has zero variance). ``"auto"``: ``1 / n_features``. A float
        > 0 is returned as is.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features), default=None
        Data that ``"scale"`` and ``"auto"`` are computed from.

    Returns
    -------
    gamma : float

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import resolve_gamma
    >>> resolve_gamma("auto", np.zeros((3, 4)))
    0.25
    """
    if isinstance(gamma, str):
        check_option("gamma", gamma, ("scale", "auto"))
        if X is None:
            raise ValueError(f"gamma={gamma!r} needs the training data to be resolved.")
        if gamma == "auto":
            return 1.0 / X.shape[1]
        var = _variance(X)
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    return check_float("gamma", gamma, min_value=0.0, strict=True)


def kernel_arguments(kernel, X, *, gamma="scale", degree=3, coef0=1.0, kernel_params=None):
    """Validate a kernel and resolve its parameters on the training data ``X``.

    Parameters
    ----------
    kernel : str or callable
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Data that ``gamma="scale"`` / ``"auto"`` is resolved on.
    gamma, degree, coef0 : see :func:`kernelscale.kernels.pairwise_kernel`
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel (an error for named kernels).

    Returns
    -------
    kernel_args : dict
        Keyword arguments of :func:`kernelscale.kernels.pairwise_kernel`
        holding only what the kernel uses: ``kernel``, and ``gamma`` (not for
        linear), ``degree`` and ``coef0`` (polynomial) or ``kernel_params``
        (callable).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import kernel_arguments
    >>> kernel_arguments("rbf", np.zeros((3, 4)), gamma="auto")
    {'kernel': 'rbf', 'gamma': 0.25}
    """
    kernel = check_kernel(kernel)
    args = {"kernel": kernel}
    if callable(kernel):
        args["kernel_params"] = kernel_params
        return args
    if kernel_params:
        raise ValueError("kernel_params is only used with a callable kernel.")
    if kernel != "linear":
        args["gamma"] = resolve_gamma(gamma, X)
    if kernel == "polynomial":
        args["degree"] = check_int("degree", degree, min_value=1)
        args["coef0"] = check_float("coef0", coef0)
    return args
