"""``Deadline``: when a search must stop starting work so that it ends within its budget.

The grids check ``time.perf_counter() > deadline`` before each unit (a gamma with
its whole C / alpha path). Against a plain end time that lets the last unit and the
refit run past the budget (by up to 30% measured on 1e6 rows). A ``Deadline``
compares as late once ``now + the longest unit's measured seconds + the refit's
reserve`` passes the end, so that the grids need no change to stop in time.
"""

from __future__ import annotations

import time

__all__ = ["Deadline"]


class Deadline:
    """The end of a time budget, compared as "no new unit may start".

    Parameters
    ----------
    end : float
        ``time.perf_counter()`` value at which everything must be done.

    Examples
    --------
    >>> import time
    >>> deadline = Deadline(time.perf_counter() + 60)
    >>> time.perf_counter() > deadline
    False
    >>> deadline.reserve = 120.0  # a refit predicted to take two minutes
    >>> time.perf_counter() > deadline
    True
    """

    def __init__(self, end):
        self.end = float(end)
        self.reserve = 0.0
        self.unit = 0.0
        self._mark = time.perf_counter()

    def start_units(self):
        """A new sequence of units begins (a family): time from here, forget the last."""
        self._mark = time.perf_counter()
        self.unit = 0.0

    def unit_done(self):
        """One unit ended: the next is predicted to take as long as the longest so far
        (costs grow away from the middle gamma, and with C)."""
        now = time.perf_counter()
        self.unit, self._mark = max(self.unit, now - self._mark), now

    def left(self):
        """Seconds until the end (negative once past it)."""
        return self.end - time.perf_counter()

    def __lt__(self, now):  # ``now > deadline``
        return now + self.unit + self.reserve > self.end

    def __gt__(self, now):  # ``now < deadline``
        return not self.__lt__(now)

    def __repr__(self):
        return (f"Deadline(in {self.left():.1f} s, unit {self.unit:.1f} s, "
                f"reserve {self.reserve:.1f} s)")
