"""One scheduler for a search's whole time budget: every stage asks it for time.

A time-budgeted search is *anytime* (FLAML's ``AutoML``): it holds a fitted model
from its first seconds and every later stage can only replace it by something
that scored better. The :class:`Scheduler` owns the clock for that: a stage
(the first model, the widths, the screens, the grid, the refit, the
challenger, the growth of the centres) asks it for time with the seconds its
work is predicted to take, priced by :class:`CostCurve` from fits measured on
this run, and runs inside its grant: a stop is armed until the grant's end
(:func:`kernelscale._clock.stop_at`), so that work which turns out slower than
predicted (a machine that became busy) is stopped at a checkpoint instead of
running past the budget. What each stage asked, got, spent and did is one
:class:`StageRecord`, the search's ``stages_``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys

import numpy as np

from .._clock import TimeUp, now, stop_at

__all__ = ["CostCurve", "StageRecord", "Scheduler", "SLACK"]

#: seconds a stage's grant keeps back for what follows its last checkpoint (building the
#: records, scoring a fold, returning): the budget is a promise to within these
SLACK = 0.25


class CostCurve:
    """Seconds of a piece of work as a function of its size, from measurements.

    ``seconds = fixed + a * size ** b``: ``fixed`` is a part that does not grow
    with the size (measured apart, e.g. FALKON's m x m eigendecompositions);
    from one measurement ``b`` is ``exponent`` (the work's known growth); from
    two or more, ``b`` is measured from the last two and clipped to ``[low,
    high]`` (small fits are dominated by overheads that grow slower than the
    work itself).

    Parameters
    ----------
    exponent : float
        Growth assumed before two sizes are measured.
    low, high : float
        Bounds of a measured growth.
    fixed : float, default=0.0
        Seconds that do not depend on the size.

    Examples
    --------
    >>> curve = CostCurve(exponent=1.0, low=1.0, high=2.0)
    >>> curve.add(1000, 0.5)
    >>> curve.predict(4000)
    2.0
    >>> curve.add(2000, 2.0)  # grew as size^2
    >>> curve.predict(4000)
    8.0
    >>> curve.largest(3.0)  # the largest size predicted within 3 s
    2449
    """

    def __init__(self, exponent, low, high, fixed=0.0, warmup=False):
        self.exponent, self.low, self.high = float(exponent), float(low), float(high)
        self.fixed = float(fixed)
        self.points = []
        self._warm = bool(warmup)  # the warm-up run is still among the points

    @classmethod
    def affine(cls, points, low=0.5, high=1.5):
        """A curve through two or more measurements of work that grows linearly past a
        fixed part: the fixed part from the line through the last two.

        Examples
        --------
        >>> curve = CostCurve.affine([(1000, 0.6), (3000, 1.0)])
        >>> round(curve.fixed, 2), round(curve.predict(20000), 2)
        (0.4, 4.4)
        """
        (s0, t0), (s1, t1) = points[-2], points[-1]
        slope = max((t1 - t0) / (s1 - s0), 0.0) if s1 != s0 else 0.0
        curve = cls(1.0, low, high, fixed=float(np.clip(t0 - slope * s0, 0.0, min(t0, t1))))
        for size, seconds in points:
            curve.add(size, seconds)
        return curve

    def add(self, size, seconds):
        """Record a measured run of ``size`` that took ``seconds``.

        With ``warmup``, the first run is dropped once a second is measured: it carries
        the one-time costs (compilation, first allocations) the later ones do not. It is
        dropped once: the runs after it are all kept, so that their growth is measured.
        """
        if size > 0:
            self.points.append((float(size), max(float(seconds), 1e-6)))
            if self._warm and len(self.points) == 2:
                self.points.pop(0)
                self._warm = False

    def _growing(self, seconds):
        return max(seconds - self.fixed, 1e-6)

    @property
    def growth(self):
        if len(self.points) < 2:
            return self.exponent
        (s0, t0), (s1, t1) = self.points[-2], self.points[-1]
        if s1 == s0:
            return self.exponent
        ratio = self._growing(t1) / self._growing(t0)
        return float(np.clip(math.log(ratio) / math.log(s1 / s0), self.low, self.high))

    def predict(self, size):
        """Seconds predicted for ``size`` (0 with nothing measured)."""
        if not self.points:
            return 0.0
        s1, t1 = max(self.points)
        return self.fixed + self._growing(t1) * (float(size) / s1) ** self.growth

    def largest(self, seconds):
        """The largest size predicted to take at most ``seconds`` (0 with nothing measured)."""
        if not self.points or seconds <= self.fixed:
            return 0
        if math.isinf(seconds):  # no time budget: no size is out of reach
            return sys.maxsize
        s1, t1 = max(self.points)
        return int(s1 * ((seconds - self.fixed) / self._growing(t1)) ** (1.0 / self.growth))


@dataclasses.dataclass
class StageRecord:
    """What one stage of a search asked of the time budget and what it did.

    Attributes
    ----------
    stage : str
        "first model", "widths", "metric", "kernel", "screen", "grid", "class weights",
        "grid edge", "refit", "challenger", "challenger's neighbours", "leaves",
        "growth" or "average" (and their probes).
    outcome : str
        "done"; "shrunk" (ran smaller than planned to fit the time); "skipped"
        (not run: the time could not pay for it, or there was nothing to do);
        "stopped" (the budget's end stopped it: what it had scored is kept);
        "interrupted" (Ctrl-C); "failed" (an error, reported as a warning).
    seconds : float
        Wall time it took.
    predicted : float or None
        Seconds its planned work was predicted to take (from measured costs).
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
        return f"{self.stage}: {self.outcome} in {self.seconds:.1f} s{granted}: {self.note}"


class _Running:
    """The handle a running stage writes its outcome and note to.

    ``stop`` is the stage's armed :class:`kernelscale._clock.Stop`: a stage may
    move its end earlier as it learns more (a grid whose measured refit needs more
    than it was reserved).
    """

    def __init__(self, stop):
        self.stop = stop
        self.outcome = "done"
        self.note = ""
        self.predicted = None

    @property
    def until(self):
        """The grant's end (None without a budget)."""
        return self.stop.end

    def left(self):
        """Seconds of the grant left (``inf`` without a budget)."""
        return math.inf if self.until is None else self.until - now()


class Scheduler:
    """The clock of one search: grants each stage its time and keeps the records.

    Parameters
    ----------
    budget_s : float or None
        The whole fit's seconds (None: no limit; stages are still recorded).
    started : float
        :func:`kernelscale._clock.now` when the fit began.
    log : callable or None
        Receives each record's line as the stage ends (the command line's and
        ``verbose``'s report).
    """

    def __init__(self, budget_s, started, *, log=None):
        self.budget_s = budget_s
        self.started = started
        self.end = None if budget_s is None else started + float(budget_s)
        self.records = []
        self.log = log

    def left(self):
        """Seconds until the budget's end (``inf`` without a budget)."""
        return math.inf if self.end is None else self.end - now()

    def spent(self):
        return now() - self.started

    def until(self, reserve=0.0):
        """The end of a grant that leaves ``reserve`` seconds for the stages after it."""
        return None if self.end is None else self.end - SLACK - max(float(reserve), 0.0)

    def affordable(self, predicted, reserve=0.0):
        """Whether work predicted at ``predicted`` seconds fits before the end, less ``reserve``."""
        return self.end is None or now() + predicted <= self.until(reserve)

    def skip(self, stage, note, predicted=None):
        """Record a stage not run, and why."""
        self._record(StageRecord(stage, "skipped", 0.0, predicted, None, note))

    @contextlib.contextmanager
    def stage(self, stage, *, predicted=None, reserve=0.0, seconds=None):
        """Run a stage's work inside its grant: until the budget's end less ``reserve``
        (and at most ``seconds`` from now).

        Yields a handle: set ``handle.note`` (what was done, in numbers) and
        ``handle.outcome`` ("shrunk" where the work was cut to fit). A
        :class:`kernelscale._clock.TimeUp` from a checkpoint ends the block
        (outcome "stopped"); ``KeyboardInterrupt`` is recorded ("interrupted")
        and raised on.
        """
        until = self.until(reserve)
        if until is not None and seconds is not None:
            until = min(until, now() + max(float(seconds), 0.0))
        began = now()
        with stop_at(until) as stop:
            handle = _Running(stop)
            handle.predicted = predicted
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
                # the grant is the end the stage ran under last: a warm-up's compiling
                # moves a measurement's allowance later (never past the budget's end)
                end = handle.until
                granted = None if end is None else max(end - began, 0.0)
                self._record(StageRecord(stage, handle.outcome, now() - began,
                                         handle.predicted, granted, handle.note or "-"))

    def _record(self, record):
        self.records.append(record)
        if self.log is not None:
            self.log(record.line())


def print_stage(line):
    """A stage's line on standard error (``verbose`` and the command line)."""
    print(f"  {line}", file=sys.stderr, flush=True)
