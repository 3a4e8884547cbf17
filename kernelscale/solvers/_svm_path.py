"""The SVM training driver (LIBSVM's ``svm_train`` level): every binary problem of a
kernel SVM, for every fold and a path of increasing ``C``, solved on the kernel matrix
held whole (:func:`solve_svm_path`) or through row caches (:func:`solve_rows_path`).

This is the one module that loops over binary problems: ``KernelSVC`` calls it with
one fold and one ``C`` (the plan of ``kernelscale._planner`` chooses the matrix or the
rows), the grid searches (:mod:`kernelscale.model_selection`) per gamma with every fold
and the ``C`` path, the exact grid's threads one :func:`path_units` unit at a time.
On the matrix:

- each binary problem cuts its principal sub-matrix (its classes' rows) once,
  and each fold's block is cut from that small matrix (not from ``K``);
- along increasing ``C`` each solution starts the next (alpha seeding, with
  its gradient, which does not depend on ``C``);
- problems run in ``n_jobs`` threads (the compiled solver releases the GIL).

A fold's problem weights are computed from its rows alone (zero weight outside
it), so ``class_weight="balanced"`` means the fold's class counts, as when the
fold is fitted on its own.
"""

from __future__ import annotations

import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._planner import svm_workspace_bytes
from .._progress import progress
from ._subgradient import kernel_subgradient_svm
from ._svm_problems import ovo_classes, ovo_problems, ovr_problems, pairs, take_rows
from .smo import (
    SMO_SETTINGS,
    DenseWorkspace,
    KernelRows,
    RowCache,
    scaled_start,
    smo,
    smo_dense_path,
    submatrix,
)

__all__ = ["OvoLayout", "ThreadWorkspaces", "solve_svm_path", "solve_problem_path",
           "solve_rows_path", "path_units", "warn_unconverged", "svm_decision_values",
           "combine_scores", "svm_problems", "fold_svm_problems", "training_kernel_matrix",
           "workspace_bytes"]


class ThreadWorkspaces:
    """One :class:`kernelscale.solvers.DenseWorkspace` per thread, dropped with this object.

    Threads that solve problem after problem keep their fold blocks' memory
    from one to the next (no page faults for each fresh block); the memory
    goes when the caller drops this object.

    Examples
    --------
    >>> spaces = ThreadWorkspaces()
    >>> spaces.get() is spaces.get()
    True
    """

    def __init__(self):
        self._local = threading.local()

    def get(self):
        """The calling thread's workspace."""
        workspace = getattr(self._local, "workspace", None)
        if workspace is None:
            workspace = self._local.workspace = DenseWorkspace()
        return workspace


def svm_problems(y_index, classes, sample_weight, class_weight, multiclass):
    """The binary problems ``(rows or None, y_pm, C factors)`` of a multiclass SVM."""
    if multiclass == "ovo" and len(classes) > 2:
        return list(ovo_problems(class_weight, classes, y_index, sample_weight))
    return list(ovr_problems(class_weight, classes, y_index, sample_weight))


def fold_svm_problems(y_index, classes, sample_weight, folds, class_weight, multiclass):
    """:func:`svm_problems` of each fold: weights zero outside its training rows."""
    per_fold = []
    for train in folds:
        weight = np.zeros(len(y_index))
        weight[train] = sample_weight[train]
        per_fold.append(svm_problems(y_index, classes, weight, class_weight, multiclass))
    return per_fold


def workspace_bytes(fold_problems, n):
    """One solving thread's scratch (float32), :func:`kernelscale._planner.svm_workspace_bytes`
    of :func:`fold_svm_problems`' list (per fold) of problems on an ``n``-row matrix."""
    sizes = [[(rows is None, int(np.count_nonzero(weights > 0)))
              for rows, _, weights in per_fold] for per_fold in fold_problems]
    return svm_workspace_bytes(sizes, n, SMO_SETTINGS.compact_keep)


def solve_svm_path(K, y_index, classes, sample_weight, *, Cs, class_weight, multiclass,
                   tol, folds=None, fold_problems=None, max_iter=-1, n_jobs=1, verbose=0):
    """Solve an SVM's binary problems on ``K`` for every fold and every ``C`` of ``Cs``.

    Parameters
    ----------
    K : ndarray of shape (n, n), float32
        The kernel matrix of all rows.
    y_index : ndarray of shape (n,)
        Class index of every row.
    classes : ndarray of shape (n_classes,)
    sample_weight : ndarray of shape (n,)
    Cs : sequence of float
        Increasing penalties; each solution warm-starts the next (alpha seeding).
    class_weight, multiclass : as :class:`KernelSVC`'s.
    tol : float
    folds : list of ndarray of int, default=None
        The training rows of each fold (every class must have rows in each);
        None: one fold of all rows.
    fold_problems : list, default=None
        :func:`fold_svm_problems` of these folds, when a caller solves many
        matrices on the same folds (a search over gamma); None: built here.
    max_iter : int, default=-1
    n_jobs : int, default=1
        Threads solving problems side by side.
    verbose : int, default=0
        1: a progress bar over the problems.

    Returns
    -------
    problems : list of (rows or None, y_pm, weights)
        The binary problems over all rows (``weights`` of the last fold).
    results : list (per fold) of list (per C) of list (per problem) of dict
        :func:`kernelscale.solvers.smo_dense`'s results; ``alpha`` runs over
        the problem's rows (every row for ``rows`` None).
    """
    Cs = np.asarray(Cs, dtype=np.float64)
    if np.any(np.diff(Cs) < 0):
        raise ValueError("Cs must be increasing: each solution starts the next.")
    folds = [np.arange(len(y_index))] if folds is None else folds
    per_fold = fold_problems
    if per_fold is None:
        per_fold = fold_svm_problems(y_index, classes, sample_weight, folds, class_weight,
                                     multiclass)
    problems = per_fold[-1]
    results = [[[None] * len(problems) for _ in Cs] for _ in folds]
    bar = progress(len(problems) * len(folds), "KernelSVC problems", verbose=verbose)
    spaces = ThreadWorkspaces()

    def solve(p, fold_list):
        for f, path in solve_problem_path(K, per_fold, p, fold_list, Cs, tol=tol,
                                          max_iter=max_iter, workspace=spaces.get()).items():
            for c, res in enumerate(path):
                results[f][c][p] = res
        bar.update(len(fold_list))

    units = path_units(problems, len(folds), n_jobs)
    if n_jobs <= 1:
        for unit in units:
            solve(*unit)
    elif len(problems) >= 2 * n_jobs:  # a unit is a problem on every fold
        with ThreadPoolExecutor(n_jobs) as pool:
            list(pool.map(lambda unit: solve(*unit), units))
    else:
        # a problem's folds side by side, one problem at a time: the plan holds one
        # problem's blocks per thread, not several problems' sub-matrices at once
        for p in range(len(problems)):
            with ThreadPoolExecutor(n_jobs) as pool:
                list(pool.map(lambda unit: solve(*unit), [u for u in units if u[0] == p]))
    bar.close()
    warn_unconverged([r for fold in results for path in fold for r in path], tol)
    return problems, results


def path_units(problems, n_folds, n_jobs):
    """The units threads solve a path in: ``(problem, folds)`` pairs.

    With at least two problems per thread, a unit is a problem on every fold, the
    largest problems first (so that the threads finish together); with fewer (a
    binary SVM), each fold of a problem is a unit of its own, so that the folds run
    side by side, each cutting its block of the kernel.

    Examples
    --------
    >>> problems = [(None, np.ones(4), None), (None, np.ones(9), None)]
    >>> path_units(problems, 2, 1)
    [(1, [0, 1]), (0, [0, 1])]
    >>> path_units(problems[:1], 2, 2)
    [(0, [0]), (0, [1])]
    """
    every = list(range(n_folds))
    if len(problems) < 2 * max(int(n_jobs), 1):
        return [(p, [f]) for p in range(len(problems)) for f in every]
    return sorted(((p, every) for p in range(len(problems))),
                  key=lambda unit: -len(problems[unit[0]][1]))


def solve_rows_path(X, kernel, fold_problems, Cs, plan, *, tol, max_iter=-1, shrinking=True,
                    verbose=0, monitor=None, solver="smo", densify=False, precomputed=False,
                    share_cache=False, before=None, after=None):
    """Every binary problem through a row cache, for every fold and every ``C`` of ``Cs``.

    Each problem has its cache of kernel rows (one-vs-rest problems, which all span
    every row, share one), made only when the last problem's has gone; a fold leaves
    its other rows out with a zero bound, so the folds and the ``C`` path (warm-started,
    as on the matrix) read the same cache.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, n_features)
        The rows (for ``precomputed``, the Gram matrix).
    kernel : kernelscale.kernels.Kernel or "precomputed"
    fold_problems : list
        :func:`fold_svm_problems` of the folds (one fold of every row for a fit).
    Cs : sequence of float
        Increasing penalties (a fit: one).
    plan : MemoryPlan
        :func:`kernelscale._planner.smo_plan`'s row plan: ``cache_bytes``,
        ``batch_bytes``, ``temporary_bytes``, ``working_set_size``.
    tol, max_iter, shrinking, verbose, monitor : as :func:`kernelscale.solvers.smo`'s.
    solver : {"smo", "subgradient"}, default="smo"
    densify, precomputed : bool, default=False
        Sparse rows densified for the kernel; ``X`` is the Gram matrix.
    share_cache : bool, default=False
        Keep the cached rows in place across solves (a grid's folds and ``C`` path).
    before, after : callable, default=None
        ``before(p, y_pm)`` and ``after(p)`` around each problem (messages, bars).

    Returns
    -------
    results : list (per fold) of list (per C) of list (per problem) of dict
    """
    problems = fold_problems[-1]
    results = [[[None] * len(problems) for _ in Cs] for _ in fold_problems]
    rows = cache = shared = None
    for p, (members, y_pm, _) in enumerate(problems):
        if members is not None or shared is None:
            rows = cache = None  # the last problem's cache goes before the next comes
            rows = KernelRows(X if members is None else take_rows(X, members, precomputed),
                              kernel, plan.temporary_bytes, densify=densify)
            cache = RowCache(rows, plan.cache_bytes, plan.batch_bytes)
            if members is None:
                shared = rows, cache
        else:
            rows, cache = shared
        if before is not None:
            before(p, y_pm)
        for f, per_fold in enumerate(fold_problems):
            weights, res = per_fold[p][2], None
            for c, C in enumerate(Cs):
                bounds = np.where(weights > 0, C * weights, 0.0)  # 0 stays 0 for C = inf
                if solver == "subgradient":
                    res = kernel_subgradient_svm(rows, y_pm, bounds, max_iter=max_iter,
                                                 tol=tol, memory_budget=plan.temporary_bytes)
                else:
                    start = None if res is None else scaled_start(
                        res["alpha"], res["objective"], C / Cs[c - 1])
                    res = smo(rows, cache, y_pm, bounds, tol=tol, max_iter=max_iter,
                              alpha0=start, working_set_size=plan.working_set_size,
                              shrinking=shrinking, verbose=verbose, monitor=monitor,
                              share_cache=share_cache)
                results[f][c][p] = res
        if after is not None:
            after(p)
    return results


def solve_problem_path(K, fold_problems, p, fold_list, Cs, *, tol, max_iter=-1,
                       workspace=None):
    """Solve binary problem ``p`` on ``K`` for the folds ``fold_list`` along ``Cs``.

    Parameters
    ----------
    K : ndarray of shape (n, n), float32
        The kernel matrix of all rows.
    fold_problems : list
        :func:`fold_svm_problems` of the folds.
    p : int
        The problem (its rows, labels and each fold's weights).
    fold_list : list of int
    Cs : ndarray
        Increasing penalties.
    tol : float
    max_iter : int, default=-1
    workspace : DenseWorkspace, default=None
        The calling thread's scratch memory, kept across calls.

    Returns
    -------
    results : dict
        fold -> list (per C) of :func:`kernelscale.solvers.smo_dense`-like results
        (``alpha`` over the problem's rows, ``intercept``, ``objective``,
        ``n_iter``, ``gap``, ``converged``).
    """
    rows, y_pm, _ = fold_problems[fold_list[0]][p]
    weights = np.stack([fold_problems[f][p][2] for f in fold_list])
    # each fold's block is cut from K at the problem's rows (no copy of the problem's block)
    path = smo_dense_path(K, y_pm, weights, Cs, rows=rows, tol=tol, max_iter=max_iter,
                          warn=False, workspace=workspace)
    return {f: [{"alpha": path["alpha"][k, c], "intercept": float(path["intercept"][k, c]),
                 "objective": float(path["objective"][k, c]),
                 "n_iter": int(path["n_iter"][k, c]), "gap": float(path["gap"][k, c]),
                 "converged": bool(path["converged"][k, c])} for c in range(len(Cs))]
            for k, f in enumerate(fold_list)}


def warn_unconverged(results, tol):
    """One ConvergenceWarning for the solves ``max_iter`` stopped (a flat list of results)."""
    stopped = [r for r in results if not r["converged"]]
    if stopped:
        warnings.warn(f"SMO stopped by max_iter in {len(stopped)} of {len(results)} solves "
                      f"(largest violation {max(r['gap'] for r in stopped):.3g} > tol={tol}); "
                      "raise max_iter (or tol).", ConvergenceWarning, stacklevel=3)


class OvoLayout:
    """Where each class pair's coefficients sit, for scoring every pair at once.

    A pair's coefficients are 0 outside its two classes, so the decision values
    are one product per class: the class's columns of the kernel against the
    coefficients of the pairs that involve it, for every ``C`` at once. This
    holds the index arrays that gather those coefficients from all pairs'
    solutions in one step per class; built once, they serve every fold and
    gamma of a grid search (which scores ~10^3 times on 26 classes).

    Parameters
    ----------
    problems : list
        The one-vs-one problems, as :func:`solve_svm_path` returns them.
    n_classes : int

    Examples
    --------
    >>> import numpy as np
    >>> y_index = np.array([0, 0, 1, 1, 2, 2])
    >>> K = np.eye(6, dtype=np.float32)
    >>> problems, results = solve_svm_path(
    ...     K, y_index, np.arange(3), np.ones(6), Cs=[1.0], class_weight=None,
    ...     multiclass="ovo", tol=1e-3)
    >>> OvoLayout(problems, 3).decision_values(K, np.arange(6), results[0]).shape
    (1, 6, 3)
    """

    def __init__(self, problems, n_classes):
        sizes = [y_pm.size for _, y_pm, _ in problems]
        start = np.cumsum([0] + sizes)
        self.sign = np.concatenate([y_pm for _, y_pm, _ in problems])
        picks = [[] for _ in range(n_classes)]
        class_rows = [None] * n_classes
        # (class, position among the class's pairs) of each pair's two sides
        self.sides = np.empty((len(problems), 2, 2), dtype=np.intp)
        for p, ((i, j), (members, y_pm, _)) in enumerate(zip(pairs(n_classes), problems)):
            for side, (k, mask) in enumerate(((i, y_pm > 0), (j, y_pm < 0))):
                self.sides[p, side] = k, len(picks[k])
                picks[k].append(start[p] + np.flatnonzero(mask))
                class_rows[k] = members[mask]
        self.picks = [np.concatenate(v) if v else np.empty(0, np.intp) for v in picks]
        self.n_pairs = np.array([len(v) for v in picks], dtype=np.intp)
        self.columns = np.concatenate(class_rows)
        self.bounds = np.cumsum([0] + [r.size for r in class_rows])

    def decision_values(self, K, rows, path):
        """Every pair's decision values at ``rows``: (n_C, n_rows, n_pairs), intercepts added."""
        n_C = len(path)
        intercepts = np.array([[res["intercept"] for res in results] for results in path])
        coef = np.concatenate([res["alpha"] for results in path for res in results])
        coef = (coef.reshape(n_C, -1) * self.sign).astype(K.dtype)
        K_rows = submatrix(K, rows, self.columns)
        # each class's product fills its own rows of one array, C-major then pair
        first = np.cumsum([0] + [n_C * v for v in self.n_pairs])
        every = np.empty((first[-1], len(rows)), dtype=K.dtype)
        for k, pick in enumerate(self.picks):
            if pick.size:
                np.matmul(coef[:, pick].reshape(n_C * self.n_pairs[k], -1),
                          K_rows[:, self.bounds[k]:self.bounds[k + 1]].T,
                          out=every[first[k]:first[k + 1]])
        k, col = self.sides[..., 0], self.sides[..., 1]
        at = (first[k][None] + np.arange(n_C)[:, None, None] * self.n_pairs[k][None]
              + col[None])  # (n_C, n_pairs, 2)
        scores = every[at[..., 0]] + every[at[..., 1]]
        return scores.transpose(0, 2, 1) + intercepts[:, None, :]


def svm_decision_values(K, rows, problems, path, n_classes, multiclass, layout=None):
    """Decision values of every binary problem for some rows of ``K``, for each ``C``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The kernel matrix the problems were solved on.
    rows : ndarray of int
        The rows to score (a fold's validation rows).
    problems : list
        As :func:`solve_svm_path` returns them.
    path : list (per C) of list (per problem) of dict
        One fold's results: ``results[f]`` of :func:`solve_svm_path`.
    n_classes : int
    multiclass : {"ovo", "ovr"}
    layout : OvoLayout, default=None
        The problems' layout, when one caller scores them many times
        (one-vs-one only); None: built here.

    Returns
    -------
    scores : list (per C) of ndarray of shape (n_rows, n_problems)
    """
    if multiclass == "ovo" and n_classes > 2:
        layout = OvoLayout(problems, n_classes) if layout is None else layout
        return list(layout.decision_values(K, rows, path))
    n_C, n_problems = len(path), len(problems)
    intercepts = np.array([[res["intercept"] for res in results] for results in path])
    # one product for every C: the coefficients of all (C, problem) side by side
    dual = np.zeros((K.shape[1], n_C, n_problems), dtype=K.dtype)
    for c, results in enumerate(path):
        for p, ((members, y_pm, _), res) in enumerate(zip(problems, results)):
            dual[slice(None) if members is None else members, c, p] = res["alpha"] * y_pm
    dual = dual.reshape(K.shape[1], -1)
    # only the columns some coefficient uses: a fold's validation rows and the rows
    # that are no support vector at any C need not be read (at 12,000 rows the whole
    # K[rows] was a 115 MB copy per fold)
    used = np.flatnonzero(np.any(dual != 0, axis=1))
    scores = np.asarray(submatrix(K, rows, used) @ dual[used],
                        dtype=np.float64).reshape(len(rows), n_C, n_problems)
    return list(scores.transpose(1, 0, 2) + intercepts[:, None, :])


def combine_scores(scores, n_classes, multiclass, break_ties=False):
    """Class indices from the problems' decision values (vote, arg-max or sign).

    ``break_ties``: as :class:`KernelSVC`'s (one-vs-one votes only).
    """
    if n_classes == 2:
        return (scores[:, 0] > 0).astype(np.intp)
    if multiclass == "ovo":
        return ovo_classes(scores, n_classes, break_ties)
    return np.argmax(scores, axis=1)


def training_kernel_matrix(kernel, X, given, memory_budget):
    """The float32 ``k(X, X)`` an SVM is solved on.

    ``given``: ``"precomputed"`` (``X`` is the matrix), an array computed
    already (a grid search's, checked for its shape), or None: computed here,
    for a shift-invariant kernel as one GEMM of distances and one exp (the same
    values a grid search over gamma computes).
    """
    if isinstance(given, str):
        return np.ascontiguousarray(X, dtype=np.float32)
    if given is not None:
        K = np.ascontiguousarray(given, dtype=np.float32)
        if K.shape != (X.shape[0], X.shape[0]):
            raise ValueError(f"kernel_matrix must be ({X.shape[0]}, {X.shape[0]}), the "
                             f"kernel of the training rows; got {K.shape}.")
        return K
    if kernel.shift_invariant:
        K = kernel.distances(X, dtype=np.float32, memory_budget=memory_budget)
        return kernel.from_distances(K, out=K)
    return kernel.gram(X, dtype=np.float32, memory_budget=memory_budget)
