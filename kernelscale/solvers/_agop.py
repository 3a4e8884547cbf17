"""The average gradient outer product (AGOP) of a kernel predictor, in blocks of rows.

For ``f(x) = sum_j beta_j k(x, c_j)`` with an isotropic shift-invariant kernel of
``gamma = 1`` (a metric's kernel is this one on transformed rows, see
:class:`kernelscale.kernels.Metric`):

- RBF, ``k = exp(-||x - c||^2)``: ``grad f(x) = -2 sum_j beta_j k_j (x - c_j)``;
  for a block ``X_b`` with ``K_b = k(X_b, C)``, ``s = K_b beta`` and
  ``R = (K_b * beta^T) C``, the gradients are the rows of ``-2 (X_b * s - R)``;
- exponential, ``k = exp(-||x - c||)``: ``grad f(x) = -sum_j beta_j k_j (x - c_j) /
  ||x - c_j||`` (0 where ``x = c_j``), the same products with ``K_b / D_b``.

``G = (1/n) sum_i sum_t grad f_t(x_i) grad f_t(x_i)^T`` (summed over the outputs
of a multi-output predictor: a classifier's classes). The Recursive Feature
Machine (Radhakrishnan et al., Science 2024) takes a normalised power of ``G`` as
the kernel's next metric. One block costs ``O(b m (d + t))``.
"""

from __future__ import annotations

import numpy as np

from .._validation import iter_row_blocks, resolve_memory_budget
from ..kernels import RBF

__all__ = ["gradient_outer_product", "predictor_gradients"]


def predictor_gradients(X, centres, beta, kernel="rbf"):
    """Gradients of ``f(x) = k(x, C) beta`` at the rows of ``X`` (isotropic, gamma 1).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    centres : ndarray of shape (m, d)
    beta : ndarray of shape (m, t)
    kernel : {"rbf", "exponential"}, default="rbf"

    Returns
    -------
    grads : ndarray of shape (t, n, d)

    Examples
    --------
    >>> import numpy as np
    >>> X, C = np.array([[0.5]]), np.array([[0.0]])
    >>> g = predictor_gradients(X, C, np.array([[1.0]]))
    >>> bool(np.isclose(g[0, 0, 0], -2 * 0.5 * np.exp(-0.25)))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    centres = np.asarray(centres, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64).reshape(centres.shape[0], -1)
    D2 = RBF(1.0).distances(X, centres, dtype=np.float64)
    if kernel == "rbf":
        K, scale = np.exp(-D2), 2.0
        weights = K
    elif kernel == "exponential":
        D = np.sqrt(D2)
        K, scale = np.exp(-D), 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            weights = np.where(D > 0, K / D, 0.0)
    else:
        raise ValueError(f"kernel must be 'rbf' or 'exponential', got {kernel!r}.")
    grads = np.empty((beta.shape[1], X.shape[0], X.shape[1]))
    for t in range(beta.shape[1]):
        W = weights * beta[:, t]
        grads[t] = -scale * (X * W.sum(axis=1)[:, None] - W @ centres)
    return grads


def gradient_outer_product(X, centres, beta, kernel="rbf", memory_budget=None):
    """``G = (1/n) sum_i sum_t grad f_t(x_i) grad f_t(x_i)^T`` over the rows of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows (in the kernel's coordinates).
    centres : ndarray of shape (m, d)
    beta : ndarray of shape (m, t)
        The predictor's coefficients, one column per output.
    kernel : {"rbf", "exponential"}, default="rbf"
    memory_budget : int or str, default=None
        Bytes for one block's kernel, weights and gradients.

    Returns
    -------
    G : ndarray of shape (d, d)
        Symmetric positive semi-definite.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X, C = rng.normal(size=(200, 3)), rng.normal(size=(20, 3))
    >>> G = gradient_outer_product(X, C, rng.normal(size=(20, 1)))
    >>> G.shape, bool(np.allclose(G, G.T))
    ((3, 3), True)
    """
    X = np.asarray(X, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64).reshape(np.shape(centres)[0], -1)
    n, d = X.shape
    m, t = beta.shape
    G = np.zeros((d, d))
    budget = resolve_memory_budget(memory_budget)
    per_row = 8 * (3 * m + t * d + 2 * d)
    for start, stop in iter_row_blocks(n, per_row, budget, what="a block of gradients"):
        grads = predictor_gradients(X[start:stop], centres, beta, kernel)
        for g in grads:
            G += g.T @ g
    G /= max(n, 1)
    return (G + G.T) / 2
