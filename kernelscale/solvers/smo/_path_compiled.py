"""A whole path of SVM solves (every fold, every ``C``) in one compiled call.

A grid search solves each binary problem for 5 folds x 7 values of ``C`` per
gamma: on a 26-class problem that is ~10^4 solves of a few hundred variables
each, where the Python around every solve (argument checks, the summary, the
fold's block) cost as much as the solve and held the GIL, so that threads
solving problems side by side waited on each other. Here the fold's block is
cut, the path warm-started along ``C`` and each solution summarised without
returning to Python, and the GIL is released throughout.
"""

from __future__ import annotations

import numba
import numpy as np

from ._dense_compiled import scaled_is_better, solution_summary, solve_pairs, take_serial

__all__ = ["solve_path"]


@numba.njit(cache=True, nogil=True)
def _seed(alpha, G, ratio):  # pragma: no cover - compiled
    """Start the next ``C`` (``ratio`` times the last) from the better of ``alpha`` and
    ``ratio * alpha`` (:func:`scaled_is_better`); the scaled point's gradient is
    ``ratio (G + 1) - 1``, so the choice costs one pass."""
    quad = 0.0
    linear = 0.0
    for k in range(alpha.size):
        quad += alpha[k] * (G[k] + 1.0)
        linear += alpha[k]
    if scaled_is_better(quad, linear, ratio):
        for k in range(alpha.size):
            alpha[k] *= ratio
            G[k] = ratio * (G[k] + 1.0) - 1.0


@numba.njit(cache=True, nogil=True)
def solve_path(K, rows, y, weights, Cs, eps, max_iter, alpha, intercept, objective, gap,
               n_iter, fold_work, work):  # pragma: no cover - compiled
    """Solve the binary dual on ``K[rows][:, rows]`` for every fold and every ``C``.

    The problem's variables are the rows ``rows`` of ``K`` (a class pair of a
    matrix shared by every pair: each fold's block is cut from ``K`` directly,
    never through a copy of the pair's block). Fold ``f``'s problem has the
    variables with ``weights[f] > 0`` and bounds
    ``C * weights[f]``; along increasing ``Cs`` each solution (or the same
    scaled to the new ``C``, whichever has the lower objective) starts the
    next. Outputs, filled
    in place: ``alpha[f, c]`` (0 outside the fold), ``intercept[f, c]``,
    ``objective[f, c]``, ``gap[f, c]`` (the final violation) and
    ``n_iter[f, c]`` (pair updates). ``fold_work`` and ``work`` (1-D, ``K``'s
    dtype) hold each fold's block and the solver's compacted blocks where they
    are large enough: reused, they spare each fold the page faults of a fresh
    array (on the 6,000-row imbalanced grid, a fifth of the solve time).
    """
    n = y.size
    whole = n == K.shape[0]
    for k in range(n):
        whole = whole and rows[k] == k
    for f in range(weights.shape[0]):
        live = np.flatnonzero(weights[f] > 0.0)
        m = live.size
        if m == n and whole:
            Kf = K
        else:
            at = rows[live]
            if fold_work.size < m * m:
                fold_work = np.empty(m * m, dtype=K.dtype)
            Kf = fold_work[:m * m].reshape((m, m))
            take_serial(K, at, at, Kf)
        y_f = y[live]
        w_f = weights[f][live]
        a = np.zeros(m)
        G = np.full(m, -1.0)
        p = np.full(m, -1.0)
        for c in range(Cs.size):
            if c > 0:
                _seed(a, G, Cs[c] / Cs[c - 1])
            bounds = Cs[c] * w_f
            n_iter[f, c] = solve_pairs(Kf, y_f, a, G, bounds, p, eps, max_iter, work, True)
            g, rho, obj = solution_summary(y_f, G, a, bounds)
            intercept[f, c] = -rho
            objective[f, c] = obj
            gap[f, c] = g
            for k in range(m):
                alpha[f, c, live[k]] = a[k]
