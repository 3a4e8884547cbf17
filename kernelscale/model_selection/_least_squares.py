"""Nystrom kernel ridge (FALKON's model) over a (gamma, alpha) grid, from fold statistics.

FALKON minimises ``sum_i w_i (f(x_i) - y_i)^2 + alpha ||f||^2`` over
``f = sum_j beta_j k(c_j, .)``: the solution solves
``(K_nm^T W K_nm + alpha K_mm) beta = K_nm^T W y``. The search shares:

- the centres (drawn once, uniformly, from all rows: only their features are
  used, never a validation row's label) and the squared distances to them, so
  every gamma is one elementwise exp;
- the statistics ``K_nm^T W K_nm`` and ``K_nm^T W Y``, summed one block of
  rows at a time (the kernel against the centres is never held whole): a
  fold's training statistics are the total minus the fold's own (mergeable),
  so each gamma costs one pass over the rows, not one per fold;
- one eigendecomposition of ``K_mm`` per gamma, serving every fold: in its
  coordinates the system is ``(M + alpha I) z = c`` with ``M`` positive
  semi-definite, and one eigendecomposition of ``M`` per fold serves every alpha.

The result is the exact minimiser, which FALKON's conjugate gradient approaches
(to its ``tol``) when the best configuration is refitted.
"""

from __future__ import annotations

import numpy as np

from .._clock import checkpoint
from .._planner import block_rows, falkon_grid_plan, falkon_grid_row_bytes
from ..feature_maps import select_landmarks
from ..kernels import RBF, Laplacian
from ..solvers import ridge_path, whitening
from ._runner import add_score, run_units
from ._schedule import Stopwatch

__all__ = ["falkon_grid", "falkon_grid_memory", "fold_statistics"]

# the grid's timings are differences of this stopwatch's readings (the scheduler's clock)
_watch = Stopwatch()

#: multiply-adds of one block between two checkpoints (``rows x m x (m + d)``): about
#: half a second on 2 cores, so that a budget's stop is honoured within a second or two
#: on a busy machine. Blocks as large as the memory budget allowed left 5-7 s between
#: checkpoints on 141,142 rows and 1,000 centres, and a loaded 2-minute search's grid
#: ran 7.4 s past its grant, into the refit's (smaller blocks measured no slower)
CHECK_FLOPS = 8e9


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
    stats = _Statistics(K_nm.shape[1], Y.shape[1], weights, folds, merged)
    stats.add(K_nm, np.arange(K_nm.shape[0]), Y)
    yield from stats.per_fold()


class _Statistics:
    """Every fold's ``K^T W K`` and ``K^T W Y``, accumulated one block of rows at a time.

    With ``merged`` folds (one weight per row, the folds partitioning the rows)
    only each fold's validation statistics are summed (every row once); a
    fold's training statistics are then the total minus its own. Otherwise each
    fold's training statistics are summed on their own (every row once per fold).
    """

    def __init__(self, m, t, weights, folds, merged):
        self.merged = merged
        self.weights = np.max(weights, axis=0) if merged else weights
        k = len(folds)
        self.fold_of = None
        if merged:
            self.fold_of = np.empty(len(self.weights), dtype=np.intp)
            for f, (_, val) in enumerate(folds):
                self.fold_of[val] = f
        self.A = np.zeros((k, m, m))
        self.b = np.zeros((k, m, t))

    def add(self, K, rows, Y):
        """Add rows ``rows`` (their kernel block ``K`` and targets ``Y[rows]``).

        Merged folds are summed over runs of rows of one fold: the grid orders
        the rows fold by fold, so a block is one run (or two), a view of ``K``.
        """
        if self.merged:
            fold_of, w = self.fold_of[rows], self.weights[rows]
            cuts = np.flatnonzero(np.diff(fold_of)) + 1
            for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, rows.size]):
                f = fold_of[lo]
                Kf = K[lo:hi]
                KW = Kf * w[lo:hi, None]
                self.A[f] += KW.T @ Kf
                self.b[f] += KW.T @ Y[rows[lo:hi]]
            return
        for f, w in enumerate(self.weights):
            wr = w[rows]
            at = wr > 0
            Kf = K[at]
            KW = Kf * wr[at, None]
            self.A[f] += KW.T @ Kf
            self.b[f] += KW.T @ Y[rows[at]]

    def per_fold(self):
        """``(A_f, b_f)`` of each fold's training rows."""
        if not self.merged:
            yield from zip(self.A, self.b)
            return
        A, b = self.A.sum(axis=0), self.b.sum(axis=0)
        for f in range(len(self.A)):
            yield A - self.A[f], b - self.b[f]


#: the kernels of :func:`falkon_grid`
GRID_KERNELS = {"rbf": RBF, "laplacian": Laplacian}


def falkon_grid_memory(X, m, n_folds, n_targets, n_alphas, memory_budget, kernel="rbf"):
    """The grid's memory plan for ``m`` centres, checked: ``(plan, prepared_row, row_bytes)``.

    Raises :class:`kernelscale.MemoryBudgetError` (naming the budget that would do)
    where the ``m x m`` statistics and 64 rows of kernel blocks do not fit.
    """
    kernel = GRID_KERNELS[kernel](1.0)
    prepared_row = kernel.prepare(X[:1], np.float64).bytes_per_row(X)
    row_bytes = falkon_grid_row_bytes(prepared_row, m, X.shape[1], n_targets, n_alphas)
    plan = falkon_grid_plan(n=X.shape[0], m=m, n_folds=n_folds, n_targets=n_targets,
                            n_alphas=n_alphas, budget=memory_budget, block_row_bytes=row_bytes)
    # the statistics and 64 rows of kernel blocks, or one line naming the budget
    plan.least_plan.require(f" (or fewer centres than n_components={m}: the statistics are "
                            f"{n_folds + 4} m x m float64 matrices)")
    return plan, prepared_row, row_bytes


def falkon_grid(X, Y, weights, folds, *, gamma_ref, factors, alphas, n_components,
                random_state, score, memory_budget, deadline=None, on_unit=None,
                intercept=False, kernel="rbf"):
    """Cross-validated scores of Nystrom kernel ridge for every (gamma, alpha).

    The kernel against the centres is never held whole: each gamma makes one
    pass over the rows in blocks to sum every fold's statistics, and one more,
    fold by fold, to score the validation rows; the squared distances to the
    centres are kept between gammas where they fit the budget
    (:func:`kernelscale._planner.falkon_grid_plan` decides, and refuses a budget
    too small for the ``m x m`` statistics before any work).

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
        ``score(fold_index, predictions)`` for the fold's validation rows: the score,
        or ``(score, kept)`` to keep what it scored on the record (``oof``).
    memory_budget : int
    deadline, on_unit : as :func:`kernelscale.model_selection._exact.exact_svm_grid`'s.
    intercept : bool, default=False
        Each fold fits its training targets' weighted mean as an intercept and the
        kernel part on what is left (``NystromKernelRidge(fit_intercept=True)``):
        the statistics carry one more column, ``K^T W 1``, which centres ``K^T W Y``.
    kernel : {"rbf", "laplacian"}, default="rbf"
        ``exp(-gamma ||x - y||^2)`` or ``exp(-gamma ||x - y||_1)``.

    Returns
    -------
    records : list of dict
        ``gamma``, ``alpha``, ``n_components``, ``scores``, ``fit_times``,
        ``score_times`` per fold.
    complete : bool
    """
    kernel_name, kernel = kernel, GRID_KERNELS[kernel](gamma_ref)
    start = _watch()
    n, t = X.shape[0], Y.shape[1]
    fold_means = [np.zeros(t)] * len(folds)
    if intercept:
        fold_means = [(w @ Y) / max(float(w.sum()), np.finfo(np.float64).tiny) for w in weights]
        Y = np.hstack([Y, np.ones((n, 1))])  # its statistics column is K^T W 1
    largest = np.max(weights, axis=0)
    # "total minus the fold" needs folds whose validation rows partition the rows (a
    # single held-out split does not: its training rows would be in no fold's sum),
    # with one weight per row
    validation = np.concatenate([va for _, va in folds])
    merged = validation.size == n and np.array_equal(np.sort(validation), np.arange(n)) \
        and all(np.array_equal(w[tr], largest[tr]) and tr.size + va.size == n
                and np.unique(np.concatenate([tr, va])).size == n
                for w, (tr, va) in zip(weights, folds))
    rng = np.random.RandomState(random_state)
    requested = int(min(n_components, n))
    centers, _ = select_landmarks(X, requested, "uniform", rng, kernel=kernel,
                                  memory_budget=memory_budget)
    m = centers.shape[0]  # duplicate rows are drawn once (the refit draws as many)
    plan, prepared_row, row_bytes = falkon_grid_memory(X, m, len(folds), Y.shape[1],
                                                       len(alphas), memory_budget, kernel_name)
    D_mm = kernel.distances(centers, dtype=np.float64, memory_budget=plan.block_bytes)
    rows_per_block = block_rows(n, row_bytes, plan.block_bytes, "the FALKON grid")
    rows_per_block = min(rows_per_block, max(256, int(CHECK_FLOPS / (m * (m + X.shape[1])))))
    # fold by fold (validation rows together), so that the scoring pass holds one
    # fold's predictions at a time
    order = np.concatenate([val for _, val in folds]) if merged else np.arange(n)
    blocks = [order[lo:lo + rows_per_block] for lo in range(0, order.size, rows_per_block)]
    D_nm = None
    if plan.keep_distances:
        D_nm = np.empty((n, m))
        for rows in blocks:
            checkpoint()
            D_nm[rows] = kernel.distances(X[rows], centers, dtype=np.float64,
                                          memory_budget=max(prepared_row,
                                                            rows_per_block * prepared_row))

    # the distances' own temporaries are the prepared rows' share of a block's bytes
    inner = max(prepared_row, rows_per_block * prepared_row)

    def block_kernel(rows, factor):
        D = D_nm[rows] if D_nm is not None else kernel.distances(
            X[rows], centers, dtype=np.float64, memory_budget=inner)
        return kernel.from_distances(D, factor, out=D)

    shared = (_watch() - start) / (len(factors) * len(alphas) * len(folds))
    alphas = np.asarray(alphas, dtype=np.float64)
    # the longest m x m eigendecomposition measured (seconds): no checkpoint stops one,
    # so a fold's starts only where it would end before a time budget's stop (on 108,000
    # rows beside two busy loops, the last fold's ran 1.6 s past its stop, the refit's
    # whole reserve; one of 3,000 centres takes 2.4 s on an idle 2-core machine)
    eigh_s = [0.0]

    def unit(factor):
        per_alpha = [{"gamma": gamma_ref * factor, "alpha": float(a),
                      "n_components": requested, "scores": [], "fit_times": [],
                      "score_times": []} for a in alphas]
        t0 = _watch()
        checkpoint(eigh_s[0])
        basis = whitening(kernel.from_distances(D_mm, factor))
        eigh_s[0] = max(eigh_s[0], _watch() - t0)
        stats = _Statistics(m, Y.shape[1], weights, folds, merged)
        for rows in blocks:
            checkpoint()  # a time budget's stop (the kept distances pass no other)
            stats.add(block_kernel(rows, factor), rows, Y)
        common = (_watch() - t0) / (len(alphas) * len(folds))
        paths = []
        for f, (A, b) in enumerate(stats.per_fold()):
            checkpoint(eigh_s[0])
            t0 = _watch()
            if intercept:  # K^T W (Y - mean) = K^T W Y - (K^T W 1) mean
                b = b[:, :t] - b[:, t:] * fold_means[f][None, :]
            path = np.concatenate(ridge_path(A, b, basis, alphas), axis=1)
            took = _watch() - t0
            eigh_s[0] = max(eigh_s[0], took)
            paths.append((path, took / len(alphas)))
        del stats
        for f, (_, val) in enumerate(folds):
            t0 = _watch()
            coef, fit_s = paths[f]
            values = np.empty((val.size, coef.shape[1]))
            where = np.empty(n, dtype=np.intp)
            where[val] = np.arange(val.size)
            mine = np.zeros(n, dtype=bool)
            mine[val] = True
            for rows in blocks:
                checkpoint()
                inside = rows[mine[rows]]
                if inside.size:
                    values[where[inside]] = block_kernel(inside, factor) @ coef
            values += np.tile(fold_means[f], len(alphas))
            per = (_watch() - t0) / len(alphas)
            for a, record in enumerate(per_alpha):
                t1 = _watch()
                add_score(record, score(f, values[:, a * t:(a + 1) * t]))
                record["score_times"].append(per + _watch() - t1)
                record["fit_times"].append(shared + common + fit_s)
        return per_alpha
    return run_units(factors, unit, deadline=deadline, on_unit=on_unit, what="the FALKON grid")
