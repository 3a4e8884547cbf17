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
from ._compiled import rows_dot
from ._dense_compiled import take_block

__all__ = ["MatrixRows", "MatrixCache", "merge_columns"]


def merge_columns(columns, coef, n_points):
    """Distinct points of the variables ``columns`` and their summed coefficients.

    Variables ``i`` and ``i + n_points`` share a point, so a product with their
    kernel columns is one product with the point's column and the summed coefficient.
    """
    points, where = np.unique(np.asarray(columns) % n_points, return_inverse=True)
    return points, np.bincount(where.ravel(), weights=coef, minlength=points.size)


class MatrixRows:
    """:class:`KernelRows`' ``n``, ``cross`` and ``evaluated`` over a kernel matrix held whole.

    No ``compute``: :class:`MatrixCache` never computes a row, it reads the matrix.

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

    def block(self, variables):
        """None: the working set's block is read from the matrix (nothing to compute)."""
        return None

    def cross(self, rows, columns, coef):
        """``k(variables rows, variables columns) @ coef`` (float64)."""
        points = self.points(rows)
        cols, merged = merge_columns(columns, coef, self.n_points)
        out = np.zeros(points.size)
        if points.size == 0 or cols.size == 0:
            return out
        buffer = None  # one block's memory for every block (the first is the largest)
        for start, stop in iter_row_blocks(points.size, 4 * cols.size, self.memory_budget,
                                           what="a kernel row"):
            if buffer is None:
                buffer = np.empty((stop - start, cols.size), dtype=np.float32)
            block = buffer[: stop - start]
            take_block(self.K, points[start:stop], cols, block)
            rows_dot(block, merged, out[start:stop])  # float32 entries, float64 sums
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
        self.storage = rows.K
        self.n_slots = rows.n
        self.width = rows.n_points
        self.hits = 0
        self.misses = 0
        self._order, self._columns = None, None

    def whole(self):
        """The problem's kernel matrix when each variable is its own row, else None.

        Then :func:`smo` takes the whole problem as its one working set and runs the
        pair solver on the matrix directly; SVR's ``2 n`` variables over ``n`` rows
        are solved in working sets gathered from it.
        """
        return self.rows.K if self.rows.n == self.rows.n_points else None

    def fetch(self, indices):
        """The matrix rows of the variables ``indices``."""
        self.hits += len(indices)
        return self.rows.points(indices)

    def columns_of(self, variables):
        """Matrix columns of the variables (their points).

        :func:`smo` asks every outer iteration with its variable order, which changes
        only when it shrinks or unshrinks (a new array): the answer is kept until then.
        """
        if variables is not self._order:
            self._order, self._columns = variables, self.rows.points(variables)
        return self._columns

    def clear(self):
        """Nothing to forget: the matrix stays."""
