"""The search's one clock: the scheduler grants every piece of work its time.

A time-budgeted search is *anytime* (FLAML's ``AutoML``): it holds a fitted model
from its first seconds and only replaces it by one that scored better. The
:class:`Scheduler` is the only part of the search that reads the clock. Every
other part is handed what it needs of it:

- a :class:`Deadline` (``passed()``, ``left()``): the end the work under it must
  respect, e.g. a grid that starts no new gamma past it;
- a :class:`Stopwatch`: the seconds a piece of work took (the records' fit times,
  the cost model's measurements);
- an armed stop (:func:`kernelscale._clock.stop_at`) for the work it grants: work
  that turns out slower than predicted (a machine that became busy) is stopped at
  a checkpoint, keeping what it had scored, instead of running past the budget.

What each piece of work asked, got, spent and did is one :class:`StageRecord`,
the search's ``stages_``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys

from .._clock import TimeUp, now, stop_at

__all__ = ["Deadline", "Stopwatch", "StageRecord", "Scheduler", "print_stage"]

#: seconds every grant keeps back for what follows its last checkpoint (building the
#: records, scoring a fold, returning): measured on a loaded 2-core machine, the work
#: after the last checkpoint of a FALKON gamma took up to 0.2 s
SLACK = 0.25


class Stopwatch:
    """Seconds since it was started (or last :meth:`lap`).

    Examples
    --------
    >>> watch = Stopwatch()
    >>> watch() >= 0.0
    True
    >>> first = watch.lap()
    >>> watch() <= first + 60
    True
    """

    def __init__(self):
        self._start = now()

    def __call__(self):
        """Seconds since the start (or the last lap)."""
        return now() - self._start

    def lap(self):
        """Seconds since the start (or the last lap), and start again."""
        moment = now()
        seconds, self._start = moment - self._start, moment
        return seconds


class Deadline:
    """An end the work handed it must respect.

    Parameters
    ----------
    end : float or None
        The clock's value at the end (None: no end).

    Examples
    --------
    >>> Deadline(None).passed(needed=1e9)
    False
    >>> Deadline(None).left()
    inf
    """

    def __init__(self, end):
        self.end = None if end is None else float(end)

    def left(self):
        """Seconds until the end (``inf`` without one; negative past it)."""
        return math.inf if self.end is None else self.end - now()

    def passed(self, needed=0.0):
        """Whether work predicted at ``needed`` seconds would end past the end."""
        return self.end is not None and now() + float(needed) > self.end

    def __repr__(self):
        return "Deadline(none)" if self.end is None else f"Deadline(in {self.left():.1f} s)"


@dataclasses.dataclass
class StageRecord:
    """What one piece of the search's work asked of the time budget and what it did.

    Attributes
    ----------
    stage : str
        What ran: a move of the searcher ("grid", "kernel", "metric", "class
        weights", "gamma step", "penalties", "centres", "leaves", "revisit", "draw"),
        "learn widths", "learn metric", "hold" (the best so far fitted as a model),
        "refit", "ensemble".
    outcome : str
        "done"; "shrunk" (ran smaller than planned to fit the time); "skipped"
        (not run: the time could not pay for it, or there was nothing to do);
        "stopped" (the budget's end stopped it: what it had scored is kept);
        "interrupted" (Ctrl-C); "failed" (an error, reported as a warning).
    seconds : float
        Wall time it took.
    predicted : float or None
        Seconds the cost model predicted for it.
    granted : float or None
        Seconds it was given (None: no time budget).
    note : str
        What it did or why not, in numbers.
    """

    stage: str
    outcome: str
    seconds: float
    predicted: float | None
    granted: float | None
    note: str

    def line(self):
        """The record as one line, e.g. ``grid: done in 41.2 s of 60.0 s granted: ...``."""
        granted = "" if self.granted is None else f" of {self.granted:.1f} s granted"
        predicted = "" if self.predicted is None else f" (predicted {self.predicted:.1f} s)"
        return (f"{self.stage}: {self.outcome} in {self.seconds:.1f} s{granted}{predicted}: "
                f"{self.note}")


class _Running:
    """The handle a granted piece of work writes its outcome and note to."""

    def __init__(self, stop, deadline):
        self.stop = stop
        self.deadline = deadline
        self.outcome = "done"
        self.note = ""


class Scheduler:
    """The clock of one search: grants each piece of work its time, keeps the records.

    Parameters
    ----------
    budget_s : float or None
        The whole fit's seconds (None: no limit; the work is still recorded).
    log : callable or None
        Receives each record's line as the work ends (the command line's and
        ``verbose``'s report).

    Examples
    --------
    >>> sched = Scheduler(None)
    >>> with sched.run("grid") as run:
    ...     run.note = "7 gammas on 1000 rows"
    >>> sched.records[0].line().startswith("grid: done in")
    True
    """

    def __init__(self, budget_s, *, log=None):
        self.started = now()
        self.budget_s = None if budget_s is None else float(budget_s)
        self.end = None if budget_s is None else self.started + float(budget_s)
        self.records = []
        self.log = log
        #: the most seconds a piece of armed work ran past its grant's end (a checkpoint's
        #: spacing, the records built after a stop): what a reserve must also keep
        self.overrun = 0.0

    @property
    def timed(self):
        """Whether there is a time budget."""
        return self.end is not None

    def left(self):
        """Seconds until the budget's end (``inf`` without a budget)."""
        return math.inf if self.end is None else self.end - now()

    def elapsed(self):
        """Seconds since the search began."""
        return now() - self.started

    def affordable(self, seconds, reserve=0.0):
        """Whether work predicted at ``seconds`` ends before the budget's end less
        ``reserve`` (and :data:`SLACK`)."""
        return self.end is None or now() + seconds + max(reserve, 0.0) + SLACK <= self.end

    def deadline(self, reserve=0.0):
        """The :class:`Deadline` that leaves ``reserve`` seconds at the budget's end (and,
        with a reserve, the most an earlier grant ran past its end: work stopped at this
        deadline may run as far past it, out of the reserve)."""
        if self.end is None:
            return Deadline(None)
        reserve = max(reserve, 0.0)
        return Deadline(self.end - SLACK - reserve - (self.overrun if reserve > 0 else 0.0))

    @staticmethod
    def stopwatch():
        """A :class:`Stopwatch` started now."""
        return Stopwatch()

    def skip(self, stage, note, predicted=None):
        """Record work not run, and why."""
        self._record(StageRecord(stage, "skipped", 0.0, predicted, None, note))

    @contextlib.contextmanager
    def run(self, stage, *, predicted=None, reserve=0.0, unarmed=False):
        """Run a piece of work inside its grant: until the budget's end less ``reserve``.

        Yields a handle: set ``handle.note`` (what was done, in numbers) and
        ``handle.outcome`` ("shrunk" where the work was cut to fit); its
        ``deadline`` is the grant's end. A :class:`kernelscale._clock.TimeUp` from a
        checkpoint ends the block (outcome "stopped"); ``KeyboardInterrupt`` is
        recorded ("interrupted") and raised on. ``unarmed``: no stop (the one
        piece of work whose measured cost says whether a budget can be met at all
        must end to be measured).
        """
        deadline = self.deadline(reserve)
        began = now()
        with stop_at(None if unarmed else deadline.end) as stop:
            handle = _Running(stop, deadline)
            try:
                yield handle
            except TimeUp:
                handle.outcome = "stopped"
                handle.note = (handle.note + "; " if handle.note else "") + \
                    "the time budget's end stopped it (what it had scored is kept)"
            except KeyboardInterrupt:
                handle.outcome = "interrupted"
                handle.note = (handle.note + "; " if handle.note else "") + \
                    "interrupted (Ctrl-C)"
                raise
            finally:
                ended = now()
                if deadline.end is not None and not unarmed:
                    self.overrun = max(self.overrun, ended - deadline.end)
                granted = None if deadline.end is None else max(deadline.end - began, 0.0)
                self._record(StageRecord(stage, handle.outcome, ended - began, predicted,
                                         granted, handle.note or "-"))

    def _record(self, record):
        self.records.append(record)
        if self.log is not None:
            self.log(record.line())


def print_stage(line):
    """A record's line on standard error (``verbose`` and the command line)."""
    print(f"  {line}", file=sys.stderr, flush=True)
