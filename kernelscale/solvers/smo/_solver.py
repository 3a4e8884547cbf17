"""The exact SVM dual by SMO: the decomposition, its working sets, shrinking and row cache.

The binary dual (LIBSVM's form, ``Q_ij = y_i y_j k(x_i, x_j)``)

    min_a  1/2 a^T Q a - e^T a    s.t.  0 <= a_i <= C_i,  y^T a = 0

is solved by decomposition. When the row store holds the problem's kernel
matrix (``RowStore.whole``), the working set is the whole problem and the pair
solver runs on the matrix (``_dense``). Otherwise each *outer* iteration picks a
working set B of ``q`` variables: half of it the most violating ones (largest ``-y_t G_t`` among
the variables that may go up, smallest among those that may go down; the
maximal violating pair is always in), half kept from the previous set, as in
ThunderSVM. The ``q`` kernel rows of B are fetched from an LRU cache, the
missing ones computed together by one GEMM, and the sub-problem on B is solved
by the same pair solver (second-order pair selection, Fan, Chen & Lin 2005) on
the small ``q x q`` block. One pass over the cached rows then brings the
gradient of all active variables up to date. Compared with LIBSVM's one pair per kernel-row
fetch, this turns the kernel work into matrix products and most pair updates
into operations on a block that lives in the CPU cache.

Shrinking (Joachims; LIBSVM's rule, ``shrink_marks``) drops variables that sit at a bound and
whose gradient says they will stay there; when the rows are not shared across
problems their cached columns are compacted, so that new rows are computed for
the active columns only. Before declaring optimality, and once when the
violation first falls below ``10 tol``, the gradient of every shrunk variable is
rebuilt from the support vectors and they are re-activated (LIBSVM does the same).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..._clock import checkpoint
from ...kernels import blas_on_numba_threads
from ._compiled import gather_block, update_gradient
from ._dense import solve_whole
from ._dense_compiled import (
    set_flags,
    shrink_marks,
    solution_summary,
    solve_pairs,
    violation_bounds,
)
from ._protocol import ComputingRowStore
from ._settings import SMO_SETTINGS

__all__ = ["smo", "dual_objective", "intercept_from_gradient"]

_SHRINK_FRACTION = SMO_SETTINGS.shrink_fraction
_NO_WORK = np.empty(0)  # a block is solved without compaction: no buffer to give


def dual_objective(alpha, G, linear_term=None):
    """``1/2 a^T Q a + p^T a`` from the dual variables and the gradient ``Q a + p``.

    ``p`` is ``linear_term`` (``-e``, the classifier's, when None).
    """
    p = -1.0 if linear_term is None else linear_term
    return 0.5 * float(alpha @ (G + p))


def _violation(y, G, alpha, C, n):
    """``(m, M, score, up, low)``: the largest ``-y G`` that may go up, the smallest that
    may go down (the compiled rules of the pair solver, on the first ``n`` variables)."""
    score = -y[:n] * G[:n]
    up = np.empty(n, dtype=np.bool_)
    low = np.empty(n, dtype=np.bool_)
    set_flags(y, alpha, C, up, low, n)
    g_up, g_low = violation_bounds(score, up, low, n)
    return g_up, -g_low, score, up, low


def _select(score, up, low, keep, q_new):
    """Positions of the ``q_new`` most violating variables not in ``keep``."""
    up_score = np.where(up, score, -np.inf)
    low_score = np.where(low, -score, -np.inf)
    if keep.size:
        up_score[keep] = -np.inf
        low_score[keep] = -np.inf
    half = q_new // 2
    chosen = []
    for s, k in ((up_score, q_new - half), (low_score, half)):
        k = min(k, s.size)
        if k <= 0:
            continue
        top = np.argpartition(-s, k - 1)[:k]
        top = top[np.isfinite(s[top])]
        chosen.append(top)
        # the two halves must not pick the same variable twice
        up_score[top] = -np.inf
        low_score[top] = -np.inf
    return np.unique(np.concatenate(chosen)) if chosen else np.empty(0, np.intp)


def _shrinkable(y, G, alpha, C, n, m, M):
    """The first ``n`` variables SMO's one shrinking rule sets aside (``shrink_marks``),
    by the current gradient and the violation bounds ``m``, ``M`` of the last selection."""
    _, _, score, up, low = _violation(y, G, alpha, C, n)
    keep = np.empty(n, dtype=np.bool_)
    shrink_marks(score, up, low, C, n, m, -M, keep)
    return ~keep


class _State:
    """The dual variables in *position* order: positions ``< n_active`` are active."""

    def __init__(self, y, C, alpha, G, p):
        n = y.size
        self.order = np.arange(n)
        self.y, self.C, self.alpha, self.G = y.copy(), C.copy(), alpha.copy(), G.copy()
        self.p = p.copy()
        self.n_active = n
        # the original indices each shrink dropped, for _unshrink; the alphas of the last
        # shrink (original order) and, per shrink, its change since the one before, as
        # (indices, values): one dense copy, not one per shrink (hundreds of shrinks of a
        # 2 n-variable SVR held 29 MB at n = 20,000)
        self.shrunk = []
        self.last = None
        self.changes = []

    def remember_shrink(self, dropped):
        """Record a shrink: the variables it drops and the alphas it saw."""
        now = self.original(self.alpha)
        if self.last is None:
            change = (np.empty(0, dtype=np.intp), np.empty(0))
        else:  # where the alphas moved since the last shrink, and what they were then
            moved = np.flatnonzero(now != self.last)
            change = (moved, self.last[moved])
        self.shrunk.append(dropped)
        self.changes.append(change)
        self.last = now

    def forget_shrinks(self):
        self.shrunk, self.changes, self.last = [], [], None

    def permute(self, perm):
        self.order = self.order[perm]
        self.y, self.C = self.y[perm], self.C[perm]
        self.alpha, self.G, self.p = self.alpha[perm], self.G[perm], self.p[perm]

    def original(self, values):
        out = np.empty_like(values)
        out[self.order] = values
        return out


def smo(rows, cache, y, C, *, tol=1e-3, max_iter=-1, working_set_size=256, shrinking=True,
        verbose=0, alpha0=None, monitor=None, linear_term=None, share_cache=False):
    """Solve the binary SVM dual; see the module docstring.

    Kernel rows are computed on numba's threads with BLAS held at one thread
    (:func:`kernelscale.kernels.blas_on_numba_threads`): BLAS's idle threads
    would otherwise spin on the cores the numba-parallel passes between
    products need.

    Parameters
    ----------
    rows : KernelRows
    cache : RowCache or MatrixCache
        Shared by the binary problems of a multiclass fit when it holds every row;
        a :class:`MatrixCache` reads a kernel matrix held whole. When that matrix is
        the problem's (one row per variable), the whole problem is the one working
        set: the pair solver runs on it with LIBSVM's shrinking, and
        ``working_set_size`` and ``share_cache`` play no part.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1} (float64).
    C : ndarray of shape (n_samples,)
        Upper bound of each dual variable (``C`` times class and sample weights).
    tol : float
        Stop when ``max_up(-y G) - min_low(-y G) < tol`` (LIBSVM's ``eps``).
    max_iter : int
        Cap on the number of pair updates, -1 for LIBSVM's ``max(10^7, 100 n)``.
    working_set_size : int
        Variables per working set (at most what the cache holds).
    shrinking : bool
    verbose : int
        Print progress every ``verbose`` outer iterations (0: silent).
    alpha0 : ndarray, default=None
        Feasible starting point (zeros by default).
    monitor : callable, default=None
        ``monitor(n_outer, gap, n_active)`` after every outer iteration (for progress).
    linear_term : ndarray of shape (n_samples,), default=None
        ``p`` of the dual ``1/2 a^T Q a + p^T a`` (LIBSVM's general form, used
        by SVR and the one-class SVM); None for the classifier's ``-e``.
    share_cache : bool, default=False
        Keep the cached rows whole and in place, for the next call on the same
        rows (a grid search's folds and values of ``C``): shrinking then never
        compacts them. Implied when the cache holds every row.

    Returns
    -------
    result : dict
        ``alpha`` (n_samples,), ``intercept`` (float; decision ``sum a_i y_i k(x_i, x) + b``),
        ``objective`` (dual objective), ``n_iter`` (pair updates), ``n_outer``,
        ``converged`` (bool), ``gap`` (final ``m - M``).
    """
    with blas_on_numba_threads():
        return _smo(rows, cache, y, C, tol=tol, max_iter=max_iter,
                    working_set_size=working_set_size, shrinking=shrinking, verbose=verbose,
                    alpha0=alpha0, monitor=monitor, linear_term=linear_term,
                    share_cache=share_cache)


def _smo(rows, cache, y, C, *, tol, max_iter, working_set_size, shrinking, verbose, alpha0,
         monitor, linear_term, share_cache):
    n = y.size
    if max_iter is None or max_iter < 0:
        max_iter = max(10_000_000, 100 * n)
    alpha = np.zeros(n) if alpha0 is None else np.asarray(alpha0, dtype=np.float64).copy()
    p = -np.ones(n) if linear_term is None else np.asarray(linear_term, dtype=np.float64)
    G = p.copy()
    if alpha0 is not None and np.any(alpha > 0):
        sv = np.flatnonzero(alpha > 0)
        G += y * rows.cross(np.arange(n), sv, y[sv] * alpha[sv])
    matrix = cache.whole()
    if matrix is not None and matrix.shape[0] == n:
        # the temporaries' budget of the gradient rebuilds, which this route does
        # not make, holds the compacted blocks of its shrinking
        return _whole(matrix, y, C, alpha, G, p, tol=tol, max_iter=max_iter,
                      shrinking=shrinking, verbose=verbose, monitor=monitor,
                      work_bytes=rows.memory_budget)
    st = _State(y, C, alpha, G, p)
    # rows are compacted to the active columns only when they are not shared
    # (a store that holds every row, the matrix among them, is never compacted)
    compact = shrinking and isinstance(cache, ComputingRowStore) and not (
        cache.holds_all or share_cache)
    if compact:
        cache.restart(n)
        rows.set_columns(np.arange(n))
    q = int(min(working_set_size, cache.n_slots, n))
    q = max(q, 2)
    K_buffer = np.empty(q * q)
    ws = np.empty(0, dtype=np.intp)  # positions of the current working set
    identity = np.arange(n)
    n_iter = n_outer = 0
    unshrunk_once = False
    stalled = 0
    start_time = time.perf_counter()
    converged = False
    while True:
        na = st.n_active
        m, M, score, up, low = _violation(st.y, st.G, st.alpha, st.C, na)
        gap = m - M
        if shrinking and not unshrunk_once and gap <= 10 * tol and na < n:
            unshrunk_once = True
            _unshrink(st, rows, cache, compact)
            ws = np.empty(0, dtype=np.intp)
            continue
        if gap < tol:
            if na < n:
                _unshrink(st, rows, cache, compact)
                unshrunk_once = True
                m, M, *_ = _violation(st.y, st.G, st.alpha, st.C, n)
                if m - M < tol:
                    gap = m - M
                    converged = True
                    break
                ws = np.empty(0, dtype=np.intp)
                continue
            converged = True
            break
        if n_iter >= max_iter:
            break
        checkpoint()
        n_outer += 1
        # keep the newest half of the previous working set, fill with new violators
        # (at least two fresh ones: the maximal violating pair must always be in)
        keep = ws[ws < na][: min(q // 2, q - 2)]
        fresh = _select(score, up, low, keep, q - keep.size)
        ws = np.concatenate([fresh, keep])
        slots = cache.fetch(st.order[ws])
        # cached rows are in original column order, or compacted to positions
        columns = identity if compact else cache.columns_of(st.order)
        # on few features the block is cheaper computed than gathered from the rows
        block = rows.block(st.order[ws])
        # one buffer for every working set's block (a fresh one per iteration kept the
        # last alive beside it: twice the q x q float64 at the peak)
        K = K_buffer[: ws.size * ws.size].reshape(ws.size, ws.size)
        if block is None:
            gather_block(cache.storage, slots, columns[ws], K)
        else:
            np.copyto(K, block)
        yb, ab, Gb, Cb = st.y[ws], st.alpha[ws].copy(), st.G[ws].copy(), st.C[ws]
        local_eps = max(tol, 0.1 * gap)
        # the pair solver, without its own shrinking (this decomposition shrinks)
        steps = solve_pairs(K, yb, ab, Gb, Cb, st.p[ws], local_eps,
                            min(10 * ws.size, max_iter - n_iter), _NO_WORK, False)
        n_iter += steps
        delta = ab - st.alpha[ws]
        moved = np.flatnonzero(delta != 0)
        st.alpha[ws] = ab
        if moved.size:
            # compacted rows are in position order: no column index to go through
            update_gradient(st.G, st.y, cache.storage, slots[moved], (yb * delta)[moved],
                            None if compact else columns, na)
        if moved.size == 0:
            # float32 rounding of the block can leave a pair the global test calls
            # violating; refresh the gradient from the support vectors once, and
            # give up (with a warning) if that does not unlock progress
            stalled += 1
            if stalled > 1:
                break
            _refresh(st, rows)
        else:
            stalled = 0
        if shrinking:
            mask = _shrinkable(st.y, st.G, st.alpha, st.C, st.n_active, m, M)
            if mask.sum() > max(_SHRINK_FRACTION * st.n_active, 32):
                ws = _shrink(st, mask, rows, cache, compact, ws)
        if monitor is not None:
            monitor(n_outer, gap, st.n_active)
        if verbose and n_outer % verbose == 0:
            print(f"[SMO] outer {n_outer:5d}  pairs {n_iter:8d}  gap {gap:.3e}  active "
                  f"{st.n_active:7d}  kernel rows {rows.evaluated:8d}  "
                  f"{time.perf_counter() - start_time:7.2f} s")
    if not converged:
        _warn_stopped(n_iter, gap, tol, frames=1)
    alpha = st.original(st.alpha)
    G = st.original(st.G)
    return {
        "alpha": alpha, "intercept": -intercept_from_gradient(y, G, alpha, C),
        "objective": dual_objective(alpha, G, linear_term),
        "n_iter": n_iter, "n_outer": n_outer, "converged": converged, "gap": float(gap),
    }


def _warn_stopped(n_iter, gap, tol, *, frames):
    # points at the estimator that called smo's caller: ``frames`` are the solver's own
    # frames between smo and here (_smo; _smo and _whole)
    warnings.warn(
        f"SMO stopped after {n_iter} pair updates with violation {gap:.3g} > tol={tol}; "
        "raise max_iter (or tol) for an optimal solution.",
        ConvergenceWarning, stacklevel=frames + 4,
    )


def _whole(K, y, C, alpha, G, p, *, tol, max_iter, shrinking, verbose, monitor, work_bytes):
    """The whole problem as the one working set: the pair solver on the matrix held whole."""
    y, C, p = (np.ascontiguousarray(v, dtype=np.float64) for v in (y, C, p))
    report = monitor
    if verbose:
        start_time = time.perf_counter()

        def report(calls, gap, n_active):
            if monitor is not None:
                monitor(calls, gap, n_active)
            print(f"[SMO] whole matrix, call {calls:4d}  gap {gap:.3e}  "
                  f"{time.perf_counter() - start_time:7.2f} s")

    n_iter = solve_whole(K, y, alpha, G, C, p, tol=tol, max_iter=max_iter, shrinking=shrinking,
                         monitor=report, work_bytes=work_bytes)
    gap, rho, _ = solution_summary(y, G, alpha, C)
    converged = bool(gap < tol) or n_iter < max_iter
    if not converged:
        _warn_stopped(n_iter, gap, tol, frames=2)
    return {"alpha": alpha, "intercept": -float(rho), "objective": dual_objective(alpha, G, p),
            "n_iter": n_iter, "n_outer": 1, "converged": converged, "gap": float(gap)}


def intercept_from_gradient(y, G, alpha, C):
    """LIBSVM's offset: the mean ``y G`` over free variables, else the middle of the bounds.

    Variables with ``C = 0`` (zero weight) are not part of the problem, as in LIBSVM.
    The one computation of rho, shared with the dense solvers (``solution_summary``).
    """
    y, G, alpha = (np.ascontiguousarray(v, dtype=np.float64) for v in (y, G, alpha))
    C = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape))
    return float(solution_summary(y, G, alpha, C)[1])


def _refresh(st, rows):
    """Recompute the active gradient exactly from the support vectors."""
    na = st.n_active
    sv = np.flatnonzero(st.alpha > 0)
    orig = st.order
    st.G[:na] = st.p[:na] + st.y[:na] * rows.cross(orig[:na], orig[sv], st.y[sv] * st.alpha[sv])


def _shrink(st, mask, rows, cache, compact, ws):
    na = st.n_active
    keep = np.flatnonzero(~mask)
    drop = np.flatnonzero(mask)
    perm = np.concatenate([keep, drop, np.arange(na, st.y.size)])
    st.remember_shrink(st.order[drop].copy())
    st.permute(perm)
    st.n_active = keep.size
    if compact:
        cache.compact(keep, forget=st.order[keep.size:na])
        rows.set_columns(st.order[: keep.size])
    # positions of the kept working set after the permutation
    new_pos = np.empty(na, dtype=np.intp)
    new_pos[keep] = np.arange(keep.size)
    ws = ws[~mask[ws]]
    return new_pos[ws]


def _unshrink(st, rows, cache, compact):
    """Bring the gradient of the shrunk variables up to date and make every variable active.

    A variable's gradient was exact when it was shrunk; since then only the
    alphas that moved can have changed it, so each group of shrunk variables is
    corrected by the kernel against those alphas alone (far fewer than all the
    support vectors once the active set is small).
    """
    n = st.y.size
    if st.n_active < n:
        y_orig = st.original(st.y)
        position = np.empty(n, dtype=np.intp)
        position[st.order] = np.arange(n)
        # newest shrink first: its alphas are the last ones kept; each older shrink's
        # are the next one's with the recorded values put back
        now, then = st.original(st.alpha), st.last.copy()
        for group, (changed, before) in zip(st.shrunk[::-1], st.changes[::-1]):
            delta = now - then
            moved = np.flatnonzero(delta)
            if moved.size:
                pos = position[group]
                st.G[pos] += st.y[pos] * rows.cross(group, moved, y_orig[moved] * delta[moved])
            then[changed] = before
    st.forget_shrinks()
    st.n_active = n
    if compact:
        # restore original column order so the rows can be full again
        perm = np.argsort(st.order, kind="stable")
        st.permute(perm)
        cache.restart(n)
        rows.set_columns(np.arange(n))
