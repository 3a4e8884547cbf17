"""The search's first stage: a fitted, scored model within seconds, and what every later
stage prices its work with (the family's fit cost measured on growing subsamples).

Also the helpers every stage shares to turn a grid configuration into a model of the
raw columns fitted on some of the first fold's training rows.
"""

from __future__ import annotations

import numpy as np

from .._clock import now, unarmed
from ._deadline import refit_reserve
from ._families import FALKON, FAMILIES, penalty_on_rows
from ._schedule import CostCurve
from ._state import Candidate, same_point

__all__ = ["SearchTimeError", "first_model", "first_family", "raw_params",
           "model_on", "subsample_rows", "predicted_refit", "predicted_unit", "describe",
           "refit_seconds",
           "REFIT_SAFETY"]

#: rows of the first fit: it carries the one-time costs (compiling) and says whether a
#: budget can be met at all
WARMUP_ROWS = 200
#: rows of the first measured fit of the first model (without a budget, its only one
#: after the warm-up)
FIRST_ROWS = 1000
#: share of the time budget the first model may grow in (doubling its rows) ...
FIRST_SHARE = 0.05
#: ... and at least these seconds (or 15% of a shorter budget): two fits measure how
#: its cost grows, where the first carries one-time costs (compiling, first allocations)
FIRST_LEAST_SECONDS = 3.0
#: a predicted refit is reserved this many times over (costs measured on fewer rows)
REFIT_SAFETY = 1.25
#: work sized to the time left, whose stop would lose all of it (a grid shrunk to a
#: subsample, whose first gamma must end; a refit on a subsample), is sized to this share
#: of it: measured on a loaded 2-core machine, such work ran up to 1.6x its prediction
#: (a different penalty's CG, the load's swings)
SIZED_SHARE = 0.6
class SearchTimeError(ValueError):
    """The time budget cannot pay for even the cheapest model (refused before the search)."""


def raw_params(search, point):
    """``point`` (in the searched columns) as the parameters of a model of the raw columns."""
    params = dict(point)
    laplacian = point.get("kernel") == "laplacian"
    if getattr(search, "kernel_metric_", None) is not None:  # the learned metric, scaled
        # on the rows x L, an RBF's gamma scales M = L L^T, a Laplacian's scales L
        params["gamma"] = search.kernel_metric_.metric_.scaled(
            point["gamma"] ** 2 if laplacian else point["gamma"])
    elif search.widths_ is not None:
        # the columns were scaled by sqrt(widths): an RBF's squared distances carry the
        # widths, a Laplacian's absolute differences their square roots
        widths = search.widths_.gamma_
        params["gamma"] = point["gamma"] * (np.sqrt(widths) if laplacian else widths)
    return params


def model_on(search, state, point, rows, settings=None):
    """The unfitted model of ``point`` for a fit on ``rows`` rows of the first fold's
    training rows (every row: ``rows = n``), and its parameters.

    A point's FALKON penalty is always the one for the folds of every row (the grid's,
    :func:`penalty_on_rows`); on fewer rows it is scaled by :func:`penalty_on_rows`, and
    the refit on every row keeps it, as a refit after ``GridSearchCV`` does.
    """
    params = raw_params(search, point)
    if FAMILIES[params["family"]].penalty == "alpha" and rows < state.train0.size:
        params["alpha"] = params["alpha"] * penalty_on_rows(rows, state.train0.size)
    if "n_components" in params and FAMILIES[params["family"]].capped:
        params["n_components"] = int(min(params["n_components"], rows))
    return search._best_model(params, settings or state.settings)[0], params


def subsample_rows(rows, size, labels, seed):
    """``size`` of ``rows`` (sorted), every class kept (at least 2 rows each where it has them)."""
    if size >= rows.size:
        return rows
    rng = np.random.RandomState(seed)
    if labels is None:
        return np.sort(rng.choice(rows, size, replace=False))
    picked = []
    values, counts = np.unique(labels[rows], return_counts=True)
    for value, count in zip(values, counts):
        members = rows[labels[rows] == value]
        take = int(min(count, max(min(2, count), round(size * count / rows.size))))
        picked.append(rng.choice(members, take, replace=False))
    return np.sort(np.concatenate(picked))


def first_family(state):
    """The family the first model is of: FALKON where it is searched (cheap and sound)."""
    return FALKON.name if FALKON.name in state.families else state.families[0]


def first_model(search, state, sched):
    """A fitted, scored model within seconds: the first family's middle configuration on
    ``FIRST_ROWS`` rows of the first fold's training rows, grown (doubling its rows)
    while its measured cost fits ``FIRST_SHARE`` of the budget.

    The first fit is the probe of the budget: it runs to its end, and if the budget
    is over by then the search is refused with the budget that would do.
    """
    family = first_family(state)
    point = FAMILIES[family].middle_point(state.space, state.settings)
    curve = state.fit_curve = CostCurve(*FAMILIES[family].fit_growth, warmup=True)
    state.fit_family, state.fit_point = family, point
    train = state.train0
    labels = state.data.y_index
    seed = state.settings.random_state
    seconds = None if sched.end is None else \
        max(FIRST_SHARE * sched.budget_s, min(FIRST_LEAST_SECONDS, 0.15 * sched.budget_s))
    # the first fit is small: it carries the one-time costs (numba compiling its kernels
    # on a fresh install: seconds), so the fits after it measure the work alone
    rows = int(min(train.size, WARMUP_ROWS))
    tried = []
    with sched.stage("first model", seconds=seconds) as run:
        while True:
            part = subsample_rows(train, rows, labels, seed)
            model, params = model_on(search, state, point, part.size)
            began = now()
            if not tried:
                with unarmed():  # the probe of the budget: measured to its end
                    state.fit_on(model, part)
                    score = state.score_on_first_fold(model)
            else:
                state.fit_on(model, part)
                score = state.score_on_first_fold(model)
            took = now() - began
            curve.add(part.size, took)
            state.n_scored += 1
            kept = state.consider(Candidate(model, params, dict(point), score, None, part.size,
                                            "first model"))
            tried.append(f"{part.size} rows: {score:.4f} in {took:.2f} s"
                         + ("" if kept else " (not kept)"))
            run.note = (f"{family}'s middle configuration ({describe(point, state)}) on "
                        f"{', then '.join(tried)} ({state.scoring} on the first fold's "
                        f"{state.valid0.size} held-out rows)")
            if len(tried) == 1:
                _refuse_if_over(search, sched, family, part.size, state)
                if seconds is not None:  # the growth's allowance starts after the warm-up
                    run.stop.end = min(sched.until(), now() + seconds)
            if seconds is None and part.size >= min(train.size, FIRST_ROWS):
                break
            if part.size >= train.size:
                break
            nxt = int(min(train.size, max(FIRST_ROWS, 2 * part.size)))
            if nxt > 0.75 * train.size:
                nxt = train.size
            # the fit after the warm-up is made where any time is left (one measurement
            # cannot tell how the cost grows); then while the next is predicted to fit
            if run.left() <= 0 or (len(tried) > 1 and run.left() < curve.predict(nxt)):
                break
            rows = nxt


def _refuse_if_over(search, sched, family, rows, state):
    if sched.end is None or now() <= sched.end:
        return
    spent = now() - sched.started
    least = max(1, int(np.ceil(3.0 * spent + 1.0)))
    raise SearchTimeError(
        f"time_budget={search.time_budget!r} is too short for the cheapest model: checking "
        f"the {state.n} rows and fitting the first one ({family} on {rows} rows, scored on "
        f"{state.valid0.size} held-out rows) took {spent:.2f} s; give time_budget >= "
        f"{least}s.")


def describe(point, state):
    factor = point["gamma"] / state.space.gamma_ref
    text = f"gamma x {factor:.3g}"
    if "C" in point:
        text += f", C={point['C']:.3g}"
    if "alpha" in point:
        text += f", alpha={point['alpha']:.3g}"
    if "n_components" in point:
        text += f", {point['n_components']} centres"
    return text


#: a refit predicted above this share of the time left leaves its time to the grid ...
REFIT_MOST_SHARE = 0.6
#: ... but for this share of it, in which it runs on a subsample
REFIT_SUBSAMPLE_SHARE = 0.25


def predicted_refit(state, family=None):
    """Seconds a refit on every row is predicted to take, from the fits measured so far."""
    curve = state.fit_curve
    if curve is None or not curve.points:
        return 0.0
    return curve.predict(state.n)


def refit_grant(state, sched, predicted=None):
    """Seconds the stages before the refit leave it: the refit on every row as predicted
    (``predicted``, with its safety, where a measured fit of the winner priced it; else
    from the first model's fits), or, where that is more than :data:`REFIT_MOST_SHARE`
    of the time left (the refit will then run on a subsample of what it is left),
    :data:`REFIT_SUBSAMPLE_SHARE` of it: a refit that cannot end in time does not starve
    the grid of its time."""
    if predicted is None:
        predicted = REFIT_SAFETY * predicted_refit(state)
    if sched.end is None:
        return predicted
    left = max(sched.left(), 0.0)
    return predicted if predicted <= REFIT_MOST_SHARE * left else REFIT_SUBSAMPLE_SHARE * left


def refit_seconds(state, records, point, unit_seconds=0.0):
    """Seconds to reserve for refitting ``point`` on every row (``REFIT_SAFETY`` and a
    calibration's 5 fits included).

    The first model's measured fits of the same family predict it best (they are the
    estimator's own fits, not shares of a grid's shared work); the exact SVM's cost
    grows with ``C`` (about as its square root, beyond the first model's ``C``). Other
    families: :func:`kernelscale.model_selection._deadline.refit_reserve` on the grid's
    measured fold fits.
    """
    family = point["family"]
    n = state.n
    n_train = min(len(tr) for tr, _ in state.folds)
    curve = state.fit_curve
    if family == state.fit_family and curve is not None and curve.points:
        seconds = curve.predict(n)
        if FAMILIES[family].penalty == "C" and "C" in state.fit_point:
            seconds *= max(1.0, point["C"] / state.fit_point["C"]) ** 0.5
        elif point.get("dtype") == "float64" and state.fit_point.get("dtype") != "float64":
            seconds *= 2.0
    else:
        seconds = refit_reserve(family, [r for r in records if r["params"]["family"] == family],
                                unit_seconds, n / n_train, state.data.X.shape,
                                state.settings.memory_budget)
    measured = state.measured_refit
    if measured is not None and same_point(measured[0], point):
        seconds = max(seconds, measured[1])
    if state.settings.probability:  # the calibration's 5 internal fits
        seconds *= 1 + 5 * (n_train / n)
    return REFIT_SAFETY * seconds


def predicted_unit(state, rows):
    """Seconds one grid unit (a gamma) on ``rows`` rows is predicted to take: measured
    units where there are some, else the family's ``unit_per_fit`` first-model fits."""
    if state.unit_curve is not None and state.unit_curve.points:
        return state.unit_curve.predict(rows)
    family = first_family(state)
    return FAMILIES[family].unit_per_fit * (state.fit_curve.predict(rows * 0.8)
                                   if state.fit_curve is not None else 0.0)
