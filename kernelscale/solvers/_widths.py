"""Per-feature kernel widths and the ridge penalty, learned by the gradient of a hold-out loss.

Nystrom kernel ridge on centres ``Z`` (m rows) fitted on training rows ``X_t``:

    beta = A^-1 K_t^T Y_t,   A = K_t^T K_t + lam K_zz,

with ``K_t = k(X_t, Z)`` and the RBF kernel ``k(x, z) = exp(-sum_d g_d (x_d - z_d)^2)``.
Its loss on validation rows, ``L = ||K_v beta - Y_v||^2 / (n_v t)``, is a smooth
function of ``theta = (log g_1, ..., log g_D, log lam)`` whose gradient is closed
form (Meanti et al. 2022 optimise such objectives by autodiff; here it is written
out). With ``R = K_v beta - Y_v``, ``U = A^-1 K_v^T R`` and ``F = K_t beta``:

    (N / 2) dL = <R, dK_v beta> + <Y_t - F, dK_t U> - <K_t U, dK_t beta>
                 - lam <U, dK_zz beta> - lam dlog(lam) <U, K_zz beta>,

and ``dK / dlog g_d = -g_d (x_d - z_d)^2 K``, so every width's term is a sum
``S_d(K; a, b) = sum_ij (a b^T)_ij K_ij (x_id - z_jd)^2`` which one elementwise
product and two small products give for all ``d`` at once: with
``M = K * (a b^T)``, ``S = (X^2)^T M 1 - 2 sum_i x_i * (M Z)_i + (Z^2)^T M^T 1``.
A step costs ``O(n m (m + d + t))``: the blocks, ``K_t^T K_t``, the products.

A width that matters grows, one that does not shrinks towards 0 (a smoother
kernel along it loses nothing on validation rows): the widths rank the features.

The Laplacian kernel ``exp(-sum_d g_d |x_d - z_d|)`` has the same form with
``|x_d - z_d|`` for ``(x_d - z_d)^2``: ``dK / dlog g_d = -g_d |x_d - z_d| K``. Its
sums have no product form; one numba pass over the rows gives them, ``O(n m d)``.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.linalg

from ..kernels import RBF, Laplacian

__all__ = ["holdout_loss", "width_statistics", "WIDTH_KERNELS"]

#: the kernels whose per-feature widths are learned
WIDTH_KERNELS = {"rbf": RBF, "laplacian": Laplacian}

# added to A's diagonal, relative to its mean diagonal: K_zz is only semi-definite
_JITTER = 1e-10


def width_statistics(X, Z, K, a, b):
    """``S_d = sum_ij (a b^T)_ij K_ij (X_id - Z_jd)^2`` for every feature ``d``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Z : ndarray of shape (m, d)
    K : ndarray of shape (n, m)
    a : ndarray of shape (n, t)
    b : ndarray of shape (m, t)

    Returns
    -------
    S : ndarray of shape (d,)

    Examples
    --------
    >>> import numpy as np
    >>> X, Z = np.array([[0.0, 1.0]]), np.array([[2.0, 1.0]])
    >>> width_statistics(X, Z, np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)))
    array([4., 0.])
    """
    M = K * (a @ b.T)
    return (X * X).T @ M.sum(axis=1) - 2.0 * np.einsum("id,id->d", X, M @ Z) \
        + (Z * Z).T @ M.sum(axis=0)


@numba.njit(parallel=True, fastmath=True, cache=True)
def _l1_rows(X, Z, M):
    """Per row ``i``: ``sum_j M_ij |X_id - Z_jd|`` for every ``d`` (rows split over threads)."""
    n, d = X.shape
    out = np.zeros((n, d))
    for i in numba.prange(n):
        for j in range(Z.shape[0]):
            w = M[i, j]
            if w != 0.0:
                for k in range(d):
                    out[i, k] += w * abs(X[i, k] - Z[j, k])
    return out


def width_statistics_l1(X, Z, K, a, b):
    """``S_d = sum_ij (a b^T)_ij K_ij |X_id - Z_jd|`` for every feature ``d``: the
    Laplacian kernel's :func:`width_statistics`.

    Examples
    --------
    >>> import numpy as np
    >>> X, Z = np.array([[0.0, 1.0]]), np.array([[2.0, 1.0]])
    >>> width_statistics_l1(X, Z, np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)))
    array([2., 0.])
    """
    M = np.ascontiguousarray(K * (a @ b.T))
    return _l1_rows(np.ascontiguousarray(X, dtype=np.float64),
                    np.ascontiguousarray(Z, dtype=np.float64), M).sum(axis=0)


def holdout_loss(theta, X_t, Y_t, X_v, Y_v, Z, *, gradient=True, kernel="rbf"):
    """The validation loss of Nystrom kernel ridge and its gradient in ``theta``.

    Parameters
    ----------
    theta : ndarray of shape (d + 1,)
        ``log`` of the per-feature widths, then ``log`` of the penalty.
    X_t, Y_t : ndarray of shape (n_t, d), (n_t, t)
        Training rows and targets.
    X_v, Y_v : ndarray of shape (n_v, d), (n_v, t)
        Validation rows and targets.
    Z : ndarray of shape (m, d)
        Centres.
    gradient : bool, default=True
    kernel : {"rbf", "laplacian"}, default="rbf"
        ``exp(-sum_d g_d (x_d - z_d)^2)`` or ``exp(-sum_d g_d |x_d - z_d|)``.

    Returns
    -------
    loss : float
    grad : ndarray of shape (d + 1,)
        Only with ``gradient=True``.
    beta : ndarray of shape (m, t)
        The coefficients at ``theta``.
    """
    d = X_t.shape[1]
    widths, lam = np.exp(theta[:d]), float(np.exp(theta[d]))
    statistics = width_statistics if kernel == "rbf" else width_statistics_l1
    kernel = WIDTH_KERNELS[kernel](widths)
    K_t = kernel.gram(X_t, Z, dtype=np.float64)
    K_v = kernel.gram(X_v, Z, dtype=np.float64)
    K_z = kernel.gram(Z, dtype=np.float64)
    A = K_t.T @ K_t + lam * K_z
    A[np.diag_indices_from(A)] += _JITTER * max(float(np.mean(np.diag(A))), 1e-300)
    factor = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
    beta = scipy.linalg.cho_solve(factor, K_t.T @ Y_t, check_finite=False)
    R = K_v @ beta - Y_v
    N = R.size
    loss = float(np.sum(R * R) / N)
    if not gradient:
        return loss, beta
    U = scipy.linalg.cho_solve(factor, K_v.T @ R, check_finite=False)
    F = K_t @ beta
    S = (statistics(X_v, Z, K_v, R, beta)
         + statistics(X_t, Z, K_t, Y_t - F, U)
         - statistics(X_t, Z, K_t, K_t @ U, beta)
         - lam * statistics(Z, Z, K_z, U, beta))
    grad = np.empty(d + 1)
    grad[:d] = (2.0 / N) * (-widths) * S
    grad[d] = (2.0 / N) * (-lam) * float(np.sum(U * (K_z @ beta)))
    return loss, grad, beta
