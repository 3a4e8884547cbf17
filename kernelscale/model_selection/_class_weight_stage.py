"""The search's class-weight stage: a classifier's classes weighed or not, by score.

A least-squares classifier (FALKON's ridge on +-1 targets) fitted on imbalanced
classes spends its fit on the common class: on bio_kdd04 (0.85% positives) the
search's own best model scored ROC AUC 0.9929 on the test rows, and the same model
with ``class_weight="balanced"`` 0.9958 (its average precision and accuracy fell:
the weights move the threshold). So it is not assumed: with ``class_weight="auto"``
and a rarest class under :data:`IMBALANCE` of its balanced share, the grid's best
gamma (every penalty) is cross-validated again on the grid's rows and folds (every
row, or the subsample the time shrank the grid to) with the classes balanced (by every
row's counts, the refit's "balanced" factors, so that the folds' statistics merge as
the grid's do), and those configurations join the grid's records
(``param_class_weight``); the refit then takes whichever scored higher, as it takes
any configuration.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._clock import now
from ..solvers import balanced_class_factors
from ._deadline import Deadline
from ._families import run_family
from ._first_model import SIZED_SHARE, predicted_unit, refit_grant
from ._halving import subsample_data, subsample_folds

__all__ = ["weigh_classes", "grid_rows", "balanced_settings", "best_record", "IMBALANCE"]

#: classes are imbalanced where the rarest holds fewer rows than this share of
#: ``n / n_classes`` (its share were they balanced)
IMBALANCE = 0.5


def grid_rows(state):
    """The grid's records, the rows and folds they were cross-validated on and the best of
    them: ``(records, data, folds, where, best, best_score)``, or None where the grid
    scored nothing. Where the
    time shrank the grid to a subsample, the same subsample and folds (the grid's draw:
    the same seed), so that new configurations' scores compare with its."""
    if state.records:
        return (state.records, state.data, state.folds, "every row",
                *best_record(state.records))
    if state.screened and state.screened_rows:
        seed, rows = state.settings.random_state, state.screened_rows
        classifier = state.task == "classifier"
        data = subsample_data(state.data, rows, seed, classifier)
        folds = subsample_folds(data, len(state.folds), seed, classifier)
        return state.screened, data, folds, f"{rows} rows", *best_record(state.screened)
    return None


def balanced_settings(state, data):
    """The search's settings with the classes balanced by every row's counts of ``data``
    (the refit's "balanced" factors): with one weight per row the folds' statistics
    merge as the grid's do, and the pass costs one grid unit."""
    totals = np.bincount(data.y_index, weights=data.sample_weight,
                         minlength=len(data.classes))
    factors = balanced_class_factors(totals)
    return dataclasses.replace(state.settings, class_weight={
        label: float(f) for label, f in zip(data.classes, factors)})


def best_record(records):
    """The record of the highest mean score, and that mean."""
    means = np.array([np.nanmean(r["scores"]) if r["scores"] else np.nan for r in records])
    means = np.where(np.isfinite(means), means, -np.inf)
    return records[int(np.argmax(means))], float(np.max(means))


def weigh_classes(search, state, sched):
    """With ``class_weight="auto"`` on imbalanced classes: the grid's best gamma
    cross-validated again with the classes balanced, within the time the refit leaves;
    its configurations added to the grid's records."""
    stage = "class weights"
    if state.task != "classifier" or search.class_weight != "auto":
        return
    counts = np.bincount(state.data.y_index, minlength=len(state.data.classes))
    share = counts.min() / (state.n / len(counts))
    if share >= IMBALANCE:
        sched.skip(stage, f"not needed: the rarest class holds {share:.0%} of its balanced "
                          f"share of the rows (at least {IMBALANCE:.0%}): no weights")
        return
    rows = grid_rows(state)
    if rows is None:
        sched.skip(stage, "not tried: the grid cross-validated nothing (no weights)")
        return
    scored, data, folds, where, best, best_score = rows
    point = best["params"]
    family = point["family"]
    if family != state.unit_family:
        sched.skip(stage, f"not tried: the {family} grid's cost was not measured (no weights)")
        return
    reserve = refit_grant(state, sched)
    predicted = predicted_unit(state, data.n)
    granted = None
    if sched.end is not None:
        granted = sched.left() - reserve
        if predicted > SIZED_SHARE * granted:
            sched.skip(stage, (
                f"skipped for time: one gamma balanced on {where} is predicted at "
                f"{predicted:.1f} s, and {max(granted, 0.0):.1f} s are left beside the "
                f"refit's {reserve:.1f} s (no weights)"), predicted=predicted)
            return
    factor = point["gamma"] / state.space.gamma_ref
    space = state.space.with_factors([factor])
    settings = balanced_settings(state, data)
    for record in scored:  # what they were scored with, now that there is a choice
        if record["params"]["family"] == family:
            record["params"].setdefault("class_weight", None)
    with sched.stage(stage, predicted=predicted, reserve=reserve) as run:
        began = now()
        deadline = None if run.until is None else Deadline(run.until)
        run.note = f"the grid's best gamma (x {factor:.3g}) balanced on {where}"
        records, complete = run_family(family, state.task, data, folds, space,
                                       settings, deadline, lambda records: None)
        for record in records:
            record["params"]["class_weight"] = "balanced"
        scored.extend(records)
        state.n_scored += len(records)
        if not records:
            run.note += ": stopped before it scored (no weights)"
            return
        _, balanced = best_record(records)
        kept = "balanced" if balanced > best_score else "none"
        run.note = (f"the grid's best gamma (x {factor:.3g}), {len(records)} configurations x "
                    f"{len(folds)} folds on {where} in {now() - began:.1f} s: balanced "
                    f"{balanced:.4f} against {best_score:.4f} unweighted: kept {kept}"
                    + ("" if complete else " (stopped)"))
        if kept == "balanced":
            state.choices.append(f"classes balanced (mean CV {balanced:.4f} against "
                                 f"{best_score:.4f} unweighted)")
