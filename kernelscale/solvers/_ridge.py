"""Ridge regression on explicit features through mergeable centred statistics.

``RidgeStatistics`` accumulates, for weighted rows ``(z_i, y_i, s_i)``, the total
weight, the weighted means and the *centred* second moments
``sum s (z - mean_z)(z - mean_z)^T`` and ``sum s (z - mean_z)(y - mean_y)^T`` in
float64. Blocks are centred on their own means before their float32 GEMM and
merged with the pairwise update of Chan, Golub & LeVeque (1979), so the result
does not depend on how the rows were chunked and no large mean is ever
subtracted after the fact (which loses all digits in float32).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .._parallel import large_symmetric_blas
from .._planner import sparse_row_bytes
from .._validation import iter_row_blocks

__all__ = ["RidgeStatistics", "accumulate", "solve_ridge"]


class RidgeStatistics:
    """Weighted, centred sufficient statistics of ``(Z, Y)`` for ridge regression.

    Parameters
    ----------
    n_features : int
    n_targets : int
    """

    def __init__(self, n_features, n_targets):
        self.weight = 0.0
        self.mean_z = np.zeros(n_features)
        self.mean_y = np.zeros(n_targets)
        self.zz = np.zeros((n_features, n_features))
        self.zy = np.zeros((n_features, n_targets))

    def merge(self, weight, mean_z, mean_y, zz, zy):
        """Merge the statistics of another set of rows into these."""
        if weight <= 0:
            return self
        total = self.weight + weight
        dz, dy = mean_z - self.mean_z, mean_y - self.mean_y
        factor = self.weight * weight / total
        self.zz += zz + factor * np.outer(dz, dz)
        self.zy += zy + factor * np.outer(dz, dy)
        self.mean_z += dz * (weight / total)
        self.mean_y += dy * (weight / total)
        self.weight = total
        return self

    def update(self, Z, Y, sample_weight=None):
        """Add the rows of one dense block ``Z`` (float32 or float64) with targets ``Y``."""
        Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
        Y = np.asarray(Y, dtype=np.float64).reshape(len(Z), -1)
        s = np.ones(len(Z)) if sample_weight is None else np.asarray(sample_weight, float)
        weight = float(s.sum())
        if weight <= 0:
            return self
        mean_z = np.asarray(s.astype(Z.dtype) @ Z, dtype=np.float64) / weight
        mean_y = (s @ Y) / weight
        centred = Z - mean_z.astype(Z.dtype)
        with large_symmetric_blas(Z.shape[1], Z.dtype.itemsize):
            if np.all(s == s[0]):
                # equal weights (the usual case): scale the small product, not a copy of Z
                zz = s[0] * np.asarray(centred.T @ centred, dtype=np.float64)
            else:
                root = np.sqrt(s).astype(Z.dtype)
                scaled = centred * root[:, None]
                zz = np.asarray(scaled.T @ scaled, dtype=np.float64)
        zy = np.asarray(centred.T @ (s[:, None] * (Y - mean_y)).astype(Z.dtype), dtype=np.float64)
        return self.merge(weight, mean_z, mean_y, zz, zy)


def accumulate(Z, Y, sample_weight, memory_budget, stats=None):
    """Accumulate the statistics of all rows of ``Z`` block by block."""
    n, d = Z.shape
    Y = np.asarray(Y, dtype=np.float64).reshape(n, -1)
    stats = RidgeStatistics(d, Y.shape[1]) if stats is None else stats
    per_row = 3 * Z.dtype.itemsize * d + sparse_row_bytes(Z)
    for start, stop in iter_row_blocks(n, per_row, memory_budget, what="a ridge block"):
        weights = None if sample_weight is None else sample_weight[start:stop]
        stats.update(Z[start:stop], Y[start:stop], weights)
    return stats


def solve_ridge(stats, alpha, fit_intercept=True):
    """Solve ``(Zc^T S Zc + alpha I) beta = Zc^T S Yc`` from the statistics.

    Parameters
    ----------
    stats : RidgeStatistics
    alpha : float
        Ridge penalty (>= 0); alpha = 0 is solved by least squares.
    fit_intercept : bool
        With an intercept the rows are centred (the intercept is not penalised);
        without, the uncentred moments are used.

    Returns
    -------
    coef : ndarray of shape (n_targets, n_features)
    intercept : ndarray of shape (n_targets,)
    """
    A, B = stats.zz.copy(), stats.zy.copy()
    if not fit_intercept:
        A += stats.weight * np.outer(stats.mean_z, stats.mean_z)
        B += stats.weight * np.outer(stats.mean_z, stats.mean_y)
    A[np.diag_indices_from(A)] += alpha
    with large_symmetric_blas(A.shape[0], A.dtype.itemsize):
        try:
            beta = scipy.linalg.cho_solve(scipy.linalg.cho_factor(A), B)
        except np.linalg.LinAlgError:
            # singular (alpha = 0 with collinear features): minimum-norm least squares
            beta = scipy.linalg.lstsq(A, B, cond=1e-10)[0]
    intercept = stats.mean_y - stats.mean_z @ beta if fit_intercept else np.zeros(B.shape[1])
    return beta.T, intercept
