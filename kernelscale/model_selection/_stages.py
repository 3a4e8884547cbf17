"""The search's grid stages: the grid priced (one gamma measured on a small subsample, or
two for FALKON on many rows), the family screen, and every family's grid (halving, then
every row, unless one gamma is left whose round on every row would starve FALKON's
centres), each inside the time the scheduler grants it; what they scored before the time
ended is kept.
"""

from __future__ import annotations

import numpy as np

from .._clock import now
from .._config import format_bytes
from .._progress import progress
from ._deadline import Deadline
from ._exact import exact_grid_memory
from ._families import EXACT_SVM, FALKON, FAMILIES, middle_out, run_family
from ._first_model import (
    SIZED_SHARE,
    first_family,
    predicted_unit,
    refit_grant,
    refit_seconds,
)
from ._halving import (
    EXACT_SCREEN_ROWS,
    screen_families,
    screen_gammas,
    subsample_data,
    subsample_folds,
)
from ._least_squares import falkon_unit_fixed_seconds
from ._refit import secure_screen
from ._schedule import CostCurve
from ._widths_stage import run_seconds

__all__ = ["price_grid", "screen", "grid"]

#: rows the grid's one-time costs (compiling) are paid on, before its unit is measured
WARMUP_ROWS = 300
#: the most of the time left FALKON's grid round on every row may take where one gamma is
#: left and the centres may grow instead (:func:`_centres_first`)
LAST_ROUND_SHARE = 1 / 3
#: how many times the grid probe's rows FALKON's second measurement is on
PROBE_GROWTH = 8
#: a grid round on a subsample is on at most this many times the rows of the largest
#: grid unit measured: a unit's price is trusted that far and no farther (Beijing, two
#: busy loops, 2 minutes: a gamma on 162,598 rows priced at 36 s from units on 2,000 and
#: 16,000 rows ran past the 60 s left, and nothing it scored was kept)
MOST_GROWTH = 4
#: the most of the time budget the family screen may take
SCREEN_SHARE = 0.15
#: rows one gamma of the exact SVM's grid is measured on to price the screen
SCREEN_PROBE_ROWS = 1_000
#: the fewest rows the family screen runs on when the time shrinks it
SCREEN_LEAST_ROWS = 1_500
#: the screen's other families beside the exact SVM's grid (FALKON's units cost a
#: fraction of the exact SVM's on 5,000 rows)
SCREEN_OTHERS = 1.3


def price_grid(search, state, sched):
    """One gamma of the first family's grid measured on a small subsample, before the
    stages that must leave the grid its time (the widths, the screen) are priced."""
    family = state.families[0]
    if sched.end is None:
        sched.skip("grid probe", "not needed: no time budget to price the grid in")
        return
    with sched.stage("grid probe", seconds=0.2 * sched.budget_s) as run:
        notes = []
        _new_unit_curve(state, family, sched)
        seconds = 0.2 * sched.budget_s

        def after_warmup():  # the measurement's allowance starts after the warm-up
            run.stop.end = min(sched.until(), now() + seconds)
        _probe_unit(search, state, family, notes, after_warmup)
        run.note = f"{family}: " + ("; ".join(notes) or
                                    f"not needed on {state.n} rows: the grid's units are small")


def _new_unit_curve(state, family, sched):
    state.unit_curve = CostCurve(*FAMILIES[family].fit_growth)
    state.unit_family = family
    if family == FALKON.name and sched.end is not None:
        # its m x m eigendecompositions do not shrink with the rows: measured apart
        m = int(min(state.space.n_components, state.n))
        state.unit_curve.fixed = falkon_unit_fixed_seconds(m, len(state.folds))


def _probe_unit(search, state, family, notes, after_warmup=None):
    """One gamma of the grid measured on a small subsample: the price of a unit (its
    records stand where nothing larger gets cross-validated). A first gamma on a tiny
    subsample carries the grid's one-time costs (compiling) and is not measured."""
    rows = FAMILIES[family].probe_rows
    if state.n < 2 * rows:  # the grid itself is measured: its units are small
        return
    classifier = state.task == "classifier"
    seed = state.settings.random_state
    middle = state.space.with_factors(middle_out(state.space.factors)[:1])
    warm = subsample_data(state.data, max(WARMUP_ROWS, _least_rows(state, search)), seed,
                          classifier)
    run_family(family, state.task, warm, subsample_folds(warm, len(state.folds), seed,
                                                         classifier),
               middle, state.settings, None, lambda records: None)
    if after_warmup is not None:
        after_warmup()
    sizes = [rows]
    if family == FALKON.name and state.n >= 4 * PROBE_GROWTH * rows:
        # FALKON's small fits are mostly parts that do not grow with the rows: one alone
        # put a gamma on 305,734 rows at 6x its measured seconds; a second, larger one
        # prices what grows
        sizes.append(PROBE_GROWTH * rows)
    measured = []
    stand = not state.records and not state.screened  # its records stand until a grid's
    for size in sizes:
        part = subsample_data(state.data, size, seed, classifier)
        folds = subsample_folds(part, len(state.folds), seed, classifier)
        began = now()
        records, _ = run_family(family, state.task, part, folds, middle, state.settings, None,
                                lambda records: None)
        took = now() - began
        state.unit_curve.add(size, took)
        state.n_scored += len(records)
        if records and stand:
            state.screened, state.screened_rows = records, size
        measured.append(f"{took:.2f} s on {size} rows")
    if len(measured) == 2:
        # past its m x m parts FALKON's work (the K(X, C) blocks) grows as the rows: a
        # slower growth between small fits is overheads that do not grow, and would
        # price the grid on every row below its cost
        state.unit_curve.low = 1.0
    notes.append("one gamma measured: " + ", ".join(measured))


def screen(search, state, sched):
    """Beyond the rows where the rule searches the exact SVM, its whole grid and the
    chosen families' on one subsample (:func:`screen_families`), within the time the
    grid and the refit leave; ``state.screen`` is ``{family: best}`` or None."""
    n = state.n
    if (state.settings.halving is False or state.task != "classifier"
            or search.families != "auto" or EXACT_SVM.name in state.families):
        sched.skip("screen", "not needed: the family screen runs for a classifier's automatic "
                             "families beyond the exact SVM's rows")
        return
    rows = min(EXACT_SCREEN_ROWS, n // 2)
    # only where the exact grid's matrix fits on those rows (no slow row cache here)
    part_y = state.data.y_index[:rows]
    part_folds = [(np.arange(rows), np.arange(0))] * int(search.cv)
    plan = exact_grid_memory(part_y, search.classes_, state.data.sample_weight[:rows],
                             part_folds, state.settings.class_weight, search.multiclass,
                             state.settings.n_jobs, state.settings.memory_budget)
    if plan.choice == "rows":
        sched.skip("screen", f"skipped: the exact SVM's matrix of {rows} rows does not fit the "
                             f"memory budget ({format_bytes(state.settings.memory_budget)})")
        return
    reserve = refit_grant(state, sched) + predicted_unit(state, n)
    n_factors = len(state.space.factors)
    if sched.end is not None:
        # priced by one of the exact SVM's gammas measured on a small subsample
        granted = min(SCREEN_SHARE * sched.budget_s, sched.left() - reserve)
        if granted <= 0:
            sched.skip("screen", f"skipped for time: {max(sched.left(), 0):.1f} s are left, and "
                                 f"the grid and the refit are predicted at {reserve:.1f} s")
            return
        probe = min(rows, SCREEN_PROBE_ROWS)
        curve = CostCurve(*EXACT_SVM.fit_growth)
        with sched.stage("screen probe", seconds=max(granted, 0.0)) as run:
            part = subsample_data(state.data, probe, state.settings.random_state, True)
            folds = subsample_folds(part, int(search.cv), state.settings.random_state, True)
            middle = state.space.with_factors(middle_out(state.space.factors)[:1])
            began = now()
            run_family(EXACT_SVM.name, state.task, part, folds, middle, state.settings, None,
                       lambda records: None)
            curve.add(probe, (now() - began) * n_factors * SCREEN_OTHERS)
            run.note = (f"the exact SVM's grid predicted at {curve.predict(rows):.1f} s on "
                        f"{rows} rows (one gamma measured on {probe} rows)")
        granted -= run_seconds(sched)
        fits = int(min(rows, curve.largest(granted)))
        if run.outcome != "done" or fits < SCREEN_LEAST_ROWS:
            sched.skip("screen", (
                f"skipped for time: the families' grids on {SCREEN_LEAST_ROWS} rows are "
                f"predicted at {curve.predict(SCREEN_LEAST_ROWS):.1f} s, and "
                f"{max(granted, 0):.1f} s are left beside the grid's and the refit's "
                f"{reserve:.1f} s"), predicted=curve.predict(rows))
            return
        rows = fits
    with sched.stage("screen", reserve=reserve) as run:
        deadline = None if sched.end is None else Deadline(run.until)
        best = screen_families(run_family, state.task, [EXACT_SVM.name, *state.families],
                               state.data, state.space, state.settings, rows=rows,
                               n_splits=int(search.cv), deadline=deadline,
                               log=search.halving_.append)
        state.screen = best
        state.n_scored += sum(n_factors * len(state.space.Cs if f != FALKON.name else
                                              state.space.alphas) for f in best)
        scores = ", ".join(f"{f} {b['score']:.4f}" for f, b in best.items())
        run.note = f"every family's grid on {rows} rows: {scores or 'none scored'}"
        if EXACT_SVM.name in best:
            state.choices.append(
                f"the families screened on {rows} rows: {scores}")


def grid(search, state, sched):
    """Every family's grid: its gammas screened on subsamples (halving), the survivors
    cross-validated on every row while the time left pays for a gamma and the refit;
    where not even one gamma on every row fits, the largest subsample that does; where
    one is left that FALKON's centres would score more with (:func:`_centres_first`),
    the halving's last round. Before a round on more rows than the halving's, its best
    is fitted and held (:func:`kernelscale.model_selection._refit.secure_screen`)."""
    for family in state.families:
        _family_grid(search, state, sched, family)


def _family_grid(search, state, sched, family):
    n = state.n
    reserve = refit_grant(state, sched)
    with sched.stage(f"grid ({family})", reserve=reserve) as run:
        # no gamma starts unless it (as long as the longest so far) and the refit end
        # within the budget; the refit's reserve follows the measured fits
        deadline = None
        if sched.end is not None:
            deadline = Deadline(sched.until())
            deadline.reserve = reserve
        space = state.space
        notes = []
        if state.unit_curve is None or state.unit_family != family:
            _new_unit_curve(state, family, sched)
            if sched.end is not None:  # priced where there is a budget to price it in
                _probe_unit(search, state, family, notes)
        if state.settings.halving:
            space = _halving(search, state, family, deadline, run, notes)
        predicted = predicted_unit(state, n)
        if run.until is not None and now() + predicted > run.until:
            _shrunk_grid(search, state, sched, family, space, run, notes, predicted, reserve,
                         deadline)
            return
        if _centres_first(search, state, family, space, predicted, run):
            state.complete = False
            run.outcome = "shrunk"
            notes.append(f"not on every row: one gamma is left and its alphas on {n} rows "
                         f"are predicted at {predicted:.1f} s, over "
                         f"{LAST_ROUND_SHARE:.0%} of the {run.left():.1f} s left: the "
                         f"{state.screened_rows}-row round's scores stand, the time goes "
                         "to the centres")
            run.note = "; ".join(notes)
            return
        _secure(search, state, sched, run, deadline, notes,
                "the halving's best, held before the grid's round on every row")
        _, finished = _all_rows(search, state, sched, family, space, deadline, run, notes)
        state.complete &= finished


def _centres_first(search, state, family, space, predicted, run):
    """Whether the grid stops at its halving's last round for FALKON's centres: one gamma
    is left, scored on at least a quarter of the rows, and its round on every row (its
    alphas alone) would take more than ``LAST_ROUND_SHARE`` of the time left. That round
    only re-ranks alphas the halving ranked on a third of the rows; the centres, the
    local models and their growth it would starve score more (Beijing's 306k rows at 2
    minutes: 24 s of the grid, no time left to grow the leaves' centres)."""
    return (run.until is not None and family == FALKON.name and len(state.families) == 1
            and search.n_components is None and len(space.factors) == 1
            and bool(state.screened) and 4 * state.screened_rows >= state.n
            and predicted > LAST_ROUND_SHARE * run.left())


def _shrunk_grid(search, state, sched, family, space, run, notes, predicted, reserve,
                 deadline):
    """Where not one gamma on every row fits: the screen's scores, or a smaller grid of
    ``space``'s gammas (the halving's survivors: loaded diamonds re-ran all 7 gammas, 49
    configurations in 40.8 s, where the halving had kept 3)."""
    n = state.n
    state.complete = False

    def beside(reserve):
        return (f"one gamma on {n} rows is predicted at {predicted:.1f} s, "
                f"{max(run.left(), 0):.1f} s are left beside the refit's {reserve:.1f} s")
    why = beside(reserve)
    rows = _affordable_rows(state, SIZED_SHARE * run.left())
    if state.screened and rows < 1.5 * state.screened_rows:
        run.outcome = "shrunk"
        notes.append(f"not on every row: {why}; the {state.screened_rows}-row screen's scores "
                     "stand")
    else:
        least = max(_least_rows(state, search), state.screened_rows + 1)
        if rows >= least and _secure(search, state, sched, run, deadline, notes,
                                     "the halving's best, held before the grid's round on "
                                     f"{rows} rows"):
            # the refit's reserve re-priced from the held fit leaves fewer rows
            rows = min(rows, _affordable_rows(state, SIZED_SHARE * run.left()))
            why = beside(deadline.reserve)  # the note names the reserve it ran beside
        if rows >= least:
            run.outcome = "shrunk"
            notes.append(f"on {rows} of the {n} rows: {why}")
            run.note = "; ".join(notes)  # said before it runs: the time may end it
            _subsample_grid(search, state, family, space, rows, deadline, notes)
        else:
            run.outcome = "skipped"
            notes.append(f"skipped for time: {why}, and not even {least} rows fit")
    run.note = "; ".join(notes)


def _secure(search, state, sched, run, deadline, notes, why):
    """The halving's best held (:func:`kernelscale.model_selection._refit.secure_screen`),
    and the refit's reserve raised to what its measured fit prices (loaded diamonds: the
    grid kept 0.7 s from the first model's fits and ran to its end; the refit was then
    predicted at 14.0 s, and the held best on 3,835 rows stood). Whether the reserve was
    raised."""
    predicted = secure_screen(search, state, sched, why)
    if predicted is None or deadline is None:
        return False
    reserve = refit_grant(state, sched, predicted)
    if reserve <= deadline.reserve:
        return False
    deadline.reserve = reserve
    run.stop.end = min(run.stop.end, sched.until(reserve))
    notes.append(f"the refit's reserve raised to {reserve:.1f} s by the held fit's measured "
                 "seconds")
    run.note = "; ".join(notes)
    return True


def _halving(search, state, family, deadline, run, notes):
    """The survivors of successive halving over gamma (their rounds' units measured)."""

    def afford(rows, n_gammas):
        return run.until is None or now() + n_gammas * predicted_unit(state, rows) <= run.until

    def keep(records, rows):
        state.screened, state.screened_rows = records, rows

    def log(entry):
        search.halving_.append(entry)
        state.unit_curve.add(entry["rows"], entry["seconds"] / max(entry["gammas"], 1))
        state.n_scored += entry["gammas"]
        notes.append(f"halving: {entry['gammas']} gammas on {entry['rows']} rows -> kept "
                     f"{entry['kept']} (best {entry['best_score']:.4f}, {entry['seconds']:.1f} s)")
        run.note = "; ".join(notes)

    kept = screen_gammas(run_family, state.task, family, state.data, state.space,
                         state.settings, n_splits=int(search.cv), deadline=deadline, log=log,
                         afford=afford, keep=keep)
    return state.space.with_factors(kept)


def _affordable_rows(state, seconds):
    """The most rows whose one grid unit is predicted within ``seconds``, and at most
    :data:`MOST_GROWTH` times the largest unit measured."""
    curve = state.unit_curve
    if curve is not None and curve.points:
        measured = max(size for size, _ in curve.points)
        return int(min(state.n, curve.largest(seconds), MOST_GROWTH * measured))
    fit = state.fit_curve
    family = first_family(state)
    return int(min(state.n, fit.largest(seconds / FAMILIES[family].unit_per_fit) / 0.8))


def _least_rows(state, search):
    cv = int(search.cv) if isinstance(search.cv, (int, np.integer)) else len(state.folds)
    if state.task != "classifier":
        return max(100, 10 * cv)
    p_min = np.bincount(state.data.y_index).min() / state.n
    return int(max(100, np.ceil(4 * cv / p_min)))


def _subsample_grid(search, state, family, space, rows, deadline, notes):
    classifier = state.task == "classifier"
    seed = state.settings.random_state
    n_splits = len(state.folds)
    part = subsample_data(state.data, rows, seed, classifier)
    folds = subsample_folds(part, n_splits, seed, classifier)
    began = now()

    def on_unit(records):
        state.screened, state.screened_rows = list(records), rows

    records, _ = run_family(family, state.task, part, folds, space, state.settings,
                            deadline, on_unit)
    if records:  # a round the deadline left unscored leaves the halving's scores
        state.screened, state.screened_rows = records, rows
    state.n_scored += len(records)
    gammas = len({r["params"]["gamma"] for r in records})
    if gammas and state.unit_curve is not None:  # its measured units price what follows
        state.unit_curve.add(rows, (now() - began) / gammas)
    notes.append(f"{len(records)} configurations x {n_splits} folds on {rows} rows in "
                 f"{now() - began:.1f} s")


def _all_rows(search, state, sched, family, space, deadline, run, notes):
    """Cross-validate ``space`` on every row; the records kept as each gamma scores them."""
    data, settings = state.data, state.settings
    n = data.X.shape[0]
    began = now()
    units = len(space.factors)
    bar = progress(units, f"{type(search).__name__} search ({family})", verbose=search.verbose,
                   unit="gamma")
    last = [now()]
    best = [-np.inf]
    base = len(state.records)

    def on_unit(records):
        moment = now()
        state.unit_curve.add(n, moment - last[0])
        last[0] = moment
        state.records[base:] = records
        if deadline is not None:
            deadline.unit_done()
            best_point = max(records, key=lambda r: np.nanmean(r["scores"]))["params"]
            deadline.reserve = refit_seconds(state, records, best_point, deadline.unit)
            # a unit running when the measured refit needs the time is stopped
            run.stop.end = min(run.stop.end, sched.until(deadline.reserve))
        bar.update()
        scores = [np.mean(r["scores"]) for r in records]
        best[0] = max(best[0], np.nanmax(scores))
        bar.set_postfix_str(f"best {best[0]:.4f}")

    finished = False
    try:
        with bar:
            records, finished = run_family(family, state.task, data, state.folds, space,
                                           settings, deadline, on_unit)
            state.records[base:] = records
    finally:
        done = len(state.records) - base
        state.n_scored += done
        gammas = len({r["params"]["gamma"] for r in state.records[base:]})
        notes.append(f"{done} configurations x {len(state.folds)} folds on every row "
                     f"({gammas} of {units} gammas) in {now() - began:.1f} s")
        if not finished and run.outcome == "done":
            run.outcome = "shrunk"
            notes.append("the gammas left were cut: the time left pays for the refit")
        run.note = "; ".join(notes)
    return state.records[base:], finished
