"""FALKON's Cholesky preconditioner, both factors in one m x m buffer.

``B = T^-1 A^-1`` with ``T^T T = K_mm + jitter I`` and ``A^T A = T T^T / m + lam I``.
As in FALKON's own code, ``T^T`` lives in the lower triangle of one C-ordered
buffer and ``A`` in its upper triangle, their diagonals in two vectors: at
m = 10,000 in float32 that is one 400 MB matrix instead of two. The buffer is
the centres' kernel matrix itself when it already has the factor dtype.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.linalg

from ..._parallel import large_symmetric_blas, parallel_guard
from ._settings import FALKON_SETTINGS
from ._triangular import solve_triangular

__all__ = ["FalkonPreconditioner", "MAX_RELATIVE_JITTER"]

MAX_RELATIVE_JITTER = FALKON_SETTINGS.max_relative_jitter


@parallel_guard
@numba.njit(parallel=True, cache=True)
def _mirror(F, lower_to_upper):  # pragma: no cover - compiled
    """Copy one strict triangle of ``F`` onto the other, in place (no m x m temporary)."""
    m = F.shape[0]
    for i in numba.prange(m):
        for j in range(i + 1, m):
            if lower_to_upper:
                F[i, j] = F[j, i]
            else:
                F[j, i] = F[i, j]


def _lapack(name, W):
    return scipy.linalg.lapack.get_lapack_funcs(name, (W,))


def _factor_in_place(W, lower, what, rebuild):
    """Cholesky factor of one triangle of F-ordered ``W`` in place, with the smallest jitter.

    The jitter starts at the dtype's resolution times ``m`` (FALKON's choice) and
    grows a hundredfold per failed try until the factorisation succeeds: a
    kernel matrix is only positive semi-definite and round-off makes its
    smallest eigenvalues slightly negative. The last try is at the cap
    (:data:`MAX_RELATIVE_JITTER` times the mean diagonal) itself, whatever the
    start: float32 with m > 839 starts above a hundredth of the cap, and a
    hundredfold step from there would skip it. After a failed try
    ``rebuild()`` restores the triangle.
    """
    m = W.shape[0]
    diagonal = np.diagonal(W).copy()
    scale = max(float(np.mean(diagonal)), np.finfo(float).tiny)
    cap = MAX_RELATIVE_JITTER * scale
    jitter = min(np.finfo(W.dtype).eps * m * scale, cap)
    potrf = _lapack("potrf", W)
    while True:
        np.einsum("ii->i", W)[:] = diagonal + jitter
        factor, info = potrf(W, lower=int(lower), overwrite_a=1, clean=0)
        if info == 0:
            if not np.shares_memory(factor, W):  # pragma: no cover - f2py copied
                W[...] = factor
            return jitter
        if info < 0:  # pragma: no cover - LAPACK argument error
            raise RuntimeError(f"LAPACK potrf failed with info={info}.")
        if jitter >= cap:
            raise ValueError(
                f"The kernel matrix of the {what} is not positive definite even with a jitter "
                f"of {MAX_RELATIVE_JITTER:g} times its mean diagonal ({jitter:.3g}); the "
                "kernel is not positive definite on these points (check the kernel and its "
                "parameters).")
        jitter = min(jitter * 100.0, cap)
        rebuild()


class FalkonPreconditioner:
    """FALKON's ``B = T^-1 A^-1`` from the centres' kernel matrix, in one m x m buffer.

    Parameters
    ----------
    K_mm : ndarray of shape (m, m)
        Symmetric. Overwritten (used as the buffer) when it is C-contiguous of
        ``dtype``; pass a copy to keep it.
    lam : float
        The ridge ``alpha / W`` (>= 0).
    dtype : numpy dtype
        dtype of the factors (float32 halves the O(m^3) cost; CG runs in float64).

    Attributes
    ----------
    buffer : ndarray of shape (m, m)
        ``T^T`` below the diagonal, ``A`` above it.
    diag_T, diag_A : ndarray of shape (m,)
    jitter : float
        What was added to ``K_mm``'s diagonal for ``T`` to exist.
    """

    def __init__(self, K_mm, lam, dtype):
        m = K_mm.shape[0]
        self.dtype = np.dtype(dtype)
        self.lam = lam
        F = K_mm if (K_mm.dtype == self.dtype and K_mm.flags.c_contiguous) \
            else np.array(K_mm, dtype=self.dtype, order="C")
        W = F.T  # the same memory in Fortran order, what LAPACK factorises in place
        k_diagonal = np.diagonal(W).copy()

        def restore_kernel():
            _mirror(F, False)  # F's upper (W's lower) still holds K_mm
            np.einsum("ii->i", W)[:] = k_diagonal

        with large_symmetric_blas(m, self.dtype.itemsize):
            self._factor(W, F, restore_kernel, lam)
        self.buffer = F

    def _factor(self, W, F, restore_kernel, lam):
        m = W.shape[0]
        # W's upper triangle <- T (F's lower triangle holds T^T)
        self.jitter = _factor_in_place(W, False, "centres", restore_kernel)
        self.diag_T = np.diagonal(W).copy()
        lauum = _lapack("lauum", W)

        def gram():
            # W's lower <- T^T as well, then lauum turns it into T T^T (lower part),
            # leaving T in W's upper triangle untouched
            np.einsum("ii->i", W)[:] = self.diag_T
            _mirror(F, True)
            product, info = lauum(W, lower=1, overwrite_c=1)
            if info != 0:  # pragma: no cover - LAPACK argument error
                raise RuntimeError(f"LAPACK lauum failed with info={info}.")
            if not np.shares_memory(product, W):  # pragma: no cover - f2py copied
                W[...] = product
            _scale_lower(W, 1.0 / m)
            np.einsum("ii->i", W)[:] += lam

        gram()
        # W's lower triangle <- A^T (F's upper triangle holds A)
        _factor_in_place(W, True, "preconditioner", gram)
        self.diag_A = np.diagonal(W).copy()

    def _T(self, B, trans):
        return solve_triangular(self.buffer, B, lower=True, trans=not trans, diag=self.diag_T)

    def _A(self, B, trans):
        return solve_triangular(self.buffer, B, lower=False, trans=trans, diag=self.diag_A)

    def apply(self, U):
        """``B U = T^-1 A^-1 U`` (float64)."""
        return self._T(self._A(U, False), False).astype(np.float64)

    def apply_transpose(self, V):
        """``B^T V = A^-T T^-T V`` (float64)."""
        return self._A(self._T(V, True), True).astype(np.float64)

    def system(self, operator, weight_total):
        """``u -> B^T H B u``, using ``K_mm + jitter I = T^T T`` for the penalty term."""

        def apply(U):
            AU = self._A(U, False)
            data = self._T(operator.normal_apply(self._T(AU, False)) / weight_total, True)
            data += self.lam * AU
            return self._A(data, True).astype(np.float64)

        return apply


@parallel_guard
@numba.njit(parallel=True, cache=True)
def _scale_lower(W, factor):  # pragma: no cover - compiled
    """``W[i, j] *= factor`` for ``i >= j`` (W's lower triangle and diagonal)."""
    m = W.shape[0]
    for j in numba.prange(m):
        for i in range(j, m):
            W[i, j] *= factor
