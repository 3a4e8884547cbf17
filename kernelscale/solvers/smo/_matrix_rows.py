"""Kernel rows read straight from a training kernel matrix held whole (no cache to fill).

When the float32 ``n x n`` kernel fits the memory budget, computing it once by
GEMM is cheaper than computing rows as the working sets ask for them: an
epsilon-SVR on 20,000 rows otherwise recomputes each row many times over, since
an LRU cache of a few hundred MB holds only a tenth of them. :class:`MatrixCache`
then stands in for :class:`RowCache`: a variable's "slot" is its row of the
matrix, so :func:`smo` reads the matrix directly. Variables may outnumber the
matrix's rows (SVR's ``2 n``): variable ``i`` reads row ``i mod n``.
"""

from __future__ import annotations

import numpy as np

from ..._validation import iter_row_blocks
from ._dense_compiled import take_block

__all__ = ["MatrixRows", "MatrixCache"]


class MatrixRows:
    """:class:`KernelRows`' interface over a kernel matrix held whole.

    Parameters
    ----------
    K : ndarray of shape (n_points, n_points), float32, C-contiguous
    n_variables : int
        A multiple of ``n_points``; variable ``i`` is point ``i mod n_points``.
    memory_budget : int
        Bytes for the temporaries of :meth:`cross`.
    """

    def __init__(self, K, n_variables, memory_budget):
        self.K = np.ascontiguousarray(K, dtype=np.float32)
        self.n_points = self.K.shape[0]
        self.n = int(n_variables)
        self.memory_budget = memory_budget
        self.evaluated = 0

    def points(self, variables):
        return np.asarray(variables, dtype=np.intp) % self.n_points

    def compute(self, rows, out):
        """Copy the rows of the variables ``rows`` (all columns) into ``out``."""
        take_block(self.K, self.points(rows), self.points(np.arange(self.n)), out)
        return out

    def cross(self, rows, columns, coef):
        """``k(variables rows, variables columns) @ coef`` (float64)."""
        points = self.points(rows)
        cols, merge = np.unique(self.points(columns), return_inverse=True)
        merged = np.bincount(merge, weights=coef, minlength=cols.size).astype(np.float32)
        out = np.zeros(points.size)
        if points.size == 0 or cols.size == 0:
            return out
        for start, stop in iter_row_blocks(points.size, 4 * cols.size, self.memory_budget,
                                           what="a kernel row"):
            block = np.empty((stop - start, cols.size), dtype=np.float32)
            take_block(self.K, points[start:stop], cols, block)
            out[start:stop] = block @ merged
        return out


class MatrixCache:
    """:class:`RowCache`'s interface whose every row is present: the matrix itself.

    Parameters
    ----------
    rows : MatrixRows
    """

    holds_all = True

    def __init__(self, rows):
        self.rows = rows
        self.data = rows.K
        self.n_slots = rows.n
        self.width = rows.n_points
        self.hits = 0
        self.misses = 0

    def fetch(self, indices):
        """The matrix rows of the variables ``indices``."""
        self.hits += len(indices)
        return self.rows.points(indices)

    def columns_of(self, variables):
        """Matrix columns of the variables (their points)."""
        return self.rows.points(variables)

    def clear(self):
        """Nothing to forget: the matrix stays."""
