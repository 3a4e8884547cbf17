"""numba's parallel regions entered from several Python threads, made safe on every threading layer.

numba runs ``parallel=True`` functions on one of three threading layers. TBB and
OpenMP may be entered from several Python threads at once; the ``workqueue``
layer (what numba falls back to where neither library loads) may not: a second
thread entering a parallel region while another runs one aborts the process
("Concurrent access has been detected"). kernelscale enters parallel regions from
threads of its own (the exact grid's solving threads) and from its users'
(``KernelSVC.fit`` / ``predict`` called from a thread pool), so every compiled
parallel function is wrapped by :func:`parallel_guard`: on a thread-safe layer
the wrapper calls it directly; on ``workqueue`` the calls are serialised by one
process-wide lock (each region still runs on all of numba's threads).

The layer is known only once a parallel region has run, so until then calls
take the lock, and the first one reads the layer.

BLAS's thread limit (:func:`kernelscale.kernels.blas_on_numba_threads`) is the
other process-wide setting kernelscale touches; it is documented there, and
:func:`large_symmetric_blas` and :func:`one_thread` are its other uses.
"""

from __future__ import annotations

import functools
import threading
import types
from contextlib import contextmanager

import numba
import numpy as np

__all__ = ["parallel_guard", "threading_layer_is_safe", "THREAD_SAFE_LAYERS",
           "large_symmetric_blas", "SYMMETRIC_THREADS_BYTES", "SERIAL_BELOW", "one_thread"]

#: a guarded parallel function whose largest array holds fewer elements runs its serial
#: compilation. Measured (bench_patch.py --regions, 2 cores, HISTORY "Small data"): the
#: serial pass is faster up to 65,536 elements idle and busy (10.8 against 12.5 us); at
#: 262,144 the parallel one is 1.8x faster idle
SERIAL_BELOW = 1 << 16

#: bytes of an n x n symmetric result from which OpenBLAS's symmetric routines run on
#: one thread. Its threaded SYRK (also inside POTRF) crashes the process (SIGSEGV) on
#: large outputs: measured with OpenBLAS 0.3.30 (SciPy's) and 0.3.31 (NumPy's) on 2
#: threads, float64 SYRK at n = 15,500 (1.9 GB) with k >= 800, float64 POTRF at n =
#: 16,000, float32 POTRF at n = 28,000; float64 at n = 15,000 (1.8 GB) and float32 at
#: n = 23,200 (2.15 GB) ran, and every size ran on one thread
SYMMETRIC_THREADS_BYTES = 1_600_000_000

#: numba's threading layers that may be entered from several threads at once
THREAD_SAFE_LAYERS = ("tbb", "omp")

_LOCK = threading.RLock()
# None until a guarded region has run and told which layer numba loaded
_SAFE = [None]


def threading_layer_is_safe():
    """Whether numba's parallel regions may run from several Python threads at once.

    Returns None before any parallel region has run (numba loads its layer then),
    True on TBB or OpenMP, False on ``workqueue``.

    Examples
    --------
    >>> from kernelscale._parallel import threading_layer_is_safe
    >>> threading_layer_is_safe() in (None, True, False)
    True
    """
    return _SAFE[0]


def _learn_layer():
    try:
        _SAFE[0] = numba.threading_layer() in THREAD_SAFE_LAYERS
    except ValueError:  # pragma: no cover - no parallel region has run after all
        pass


def _serial_twin(function):
    """``function`` compiled again without ``parallel`` (``prange`` runs as ``range``).

    The twin is a copy of the Python function under its own qualified name, so that
    numba's on-disk cache (whose files are named by it, and whose index does not tell
    parallel code from serial) keeps the two compilations apart.
    """
    source = function.py_func
    twin = types.FunctionType(source.__code__, source.__globals__, source.__name__ + "_serial",
                              source.__defaults__, source.__closure__)
    twin.__qualname__ = source.__qualname__ + "_serial"
    twin.__module__ = source.__module__
    twin.__doc__ = source.__doc__
    options = {**function.targetoptions, "parallel": False}
    return numba.jit(cache=True, **options)(twin)


def _work(args):
    """Elements of the largest array argument: the size a region's threads would share."""
    return max((a.size for a in args if isinstance(a, np.ndarray)), default=0)


def parallel_guard(function):
    """Wrap a compiled ``parallel=True`` function: serial on small arrays, safe in threads.

    Below :data:`SERIAL_BELOW` elements in its largest array argument the call runs a
    serial compilation of the same code (no parallel region, no thread: entering one
    costs more than the work, and on a busy machine its threads wait for cores). Above,
    the parallel code runs, directly on TBB / OpenMP and serialised by one lock on
    ``workqueue``.

    Parameters
    ----------
    function : numba dispatcher
        Called only from Python (a jitted caller could not call the wrapper).

    Returns
    -------
    wrapper : callable
        ``wrapper.dispatcher`` is the parallel compilation, ``wrapper.serial`` the
        serial one (compiled on its first use).
    """
    twin = []

    def serial():
        if not twin:
            twin.append(_serial_twin(function))
        return twin[0]

    @functools.wraps(function, updated=())
    def call(*args):
        if _work(args) < SERIAL_BELOW:
            return serial()(*args)
        if _SAFE[0]:
            return function(*args)
        with _LOCK:
            out = function(*args)
            if _SAFE[0] is None:
                _learn_layer()
            return out

    call.dispatcher = function
    call.serial = serial
    return call


_ONE = {"holders": 0, "limiter": None, "controller": None}
_ONE_LOCK = threading.Lock()


@contextmanager
def one_thread():
    """BLAS and numba on one thread inside the block: for work too small to share.

    Waking BLAS's second thread and entering numba's regions costs more than a few
    milliseconds of work saves (measured on a 569-row SVM fit: 2.4 ms on one thread,
    3.3 ms on two, idle; on a busy machine the threads also wait for cores). numba's
    setting is this thread's; BLAS's is process-wide, held while any thread is inside
    a block and restored when the last leaves.

    Examples
    --------
    >>> import numba
    >>> from kernelscale._parallel import one_thread
    >>> with one_thread():
    ...     numba.get_num_threads()
    1
    """
    threads = numba.get_num_threads()
    with _ONE_LOCK:
        if _ONE["controller"] is None:
            from threadpoolctl import ThreadpoolController

            _ONE["controller"] = ThreadpoolController()  # found once: a search costs ~1 ms
        if _ONE["holders"] == 0:
            _ONE["limiter"] = _ONE["controller"].limit(limits=1, user_api="blas")
        _ONE["holders"] += 1
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(threads)
        with _ONE_LOCK:
            _ONE["holders"] -= 1
            if _ONE["holders"] == 0:
                _ONE["limiter"].restore_original_limits()
                _ONE["limiter"] = None


class LoadMeter:
    """The cores the rest of the machine keeps busy, measured between two readings.

    Between two calls of :meth:`others`, the machine's busy CPU time (every
    core's time not idle, steal included: a shared VM's neighbours) less this
    process's own CPU time, over the wall time between them, is the number of
    cores other work used. The benchmarks record it beside every run (a busy
    machine's ratios are not ours). Nothing sets threads from it: beside two busy
    loops on a 2-core machine, FALKON on 1 thread was 1.17-1.26x slower than on 2
    (benchmarks/bench_threads.py; HISTORY "Threads under load"): each runnable
    thread gets its share of a core, so fewer threads get fewer shares.

    Examples
    --------
    >>> import time
    >>> from kernelscale._parallel import LoadMeter
    >>> meter = LoadMeter()
    >>> time.sleep(LoadMeter.MIN_INTERVAL)
    >>> 0.0 <= meter.others() <= meter.cores
    True
    """

    #: readings closer than this (seconds) keep the last estimate: too noisy
    MIN_INTERVAL = 0.2

    def __init__(self):
        import os

        self.cores = os.cpu_count() or 1
        self._last = self._read()
        self._others = None

    @staticmethod
    def _read():
        import time

        import psutil

        times = psutil.cpu_times()
        idle = times.idle + getattr(times, "iowait", 0.0)
        busy = sum(times) - idle - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
        own = psutil.Process().cpu_times()
        return time.monotonic(), busy, own.user + own.system

    def others(self):
        """Cores busy with other work since the last reading (the first: since creation);
        None until the first interval of at least :attr:`MIN_INTERVAL` seconds."""
        try:
            reading = self._read()
        except Exception:  # pragma: no cover - psutil unable to read the machine
            return self._others
        elapsed = reading[0] - self._last[0]
        if elapsed >= self.MIN_INTERVAL:
            busy = (reading[1] - self._last[1]) - (reading[2] - self._last[2])
            self._others = min(max(busy / elapsed, 0.0), float(self.cores))
            self._last = reading
        return self._others


@contextmanager
def large_symmetric_blas(n, itemsize):
    """Run the block's BLAS / LAPACK on one thread when it forms or factors a large
    ``n x n`` symmetric matrix (at least :data:`SYMMETRIC_THREADS_BYTES`).

    OpenBLAS's threaded SYRK and POTRF crash the process on such matrices (the
    float64 Cholesky of 16,000 Nystrom centres did). One thread is about twice as
    slow on 2 cores, and only these O(n^3) steps pay it. The limit is
    process-wide, as :func:`kernelscale.kernels.blas_on_numba_threads`' is, and
    restored when the block ends.

    Parameters
    ----------
    n : int
        The symmetric matrix's order.
    itemsize : int
        Bytes per entry (4: float32, 8: float64).

    Examples
    --------
    >>> from kernelscale._parallel import large_symmetric_blas
    >>> with large_symmetric_blas(1000, 8):  # small: BLAS keeps its threads
    ...     pass
    """
    if n * n * itemsize < SYMMETRIC_THREADS_BYTES:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
