"""SMO's one pair solver, compiled, and the rules every decomposition shares.

``solve_pairs`` solves every working set :func:`smo` picks: the ``q x q`` block of
a batch, or the whole problem's matrix, where it also shrinks by compaction.
``set_flags``, ``violation_bounds`` and ``shrink_marks`` are the rules the
working-set decomposition applies between its batches; ``solution_summary``
gives rho, ``scaled_is_better`` the warm start along C.

On the whole problem the state is kept in a permuted order whose first ``m`` positions are the
working set, and the working set's kernel block ``Kw`` is a contiguous copy, so
that every scan of an update (the two selections, the gradient update) is a
straight, branch-light pass over contiguous memory. Variables that shrinking
sets aside stay in the scans until a fifth of the working set can go, and the
copy is expected to pay for itself (below); then the block is compacted (a copy
of at most 0.8 of the previous one) into a buffer the caller may reuse. The
score ``F = -y G`` is tracked instead of the gradient ``G``: its update needs
no ``y``.
"""

from __future__ import annotations

import numba
import numpy as np

from ..._parallel import parallel_guard
from ._compiled import TAU, pair_step
from ._settings import SMO_SETTINGS

__all__ = ["COMPACT_KEEP", "solve_pairs", "take_block", "take_serial", "solution_summary",
           "outside_box", "set_flags", "violation_bounds", "shrink_marks"]

# numba freezes module constants at compile time (SMOSettings says why each value)
COMPACT_KEEP = SMO_SETTINGS.compact_keep
_COPY_COST = SMO_SETTINGS.copy_cost


@numba.njit(cache=True, nogil=True)
def _flags(y, alpha, C, up, low, t):  # pragma: no cover - compiled
    # I_up: alpha can move so that y alpha grows; I_low: so that it shrinks
    up[t] = alpha[t] < C[t] if y[t] > 0 else alpha[t] > 0.0
    low[t] = alpha[t] > 0.0 if y[t] > 0 else alpha[t] < C[t]


@numba.njit(cache=True, nogil=True)
def take_serial(K, rows, columns, out):  # pragma: no cover - compiled
    """``out <- K[rows][:, columns]`` on one thread (small blocks; inside other compiled code)."""
    q = columns.size
    for a in range(rows.size):
        src = K[rows[a]]
        dst = out[a]
        for b in range(q):
            dst[b] = src[columns[b]]


@parallel_guard
@numba.njit(parallel=True, cache=True, nogil=True)
def take_block(K, rows, columns, out):  # pragma: no cover - compiled
    """``out <- K[rows][:, columns]``, rows in parallel."""
    q = columns.size
    for a in numba.prange(rows.size):
        src = K[rows[a]]
        dst = out[a]
        for b in range(q):
            dst[b] = src[columns[b]]


@numba.njit(cache=True, nogil=True)
def _reorder(order, perm, y, alpha, C, F, diag, up, low):  # pragma: no cover - compiled
    perm[:] = perm[order]
    y[:] = y[order]
    alpha[:] = alpha[order]
    C[:] = C[order]
    F[:] = F[order]
    diag[:] = diag[order]
    up[:] = up[order]
    low[:] = low[order]


@numba.njit(cache=True, nogil=True)
def _reconstruct(K, perm, y, alpha, C, F, p, m):  # pragma: no cover - compiled
    """The exact scores of the positions ``m..n`` (outside the working set).

    ``p`` is the linear term in the original order. Variables with ``C = 0`` are
    not part of the problem (rows left out of a cross-validation fold): their
    scores are not computed.
    """
    n = y.size
    rebuild = np.empty(n - m, dtype=np.intp)
    k = 0
    for a in range(m, n):
        if C[a] > 0.0:
            F[a] = -y[a] * p[perm[a]]
            rebuild[k] = a
            k += 1
    rebuild = rebuild[:k]
    columns = perm[rebuild]
    for b in range(n):
        if alpha[b] > 0.0:
            coef = alpha[b] * y[b]
            row = K[perm[b]]
            for r in range(k):
                F[rebuild[r]] -= coef * row[columns[r]]


@numba.njit(cache=True, nogil=True)
def set_flags(y, alpha, C, up, low, m):  # pragma: no cover - compiled
    """``up`` / ``low`` (LIBSVM's ``I_up`` / ``I_low``) of the first ``m`` variables."""
    for t in range(m):
        _flags(y, alpha, C, up, low, t)


@numba.njit(cache=True, nogil=True)
def violation_bounds(F, up, low, m):  # pragma: no cover - compiled
    """``(g_up, g_low)``: the largest score ``F = -y G`` that may go up, the largest
    ``-F`` that may go down, over the first ``m`` variables; their sum is the
    maximal violation, SMO's one stopping test (LIBSVM's ``eps``)."""
    g_up = -np.inf
    g_low = -np.inf
    for t in range(m):
        if up[t] and F[t] > g_up:
            g_up = F[t]
        if low[t] and -F[t] > g_low:
            g_low = -F[t]
    return g_up, g_low


@numba.njit(cache=True, nogil=True)
def shrink_marks(F, up, low, C, m, g_up, g_low, keep):  # pragma: no cover - compiled
    """SMO's one shrinking rule (LIBSVM's ``be_shrunk``); returns how many are kept.

    ``keep[t]`` is False for a variable at a bound on the side no violating pair
    moves: one that may only go up whose score is below every down-mover's
    (``-F > g_low``), one that may only go down whose score is above every
    up-mover's (``F > g_up``), and one outside the problem (``C = 0``, a row left
    out of a fold). The whole-matrix solver compacts its block to the kept
    variables, the working-set solver its cached rows.
    """
    n_keep = 0
    for t in range(m):
        out = C[t] <= 0.0
        if out:
            pass
        elif not up[t]:
            out = F[t] > g_up
        elif not low[t]:
            out = -F[t] > g_low
        keep[t] = not out
        n_keep += not out
    return n_keep


@numba.njit(cache=True, nogil=True)
def solve_pairs(K, y0, alpha0, G0, C0, p, eps, max_iter, work, shrink):  # pragma: no cover
    """SMO's pair solver (second-order pair selection) on the matrix ``K``.

    Every problem SMO solves ends here: the whole problem when its matrix is held
    (the matrix route, the search's paths, a one-class SVM on a matrix), or the
    ``q x q`` block of one working set of :func:`smo`. ``alpha0`` and ``G0`` (the
    gradient ``Q alpha + p`` at ``alpha0``) are updated in place; variables with
    ``C0 = 0`` stay at 0 and their gradient is not kept up to date. ``p`` is the
    linear term (``-1`` for the classifier). With ``shrink``, LIBSVM's shrinking,
    by compaction into ``work`` (1-D, ``K``'s dtype), the caller's memory: a block
    that does not fit it is not compacted (``floor(0.8 n)^2`` entries always fit;
    reused, the buffer spares each call the page faults of a fresh one). A working
    set's block is solved without (the decomposition around it shrinks). Returns
    the number of pair updates.
    """
    n = y0.size
    perm = np.arange(n)
    y = y0.copy()
    alpha = alpha0.copy()
    C = C0.copy()
    F = -y0 * G0
    diag = np.empty(n)
    for t in range(n):
        diag[t] = K[t, t]
    up = np.empty(n, dtype=np.bool_)
    low = np.empty(n, dtype=np.bool_)
    set_flags(y, alpha, C, up, low, n)
    keep = np.empty(n, dtype=np.bool_)
    Kw = K
    m = n
    period = min(n, 1000)
    counter = period
    unshrunk = False
    it = 0
    while it < max_iter:
        counter -= 1
        if shrink and counter == 0:
            counter = period
            g_up, g_low = violation_bounds(F, up, low, m)
            if not unshrunk and g_up + g_low <= 10.0 * eps:
                unshrunk = True
                if m < n:
                    _reconstruct(K, perm, y, alpha, C, F, p, m)
                    _reorder(np.argsort(perm), perm, y, alpha, C, F, diag, up, low)
                    Kw = K
                    m = n
            n_keep = shrink_marks(F, up, low, C, m, g_up, g_low, keep)
            if (n_keep <= COMPACT_KEEP * m and n_keep >= 2 and work.size >= n_keep * n_keep
                    and 3.0 * (m - n_keep) * it >= _COPY_COST * n_keep * n_keep):
                order = np.empty(n, dtype=np.intp)
                k = 0
                for t in range(m):
                    if keep[t]:
                        order[k] = t
                        k += 1
                for t in range(m):
                    if not keep[t]:
                        order[k] = t
                        k += 1
                for t in range(m, n):
                    order[t] = t
                _reorder(order, perm, y, alpha, C, F, diag, up, low)
                m = n_keep
                Kw = work[:m * m].reshape((m, m))
                take_serial(K, perm[:m], perm[:m], Kw)
        g_max = -np.inf
        i = -1
        for t in range(m):
            if up[t] and F[t] >= g_max:
                g_max = F[t]
                i = t
        g_max2 = -np.inf
        j = -1
        best = np.inf
        if i >= 0:
            Ki = Kw[i]
            dii = diag[i]
            for t in range(m):
                if low[t]:
                    v = -F[t]
                    if v >= g_max2:
                        g_max2 = v
                    diff = g_max + v
                    if diff > 0.0:
                        curv = dii + diag[t] - 2.0 * Ki[t]
                        if curv <= 0.0:
                            curv = TAU
                        gain = -diff * diff / curv
                        if gain <= best:
                            best = gain
                            j = t
        if i < 0 or j < 0 or g_max + g_max2 < eps:
            if m == n:
                break
            # the working set is optimal: check the whole problem, as LIBSVM does
            _reconstruct(K, perm, y, alpha, C, F, p, m)
            _reorder(np.argsort(perm), perm, y, alpha, C, F, diag, up, low)
            Kw = K
            m = n
            counter = 2
            continue
        it += 1
        Ki = Kw[i]
        Kj = Kw[j]
        ai, aj = pair_step(diag[i], diag[j], Ki[j], y[i], y[j], alpha[i], alpha[j],
                           -y[i] * F[i], -y[j] * F[j], C[i], C[j])
        di = (ai - alpha[i]) * y[i]
        dj = (aj - alpha[j]) * y[j]
        alpha[i] = ai
        alpha[j] = aj
        _flags(y, alpha, C, up, low, i)
        _flags(y, alpha, C, up, low, j)
        for t in range(m):
            F[t] -= Ki[t] * di + Kj[t] * dj
    if m < n:
        _reconstruct(K, perm, y, alpha, C, F, p, m)
    for a in range(n):
        alpha0[perm[a]] = alpha[a]
        G0[perm[a]] = -y[a] * F[a]
    return it


@numba.njit(cache=True, nogil=True)
def outside_box(alpha, C):  # pragma: no cover - compiled
    """True when some ``alpha_i`` lies outside ``[0, C_i]``."""
    for i in range(alpha.size):
        if alpha[i] < 0.0 or alpha[i] > C[i]:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def scaled_is_better(quad, linear, ratio):  # pragma: no cover - compiled
    """The warm start along ``C``: True when ``ratio * alpha`` has the lower dual objective.

    Going from ``C`` to ``ratio * C`` (``ratio > 1``) both ``alpha`` and
    ``ratio * alpha`` stay feasible (the box only grows; ``sum y alpha = 0`` and
    ``alpha <= C`` scale). Where most support vectors sit at the bound, as at small
    ``C`` or on overlapping classes, the scaled point is close to the new optimum;
    where none does, ``alpha`` already is it. ``quad = alpha^T Q alpha`` and
    ``linear = sum(alpha)`` give both objectives. On the 3,000-row synthetic grid the
    choice saves 10% of the pair updates. The one rule of :func:`scaled_start` and of
    the compiled path.
    """
    return 0.5 * ratio * ratio * quad - ratio * linear < 0.5 * quad - linear


@numba.njit(cache=True, nogil=True)
def solution_summary(y, G, alpha, C):  # pragma: no cover - compiled
    """``(gap, rho, objective)`` of a dual solution, as LIBSVM reports them.

    ``gap``: the maximal violation ``max_up(-y G) - min_low(-y G)``; ``rho``:
    the mean ``y G`` over free variables, else the middle of the bounds the
    variables at a bound give (the decision offset is ``-rho``); variables
    with ``C = 0`` take no part. ``objective``: ``1/2 a^T Q a - e^T a``.
    """
    up_max, low_min = -np.inf, np.inf
    free_sum, n_free = 0.0, 0
    ub, lb = np.inf, -np.inf
    objective = 0.0
    for i in range(y.size):
        objective += alpha[i] * (G[i] - 1.0)
        if C[i] <= 0.0:
            continue
        yG = y[i] * G[i]
        at_upper = alpha[i] >= C[i]
        at_lower = alpha[i] <= 0.0
        if y[i] > 0:
            is_up, is_low = not at_upper, not at_lower
        else:
            is_up, is_low = not at_lower, not at_upper
        if is_up and -yG > up_max:
            up_max = -yG
        if is_low and -yG < low_min:
            low_min = -yG
        if not at_upper and not at_lower:
            free_sum += yG
            n_free += 1
        elif (at_upper if y[i] > 0 else not at_upper):
            lb = max(lb, yG)
        else:
            ub = min(ub, yG)
    if n_free > 0:
        rho = free_sum / n_free
    elif np.isfinite(ub) and np.isfinite(lb):
        rho = 0.5 * (ub + lb)
    else:
        rho = ub if np.isfinite(ub) else lb
    return up_max - low_min, rho, 0.5 * objective
