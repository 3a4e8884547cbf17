"""Triangular solves with a few right-hand sides, either triangle of one square buffer.

FALKON's preconditioner keeps both of its m x m Cholesky factors in one buffer
(``T`` in the lower triangle as ``T^T``, ``A`` in the upper triangle, their
diagonals in two vectors), so every solve names the triangle it reads and
takes the diagonal separately. LAPACK's trtrs would spend longer packing the
factor than solving when there are ten right-hand sides (see ``_products``):
these loops read the factor once, four rows at a time, with the right-hand
sides in cache, split over numba threads by right-hand side. Rows of a
C-contiguous buffer are contiguous, so the lower triangle is swept column by
column of ``L^T`` and the upper triangle row by row of ``U``.
"""

from __future__ import annotations

import numba
import numpy as np

from ..._parallel import parallel_guard
from ._products import add4, dot4

__all__ = ["solve_triangular"]


@numba.njit(fastmath=True, nogil=True, cache=True)
def _lower_transposed(F, d, XT, c0, c1):  # pragma: no cover - compiled
    """Solve ``L^T x = b`` in place for the rows ``c0:c1`` of ``XT``; ``F[j, :j] = L[j, :j]``."""
    j = F.shape[0] - 1
    while j >= 0:
        g = 4 if j >= 3 else j + 1
        lo = j - g + 1
        for c in range(c0, c1):
            x = XT[c]
            for jj in range(j, lo - 1, -1):
                v = x[jj] / d[jj]
                x[jj] = v
                row = F[jj]
                for i in range(lo, jj):
                    x[i] -= v * row[i]
        if g == 4:
            u0 = F[lo]
            u1 = F[lo + 1]
            u2 = F[lo + 2]
            u3 = F[lo + 3]
            for c in range(c0, c1):
                x = XT[c]
                add4(x, -x[lo], -x[lo + 1], -x[lo + 2], -x[lo + 3], u0, u1, u2, u3, lo)
        else:
            for c in range(c0, c1):
                x = XT[c]
                for jj in range(lo, j + 1):
                    v = x[jj]
                    row = F[jj]
                    for i in range(lo):
                        x[i] -= v * row[i]
        j = lo - 1


@numba.njit(fastmath=True, nogil=True, cache=True)
def _lower(F, d, XT, c0, c1, zero):  # pragma: no cover - compiled
    """Solve ``L x = b`` in place for the rows ``c0:c1`` of ``XT``; ``F[j, :j] = L[j, :j]``."""
    m = F.shape[0]
    j = 0
    while j < m:
        g = 4 if j + 4 <= m else m - j
        if g == 4:
            u0 = F[j]
            u1 = F[j + 1]
            u2 = F[j + 2]
            u3 = F[j + 3]
            for c in range(c0, c1):
                x = XT[c]
                s0, s1, s2, s3 = dot4(u0, u1, u2, u3, x, j, zero)
                x[j] -= s0
                x[j + 1] -= s1
                x[j + 2] -= s2
                x[j + 3] -= s3
        else:
            for c in range(c0, c1):
                x = XT[c]
                for jj in range(j, j + g):
                    row = F[jj]
                    s = zero
                    for i in range(j):
                        s += row[i] * x[i]
                    x[jj] -= s
        for c in range(c0, c1):
            x = XT[c]
            for jj in range(j, j + g):
                row = F[jj]
                s = x[jj]
                for i in range(j, jj):
                    s -= row[i] * x[i]
                x[jj] = s / d[jj]
        j += g


@numba.njit(fastmath=True, nogil=True, cache=True)
def _upper(F, d, XT, c0, c1, zero):  # pragma: no cover - compiled
    """Solve ``U x = b`` in place for the rows ``c0:c1`` of ``XT``; ``F[j, j+1:] = U[j, j+1:]``."""
    m = F.shape[0]
    j = m - 1
    while j >= 0:
        g = 4 if j >= 3 else j + 1
        lo = j - g + 1
        tail = m - j - 1
        if g == 4:
            u0 = F[lo, j + 1:]
            u1 = F[lo + 1, j + 1:]
            u2 = F[lo + 2, j + 1:]
            u3 = F[lo + 3, j + 1:]
            for c in range(c0, c1):
                x = XT[c]
                s0, s1, s2, s3 = dot4(u0, u1, u2, u3, x[j + 1:], tail, zero)
                x[lo] -= s0
                x[lo + 1] -= s1
                x[lo + 2] -= s2
                x[lo + 3] -= s3
        else:
            for c in range(c0, c1):
                x = XT[c]
                for r in range(lo, j + 1):
                    row = F[r]
                    s = zero
                    for i in range(j + 1, m):
                        s += row[i] * x[i]
                    x[r] -= s
        for c in range(c0, c1):
            x = XT[c]
            for r in range(j, lo - 1, -1):
                row = F[r]
                s = x[r]
                for i in range(r + 1, j + 1):
                    s -= row[i] * x[i]
                x[r] = s / d[r]
        j = lo - 1


@numba.njit(fastmath=True, nogil=True, cache=True)
def _upper_transposed(F, d, XT, c0, c1):  # pragma: no cover - compiled
    """Solve ``U^T x = b`` in place for the rows ``c0:c1`` of ``XT``; ``F[j, j+1:]`` is U's row."""
    m = F.shape[0]
    j = 0
    while j < m:
        g = 4 if j + 4 <= m else m - j
        for c in range(c0, c1):
            x = XT[c]
            for r in range(j, j + g):
                v = x[r] / d[r]
                x[r] = v
                row = F[r]
                for i in range(r + 1, j + g):
                    x[i] -= v * row[i]
        rest = m - j - g
        if g == 4 and rest > 0:
            u0 = F[j, j + 4:]
            u1 = F[j + 1, j + 4:]
            u2 = F[j + 2, j + 4:]
            u3 = F[j + 3, j + 4:]
            for c in range(c0, c1):
                x = XT[c]
                add4(x[j + 4:], -x[j], -x[j + 1], -x[j + 2], -x[j + 3], u0, u1, u2, u3, rest)
        elif rest > 0:
            for c in range(c0, c1):
                x = XT[c]
                for r in range(j, j + g):
                    v = x[r]
                    row = F[r]
                    for i in range(j + g, m):
                        x[i] -= v * row[i]
        j += g


@parallel_guard
@numba.njit(parallel=True, cache=True)
def _solve_parts(F, d, XT, n_parts, kind, zero):  # pragma: no cover - compiled
    t = XT.shape[0]
    for p in numba.prange(n_parts):
        c0 = p * t // n_parts
        c1 = (p + 1) * t // n_parts
        if kind == 0:
            _lower(F, d, XT, c0, c1, zero)
        elif kind == 1:
            _lower_transposed(F, d, XT, c0, c1)
        elif kind == 2:
            _upper(F, d, XT, c0, c1, zero)
        else:
            _upper_transposed(F, d, XT, c0, c1)


def solve_triangular(F, B, *, lower, trans=False, diag=None):
    """Solve ``R X = B`` (or ``R^T X = B``) for ``R`` a triangle of the square buffer ``F``.

    Only the strict triangle named by ``lower`` and the diagonal ``diag`` are
    read; nothing is checked (a Cholesky factor's diagonal is positive).

    Parameters
    ----------
    F : ndarray of shape (m, m), C-contiguous
    B : ndarray of shape (m, t)
    lower : bool
        ``R`` is the lower (True) or upper (False) triangle of ``F``.
    trans : bool, default=False
        Solve with ``R^T`` instead.
    diag : ndarray of shape (m,), default=None
        The diagonal of ``R``; None reads ``F``'s.

    Returns
    -------
    X : ndarray of shape (m, t), ``F.dtype``

    Examples
    --------
    >>> import numpy as np
    >>> F = np.array([[2.0, 1.0], [3.0, 4.0]])
    >>> solve_triangular(F, np.array([[4.0], [8.0]]), lower=False).ravel()  # [[2, 1], [0, 4]]
    array([1., 2.])
    >>> solve_triangular(F, np.array([[4.0], [14.0]]), lower=True).ravel()  # [[2, 0], [3, 4]]
    array([2., 2.])
    """
    F = np.ascontiguousarray(F)
    d = np.ascontiguousarray(np.diagonal(F) if diag is None else diag, dtype=F.dtype)
    XT = np.array(np.asarray(B).T, dtype=F.dtype, order="C")
    n_parts = max(1, min(numba.get_num_threads(), XT.shape[0]))
    kind = (0 if not trans else 1) if lower else (2 if not trans else 3)
    _solve_parts(F, d, XT, n_parts, kind, F.dtype.type(0))
    return XT.T
