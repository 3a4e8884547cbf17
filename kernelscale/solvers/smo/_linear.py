"""The one-class SVM dual on explicit features, where ``Q = Z Z^T`` is never formed.

With features ``Z`` (n x D, D small), the gradient of the one-class dual
``1/2 a^T Z Z^T a`` is ``Z w`` for ``w = Z^T a``: one matrix-vector product
instead of ``n`` kernel rows. Each outer iteration therefore recomputes the
gradient exactly, picks the working set of the most violating variables as
:func:`smo` does, solves the sub-problem on its ``q x q`` block ``Z_B Z_B^T``
with the same compiled pair updates, and moves ``w`` by ``Z_B^T delta``:
``O(n D + q^2 D)`` per iteration, linear in ``n``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._dense_compiled import solve_pairs
from ._solver import _select, _violation, intercept_from_gradient
from ._variants import one_class_start

__all__ = ["linear_one_class"]

_NO_WORK = np.empty(0)  # blocks are solved without compaction


def linear_one_class(Z, nu, C=None, *, tol=1e-3, max_iter=1000, working_set_size=512,
                     verbose=0, monitor=None):
    """Solve the nu one-class SVM dual with the linear kernel of the features ``Z``.

    Parameters
    ----------
    Z : ndarray of shape (n, D)
        Features (float32 or float64).
    nu : float
        In (0, 1].
    C : ndarray of shape (n,), default=None
        Upper bound of each variable (sample weights); ones when None.
    tol : float, default=1e-3
        LIBSVM's stopping rule on the maximal violation.
    max_iter : int, default=1000
        Outer iterations (gradient recomputations).
    working_set_size : int, default=512
    verbose : int, default=0
        Print progress every ``verbose`` outer iterations.
    monitor : callable, default=None
        ``monitor(n_outer, gap, n)`` after each gradient (a progress bar's).

    Returns
    -------
    result : dict
        ``coef`` (``w = Z^T alpha``, shape (D,), float64), ``intercept`` (``-rho``),
        ``alpha``, ``n_iter`` (outer iterations), ``converged``, ``gap``.

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.random.default_rng(0).normal(size=(200, 5)) + 3.0
    >>> r = linear_one_class(Z, 0.2)
    >>> bool(np.mean(Z @ r["coef"] + r["intercept"] < 0) <= 0.2 + 1e-9), r["converged"]
    (True, True)
    """
    Z = np.ascontiguousarray(Z)
    n = Z.shape[0]
    C = np.ones(n) if C is None else np.asarray(C, dtype=np.float64)
    alpha = one_class_start(C, nu)
    w = (Z.T @ alpha.astype(Z.dtype)).astype(np.float64)
    y = np.ones(n)
    q = int(max(2, min(working_set_size, n)))
    converged = False
    gap = np.inf
    n_outer = 0
    for n_outer in range(1, max_iter + 1):
        G = (Z @ w.astype(Z.dtype)).astype(np.float64)
        m, M, score, up, low = _violation(y, G, alpha, C, n)
        gap = m - M
        if monitor is not None:
            monitor(n_outer - 1, gap, n)
        if verbose and n_outer % verbose == 0:
            print(f"[one-class] outer {n_outer:5d}  gap {gap:.3e}", flush=True)
        if gap < tol:
            converged = True
            break
        ws = _select(score, up, low, np.empty(0, dtype=np.intp), q)
        Zb = Z[ws].astype(np.float64)
        Kb = np.ascontiguousarray(Zb @ Zb.T)
        ab, Gb = alpha[ws].copy(), G[ws].copy()
        solve_pairs(Kb, y[ws], ab, Gb, C[ws], np.zeros(ws.size), max(tol, 0.1 * gap),
                    10 * ws.size, _NO_WORK, False)
        w += Zb.T @ (ab - alpha[ws])
        alpha[ws] = ab
    if not converged:
        warnings.warn(f"The one-class solver stopped after {n_outer} iterations with violation "
                      f"{gap:.3g} > tol={tol}; raise max_iter (or tol).", ConvergenceWarning,
                      stacklevel=2)
        # the gradient at the last iterate (the loop's is one step behind)
        G = (Z @ w.astype(Z.dtype)).astype(np.float64)
    return {"coef": w, "intercept": -intercept_from_gradient(y, G, alpha, C), "alpha": alpha,
            "n_iter": n_outer, "converged": converged, "gap": float(gap)}
