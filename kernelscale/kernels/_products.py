"""Kernel products ``X Y^T`` on numba's threads, each part one single-threaded BLAS call.

Why: OpenBLAS's worker threads spin for about 0.1 s after every parallel
product, waiting for the next one. The exact SVM computes a batch of kernel
rows (one GEMM) every few milliseconds and follows each with numba-parallel
passes (the ``exp``, the gradient update, the row compaction); on two cores
those passes shared the second core with a spinning BLAS thread and ran at
about one core's speed (measured: the float32 ``exp`` of a 256 x 20,000 block
0.73 ns an entry right after the product, 0.38 ns with BLAS's wait shortened
through ``OPENBLAS_THREAD_TIMEOUT``; whole fits 25-30% faster). A library
cannot shorten that wait once numpy is loaded, so while a caller holds
:func:`blas_on_numba_threads`, BLAS runs on one thread and :func:`gram_product`
splits the product's rows across numba's threads instead, each calling
scipy's BLAS on its part: one thread pool, and nothing spinning beside it.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import get_cython_function_address, intrinsic

from .._parallel import parallel_guard

__all__ = ["blas_on_numba_threads", "gram_product"]

# below this many output entries a part's BLAS call costs more than its split saves
_MIN_ENTRIES = 1 << 16

_hold = {"owner": None, "limiter": None}
_hold_lock = threading.Lock()
_depth = threading.local()  # nesting of the holds on each thread
_gemm = {}


@contextmanager
def blas_on_numba_threads():
    """Hold BLAS at one thread and split :func:`gram_product` across numba's threads.

    Process-wide: the first holder limits BLAS (through threadpoolctl) and
    restores it when it leaves, on its own thread (OpenBLAS may ignore a limit
    changed from another thread); holders that enter meanwhile share the limit
    while it lasts, and their products go back to BLAS's own threads once the
    first one has left. Meant for loops that alternate kernel products with
    numba-parallel work, such as SMO's.

    The limit cannot be scoped to a thread: BLAS's thread count is one setting
    of the process. So while an exact model fits or predicts (the holders:
    ``smo`` and the exact models' ``predict``), a NumPy / SciPy product that
    another thread of the same process runs gets one BLAS thread too; it is
    restored when the fit or prediction ends. A program that needs BLAS's
    threads elsewhere at the same time can run the exact models in a separate
    process.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import blas_on_numba_threads, gram_product
    >>> X = np.ones((3, 2), dtype=np.float32)
    >>> out = np.empty((3, 3), dtype=np.float32)
    >>> with blas_on_numba_threads():
    ...     float(gram_product(X, X, out)[0, 0])
    2.0
    """
    me = threading.get_ident()
    depth = getattr(_depth, "value", 0)
    _depth.value = depth + 1
    with _hold_lock:
        if _hold["owner"] is None and depth == 0:
            limiter = _controller().limit(limits=1, user_api="blas")
            if all(lib["num_threads"] == 1 for lib in _controller().select(
                    user_api="blas").info()):
                _hold["owner"], _hold["limiter"] = me, limiter
            else:  # the limit did not take: keep BLAS's threads, and matmul
                limiter.restore_original_limits()
    try:
        yield
    finally:
        _depth.value = depth
        with _hold_lock:
            if _hold["owner"] == me and depth == 0:
                _hold["limiter"].restore_original_limits()
                _hold["owner"], _hold["limiter"] = None, None


def _controller():
    # found once (a fresh search of the loaded libraries costs ~1 ms a hold, and
    # SMO holds once a solve); scipy's BLAS, which the parts call, is loaded first
    if "controller" not in _hold:
        from threadpoolctl import ThreadpoolController

        _gemm_address(np.float32)
        _hold["controller"] = ThreadpoolController()
    return _hold["controller"]


def gram_product(X, Y, out):
    """Write ``X @ Y.T`` into ``out``.

    Inside :func:`blas_on_numba_threads`, with more than one numba thread, the
    rows of ``X`` are split across numba's threads (each part one BLAS call on
    one thread); elsewhere, or for other layouts and small products, it is
    ``np.matmul`` with BLAS's own threads.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (m, d)
    out : ndarray of shape (n, m)

    Returns
    -------
    out : ndarray of shape (n, m)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(4.0).reshape(2, 2)
    >>> gram_product(X, X, np.empty((2, 2)))
    array([[ 1.,  3.],
           [ 3., 13.]])
    """
    parts = min(numba.get_num_threads(), X.shape[0])
    if X.shape[0] == 1 and Y.shape[0] > 1:
        # one row is a matrix-vector product to numpy, and on some CPUs OpenBLAS's gemv
        # rounds otherwise than its gemm (an AMD EPYC: 1 float32 ulp in 399 of 800
        # entries): the row twice through the matrix product gives it the bits it has
        # in any batch (scikit-learn's check_methods_subset_invariance transforms row by
        # row)
        out[...] = np.matmul(np.repeat(X, 2, axis=0), Y.T)[:1]
        return out
    if (_hold["owner"] is None or parts < 2 or out.size < _MIN_ENTRIES or X.shape[1] == 0
            or not _blas_ready(X, Y, out)):
        return np.matmul(X, Y.T, out=out)
    _parts_gemm(_gemm_address(X.dtype), X, Y, out, parts)
    return out


def _blas_ready(X, Y, out):
    dtype = out.dtype
    return (dtype in (np.float32, np.float64) and X.dtype == dtype and Y.dtype == dtype
            and X.flags.c_contiguous and Y.flags.c_contiguous and out.flags.c_contiguous
            and max(out.shape[1], X.shape[1]) < 2**31)


def _gemm_address(dtype):
    name = "sgemm" if dtype == np.float32 else "dgemm"
    if name not in _gemm:
        _gemm[name] = get_cython_function_address("scipy.linalg.cython_blas", name)
    return _gemm[name]


@intrinsic
def _address(typingctx, array):
    """The address of an array's first element, as an integer."""
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.ptrtoint(data, ir.IntType(64))
    return types.int64(array), codegen


@intrinsic
def _call_gemm(typingctx, function, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12):
    """Call Fortran ``?gemm`` at ``function`` with its 13 arguments' addresses.

    The address travels as an argument, not a global, so the compiled caller
    stays in numba's disk cache (a ctypes function would keep it out).
    """
    def codegen(context, builder, signature, values):
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(64)] * 13)
        builder.call(builder.inttoptr(values[0], fnty.as_pointer()), values[1:])
        return context.get_dummy_value()
    return types.void(*([types.int64] * 14)), codegen


@parallel_guard
@numba.njit(parallel=True, cache=True)
def _parts_gemm(gemm, X, Y, out, parts):  # pragma: no cover - compiled
    # row-major out = X Y^T is column-major out^T = Y^T' X^T: transa 'T' on Y's
    # (d x m) column-major view, transb 'N' on X's (d x rows) view
    n, d = X.shape
    m = Y.shape[0]
    for p in numba.prange(parts):
        lo = p * n // parts
        hi = (p + 1) * n // parts
        if hi <= lo:
            continue
        sizes = np.empty(6, dtype=np.int32)
        sizes[0], sizes[1], sizes[2] = m, hi - lo, d
        sizes[3], sizes[4], sizes[5] = d, d, m
        scalars = np.empty(2, dtype=X.dtype)
        scalars[0], scalars[1] = 1.0, 0.0
        flags = np.empty(2, dtype=np.uint8)
        flags[0], flags[1] = 84, 78  # 'T', 'N'
        s, f, c = _address(sizes), _address(scalars), _address(flags)
        step = scalars.itemsize
        _call_gemm(gemm, c, c + 1, s, s + 4, s + 8, f, _address(Y), s + 12,
                   _address(X[lo:hi]), s + 16, f + step, _address(out[lo:hi]), s + 20)
