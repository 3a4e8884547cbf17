"""The clock every time budget reads, and the checkpoints that stop long work at a deadline.

A time budget is a promise only if work already started can be stopped: a
search that starts a fit predicted to take 40 s on a machine that has since
become twice as busy must not run 80 s past its end. kernelscale's long loops
(row blocks of every kernel computation, conjugate-gradient and Newton steps,
SMO's outer iterations, each fold of an exact C path) call :func:`checkpoint`,
which does nothing unless a caller armed a stop for the current context with
:func:`stop_at`; then, once the stop's end has passed (or the stop was
cancelled), it raises :class:`TimeUp` and the work unwinds to whoever armed it.
``TimeUp`` derives from ``BaseException`` (as ``KeyboardInterrupt``), so that an
``except Exception`` that drops one failed configuration never swallows it.

Every time a budget is compared with is read through :func:`now`, one function
that tests replace by a fake clock.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time

__all__ = ["now", "TimeUp", "Stop", "stop_at", "unarmed", "checkpoint", "current_stop",
           "run_with_stop"]

# replaced by tests (monkeypatch.setattr(kernelscale._clock, "_now", fake)); read through now()
_now = time.perf_counter


def now():
    """Seconds on the clock time budgets are measured by (``time.perf_counter``).

    Examples
    --------
    >>> from kernelscale._clock import now
    >>> now() <= now()
    True
    """
    return _now()


class TimeUp(BaseException):  # noqa: N818 (a signal, like KeyboardInterrupt)
    """The armed stop's end passed, or it was cancelled, at a :func:`checkpoint`."""


class Stop:
    """An end time (and a cancel switch) for the work of one context.

    Parameters
    ----------
    end : float or None
        :func:`now` value after which :meth:`check` raises; None: no end,
        only :meth:`cancel` stops.
    parent : Stop or None
        An enclosing stop, checked too (a stage inside a search).
    """

    def __init__(self, end=None, parent=None):
        self.end = None if end is None else float(end)
        self.parent = parent
        self._cancelled = threading.Event()

    def cancel(self):
        """Stop every checkpoint under this stop (from any thread)."""
        self._cancelled.set()

    @property
    def cancelled(self):
        return self._cancelled.is_set()

    def passed(self, needed=0.0):
        """Whether work under this stop must end now: its end has passed, or work of
        ``needed`` seconds started now would end past it."""
        if self._cancelled.is_set() or (self.end is not None and now() + needed > self.end):
            return True
        return self.parent is not None and self.parent.passed(needed)

    def check(self, needed=0.0):
        """Raise :class:`TimeUp` when :meth:`passed`."""
        if self.passed(needed):
            raise TimeUp(f"the time ended at {self.end}")

    def left(self):
        """Seconds until the nearest end (``inf`` without one)."""
        mine = float("inf") if self.end is None else self.end - now()
        return mine if self.parent is None else min(mine, self.parent.left())


_STOP: contextvars.ContextVar[Stop | None] = contextvars.ContextVar("kernelscale_stop",
                                                                   default=None)


def current_stop():
    """The stop armed for this context, or None."""
    return _STOP.get()


@contextlib.contextmanager
def stop_at(end=None):
    """Arm a :class:`Stop` ending at ``end`` (inside any stop already armed) for the block.

    Yields the stop (``cancel()`` ends the work early). The :class:`TimeUp`
    raised under it is left to the caller to catch.

    Examples
    --------
    >>> from kernelscale._clock import TimeUp, checkpoint, now, stop_at
    >>> try:
    ...     with stop_at(now() - 1.0):
    ...         checkpoint()
    ... except TimeUp:
    ...     print("stopped")
    stopped
    """
    stop = Stop(end, _STOP.get())
    token = _STOP.set(stop)
    try:
        yield stop
    finally:
        _STOP.reset(token)


@contextlib.contextmanager
def unarmed():
    """No stop for the block, whatever is armed around it: for the one piece of work
    whose measured cost decides whether a budget can be met at all (a search's first,
    smallest model), which must end to be measured."""
    token = _STOP.set(None)
    try:
        yield
    finally:
        _STOP.reset(token)


def checkpoint(needed=0.0):
    """Raise :class:`TimeUp` if the stop armed for this context has passed; else nothing.

    ``needed``: the seconds of the work about to start that no checkpoint can stop (a
    LAPACK call), as measured on work of its size: raise already when it would end past
    the stop's end, which would otherwise be overrun by all of it.

    Cheap (a context-variable read and a clock read): long loops call it once
    per block or iteration.
    """
    stop = _STOP.get()
    if stop is not None:
        stop.check(needed)


def run_with_stop(stop, function, *args, **kwargs):
    """Call ``function`` with ``stop`` armed: for work handed to another thread, where the
    submitting thread's context is not inherited."""
    token = _STOP.set(stop)
    try:
        return function(*args, **kwargs)
    finally:
        _STOP.reset(token)
