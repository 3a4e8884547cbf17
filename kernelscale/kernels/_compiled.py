"""Compiled loops of the kernel blocks and the floors that keep them free of subnormal numbers."""

from __future__ import annotations

import numba
import numpy as np

from .._parallel import parallel_guard

__all__ = ["l1_distances", "rbf_exponent", "scaled_exponent", "tiny_floor", "exp_floor",
           "flush_tiny", "shift_scale", "scaled_exp"]


@parallel_guard
@numba.njit(parallel=True, cache=True)
def _shift_scale(X, shift, scale, out):  # pragma: no cover - compiled
    # shift and scale carry the working precision: X[i, j] - shift[j] is computed
    # in the wider of X's and theirs
    n, d = X.shape
    for i in numba.prange(n):
        for j in range(d):
            out[i, j] = (X[i, j] - shift[j]) * scale[j]


def shift_scale(X, shift, scale, dtype):
    """``(X - shift) * scale`` written as ``dtype``, in one pass.

    ``scale`` is a number or one per column (per-feature kernel widths). The
    arithmetic runs in the wider of ``X``'s precision and ``dtype``: float64
    input keeps features of huge magnitude finite on their way to float32 blocks
    (the scaled values are of order 1), and float64 output of float32 input is
    float64 arithmetic.
    """
    work = np.result_type(X.dtype, dtype)
    out = np.empty(X.shape, dtype=dtype)
    shift = np.zeros(X.shape[1], dtype=work) if shift is None \
        else np.asarray(shift, dtype=work)
    scale = np.broadcast_to(np.asarray(scale, dtype=work), (X.shape[1],))
    _shift_scale(np.ascontiguousarray(X), shift, np.ascontiguousarray(scale), out)
    return out


@parallel_guard
@numba.njit(parallel=True, cache=True, fastmath=True)
def l1_distances(X, Y, out):  # pragma: no cover - compiled
    """``out[i, j] = ||X[i] - Y[j]||_1``."""
    n, d = X.shape
    m = Y.shape[0]
    for i in numba.prange(n):
        for j in range(m):
            acc = 0.0
            for k in range(d):
                acc += abs(X[i, k] - Y[j, k])
            out[i, j] = acc


@parallel_guard
@numba.njit(parallel=True, cache=True, fastmath={"nsz", "contract", "arcp"})
def rbf_exponent(out, x_sqnorm, y_sqnorm, floor):  # pragma: no cover - compiled
    """``out <- -(||x||^2 + ||y||^2 - 2 out)`` (``out`` holds ``x . y``), clipped at 0 from above.

    One fused pass instead of five numpy passes; numpy's SIMD exp then finishes.
    Exponents below ``floor`` become -inf (exp gives exactly 0): see :func:`exp_floor`.
    """
    n, m = out.shape
    two = out.dtype.type(2.0)
    zero = out.dtype.type(0.0)
    minus_inf = out.dtype.type(-np.inf)
    for i in numba.prange(n):
        xi = x_sqnorm[i]
        for j in range(m):
            v = -max(xi + y_sqnorm[j] - two * out[i, j], zero)
            out[i, j] = v if v >= floor else minus_inf


@parallel_guard
@numba.njit(parallel=True, cache=True, fastmath={"nsz", "contract", "arcp"})
def squared_distances(out, x_sqnorm, y_sqnorm):  # pragma: no cover - compiled
    """``out <- max(||x||^2 + ||y||^2 - 2 out, 0)`` (``out`` holds ``x . y``)."""
    n, m = out.shape
    two = out.dtype.type(2.0)
    zero = out.dtype.type(0.0)
    for i in numba.prange(n):
        xi = x_sqnorm[i]
        for j in range(m):
            out[i, j] = max(xi + y_sqnorm[j] - two * out[i, j], zero)


@parallel_guard
@numba.njit(parallel=True, cache=True)
def scaled_exponent(out, scale, floor):  # pragma: no cover - compiled
    """``out <- scale * out``, with exponents below ``floor`` set to -inf (see above)."""
    n, m = out.shape
    minus_inf = out.dtype.type(-np.inf)
    for i in numba.prange(n):
        for j in range(m):
            v = scale * out[i, j]
            out[i, j] = v if v >= floor else minus_inf


@parallel_guard
@numba.njit(parallel=True, cache=True, fastmath={"nsz", "contract", "arcp", "afn"})
def scaled_exp(D, scale, floor, out):  # pragma: no cover - compiled
    """``out <- exp(scale * D)``, 0 where the exponent is below ``floor`` (see above)."""
    n, m = D.shape
    zero = out.dtype.type(0.0)
    for i in numba.prange(n):
        for j in range(m):
            v = scale * D[i, j]
            out[i, j] = np.exp(v) if v >= floor else zero


def tiny_floor(dtype):
    """``sqrt`` of the smallest normal number of ``dtype``: 1.1e-19 in float32.

    Kernel values and Nystroem factors below it are set to exactly 0. The product
    of two numbers above it is never subnormal, and subnormal numbers make the
    GEMMs / TRMMs that follow several times slower on x86 (a narrow RBF kernel
    in float32 fills its blocks with them). The change is far below round-off:
    kernel values are at most 1 and feature rows have norm about 1.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import tiny_floor
    >>> float(tiny_floor(np.float32)) < 1e-18
    True
    """
    return np.sqrt(np.finfo(dtype).tiny).astype(dtype)


def exp_floor(dtype):
    """The smallest exponent whose ``exp`` stays above :func:`tiny_floor`."""
    return np.log(tiny_floor(dtype)).astype(dtype)


def flush_tiny(A):
    """Set the entries of a float array below :func:`tiny_floor` in magnitude to 0, in place.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import flush_tiny
    >>> flush_tiny(np.array([1e-30, 0.5], dtype=np.float32)).tolist()
    [0.0, 0.5]
    """
    A[np.abs(A) < tiny_floor(A.dtype)] = 0
    return A
