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
