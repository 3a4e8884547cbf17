"""The exact SVM's grid when the kernel matrix does not fit: one row cache per gamma,
shared by every fold and every ``C``.

Over ``memory_budget`` the distances and the kernel of all rows (``8 n^2``
bytes) cannot be held, but a search still need not pay for a fit per grid point
and fold: for each gamma and binary problem one LRU cache of kernel rows
(half the budget) serves the five folds (a fold leaves its validation rows out
by giving them a zero bound, so its rows are the cache's rows) and the whole
path of increasing ``C``, warm-started as on the matrix. The cache has
:data:`CACHE_SHARE` of the budget: when it holds every row (``4 n^2`` bytes,
so from a budget of ``5.3 n^2``), each kernel row is computed at most once per
gamma; otherwise the least recently used rows are recomputed as SMO asks for
them again. The validation scores come from kernel blocks of the validation
rows against the training rows, computed block by block in the rest.
"""

from __future__ import annotations

import numpy as np

from .._planner import smo_plan
from ..kernels import RBF
from ..solvers import fold_svm_problems, solve_rows_path, svm_decision_values
from ._runner import add_score, run_units
from ._schedule import Stopwatch

__all__ = ["exact_svm_rows_grid", "CACHE_SHARE"]

# the grid's timings are differences of this stopwatch's readings (the scheduler's clock)
_watch = Stopwatch()

#: The row cache's share of the memory budget (the rest: kernel temporaries)
CACHE_SHARE = 0.75


def exact_svm_rows_grid(X, y_index, classes, sample_weight, folds, *, gamma_ref, factors, Cs,
                        class_weight, multiclass, tol, score, memory_budget, deadline=None,
                        on_unit=None):
    """:func:`exact_svm_grid`'s records through row caches instead of the whole matrix.

    Parameters and returns are :func:`kernelscale.model_selection._exact.exact_svm_grid`'s
    (problems are solved one after another: each has its cache).
    """
    Cs = np.sort(np.asarray(Cs, dtype=np.float64))
    fold_problems = fold_svm_problems(y_index, classes, sample_weight,
                                      [train for train, _ in folds], class_weight, multiclass)
    problems = fold_problems[-1]
    n, d = X.shape
    # the search's own arrays (fold indices and each fold's problem weights) come first
    held = 8 * n * (2 * len(folds) + 4) + sum(8 * w.size for per_fold in fold_problems
                                              for _, _, w in per_fold)
    plan = smo_plan(f"the exact SVM's grid through row caches ({n} rows)", n_points=n,
                    n_variables=n, n_features=d, budget=memory_budget - held,
                    cache_bytes=int(CACHE_SHARE * memory_budget), working_set_size=1024)
    plan.require(" (the row cache must hold two kernel rows beside the working set and the "
                 "kernel's temporaries)")

    def unit(factor):
        kernel = RBF(gamma_ref * factor)
        t0 = _watch()
        results = solve_rows_path(X, kernel, fold_problems, Cs, plan, tol=tol, share_cache=True)
        solve_s = _watch() - t0
        iterations = np.array([[sum(r["n_iter"] for r in results[f][c])
                                for c in range(len(Cs))] for f in range(len(folds))], float)
        share = iterations / max(iterations.sum(), 1.0)
        per_C = [{"gamma": gamma_ref * factor, "C": float(C), "scores": [], "fit_times": [],
                  "score_times": [], "n_iter": 0} for C in Cs]
        # validation kernel blocks (float32) and their temporaries in the cache's place
        block = max(1, plan.cache_bytes // (8 * max(n, 1)))
        for f, (_, val) in enumerate(folds):
            t0 = _watch()
            parts = []
            for lo in range(0, len(val), block):
                K_val = kernel.gram(X[val[lo:lo + block]], X, dtype=np.float32,
                                    memory_budget=plan.cache_bytes // 2)
                parts.append(svm_decision_values(K_val, np.arange(K_val.shape[0]), problems,
                                                 results[f], len(classes), multiclass))
            path_scores = [np.concatenate([part[c] for part in parts]) for c in range(len(Cs))]
            score_s = (_watch() - t0) / len(Cs)
            for c, record in enumerate(per_C):
                t1 = _watch()
                add_score(record, score(f, path_scores[c]))
                record["score_times"].append(score_s + _watch() - t1)
                record["fit_times"].append(solve_s * share[f, c])
                record["n_iter"] += int(iterations[f, c])
        return per_C
    return run_units(factors, unit, deadline=deadline, on_unit=on_unit,
                     what="the exact SVM's row-cache grid")
