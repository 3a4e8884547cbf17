"""The memory planner: what a fit will hold, in bytes, and the plan it chose, before the work.

Every budgeted path asks one function here for its plan. A plan lists what it
holds (kept matrices, caches, per-thread copies, the largest block's
temporaries, the O(n) vectors of a solver) and the choice it made (a matrix or
a row cache, kept or recomputed kernel blocks, how many threads); the path then
allocates what the plan says and nothing more. Where even the smallest plan
does not fit, :meth:`MemoryPlan.require` raises one :class:`MemoryBudgetError`
naming the budget that would do, before any work.

What the budget bounds (the README's rule): temporaries and kept matrices.
What it does not: the input data, the returned matrix or fitted model, and a
few small per-row vectors below :data:`SLACK_BYTES` (Python objects, index
arrays of a fold). ``benchmarks/bench_memory.py`` and ``tests/test_memory_plans.py``
measure every path's peak against its plan.

The formulas live here so that "does the ``n x n`` matrix fit" has one answer
everywhere (the family choice, ``KernelSVC``, the grid and the refit once disagreed).
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import scipy.sparse as sp

from ._config import bytes_up, format_bytes
from ._validation import MemoryBudgetError

__all__ = ["MemoryPlan", "SLACK_BYTES", "block_rows", "bytes_up", "smo_plan",
           "exact_grid_plan", "falkon_plan", "falkon_grid_plan", "features_plan",
           "widths_plan", "metric_plan", "SMO_TEMPORARY_SHARE", "ROW_CACHE_ADVICE",
           "GIVEN_MATRIX_ADVICE", "SMO_TEMPORARY_MAX", "SMO_BATCH_BYTES", "held_plan",
           "exact_svm_bytes", "exact_matrix_bytes", "dense_workspace_sizes",
           "svm_workspace_bytes", "threads_in_budget", "linear_solver_bytes",
           "nystrom_svm_bytes", "rff_svm_bytes", "falkon_grid_row_bytes",
           "smo_fit_plan", "sparse_row_bytes"]

#: Allocations a plan does not itemise (Python objects, small index arrays); the peak
#: tests allow this much beyond the plan on top of ``budget + returned``.
SLACK_BYTES = 2 * 2**20

#: The exact SVM's row route gives at most this share of the budget, and at most
#: :data:`SMO_TEMPORARY_MAX` bytes, to the temporaries of a batch of kernel rows (and of a
#: gradient rebuilt from rows); the rest is the cache. A 16 MB batch keeps the GEMM at full
#: speed (``SMOSettings.batch_bytes``).
SMO_TEMPORARY_SHARE = 0.25
SMO_TEMPORARY_MAX = 64 * 2**20
#: Rows computed at once into the cache are batched to this many bytes.
SMO_BATCH_BYTES = 2**24
#: what a row plan that does not fit must hold, and a given matrix's way out
ROW_CACHE_ADVICE = (" (the row cache must hold two kernel rows beside the working set and the "
                    "kernel's temporaries)")
GIVEN_MATRIX_ADVICE = " (the kernel matrix is given: a smaller one, or more budget)"


class MemoryPlan:
    """What a computation will hold (bytes per part), the choice made, and the budget.

    Parameters
    ----------
    what : str
        The computation, for messages ("KernelSVC fit on 3000 rows").
    budget : int
        The memory budget in bytes.
    parts : dict of str to int
        Bytes of each thing held at the peak, at once.
    choice : str, default=""
        The plan chosen, in words ("row cache of 640 rows").
    **settings
        Sizes the plan decided (``cache_bytes``, ``block_bytes``, ``threads``, ...),
        readable as attributes. A plan is not changed once built: a new choice is a new plan.

    Examples
    --------
    >>> from kernelscale._planner import MemoryPlan
    >>> plan = MemoryPlan("a fit", 2**20, {"matrix": 3 * 2**19}, choice="matrix")
    >>> plan.total, plan.fits
    (1572864, False)
    >>> try:
    ...     plan.require()
    ... except ValueError as exc:
    ...     print(exc)
    a fit needs 1.5M (matrix 1.5M) but memory_budget is 1M; give memory_budget >= 1.5M.
    """

    def __init__(self, what, budget, parts, choice="", **settings):
        parts = MappingProxyType({k: int(max(0, v)) for k, v in parts.items()})
        self.__dict__.update(settings, what=what, budget=int(budget), parts=parts, choice=choice,
                             settings=MappingProxyType(dict(settings)))

    def __setattr__(self, name, value):
        raise AttributeError(f"a MemoryPlan is not changed once built (setting {name!r})")

    def __reduce__(self):  # fitted models keep their plan (memory_plan_)
        return _rebuilt_plan, (self.what, self.budget, dict(self.parts), self.choice,
                               dict(self.settings))

    @property
    def total(self):
        """Bytes held at the peak."""
        return sum(self.parts.values())

    @property
    def fits(self):
        return self.total <= self.budget

    def breakdown(self):
        return ", ".join(f"{k} {format_bytes(v)}" for k, v in self.parts.items() if v)

    def require(self, advice=""):
        """Raise :class:`MemoryBudgetError` (the budget that would do) unless the plan fits."""
        if not self.fits:
            raise MemoryBudgetError(
                f"{self.what} needs {bytes_up(self.total)} ({self.breakdown()}) but "
                f"memory_budget is {format_bytes(self.budget)}; give memory_budget >= "
                f"{bytes_up(self.total)}{advice}.")
        return self

    def __repr__(self):
        choice = f": {self.choice}" if self.choice else ""
        return (f"MemoryPlan({self.what}{choice}; holds {format_bytes(self.total)} of "
                f"{format_bytes(self.budget)}: {self.breakdown()})")


def _rebuilt_plan(what, budget, parts, choice, settings):
    return MemoryPlan(what, budget, parts, choice, **settings)


def sparse_row_bytes(X):
    """Bytes per row of a row slice of sparse ``X`` (0 for dense input)."""
    if not sp.issparse(X) or X.shape[0] == 0:
        return 0
    per_entry = 2 * X.data.dtype.itemsize + X.indices.dtype.itemsize  # slice + its cast
    return int(np.ceil(X.nnz / X.shape[0])) * per_entry + X.indptr.dtype.itemsize


def held_plan(what, budget, parts, advice=""):
    """The plan of ``parts`` (name: bytes) a step holds, required to fit (``advice``: the
    error's end)."""
    return MemoryPlan(what, budget, parts, choice="held").require(advice)


def block_rows(n_rows, bytes_per_row, budget, what):
    """Rows per block so that one block's temporaries fit ``budget`` (at least one).

    Raises
    ------
    MemoryBudgetError
        When one row does not fit, with the bytes it needs.
    """
    bytes_per_row = max(int(bytes_per_row), 1)
    rows = int(budget) // bytes_per_row
    if rows < 1:
        raise MemoryBudgetError(
            f"memory_budget={int(budget)} bytes cannot hold one row of {what}, which needs "
            f"{bytes_per_row} bytes; raise memory_budget to at least {bytes_per_row} "
            "(ideally a few hundred times more for speed).")
    return min(rows, max(int(n_rows), 1))


# ------------------------------------------------------------------ exact SVM

def exact_svm_bytes(n_rows):
    """The exact grid's shared distances and one gamma's kernel (float32)."""
    return 8 * n_rows * n_rows


def exact_matrix_bytes(n_rows):
    """One gamma's kernel matrix (float32): the least the matrix grid needs."""
    return 4 * n_rows * n_rows


def dense_workspace_sizes(n, compact_keep):
    """Entries of a solving thread's two buffers for folds of ``n`` rows: the fold's block and
    its largest compaction (SMO compacts a block shrunk to ``compact_keep`` of its rows)."""
    return n * n, int(compact_keep * n) ** 2


def svm_workspace_bytes(fold_sizes, n, compact_keep):
    """One solving thread's scratch (float32): its largest fold block and compaction buffer.

    ``fold_sizes``: per fold, ``(whole, rows)`` of each binary problem (``whole``: the
    problem covers every row of the ``n``-row matrix, so a fold that keeps them all is
    solved on the matrix itself and only its compactions need room).
    """
    most = 0
    for per_fold in fold_sizes:
        for whole, m in per_fold:
            block, compact = dense_workspace_sizes(m, compact_keep)
            most = max(most, 4 * (compact if whole and m == n else block + compact))
    return most


def threads_in_budget(n_jobs, held, each, memory_budget, what):
    """The solving threads the budget holds beside ``held`` bytes, ``each`` per thread.

    At least one runs; where fewer than ``n_jobs`` fit, a warning names the
    budget that would run them all (``what``: the matrix, for the message).
    """
    import warnings

    threads = int(max(1, min(n_jobs, (memory_budget - held) // max(each, 1))))
    if threads < n_jobs:
        warnings.warn(
            f"memory_budget ({format_bytes(memory_budget)}) holds {what} "
            f"({format_bytes(held)}) and the block copies of {threads} solving thread(s) "
            f"({format_bytes(each)} each): the solver runs {threads} thread(s), not "
            f"n_jobs={n_jobs}; memory_budget >= {format_bytes(held + n_jobs * each)} would run "
            "them all.", UserWarning, stacklevel=4)
    return threads



def smo_plan(what, *, n_points, n_variables, n_features, budget, cache_bytes,
             working_set_size, matrix=False, matrix_threads=1, workspace=0,
             fill_row_bytes=0, prepared_bytes=None, held_matrix=None, densify=True):
    """The exact SVM's fit: the kernel matrix held whole, or a row cache beside temporaries.

    Parameters
    ----------
    n_points : int
        Training rows (the kernel is ``n_points x n_points``).
    n_variables : int
        Dual variables per problem (``2 n`` for the SVR): the width of a cached row.
    n_features : int
    budget : int
    cache_bytes : int
        The user's ``cache_size`` in bytes: the most the row cache may take.
    working_set_size : int
        The user's: the most variables a working set may have.
    matrix : bool
        Plan the matrix route (kernel held whole) instead of the row cache.
    matrix_threads, workspace : int
        Threads solving on the matrix and each one's block copy (bytes).
    fill_row_bytes : int
        Temporaries per row while the matrix is filled (the kernel's).
    prepared_bytes : int, default=None
        The rows' float32 working copy (row route); None: ``4 n_points n_features``.
    held_matrix : int, default=None
        The matrix route's kernel matrix when it is given (a precomputed kernel: only
        a float32 copy of it is held); None: ``4 n_points^2``.
    densify : bool, default=True
        Whether the row route works on a dense copy of the rows (``densify``).

    Returns
    -------
    plan : MemoryPlan
        ``choice`` "matrix" or "rows". Both: ``working_set_size``. The matrix:
        ``threads``, ``fill_bytes`` (the fill's blocks). Rows: ``cache_bytes``,
        ``temporary_bytes`` (a batch of kernel rows, a gradient rebuilt from
        rows) and ``batch_bytes``.
    """
    vectors = 8 * 12 * n_variables  # alpha, G, y, C, flags, permutations, the summary
    q = int(max(2, min(working_set_size, n_variables)))
    if matrix:
        fill = max(fill_row_bytes, 1) * min(n_points, 64)
        matrix_bytes = 4 * n_points * n_points if held_matrix is None else held_matrix
        parts = {"kernel matrix": matrix_bytes,
                 "thread copies": matrix_threads * workspace, "solver vectors": vectors,
                 "working-set blocks": 8 * q * q, "matrix fill": fill}
        total = sum(max(0, int(v)) for v in parts.values())
        return MemoryPlan(what, budget, parts, choice="matrix", threads=matrix_threads,
                          working_set_size=q, densify=densify,
                          fill_bytes=max(fill, budget - total + fill))
    prepared = 4 * n_points * n_features if prepared_bytes is None else prepared_bytes
    row = 4 * n_variables
    least_temporary = 8 * 4 * (n_points + 2 * n_features)  # eight kernel rows at a time
    free = budget - prepared - vectors
    temporary = int(min(SMO_TEMPORARY_MAX, max(SMO_TEMPORARY_SHARE * free, least_temporary)))
    rest = free - temporary - 2 * min(SMO_BATCH_BYTES, max(temporary // 4, 4 * n_variables))

    def blocks(size):  # the working set's float64 block, its float32 copy, its gathers
        return 12 * size * size

    # the working set must be held in the cache: shrink it to what fits beside its blocks
    while q > 2 and blocks(q) + q * row > rest:
        q = max(2, q // 2)
    # at least two rows where the budget is short (then the plan does not fit, and
    # require() names the budget); a user's cache_size below two rows is RowCache's error
    cache = int(min(cache_bytes, max(2 * row, rest - blocks(q))))
    q = int(max(2, min(q, cache // row)))
    # the cache keeps its batch buffer between fetches; a doubled problem's rows pass one more
    batch = int(min(SMO_BATCH_BYTES, max(temporary // 4, 4 * n_variables)))
    parts = {"prepared rows": prepared, "solver vectors": vectors,
             "working-set blocks": blocks(q), "row cache": cache, "row batches": 2 * batch,
             "kernel temporaries": temporary}
    return MemoryPlan(what, budget, parts, choice=f"row cache of {cache // row} rows",
                      cache_bytes=cache, temporary_bytes=temporary, batch_bytes=batch,
                      working_set_size=q, densify=densify)


def smo_fit_plan(what, *, n, n_variables, n_features, budget, cache_bytes, working_set_size,
                 matrix, threads=1, workspace=0, fill_row_bytes=0, precomputed=False,
                 sparse=False, float32_input=False):
    """An exact model's fit (:func:`smo_plan`) from what its input is.

    A precomputed kernel is the input itself: only a float32 copy of another one is
    held, and there are no rows to prepare. A sparse input is densified (a float32
    working copy, ``4 n d``) where that copy takes at most a quarter of the budget;
    beyond, its rows stay sparse.
    """
    if precomputed:
        prepared, fill = 0, 0
        held = 0 if float32_input else 4 * n * n
    else:
        prepared = 4 * n * n_features if (not sparse or 4 * n * n_features <= budget // 4) \
            else 0
        fill, held = fill_row_bytes, None
    return smo_plan(what, n_points=n, n_variables=n_variables, n_features=n_features,
                    budget=budget, cache_bytes=cache_bytes, working_set_size=working_set_size,
                    matrix=matrix, matrix_threads=threads, workspace=workspace,
                    fill_row_bytes=fill, prepared_bytes=prepared,
                    held_matrix=held if matrix else None,
                    densify=bool(prepared) or not sparse)


def exact_grid_plan(n, workspace, n_jobs, budget):
    """The exact SVM's grid: which kernels it keeps, and how many threads solve.

    Parameters
    ----------
    n : int
        Rows (the kernel of every gamma is ``n x n`` float32).
    workspace : int
        One solving thread's copy of its fold blocks (bytes).
    n_jobs : int
        Threads asked for.
    budget : int

    Returns
    -------
    plan : MemoryPlan
        ``choice``: "distances" (the squared distances kept, each gamma one exp
        of them), "kernel" (each gamma's kernel its own GEMM) or "rows" (below
        one kernel and one thread's copy: a row cache per gamma); ``threads``,
        ``slots`` (kernels held at once), and the budgets of the first two,
        ``least`` (one kernel, one thread) and ``shared`` (the distances too).
    """
    one = 4 * n * n
    least, shared = one + workspace, 2 * one + workspace
    common = {"least": least, "shared": shared, "workspace": workspace, "kernel_bytes": one}
    if 2 * one + n_jobs * workspace <= budget:
        slots = max(1, min(n_jobs, (budget - one - n_jobs * workspace) // one))
        return MemoryPlan("the exact SVM's grid", budget,
                          {"distances": one, "kernels": slots * one,
                           "thread copies": n_jobs * workspace},
                          choice="distances", threads=n_jobs, slots=int(slots), **common)
    if least <= budget:
        threads = int(max(1, min(n_jobs, (budget - one) // max(workspace, 1))))
        return MemoryPlan("the exact SVM's grid", budget,
                          {"kernel": one, "thread copies": threads * workspace},
                          choice="kernel", threads=threads, slots=1, **common)
    return MemoryPlan("the exact SVM's grid", budget, {"kernel": one, "thread copies": workspace},
                      choice="rows", threads=1, slots=0, **common)


# -------------------------------------------------------------------- FALKON


def falkon_plan(what, *, n, m, n_targets, itemsize, budget, block_row_bytes):
    """FALKON's fit: ``K(X, C)`` kept or recomputed in blocks, beside the m x m factors.

    Parameters
    ----------
    n, m, n_targets : int
    itemsize : int
        Bytes of the kernel dtype.
    budget : int
    block_row_bytes : int
        Temporary bytes per row of a kernel block (the prepared kernel's, plus
        the block itself).

    Returns
    -------
    plan : MemoryPlan
        ``choice`` "kept" or "recomputed"; ``block_bytes`` for the blocks.
    """
    factors = itemsize * m * m + 8 * 2 * m  # one m x m buffer, two diagonals
    vectors = 8 * 8 * m * n_targets + 8 * n * n_targets  # CG's vectors, the targets
    fixed = {"preconditioner": factors, "CG vectors": vectors}
    kept = itemsize * n * m
    # the kept matrix is filled block by block, whose temporaries sit beside it
    fill = min(n, 64) * block_row_bytes
    plan = MemoryPlan(what, budget, {**fixed, "K(X, C)": kept, "kernel block": fill},
                      choice="kept", block_bytes=max(fill, budget - sum(fixed.values()) - kept))
    if plan.fits:
        return plan
    free = budget - sum(fixed.values())
    # the least a recomputing fit needs: the factors and one row of a kernel block
    least = MemoryPlan(what, budget, {**fixed, "kernel block": block_row_bytes},
                       choice="recomputed")
    return MemoryPlan(what, budget, {**fixed, "kernel block": max(free, block_row_bytes)},
                      choice="recomputed", block_bytes=max(free, block_row_bytes),
                      kept_bytes=kept + sum(fixed.values()) + fill, least_plan=least)


def falkon_grid_plan(*, n, m, n_folds, n_targets, n_alphas, budget, block_row_bytes,
                     distances_itemsize=8):
    """The FALKON family's grid: statistics per fold, distances kept or recomputed.

    Holds per gamma the ``m x m`` statistics of every fold and of the centres
    (float64), the whitening and per-fold eigenvectors, and the coefficient paths;
    the row blocks of the kernel against the centres are what is left. The
    squared distances to the centres (``n x m``) are kept when they fit beside
    all that (each gamma is then one exp), else recomputed per block.
    """
    t = n_targets
    # every fold's and the total's m x m sums, the centres' kernel, its whitening, and a
    # fold's system being solved (its matrix, eigenvectors and their product)
    stats = 8 * (n_folds + 7) * m * m + 8 * (n_folds + 1) * m * t
    paths = 8 * n_alphas * m * t * (n_folds + 1)
    # the search's fold indices (n per fold) and weights (n per fold), targets, scores
    fixed = {"fold statistics": stats, "coefficient paths": paths,
             "targets and weights": 8 * n * (t + 2 * n_folds + 4)}
    distances = distances_itemsize * n * m
    rest = budget - sum(fixed.values())
    keep = distances + 64 * block_row_bytes <= rest
    parts = dict(fixed)
    if keep:
        parts["distances"] = distances
        rest -= distances
    block = max(block_row_bytes, rest)
    parts["kernel blocks"] = block
    least_plan = MemoryPlan("the FALKON family's grid", budget,
                            {**parts, "kernel blocks": 64 * block_row_bytes})
    return MemoryPlan("the FALKON family's grid", budget, parts,
                      choice="distances kept" if keep else "distances recomputed",
                      keep_distances=keep, block_bytes=block,
                      least=sum(fixed.values()) + 64 * block_row_bytes, least_plan=least_plan)


def falkon_grid_row_bytes(prepared_row, m, d, n_targets, n_alphas):
    """A FALKON grid block's row: its distances, kernel, weighted copy, gathered rows."""
    return prepared_row + 3 * 8 * m + 8 * d + 8 * n_targets * n_alphas


# ------------------------------------------------------------- feature maps

def linear_solver_bytes(n_rows, n_features):
    """A linear SVM solver beside its features: per-row vectors, Newton's Hessian, factor."""
    return 64 * n_rows + 16 * (n_features + 1) ** 2


def nystrom_svm_bytes(n_rows, n_components):
    """The Nystrom SVM grid: distances (float64), features and a fold's copy (float32), the
    landmarks' m x m matrices, a block of kernel rows, the solver."""
    return (16 * n_rows * n_components + 8 * 6 * n_components ** 2
            + 2 * 8 * 256 * n_components + linear_solver_bytes(n_rows, n_components))


def rff_svm_bytes(n_rows, n_components):
    """The RFF SVM grid: projections, features and a fold's copy (float32), the solver."""
    return 12 * n_rows * n_components + linear_solver_bytes(n_rows, n_components)


def features_plan(what, *, n, n_components, itemsize, budget, extra=0, per_row_temporary=0):
    """A model on features kept whole (``n x D``): they and the solver's ``extra``."""
    parts = {"features": itemsize * n * n_components, "solver": int(extra)}
    free = budget - sum(parts.values())
    parts["map temporaries"] = max(per_row_temporary, min(free, max(per_row_temporary, 0)))
    return MemoryPlan(what, budget, parts, choice="features kept",
                      block_bytes=max(per_row_temporary, free))


def widths_plan(*, n, m, d, n_targets, budget):
    """:class:`kernelscale.model_selection.KernelWidths`: the rows its subsample may have.

    One hold-out loss and gradient hold, per subsample row, its float64 copies
    (``3 d``: the rows, their split, a scaled block), its kernel row against the
    centres and the gradient's elementwise product (``2 m``) and the targets'
    residuals (``2 t``); beside them the ``m x m`` systems (``K_mm``, ``A``, its
    factor, the centres' gradient product). Measured with tracemalloc on 1,000 -
    4,000 rows, 10 - 40 features, 100 - 400 centres: 1.6 m + 2.7 d per row and
    3.6 m^2, float64.

    Returns a plan whose ``rows`` are the most subsample rows within the budget (at most
    ``n``); its parts are those of ``n`` rows, so ``fits`` says whether all fit.
    """
    per_row = 8 * (2 * m + 3 * d + 2 * n_targets)
    systems = 8 * 4 * m * m
    rows = int(max(0, budget - systems) // per_row)
    return MemoryPlan(f"KernelWidths on {n} rows and {m} centres", budget,
                      {"kernel rows": per_row * n, "m x m systems": systems},
                      choice="rows", rows=min(n, rows), per_row=per_row, systems=systems)


def metric_plan(*, n, m, budget):
    """``KernelMetric``'s subsample rows (at least 20), as :func:`widths_plan`: kernel rows
    and gradients against the centres (``4 x 8 m`` a row), ``K_mm``'s factors (``48 m^2``)."""
    per_row, systems = 32 * m, 48 * m * m
    rows = min(n, int(max(20, (budget - systems) // per_row)))
    return MemoryPlan(f"KernelMetric on {n} rows and {m} centres", budget, {"kernel rows":
                      per_row * n, "m x m systems": systems}, choice="rows", rows=rows)


def nbytes(*arrays):
    """Bytes of the given arrays (None counts 0)."""
    return int(sum(np.asarray(a).nbytes for a in arrays if a is not None))
