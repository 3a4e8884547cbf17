"""A float32 ``exp`` of kernel exponents that the compiler vectorises, fused with the exponent.

The RBF and Laplacian blocks end in ``exp`` of an exponent ``<= 0``. numpy's
float32 ``exp`` runs on one thread at ~1.3 ns an entry on this project's
machines (AVX2), numba's ``np.exp`` is a scalar call per entry (~8 ns), and on
low-dimensional data that pass costs more than the GEMM before it (an exact
SVM fit on 50,000 x 22 rows spent 1.6 of its 3.4 s in ``np.exp``). Here the
exponent and its ``exp`` are one pass per row, on all threads, with Cephes'
``expf`` written so that LLVM turns it into SIMD code: ``exp(x) = 2^n p(r)``
with ``n = round(x log2 e)``, ``r = x - n ln 2`` (two-part ``ln 2``) and a
degree-7 polynomial ``p``; ``2^n`` is built from its exponent bits. On
exponents in ``[exp_floor, 0]`` its error is below 1e-7 relative (numpy's
float32 ``exp``: 2e-7). float64 blocks keep numpy's ``exp``.
"""

from __future__ import annotations

import numba
import numpy as np

from .._parallel import parallel_guard

__all__ = ["exp_block32", "rbf_exp32"]

_LOG2E = np.float32(1.4426950408889634)
_LN2_HI = np.float32(0.693359375)  # few mantissa bits: n * _LN2_HI is exact
_LN2_LO = np.float32(-2.12194440e-4)
_P0 = np.float32(1.9875691500e-4)
_P1 = np.float32(1.3981999507e-3)
_P2 = np.float32(8.3334519073e-3)
_P3 = np.float32(4.1665795894e-2)
_P4 = np.float32(1.6666665459e-1)
_P5 = np.float32(5.0000001201e-1)


@numba.njit(cache=True, inline="always", fastmath={"nsz", "contract", "arcp"})
def _exp_into(x, j, out, bits, floor):  # pragma: no cover - compiled
    """``out[j] <- p(r)`` and ``bits[j] <-`` the bits of ``2^n`` (0 where ``x < floor``)."""
    below = x < floor
    x = min(max(x, floor), np.float32(0.0))
    n = np.floor(x * _LOG2E + np.float32(0.5))
    r = x - n * _LN2_HI - n * _LN2_LO
    p = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
    out[j] = p * (r * r) + r + np.float32(1.0)
    # the bits of the float 2^n; all-zero bits are +0.0, which zeroes the entry
    bits[j] = np.int32(0) if below else (np.int32(n) + np.int32(127)) << np.int32(23)


@numba.njit(cache=True, inline="always")
def _scale_by(out, bits):  # pragma: no cover - compiled
    scale = bits.view(np.float32)
    for j in range(out.size):
        out[j] = out[j] * scale[j]


@numba.njit(cache=True, inline="always", fastmath={"nsz", "contract", "arcp"})
def _exp_row(src, dst, scale, floor):  # pragma: no cover - compiled
    bits = np.empty(src.size, dtype=np.int32)
    for j in range(src.size):
        _exp_into(scale * src[j], j, dst, bits, floor)
    _scale_by(dst, bits)


@parallel_guard
@numba.njit(parallel=True, cache=True, fastmath={"nsz", "contract", "arcp"})
def _exp_rows(D, scale, floor, out):  # pragma: no cover - compiled
    for i in numba.prange(D.shape[0]):
        _exp_row(D[i], out[i], scale, floor)


@parallel_guard
@numba.njit(parallel=True, cache=True, fastmath={"nsz", "contract", "arcp"})
def _exp_rows_in_place(A, scale, floor):  # pragma: no cover - compiled
    # one row view read and written: two views of the same memory (D[i], out[i])
    # would fail LLVM's overlap check and run the scalar loop (3.5x slower)
    for i in numba.prange(A.shape[0]):
        row = A[i]
        _exp_row(row, row, scale, floor)


def exp_block32(D, scale, floor, out):
    """``out <- exp(scale * D)`` for float32 ``D`` with ``scale * D <= 0``.

    Entries whose exponent is below ``floor`` are exactly 0; ``out`` may be ``D``.
    """
    scale, floor = np.float32(scale), np.float32(floor)
    if out is D:
        _exp_rows_in_place(D, scale, floor)
    else:
        _exp_rows(D, scale, floor, out)
    return out


@parallel_guard
@numba.njit(parallel=True, cache=True, fastmath={"nsz", "contract", "arcp"})
def rbf_exp32(out, x_sqnorm, y_sqnorm, floor):  # pragma: no cover - compiled
    """``out <- exp(-max(||x||^2 + ||y||^2 - 2 out, 0))`` (float32; ``out`` holds ``x . y``).

    Entries whose exponent is below ``floor`` are exactly 0 (see ``exp_floor``).
    """
    n, m = out.shape
    two = np.float32(2.0)
    zero = np.float32(0.0)
    for i in numba.prange(n):
        bits = np.empty(m, dtype=np.int32)
        row = out[i]
        xi = x_sqnorm[i]
        for j in range(m):
            _exp_into(-max(xi + y_sqnorm[j] - two * row[j], zero), j, row, bits, floor)
        _scale_by(row, bits)
