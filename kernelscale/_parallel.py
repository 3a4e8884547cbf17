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
other process-wide setting kernelscale touches; it is documented there.
"""

from __future__ import annotations

import functools
import threading

import numba

__all__ = ["parallel_guard", "threading_layer_is_safe", "THREAD_SAFE_LAYERS"]

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


def parallel_guard(function):
    """Wrap a compiled ``parallel=True`` function so that concurrent calls are safe.

    Parameters
    ----------
    function : numba dispatcher
        Called only from Python (a jitted caller could not call the wrapper).

    Returns
    -------
    wrapper : callable
        ``function`` itself in effect on TBB / OpenMP; serialised by one lock on
        ``workqueue``. ``wrapper.dispatcher`` is the compiled function.
    """

    @functools.wraps(function, updated=())
    def call(*args):
        if _SAFE[0]:
            return function(*args)
        with _LOCK:
            out = function(*args)
            if _SAFE[0] is None:
                _learn_layer()
            return out

    call.dispatcher = function
    return call


class LoadMeter:
    """The cores the rest of the machine keeps busy, measured between two readings.

    Between two calls of :meth:`others`, the machine's busy CPU time (every
    core's time not idle, steal included: a shared VM's neighbours) less this
    process's own CPU time, over the wall time between them, is the number of
    cores other work used. A search reads it as its units end, so that the
    threads it gives BLAS and numba follow the load as it changes.

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

    def free_threads(self, wanted=None):
        """Threads to run on: the cores other work leaves free (at least 1, at most
        ``wanted``; all cores before the first measurement)."""
        wanted = self.cores if wanted is None else max(1, int(wanted))
        others = self.others()
        if others is None:
            return wanted
        return int(min(wanted, max(1, round(self.cores - others))))


class ThreadGovernor:
    """BLAS and numba threads set from the free cores, re-read at every :meth:`update`.

    Two busy processes beside a fit on a 2-core machine slow a BLAS product on
    2 threads far more than one on 1 thread: each of BLAS's threads waits for the
    slowest, which the scheduler keeps descheduling (measured on MNIST-10k:
    FALKON 4.9x slower under such load on 2 threads; see
    benchmarks/HISTORY.md, "Threads under load"). The governor gives BLAS and
    numba the threads the other work leaves free, from the calling thread (BLAS's
    limit is the process's; numba's the calling thread's), and :meth:`restore`
    puts back what was there.
    """

    def __init__(self, meter=None, wanted=None):
        import numba

        self.meter = meter or LoadMeter()
        self.wanted = wanted
        self.threads = None
        self.history = []
        self._numba_before = numba.get_num_threads()
        self._limits = None

    def update(self):
        """Re-read the load and set the threads; returns them."""
        import numba
        from threadpoolctl import threadpool_limits

        threads = self.meter.free_threads(self.wanted)
        if threads != self.threads:
            self.threads = threads
            self.history.append((threads, self.meter._others))
            limits = threadpool_limits(limits=threads, user_api="blas")
            # the first limiter remembers the limits as they were before the governor
            self._limits = self._limits or limits
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        return threads

    def restore(self):
        """Put back BLAS's and numba's threads as they were before the first update."""
        import numba

        if self._limits is not None:
            self._limits.restore_original_limits()
            self._limits = None
        numba.set_num_threads(self._numba_before)
        self.threads = None
