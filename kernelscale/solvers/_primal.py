"""Primal solvers for the squared-hinge linear SVM: Newton and L-BFGS.

Objective (``z^_i = [z_i, bias]``, ``m_i = w . z^_i``):

    P(w) = 1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i m_i)^2

It is convex, piecewise quadratic and once differentiable. On a fixed active
set ``I = {i : y_i m_i < 1}`` it is a quadratic with Hessian
``H = I + 2 sum_{i in I} C_i z^_i z^_i^T``; Newton's method with this
generalized Hessian and an exact line search terminates in finitely many steps
(Keerthi & DeCoste 2005; Chapelle 2007). Only rows that enter or leave the
active set change ``H``, so after the first step each iteration costs a few
GEMVs, a rank-k update and a Cholesky factorization of ``(d+1) x (d+1)``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.optimize

from .._clock import checkpoint
from .._parallel import large_symmetric_blas
from ._blocked import margins, rmatvec, weighted_gram

__all__ = [
    "squared_hinge_objective", "squared_hinge_newton", "squared_hinge_lbfgs", "lbfgs_relative",
]


def squared_hinge_objective(Z, y, C, w, bias, memory_budget, m=None):
    """Return ``(P(w), gradient)`` of the squared-hinge primal objective."""
    m = margins(Z, w, bias, memory_budget) if m is None else m
    slack = np.maximum(1.0 - y * m, 0.0)
    value = 0.5 * float(w @ w) + float(np.sum(C * slack**2))
    grad = w - 2.0 * rmatvec(Z, C * y * slack, bias, memory_budget)
    return value, grad


def _line_search(w, d, y, C, m, delta):
    """Exact minimiser ``t > 0`` of ``P(w + t d)`` along a descent direction ``d``.

    ``P`` is convex and piecewise quadratic in ``t``; its derivative is found on
    a bracket ``[lo, hi]`` by Newton steps, falling back to bisection whenever a
    step would leave the bracket.
    """
    wd, dd = float(w @ d), float(d @ d)
    ym, yd = y * m, y * delta

    def derivative(t):
        slack = 1.0 - ym - t * yd
        on = slack > 0
        first = wd + t * dd - 2.0 * float(np.sum(C[on] * yd[on] * slack[on]))
        second = dd + 2.0 * float(np.sum(C[on] * delta[on] ** 2))
        return first, second

    lo, hi = 0.0, 1.0
    while derivative(hi)[0] < 0 and hi < 1e8:
        lo, hi = hi, 2.0 * hi
    t = hi
    for _ in range(60):
        g, h = derivative(t)
        if abs(g) <= 1e-12 * max(1.0, abs(wd)):
            break
        if g > 0:
            hi = t
        else:
            lo = t
        step = t - g / h
        t = step if lo < step < hi else 0.5 * (lo + hi)
        if hi - lo <= 1e-12 * hi:
            break
    return t


def _active_hessian(Z, active, twice_c, bias, memory_budget):
    """``I + 2 sum_{i active} C_i z^_i z^_i^T`` (upper triangle; views when all are active)."""
    rows = None if active.all() else np.flatnonzero(active)
    H = weighted_gram(Z, rows, twice_c, bias, memory_budget)
    H[np.diag_indices_from(H)] += 1.0
    return H


def squared_hinge_newton(
    Z, y, C, *, bias=1.0, tol=1e-4, max_iter=100, memory_budget, w0=None,
    hessian_all=None, callback=None,
):
    """Minimise the squared-hinge primal by Newton's method on the active set.

    Parameters
    ----------
    Z : ndarray or csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    C : ndarray of shape (n_samples,)
        Per-sample penalties (>= 0).
    bias : float, default=1.0
        Constant feature carrying the (regularized) intercept; 0: no intercept.
    tol : float, default=1e-4
        Stop when ``||grad|| <= tol * ||grad at w = 0||``.
    max_iter : int, default=100
        Newton iterations.
    memory_budget : int
        Bytes for one row block.
    w0 : ndarray of shape (n_features + 1,), default=None
        Starting point (0 when None).
    hessian_all : ndarray of shape (n_features + 1, n_features + 1), default=None
        ``I + 2 sum_i C_i z^_i z^_i^T`` over all rows, if already known (it is the
        Hessian at ``w = 0``, where every row is active). Not modified.
    callback : callable, default=None
        ``callback(iteration, state)`` after each iteration with ``state`` a dict
        holding ``objective``, ``grad_norm``, ``n_active``, ``step``.

    Returns
    -------
    w : ndarray of shape (n_features + 1,)
    n_iter : int
    converged : bool
    """
    n, d = Z.shape
    w = np.zeros(d + 1) if w0 is None else np.array(w0, dtype=np.float64)
    twice_c = 2.0 * C
    # At w = 0 every margin is 0 and the gradient is the reference grad0: the first
    # iteration computes it anyway, so no extra pass over Z is made for either.
    if w0 is None:
        grad0, m = None, np.zeros(n)
    else:
        grad0 = np.linalg.norm(2.0 * rmatvec(Z, C * y, bias, memory_budget))
        m = margins(Z, w, bias, memory_budget)
    active = y * m < 1.0
    if w0 is None and hessian_all is not None:
        H = hessian_all.copy()
    else:
        H = _active_hessian(Z, active, twice_c, bias, memory_budget)
    for it in range(1, max_iter + 1):
        checkpoint()
        value, grad = squared_hinge_objective(Z, y, C, w, bias, memory_budget, m=m)
        grad_norm = float(np.linalg.norm(grad))
        grad0 = grad_norm if grad0 is None else grad0
        if grad_norm <= tol * max(grad0, 1e-300):
            return w, it - 1, True
        # weighted_gram keeps H valid in its upper triangle, all cho_factor reads
        try:
            with large_symmetric_blas(H.shape[0], H.dtype.itemsize):
                factor = scipy.linalg.cho_factor(H, lower=False)
        except np.linalg.LinAlgError:
            # H = I + 2 C sum z z^T: at a large C the rounding of float32 row blocks
            # (and of rows added and removed one by one) can outweigh the I and
            # leave it indefinite; rebuild it from the active rows in float64
            Z64 = Z if Z.dtype == np.float64 else Z.astype(np.float64)
            H = _active_hessian(Z64, active, twice_c, bias, memory_budget)
            with large_symmetric_blas(H.shape[0], H.dtype.itemsize):
                factor = scipy.linalg.cho_factor(H, lower=False)
        direction = -scipy.linalg.cho_solve(factor, grad)
        delta = margins(Z, direction, 0.0, memory_budget) + bias * direction[d]
        step = _line_search(w, direction, y, C, m, delta)
        w += step * direction
        m += step * delta
        now = y * m < 1.0
        entered, left = np.flatnonzero(now & ~active), np.flatnonzero(active & ~now)
        if callback is not None:
            callback(it, {"objective": value, "grad_norm": grad_norm,
                          "n_active": int(now.sum()), "step": step})
        if entered.size == 0 and left.size == 0 and abs(step - 1.0) < 1e-9:
            return w, it, True  # exact minimiser of the quadratic on a stable active set
        if entered.size + left.size < now.sum():
            weighted_gram(Z, entered, twice_c, bias, memory_budget, out=H)
            weighted_gram(Z, left, twice_c, bias, memory_budget, out=H, sign=-1.0)
        else:
            H = _active_hessian(Z, now, twice_c, bias, memory_budget)
        active = now
    value, grad = squared_hinge_objective(Z, y, C, w, bias, memory_budget, m=m)
    return w, max_iter, bool(np.linalg.norm(grad) <= tol * max(grad0, 1e-300))


def squared_hinge_lbfgs(
    Z, y, C, *, bias=1.0, tol=1e-4, max_iter=1000, memory_budget, w0=None, callback=None,
):
    """Minimise the squared-hinge primal with L-BFGS (scipy); same interface as Newton.

    Each iteration costs one pass over ``Z`` (two blocked GEMVs); no Hessian is
    formed, so this suits wide ``Z`` where a ``(d+1)^2`` Hessian does not fit.
    """
    n, d = Z.shape
    w = np.zeros(d + 1) if w0 is None else np.array(w0, dtype=np.float64)
    grad0 = np.linalg.norm(2.0 * rmatvec(Z, C * y, bias, memory_budget))

    def fun(v):
        return squared_hinge_objective(Z, y, C, v, bias, memory_budget)

    return lbfgs_relative(fun, w, grad0=grad0, tol=tol, max_iter=max_iter, callback=callback)


def lbfgs_relative(fun, x0, *, grad0, tol, max_iter, callback=None):
    """L-BFGS (scipy) until ``||grad|| <= tol * grad0``: the squared-hinge stopping rule.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (value, gradient)``.
    x0 : ndarray
    grad0 : float
        Reference gradient norm (the gradient at zero).
    tol : float
    max_iter : int
    callback : callable, default=None
        ``callback(iteration, {"objective": value})`` after every iteration.

    Returns
    -------
    x : ndarray
    n_iter : int
    converged : bool
    """
    counter = {"it": 0}

    def on_iteration(intermediate_result):
        checkpoint()
        counter["it"] += 1
        if callback is not None:
            callback(counter["it"], {"objective": float(intermediate_result.fun)})

    result = scipy.optimize.minimize(
        fun, x0, jac=True, method="L-BFGS-B", callback=on_iteration,
        options={"maxiter": max_iter, "gtol": tol * max(grad0, 1e-300) / np.sqrt(x0.size),
                 "ftol": 0.0, "maxcor": 20},
    )
    grad_norm = np.linalg.norm(result.jac)
    return result.x, int(result.nit), bool(grad_norm <= tol * max(grad0, 1e-300) * 1.0001)
