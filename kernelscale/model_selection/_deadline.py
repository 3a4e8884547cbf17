"""``Deadline``: when a search must stop starting work so that it ends within its budget.

The grids check ``now() > deadline`` before each unit (a gamma with
its whole C / alpha path). Against a plain end time that lets the last unit and the
refit run past the budget (by up to 30% measured on 1e6 rows). A ``Deadline``
compares as late once ``now + the longest unit's measured seconds + the refit's
reserve`` passes the end, so that the grids need no change to stop in time.
:func:`refit_reserve` predicts that reserve.
"""

from __future__ import annotations

import numpy as np

from .._clock import now
from .._planner import falkon_plan
from ._families import FALKON, FAMILIES

__all__ = ["Deadline", "refit_reserve", "REFIT_UNIT_SHARE", "FALKON_CG_STEPS"]


class Deadline:
    """The end of a time budget, compared as "no new unit may start".

    Parameters
    ----------
    end : float
        ``now()`` value at which everything must be done.

    Examples
    --------
    >>> import time
    >>> deadline = Deadline(now() + 60)
    >>> now() > deadline
    False
    >>> deadline.reserve = 120.0  # a refit predicted to take two minutes
    >>> now() > deadline
    True
    """

    def __init__(self, end):
        self.end = float(end)
        self.reserve = 0.0
        self.unit = 0.0
        self._mark = now()

    def start_units(self):
        """A new sequence of units begins (a family): time from here, forget the last."""
        self._mark = now()
        self.unit = 0.0

    def unit_done(self):
        """One unit ended: the next is predicted to take as long as the longest so far
        (costs grow away from the middle gamma, and with C)."""
        moment = now()
        self.unit, self._mark = max(self.unit, moment - self._mark), moment

    def left(self):
        """Seconds until the end (negative once past it)."""
        return self.end - now()

    def __lt__(self, moment):  # ``now() > deadline``
        return moment + self.unit + self.reserve > self.end

    def __gt__(self, moment):  # ``now() < deadline``
        return not self.__lt__(moment)

    def __repr__(self):
        return (f"Deadline(in {self.left():.1f} s, unit {self.unit:.1f} s, "
                f"reserve {self.reserve:.1f} s)")


#: a refit against the longest unit of its grid (a gamma with its whole C / alpha
#: path): FALKON's (K(X, C) once, then CG) and the exact SVM's (its matrix, then SMO)
#: measured at about half (4,000 rows: 1.36 s refit, 2.63 s unit)
REFIT_UNIT_SHARE = 0.5
#: the CG steps a refit with a recomputed K(X, C) is predicted to take
FALKON_CG_STEPS = 20


def refit_reserve(family, records, unit_seconds, growth, shape=None, memory_budget=None):
    """Seconds to keep for refitting the best of ``records`` on every row.

    At least ``REFIT_UNIT_SHARE`` of the grid's longest measured unit; for the
    exact SVM and the feature SVMs, whose records carry each fold's measured
    fit, at least the best one's C path grown with the rows (``growth = n /
    n_train``; squared for SMO).
    """
    least = REFIT_UNIT_SHARE * unit_seconds
    if not records:
        return least
    if family == FALKON.name:
        best = max(records, key=lambda r: np.nanmean(r["scores"]))["params"]
        itemsize = 8 if best["dtype"] == "float64" else 4
        if shape is None:
            return least * itemsize / 4
        n, d = shape
        m = best["n_components"]
        plan = falkon_plan("refit", n=n, m=m, n_targets=1, itemsize=itemsize,
                           budget=memory_budget, block_row_bytes=itemsize * m + 8 * d)
        # float64 costs twice float32; a K(X, C) the budget cannot keep is recomputed at
        # every CG step (two products each, up to FALKON_MAX_ITER of them)
        return least * itemsize / 4 * (1 if plan.choice == "kept" else 2 * FALKON_CG_STEPS)
    best = max(records, key=lambda r: np.nanmean(r["scores"]))
    # along C the folds' fits are warm-started: the refit from scratch costs the path
    # up to the best C
    path = [r for r in records if r["params"]["gamma"] == best["params"]["gamma"]
            and r["params"].get("C", 0) <= best["params"].get("C", 0)]
    fit = float(sum(np.mean(r["fit_times"]) for r in path))
    return max(least, fit * growth ** FAMILIES[family].refit_power)
