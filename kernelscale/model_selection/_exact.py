"""The exact SVM over a (gamma, C) grid, sharing every kernel evaluation.

The squared distances between all rows are computed once (one GEMM); each gamma
is then one elementwise exp of them; each fold's training and validation kernel
blocks are cut out of that (no kernel is ever recomputed); each class pair reads
its rows from the fold's block; and along increasing ``C`` every binary problem
starts from its solution for the previous ``C`` (alpha seeding). The solutions
are LIBSVM's (the same dual, the same stopping rule), so every grid point's
cross-validated score is the one ``GridSearchCV(SVC)`` measures on the same folds.
"""

from __future__ import annotations

import time

import numpy as np

from ..kernels import RBF
from ..models import fold_svm_problems, solve_svm_path, svm_decision_values

__all__ = ["exact_svm_grid", "exact_svm_bytes", "exact_kernel_matrix"]


def exact_svm_bytes(n_rows):
    """Memory the shared matrices need: the distances and the kernel of one gamma (float32)."""
    return 8 * n_rows * n_rows


def exact_svm_grid(X, y_index, classes, sample_weight, folds, *, gamma_ref, factors, Cs,
                   class_weight, multiclass, tol, score, memory_budget, n_jobs=1,
                   deadline=None, on_unit=None):
    """Cross-validated scores of ``KernelSVC`` (RBF) for every (gamma, C) of the grid.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, n_features)
    y_index : ndarray of shape (n,)
        Class index of each row (into ``classes``).
    classes : ndarray of shape (n_classes,)
    sample_weight : ndarray of shape (n,)
    folds : list of (train, validation) index arrays
    gamma_ref : float
        The reference kernel scale; gamma = ``gamma_ref * factor``.
    factors, Cs : sequences of float
    class_weight, multiclass, tol : as :class:`kernelscale.KernelSVC`'s.
    score : callable
        ``score(fold_index, decision_values)`` of the fold's validation rows
        (one column per binary problem).
    memory_budget : int
    n_jobs : int, default=1
        Threads solving binary problems side by side.
    deadline : float, default=None
        ``time.perf_counter()`` value after which no new gamma starts (the
        first always runs: a search has at least one complete gamma).
    on_unit : callable, default=None
        ``on_unit(records_so_far)`` after each gamma (progress).

    Returns
    -------
    records : list of dict
        One per (gamma, C) evaluated on every fold: ``gamma``, ``C``, ``scores``
        (per fold), ``fit_times``, ``score_times``, ``n_iter``. The shared work
        (distances, the exp per gamma, cutting blocks) is charged evenly to the
        configurations it served.
    complete : bool
        False when the deadline stopped the grid (the records then hold the
        gammas completed on every fold).
    """
    kernel = RBF(gamma_ref)
    start = time.perf_counter()
    D = kernel.distances(X, dtype=np.float32, memory_budget=memory_budget)
    K = np.empty_like(D)
    n_configs = len(factors) * len(Cs)
    shared_per_config = (time.perf_counter() - start) / (n_configs * len(folds))
    Cs = np.sort(np.asarray(Cs, dtype=np.float64))
    train_rows = [train for train, _ in folds]
    # a fold's binary problems (rows, labels, weights) do not depend on gamma
    problems_of_folds = fold_svm_problems(y_index, classes, sample_weight, train_rows,
                                          class_weight, multiclass)
    records = []
    for factor in factors:
        if records and deadline is not None and time.perf_counter() > deadline:
            return records, False
        t0 = time.perf_counter()
        kernel.from_distances(D, factor, out=K)
        exp_s = (time.perf_counter() - t0) / (len(Cs) * len(folds))
        per_C = [{"gamma": gamma_ref * factor, "C": float(C), "scores": [], "fit_times": [],
                  "score_times": [], "n_iter": 0} for C in Cs]
        t0 = time.perf_counter()
        problems, results = solve_svm_path(
            K, y_index, classes, sample_weight, Cs=Cs, folds=train_rows,
            fold_problems=problems_of_folds, class_weight=class_weight, multiclass=multiclass,
            tol=tol, n_jobs=n_jobs)
        solve_s = time.perf_counter() - t0
        iterations = np.array([[sum(r["n_iter"] for r in results[f][c]) for c in range(len(Cs))]
                               for f in range(len(folds))], dtype=float)
        share = iterations / max(iterations.sum(), 1.0)
        for f, (_, val) in enumerate(folds):
            t0 = time.perf_counter()
            path_scores = svm_decision_values(K, val, problems, results[f], len(classes),
                                              multiclass)
            score_s = (time.perf_counter() - t0) / len(Cs)
            for c, record in enumerate(per_C):
                t0 = time.perf_counter()
                record["scores"].append(score(f, path_scores[c]))
                record["score_times"].append(score_s + time.perf_counter() - t0)
                # the path's time split by each (fold, C)'s share of the pair updates
                record["fit_times"].append(shared_per_config + exp_s
                                           + solve_s * share[f, c])
                record["n_iter"] += int(iterations[f, c])
        records += per_C
        if on_unit is not None:
            on_unit(records)
    return records, True


def exact_kernel_matrix(X, gamma_ref, factor, memory_budget):
    """``k(X, X)`` (float32) for the refit, through the same distances as the search."""
    kernel = RBF(gamma_ref)
    D = kernel.distances(X, dtype=np.float32, memory_budget=memory_budget)
    return kernel.from_distances(D, factor, out=D)
