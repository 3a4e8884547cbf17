"""The search's one searcher: what to evaluate next, from the records so far.

A configuration is a point of one space: a :class:`._records.Line` (family, kernel,
metric, class weights, local models) with a gamma factor, a penalty and centres;
its fidelity is the rows it is scored on. The searcher proposes :class:`Move`\\ s;
the evaluator scores them, the cost model prices them, the scheduler grants them
their time. It starts from the cheap corner and grows by measured cost
(FLAML's cost-frugal search with the rows as its resource; Hyperband's rungs):

1. **The race.** Every line runs its grid on the smallest subsample, then each
   round on ``ETA`` times the rows, with the best ``1 / ETA`` of every line's gammas
   together (successive halving over the whole space: a line none of whose gammas
   is among them leaves the race). After each round the best line's neighbours join
   the race on the same rows (the other kernel, balanced classes, the log of a
   regressor's target, a learned metric: each a dimension of the space, tried once).
   A round the time left cannot pay for is shrunk to the best gammas it can, or ends
   the race.
2. **Local moves** around the best configuration, on its rows, each tried while it
   pays and the time left pays for it, in this order: more rows; capacity, which the
   race never varied (a regressor's local models, one model per leaf of the rows, and
   their leaf counts; the centres doubled, at last to every training row); the penalty
   past the edge of its grid; the gamma stepped both ways (the step halved where both
   sides scored lower; the moves end where the scores around are flat within their
   noise, which also carries the grid past its edge); where none of those is
   affordable, a line the race retired on fewer rows, on the best's rows; then the
   ensemble's members grown, each member's centres doubled toward the best's while that
   raises the ensemble's out-of-fold score (:mod:`._members`); then other draws of the
   best's random centres, candidates for the ensemble, while averaging one more into the
   best's out-of-fold predictions raises their score.

It stops when the time ends or when no move it can afford still pays: a longer
budget reaches more rows, more gammas, more centres and more draws.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._validation import MemoryBudgetError
from ._families import FALKON, FAMILIES, middle_out
from ._moves import LocalMoves, Move
from ._records import Line

__all__ = ["Move", "Searcher", "ETA"]

#: the race's rows grow, and its gammas are cut, by this factor a round (Hyperband's and
#: successive halving's default, Li et al. 2018: a third of the gammas on three times the
#: rows keeps each round's cost near the last one's)
ETA = 3


@dataclasses.dataclass
class _LineState:
    line: Line
    factors: list
    penalties: list
    rung: int = -1
    alive: bool = True
    note: str = ""



class Searcher(LocalMoves):
    """Proposes the search's next move from its records.

    Parameters
    ----------
    evaluator : kernelscale.model_selection._evaluator.Evaluator
    records : kernelscale.model_selection._records.Records
    rungs : list of int
        The rows of the race's rounds, smallest first (the last is every row).
    families : list of str
        The lines the race starts with.
    factors : list of float
        The starting gamma factors.
    learn : list of str
        The metrics to learn after the first round ("diagonal", "agop").
    laplacian : bool
        Whether FALKON's lines may try the Laplacian kernel.
    balance : bool
        Whether a classifier's lines may try balanced classes.
    local : bool
        Whether the local moves run (a time budget spends its time on them; without
        one the search is the race).
    grow_centres : bool
        Whether the centres may grow (``n_components`` not given).
    leaves : bool
        Whether a regressor may try local models.
    log_target : bool
        Whether a regressor's lines may try the log of its target.
    """

    def __init__(self, evaluator, records, rungs, *, families, factors, learn=(),
                 laplacian=False, balance=False, local=True, grow_centres=True,
                 leaves=False, log_target=False):
        self.evaluator, self.records, self.rungs = evaluator, records, list(rungs)
        self.factors = middle_out(factors)
        self.learn = list(learn)
        self.laplacian, self.balance, self.local = laplacian, balance, local
        self.grow_centres, self.leaves, self.log_target = grow_centres, leaves, log_target
        self.lines = {}
        for family in families:
            self._add(Line(family), self.factors)
        self.round = 0
        self.racing = True
        self._local = {}
        self._members = {}  # the ensemble's members' growth (:class:`._members.MemberMoves`)
        self._selected = None  # its last selection: (candidates, Selection)
        self.log = []  # the race's rounds (``halving_``)

    # ------------------------------------------------------------------ lines

    def _add(self, line, factors, rung=-1, note=""):
        if line in self.lines:
            return False
        self.lines[line] = _LineState(line, list(factors), self.evaluator.penalties(line),
                                      rung, True, note)
        return True

    def alive(self):
        return [s for s in self.lines.values() if s.alive]

    def _neighbours(self, line):
        """The lines one dimension away from ``line`` (the space's other values)."""
        family = FAMILIES[line.family]
        found = []
        if self.laplacian and family is FALKON:
            found.append(dataclasses.replace(
                line, kernel="laplacian" if line.kernel == "rbf" else "rbf"))
        if self.balance:
            found.append(dataclasses.replace(line, balanced=not line.balanced))
        if self.log_target:
            found.append(dataclasses.replace(
                line, target="log" if line.target == "identity" else "identity"))
        for metric in self.evaluator.columns:  # the metrics learned
            if metric != line.metric:
                found.append(dataclasses.replace(line, metric=metric))
        return found

    def _best_of(self, line, rows):
        return self.records.best(lambda r: r.line == line and r.rows == rows)

    def _ranked_factors(self, line, rows):
        """The line's factors on ``rows`` rows, best (over its penalties) first."""
        best = {}
        for r in self.records.at(rows, line):
            best[r.factor] = max(best.get(r.factor, -np.inf), r.mean)
        return sorted(best, key=lambda f: -best[f])

    # ------------------------------------------------------------------ the race

    def _grid_move(self, state, rows, stage, factors=None, note=""):
        factors = state.factors if factors is None else factors
        ev = self.evaluator
        predicted = ev.predict(state.line, "grid", rows, n_units=len(factors),
                               n_penalties=len(state.penalties))
        return Move(stage, "grid", state.line, rows, list(factors), list(state.penalties),
                    predicted=predicted, note=note)

    def _race(self, affordable):
        while True:
            rows = self.rungs[self.round]
            pending = [s for s in self.alive() if s.rung < self.round]
            if pending:
                ev = self.evaluator
                pending.sort(key=lambda s: ev.predict(s.line, "grid", rows,
                                                      n_units=len(s.factors)))
                for state in pending:
                    move = self._affordable_grid(state, rows, affordable)
                    if move is not None:
                        state.rung = self.round
                        return move
                    state.alive = False
                    if not state.note.startswith("retired: "):  # its memory's, where it was
                        state.note = f"retired: its grid on {rows} rows does not fit the time left"
                continue
            if self.round == 0 and self.learn:
                return Move(f"learn {self.learn[0]}", "learn", None, rows, [],
                            metric=self.learn.pop(0),
                            note=f"the {self.learn and 'diagonal' or 'next'} metric")
            if self._spawn(rows):
                continue
            if not self._promote(affordable):
                self.racing = False
                return None

    def _affordable_grid(self, state, rows, affordable):
        """``state``'s grid on ``rows`` rows, shrunk to the most of its gammas (best first)
        the time left pays for; None where not even one is affordable."""
        try:
            data, folds = self.evaluator.data_for(state.line, rows)
            FAMILIES[state.line.family].check_memory(
                self.evaluator.task, data, folds, self._space(state),
                self.evaluator.settings_for(state.line, rows=rows))
        except (MemoryBudgetError, ValueError) as error:
            state.note = f"retired: {error}"
            return None
        for k in range(len(state.factors), 0, -1):
            move = self._grid_move(state, rows, "grid", state.factors[:k])
            if affordable(move.predicted):
                if k < len(state.factors):
                    move.stage = "grid (shrunk)"
                    state.factors = state.factors[:k]
                move.note = (f"{state.line.describe()}: {k} gammas x {len(state.penalties)} "
                             f"penalties on {rows} rows")
                return move
        return None

    def _space(self, state):
        from ._inputs import SearchSpace

        family = FAMILIES[state.line.family]
        penalties = np.asarray(state.penalties, dtype=np.float64)
        return SearchSpace(state.factors, self.evaluator.gamma_ref(state.line),
                           self.evaluator.space.n_components, kernel=state.line.kernel,
                           **{"alphas" if family.penalty == "alpha" else "Cs": penalties})

    def _spawn(self, rows):
        """The best line's untried neighbours join the race on ``rows`` rows, with the
        gammas it was scored with there."""
        best = self.records.best(lambda r: r.rows == rows and r.line in self.lines)
        if best is None:
            return False
        ranked = self._ranked_factors(best.line, rows)
        # the best line's best third of its gammas: a neighbour's ranking of them is close
        # to its own (the kernels' reference scales make their factors alike)
        factors = ranked[:max(1, math.ceil(len(ranked) / ETA))]
        added = False
        for line in self._neighbours(best.line):
            if self._add(line, factors, rung=self.round - 1,
                         note=f"a neighbour of {best.line.describe()}"):
                added = True
        return added

    def _promote(self, affordable):
        """The next round: the best third of every line's gammas together (each ranked by
        its best penalty), on ``ETA`` times the rows, successive halving across the whole
        space; a line none of whose gammas is among them leaves the race. The lowest
        ranked are dropped where the time left cannot pay for them all."""
        rows = self.rungs[self.round]
        alive = self.alive()
        arms, errors = [], {}
        for state in alive:
            best_at = {}
            for r in self.records.at(rows, state.line):
                if r.factor not in best_at or r.mean > best_at[r.factor].mean:
                    best_at[r.factor] = r
            arms += [(r.mean, state, factor) for factor, r in best_at.items()]
            errors.update({(id(state), factor): r.se for factor, r in best_at.items()})
        arms.sort(key=lambda arm: -arm[0])
        third = arms[:max(1, math.ceil(len(arms) / ETA))]
        kept = third
        self.log.append({"rows": rows, "lines": [s.line.describe() for s in alive],
                         "gammas": {s.line.describe(): len(self._ranked_factors(s.line, rows))
                                    for s in alive}})
        top = kept[0][0] if kept else -np.inf
        # an arm further behind the lead than the lines measured catching up with the
        # line that led on more rows, over the rungs left, and its standard error, cannot
        # reach the lead: it leaves now (a racing rule, measured, never a margin)
        catch, steps = self.catch_up(), len(self.rungs) - 1 - self.round
        if catch is not None:
            kept = [arm for arm in kept
                    if top - arm[0] <= steps * catch + errors[id(arm[1]), arm[2]]]
        for state in alive:
            mine = [factor for _, s, factor in kept if s is state]
            if not mine:
                best = max((score for score, s, _ in arms if s is state), default=-np.inf)
                state.alive = False
                among = any(s is state for _, s, _ in third)
                state.note = (f"retired on {rows} rows: its best {best:.4f}, " + (
                    f"{top - best:.4f} behind the best, more than the lines caught up with the "
                    f"lead ({catch:.4f} a rung) over the {steps} rungs left" if among else
                    f"no gamma among the best third (the best {top:.4f})"))
            state.factors = mine
        if self.round + 1 >= len(self.rungs):
            return False
        lead = max((r for r in self.records.at(rows, kept[0][1].line) if np.isfinite(r.mean)),
                   key=lambda r: r.mean, default=None) if kept else None
        if lead is not None and self.rows_stalled(lead):
            # the lead's capacity, not its rows, holds it back: the local moves grow it
            # here (and more rows after, where they still pay); once a search
            self.log[-1]["ended"] = (
                f"{lead.line.describe()} gained {self.rows_gain(lead):+.4f} on {rows} rows at "
                f"{lead.n_components} centres, within its standard error {lead.se:.4f}")
            return False
        nxt = self.rungs[self.round + 1]
        ev = self.evaluator

        def to_the_top(arms):
            """The arms' rounds from here to every row, each keeping a third."""
            total, count = 0.0, len(arms)
            for rung in self.rungs[self.round + 1:]:
                total += sum(ev.predict(s.line, "grid", rung, n_units=1)
                             for _, s, _ in arms[:count])
                count = max(1, math.ceil(count / ETA))
            return total

        while kept:
            # as many arms as the time left takes to every row: a short budget goes deep
            # with few, a long one wide with many
            if affordable(to_the_top(kept)) or (
                    len(kept) == 1 and affordable(sum(ev.predict(s.line, "grid", nxt, n_units=1)
                                                      for _, s, _ in kept))):
                break
            _, state, factor = kept.pop()
            state.factors = [f for f in state.factors if f != factor]
            if not state.factors:
                state.alive = False
                state.note = f"retired: the round on {nxt} rows does not fit the time left"
        if not kept:
            return False
        self.round += 1
        return True

    # ------------------------------------------------------------------ the protocol

    def propose(self, affordable):
        """The next move the time left pays for (``affordable(seconds)``), or None: the
        search is done."""
        if self.racing:
            move = self._race(affordable)
            if move is not None:
                return move
        return self._local_moves(affordable)

    def observe(self, move, records):
        """What ``move`` scored: the local moves that stopped paying are ended."""
        best = self.records.best()
        if move.form == "learn" or best is None:
            return
        self._observe_local(best, move, records)
