"""Relative Frobenius error of a feature map against the exact kernel."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._validation import check_int
from ..kernels import Kernel, make_kernel

__all__ = ["kernel_approximation_error"]


def _fitted(feature_map, X):
    try:
        check_is_fitted(feature_map)
        return feature_map
    except NotFittedError:
        return clone(feature_map).fit(X)


def kernel_approximation_error(
    X, feature_map, *, kernel=None, n_samples=2000, random_state=None, **kernel_params
):
    """Relative Frobenius error ``||K - Z Z^T||_F / ||K||_F`` on a sample of rows.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        Data the error is measured on.
    feature_map : transformer
        A fitted map (used as is) or an unfitted one (a clone is fitted on ``X``).
        Any transformer works, scikit-learn's included.
    kernel : str or callable, default=None
        The exact kernel to compare with. None takes it, with its parameters,
        from a kernelscale map; for other transformers pass ``kernel`` and its
        parameters (``gamma``, ``degree``, ``coef0``) explicitly.
    n_samples : int, default=2000
        Rows sampled (uniformly, without replacement) to form ``K``; the cost is
        ``O(n_samples^2)``.
    random_state : int, RandomState instance or None, default=None
        Seeds the row sample.
    **kernel_params
        ``gamma``, ``degree``, ``coef0`` or ``kernel_params`` of the exact
        kernel; they override those taken from the map.

    Returns
    -------
    error : float
        The relative Frobenius error (0 is exact).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import Nystroem, kernel_approximation_error
    >>> X = np.random.default_rng(0).normal(size=(300, 5))
    >>> ny = Nystroem(n_components=300, dtype="float64", random_state=0).fit(X)
    >>> kernel_approximation_error(X, ny) < 1e-6
    True
    """
    X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32))
    n_samples = check_int("n_samples", n_samples, min_value=1)
    feature_map = _fitted(feature_map, X)
    if kernel is None:
        fitted = getattr(feature_map, "kernel_", None)
        if not isinstance(fitted, Kernel):
            raise ValueError(
                f"{type(feature_map).__name__} does not say which kernel it approximates; "
                "pass kernel= and its parameters (e.g. kernel='rbf', gamma=0.1)."
            )
        exact = fitted.with_params(**kernel_params) if kernel_params else fitted
    else:
        exact = make_kernel(kernel, X, **kernel_params)
    rng = check_random_state(random_state)
    rows = np.sort(rng.choice(X.shape[0], size=min(n_samples, X.shape[0]), replace=False))
    sample = X[rows]
    K = exact.gram(sample.astype(np.float64))
    Z = np.asarray(feature_map.transform(sample), dtype=np.float64)
    norm = np.linalg.norm(K)
    if not norm > 0:
        raise ValueError("The exact kernel matrix of the sample is zero; the error is undefined.")
    return float(np.linalg.norm(K - Z @ Z.T) / norm)
