"""Kernel names and the resolution of ``gamma``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_float, check_option

__all__ = ["KERNELS", "check_kernel", "resolve_gamma"]

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
