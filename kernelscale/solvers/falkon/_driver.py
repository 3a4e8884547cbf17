"""The FALKON driver: right-hand side, preconditioner, CG, coefficients.

With centres ``C`` (m rows), weights ``w`` (total ``W``) and ``lam = alpha / W``,
the Nystrom-restricted kernel ridge problem

    min_beta  (1/W) sum_i w_i (k(x_i, C) beta - y_i)^2 + lam beta^T K_mm beta

has the normal equations ``H beta = b`` with ``H = K_nm^T D K_nm / W + lam K_mm``
and ``b = K_nm^T D y / W`` (``D = diag(w)``). For ``m = n`` and ``K`` invertible
this is exactly kernel ridge regression with penalty ``alpha``.

``H`` is as ill-conditioned as ``K`` squared, so plain CG crawls. FALKON (Rudi,
Carratino & Rosasco 2017) preconditions with ``B = T^-1 A^-1`` where
``T^T T = K_mm`` and ``A^T A = T T^T / m + lam I``: for uniformly sampled
centres ``K_nm^T K_nm / n ~ K_mm^2 / m``, so ``B^T H B`` is close to the
identity and CG converges in a few tens of iterations whatever ``lam``. Both
factors are m x m Cholesky factors (O(m^3), in the kernel blocks' dtype), kept
in one m x m buffer (``_preconditioner``); each CG iteration costs one pass over
``K_nm`` (O(n m t) for t right-hand sides, ``_products``), computed block by
block on the fly or kept whole when it fits in the memory budget
(``_operator``), and four triangular solves (``_triangular``).
"""

from __future__ import annotations

import time

import numpy as np

from ..._planner import falkon_plan
from .._cg import conjugate_gradient
from ._operator import KernelOperator
from ._preconditioner import FalkonPreconditioner

__all__ = ["falkon", "falkon_solve", "falkon_memory_plan"]


def falkon(
    X, Y, centers, kernel, *, alpha, center_indices=None, weights=None, max_iter=50, tol=1e-6,
    preconditioner=True, dtype=np.float32, memory_budget, verbose=0, callback=None,
    monitor=None,
):
    """Solve Nystrom kernel ridge regression with FALKON's preconditioned CG.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    Y : ndarray of shape (n_samples, n_targets)
    centers : ndarray of shape (m, n_features)
    kernel : kernelscale.kernels.Kernel
    alpha : float
        Penalty of ``sum_i w_i (f(x_i) - y_i)^2 + alpha ||f||^2`` (>= 0), as in
        :class:`sklearn.kernel_ridge.KernelRidge`.
    center_indices : ndarray of int, default=None
        Rows of ``X`` the centres are, if they are; ``K_mm`` is then read off
        ``K(X, C)`` when that is kept.
    weights : ndarray of shape (n_samples,), default=None
    max_iter : int, default=50
    tol : float, default=1e-6
        Stop a target's CG when its relative residual is below ``tol``.
    preconditioner : bool, default=True
        False runs plain CG on ``H beta = b`` (for comparison only).
    dtype : numpy dtype, default=float32
        dtype of the kernel blocks ``K(X, C)``.
    memory_budget : int
    verbose : int, default=0
        Print iteration, largest residual and elapsed time.
    monitor : callable, default=None
        ``monitor(iteration, relative_residuals)`` after every iteration.
    callback : callable, default=None
        ``callback(iteration, beta)`` with the current coefficients.

    Returns
    -------
    beta : ndarray of shape (m, n_targets)
    info : dict
        ``n_iter``, ``residuals`` (list of arrays, one per iteration),
        ``converged``, ``breakdown`` (per target: the CG iteration at which
        the system stopped being positive definite to working precision, or 0),
        ``kernel_kept``.
    """
    weight_total = float(len(Y) if weights is None else np.sum(weights))
    lam = alpha / weight_total
    plan = falkon_memory_plan(X, centers, kernel, dtype, Y.shape[1], memory_budget)
    operator = KernelOperator(X, centers, kernel, dtype, plan.block_bytes, weights,
                              keep=plan.choice == "kept")
    K_mm = operator.center_rows(center_indices)
    if K_mm is None:
        K_mm = kernel.gram(np.asarray(centers, dtype=dtype), memory_budget=plan.block_bytes)
    Yd = np.asarray(Y, dtype=dtype)
    rhs = operator.normal_apply(None, Yd) / weight_total
    beta, info = falkon_solve(operator, K_mm, rhs, lam=lam, weight_total=weight_total,
                              max_iter=max_iter, tol=tol, preconditioner=preconditioner,
                              dtype=dtype, verbose=verbose, callback=callback,
                              monitor=monitor)
    info["kernel_kept"] = operator.kept is not None
    info["n_rows"] = X.shape[0]
    info["plan"] = plan
    return beta, info


def falkon_memory_plan(X, centers, kernel, dtype, n_targets, memory_budget):
    """FALKON's plan for these data (:func:`kernelscale._planner.falkon_plan`), checked.

    Raises
    ------
    MemoryBudgetError
        When the m x m factors and one row block of ``K(X, C)`` do not fit,
        naming the budget that would.
    """
    m = centers.shape[0]
    itemsize = np.dtype(dtype).itemsize
    row = kernel.prepare(centers[:1], dtype).bytes_per_row(X) + itemsize * m
    plan = falkon_plan(f"FALKON on {X.shape[0]} rows and {m} centres", n=X.shape[0], m=m,
                       n_targets=n_targets, itemsize=itemsize, budget=memory_budget,
                       block_row_bytes=row)
    if plan.choice == "recomputed":
        plan.least_plan.require(f" (the m x m preconditioner alone is {m} x {m}: use fewer "
                                "centres)")
    return plan


def falkon_solve(operator, K_mm, rhs, *, lam, weight_total, max_iter, tol, preconditioner,
                 dtype, verbose=0, callback=None, monitor=None):
    """Preconditioned CG on ``H beta = rhs`` given ``operator.normal_apply(V) = K^T D K V``.

    ``operator`` is a :class:`KernelOperator` or anything with the same
    ``normal_apply`` (the chunked operator of streamed / dask fits). Returns
    ``(beta, info)`` as :func:`falkon` does, without ``kernel_kept``.
    ``monitor(iteration, relative_residuals)`` is called after every iteration
    (cheap: for progress bars), ``callback(iteration, beta)`` with the
    coefficients (one extra preconditioner application).
    """
    start_time = time.perf_counter()

    def report(iteration, x, relative):
        if verbose:
            print(f"[FALKON] iter {iteration:4d}  max residual {relative.max():.3e}  "
                  f"{time.perf_counter() - start_time:8.2f} s", flush=True)
        if monitor is not None:
            monitor(iteration, relative)
        if callback is not None:
            callback(iteration, precond.apply(x) if precond is not None else x)

    if preconditioner:
        precond = FalkonPreconditioner(K_mm, lam, dtype)
        del K_mm
        system = precond.system(operator, weight_total)
        u, history, converged, breakdown = conjugate_gradient(
            system, precond.apply_transpose(rhs), max_iter=max_iter, tol=tol, callback=report,
        )
        beta = precond.apply(u)
    else:
        precond = None

        def system(V):
            return operator.normal_apply(V) / weight_total + lam * (K_mm @ V)

        beta, history, converged, breakdown = conjugate_gradient(
            system, rhs, max_iter=max_iter, tol=tol, callback=report,
        )
    return beta, {"n_iter": len(history), "residuals": history, "converged": converged,
                  "breakdown": breakdown}
