"""The function interface: Gram matrices, their row blocks and diagonals, by kernel name."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_array

from ._params import DEFAULT_COEF0, DEFAULT_DEGREE, make_kernel

__all__ = ["pairwise_kernel", "iter_kernel_blocks", "linear_kernel", "polynomial_kernel",
           "rbf_kernel", "laplacian_kernel", "kernel_diagonal"]


def _check_pair(X, Y):
    X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32))
    if Y is None:
        return X, X
    Y = check_array(Y, accept_sparse="csr", dtype=(np.float64, np.float32))
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features but Y has {Y.shape[1]}; "
            "both must have the same number of columns."
        )
    return X, Y


def iter_kernel_blocks(
    X, Y=None, kernel="rbf", *, gamma="scale", degree=DEFAULT_DEGREE, coef0=DEFAULT_COEF0,
    kernel_params=None, memory_budget=None,
):
    """Yield the Gram matrix ``k(X, Y)`` one row block at a time.

    The blocks are sized so that each block and its temporaries fit in
    ``memory_budget`` bytes: a Gram matrix too large for memory can be
    streamed through a reduction without ever being materialised.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples_X, n_features)
    Y : {ndarray, sparse matrix} of shape (n_samples_Y, n_features), default=None
        None means ``Y = X``.
    kernel : str, callable or Kernel, default="rbf"
        See :func:`make_kernel`.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel scale, resolved on ``X`` (see :func:`resolve_gamma`).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Constant term of the polynomial kernel.
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel.
    memory_budget : int or str, default=None
        Bytes for one block; None uses :func:`kernelscale.get_config`.

    Yields
    ------
    start, stop : int
        The rows of ``X`` the block covers.
    block : ndarray of shape (stop - start, n_samples_Y)
        float32 when both inputs are float32, float64 otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import iter_kernel_blocks
    >>> X = np.random.default_rng(0).normal(size=(1000, 5))
    >>> sums = [b.sum(axis=1) for _, _, b in iter_kernel_blocks(X, memory_budget=80_000)]
    >>> len(sums) > 1
    True
    """
    X, Y = _check_pair(X, Y)
    k = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0,
                    kernel_params=kernel_params)
    yield from k.blocks(X, Y, memory_budget=memory_budget)


def pairwise_kernel(
    X, Y=None, kernel="rbf", *, gamma="scale", degree=DEFAULT_DEGREE, coef0=DEFAULT_COEF0,
    kernel_params=None, memory_budget=None, out=None,
):
    """Compute the Gram matrix ``k(X, Y)`` in row blocks under a memory budget.

    Only the returned matrix is allocated whole; the temporaries of each row
    block (densified sparse rows, scaled copies) fit in ``memory_budget``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples_X, n_features)
    Y : {ndarray, sparse matrix} of shape (n_samples_Y, n_features), default=None
        None means ``Y = X``.
    kernel : str, callable or Kernel, default="rbf"
        See :func:`make_kernel`.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel scale, resolved on ``X`` (see :func:`resolve_gamma`).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Constant term of the polynomial kernel.
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel.
    memory_budget : int or str, default=None
        Bytes for the temporaries of one block; None uses the library default.
    out : ndarray of shape (n_samples_X, n_samples_Y), default=None
        C-contiguous array to write into (its dtype must be the result dtype).

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        float32 when both inputs are float32, float64 otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import pairwise_kernel
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> pairwise_kernel(X, kernel="rbf", gamma=0.5).round(4)
    array([[1.    , 0.6065],
           [0.6065, 1.    ]])
    """
    X, Y = _check_pair(X, Y)
    k = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0,
                    kernel_params=kernel_params)
    return k.gram(X, Y, memory_budget=memory_budget, out=out)


def linear_kernel(X, Y=None, *, memory_budget=None):
    """Linear kernel matrix; see :func:`pairwise_kernel`.

    ``K[i, j] = x_i . y_j``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import linear_kernel
    >>> linear_kernel(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[11.]])
    """
    return pairwise_kernel(X, Y, "linear", memory_budget=memory_budget)


def polynomial_kernel(X, Y=None, *, gamma="scale", degree=DEFAULT_DEGREE, coef0=DEFAULT_COEF0,
                      memory_budget=None):
    """Polynomial kernel matrix; see :func:`pairwise_kernel`.

    ``K[i, j] = (gamma x_i . y_j + coef0) ** degree``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import polynomial_kernel
    >>> polynomial_kernel(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]), gamma=1.0, degree=2,
    ...                   coef0=1.0)
    array([[144.]])
    """
    return pairwise_kernel(X, Y, "polynomial", gamma=gamma, degree=degree, coef0=coef0,
                           memory_budget=memory_budget)


def rbf_kernel(X, Y=None, *, gamma="scale", memory_budget=None):
    """Gaussian RBF kernel matrix; see :func:`pairwise_kernel`.

    ``K[i, j] = exp(-gamma ||x_i - y_j||^2)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import rbf_kernel
    >>> float(rbf_kernel(np.array([[0.0]]), np.array([[2.0]]), gamma=0.25)[0, 0])
    0.36787944117144233
    """
    return pairwise_kernel(X, Y, "rbf", gamma=gamma, memory_budget=memory_budget)


def laplacian_kernel(X, Y=None, *, gamma="scale", memory_budget=None):
    """Laplacian kernel matrix; see :func:`pairwise_kernel`.

    ``K[i, j] = exp(-gamma ||x_i - y_j||_1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import laplacian_kernel
    >>> float(laplacian_kernel(np.array([[0.0, 0.0]]), np.array([[1.0, -1.0]]), gamma=0.5)[0, 0])
    0.36787944117144233
    """
    return pairwise_kernel(X, Y, "laplacian", gamma=gamma, memory_budget=memory_budget)


def kernel_diagonal(
    X, kernel="rbf", *, gamma="scale", degree=DEFAULT_DEGREE, coef0=DEFAULT_COEF0,
    kernel_params=None,
):
    """Return ``k(x_i, x_i)`` for every row of ``X`` without forming the Gram matrix.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    kernel, gamma, degree, coef0, kernel_params
        As in :func:`pairwise_kernel`.

    Returns
    -------
    diagonal : ndarray of shape (n_samples,), float64

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import kernel_diagonal
    >>> kernel_diagonal(np.array([[1.0, 2.0]]), "linear")
    array([5.])
    """
    X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32))
    k = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0,
                    kernel_params=kernel_params)
    return k.diagonal(X)
