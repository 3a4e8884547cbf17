"""Row-block evaluation of a kernel against a prepared second argument."""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from .._validation import dense_rows, sparse_row_bytes
from ._params import check_kernel

# Below this fraction of non-zeros a sparse row block is multiplied as sparse;
# above it, densifying the block and calling GEMM is faster (BLAS runs ~100x
# more flops per second than scipy's single-threaded sparse product).
_SPARSE_DENSITY_THRESHOLD = 0.01


@numba.njit(parallel=True, cache=True, fastmath=True)
def _l1_distances(X, Y, out):  # pragma: no cover - compiled
    n, d = X.shape
    m = Y.shape[0]
    for i in numba.prange(n):
        for j in range(m):
            acc = 0.0
            for k in range(d):
                acc += abs(X[i, k] - Y[j, k])
            out[i, j] = acc


@numba.njit(parallel=True, cache=True, fastmath={"nsz", "contract", "arcp"})
def _rbf_exponent(out, x_sqnorm, y_sqnorm, gamma, floor):  # pragma: no cover - compiled
    # one fused pass instead of five numpy passes; numpy's SIMD exp then finishes.
    # Exponents below ``floor`` become -inf (exp gives exactly 0): see exp_floor.
    n, m = out.shape
    two = out.dtype.type(2.0)
    zero = out.dtype.type(0.0)
    minus_inf = out.dtype.type(-np.inf)
    for i in numba.prange(n):
        xi = x_sqnorm[i]
        for j in range(m):
            v = -gamma * max(xi + y_sqnorm[j] - two * out[i, j], zero)
            out[i, j] = v if v >= floor else minus_inf


@numba.njit(parallel=True, cache=True)
def _scaled_exponent(out, scale, floor):  # pragma: no cover - compiled
    # out <- scale * out, with exponents below ``floor`` set to -inf (see above)
    n, m = out.shape
    minus_inf = out.dtype.type(-np.inf)
    for i in numba.prange(n):
        for j in range(m):
            v = scale * out[i, j]
            out[i, j] = v if v >= floor else minus_inf


def tiny_floor(dtype):
    """``sqrt`` of the smallest normal number of ``dtype``: 1.1e-19 in float32.

    Kernel values and Nystroem factors below it are set to exactly 0. The product
    of two numbers above it is never subnormal, and subnormal numbers make the
    GEMMs / TRMMs that follow several times slower on x86 (a narrow RBF kernel
    in float32 fills its blocks with them). The change is far below round-off:
    kernel values are at most 1 and feature rows have norm about 1.
    """
    return np.sqrt(np.finfo(dtype).tiny).astype(dtype)


def exp_floor(dtype):
    """The smallest exponent whose ``exp`` stays above :func:`tiny_floor`."""
    return np.log(tiny_floor(dtype)).astype(dtype)


def flush_tiny(A):
    """Set the entries of a float array below :func:`tiny_floor` in magnitude to 0, in place."""
    A[np.abs(A) < tiny_floor(A.dtype)] = 0
    return A


class _PreparedKernel:
    """A kernel with its second argument ``Y`` prepared once, evaluated on row blocks.

    ``evaluate(X_block, out)`` writes ``k(X_block, Y)`` into ``out`` (C-contiguous,
    shape ``(len(X_block), len(Y))``). Preparing Y once (shifting it, caching its
    squared norms) keeps repeated block evaluations cheap.
    """

    def __init__(self, kernel, Y, *, gamma, degree, coef0, kernel_params, dtype):
        self.kernel = check_kernel(kernel)
        self.dtype = np.dtype(dtype)
        self.gamma, self.degree, self.coef0 = gamma, degree, coef0
        self.kernel_params = dict(kernel_params or {})
        if callable(self.kernel):
            self.Y = Y
            return
        Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        Y = np.ascontiguousarray(Y, dtype=self.dtype)
        self.shift = None
        if self.kernel == "rbf":
            # Distances are shift invariant; centring both sides on Y's mean keeps
            # ||x||^2 + ||y||^2 - 2 x.y from cancelling catastrophically in float32.
            self.shift = Y.mean(axis=0, dtype=np.float64).astype(self.dtype)
            Y = Y - self.shift
            self.y_sqnorm = np.einsum("ij,ij->i", Y, Y)
            self.y_dot_shift = Y @ self.shift
        self.Y = Y

    @property
    def n_columns(self):
        return self.Y.shape[0]

    def bytes_per_row(self, X):
        """Temporary bytes one row of ``X`` costs in :meth:`evaluate`."""
        item = self.dtype.itemsize
        if callable(self.kernel) or self._use_sparse(X):
            return item * (self.n_columns + X.shape[1]) + sparse_row_bytes(X)
        return item * (2 * X.shape[1] + 1) + sparse_row_bytes(X)

    def _use_sparse(self, X):
        if not sp.issparse(X) or self.kernel == "laplacian":
            return False
        n, d = X.shape
        return X.nnz < _SPARSE_DENSITY_THRESHOLD * max(n * d, 1)

    def evaluate_rows(self, X, start, stop, out):
        """Write ``k(X[start:stop], Y)`` into ``out``."""
        if callable(self.kernel):
            self._evaluate_callable(X[start:stop], out)
        elif self._use_sparse(X):
            self._evaluate_sparse(X[start:stop], out)
        else:
            self._evaluate_dense(dense_rows(X, start, stop, self.dtype), out)
        return out

    def evaluate(self, Xb, out):
        """Write ``k(Xb, Y)`` into ``out`` for a block ``Xb`` already cut from the data."""
        if callable(self.kernel):
            self._evaluate_callable(Xb, out)
        elif self._use_sparse(Xb):
            self._evaluate_sparse(Xb, out)
        else:
            self._evaluate_dense(dense_rows(Xb, 0, Xb.shape[0], self.dtype), out)
        return out

    def _evaluate_callable(self, Xb, out):
        block = np.asarray(self.kernel(Xb, self.Y, **self.kernel_params))
        if block.shape != out.shape:
            raise ValueError(
                f"The callable kernel returned shape {block.shape}; expected "
                f"{out.shape} (rows of X by rows of Y)."
            )
        if not np.all(np.isfinite(block)):
            raise ValueError("The callable kernel returned NaN or infinite values.")
        out[...] = block

    def _evaluate_sparse(self, Xb, out):
        out[...] = (Xb @ self.Y.T).astype(self.dtype, copy=False)
        if self.kernel == "rbf":
            # Y is stored shifted by mu and sparse rows cannot be shifted without
            # densifying them, so expand (x - mu).(y - mu) and ||x - mu||^2 instead.
            out -= self.y_dot_shift[None, :]
            x_sqnorm = np.asarray(Xb.multiply(Xb).sum(axis=1), dtype=self.dtype).ravel()
            x_sqnorm += self.shift @ self.shift - 2.0 * (Xb @ self.shift)
            self._finish_rbf(out, x_sqnorm)
        elif self.kernel == "polynomial":
            self._finish_polynomial(out)

    def _evaluate_dense(self, Xb, out):
        if self.kernel == "laplacian":
            _l1_distances(Xb, self.Y, out)
            _scaled_exponent(out, out.dtype.type(-self.gamma), exp_floor(out.dtype))
            np.exp(out, out=out)
            return
        if self.kernel == "rbf":
            Xb = Xb - self.shift
        np.matmul(Xb, self.Y.T, out=out)
        if self.kernel == "rbf":
            self._finish_rbf(out, np.einsum("ij,ij->i", Xb, Xb))
        elif self.kernel == "polynomial":
            self._finish_polynomial(out)

    def _finish_rbf(self, out, x_sqnorm):
        dtype = out.dtype.type
        _rbf_exponent(out, x_sqnorm.astype(dtype, copy=False),
                      self.y_sqnorm.astype(dtype, copy=False), dtype(self.gamma),
                      exp_floor(out.dtype))
        np.exp(out, out=out)

    def _finish_polynomial(self, out):
        if self.gamma != 1.0:
            out *= self.gamma
        if self.coef0 != 0.0:
            out += self.coef0
        np.power(out, self.degree, out=out)
