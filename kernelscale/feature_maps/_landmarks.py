"""Landmark (centre) selection for Nystrom: uniform, k-means and ridge leverage scores.

Each sampler takes the validated training data and returns ``(landmarks,
indices)``: a dense float64 array of shape ``(m, n_features)`` and the rows of
X it came from (None when the landmarks are not data points, as for k-means).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.cluster import KMeans, MiniBatchKMeans

from .._validation import csr_int32, iter_row_blocks

__all__ = ["SAMPLINGS", "select_landmarks"]

SAMPLINGS = ("uniform", "kmeans", "leverage")

# Full-batch k-means costs O(n m d) per iteration; past this many rows the
# mini-batch variant reaches comparable centres in a fraction of the time.
_FULL_KMEANS_MAX_ROWS = 20_000
_KMEANS_MAX_ITER = 20


def _rows(X, indices):
    rows = X[indices]
    rows = rows.toarray() if sp.issparse(rows) else rows
    return np.asarray(rows, dtype=np.float64)


def _distinct(rows):
    """Positions of the first occurrence of each distinct row (dense float64 rows)."""
    view = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1])))
    _, first = np.unique(view.ravel(), return_index=True)
    return np.sort(first)


def _uniform(X, m, rng):
    """``m`` distinct rows drawn uniformly without replacement.

    A duplicated row adds nothing to ``K_mm`` (binary data such as a9a repeat
    rows: 22 of 1,000 uniformly drawn a9a rows were duplicates), so duplicates
    are replaced by further draws while the data have distinct rows left.
    """
    n = X.shape[0]
    order = rng.permutation(n)
    take = order[:m]
    rows = _rows(X, np.sort(take))
    keep = _distinct(rows)
    next_row = m
    while keep.size < m and next_row < n:
        chosen = np.sort(take)[keep]
        extra = order[next_row:next_row + (m - keep.size)]
        next_row += extra.size
        take = np.concatenate([chosen, extra])
        rows = _rows(X, np.sort(take))
        keep = _distinct(rows)
    indices = np.sort(take)[keep]
    return rows[keep], indices


def _kmeans(X, m, rng):
    X = csr_int32(X)  # scikit-learn's k-means refuses 64-bit CSR indices
    seed = rng.randint(np.iinfo(np.int32).max)
    if X.shape[0] <= _FULL_KMEANS_MAX_ROWS:
        model = KMeans(n_clusters=m, n_init=1, max_iter=_KMEANS_MAX_ITER, random_state=seed)
    else:
        model = MiniBatchKMeans(
            n_clusters=m, n_init=1, batch_size=max(1024, 2 * m), init_size=3 * m,
            max_iter=_KMEANS_MAX_ITER, random_state=seed,
        )
    model.fit(X)
    return np.asarray(model.cluster_centers_, dtype=np.float64), None


def _effective_dimension_ridge(eigenvalues, n_total, n_sample, target):
    """Ridge ``lam`` at which the estimated effective dimension of K equals ``target``.

    The eigenvalues of the full kernel matrix are estimated by those of a uniform
    sample's kernel matrix scaled by ``n_total / n_sample``; the effective
    dimension ``sum_j s_j / (s_j + lam)`` decreases in ``lam``, so bisection in
    log space finds it.
    """
    s = np.clip(eigenvalues, 0.0, None) * (n_total / n_sample)
    if s.max() <= 0:
        return 1.0
    lo, hi = np.log(s.max() * 1e-12), np.log(s.max() * 1e3)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        d_eff = np.sum(s / (s + np.exp(mid)))
        lo, hi = (mid, hi) if d_eff > target else (lo, mid)
    return float(np.exp(0.5 * (lo + hi)))


def ridge_leverage_scores(X, m, rng, kernel, memory_budget):
    """Approximate ridge leverage scores of every row of ``X``.

    One level of the recursive estimator of Musco & Musco (2017): a uniform
    sample ``S`` of ``m`` rows stands in for the data, and the score of row i is
    ``(k_ii - k_iS (K_SS + lam (s/n) I)^{-1} k_Si) / lam``, the residual of
    ``x_i`` after ridge regression on the sample. ``lam`` is chosen so that the
    estimated effective dimension of the kernel matrix is about ``m``.

    Exact ridge leverage scores never exceed 1, but this estimate gives rows far
    from the sample up to ``1 / lam``; uncapped, those rows took most landmarks
    and left dense regions uncovered (measured: 6x the uniform error on data with
    small far clusters), so the estimate is capped at 1.
    """
    n = X.shape[0]
    sample = np.sort(rng.choice(n, size=min(m, n), replace=False))
    S = _rows(X, sample)
    K_SS = kernel.gram(S)
    lam = _effective_dimension_ridge(
        scipy.linalg.eigvalsh(K_SS), n, len(sample), target=m
    )
    K_SS[np.diag_indices_from(K_SS)] += lam * len(sample) / n
    chol = scipy.linalg.cholesky(K_SS, lower=True)
    diagonal = kernel.diagonal(X)
    prepared = kernel.prepare(S, np.float64)
    scores = np.empty(n)
    per_row = prepared.bytes_per_row(X) + 2 * 8 * len(sample)
    for start, stop in iter_row_blocks(n, per_row, memory_budget, what="leverage scores"):
        K_bS = prepared.evaluate_rows(X, start, stop, np.empty((stop - start, len(sample))))
        B = scipy.linalg.solve_triangular(chol, K_bS.T, lower=True, check_finite=False)
        scores[start:stop] = diagonal[start:stop] - np.einsum("ij,ij->j", B, B)
    return np.clip(scores / lam, 0.0, 1.0)


def _leverage(X, m, rng, kernel, memory_budget):
    n = X.shape[0]
    if m >= n:
        return _rows(X, np.arange(n)), np.arange(n)
    scores = ridge_leverage_scores(X, m, rng, kernel, memory_budget)
    # A floor keeps every row selectable, so sampling without replacement always
    # finds m distinct rows even when most scores are (numerically) zero.
    scores = scores + 1e-6 * max(scores.mean(), np.finfo(float).tiny)
    indices = np.sort(rng.choice(n, size=m, replace=False, p=scores / scores.sum()))
    return _rows(X, indices), indices


def select_landmarks(X, m, sampling, rng, *, kernel, memory_budget):
    """Select ``m`` landmarks of ``X`` by ``sampling`` (one of :data:`SAMPLINGS`).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    m : int
    sampling : {"uniform", "kmeans", "leverage"}
    rng : RandomState
    kernel : kernelscale.kernels.Kernel
        The kernel the leverage scores are computed with.
    memory_budget : int

    Returns
    -------
    landmarks : ndarray of shape (m, n_features), float64
    indices : ndarray of shape (m,) or None
        Rows of ``X`` the landmarks are (None for k-means centres).
    """
    if sampling == "uniform":
        return _uniform(X, m, rng)
    if sampling == "kmeans":
        return _kmeans(X, m, rng)
    return _leverage(X, m, rng, kernel, memory_budget)
