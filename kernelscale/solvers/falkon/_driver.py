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
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._planner import falkon_plan
from .._cg import conjugate_gradient
from ._operator import ChunkedKernelOperator, KernelOperator
from ._preconditioner import FalkonPreconditioner
from ._settings import FalkonOptions

__all__ = ["falkon", "falkon_system", "falkon_solve", "falkon_memory_plan", "FalkonSystem"]


def falkon(X, Y, centers, kernel, *, alpha, center_indices=None, weights=None,
           options=None):
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
    options : FalkonOptions, default=None
        Iterations, tolerance, dtype, memory budget, progress (None: the defaults).

    Returns
    -------
    beta : ndarray of shape (m, n_targets)
    info : dict
        ``n_iter``, ``residuals`` (list of arrays, one per iteration),
        ``converged``, ``breakdown`` (per target: the CG iteration at which
        the system stopped being positive definite to working precision, or 0),
        ``kernel_kept``, ``n_rows``, ``plan``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import RBF
    >>> from kernelscale.solvers.falkon import FalkonOptions, falkon
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> Y = np.sin(X[:, :1])
    >>> beta, info = falkon(X, Y, X[:50], RBF(0.5), alpha=0.1, center_indices=np.arange(50),
    ...                     options=FalkonOptions(dtype=np.float64))
    >>> beta.shape, bool(info["converged"])
    ((50, 1), True)
    """
    options = FalkonOptions() if options is None else options
    system = falkon_system(X, centers, kernel, options, Y=Y, weights=weights,
                           center_indices=center_indices)
    return falkon_solve(system, alpha, options)


@dataclass
class FalkonSystem:
    """FALKON's normal equations ``(K^T D K / W + lam K_mm) beta = rhs``, before the penalty.

    ``operator.normal_apply(V)`` is ``K^T D K V``; ``rhs`` is ``K^T D Y / W``; ``plan``
    the memory plan of in-memory data (None for a row source, whose chunks are planned
    as they come).
    """

    operator: Any
    K_mm: Any
    rhs: np.ndarray
    weight_total: float
    n_rows: int
    plan: Any = None


def falkon_system(data, centers, kernel, options, *, Y=None, weights=None, center_indices=None,
                  encode=None):
    """The system FALKON solves, for arrays in memory or a row source alike.

    Parameters
    ----------
    data : {ndarray, sparse matrix} or RowSource
        The rows; a row source is read one chunk at a time on every pass.
    centers : ndarray of shape (m, n_features)
    kernel : kernelscale.kernels.Kernel
    options : FalkonOptions
    Y, weights : ndarray, default=None
        In-memory data's targets (n, t) and row weights.
    center_indices : ndarray of int, default=None
        Rows of in-memory ``data`` the centres are (``K_mm`` is read off a kept ``K``).
    encode : callable, default=None
        A row source's ``encode(y, w) -> (Y, S)``: each chunk's targets and weights.

    Returns
    -------
    system : FalkonSystem
    """
    dtype = np.dtype(options.dtype)
    K_mm, plan, budget = None, None, options.memory_budget
    if encode is not None:
        operator = ChunkedKernelOperator(data, encode, centers, kernel, dtype, budget)
        rhs, weight_total = operator.targets()
        n_rows = int(data.n_rows)
    else:
        n_rows = data.shape[0]
        weight_total = float(len(Y) if weights is None else np.sum(weights))
        plan = falkon_memory_plan(data, centers, kernel, dtype, Y.shape[1], budget)
        budget = plan.block_bytes
        operator = KernelOperator(data, centers, kernel, dtype, budget, weights,
                                  keep=plan.choice == "kept")
        K_mm = operator.center_rows(center_indices)
        rhs = operator.normal_apply(None, np.asarray(Y, dtype=dtype))
    if K_mm is None:
        K_mm = kernel.gram(np.asarray(centers, dtype=dtype), memory_budget=budget)
    return FalkonSystem(operator, K_mm, rhs / weight_total, weight_total, n_rows, plan)


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


def falkon_solve(system, alpha, options):
    """Preconditioned CG on a :class:`FalkonSystem` with penalty ``alpha``.

    Returns ``(beta, info)`` as :func:`falkon` does. ``options.monitor(iteration,
    relative_residuals)`` is called after every iteration (cheap: for progress
    bars), ``options.callback(iteration, beta)`` with the coefficients (one extra
    preconditioner application). The system's ``K_mm`` is released once factored.
    """
    start_time = time.perf_counter()
    operator, weight_total = system.operator, system.weight_total
    lam = alpha / weight_total
    dtype, verbose = options.dtype, options.verbose
    monitor, callback = options.monitor, options.callback

    def report(iteration, x, relative):
        if verbose:
            print(f"[FALKON] iter {iteration:4d}  max residual {relative.max():.3e}  "
                  f"{time.perf_counter() - start_time:8.2f} s", flush=True)
        if monitor is not None:
            monitor(iteration, relative)
        if callback is not None:
            callback(iteration, precond.apply(x) if precond is not None else x)

    K_mm = system.K_mm
    if options.preconditioner:
        precond = FalkonPreconditioner(K_mm, lam, dtype)
        system.K_mm = K_mm = None  # the factors replace it
        apply = precond.system(operator, weight_total)
        u, history, converged, breakdown = conjugate_gradient(
            apply, precond.apply_transpose(system.rhs), max_iter=options.max_iter,
            tol=options.tol, callback=report)
        beta = precond.apply(u)
    else:
        precond = None

        def apply(V):
            return operator.normal_apply(V) / weight_total + lam * (K_mm @ V)

        beta, history, converged, breakdown = conjugate_gradient(
            apply, system.rhs, max_iter=options.max_iter, tol=options.tol, callback=report)
    kept = None if system.plan is None else operator.kept is not None
    return beta, {"n_iter": len(history), "residuals": history, "converged": converged,
                  "breakdown": breakdown, "kernel_kept": kept, "n_rows": system.n_rows,
                  "plan": system.plan}
