"""The search's edge stage: past the edge of the default gamma grid, where its best lies.

The default grid scales the reference ``gamma`` by ``2^-3 .. 2^3``. Where the
grid's best gamma is the smallest (or the largest) of those, the optimum may lie
beyond it, and a search under a time budget that ends early leaves that time
unused: on bio_kdd04 the best of every run was ``gamma x 0.125`` (balanced
classes), and the 5- and 10-minute searches ended in under two minutes. So,
under a time budget and with the default factors, the next gamma past the edge
(half, or twice, the edge's) is cross-validated with every penalty on the
grid's rows and folds (every row, or the subsample the time shrank the grid
to), with the class weights the best was scored with; it joins the grid's
records, and the refit takes whichever configuration scored highest, as it takes
any. Each step is priced at one grid unit and taken only where the refit's
reserve is left beside it; the steps go on while each scores higher than the
last, at most :data:`EDGE_STEPS` of them.

A grid the user gave (``gamma_factors``) is searched as given, as is a search
without a time budget (``GridSearchCV``'s contract: the grid, and only it).
"""

from __future__ import annotations

import numpy as np

from .._clock import now
from ._class_weight_stage import balanced_settings, best_record, grid_rows
from ._deadline import Deadline
from ._families import run_family
from ._first_model import SIZED_SHARE, predicted_unit, refit_grant

__all__ = ["past_edge", "EDGE_STEPS", "EDGE_STEP"]

#: the most gammas tried past an edge of the grid
EDGE_STEPS = 3
#: each is this factor past the last (the default grid's own spacing)
EDGE_STEP = 2.0


def _edge_direction(factor, factors):
    """-1 where ``factor`` is the smallest of ``factors``, +1 the largest, else 0."""
    factors = np.asarray(factors, dtype=float)
    if factors.size < 2:
        return 0
    if np.isclose(factor, factors.min()):
        return -1
    if np.isclose(factor, factors.max()):
        return 1
    return 0


def past_edge(search, state, sched):
    """Under a time budget with the default gamma factors: while the best gamma is on an
    edge of the grid's factors, the next gamma past it cross-validated on the grid's
    rows (every penalty, the best's class weights), within what the refit leaves; its
    configurations added to the grid's records."""
    stage = "grid edge"
    if sched.end is None or search.gamma_factors is not None:
        return
    rows = grid_rows(state)
    if rows is None:
        sched.skip(stage, "not tried: the grid cross-validated nothing")
        return
    scored, data, folds, where, best, best_score = rows
    point = best["params"]
    family = point["family"]
    ref = state.space.gamma_ref
    # the grid's factors (the halving tried them all on subsamples, and may have left one
    # on every row: bio's x 0.125 alone) and any scored past them
    tried = sorted(set(state.space.factors) | {r["params"]["gamma"] / ref for r in scored
                                               if r["params"]["family"] == family
                                               and "gamma" in r["params"]})
    factor = point.get("gamma", np.nan) / ref
    direction = _edge_direction(factor, tried) if np.isfinite(factor) else 0
    if direction == 0:
        sched.skip(stage, "not needed: the best gamma lies inside the grid"
                   if np.isfinite(factor) else f"not needed: the {family} grid has no gamma")
        return
    if family != state.unit_family:
        sched.skip(stage, f"not tried: the {family} grid's cost was not measured")
        return
    side = "smallest" if direction < 0 else "largest"
    reserve = refit_grant(state, sched)
    predicted = predicted_unit(state, data.n)
    granted = sched.left() - reserve
    if predicted > SIZED_SHARE * granted:
        sched.skip(stage, (
            f"skipped for time: the best gamma (x {factor:.3g}) is the {side} of the grid; "
            f"one gamma past it on {where} is predicted at {predicted:.1f} s, and "
            f"{max(granted, 0.0):.1f} s are left beside the refit's {reserve:.1f} s"),
            predicted=predicted)
        return
    settings = balanced_settings(state, data) if point.get("class_weight") == "balanced" \
        else state.settings
    head = f"the best gamma (x {factor:.3g}, {best_score:.4f}) is the {side} of the grid: "
    notes, last = [], best_score
    with sched.stage(stage, predicted=predicted, reserve=reserve) as run:
        run.note = head + "nothing scored past it"
        for step in range(EDGE_STEPS):
            if step and predicted > SIZED_SHARE * run.left():
                notes.append(f"x {factor * EDGE_STEP ** direction:.3g} skipped for time "
                             f"(predicted {predicted:.1f} s, {max(run.left(), 0.0):.1f} s "
                             "left)")
                run.outcome = "shrunk"
                break
            factor *= EDGE_STEP ** direction
            began = now()
            records, complete = run_family(family, state.task, data, folds,
                                           state.space.with_factors([factor]), settings,
                                           Deadline(run.until), lambda records: None)
            for record in records:
                if "class_weight" in point:
                    record["params"]["class_weight"] = point["class_weight"]
            scored.extend(records)
            state.n_scored += len(records)
            if not records:
                notes.append(f"x {factor:.3g} stopped before it scored")
                break
            _, score = best_record(records)
            notes.append(f"x {factor:.3g} {score:.4f} ({len(records)} configurations x "
                         f"{len(folds)} folds on {where} in {now() - began:.1f} s"
                         + ("" if complete else ", stopped") + ")")
            run.note = head + ", ".join(notes)
            if score <= last or not complete:
                break
            last = score
        if last > best_score:
            state.choices.append(f"a gamma past the grid's {side} (mean CV {last:.4f} against "
                                 f"{best_score:.4f})")
