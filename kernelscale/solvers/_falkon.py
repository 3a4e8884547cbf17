"""Nystrom kernel ridge regression by preconditioned conjugate gradient (FALKON).

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
factors are m x m Cholesky factors (O(m^3), in the kernel blocks' dtype); each
CG iteration costs one pass over ``K_nm`` (O(n m t) for t right-hand sides),
computed block by block on the fly or kept whole when it fits in the memory
budget, and four triangular solves (both kinds of product by ``_skinny``).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg

from .._validation import MemoryBudgetError, iter_row_blocks
from ._skinny import normal_product, solve_upper

__all__ = [
    "KernelOperator", "ChunkedKernelOperator", "FalkonPreconditioner", "conjugate_gradient",
    "falkon", "falkon_solve",
]

# Largest jitter (relative to the mean diagonal of K_mm) tried before giving up
# on a Cholesky factorisation of the centres' kernel matrix.
_MAX_RELATIVE_JITTER = 1e-2


def _restored(M, diagonal):
    """Symmetric ``M`` rebuilt from its strict lower triangle and ``diagonal``."""
    lower = np.tril(M, -1)
    M = np.asfortranarray(lower + lower.T)
    np.einsum("ii->i", M)[:] = diagonal
    return M


class KernelOperator:
    """``K(X, C)`` applied in row blocks, kept whole when it fits in ``memory_budget``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    centers : ndarray of shape (m, n_features)
    kernel : kernelscale.kernels.Kernel
    dtype : numpy dtype
        dtype of the kernel blocks and of the GEMMs on them (sums across blocks
        are float64).
    memory_budget : int
        Bytes for the kernel matrix if kept, else for one block and its temporaries.
    weights : ndarray of shape (n_samples,), default=None
    """

    def __init__(self, X, centers, kernel, dtype, memory_budget, weights=None):
        self.X = X
        self.dtype = np.dtype(dtype)
        self.weights = None if weights is None else np.asarray(weights, dtype=self.dtype)
        self.kernel = kernel.prepare(centers, self.dtype)
        n, m = X.shape[0], centers.shape[0]
        item = self.dtype.itemsize
        self.per_row = self.kernel.bytes_per_row(X) + item * m
        self.kept = None
        if n * m * item <= memory_budget:
            self.kept = np.empty((n, m), dtype=self.dtype)
            for start, stop in iter_row_blocks(n, self.kernel.bytes_per_row(X),
                                               memory_budget, what="a kernel block"):
                self.kernel.evaluate_rows(X, start, stop, self.kept[start:stop])
            self.blocks = [(0, n)]
        else:
            self.blocks = list(iter_row_blocks(n, self.per_row, memory_budget,
                                               what="a block of K(X, centres)"))

    @property
    def shape(self):
        return self.X.shape[0], self.kernel.n_columns

    def _block(self, start, stop):
        if self.kept is not None:
            return self.kept[start:stop]
        out = np.empty((stop - start, self.kernel.n_columns), dtype=self.dtype)
        return self.kernel.evaluate_rows(self.X, start, stop, out)

    def normal_apply(self, V=None, Y=None):
        """Return ``K^T D (K V + Y)`` (float64, shape (m, t)); ``V`` or ``Y`` may be None."""
        out = None
        for start, stop in self.blocks:
            part = normal_product(
                self._block(start, stop), V, None if Y is None else Y[start:stop],
                None if self.weights is None else self.weights[start:stop],
            )
            out = part if out is None else out + part
        return out

    def center_rows(self, indices):
        """``K(C, C)`` read off the kept matrix when the centres are rows ``indices`` of X."""
        if self.kept is None or indices is None:
            return None
        return self.kept[indices]


def _upper_cholesky(M, what, rebuild=None):
    """Upper Cholesky factor of ``M``, computed in place, with the smallest jitter that works.

    ``M`` is F-contiguous and only its upper triangle is read; the factor
    overwrites it (no m x m copy: at m = 10,000 each copy is 400 MB). The
    jitter starts at the dtype's resolution times ``m`` (FALKON's choice) and
    grows until the factorisation succeeds: a kernel matrix is only positive
    semi-definite and round-off makes its smallest eigenvalues slightly
    negative. After a failed try ``rebuild()`` returns ``M`` afresh; without
    it, ``M`` must be symmetric and is restored from its untouched lower
    triangle and a saved diagonal.
    """
    m = M.shape[0]
    diagonal = np.einsum("ii->i", M).copy()
    scale = max(float(np.mean(diagonal)), np.finfo(float).tiny)
    jitter = np.finfo(M.dtype).eps * m * scale
    while True:
        np.einsum("ii->i", M)[:] += jitter
        potrf = scipy.linalg.lapack.get_lapack_funcs("potrf", (M,))
        factor, info = potrf(M, lower=0, overwrite_a=1, clean=0)
        if info == 0:
            return factor, jitter
        if info < 0:  # pragma: no cover - LAPACK argument error
            raise RuntimeError(f"LAPACK potrf failed with info={info}.")
        jitter *= 100.0
        if jitter > _MAX_RELATIVE_JITTER * scale:
            raise ValueError(
                f"The kernel matrix of the {what} is not positive definite even with "
                f"a jitter of {_MAX_RELATIVE_JITTER:g} times its mean diagonal; the "
                "kernel is not positive definite on these points (check the kernel "
                "and its parameters)."
            )
        M = rebuild() if rebuild is not None else _restored(M, diagonal)


class FalkonPreconditioner:
    """FALKON's ``B = T^-1 A^-1`` from the centres' kernel matrix.

    ``T^T T = K_mm + jitter I`` and ``A^T A = T T^T / m + lam I``, factorised in
    ``dtype`` (float32 halves the O(m^3) cost; CG itself runs in float64).

    Parameters
    ----------
    K_mm : ndarray of shape (m, m)
        Symmetric; overwritten when it already has ``dtype`` (pass a copy to keep it).
    lam : float
        The ridge ``alpha / W`` (>= 0).
    dtype : numpy dtype
    """

    def __init__(self, K_mm, lam, dtype):
        m = K_mm.shape[0]
        self.dtype = np.dtype(dtype)
        # A symmetric C-ordered matrix is its own transpose: .T is the same
        # values in Fortran order, which LAPACK factorises without a copy.
        work = np.asarray(K_mm, dtype=self.dtype)
        work = work.T if work.flags.c_contiguous else np.asfortranarray(work)
        self.T, self.jitter = _upper_cholesky(work, "centres")
        lauum = scipy.linalg.lapack.get_lapack_funcs("lauum", (self.T,))

        def gram():
            TTt, info = lauum(self.T, lower=0)  # upper triangle of T T^T, O(m^3 / 3)
            if info != 0:  # pragma: no cover - LAPACK argument error
                raise RuntimeError(f"LAPACK lauum failed with info={info}.")
            TTt /= m
            np.einsum("ii->i", TTt)[:] += lam
            return TTt

        self.A, _ = _upper_cholesky(gram(), "preconditioner", gram)
        self.lam = lam

    def apply(self, U):
        """``B U = T^-1 A^-1 U`` (float64)."""
        return solve_upper(self.T, solve_upper(self.A, U)).astype(np.float64)

    def apply_transpose(self, V):
        """``B^T V = A^-T T^-T V`` (float64)."""
        return solve_upper(self.A, solve_upper(self.T, V, True), True).astype(np.float64)

    def system(self, operator, weight_total):
        """``u -> B^T H B u``, using ``K_mm + jitter I = T^T T`` for the penalty term."""

        def apply(U):
            # Triangular solves with a few right-hand sides: ``solve_upper``,
            # not LAPACK's trtrs, which spends longer packing the factor than
            # solving (see ``_skinny``).
            AU = solve_upper(self.A, U)
            data = solve_upper(self.T, operator.normal_apply(solve_upper(self.T, AU))
                               / weight_total, True)
            data += self.lam * AU
            return solve_upper(self.A, data, True).astype(np.float64)

        return apply


def conjugate_gradient(apply, b, *, maxiter, tol, callback=None):
    """Conjugate gradient on ``t`` independent systems sharing one operator.

    Each column runs its own CG (its own step sizes); every iteration applies
    the operator to all active columns at once (one pass over the data). A
    column stops when its residual falls to ``tol`` times its initial residual.

    Parameters
    ----------
    apply : callable
        ``apply(P) -> A P`` for ``P`` of shape (m, t); ``A`` symmetric positive definite.
    b : ndarray of shape (m, t)
    maxiter : int
    tol : float
    callback : callable, default=None
        ``callback(iteration, x, relative_residuals)`` after every iteration.

    Returns
    -------
    x : ndarray of shape (m, t)
    history : list of ndarray
        Relative residual of every column after each iteration.
    converged : bool
    """
    x = np.zeros_like(b)
    r = b.copy()
    rr = np.einsum("ij,ij->j", r, r)
    r0 = np.sqrt(rr)
    active = r0 > 0
    r0 = np.where(active, r0, 1.0)
    p = r.copy()
    history = []
    for iteration in range(1, maxiter + 1):
        if not active.any():
            break
        Ap = apply(p)
        pAp = np.einsum("ij,ij->j", p, Ap)
        # A non-positive curvature can only be round-off once the column has
        # converged as far as the arithmetic allows: stop that column there.
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
    converged = bool(np.all(history[-1] <= tol)) if history else True
    return x, history, converged


def falkon(
    X, Y, centers, kernel, *, alpha, center_indices=None, weights=None, maxiter=50, tol=1e-6,
    preconditioner=True, dtype=np.float32, memory_budget, verbose=0, callback=None,
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
    maxiter : int, default=50
    tol : float, default=1e-6
        Stop a target's CG when its relative residual is below ``tol``.
    preconditioner : bool, default=True
        False runs plain CG on ``H beta = b`` (for comparison only).
    dtype : numpy dtype, default=float32
        dtype of the kernel blocks ``K(X, C)``.
    memory_budget : int
    verbose : int, default=0
        Print iteration, largest residual and elapsed time.
    callback : callable, default=None
        ``callback(iteration, beta)`` with the current coefficients.

    Returns
    -------
    beta : ndarray of shape (m, n_targets)
    info : dict
        ``n_iter``, ``residuals`` (list of arrays, one per iteration),
        ``converged``, ``kernel_kept``.
    """
    m = centers.shape[0]
    weight_total = float(len(Y) if weights is None else np.sum(weights))
    lam = alpha / weight_total
    try:
        operator = KernelOperator(X, centers, kernel, dtype, memory_budget, weights)
    except MemoryBudgetError as exc:
        raise MemoryBudgetError(
            f"{exc} (one row of K(X, centres) has {m} entries; use fewer centres or a "
            "larger memory_budget)."
        ) from None
    K_mm = operator.center_rows(center_indices)
    if K_mm is None:
        K_mm = kernel.gram(np.asarray(centers, dtype=dtype), memory_budget=memory_budget)
    Yd = np.asarray(Y, dtype=dtype)
    rhs = operator.normal_apply(None, Yd) / weight_total
    beta, info = falkon_solve(operator, K_mm, rhs, lam=lam, weight_total=weight_total,
                              maxiter=maxiter, tol=tol, preconditioner=preconditioner,
                              dtype=dtype, verbose=verbose, callback=callback)
    info["kernel_kept"] = operator.kept is not None
    return beta, info


def falkon_solve(operator, K_mm, rhs, *, lam, weight_total, maxiter, tol, preconditioner,
                 dtype, verbose=0, callback=None):
    """Preconditioned CG on ``H beta = rhs`` given ``operator.normal_apply(V) = K^T D K V``.

    ``operator`` is a :class:`KernelOperator` or anything with the same
    ``normal_apply`` (the chunked operator of streamed / dask fits). Returns
    ``(beta, info)`` as :func:`falkon` does, without ``kernel_kept``.
    """
    start_time = time.perf_counter()

    def report(iteration, x, relative):
        if verbose:
            print(f"[FALKON] iter {iteration:4d}  max residual {relative.max():.3e}  "
                  f"{time.perf_counter() - start_time:8.2f} s", flush=True)
        if callback is not None:
            callback(iteration, precond.apply(x) if precond is not None else x)

    if preconditioner:
        precond = FalkonPreconditioner(K_mm, lam, dtype)
        del K_mm
        system = precond.system(operator, weight_total)
        u, history, converged = conjugate_gradient(
            system, precond.apply_transpose(rhs), maxiter=maxiter, tol=tol, callback=report,
        )
        beta = precond.apply(u)
    else:
        precond = None

        def system(V):
            return operator.normal_apply(V) / weight_total + lam * (K_mm @ V)

        beta, history, converged = conjugate_gradient(
            system, rhs, maxiter=maxiter, tol=tol, callback=report,
        )
    return beta, {"n_iter": len(history), "residuals": history, "converged": converged}


def _normal_part(X, y, w, spec, encode, V, budget):
    from ._chunked_solvers import check_finite_chunk

    check_finite_chunk(X)
    centers, kernel, dtype = spec
    Y, S = encode(y, w)
    unit = S is None or np.all(S == 1.0)
    operator = KernelOperator(X, centers, kernel, dtype, budget, None if unit else S)
    if V is None:
        return operator.normal_apply(None, np.asarray(Y, dtype=dtype)), float(
            len(Y) if S is None else np.sum(S))
    return operator.normal_apply(V)


class ChunkedKernelOperator:
    """``K(X, C)^T D K(X, C) V`` summed over the chunks of a row source (one pass each).

    Parameters
    ----------
    source : RowSource
    encode : callable
        ``encode(y, w) -> (Y, S)``: targets and row weights of a chunk.
    centers : ndarray of shape (m, n_features)
    kernel : kernelscale.kernels.Kernel
    dtype : numpy dtype
    memory_budget : int
        Bytes for one chunk's kernel blocks.
    """

    kept = None

    def __init__(self, source, encode, centers, kernel, dtype, memory_budget):
        self.source = source
        self.encode = encode
        self.spec = source.share((np.asarray(centers, dtype=dtype), kernel, np.dtype(dtype)))
        self.memory_budget = memory_budget

    def targets(self):
        """``(K^T D Y, total weight)``: the right-hand side's pass."""
        return self.source.map_reduce(
            _normal_part, (self.spec, self.encode, None, self.memory_budget))

    def normal_apply(self, V):
        return self.source.map_reduce(
            _normal_part, (self.spec, self.encode, np.asarray(V), self.memory_budget))
