"""One search, from its first move to the model it returns.

The loop is three parts that do one thing each: the searcher proposes a move
(:mod:`._searcher`), the evaluator scores it (:mod:`._evaluator`), the scheduler
grants it its time (:mod:`._schedule`), and the cost model (:mod:`._cost`) prices
it from what the search measured. Around them this module keeps the search
*anytime*:

- **held**: from the first move on, the best configuration (:meth:`Records.best`) is
  held as a fitted model: fitted on the rows it was scored on, as soon as it is the
  best (one fit, a fraction of the grid that scored it). A stop, a Ctrl-C or a failed
  move returns it (a Ctrl-C inside the first move fits the best it had scored).
- **reserve**: every grant leaves the time the best's refit on every row is
  predicted to take, or, where that is more than half of what is left, half: a
  refit that cannot end in time runs on a subsample instead of starving the search.
- **final**: the best refitted on every row (or on the most rows the time left
  pays for), then, with the time left, the ensemble its out-of-fold predictions
  select (:mod:`._ensemble`), kept only where it scored above the best by more than
  the noise.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from .._progress import progress
from .._validation import MemoryBudgetError
from ..models.ridge import fold_calibration
from ._ensemble import selection_on
from ._families import FALKON, FAMILIES
from ._schedule import SLACK

__all__ = ["Held", "SearchRun", "SearchTimeError", "interrupted"]

#: a refit is reserved this many times over its predicted seconds: measured on a loaded
#: 2-core machine, fits ran up to 1.25x the prediction from the same run's fits
REFIT_SAFETY = 1.25
#: a refit predicted past this share of the time left runs on a subsample sized to it
#: instead, so that the search keeps the rest (a refit priced at most of the budget would
#: otherwise leave the search nothing)
REFIT_SHARE = 0.5
#: the most of the time left a metric may be learned in (its own time budget stops it
#: with its best so far): at 1e5 rows and 30 s, 0.855 without widths, 0.91+ with
LEARN_SHARE = 0.25


class SearchTimeError(ValueError):
    """The time budget cannot pay for even the cheapest model (refused before the search)."""


@dataclasses.dataclass
class Held:
    """The model the search would return now.

    Attributes
    ----------
    model : estimator
        Fitted on the given columns.
    params : dict
        Its ``best_params_``.
    record : Record
        The configuration's record (its score is the held model's).
    rows : int
        The rows it was fitted on.
    how : str
        "held" (the best so far, fitted on its subsample), "refit", "refit on a
        subsample", "ensemble".
    calibration : (A, B) or None
        Sigmoids of a FALKON classifier's decision values, fitted on its out-of-fold
        scores (``predict_proba`` without more fits).
    score : float
        Its mean cross-validated score (an ensemble's: its out-of-fold one).
    ensemble : dict or None
        The ensemble's members (``params``) and weights.
    """

    model: object
    params: dict
    record: object
    rows: int
    how: str
    calibration: tuple | None = None
    score: float = float("nan")
    ensemble: dict | None = None


class SearchRun:
    """The state of one search: its evaluator, records, searcher and held model."""

    def __init__(self, search, evaluator, records, searcher, scheduler, *, probability):
        self.search, self.ev, self.records = search, evaluator, records
        self.searcher, self.sched = searcher, scheduler
        self.probability = probability
        self.held = None
        self.complete = True
        self.refit_seconds = 0.0
        self.bar = None
        self._members_for, self._members_seconds = None, 0.0

    # ------------------------------------------------------------------ the loop

    def run(self):
        """Moves until the searcher has none the time pays for; then the final model."""
        search = self.search
        with progress(None, f"{type(search).__name__} search", verbose=search.verbose,
                      unit="config") as self.bar:
            first = True
            while True:
                reserve = self.reserve()
                move = self.searcher.propose(
                    lambda seconds, first=first, reserve=reserve:
                    first or self.sched.affordable(seconds, reserve))
                if move is None:
                    if first:  # every line retired before its first grid: its memory's note
                        raise MemoryBudgetError(
                            "the search can score no configuration: " + "; ".join(
                                f"{s.line.describe()} {s.note}"
                                for s in self.searcher.lines.values()))
                    break
                self.play(move, reserve, first=first)
                if first:
                    self._refuse_if_over()
                    first = False
                self.hold(reserve)
            self.final()

    def reserve(self):
        """Seconds every grant leaves for the final model: the best's refit on every row
        and, once the race is done and the records so far select an ensemble that scores
        above the best by more than the noise, its other members' refits; with their
        margin, and the scheduler's slack, which the final refit's own grant keeps back
        (reserved without it, a refit of 1.4 s found 1.5 s left on bio at 2 minutes, and
        the model held on a third of the rows came back). Without the members' refits,
        the local moves took the time to the end: on bio at 2 minutes a gamma step gained
        0.0007 out of fold in the last 16 s, where the ensemble's members' refits on every
        row were priced at 1.5 s each."""
        best = self.records.best()
        if best is None or not self.sched.timed:
            return 0.0
        left = max(self.sched.left(), 0.0)
        predicted = REFIT_SAFETY * (self.refit_predicted(best, self.ev.n)
                                    + self._members_price(best)) + SLACK
        return predicted if predicted <= REFIT_SHARE * left else REFIT_SHARE * left

    def _members_price(self, best):
        """Seconds the refits on every row of the ensemble's members other than ``best``
        are predicted at, where the selection over the records so far keeps an ensemble
        (0 during the race, whose records are on fewer rows than its end's). Selected again
        when the best changes, not at every move: a classifier's selection scores each
        candidate on its own."""
        if self.searcher.racing or best.oof is None:
            return 0.0
        if self._members_for is not best:
            self._members_for = best
            selection = self.searcher.selection(best.rows)
            self._members_seconds = 0.0 if selection is None or not selection.kept else sum(
                self.refit_predicted(m, self.ev.n) for m in selection.members if m is not best)
        return self._members_seconds

    def refit_predicted(self, record, rows):
        """Seconds ``record``'s fit on ``rows`` rows is predicted at (with its calibration's
        fits where ``probability``)."""
        seconds = self.ev.refit_price(record, rows)
        if self.probability:
            k = self.ev.n_splits
            seconds *= 1 + 5 * (k - 1) / k
        return seconds

    def play(self, move, reserve, first=False):
        """Run ``move`` inside its grant; what it scored is kept as it is scored."""
        got = []

        def keep(records):
            self.records.add(records)
            got.extend(records)
            if self.bar is not None:
                self.bar.update(len(records))
                best = self.records.best()
                if best is not None:
                    self.bar.set_postfix_str(f"best {best.mean:.4f}")

        with self.sched.run(move.stage, predicted=move.predicted, reserve=reserve,
                            unarmed=first) as handle:
            try:
                if move.form == "learn":
                    self._learn(move, handle, reserve)
                elif move.form == "grid":
                    _, complete = self.ev.grid(
                        move.line, move.rows, move.factors, penalties=move.penalties,
                        n_components=move.n_components, deadline=handle.deadline,
                        on_records=keep)
                    if not complete:  # gammas left for time (or failed, with a warning)
                        handle.outcome = "shrunk"
                else:
                    self.ev.fit_folds(move.line, move.rows,
                                  [(f, p, move.n_components) for f in move.factors
                                   for p in move.penalties],
                                  deadline=handle.deadline, on_records=keep)
            finally:
                self.searcher.observe(move, got)
                if move.form != "learn":
                    scored = max((r.mean for r in got), default=None)
                    handle.note = (f"{move.note}: {len(got)} configurations scored"
                                   + ("" if scored is None else f", best {scored:.4f}"))
                    if not got and handle.outcome == "done":
                        handle.outcome = "failed"

    def _learn(self, move, handle, reserve):
        seconds = None
        if self.sched.timed:
            seconds = min(self.sched.left() - reserve, LEARN_SHARE * self.sched.left())
            if seconds <= 0:
                handle.outcome, handle.note = "skipped", "skipped for time"
                return
        try:
            learned = self.ev.learn(move.metric, seconds, verbose=self.search.verbose)
        except MemoryBudgetError as error:  # its copy of the columns does not fit
            handle.outcome, handle.note = "skipped", f"not learned: {error}"
            return
        if learned is None:
            handle.outcome = "skipped"
            handle.note = f"the {move.metric} metric was not learned in the {seconds:.1f} s given"
        elif learned is False:
            handle.note = f"the {move.metric} metric did not improve on where it started"
        else:
            learner = self.ev.learned[move.metric]
            handle.note = (f"learned on {min(self.ev.n, learner.max_samples)} rows in "
                           f"{self.ev.learn_seconds[move.metric]:.1f} s: its lines join the race")

    def _refuse_if_over(self):
        sched = self.sched
        if not sched.timed or sched.left() >= 0:
            return
        spent = sched.elapsed()
        least = max(1, int(np.ceil(3.0 * spent + 1.0)))
        search = self.search
        raise SearchTimeError(
            f"time_budget={search.time_budget!r} is too short for the cheapest model: checking "
            f"the {self.ev.n} rows and scoring the first configurations took {spent:.2f} s; "
            f"give time_budget >= {least}s.")

    # ------------------------------------------------------------------ models held

    def hold(self, reserve):
        """The best so far fitted on the rows it was scored on, where it is new.

        The best on every row is held too: that is its refit, done as soon as it is the
        best, which the final refit then need not repeat. Left to the final refit alone,
        a machine that became busy took it from the search: on california beside two busy
        loops, the last move ran past its price, the refit was stopped at the budget's
        end, and the model held on a third of the rows (0.79 on its folds) came back for a
        best on every row of 0.84 (test R^2 0.806, idle 0.860)."""
        best = self.records.best()
        if best is None or self.held is not None and self.held.record is best:
            return
        predicted = self.refit_predicted(best, best.rows)
        if self.held is not None and not self.sched.affordable(predicted, reserve):
            self.sched.skip("hold", f"{self._describe(best)} on {best.rows} rows is predicted "
                                    f"at {predicted:.1f} s, past the time left", predicted)
            return
        # with probabilities the final refit fits them (a hold does not: its calibration's
        # fits would be paid again by every later best)
        full = best.rows >= self.ev.n and not self.probability
        self._fit(best, best.rows, "refit" if full else "held", predicted, reserve,
                  stage="hold")

    def _fit(self, record, rows, how, predicted, reserve=0.0, stage="refit"):
        """Fit ``record`` on ``rows`` rows and hold it; whether it ended."""
        with self.sched.run(stage, predicted=predicted, reserve=reserve) as handle:
            probability = self.probability and how != "held"
            model, params, seconds = self.ev.fit(record, rows, probability=probability)
            self.held = Held(model, params, record, min(rows, self.ev.n), how,
                             self._calibration(record, rows), record.mean)
            if how != "held":  # a refit (on every row, or a subsample), held or final
                self.refit_seconds = seconds
            handle.note = (f"{self._describe(record)} ({record.mean:.4f} on {record.rows} "
                           f"rows) fitted on {min(rows, self.ev.n)} rows in {seconds:.1f} s")
        return handle.outcome == "done"

    def _calibration(self, record, rows):
        """A FALKON classifier's sigmoids from its out-of-fold scores (``calibration_``)."""
        ev = self.ev
        if (not ev.classifier or FAMILIES[record.line.family] is not FALKON
                or record.oof is None or record.line.n_leaves > 1):
            return None
        index, _ = ev.rung(record.rows)
        return fold_calibration(record.oof, ev.data.y_index[index], len(ev.data.classes))

    def _describe(self, record):
        text = f"{record.line.describe()}, gamma x {record.factor:.3g}"
        penalty = "alpha" if FAMILIES[record.line.family].penalty == "alpha" else "C"
        text += f", {penalty}={record.penalty:.3g}"
        if record.n_components:
            text += f", {record.n_components} centres"
        return text

    # ------------------------------------------------------------------ the final model

    def final(self):
        """The best refitted on every row (or the most rows the time pays for); then the
        ensemble, where it scored above it and the time left pays for its members."""
        best = self.records.best()
        n = self.ev.n
        if best is None:
            return
        held = self.held
        if held is None or held.record is not best or held.rows < n or \
                self.probability and held.how == "held":
            predicted = self.refit_predicted(best, n)
            if not self.sched.timed or self.sched.affordable(predicted):
                self._fit(best, n, "refit", predicted)
            else:
                self._refit_on_subsample(best, predicted)
        if self.sched.timed:
            self._ensemble()

    def _least_rows(self, best):
        """The fewest rows a refit of ``best`` must have to stand in for the held model:
        more than the held model's where it is ``best``'s own configuration or where that
        configuration scored at least the held model's score on no more rows than the held
        model has (a configuration's score rises with its rows: an exact SVM's and FALKON's
        learning curves on every table measured), else the rows ``best`` was scored on.
        A revisit that overran its grant by 3 s once left diamonds' model held on 14,384
        rows while its best, the same configuration, was scored on every row."""
        held = self.held
        if held is None:
            return best.rows
        if held.record is best:  # held on a subsample: any more rows
            return held.rows + 1
        if held.record.same_point(best):
            return min(held.rows + 1, best.rows)
        if any(r.same_point(best) and r.rows <= held.rows and r.mean >= held.score
               for r in self.records):
            return min(held.rows + 1, best.rows)
        return best.rows

    def _refit_on_subsample(self, best, full):
        ev, held = self.ev, self.held
        least = self._least_rows(best)
        rows = ev.most_rows(best, (self.sched.left() - SLACK - self.sched.overrun)
                            / REFIT_SAFETY, least, ev.n)
        if rows < least:
            self.sched.skip("refit", f"the refit on every row is predicted at {full:.1f} s and "
                                     f"not even {least} rows fit the {self.sched.left():.1f} s "
                                     f"left: the {held.how} model on {held.rows} rows stands",
                            full)
            return
        self._fit(best, rows, "refit on a subsample", self.refit_predicted(best, rows))

    def _ensemble(self):
        held = self.held
        if held is None or held.how == "held" and held.rows < held.record.rows:
            return
        best = held.record
        ev = self.ev
        pool = [r for r in self.records.at(best.rows) if r.oof is not None]
        if best.oof is None or len(pool) < 2:
            self.sched.skip("ensemble", "not tried: fewer than two configurations' out-of-fold "
                                        f"predictions kept on {best.rows} rows")
            return
        rows = held.rows
        costs = {id(m): 0.0 if m is best else self.refit_predicted(m, rows) for m in pool}
        cheapest = min(c for key, c in costs.items() if key != id(best))
        if not self.sched.affordable(REFIT_SAFETY * cheapest):
            self.sched.skip("ensemble", f"not tried: the cheapest member's refit on {rows} "
                                        f"rows is predicted at {cheapest:.1f} s, past the "
                                        "time left", cheapest)
            return
        with self.sched.run("ensemble") as handle:
            # the selection inside the grant: its additions stop at the budget's end, and
            # each member joins only where every member's refit is still affordable
            selection = selection_on(
                ev, best.rows, pool, cost=lambda m: costs[id(m)],
                affordable=lambda seconds: self.sched.affordable(REFIT_SAFETY * seconds),
                stop=handle.deadline.passed)
            if selection is None or not selection.kept:
                gain = "" if selection is None else \
                    f": {len(selection.members)} members, {selection.gain:+.4f} +- " \
                    f"{selection.se:.4f}"
                handle.outcome = "skipped"
                handle.note = ("not kept: it did not score above the best by more than the "
                               f"noise, among the members whose refits the time left pays "
                               f"for{gain}")
                return
            fitted = []
            for member in selection.members:
                if member is best:
                    fitted.append((held.model, held.params))
                else:
                    model, params, _ = ev.fit(member, rows)
                    fitted.append((model, params))
            models = [m for m, _ in fitted]
            model = ev.ensemble(models, selection.weights, selection.calibrations)
            described = [self._describe(m) for m in selection.members]
            self.held = Held(model, dict(held.params), best, rows, "ensemble", None,
                             float(np.mean(selection.scores)),
                             {"params": [p for _, p in fitted], "weights": selection.weights,
                              "members": described})
            handle.note = (f"{len(models)} members (weights {selection.weights}) on {rows} rows: "
                           f"out of fold {np.mean(selection.scores):.4f}, "
                           f"{selection.gain:+.4f} +- {selection.se:.4f} over the best")


def interrupted(run):
    """A Ctrl-C: the held model stands. Before the first was held (inside the first move),
    the best scored so far is fitted on the rows it was scored on, once the interrupted
    work has given its memory back (the first move's rows: seconds); before anything was
    scored, nothing can stand."""
    best = run.records.best()
    if run.held is None and best is None:
        raise KeyboardInterrupt("interrupted before the first model: nothing was scored yet")
    if run.held is None:
        model, params, _ = run.ev.fit(best, best.rows)
        run.held = Held(model, params, best, min(best.rows, run.ev.n), "held",
                        run._calibration(best, best.rows), best.mean)
    run.complete = False
    warnings.warn(f"Search interrupted: keeping the best of the {len(run.records)} "
                  f"configurations scored so far ({run.held.how}).", UserWarning, stacklevel=4)

