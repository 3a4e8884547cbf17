"""SMO on a kernel matrix held whole: LIBSVM's pair updates, warm-started, no cache to manage.

When the training kernel matrix is in memory (a grid search computes it once
per gamma and cuts every fold and class pair out of it), the working-set
machinery of :func:`smo` has nothing to save: each pair update reads two rows
of the matrix. This runs LIBSVM's algorithm directly on the matrix (second-order
pair selection, Fan, Chen & Lin 2005) in compiled code, and starts from any
feasible point: a solution for a smaller ``C`` is feasible for a larger one
(alpha seeding, DeCoste & Wagstaff 2000), so a path of increasing ``C`` costs
little more than its last point.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._dense_compiled import outside_box, solution_summary, solve_dense, take_block

__all__ = ["smo_dense", "submatrix"]


def smo_dense(K, y, C, *, tol=1e-3, max_iter=-1, alpha0=None, gradient0=None, warn=True):
    """Solve the binary SVM dual on the kernel matrix ``K`` held whole.

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

    Returns
    -------
    result : dict
        ``alpha``, ``intercept``, ``objective``, ``n_iter``, ``converged``, ``gap``,
        as :func:`smo` returns them, and ``gradient`` (``Q alpha - 1``; not kept
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
    if alpha0 is None:
        alpha = np.zeros(n)
        G = np.full(n, -1.0)
    else:
        alpha = np.array(alpha0, dtype=np.float64)
        if outside_box(alpha, C):
            raise ValueError("alpha0 must lie in [0, C]: a solution for a smaller C (or 0).")
        if gradient0 is not None:
            G = np.array(gradient0, dtype=np.float64)
        else:
            G = y * np.asarray(K @ (alpha * y).astype(K.dtype), dtype=np.float64) - 1.0
    n_iter = solve_dense(K, y, alpha, G, C, float(tol), int(max_iter))
    # one compiled pass: a grid search calls this ~10^5 times on small problems
    gap, rho, objective = solution_summary(y, G, alpha, C)
    converged = bool(gap < tol) or n_iter < max_iter
    if not converged and warn:
        warnings.warn(f"SMO stopped after {n_iter} pair updates with violation {gap:.3g} > "
                      f"tol={tol}; raise max_iter (or tol).", ConvergenceWarning, stacklevel=2)
    return {"alpha": alpha, "intercept": -rho, "objective": objective, "n_iter": int(n_iter),
            "converged": converged, "gap": float(gap), "gradient": G}


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
    take_block(np.ascontiguousarray(K), rows, columns, out)
    return out
