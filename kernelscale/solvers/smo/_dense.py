"""SMO's whole-problem working set: the pair solver on a kernel matrix held whole.

When the training kernel matrix is in memory (a grid search computes it once
per gamma and cuts every fold and class pair out of it), batching working sets
has nothing to save: each pair update reads two rows of the matrix. :func:`smo`
then takes the whole problem as its one working set (:func:`solve_whole`), and
this module's functions give the same case on arrays. The pair solver runs
LIBSVM's algorithm directly on the matrix (second-order
pair selection, Fan, Chen & Lin 2005) in compiled code, and starts from any
feasible point: a solution for a smaller ``C`` is feasible for a larger one
(alpha seeding, DeCoste & Wagstaff 2000), so a path of increasing ``C`` costs
little more than its last point.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..._clock import checkpoint, current_stop
from ..._planner import dense_workspace_sizes
from ._compiled import rows_dot
from ._dense_compiled import (
    COMPACT_KEEP,
    outside_box,
    scaled_is_better,
    solution_summary,
    solve_pairs,
    take_block,
    take_serial,
)
from ._path_compiled import solve_path
from ._settings import SMO_SETTINGS

__all__ = ["DenseWorkspace", "scaled_start", "smo_dense", "smo_dense_path", "solve_whole",
           "submatrix"]

_PARALLEL_GATHER = SMO_SETTINGS.parallel_gather
_PROGRESS_PAIRS = SMO_SETTINGS.progress_pairs


class DenseWorkspace:
    """Scratch memory that :func:`smo_dense_path` reuses from one call to the next.

    Each call copies every fold's block out of the shared matrix and, when
    shrinking pays, compacts it; a fresh array for each costs its page faults
    on first touch (on the 6,000-row imbalanced grid, a fifth of the solve time).
    One workspace per thread (calls that share one must not overlap); the
    memory is held until the workspace is dropped.

    Examples
    --------
    >>> import numpy as np
    >>> work = DenseWorkspace()
    >>> fold, compact = work.buffers(100, np.float32)
    >>> fold.size, compact.size
    (10000, 6400)
    """

    def __init__(self):
        self._fold = np.empty(0, dtype=np.float32)
        self._compact = np.empty(0, dtype=np.float32)

    @staticmethod
    def sizes(n):
        """Entries of the two buffers for folds of ``n`` rows: the block, the largest compaction
        (:func:`kernelscale._planner.dense_workspace_sizes`)."""
        return dense_workspace_sizes(n, COMPACT_KEEP)

    def buffers(self, n, dtype):
        """Buffers for a fold's block of ``n`` rows and its compactions (grown as needed).

        Parameters
        ----------
        n : int
            The largest fold's rows.
        dtype : dtype
            The kernel matrix's.

        Returns
        -------
        fold, compact : ndarray of shape (>= n^2,) and (>= floor(0.8 n)^2,), as :meth:`sizes`
        """
        dtype = np.dtype(dtype)
        need = self.sizes(n)
        if self._fold.dtype != dtype or self._fold.size < need[0]:
            self._fold = np.empty(need[0], dtype=dtype)
        if self._compact.dtype != dtype or self._compact.size < need[1]:
            self._compact = np.empty(need[1], dtype=dtype)
        return self._fold, self._compact


def smo_dense(K, y, C, *, tol=1e-3, max_iter=-1, alpha0=None, gradient0=None, warn=True,
              linear_term=None, shrinking=True):
    """Solve the binary SVM dual on the kernel matrix ``K`` held whole.

    The dual is LIBSVM's general form ``min 1/2 a^T Q a + p^T a`` over
    ``0 <= a <= C``, ``y^T a = y^T a0``, with ``Q = (y y^T) * K`` and ``p = -1``
    for classification (``linear_term`` gives another ``p``: epsilon-SVR's doubled
    problem, the one-class SVM's ``p = 0``).

    Parameters
    ----------
    K : ndarray of shape (n, n), float32 or float64, C-contiguous
        The training kernel matrix.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : ndarray of shape (n,)
        Upper bound of each dual variable. A variable with ``C = 0`` is left out
        of the problem (how a cross-validation fold drops its validation rows
        without cutting a new matrix).
    tol : float, default=1e-3
        LIBSVM's stopping rule: maximal violation below ``tol``.
    max_iter : int, default=-1
        Pair updates; -1 for LIBSVM's ``max(10^7, 100 n)``.
    alpha0 : ndarray of shape (n,), default=None
        A feasible start (``0 <= alpha0 <= C``, ``y^T alpha0 = 0``), e.g. the
        solution for a smaller ``C``.
    gradient0 : ndarray of shape (n,), default=None
        The dual gradient at ``alpha0`` (the ``gradient`` a previous call
        returned): it does not depend on ``C``, and passing it saves one
        product with ``K``.
    warn : bool, default=True
        Warn when ``max_iter`` stops the solver.
    linear_term : ndarray of shape (n,), default=None
        ``p``; None: ``-1`` (classification).
    shrinking : bool, default=True
        LIBSVM's shrinking of variables stuck at a bound.

    Returns
    -------
    result : dict
        ``alpha``, ``intercept``, ``objective``, ``n_iter``, ``converged``, ``gap``,
        as :func:`smo` returns them, and ``gradient`` (``Q alpha + p``; not kept
        up to date where ``C = 0``).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[1.0, 0.2], [0.2, 1.0]])
    >>> r = smo_dense(K, np.array([1.0, -1.0]), np.array([1.0, 1.0]))
    >>> round(float(r["alpha"][0]), 4), r["converged"]
    (1.0, True)
    """
    n = y.size
    y = np.ascontiguousarray(y, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    if max_iter is None or max_iter < 0:
        max_iter = max(10_000_000, 100 * n)
    p = np.full(n, -1.0) if linear_term is None else \
        np.ascontiguousarray(linear_term, dtype=np.float64)
    if alpha0 is None:
        alpha = np.zeros(n)
        G = p.copy()
    else:
        alpha = np.array(alpha0, dtype=np.float64)
        if outside_box(alpha, C):
            raise ValueError("alpha0 must lie in [0, C]: a solution for a smaller C (or 0).")
        if gradient0 is not None:
            G = np.array(gradient0, dtype=np.float64)
        else:
            G = y * rows_dot(K, alpha * y) + p  # float64 sums of the float32 matrix
    n_iter = solve_whole(K, y, alpha, G, C, p, tol=tol, max_iter=max_iter,
                         shrinking=shrinking)
    # one compiled pass: a grid search calls this ~10^5 times on small problems
    gap, rho, objective = solution_summary(y, G, alpha, C)
    if linear_term is not None:  # the summary's objective assumes p = -1
        objective = 0.5 * float(alpha @ (G + p))
    converged = bool(gap < tol) or n_iter < max_iter
    if not converged and warn:
        warnings.warn(f"SMO stopped after {n_iter} pair updates with violation {gap:.3g} > "
                      f"tol={tol}; raise max_iter (or tol).", ConvergenceWarning, stacklevel=2)
    return {"alpha": alpha, "intercept": -rho, "objective": objective, "n_iter": int(n_iter),
            "converged": converged, "gap": float(gap), "gradient": G}


def solve_whole(K, y, alpha, G, C, p, *, tol, max_iter, shrinking=True, monitor=None,
                work_bytes=None):
    """Run SMO's pair solver on the whole problem held in ``K``; ``alpha``, ``G`` in place.

    The one working set of :func:`smo` when its store holds the problem's matrix,
    and all of :func:`smo_dense`. With a ``monitor`` the solver runs
    ``SMO_SETTINGS.progress_pairs * n`` pair updates at a time and reports its gap
    after each (a progress bar's); each such call starts its shrinking afresh,
    which costs one rebuild of the shrunk gradients per call.

    Parameters
    ----------
    K : ndarray of shape (n, n), C-contiguous
    y, alpha, G, C, p : ndarray of shape (n,), float64
        Labels, dual variables, gradient ``Q alpha + p``, bounds, linear term.
    tol : float
    max_iter : int
    shrinking : bool, default=True
    monitor : callable, default=None
        ``monitor(n_calls, gap, n)``.
    work_bytes : int, default=None
        Memory for shrinking's compacted blocks (a smaller block than fits is not
        compacted); None: as much as the largest needs (``floor(0.8 n)^2`` entries).

    Returns
    -------
    n_iter : int
        Pair updates.
    """
    n = y.size
    # untouched pages of the buffer cost no memory: only a compaction that pays fills them
    largest = DenseWorkspace.sizes(n)[1]
    work = np.empty(largest if work_bytes is None
                    else min(largest, int(work_bytes) // K.itemsize), K.dtype)
    if monitor is None and current_stop() is None:
        return int(solve_pairs(K, y, alpha, G, C, p, float(tol), int(max_iter), work,
                               bool(shrinking)))
    # in chunks: for the progress bar, and so that a time budget's stop is checked
    step = max(_PROGRESS_PAIRS * n, 1000)
    done = calls = 0
    while done < max_iter:
        chunk = min(step, max_iter - done)
        steps = int(solve_pairs(K, y, alpha, G, C, p, float(tol), chunk, work, bool(shrinking)))
        done += steps
        calls += 1
        if monitor is not None:
            monitor(calls, float(solution_summary(y, G, alpha, C)[0]), n)
        checkpoint()
        if steps < chunk:
            break
    return done


def submatrix(K, rows, columns=None):
    """``K[rows][:, columns]`` as a C-contiguous array, gathered in parallel.

    Parameters
    ----------
    K : ndarray of shape (n, m)
    rows : ndarray of int
    columns : ndarray of int, default=None
        None: the same as ``rows`` (a principal sub-matrix).

    Returns
    -------
    block : ndarray of shape (len(rows), len(columns)), ``K``'s dtype
    """
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    columns = rows if columns is None else np.ascontiguousarray(columns, dtype=np.intp)
    out = np.empty((rows.size, columns.size), dtype=K.dtype)
    if out.size < _PARALLEL_GATHER:
        take_serial(np.ascontiguousarray(K), rows, columns, out)
    else:
        take_block(np.ascontiguousarray(K), rows, columns, out)
    return out


def scaled_start(alpha, objective, ratio):
    """The warm start for ``C`` times ``ratio`` (> 1): ``alpha`` or ``ratio * alpha``.

    Both are feasible for the larger ``C``; the one with the lower dual
    objective (``objective`` is that of ``alpha``) is returned, by the rule
    :func:`smo_dense_path` applies in compiled code (``scaled_is_better``).

    Parameters
    ----------
    alpha : ndarray of shape (n,)
    objective : float
        ``1/2 alpha^T Q alpha - sum(alpha)``.
    ratio : float

    Returns
    -------
    alpha0 : ndarray of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> scaled_start(np.array([0.1, 0.1]), 0.5 * 0.02 - 0.2, 5.0).tolist()
    [0.5, 0.5]
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    if not (np.isfinite(ratio) and ratio > 0):  # C = inf: keep what solved the last C
        return alpha
    linear = float(alpha.sum())
    quad = 2.0 * (float(objective) + linear)
    return ratio * alpha if scaled_is_better(quad, linear, ratio) else alpha


def smo_dense_path(K, y, weights, Cs, *, rows=None, tol=1e-3, max_iter=-1, warn=True,
                   workspace=None):
    """:func:`smo_dense` for every fold and every ``C`` of a path, in one compiled call.

    Parameters
    ----------
    K : ndarray of shape (n_points, n_points), float32 or float64, C-contiguous
        The kernel matrix of the problem's rows, or of more rows than the
        problem's (see ``rows``).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    weights : ndarray of shape (n_folds, n)
        Each fold's bound factors: fold ``f`` solves the rows with
        ``weights[f] > 0`` with bounds ``C * weights[f]`` (0 leaves a row out).
    Cs : ndarray of shape (n_Cs,)
        Increasing positive penalties; each solution, or the same scaled to the
        next ``C`` where that has the lower objective, starts the next (alpha
        seeding).
    rows : ndarray of int of shape (n,), default=None
        The problem's rows of ``K`` (a class pair of a matrix shared by every
        pair: each fold's block is cut from ``K`` with no copy of the pair's
        block); None: all of them (``n_points == n``).
    tol : float, default=1e-3
    max_iter : int, default=-1
        Pair updates per solve; -1 for LIBSVM's ``max(10^7, 100 n)``.
    warn : bool, default=True
        Warn when ``max_iter`` stops a solve.
    workspace : DenseWorkspace, default=None
        Scratch memory kept from call to call (one per thread); None: this
        call's own.

    Returns
    -------
    result : dict
        ``alpha`` (n_folds, n_Cs, n), ``intercept``, ``objective``, ``gap``,
        ``n_iter`` and ``converged`` (each (n_folds, n_Cs)).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[1.0, 0.2], [0.2, 1.0]])
    >>> r = smo_dense_path(K, np.array([1.0, -1.0]), np.ones((1, 2)), np.array([0.1, 1.0]))
    >>> np.round(r["alpha"][0], 4).tolist()
    [[0.1, 0.1], [1.0, 1.0]]
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    weights = np.ascontiguousarray(np.atleast_2d(weights), dtype=np.float64)
    Cs = np.ascontiguousarray(Cs, dtype=np.float64)
    if np.any(np.diff(Cs) < 0):
        raise ValueError("Cs must be increasing: each solution starts the next.")
    if Cs.size and not (np.all(np.isfinite(Cs)) and Cs[0] > 0):
        raise ValueError(f"Cs must be finite and > 0; got {Cs.tolist()[:5]}.")
    n = y.size
    rows = (np.arange(n) if rows is None
            else np.ascontiguousarray(rows, dtype=np.intp))
    if rows.shape != (n,) or (n and not 0 <= rows.min() <= rows.max() < K.shape[0]):
        raise ValueError(f"rows must be {n} row indices of K (shape {K.shape}); got "
                         f"shape {rows.shape}.")
    if max_iter is None or max_iter < 0:
        max_iter = max(10_000_000, 100 * n)
    shape = (weights.shape[0], Cs.size)
    alpha = np.zeros(shape + (n,))
    intercept, objective, gap = np.empty(shape), np.empty(shape), np.empty(shape)
    n_iter = np.empty(shape, dtype=np.int64)
    K = np.ascontiguousarray(K)
    largest = int((weights > 0).sum(axis=1).max(initial=0))
    workspace = DenseWorkspace() if workspace is None else workspace
    fold_work, work = workspace.buffers(largest, K.dtype)
    if current_stop() is None:
        solve_path(K, rows, y, weights, Cs, float(tol), int(max_iter), alpha, intercept,
                   objective, gap, n_iter, fold_work, work)
    else:  # fold by fold, so that a time budget's stop is checked between them
        for f in range(weights.shape[0]):
            checkpoint()
            part = slice(f, f + 1)
            solve_path(K, rows, y, weights[part], Cs, float(tol), int(max_iter), alpha[part],
                       intercept[part], objective[part], gap[part], n_iter[part], fold_work,
                       work)
    converged = (gap < tol) | (n_iter < max_iter)
    if warn and not converged.all():
        warnings.warn(f"SMO stopped after {max_iter} pair updates with violation "
                      f"{gap[~converged].max():.3g} > tol={tol} ({(~converged).sum()} of "
                      f"{converged.size} solves); raise max_iter (or tol).",
                      ConvergenceWarning, stacklevel=2)
    return {"alpha": alpha, "intercept": intercept, "objective": objective, "gap": gap,
            "n_iter": n_iter, "converged": converged}
