"""Conjugate gradient on several systems that share one operator."""

from __future__ import annotations

import numpy as np

from .._clock import checkpoint

__all__ = ["conjugate_gradient"]


def conjugate_gradient(apply, b, *, max_iter, tol, callback=None):
    """Conjugate gradient on ``t`` independent systems sharing one operator.

    Each column runs its own CG (its own step sizes); every iteration applies
    the operator to all active columns at once (one pass over the data). A
    column stops when its residual falls to ``tol`` times its initial residual.

    Parameters
    ----------
    apply : callable
        ``apply(P) -> A P`` for ``P`` of shape (m, t); ``A`` symmetric positive definite.
    b : ndarray of shape (m, t)
    max_iter : int
    tol : float
    callback : callable, default=None
        ``callback(iteration, x, relative_residuals)`` after every iteration.

    Returns
    -------
    x : ndarray of shape (m, t)
    history : list of ndarray
        Relative residual of every column after each iteration.
    converged : bool
        Every column reached ``tol``.
    breakdown : ndarray of shape (t,), int
        For each column, the iteration at which CG broke down (a non-positive
        curvature ``p^T A p <= 0`` before reaching ``tol``: the operator is not
        positive definite to working precision), or 0. A broken-down column
        stops there and keeps its last iterate.
    """
    x = np.zeros_like(b)
    r = b.copy()
    rr = np.einsum("ij,ij->j", r, r)
    r0 = np.sqrt(rr)
    active = r0 > 0
    r0 = np.where(active, r0, 1.0)
    p = r.copy()
    history = []
    breakdown = np.zeros(b.shape[1], dtype=int)
    for iteration in range(1, max_iter + 1):
        if not active.any():
            break
        checkpoint()
        Ap = apply(p)
        pAp = np.einsum("ij,ij->j", p, Ap)
        # A non-positive curvature: the operator is not positive definite (to
        # working precision); that column cannot go on, and it is reported
        broke = active & ~(pAp > 0)
        breakdown[broke] = iteration
        active &= pAp > 0
        step = np.where(active, rr / np.where(active, pAp, 1.0), 0.0)
        x += step * p
        r -= step * Ap
        rr_new = np.einsum("ij,ij->j", r, r)
        relative = np.sqrt(rr_new) / r0
        history.append(relative)
        if callback is not None:
            callback(iteration, x, relative)
        active &= relative > tol
        beta = np.where(active, rr_new / np.where(rr > 0, rr, 1.0), 0.0)
        p = r + beta * p
        rr = rr_new
    converged = (bool(np.all(history[-1] <= tol)) if history else True) and not breakdown.any()
    return x, history, converged, breakdown
