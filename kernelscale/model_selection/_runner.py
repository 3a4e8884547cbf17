"""The one loop over a grid's units: a gamma with its whole C / alpha path and every fold.

Every family's grid shares its work within a gamma and hands this loop that
gamma's work; the loop owns what is the same for all of them:

- the deadline: no gamma starts once it would end past it, as long as the longest
  gamma measured so far (the first always starts), and an armed time budget stops
  the work already running at a checkpoint;
- the threads: a gamma's work may come in parts (the exact SVM's class pairs and
  folds) that ``n_jobs`` threads run side by side, the next gamma's parts starting
  while the last of the previous one finish, with at most ``slots`` gammas' shared
  work (a kernel matrix) held at once;
- the report after each gamma (progress, the deadline's measurements);
- failures: a part that fails drops its gamma's configurations with a warning
  instead of ending the search; a stop or Ctrl-C ends every part and is raised.

A family hands a plain function ``unit(factor) -> records`` (the whole gamma, in
the calling thread) or a :class:`SharedUnit`.
"""

from __future__ import annotations

import threading
import warnings
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import threadpool_limits

from .._clock import checkpoint, run_with_stop, stop_at
from ._schedule import Stopwatch

__all__ = ["SharedUnit", "run_units", "add_score"]


def add_score(record, result):
    """Add one fold's score to a grid ``record``: ``result`` is the score, or ``(score,
    kept)`` where the scorer keeps what it scored (the fold's out-of-fold predictions,
    which the search's ensemble is selected on): ``kept`` goes to ``record["oof"]``.

    Examples
    --------
    >>> record = {"scores": []}
    >>> add_score(record, 0.9)
    >>> add_score(record, (0.8, "fold 1's predictions"))
    >>> record["scores"], record["oof"]
    ([0.9, 0.8], [None, "fold 1's predictions"])
    """
    if isinstance(result, tuple):
        result, kept = result
        record.setdefault("oof", [None] * len(record["scores"])).append(kept)
    elif "oof" in record:
        record["oof"].append(None)
    record["scores"].append(float(result))


class SharedUnit(ABC):
    """One gamma's work as shared work, parts that threads run, and a close.

    ``open(factor)`` makes what the gamma's parts share (its kernel matrix) and
    returns it; ``solve(opened, part)`` runs one part (any thread, side by side with
    the gamma's other parts); ``close(opened)`` turns the finished parts into the
    gamma's records; ``drop(opened)`` frees what ``open`` made where the gamma ends
    without a close (a failed part, a stop).
    """

    #: the parts of every gamma (the default: the whole gamma, one part)
    parts = (None,)

    def open(self, factor):
        return factor

    @abstractmethod
    def solve(self, opened, part):
        """Run one part of the gamma ``opened``."""

    def close(self, opened):
        return []

    def drop(self, opened):
        return None


class _Whole(SharedUnit):
    """A plain ``unit(factor) -> records``: one part, its records kept for the close."""

    def __init__(self, unit):
        self.unit = unit

    def open(self, factor):
        return {"factor": factor}

    def solve(self, opened, part):
        opened["records"] = self.unit(opened["factor"])

    def close(self, opened):
        return opened["records"]


class _Gamma:
    """One gamma's place in the loop: its shared work, parts left and outcome."""

    def __init__(self, factor, n_parts):
        self.factor = factor
        self.opened = None
        self.ready = threading.Lock()  # one part opens the gamma, the others wait
        self.left = n_parts
        self.held = False  # a slot is taken for this gamma (released once)
        self.skipped = False  # not started for time, or stopped
        self.failed = False
        self.records = None


class _Loop:
    """The state of one :func:`run_units` call shared by its threads."""

    def __init__(self, unit, factors, slots, deadline, on_unit, what):
        self.unit, self.deadline, self.on_unit, self.what = unit, deadline, on_unit, what
        self.gammas = [_Gamma(f, len(unit.parts)) for f in factors]
        self.slots = threading.BoundedSemaphore(max(1, int(slots)))
        self.lock = threading.Lock()
        # set when the search is interrupted: parts waiting for a slot stop waiting (a
        # gamma whose parts cannot all end never frees its own)
        self.abort = threading.Event()
        self.started = False
        self.stop = None
        # the longest gamma so far: the next is predicted to take as long (costs grow away
        # from the middle gamma, and with C)
        self.watch = Stopwatch()
        self.longest = 0.0

    def _take_slot(self):
        while not self.slots.acquire(timeout=0.05):
            if self.abort.is_set():
                return False
        return True

    def _release(self, g):
        with self.lock:
            held, g.held = g.held, False
        if held:
            self.slots.release()

    def _open(self, g):
        """The gamma's shared work, opened by its first part; None where it is skipped."""
        with g.ready:
            if g.opened is None and not g.skipped:
                with self.lock:
                    late = (self.started and self.deadline is not None
                            and self.deadline.passed(self.longest))
                    self.started = True
                if late or self.abort.is_set() or not self._take_slot():
                    g.skipped = True
                    return None
                g.held = True
                try:
                    checkpoint()
                    g.opened = self.unit.open(g.factor)
                except BaseException:
                    # the parts waiting for this gamma must not open it again
                    g.skipped = True
                    raise
        return g.opened

    def run(self, g, part):
        if self.abort.is_set() or g.failed or g.skipped:
            return
        try:
            opened = self._open(g)
            if opened is None or g.failed or self.abort.is_set():
                return
            checkpoint()
            self.unit.solve(opened, part)
            with self.lock:
                g.left -= 1
                last = g.left == 0
            if last:
                self._close(g)
        except Exception as error:
            # this gamma can no longer finish: its configurations are dropped (once, with
            # a warning), its slot freed; the other gammas go on
            with self.lock:
                first, g.failed = not g.failed, True
            self._end(g)
            if first:
                warnings.warn(f"{self.what}: the gamma factor {g.factor:.4g} failed "
                              f"({type(error).__name__}: {error}); its configurations are "
                              "dropped and the search goes on.", UserWarning, stacklevel=2)
        except BaseException:
            # a time budget's stop or Ctrl-C: every part stops (those waiting for a slot
            # see abort, those solving see the cancelled stop at a checkpoint)
            self.interrupt()
            g.skipped = True
            self._end(g)
            raise

    def _end(self, g):
        opened, g.opened = g.opened, None
        try:
            if opened is not None:
                self.unit.drop(opened)
        finally:
            self._release(g)

    def _close(self, g):
        try:
            records = self.unit.close(g.opened)
        finally:
            g.opened = None
            self._release(g)
        with self.lock:
            g.records = records
            self.longest = max(self.longest, self.watch.lap())
            if self.on_unit is not None:
                self.on_unit(self.records())

    def interrupt(self):
        self.abort.set()
        if self.stop is not None:
            self.stop.cancel()

    def records(self):
        """The finished gammas' records, in the order of the factors."""
        return [r for g in self.gammas if g.records is not None for r in g.records]


def run_units(factors, unit, *, n_jobs=1, slots=1, deadline=None, on_unit=None,
              what="the grid"):
    """Run each gamma factor's unit, in order; the records of those that finished.

    Parameters
    ----------
    factors : sequence of float
    unit : callable or SharedUnit
        ``unit(factor) -> list of records`` of that gamma (run in the calling
        thread), or a :class:`SharedUnit` whose parts ``n_jobs`` threads run.
    n_jobs : int, default=1
        Threads running parts side by side (one BLAS thread each).
    slots : int, default=1
        Gammas whose shared work may be held at once (a gamma holds its slot from
        its open to its close).
    deadline : kernelscale.model_selection._schedule.Deadline, default=None
        No gamma starts (after the first) once it would end past it, predicted as
        long as the longest gamma so far.
    on_unit : callable, default=None
        ``on_unit(records_so_far)`` after each gamma.
    what : str
        The grid's name in the warning of a failed gamma.

    Returns
    -------
    records : list of dict
        The finished gammas' records, in the order of ``factors``.
    complete : bool
        False when the deadline stopped the loop before every gamma, or a gamma
        failed.
    """
    if not isinstance(unit, SharedUnit):
        unit = _Whole(unit)
    loop = _Loop(unit, factors, slots, deadline, on_unit, what)
    parts = [(g, part) for g in loop.gammas for part in unit.parts]
    # the threads' stop: the caller's time budget, and cancelled when a part stops or the
    # search is interrupted (worker threads do not inherit the caller's)
    with stop_at() as stop:
        loop.stop = stop
        if n_jobs <= 1:
            for g, part in parts:
                loop.run(g, part)
        else:
            # one BLAS thread each: the threads are busy solving, and BLAS's own idle
            # threads spin on the cores they need (measured: 20% more CPU time)
            with threadpool_limits(limits=1, user_api="blas"):
                pool = ThreadPoolExecutor(int(n_jobs))
                try:
                    for future in [pool.submit(run_with_stop, stop, loop.run, g, part)
                                   for g, part in parts]:
                        future.result()  # a stop (or Ctrl-C) is raised here
                except BaseException:
                    loop.interrupt()
                    raise
                finally:
                    # the parts not started are dropped, the running ones end (a part
                    # waiting for a slot sees abort and returns)
                    pool.shutdown(wait=True, cancel_futures=True)
    return loop.records(), not any(g.skipped or g.failed for g in loop.gammas)
