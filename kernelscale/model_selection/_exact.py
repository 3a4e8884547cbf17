"""The exact SVM over a (gamma, C) grid, sharing every kernel evaluation.

The squared distances between all rows are computed once (one GEMM); each gamma
is then one elementwise exp of them (when the distances and a kernel do not
both fit the memory budget, each gamma's kernel is its own GEMM instead); each
fold's training and validation kernel blocks are cut out of that (no kernel is
ever recomputed); each class pair reads its rows from the fold's block; and
along increasing ``C`` every binary problem starts from its solution for the
previous ``C`` (alpha seeding). The solutions are LIBSVM's (the same dual, the
same stopping rule), so every grid point's cross-validated score is the one
``GridSearchCV(SVC)`` measures on the same folds.

The work is a queue of units, gamma by gamma: one unit per class pair (all
folds and every ``C``) when there are many problems, one per (problem, fold)
when there are few (a binary problem's five folds alone would leave a thread
idle for the last one). The search's one loop over units
(:func:`kernelscale.model_selection._runner.run_units`) runs them on ``n_jobs``
threads in order, so the next gamma starts while the last folds of the previous
one finish; a gamma's kernel is computed by the first unit that needs it and
reused by a later gamma after its last, and at most as many are held as the
memory budget allows.
"""

from __future__ import annotations

import threading

import numpy as np

from .._planner import (
    exact_grid_plan,
    exact_matrix_bytes,
    exact_svm_bytes,
    threads_in_budget,
)
from ..kernels import RBF
from ..solvers import (
    OvoLayout,
    ThreadWorkspaces,
    fold_svm_problems,
    path_units,
    solve_problem_path,
    svm_decision_values,
    warn_unconverged,
    workspace_bytes,
)
from ._runner import SharedUnit, add_score, run_units
from ._schedule import Stopwatch

__all__ = ["exact_svm_grid", "exact_svm_bytes", "exact_matrix_bytes", "exact_grid_bytes",
           "exact_grid_memory", "exact_kernel_matrix"]

# the grid's timings are differences of this stopwatch's readings (the scheduler's clock)
_watch = Stopwatch()

# numba's parallel regions (the exp, large gathers) are entered by one thread at a
# time: its default threading layer without TBB or OpenMP is not reentrant
_PARALLEL_REGION = threading.Lock()


def exact_grid_memory(y_index, classes, sample_weight, folds, class_weight, multiclass,
                      n_jobs, memory_budget):
    """The planner's answer for this grid (:func:`kernelscale._planner.exact_grid_plan`).

    Each solving thread keeps a copy of its fold's block (a binary problem's is
    0.64 n^2 entries, :func:`kernelscale.solvers.workspace_bytes`); the
    distances shared across gammas are kept only where every thread's copy fits
    beside them; fewer threads run where even without them the copies do not
    fit; below one kernel and one copy the grid reads rows through caches.
    """
    fold_problems = fold_svm_problems(y_index, classes, sample_weight,
                                      [train for train, _ in folds], class_weight, multiclass)
    return exact_grid_plan(len(y_index), workspace_bytes(fold_problems, len(y_index)),
                           max(1, int(n_jobs)), memory_budget)


def exact_grid_bytes(y_index, classes, sample_weight, folds, class_weight, multiclass):
    """``(least, shared)``: the bytes :func:`exact_svm_grid` needs with one solving thread.

    ``least`` holds one gamma's kernel matrix and the thread's copy of its fold
    blocks (below it the grid must read kernel rows through a cache instead);
    ``shared`` also holds the distances every gamma reuses.
    """
    plan = exact_grid_memory(y_index, classes, sample_weight, folds, class_weight,
                             multiclass, 1, 0)
    return plan.least, plan.shared


def _class_order(X, y_index, sample_weight, folds):
    """The rows sorted by class, so that a class pair's block is two runs of the kernel.

    Validation rows keep their order (the scores are compared with the labels
    in that order).
    """
    order = np.argsort(y_index, kind="stable")
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    folds = [(inverse[train], inverse[val]) for train, val in folds]
    return X[order], y_index[order], sample_weight[order], folds


class _ExactUnit(SharedUnit):
    """One gamma of the grid: its kernel (open), the class pairs and folds (parts) and the
    scores (close); the matrices of finished gammas are reused by later ones."""

    def __init__(self, X, D, kernel, fill, fold_problems, folds, Cs, tol, score, shared,
                 layout, n_classes, multiclass, n_jobs):
        self.X, self.D, self.kernel, self.fill = X, D, kernel, fill
        self.fold_problems, self.problems = fold_problems, fold_problems[-1]
        self.folds, self.Cs, self.tol, self.score = folds, Cs, tol, score
        self.shared, self.layout = shared, layout
        self.n_classes, self.multiclass = n_classes, multiclass
        self.parts = path_units(self.problems, len(folds), n_jobs)
        # a fresh n x n array costs its page faults on first touch (~0.1 s at 6,000 rows)
        self.spare = []
        self.lock = threading.Lock()
        # each thread's fold blocks reuse its memory from part to part
        self.spaces = ThreadWorkspaces()
        self.finished = []  # every closed gamma's solutions (the convergence warning)

    def open(self, factor):
        g = _Gamma(factor, len(self.folds), len(self.Cs), len(self.problems))
        with self.lock:
            out = self.spare.pop() if self.spare else None
        with _PARALLEL_REGION:
            t0 = _watch()
            if self.D is None:  # without room for the distances: its own GEMM
                g.K = RBF(self.kernel.gamma * factor).gram(
                    self.X, dtype=np.float32, memory_budget=self.fill, out=out)
            else:
                g.K = self.kernel.from_distances(self.D, factor, out=out)
            g.exp_s = _watch() - t0
        return g

    def solve(self, g, part):
        p, fold_list = part
        t0 = _watch()
        for f, path in solve_problem_path(g.K, self.fold_problems, p, fold_list, self.Cs,
                                          tol=self.tol, workspace=self.spaces.get()).items():
            for c, res in enumerate(path):
                g.results[f][c][p] = res
        with self.lock:
            g.solve_s += _watch() - t0

    def close(self, g):
        try:
            with _PARALLEL_REGION:
                per_C = _score_gamma(g, self.kernel.gamma, self.Cs, self.folds, self.problems,
                                     self.n_classes, self.multiclass, self.score, self.shared,
                                     self.layout)
        finally:
            # every part has ended: a later gamma may write over the matrix
            with self.lock:
                self.spare.append(g.K)
            g.K = None
        with self.lock:
            self.finished.append(g.results)
        return per_C

    def drop(self, g):
        # a failed or stopped gamma's other parts may still read its matrix: not reused
        g.K = None


class _Gamma:
    """One gamma's kernel, its timings and its solutions."""

    def __init__(self, factor, n_folds, n_Cs, n_problems):
        self.factor = factor
        self.K = None
        self.solve_s = 0.0
        self.exp_s = 0.0
        self.results = [[[None] * n_problems for _ in range(n_Cs)] for _ in range(n_folds)]


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
        Threads solving binary problems side by side (fewer, with a warning,
        where the memory budget cannot hold each one's copy of a fold block).
    deadline : float, default=None
        ``_watch()`` value after which no new gamma starts (the
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
        gammas completed on every fold), or a gamma failed.
    """
    ovo = multiclass == "ovo" and len(classes) > 2
    if ovo:
        X, y_index, sample_weight, folds = _class_order(X, y_index, sample_weight, folds)
    kernel = RBF(gamma_ref)
    start = _watch()
    n = X.shape[0]
    # a fold's binary problems (rows, labels, weights) do not depend on gamma
    fold_problems = fold_svm_problems(y_index, classes, sample_weight,
                                      [train for train, _ in folds], class_weight, multiclass)
    problems = fold_problems[-1]
    scratch = workspace_bytes(fold_problems, n)
    wanted = max(1, int(n_jobs))
    plan = exact_grid_plan(n, scratch, wanted, memory_budget)
    if plan.choice == "rows":
        plan.require(" (or the row-cache grid, exact_svm_rows_grid)")
    if plan.threads < wanted:  # the warning that names the budget running them all
        threads_in_budget(wanted, plan.kernel_bytes, scratch, memory_budget,
                          f"the {n}-row kernel matrix")
    n_jobs, keep = plan.threads, plan.choice == "distances"
    one = plan.kernel_bytes
    # the blocks of a kernel's GEMM go where the next gamma's kernel would
    fill = max(memory_budget - plan.total, one // max(n, 1) * 64)
    # without room for the distances each gamma's kernel is its own GEMM
    D = kernel.distances(X, dtype=np.float32, memory_budget=fill) if keep else None
    n_configs = len(factors) * len(Cs)
    shared_per_config = (_watch() - start) / (n_configs * len(folds))
    Cs = np.sort(np.asarray(Cs, dtype=np.float64))
    # where each pair's coefficients go when scoring: the same for every fold and gamma
    layout = OvoLayout(problems, len(classes)) if ovo else None
    unit = _ExactUnit(X, D, kernel, fill, fold_problems, folds, Cs, tol, score,
                      shared_per_config, layout, len(classes), multiclass, n_jobs)
    # kernels held at once: as many as the plan holds beside the distances and the
    # threads' fold blocks
    records, complete = run_units(factors, unit, n_jobs=n_jobs, slots=plan.slots,
                                  deadline=deadline, on_unit=on_unit,
                                  what="the exact SVM's grid")
    warn_unconverged([r for results in unit.finished for fold in results for path in fold
                      for r in path], tol)
    return records, complete


def _score_gamma(g, gamma_ref, Cs, folds, problems, n_classes, multiclass, score, shared,
                 layout):
    """The records of one gamma: every fold's validation score for every C."""
    per_C = [{"gamma": gamma_ref * g.factor, "C": float(C), "scores": [], "fit_times": [],
              "score_times": [], "n_iter": 0} for C in Cs]
    iterations = np.array([[sum(r["n_iter"] for r in g.results[f][c]) for c in range(len(Cs))]
                           for f in range(len(folds))], dtype=float)
    share = iterations / max(iterations.sum(), 1.0)
    exp_s = g.exp_s / (len(Cs) * len(folds))
    for f, (_, val) in enumerate(folds):
        t0 = _watch()
        path_scores = svm_decision_values(g.K, val, problems, g.results[f], n_classes,
                                          multiclass, layout)
        score_s = (_watch() - t0) / len(Cs)
        for c, record in enumerate(per_C):
            t0 = _watch()
            add_score(record, score(f, path_scores[c]))
            record["score_times"].append(score_s + _watch() - t0)
            # the gamma's solve time split by each (fold, C)'s share of the pair updates
            record["fit_times"].append(shared + exp_s + g.solve_s * share[f, c])
            record["n_iter"] += int(iterations[f, c])
    return per_C


def exact_kernel_matrix(X, gamma_ref, factor, memory_budget):
    """``k(X, X)`` (float32) for the refit, through the same distances as the search."""
    kernel = RBF(gamma_ref)
    D = kernel.distances(X, dtype=np.float32, memory_budget=memory_budget)
    return kernel.from_distances(D, factor, out=D)
