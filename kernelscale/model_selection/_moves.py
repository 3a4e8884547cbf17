"""The search's moves: what one proposal of the searcher is (:class:`Move`), and the
local moves around the best configuration (:class:`LocalMoves`).

Once the race is done, :class:`._searcher.Searcher` spends the time left around the
best configuration, on its rows, each move tried while it pays and the time left pays
for it: more rows; capacity (local models, centres); the penalty past the edge of those
tried; the gamma stepped both ways; a line the race retired, on the best's rows; the
ensemble's members grown (:mod:`._members`); other draws of the best's random centres.
Each is priced by the cost model and by the fit times its configurations measured
(:meth:`LocalMoves._measured`), and shrunk to the best's penalty alone where the time
left pays for no more.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._validation import MemoryBudgetError
from ._curves import LearningCurves
from ._families import FALKON, FAMILIES
from ._members import MemberMoves
from ._records import Line

__all__ = ["LocalMoves", "Move"]


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
class _Local:
    """The local moves' state around one configuration's line and rows."""

    step: float = 1.0
    gamma_done: bool = False
    penalty_done: bool = False
    centres_done: bool = False
    rows_done: bool = False
    leaves_done: bool = False
    draws_done: bool = False


class LocalMoves(MemberMoves, LearningCurves):
    """The local moves of :class:`._searcher.Searcher`, which it inherits: they read its
    ``evaluator``, ``records``, ``rungs``, ``lines`` and switches (``local``,
    ``grow_centres``, ``leaves``) and its lines' helpers (``_add``, ``_best_of``,
    ``_ranked_factors``, ``_grid_move``, ``_space``), and keep their state around each
    best in ``_local``."""

    def _local_moves(self, affordable):
        best = self.records.best()
        if best is None or not self.local:
            return None
        state = self._local.setdefault((best.line, best.rows), _Local())
        # more rows, then capacity (local models, centres: what the race never varied),
        # then the penalty and the gamma the race ranked already (on a grid twice apart);
        # capacity first where the rows stopped paying at the best's centres
        rows = self._more_rows(best, state)
        capacity = [self._local_models(best, state), self._centres(best, state)]
        ordered = capacity + [rows] if self.rows_stalled(best) else [rows] + capacity
        moves = [m for m in ordered + [self._penalty_edge(best, state),
                                       self._gamma_step(best, state)] if m is not None]
        for move in moves:
            if affordable(move.predicted):
                return move
            smaller = self._shrunk(best, state, move)
            if smaller is not None and affordable(smaller.predicted):
                return smaller
        move = self._revisit(best, affordable)
        if move is None:
            move = self._member(best, affordable)
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
        leads, bests = self._leads()  # the records do not change while one is chosen
        catch = self._catch_up(leads, bests)
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
            if last is None or not self._may_catch_up(last, best.rows, leads, catch):
                continue
            penalties = self._penalties_near(last)
            factors = [last.factor]
            move = self._grid_move(state, best.rows, "revisit", factors)
            move.penalties = penalties
            # priced at the evaluator's centres on these rows, measured at the line's own
            move.predicted = self._priced(state.line, best.rows, factors, penalties, None,
                                          measured_m=last.n_components)
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
        move = self._local_move(best, "draw", [best.factor], [best.penalty], "")
        if not affordable(move.predicted + k * ev.refit_price(best, ev.n)):
            return None
        return dataclasses.replace(move, line=line, note=f"{best.line.describe()}, gamma x "
                                   f"{best.factor:.4g}: its centres drawn again (draw {k + 1})")

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
        predicted = self._priced(best.line, nxt, [best.factor], penalties,
                                 best.n_components)
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

    def _shrunk(self, best, state, move):
        """A move the time left does not pay for, at the best's penalty alone (a gamma
        step, more rows) or at its gamma alone (local models), as the race shrinks a
        round to the gammas it can pay for: each penalty is a solve of its own (an exact
        SVM's large C the slowest), and each of the leaves' gammas a fit of every fold.
        On electricity at 2 minutes a step at C = 31.6, 100 and 316 was past the time
        left (C = 316 alone had taken 21.6 s), and the search ended with 35 s of its
        budget unspent; on Beijing at 2 minutes four leaves at gamma x 1 and x 2 were
        priced at 57 s with 55 s left, and a gamma step with nothing to gain took the
        time where at x 1 alone they had scored 0.9126 against 0.9078 (stop 69)."""
        if move.stage == "leaves" and len(move.factors) > 1:
            return dataclasses.replace(
                move, factors=[best.factor], predicted=move.predicted / len(move.factors),
                note=move.note.split(": ", 1)[0] + ": at the best's gamma alone")
        if move.stage not in ("gamma step", "rows") or len(move.penalties) < 2:
            return None
        if move.stage == "rows":
            smaller = self._more_rows(best, state, [best.penalty])
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
            predicted = max(len(configs) * self.evaluator.n_splits * self.evaluator.predict(
                best.line, "fit", best.rows * (self.evaluator.n_splits - 1)
                // self.evaluator.n_splits, m),
                self._measured(best.line, best.rows, factors, penalties, m))
            return Move(stage, "folds", best.line, best.rows, factors, penalties, m,
                        predicted=predicted, note=f"{best.line.describe()}: {note}")
        predicted = self._priced(best.line, best.rows, factors, penalties, m)
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

    def _priced(self, line, rows, factors, penalties, m, measured_m=...):
        """Seconds of a grid of ``factors`` x ``penalties`` of ``line`` on ``rows`` rows
        with ``m`` centres: the dearer of the cost model's operations and the fit times
        measured (:meth:`_measured`, at ``measured_m`` centres where they differ)."""
        return max(self.evaluator.predict(line, "grid", rows, m, n_units=len(factors),
                                          n_penalties=len(penalties)),
                   self._measured(line, rows, factors, penalties,
                                  m if measured_m is ... else measured_m))

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
        ev = self.evaluator
        kind = "fit" if line.n_leaves > 1 else "grid"
        scored = [r for r in self.records.all if r.line == line and r.rows <= rows]
        # more centres than measured: from the most below, grown by the cost model (by the
        # operations alone, california's 2 leaves at 4,000 centres: 11.2 s, took 20.0 s)
        fewer = [r.n_components for r in scored
                 if None not in (m, r.n_components) and r.n_components < m]
        at = m if any(r.n_components == m for r in scored) or not fewer else max(fewer)
        scored = [r for r in scored if r.n_components == at]
        if not scored:
            return 0.0
        on = max(r.rows for r in scored)
        times = {}
        for r in scored:
            if r.rows == on:
                times.setdefault(r.penalty, {})[r.factor] = float(np.sum(r.fit_times))
        growth = 1.0
        if on < rows or at != m:
            below = ev.predict(line, kind, on, at)
            growth = max(1.0, ev.predict(line, kind, rows, m) / below) if below > 0 else 1.0

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
        cap = train // max(1, best.line.n_leaves)
        if family.capped and m > cap:
            # every training row of a leaf a centre (kernel ridge itself) is the last
            # step: california's search stopped at 4,000 centres of 2 leaves' 5,504 rows,
            # with 416 of its 600 s left
            if best.n_components >= cap:
                state.centres_done = True
                return None
            m = cap
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

    def _observe_local(self, best, move, records):
        """What a local move scored: the moves that stopped paying around the best are
        ended; a revisited line that wins is alive again; a leaf count is a line."""
        if move.stage == "draw":
            self._observe_draw(best, records)
            return
        if move.stage == "member":
            self._observe_member(move, records)
            return
        if move.stage == "revisit":  # a line that wins on the best's rows is alive again
            if any(r is best for r in records):
                self.lines[move.line].alive = True
                self.lines[move.line].note = f"revived on {move.rows} rows"
            return
        if move.stage not in ("gamma step", "penalties", "centres", "rows", "leaves"):
            return
        if move.stage == "leaves":  # a line of its own, for its local moves
            self._add(move.line, move.factors, rung=len(self.rungs))
            self.lines[move.line].penalties = list(move.penalties)
            self.lines[move.line].alive = False
            self.lines[move.line].note = f"local models, on {move.rows} rows"
        if any(r is best for r in records if r.rows == move.rows):
            return
        # the move did not produce the best: that move is done around the held best (a
        # leaf count or a gamma step that did not pay leaves the others to try)
        mine = self._local.get(self._key_of(move))
        if mine is None:
            return
        if move.stage == "penalties":
            mine.penalty_done = True
        elif move.stage == "centres":
            mine.centres_done = True
        elif move.stage == "rows":
            mine.rows_done = True

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
