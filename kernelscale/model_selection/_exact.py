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
idle for the last one). ``n_jobs`` threads take units in order, so the next
gamma starts while the last folds of the previous one finish; a gamma's
kernel is computed by the first unit that needs it and dropped after its last,
and at most as many are held as the memory budget allows.
"""

from __future__ import annotations

import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import threadpool_limits

from .._clock import now, run_with_stop, stop_at
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

__all__ = ["exact_svm_grid", "exact_svm_bytes", "exact_matrix_bytes", "exact_grid_bytes",
           "exact_grid_memory", "exact_kernel_matrix"]

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


class _Gamma:
    """One gamma's kernel, its units still to finish, and its solutions."""

    def __init__(self, rank, factor, n_folds, n_Cs, n_problems, n_units):
        self.rank = rank
        self.factor = factor
        self.K = None
        self.held = False  # a kernel slot is taken for this gamma (released once)
        self.ready = threading.Lock()
        self.left = n_units
        self.skipped = False
        self.failed = False
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
        ``now()`` value after which no new gamma starts (the
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
    ovo = multiclass == "ovo" and len(classes) > 2
    if ovo:
        X, y_index, sample_weight, folds = _class_order(X, y_index, sample_weight, folds)
    kernel = RBF(gamma_ref)
    start = now()
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
    shared_per_config = (now() - start) / (n_configs * len(folds))
    Cs = np.sort(np.asarray(Cs, dtype=np.float64))
    # where each pair's coefficients go when scoring: the same for every fold and gamma
    layout = OvoLayout(problems, len(classes)) if ovo else None
    per_gamma = len(path_units(problems, len(folds), n_jobs))
    gammas = [_Gamma(k, f, len(folds), len(Cs), len(problems), per_gamma)
              for k, f in enumerate(factors)]
    # kernels held at once: as many as the plan holds beside the distances and the
    # threads' fold blocks
    slots = threading.BoundedSemaphore(plan.slots)
    lock = threading.Lock()
    records, opened = [], []
    # the matrices of finished gammas, written over by later ones: a fresh n x n
    # array costs its page faults on first touch (~0.1 s at 6,000 rows)
    spare = []
    # each thread's fold blocks reuse its memory from unit to unit
    spaces = ThreadWorkspaces()

    # set when a unit fails or the search is interrupted: the other units stop
    # waiting for kernel slots (a gamma whose units cannot all end never frees its own)
    abort = threading.Event()

    def take_slot():
        while not slots.acquire(timeout=0.05):
            if abort.is_set():
                return False
        return True

    def release(g):
        with lock:
            held, g.held = g.held, False
        if held:
            slots.release()

    def kernel_of(g):
        with g.ready:
            if g.K is None and not g.skipped:
                with lock:
                    late = opened and deadline is not None and now() > deadline
                    if late or abort.is_set():
                        g.skipped = True
                    else:
                        opened.append(g)
                if not g.skipped:
                    if not take_slot():
                        g.skipped = True
                        return None
                    g.held = True
                    with lock:
                        out = spare.pop() if spare else None
                    with _PARALLEL_REGION:
                        t0 = now()
                        if D is None:
                            g.K = RBF(gamma_ref * g.factor).gram(
                                X, dtype=np.float32, memory_budget=fill, out=out)
                        else:
                            g.K = kernel.from_distances(D, g.factor, out=out)
                        g.exp_s = now() - t0
        return g.K

    def run(g, p, fold_list):
        if abort.is_set() or g.failed:
            return
        try:
            K = kernel_of(g)
            if g.skipped or g.failed or abort.is_set():
                return
            t0 = now()
            for f, path in solve_problem_path(K, fold_problems, p, fold_list, Cs, tol=tol,
                                              workspace=spaces.get()).items():
                for c, res in enumerate(path):
                    g.results[f][c][p] = res
            with lock:
                g.solve_s += now() - t0
                g.left -= 1
                last = g.left == 0
            if last:
                finish(g)
        except Exception as error:
            # this gamma can no longer finish: its configurations are dropped (once, with
            # a warning), its slot freed; the other gammas go on
            with lock:
                first, g.failed = not g.failed, True
            g.skipped = True
            release(g)
            if first:
                warnings.warn(f"the exact SVM's grid: the gamma factor {g.factor:.4g} failed "
                              f"({type(error).__name__}: {error}); its configurations are "
                              "dropped and the search goes on.", UserWarning, stacklevel=2)
        except BaseException:
            # a time budget's stop or Ctrl-C: every unit stops (those waiting for a kernel
            # slot see abort, those solving see the cancelled stop at a checkpoint)
            abort.set()
            pool_stop.cancel()
            g.skipped = True
            release(g)
            raise

    def finish(g):
        try:
            with _PARALLEL_REGION:
                per_C = _score_gamma(g, gamma_ref, Cs, folds, problems, len(classes),
                                     multiclass, score, shared_per_config, layout)
        finally:
            with lock:
                spare.append(g.K)
            g.K = None
            release(g)
        with lock:
            records.extend(per_C)
            if on_unit is not None:
                on_unit(list(records))

    units = [(g, *unit) for g in gammas for unit in path_units(problems, len(folds), n_jobs)]
    # the solving threads' stop: the caller's time budget, and cancelled when a unit
    # stops or the search is interrupted (worker threads do not inherit the caller's)
    with stop_at() as pool_stop:
        if n_jobs == 1:
            for unit in units:
                run(*unit)
        else:
            # one BLAS thread each: the threads are busy solving, and BLAS's own idle
            # threads spin on the cores they need (measured: 20% more CPU time)
            with threadpool_limits(limits=1, user_api="blas"):
                pool = ThreadPoolExecutor(n_jobs)
                try:
                    for future in [pool.submit(run_with_stop, pool_stop, run, *unit)
                                   for unit in units]:
                        future.result()  # a stop (or Ctrl-C) is raised here
                except BaseException:
                    abort.set()
                    pool_stop.cancel()
                    raise
                finally:
                    # the units not started are dropped, the running ones end (a unit
                    # waiting for a kernel slot sees abort and returns)
                    pool.shutdown(wait=True, cancel_futures=True)
    warn_unconverged([r for g in gammas if not g.skipped for fold in g.results
                      for path in fold for r in path], tol)
    # in the order of the factors (threads may finish gammas out of it)
    records.sort(key=lambda r: (r["rank"], r["C"]))
    return records, not any(g.skipped for g in gammas)


def _score_gamma(g, gamma_ref, Cs, folds, problems, n_classes, multiclass, score, shared,
                 layout):
    """The records of one gamma: every fold's validation score for every C."""
    per_C = [{"gamma": gamma_ref * g.factor, "C": float(C), "scores": [], "fit_times": [],
              "score_times": [], "n_iter": 0, "rank": g.rank} for C in Cs]
    iterations = np.array([[sum(r["n_iter"] for r in g.results[f][c]) for c in range(len(Cs))]
                           for f in range(len(folds))], dtype=float)
    share = iterations / max(iterations.sum(), 1.0)
    exp_s = g.exp_s / (len(Cs) * len(folds))
    for f, (_, val) in enumerate(folds):
        t0 = now()
        path_scores = svm_decision_values(g.K, val, problems, g.results[f], n_classes,
                                          multiclass, layout)
        score_s = (now() - t0) / len(Cs)
        for c, record in enumerate(per_C):
            t0 = now()
            record["scores"].append(score(f, path_scores[c]))
            record["score_times"].append(score_s + now() - t0)
            # the gamma's solve time split by each (fold, C)'s share of the pair updates
            record["fit_times"].append(shared + exp_s + g.solve_s * share[f, c])
            record["n_iter"] += int(iterations[f, c])
    return per_C


def exact_kernel_matrix(X, gamma_ref, factor, memory_budget):
    """``k(X, X)`` (float32) for the refit, through the same distances as the search."""
    kernel = RBF(gamma_ref)
    D = kernel.distances(X, dtype=np.float32, memory_budget=memory_budget)
    return kernel.from_distances(D, factor, out=D)
