"""Nystrom kernel ridge (FALKON's model) over a (gamma, alpha) grid, from fold statistics.

FALKON minimises ``sum_i w_i (f(x_i) - y_i)^2 + alpha ||f||^2`` over
``f = sum_j beta_j k(c_j, .)``: the solution solves
``(K_nm^T W K_nm + alpha K_mm) beta = K_nm^T W y``. The search shares:

- the centres (drawn once, uniformly, from all rows: only their features are
  used, never a validation row's label) and the squared distances to them, so
  every gamma is one elementwise exp;
- the statistics ``K_nm^T W K_nm`` and ``K_nm^T W Y``: a fold's training
  statistics are the total minus the fold's own (mergeable), so each gamma
  costs one pass over the rows, not one per fold;
- one eigendecomposition of ``K_mm`` per gamma, serving every fold: in its
  coordinates the system is ``(M + alpha I) z = c`` with ``M`` positive
  semi-definite, and one eigendecomposition of ``M`` per fold serves every alpha.

The result is the exact minimiser, which FALKON's conjugate gradient approaches
(to its ``tol``) when the best configuration is refitted.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import linalg

from ..feature_maps import select_landmarks
from ..kernels import RBF

__all__ = ["falkon_grid", "fold_statistics", "ridge_path", "whitening"]

# directions of K_mm below this fraction of its largest eigenvalue carry only
# round-off (FALKON's own Cholesky adds a jitter of the same order)
_RCOND = 1e-12


def fold_statistics(K_nm, Y, weights, folds, merged):
    """``(A_f, b_f)`` = ``K^T W K``, ``K^T W Y`` over each fold's training rows.

    Parameters
    ----------
    K_nm : ndarray of shape (n, m), float64
    Y : ndarray of shape (n, n_targets)
    weights : list of ndarray of shape (n,)
        Each fold's row weights (0 outside its training rows).
    folds : list of (train, validation)
    merged : bool
        True when the weights agree on every training row of every fold (no
        per-fold class balancing): the statistics are then the total minus the
        validation rows'. Otherwise each fold's are summed on their own.
    """
    if merged:
        w = np.max(weights, axis=0)
        KW = K_nm * w[:, None]
        A, b = KW.T @ K_nm, KW.T @ Y
        for _, val in folds:
            Kv = K_nm[val]
            KvW = Kv * w[val, None]
            yield A - KvW.T @ Kv, b - KvW.T @ Y[val]
        return
    for (train, _), w in zip(folds, weights):
        Kt = K_nm[train]
        KtW = Kt * w[train, None]
        yield KtW.T @ Kt, KtW.T @ Y[train]


def ridge_path(A, b, basis, alphas):
    """Coefficients ``beta`` minimising ``beta^T A beta - 2 b^T beta + alpha beta^T R beta``.

    ``basis`` (m, k) whitens ``R`` (``basis^T R basis = I`` on its kept
    directions), so the system is ``(M + alpha I) z = c`` in ``z``: one
    eigendecomposition of ``M`` serves every alpha. Returns a list (per
    alpha) of (m, t).
    """
    M = basis.T @ A @ basis
    M = (M + M.T) / 2
    s, U = linalg.eigh(M, check_finite=False)
    # a fold's statistics (total minus the fold) carry round-off that whitening
    # can turn slightly negative: M is semi-definite, so those are 0
    s = np.maximum(s, 0.0)
    c = U.T @ (basis.T @ b)
    left = basis @ U
    return [left @ (c / (s + alpha)[:, None]) for alpha in alphas]


def whitening(K_mm, rcond=_RCOND, scale=None):
    """``V_k / sqrt(r_k)`` over the eigenpairs of ``K_mm`` above ``rcond`` x ``scale``.

    ``scale``: None for the largest eigenvalue; :class:`kernelscale.feature_maps.Nystroem`
    measures its cutoff against the largest diagonal entry instead.
    """
    r, V = linalg.eigh(K_mm, check_finite=False)
    scale = r[-1] if scale is None else scale
    keep = r > rcond * max(scale, np.finfo(np.float64).tiny)
    return V[:, keep] / np.sqrt(r[keep])


def falkon_grid(X, Y, weights, folds, *, gamma_ref, factors, alphas, n_components,
                random_state, score, memory_budget, deadline=None, on_unit=None):
    """Cross-validated scores of Nystrom kernel ridge (RBF) for every (gamma, alpha).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, n_features)
    Y : ndarray of shape (n, n_targets)
        The targets (+1 / -1 columns for a classifier).
    weights : list of ndarray of shape (n,)
        Each fold's row weights, 0 outside its training rows.
    folds : list of (train, validation)
    gamma_ref : float
    factors, alphas : sequences of float
    n_components : int
        Centres, drawn uniformly by ``random_state`` as the refitted
        :class:`kernelscale.NystromKernelRidge` draws them.
    random_state : int
    score : callable
        ``score(fold_index, predictions)`` for the fold's validation rows.
    memory_budget : int
    deadline, on_unit : as :func:`kernelscale.model_selection.exact_svm_grid`'s.

    Returns
    -------
    records : list of dict
        ``gamma``, ``alpha``, ``n_components``, ``scores``, ``fit_times``,
        ``score_times`` per fold.
    complete : bool
    """
    kernel = RBF(gamma_ref)
    start = time.perf_counter()
    rng = np.random.RandomState(random_state)
    centers, _ = select_landmarks(X, n_components, "uniform", rng, kernel=kernel,
                                  memory_budget=memory_budget)
    D_nm = kernel.distances(X, centers, dtype=np.float64, memory_budget=memory_budget)
    D_mm = kernel.distances(centers, dtype=np.float64, memory_budget=memory_budget)
    largest = np.max(weights, axis=0)
    n = largest.size
    # "total minus the fold" needs folds that partition the rows, with one weight per row
    merged = all(np.array_equal(w[tr], largest[tr]) and tr.size + va.size == n
                 and np.unique(np.concatenate([tr, va])).size == n
                 for w, (tr, va) in zip(weights, folds))
    shared = (time.perf_counter() - start) / (len(factors) * len(alphas) * len(folds))
    alphas = np.asarray(alphas, dtype=np.float64)
    K_nm = np.empty_like(D_nm)
    records = []
    for factor in factors:
        if records and deadline is not None and time.perf_counter() > deadline:
            return records, False
        per_alpha = [{"gamma": gamma_ref * factor, "alpha": float(a),
                      "n_components": int(n_components), "scores": [], "fit_times": [],
                      "score_times": []} for a in alphas]
        t0 = time.perf_counter()
        kernel.from_distances(D_nm, factor, out=K_nm)
        basis = whitening(kernel.from_distances(D_mm, factor))
        common = (time.perf_counter() - t0) / (len(alphas) * len(folds))
        t0 = time.perf_counter()
        for f, (A, b) in enumerate(fold_statistics(K_nm, Y, weights, folds, merged)):
            betas = ridge_path(A, b, basis, alphas)
            fit_s = (time.perf_counter() - t0) / len(alphas)
            K_val = K_nm[folds[f][1]]
            for record, beta in zip(per_alpha, betas):
                t1 = time.perf_counter()
                record["scores"].append(score(f, K_val @ beta))
                record["score_times"].append(time.perf_counter() - t1)
                record["fit_times"].append(shared + common + fit_s)
            t0 = time.perf_counter()
        records += per_alpha
        if on_unit is not None:
            on_unit(records)
    return records, True
