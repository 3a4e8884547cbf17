"""What the records say of the lines' learning curves: where more rows stopped paying
(:meth:`LearningCurves.rows_stalled`), and how much a line behind can catch up with the
lead from one subsample to the next (:meth:`LearningCurves.catch_up`).

The race's end and its retirements, and the revisits of retired lines, are decided by
these measurements, never by a margin: a line retires when it is further behind than
any line was seen to gain, and the race stops growing the rows where they no longer
raise the lead's score at its centres.
"""

from __future__ import annotations

import numpy as np

from ._families import FAMILIES

__all__ = ["LearningCurves"]


class LearningCurves:
    """The learning-curve measurements of :class:`._searcher.Searcher`, which it inherits
    (through :class:`._moves.LocalMoves`): they read its ``records`` and ``rungs``."""

    def rows_stalled(self, record):
        """Whether more rows stopped paying at ``record``'s centres: the best of its line
        with as many centres on the rung below scored within ``record``'s standard error
        of it, or above. A Nystrom model whose centres are at their cap is held back by
        them, not by its rows (its error is the approximation's plus the estimate's, and
        only the second falls with the rows): on Beijing at 2 minutes FALKON at 1,000
        centres gained 0.0002 from 33,971 to 101,912 rows and 0.0009 from there to
        305,734, the race's last round took 26.5 s of the 77 s left, and the centres were
        never grown (at 10 minutes, 4,000 of them scored 0.9207 on the test rows against
        0.9182). Measured on the records, never a constant: a line whose scores still
        rise with its rows, or whose centres grew with them, is not stalled."""
        gain = self.rows_gain(record)
        return gain is not None and gain <= record.se

    def rows_gain(self, record):
        """What ``record`` scored above the best of its line with as many centres on the
        rung below; None where none was scored there (or its family has no centres)."""
        if record.n_components is None or not FAMILIES[record.line.family].centred:
            return None
        below = [r for r in self.rungs if r < record.rows]
        scores = [r.mean for r in self.records.at(below[-1], record.line)
                  if r.n_components == record.n_components and np.isfinite(r.mean)] \
            if below else []
        return record.mean - max(scores) if scores else None

    def _leads(self):
        """``({rows: the best mean there}, {(line, rows): the line's best mean there})``
        over the race's lines (not local models, not other draws)."""
        leads, bests = {}, {}
        for r in self.records.all:
            if r.line.draw or r.line.n_leaves > 1 or not np.isfinite(r.mean):
                continue
            leads[r.rows] = max(leads.get(r.rows, -np.inf), r.mean)
            bests[r.line, r.rows] = max(bests.get((r.line, r.rows), -np.inf), r.mean)
        return leads, bests

    def catch_up(self):
        """The most any line gained between two rungs in a row on the line that leads on
        the second (each line's best on each), at least 0; None where no line was scored
        on both beside it. Against the same lead line on both, each side's best is the
        best of its own gammas and penalties: the lead of every line on the smaller rung
        is the luckiest of many more, and measured against it every line caught up."""
        return self._catch_up(*self._leads())

    def _catch_up(self, leads, bests):
        """:meth:`catch_up` from :meth:`_leads`' two maps."""
        rungs = [r for r in self.rungs if r in leads]
        gains = []
        for a, b in zip(rungs, rungs[1:]):
            for lead in [line for (line, rows), mean in bests.items()
                         if rows == b and mean == leads[b] and (line, a) in bests]:
                gains += [(bests[line, b] - bests[lead, b]) - (bests[line, a] - bests[lead, a])
                          for line, rows in list(bests)
                          if rows == a and line != lead and (line, b) in bests]
        return max(0.0, max(gains)) if gains else None

    def _may_catch_up(self, last, rows, leads, catch):
        """Whether a retired line whose best on the most rows it was scored on is
        ``last`` may reach the lead on ``rows`` rows: its deficit there (``leads``, from
        :meth:`_leads`) within what the lines measured caught up with the lead a rung at
        a time (``catch``, :meth:`catch_up`), over as many rungs, and its own standard
        error. Bio at 2 minutes spent its last 11.6 s revisiting the exact SVM, retired
        0.028 below the lead on 4,000 rows, where no line had gained on the lead from one
        rung to the next; its ensemble then found one member's refit affordable. Where no
        line was scored on two rungs, nothing measured says no."""
        if catch is None:
            return True
        steps = sum(1 for r in self.rungs if last.rows < r <= rows)
        return leads[last.rows] - last.mean <= steps * catch + last.se
