"""The compiled loops of SMO's working sets: the pair step, the gradient update, block gathers."""

from __future__ import annotations

import numba
import numpy as np

from ..._parallel import parallel_guard
from ._settings import SMO_SETTINGS

__all__ = ["update_gradient", "gather_block", "pair_step", "rows_dot", "TAU"]

TAU = SMO_SETTINGS.tau  # a non-positive curvature's stand-in (frozen by numba)


@numba.njit(cache=True, inline="always")
def pair_step(kii, kjj, kij, yi, yj, ai, aj, gi, gj, ci, cj):  # pragma: no cover
    """LIBSVM's analytic update of one pair, clipped to the box; returns the new pair."""
    curv = kii + kjj - 2.0 * kij
    if curv <= 0.0:
        curv = TAU
    if yi != yj:
        delta = (-gi - gj) / curv
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0.0:
            if aj < 0.0:
                aj = 0.0
                ai = diff
        elif ai < 0.0:
            ai = 0.0
            aj = -diff
        if diff > ci - cj:
            if ai > ci:
                ai = ci
                aj = ci - diff
        elif aj > cj:
            aj = cj
            ai = cj + diff
    else:
        delta = (gi - gj) / curv
        total = ai + aj
        ai -= delta
        aj += delta
        if total > ci:
            if ai > ci:
                ai = ci
                aj = total - ci
        elif aj < 0.0:
            aj = 0.0
            ai = total
        if total > cj:
            if aj > cj:
                aj = cj
                ai = total - cj
        elif ai < 0.0:
            ai = 0.0
            aj = total
    return ai, aj


@parallel_guard
@numba.njit(parallel=True, cache=True)
def update_gradient(G, y, data, slots, coef, columns, n_active):  # pragma: no cover
    """``G[k] += y[k] sum_j coef[j] data[slots[j], columns[k]]`` for ``k < n_active``.

    ``columns=None`` means the rows are in position order (compacted to the
    active set): numba compiles that case apart, with contiguous reads that the
    compiler vectorises instead of a gather.
    """
    block = 1024
    n_blocks = (n_active + block - 1) // block
    for b in numba.prange(n_blocks):
        lo = b * block
        hi = min(lo + block, n_active)
        acc = np.zeros(hi - lo)
        for j in range(slots.size):
            c = coef[j]
            if columns is None:
                row = data[slots[j], lo:hi]
                for k in range(hi - lo):
                    acc[k] += c * row[k]
            else:
                full = data[slots[j]]
                for k in range(lo, hi):
                    acc[k - lo] += c * full[columns[k]]
        for k in range(lo, hi):
            G[k] += y[k] * acc[k - lo]


@parallel_guard
@numba.njit(parallel=True, cache=True)
def gather_block(data, slots, columns, out):  # pragma: no cover - compiled
    # q^2 reads scattered over rows far larger than the CPU cache: each is a cache
    # miss, so the rows are split across threads (their misses overlap)
    q = slots.size
    for a in numba.prange(q):
        row = data[slots[a]]
        for b in range(q):
            out[a, b] = row[columns[b]]


@parallel_guard
@numba.njit(parallel=True, fastmath=True, cache=True)
def _rows_dot(A, x, out):  # pragma: no cover - compiled
    for i in numba.prange(A.shape[0]):
        row = A[i]
        s = 0.0
        for j in range(row.size):
            s += np.float64(row[j]) * x[j]
        out[i] = s


def rows_dot(A, x, out=None):
    """``A @ x`` summed in float64 for a float32 (or float64) ``A``: LIBSVM's rule.

    Kernel rows are stored in float32, but a gradient rebuilt from them (after
    unshrinking, a refresh, a warm start) sums up to n products: a float32 sum
    loses ~sqrt(n) eps of the largest terms, as much as SMO's tolerance at large
    ``C``. LIBSVM caches floats too and sums in double; so does this (one pass
    over ``A``, as fast as BLAS's float32 ``gemv``, which is memory-bound).

    Parameters
    ----------
    A : ndarray of shape (n, m), C-contiguous
    x : ndarray of shape (m,)
    out : ndarray of shape (n,), float64, default=None

    Returns
    -------
    out : ndarray of shape (n,), float64

    Examples
    --------
    >>> import numpy as np
    >>> rows_dot(np.ones((2, 3), dtype=np.float32), np.arange(3.0))
    array([3., 3.])
    """
    out = np.empty(A.shape[0]) if out is None else out
    if A.shape[0]:
        _rows_dot(np.ascontiguousarray(A), np.ascontiguousarray(x, dtype=np.float64), out)
    return out
