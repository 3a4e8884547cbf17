"""LIBSVM's epsilon-SVR and one-class duals, solved by the same SMO as the classifier.

Both are the general dual ``min 1/2 a^T Q a + p^T a, 0 <= a <= C, y^T a = const``
(Chang & Lin, LIBSVM, sections 2.3 and 2.4):

- epsilon-SVR has ``2 n`` variables, ``a`` and ``a*``, with ``y = (+1, -1)``,
  ``p = (epsilon - z, epsilon + z)`` and ``Q`` built from the kernel of
  ``x_(i mod n)``; the model's coefficient of ``x_i`` is ``a_i - a*_i``.
- the one-class SVM (nu form, Schoelkopf et al. 2001) has ``y = +1``, ``p = 0``,
  bounds 1 (the sample weights) and ``sum a = nu n``, started where LIBSVM starts it: the first
  ``floor(nu n)`` variables at 1, the next at the remainder.

The doubled SVR problem reads its kernel rows through :class:`PairedRows`,
which computes each distinct training row once and copies it into both halves.
Given the training kernel matrix instead, both read it in place
(:class:`MatrixCache`).
"""

from __future__ import annotations

import numpy as np

from ._dense_compiled import take_block
from ._matrix_rows import MatrixCache, MatrixRows, merge_columns
from ._rows import RowCache
from ._solver import smo

__all__ = ["PairedRows", "one_class_start", "smo_regression", "smo_one_class"]


class PairedRows:
    """Kernel rows of a doubled problem whose variables ``i`` and ``i + n`` share ``x_i``.

    Parameters
    ----------
    rows : KernelRows
        Rows of the ``n`` training points.
    """

    def __init__(self, rows):
        self.inner = rows
        self.n = 2 * rows.n
        self.set_columns(np.arange(self.n))

    @property
    def evaluated(self):
        return self.inner.evaluated

    @property
    def memory_budget(self):
        return self.inner.memory_budget

    def set_columns(self, columns):
        """Make rows cover the variables ``columns`` (positions in ``0 .. 2n``)."""
        self.columns = np.asarray(columns, dtype=np.intp)
        points, self._inverse = np.unique(self.columns % self.inner.n, return_inverse=True)
        self._inverse = self._inverse.astype(np.intp)
        self.inner.set_columns(points)

    def compute(self, rows, out):
        """Write the kernel rows of the variables ``rows`` into ``out`` (float32)."""
        points, where = np.unique(np.asarray(rows) % self.inner.n, return_inverse=True)
        buf = np.empty((points.size, self.inner.columns.size), dtype=np.float32)
        self.inner.compute(points, buf)
        take_block(buf, where.astype(np.intp), self._inverse, out)
        return out

    def block(self, variables):
        """The variables' kernel block: their points' (see :meth:`KernelRows.block`)."""
        return self.inner.block(np.asarray(variables, dtype=np.intp) % self.inner.n)

    def cross(self, rows, columns, coef):
        """``k(variables rows, variables columns) @ coef`` (float64)."""
        n = self.inner.n
        points, where = np.unique(np.asarray(rows) % n, return_inverse=True)
        cols, merged = merge_columns(columns, coef, n)
        return self.inner.cross(points, cols, merged)[where]


def _rows_and_cache(rows, n_variables, cache_bytes, memory_budget, batch_bytes=None):
    if isinstance(rows, np.ndarray):
        matrix = MatrixRows(rows, n_variables, memory_budget)
        return matrix, MatrixCache(matrix)
    if n_variables != rows.n:
        rows = PairedRows(rows)
    if batch_bytes is None:
        return rows, RowCache(rows, cache_bytes)
    return rows, RowCache(rows, cache_bytes, batch_bytes)


def smo_regression(rows, z, C, epsilon, *, cache_bytes=256 * 2**20,
                   memory_budget=256 * 2**20, batch_bytes=None, **options):
    """Solve LIBSVM's epsilon-SVR dual.

    Parameters
    ----------
    rows : KernelRows or ndarray of shape (n, n)
        Kernel rows of the ``n`` training points, or their float32 kernel
        matrix held whole.
    z : ndarray of shape (n,)
        Targets.
    C : ndarray of shape (n,)
        Upper bound of ``a_i`` and ``a*_i`` (``C`` times the sample weight).
    epsilon : float
        Half-width of the insensitive tube.
    cache_bytes : int, default=256 MB
        Size of the row cache (rows of the doubled problem, ``2 n`` wide).
    memory_budget : int, default=256 MB
        Bytes for the temporaries of a gradient rebuild from a kernel matrix.
    batch_bytes : int, default=None
        The row cache's batch (:class:`RowCache`'s; None: its default).
    **options
        Passed to :func:`smo` (``tol``, ``max_iter``, ``working_set_size``,
        ``shrinking``, ``verbose``, ``monitor``).

    Returns
    -------
    result : dict
        As :func:`smo`, with ``coef`` (``a - a*``, shape (n,)) in place of
        ``alpha``; the prediction is ``sum_i coef_i k(x_i, x) + intercept``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import make_kernel
    >>> from kernelscale.solvers.smo import KernelRows
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> rows = KernelRows(X, make_kernel("linear", X), 2**20)
    >>> r = smo_regression(rows, np.array([0.0, 1.0, 2.0]), np.full(3, 10.0), 0.1,
    ...                    cache_bytes=2**20, tol=1e-6)
    >>> round(float(r["coef"] @ X[:, 0]), 3), round(r["intercept"], 3)
    (0.9, 0.1)
    """
    z = np.asarray(z, dtype=np.float64)
    n = z.size
    paired, cache = _rows_and_cache(rows, 2 * n, cache_bytes, memory_budget, batch_bytes)
    y = np.concatenate([np.ones(n), -np.ones(n)])
    p = np.concatenate([epsilon - z, epsilon + z])
    bounds = np.concatenate([C, C]).astype(np.float64)
    res = smo(paired, cache, y, bounds, linear_term=p, **options)
    alpha = res.pop("alpha")
    res["coef"] = alpha[:n] - alpha[n:]
    return res


def one_class_start(C, nu):
    """LIBSVM's feasible start for the one-class dual: ``sum a = nu sum C``, ``0 <= a <= C``.

    The variables are filled to their bound in order until the total is reached.
    """
    C = np.asarray(C, dtype=np.float64)
    before = np.cumsum(C) - C
    return np.clip(nu * C.sum() - before, 0.0, C)


def smo_one_class(rows, nu, C=None, *, cache_bytes=256 * 2**20, memory_budget=256 * 2**20,
                  batch_bytes=None, **options):
    """Solve the nu one-class SVM dual (scikit-learn's ``OneClassSVM``).

    Parameters
    ----------
    rows : KernelRows or ndarray of shape (n, n)
        Kernel rows of the ``n`` training points, or their float32 kernel
        matrix held whole.
    nu : float
        In (0, 1]: an upper bound on the fraction of training errors and a lower
        bound on the fraction of support vectors.
    C : ndarray of shape (n,), default=None
        Upper bound of each variable (the sample weights; ones when None).
    cache_bytes, memory_budget, batch_bytes : int
        As :func:`smo_regression`'s.
    **options
        Passed to :func:`smo`.

    Returns
    -------
    result : dict
        As :func:`smo`: ``alpha`` (in [0, C], summing to ``nu sum C``) and
        ``intercept`` (``-rho``); the decision is ``sum_i alpha_i k(x_i, x) + intercept``.
    """
    n = rows.shape[0] if isinstance(rows, np.ndarray) else rows.n
    C = np.ones(n) if C is None else np.asarray(C, dtype=np.float64)
    rows, cache = _rows_and_cache(rows, n, cache_bytes, memory_budget, batch_bytes)
    return smo(rows, cache, np.ones(n), C, alpha0=one_class_start(C, nu),
               linear_term=np.zeros(n), **options)
