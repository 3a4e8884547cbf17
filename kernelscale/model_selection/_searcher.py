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
   the race on the same rows (the other kernel, balanced classes, a learned metric:
   each a dimension of the space, tried once). A round the time left cannot pay for
   is shrunk to the best gammas it can, or ends the race.
2. **Local moves** around the best configuration, on its rows, each tried while it
   pays and the time left pays for it, in this order: more rows; capacity, which the
   race never varied (a regressor's local models, one model per leaf of the rows, and
   their leaf counts; the centres doubled); the penalty past the edge of its grid; the
   gamma stepped both ways (the step halved where both sides scored lower; the moves
   end where the scores around are flat within their noise, which also carries the
   grid past its edge); where none of those is affordable, a line the race retired on
   fewer rows, on the best's rows; then other draws of the best's random centres,
   candidates for the ensemble, while averaging one more into the best's out-of-fold
   predictions raises their score.

It stops when the time ends or when no move it can afford still pays: a longer
budget reaches more rows, more gammas, more centres and more draws.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._validation import MemoryBudgetError
from ._families import FALKON, FAMILIES, middle_out
from ._records import Line

__all__ = ["Move", "Searcher", "ETA"]

#: the race's rows grow, and its gammas are cut, by this factor a round (Hyperband's and
#: successive halving's default, Li et al. 2018: a third of the gammas on three times the
#: rows keeps each round's cost near the last one's)
ETA = 3


@dataclasses.dataclass
class Move:
    """One proposal of the searcher.

    Attributes
    ----------
    stage : str
        Its name in ``stages_``.
    form : {"grid", "folds", "learn"}
        The evaluator's batch form, its plain form, or learning a metric.
    line : Line or None
    rows : int
    factors : list of float
    penalties : list of float or None
        None: the line's own.
    n_components : int or None
    metric : str or None
        The metric a "learn" move learns.
    predicted : float
        Seconds the cost model predicts.
    note : str
        What it tries, in words.
    """

    stage: str
    form: str
    line: Line | None
    rows: int
    factors: list
    penalties: list | None = None
    n_components: int | None = None
    metric: str | None = None
    predicted: float = 0.0
    note: str = ""


@dataclasses.dataclass
class _LineState:
    line: Line
    factors: list
    penalties: list
    rung: int = -1
    alive: bool = True
    note: str = ""


@dataclasses.dataclass
class _Local:
    """The local moves' state around one configuration's line and rows."""

    step: float = 1.0
    gamma_done: bool = False
    penalty_done: bool = False
    centres_done: bool = False
    rows_done: bool = False
    leaves_done: bool = False
    draws_done: bool = False


class Searcher:
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
    """

    def __init__(self, evaluator, records, rungs, *, families, factors, learn=(),
                 laplacian=False, balance=False, local=True, grow_centres=True,
                 leaves=False):
        self.evaluator, self.records, self.rungs = evaluator, records, list(rungs)
        self.factors = middle_out(factors)
        self.learn = list(learn)
        self.laplacian, self.balance, self.local = laplacian, balance, local
        self.grow_centres, self.leaves = grow_centres, leaves
        self.lines = {}
        for family in families:
            self._add(Line(family), self.factors)
        self.round = 0
        self.racing = True
        self._local = {}
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
        arms = []
        for state in alive:
            scores = {}
            for r in self.records.at(rows, state.line):
                scores[r.factor] = max(scores.get(r.factor, -np.inf), r.mean)
            arms += [(score, state, factor) for factor, score in scores.items()]
        arms.sort(key=lambda arm: -arm[0])
        kept = arms[:max(1, math.ceil(len(arms) / ETA))]
        self.log.append({"rows": rows, "lines": [s.line.describe() for s in alive],
                         "gammas": {s.line.describe(): len(self._ranked_factors(s.line, rows))
                                    for s in alive}})
        top = kept[0][0] if kept else -np.inf
        for state in alive:
            mine = [factor for _, s, factor in kept if s is state]
            if not mine:
                best = max((score for score, s, _ in arms if s is state), default=-np.inf)
                state.alive = False
                state.note = (f"retired on {rows} rows: its best {best:.4f}, no gamma among "
                              f"the best third (the best {top:.4f})")
            state.factors = mine
        if self.round + 1 >= len(self.rungs):
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

    # ------------------------------------------------------------------ local moves

    def _local_moves(self, affordable):
        best = self.records.best()
        if best is None or not self.local:
            return None
        state = self._local.setdefault((best.line, best.rows), _Local())
        # more rows, then capacity (local models, centres: what the race never varied),
        # then the penalty and the gamma the race ranked already (on a grid twice apart)
        moves = [m for m in (self._more_rows(best, state), self._local_models(best, state),
                             self._centres(best, state), self._penalty_edge(best, state),
                             self._gamma_step(best, state)) if m is not None]
        for move in moves:
            if affordable(move.predicted):
                return move
            smaller = self._shrunk(best, move)
            if smaller is not None and affordable(smaller.predicted):
                return smaller
        move = self._revisit(best, affordable)
        return move if move is not None else self._draw(best, state, affordable)

    def _revisit(self, best, affordable):
        """Where no move around the best is affordable, a line the race retired on fewer
        rows, scored again on the best's rows (its best gamma there), the best scored of
        those the time left pays for: a line that lost on a small subsample may win on more
        rows (FALKON against the exact SVM, on a table of tens of thousands of rows)."""
        ev = self.evaluator

        def last_score(state):  # its best on the most rows it was scored on
            rows = max((r for r in self.rungs if self.records.at(r, state.line)), default=0)
            record = self._best_of(state.line, rows) if rows else None
            return record.mean if record is not None else -np.inf
        for state in sorted(self.lines.values(), key=lambda s: -last_score(s)):
            if state.alive or state.line == best.line or state.line.n_leaves > 1 \
                    or not state.note.startswith("retired on") or state.rung >= len(self.rungs) \
                    or self.records.at(best.rows, state.line):
                continue
            scored = [r for r in self.rungs if self.records.at(r, state.line)]
            if not scored or state.line.metric not in ev.columns:
                continue
            # its best gamma, at its best penalty and their neighbours there (each penalty
            # a solve of its own): at all seven of a line's, Beijing at 10 minutes spent
            # 54 s revisiting three lines that scored 0.878-0.905 against the best's 0.921
            last = self._best_of(state.line, max(scored))
            if last is None:
                continue
            penalties = self._penalties_near(last)
            factors = [last.factor]
            move = self._grid_move(state, best.rows, "revisit", factors)
            move.penalties = penalties
            move.predicted = max(
                ev.predict(state.line, "grid", best.rows, n_penalties=len(penalties)),
                self._measured(state.line, best.rows, factors, penalties, last.n_components))
            if not affordable(move.predicted):
                continue
            state.rung = len(self.rungs)  # revisited once
            move.note = (f"{state.line.describe()}, retired on {max(scored)} rows, on "
                         f"{best.rows} rows")
            return move
        return None

    def _draws_of(self, best):
        """The other draws of the best's centres scored, in the order drawn."""
        return sorted((r for r in self.records.at(best.rows)
                       if r.line.draw and dataclasses.replace(r.line, draw=0) == best.line
                       and np.isclose(r.factor, best.factor)
                       and np.isclose(r.penalty, best.penalty)
                       and r.n_components == best.n_components),
                      key=lambda r: r.line.draw)

    def _draw(self, best, state, affordable):
        """Where every other move is done or unaffordable, the best configuration with its
        random centres drawn again: each draw a candidate for the ensemble (their average
        is a model of less variance than any one), while averaging one more draw into the
        best's out-of-fold predictions still raises their score (:meth:`observe`) and the
        time left pays for its folds and, in the ensemble, its refit and those of the
        draws before it. What a longer budget buys once the space around the best is
        spent."""
        family = FAMILIES[best.line.family]
        if state.draws_done or not (self.local and family.centred) or best.oof is None \
                or best.line.draw:
            return None
        ev = self.evaluator
        k = 1 + len(self._draws_of(best))
        line = dataclasses.replace(best.line, draw=k)
        if best.line.n_leaves > 1:
            form = "folds"
            cv = ev.n_splits * ev.predict(best.line, "fit", best.rows * (ev.n_splits - 1)
                                          // ev.n_splits, best.n_components)
        else:
            form = "grid"
            cv = max(ev.predict(best.line, "grid", best.rows, best.n_components),
                     self._measured(best.line, best.rows, [best.factor], [best.penalty],
                                    best.n_components))
        refits = k * ev.predict(best.line, "fit", ev.n, best.n_components)
        if not affordable(cv + refits):
            return None
        return Move("draw", form, line, best.rows, [best.factor], [best.penalty],
                    best.n_components, predicted=cv,
                    note=f"{best.line.describe()}, gamma x {best.factor:.4g}: its centres "
                         f"drawn again (draw {k + 1})")

    def _more_rows(self, best, state, penalties=None):
        """The best's gamma on the next rung's rows, at its penalty and its neighbours
        (the ridge of (gamma, penalty) moves little with the rows, and each penalty is a
        solve of its own): at all seven of its line's penalties the 1e5-row synthetic
        problem at 10 minutes never tried the exact SVM on every row, with 290 s left."""
        if state.rows_done or best.rows >= self.rungs[-1] or best.line.n_leaves > 1 \
                or best.line not in self.lines:
            return None
        nxt = min(r for r in self.rungs if r > best.rows)
        penalties = self._penalties_near(best) if penalties is None else penalties
        m = best.n_components if FAMILIES[best.line.family].centred else None
        predicted = max(self.evaluator.predict(best.line, "grid", nxt, best.n_components,
                                               n_penalties=len(penalties)),
                        self._measured(best.line, nxt, [best.factor], penalties,
                                       best.n_components))
        return Move("rows", "grid", best.line, nxt, [best.factor], list(penalties), m,
                    predicted=predicted,
                    note=f"{best.line.describe()}'s best gamma on {nxt} rows")

    def _neighbours_of(self, best):
        """The records around ``best`` on its rows: same line and centres, any gamma."""
        return [r for r in self.records.at(best.rows, best.line)
                if r.n_components == best.n_components]

    def _gamma_step(self, best, state):
        if state.gamma_done:
            return None
        around = self._neighbours_of(best)
        tried = {r.factor for r in around}
        while True:
            candidates = [best.factor * 2.0 ** s for s in (state.step, -state.step)]
            new = [f for f in candidates if not any(np.isclose(f, t) for t in tried)]
            if new:
                break
            # both sides scored lower: where they are within the best's own standard
            # error the scores are flat at this step (a finer one cannot gain more than
            # their noise) and the moves end; else the step halves
            sides = [self.records.best(lambda r, f=f: r.line == best.line
                                       and r.rows == best.rows and np.isclose(r.factor, f))
                     for f in candidates]
            gains = [best.mean - side.mean for side in sides if side is not None]
            if not gains or all(gain <= best.se for gain in gains):
                state.gamma_done = True
                return None
            state.step /= 2.0
        return self._local_move(best, "gamma step", new, self._penalties_near(best),
                                f"gamma x {best.factor:.4g} stepped by 2^{state.step:g}")

    def _shrunk(self, best, move):
        """A gamma step or more rows the time left does not pay for, at the best's penalty
        alone (as the race shrinks a round to the gammas it can pay for): each penalty is
        a solve of its own (an exact SVM's large C the slowest): on electricity at 2
        minutes a step at C = 31.6, 100 and 316 was past the time left (C = 316 alone had
        taken 21.6 s), and the search ended with 35 s of its budget unspent."""
        if move.stage not in ("gamma step", "rows") or len(move.penalties) < 2:
            return None
        if move.stage == "rows":
            smaller = self._more_rows(best, _Local(), [best.penalty])
            smaller.note += ", at its penalty alone"
            return smaller
        return self._local_move(best, move.stage, move.factors, [best.penalty],
                                move.note.split(": ", 1)[-1] + ", at its penalty alone")

    def _penalties_of(self, best):
        line_state = self.lines.get(best.line)
        return list(line_state.penalties) if line_state else [best.penalty]

    def _penalties_near(self, best):
        """The best's penalty and its neighbours on its line's grid: a gamma a step from
        the best's has its best penalty beside the best's (the ridge of (gamma, penalty)
        moves by about a step), and each penalty is a solve of its own (an exact SVM's
        large C the slowest of them)."""
        penalties = sorted(self._penalties_of(best))
        at = int(np.argmin([abs(math.log(p / best.penalty)) for p in penalties]))
        return penalties[max(0, at - 1):at + 2]

    def _local_move(self, best, stage, factors, penalties, note, n_components=None):
        m = n_components if n_components is not None else best.n_components
        if best.line.n_leaves > 1:
            configs = [(f, p, m) for f in factors for p in penalties]
            predicted = len(configs) * self.evaluator.n_splits * self.evaluator.predict(
                best.line, "fit", best.rows * (self.evaluator.n_splits - 1)
                // self.evaluator.n_splits, m)
            return Move(stage, "folds", best.line, best.rows, factors, penalties, m,
                        predicted=predicted, note=f"{best.line.describe()}: {note}")
        predicted = max(self.evaluator.predict(best.line, "grid", best.rows, m,
                                               n_units=len(factors), n_penalties=len(penalties)),
                        self._measured(best.line, best.rows, factors, penalties, m))
        return Move(stage, "grid", best.line, best.rows, list(factors), list(penalties),
                    m if FAMILIES[best.line.family].centred else None, predicted=predicted,
                    note=f"{best.line.describe()}: {note}")

    def _penalty_edge(self, best, state):
        """The penalty a step past the edge of those tried at the best's gamma and rows,
        on the side (or both sides) where the best lies: the next one of its line's grid,
        or past the grid's edge by its ratio (the rows move and a gamma step try the
        best's penalty and its neighbours alone, so the edge of those tried may lie inside
        the grid)."""
        if state.penalty_done or best.line.n_leaves > 1:
            return None
        line_state = self.lines.get(best.line)
        if line_state is None:
            return None
        penalties = sorted(line_state.penalties)
        if len(penalties) < 2:
            state.penalty_done = True
            return None
        tried = sorted(r.penalty for r in self._neighbours_of(best)
                       if np.isclose(r.factor, best.factor))
        ratio = penalties[1] / penalties[0]
        new = []
        if np.isclose(best.penalty, tried[0]):
            inside = [p for p in penalties if p < tried[0] and not np.isclose(p, tried[0])]
            new.append(inside[-1] if inside else penalties[0] / ratio)
        if np.isclose(best.penalty, tried[-1]):
            inside = [p for p in penalties if p > tried[-1] and not np.isclose(p, tried[-1])]
            new.append(inside[0] if inside else penalties[-1] * ratio)
        if not new:
            state.penalty_done = True
            return None
        line_state.penalties = sorted(set(penalties) | set(new))
        return self._local_move(best, "penalties", [best.factor], new,
                                "the penalty past the edge of those tried ("
                                + ", ".join(f"{p:.3g}" for p in new) + ")")

    def _measured(self, line, rows, factors, penalties, m):
        """Seconds of ``factors`` x ``penalties`` of ``line`` on ``rows`` rows, from the fit
        times its configurations measured on the most rows it was scored on up to those
        (0 where none was), grown to ``rows`` as the cost model grows a fit. A solver's
        iterations grow with its penalty and its gamma (an exact SVM's with C), which the
        operations the cost model counts do not see: each configuration is priced at the
        measured one of its penalty at the nearest gamma; a penalty past those measured,
        at the edge's times the growth from its neighbour (at least 1). Priced by the cost
        model alone, a C past the grid's edge took 271 s for 21 predicted, and a gamma
        step at C = 316 (36,000 rows) 250 s for 88."""
        scored = [r for r in self.records.all
                  if r.line == line and r.rows <= rows and r.n_components == m]
        if not scored:
            return 0.0
        on = max(r.rows for r in scored)
        times = {}
        for r in scored:
            if r.rows == on:
                times.setdefault(r.penalty, {})[r.factor] = float(np.sum(r.fit_times))
        growth = 1.0
        if on < rows:
            ev = self.evaluator
            below = ev.predict(line, "grid", on, m)
            growth = max(1.0, ev.predict(line, "grid", rows, m) / below) if below > 0 else 1.0

        def at(penalty, factor):
            by_factor = times[penalty]
            nearest = min(by_factor, key=lambda f: abs(math.log(f / factor)))
            return by_factor[nearest]
        ranked = sorted(times)
        total = 0.0
        for p in penalties:
            for f in factors:
                if p in times:
                    total += at(p, f)
                    continue
                # beyond (or between) those measured: the nearest's, grown as from its
                # neighbour toward p where p lies past the edge
                near = int(np.argmin([abs(math.log(q / p)) for q in ranked]))
                edge = at(ranked[near], f)
                outside = p > ranked[-1] or p < ranked[0]
                if outside and len(ranked) > 1:
                    inner = at(ranked[near - 1 if near == len(ranked) - 1 else near + 1], f)
                    edge *= max(1.0, edge / inner) if inner > 0 else 1.0
                total += edge
        return growth * total

    def _centres(self, best, state):
        family = FAMILIES[best.line.family]
        if state.centres_done or not (self.grow_centres and family.centred) \
                or best.n_components is None:
            return None
        train = best.rows * (self.evaluator.n_splits - 1) // self.evaluator.n_splits
        m = 2 * best.n_components
        if family.capped and m > train // max(1, best.line.n_leaves):
            state.centres_done = True
            return None
        line_state = self.lines.get(best.line)
        penalties = self._penalties_of(best)
        if best.line.n_leaves > 1:
            penalties = [best.penalty]
        try:  # a grid whose statistics do not fit the memory budget ends the growth
            data, folds = self.evaluator.data_for(best.line, best.rows)
            space = self._space(line_state) if line_state else None
            if space is not None and best.line.n_leaves == 1:
                space.n_components = m
                family.check_memory(self.evaluator.task, data, folds, space,
                                    self.evaluator.settings_for(best.line, rows=best.rows))
        except (MemoryBudgetError, ValueError):
            state.centres_done = True
            return None
        return self._local_move(best, "centres", [best.factor], penalties,
                                f"{m} centres (from {best.n_components})", n_components=m)

    def _local_models(self, best, state):
        """Local models: four leaves from a model of one; from local models, the leaf
        counts twice and half theirs (each count a line; the ensemble may average them,
        as partitions of the rows with their edges in other places)."""
        if state.leaves_done or not self.leaves or FAMILIES[best.line.family] is not FALKON:
            return None
        train = best.rows * (self.evaluator.n_splits - 1) // self.evaluator.n_splits
        counts = [4] if best.line.n_leaves == 1 else \
            [2 * best.line.n_leaves, best.line.n_leaves // 2]
        for count in counts:
            line = dataclasses.replace(best.line, n_leaves=count)
            # a leaf holds at least its centres; a count is tried once
            if count < 2 or line in self.lines or train // count < (best.n_components or 0):
                continue
            factors = [best.factor, 2 * best.factor] if best.line.n_leaves == 1 \
                else [best.factor]
            predicted = len(factors) * self.evaluator.n_splits * self.evaluator.predict(
                line, "fit", train, best.n_components)
            return Move("leaves", "folds", line, best.rows, factors, [best.penalty],
                        best.n_components, predicted=predicted,
                        note=f"{line.describe()} along the column a tree would split first"
                             + (": gamma x 1 and x 2 of the best's in each leaf"
                                if len(factors) > 1 else ""))
        state.leaves_done = True
        return None

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
        if move.stage == "draw":
            self._observe_draw(best, records)
            return
        if move.stage == "revisit":  # a line that wins on the best's rows is alive again
            if any(r is best for r in records):
                self.lines[move.line].alive = True
                self.lines[move.line].note = f"revived on {move.rows} rows"
            return
        if move.stage in ("gamma step", "penalties", "centres", "rows", "leaves"):
            target = [r for r in records if r.rows == move.rows]
            state = self._local.get((best.line, best.rows))
            improved = any(r is best for r in target)
            if move.stage == "leaves":  # a line of its own, for its local moves
                self._add(move.line, move.factors, rung=len(self.rungs))
                self.lines[move.line].penalties = list(move.penalties)
                self.lines[move.line].alive = False
                self.lines[move.line].note = f"local models, on {move.rows} rows"
            if improved:
                return
            # the move did not produce the best: that move is done around the held best
            mine = self._local.get(self._key_of(move))
            if mine is None:
                return
            if move.stage == "penalties":
                mine.penalty_done = True
            elif move.stage == "centres":
                mine.centres_done = True
            elif move.stage == "rows":
                mine.rows_done = True
            del state  # (a leaf count that did not pay leaves the others to try)

    def _observe_draw(self, best, records):
        """The draws end where averaging the last one (``records``) into the best's and the
        earlier draws' out-of-fold predictions did not raise their fold-by-fold scores by
        more than the standard error of that gain (the ensemble's and the gamma step's
        rule of noise), or it failed."""
        state = self._local.get((best.line, best.rows))
        if state is None:
            return
        draws = self._draws_of(best)
        if not records or best.oof is None or any(r.oof is None for r in draws):
            state.draws_done = True  # it failed, or predictions were dropped for memory
            return
        ev = self.evaluator
        oofs = [np.asarray(best.oof, dtype=np.float64)] + \
            [np.asarray(r.oof, dtype=np.float64) for r in draws]
        gain = ev.oof_scores(best.rows, np.mean(oofs, axis=0)) \
            - ev.oof_scores(best.rows, np.mean(oofs[:-1], axis=0))
        se = float(np.std(gain, ddof=1) / np.sqrt(gain.size)) if gain.size > 1 else 0.0
        if not gain.mean() > se:
            state.draws_done = True

    def _key_of(self, move):
        line = move.line
        if move.stage == "leaves":  # the local moves' state of the model it was tried from
            best = self.records.best()
            line = best.line if best is not None else move.line
        rows = move.rows
        if move.stage == "rows":
            rows = max(r for r in self.rungs if r < move.rows)
        return line, rows
