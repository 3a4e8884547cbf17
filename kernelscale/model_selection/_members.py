"""The ensemble's members grown: the capacity the best got, given to the other lines the
ensemble averages with it.

Once the moves around the best are spent, the ensemble (:mod:`._ensemble`) is what a
longer budget can still raise. It averages the best with configurations of other lines
(the other kernel, the columns unscaled, other leaf counts) that the race scored at its
own centres (1,000 on every row) while the best's grew to several thousand: on
california's 16,512 rows at 10 minutes the ensemble's members held 1,000 centres
beside the best's 6,604, and the search ended at 307 s of its 600. A member
move doubles the centres of one such member (at its gamma, and at its penalty and their
neighbours), up to the best's, the members averaged most first; a line's growth ends
where it did not raise the ensemble's out-of-fold score.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ._ensemble import selection_on
from ._families import FAMILIES

__all__ = ["MemberMoves"]


@dataclasses.dataclass
class _Member:
    """A member line's growth: the ensemble's score before its last move, and whether it
    is done."""

    before: float = -np.inf
    done: bool = False


class MemberMoves:
    """The member moves of :class:`._searcher.Searcher` (through
    :class:`._moves.LocalMoves`): they read its ``evaluator``, ``records``, ``local``,
    ``grow_centres`` and ``lines`` and its helpers ``_priced``, ``_penalties_near`` and
    ``_local_move``, and keep their state in ``_members`` (the last selection in
    ``_selected``). :meth:`selection` is the ensemble the records so far select (the
    search's reserve prices its refits)."""

    def selection(self, rows):
        """The ensemble's selection (no refit priced: the members worth growing, whatever
        the time left) over the best record kept on ``rows`` rows of each line and
        centres, or None. One of each: the selection's time grows as the square of its
        candidates (on 108,000 rows a ROC AUC is 19 ms, and a line's grid scores seven
        penalties), and a member's growth is a line's, not a penalty's."""
        best = {}
        for r in self.records.at(rows):
            key = (r.line, r.n_components)
            if r.oof is not None and (key not in best or r.mean > best[key].mean):
                best[key] = r
        # the same candidates select the same ensemble: a member move's proposal, its
        # observation and the search's reserve ask for it in turn
        key = (rows, tuple(id(r) for r in best.values()))
        if self._selected is None or self._selected[0] != key:
            self._selected = (key, selection_on(self.evaluator, rows, list(best.values())))
        return self._selected[1]

    def _member(self, best, affordable):
        """The next member of the ensemble to grow: the line with the largest weight in
        the selection around ``best`` whose centres are fewer than the best's, at its
        most centres there doubled (up to the best's, or its leaves' training rows)."""
        if not (self.local and self.grow_centres) or best.oof is None \
                or best.n_components is None:
            return None
        states = self._members
        selection = self.selection(best.rows)
        if selection is None:
            return None
        weights = {}
        for record, weight in zip(selection.members, selection.weights):
            weights[record.line] = weights.get(record.line, 0) + weight
        ev = self.evaluator
        train = best.rows * (ev.n_splits - 1) // ev.n_splits
        ranked = sorted((line for line in weights if line != best.line and not line.draw),
                        key=lambda line: -weights[line])
        for line in ranked:
            state = states.setdefault(line, _Member())
            family = FAMILIES[line.family]
            if state.done or not family.centred:
                continue
            # the line's most centres on these rows, and its best configuration there
            own = [r for r in self.records.at(best.rows, line) if r.n_components is not None]
            most = max((r.n_components for r in own), default=0)
            record = max((r for r in own if r.n_components == most), key=lambda r: r.mean,
                         default=None)
            cap = best.n_components
            if family.capped:
                cap = min(cap, train // max(1, line.n_leaves))
            m = min(2 * most, cap)
            if record is None or m <= most or line not in self.lines:
                state.done = True
                continue
            penalties = [record.penalty] if line.n_leaves > 1 \
                else self._penalties_near(record)
            move = self._local_move(record, "member", [record.factor], penalties,
                                    f"a member of the ensemble (weight {weights[line]}): "
                                    f"{m} centres (from {most})", n_components=m)
            # its folds, and the refits of the ensemble it would join (every member but
            # the best, which is held fitted; this one at its new centres): priced at its
            # own refit alone, diamonds at 10 minutes grew a member to 4,315 centres in
            # 47.5 s of 48.1 s, and the 19.5 s left paid for no ensemble of those members
            refits = ev.refit_price(record, ev.n, m) + sum(
                ev.refit_price(r, ev.n) for r in selection.members
                if r is not best and r.line != line)
            if not affordable(move.predicted + refits):
                state.done = True
                continue
            state.before = float(np.mean(selection.scores))
            return move
        return None

    def _observe_member(self, move, records):
        """A member's growth ends where the grown member did not join the ensemble or the
        ensemble's out-of-fold score did not rise."""
        state = self._members.get(move.line)
        if state is None:
            return
        best = self.records.best()
        selection = self.selection(best.rows) if records and best is not None else None
        joined = selection is not None and any(
            member is record for member in selection.members for record in records)
        if not joined or not float(np.mean(selection.scores)) > state.before:
            state.done = True
