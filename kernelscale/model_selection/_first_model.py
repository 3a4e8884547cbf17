"""The search's first stage: a fitted, scored model within seconds, and what every later
stage prices its work with (the family's fit cost measured on growing subsamples).

Also the helpers every stage shares to turn a grid configuration into a model of the
raw columns fitted on some of the first fold's training rows.
"""

from __future__ import annotations

import numpy as np

from .._clock import now, unarmed
from ..models.ridge import FLOAT32_PENALTY_FLOOR
from ._deadline import refit_reserve
from ._engines import FEATURE_SVMS, middle_out
from ._schedule import CostCurve
from ._space import refit_dtype
from ._state import Candidate

__all__ = ["SearchTimeError", "first_model", "first_family", "middle_point", "raw_params",
           "model_on", "subsample_rows", "predicted_refit", "predicted_unit", "describe",
           "refit_seconds",
           "FIT_GROWTH", "REFIT_SAFETY", "UNIT_PER_FIT"]

#: rows of the first model (the probe whose cost says whether a budget can be met)
FIRST_ROWS = 1000
#: share of the time budget the first model may grow in (doubling its rows) ...
FIRST_SHARE = 0.05
#: ... and at least these seconds (or 15% of a shorter budget): two fits measure how
#: its cost grows, where the first carries one-time costs (compiling, first allocations)
FIRST_LEAST_SECONDS = 3.0
#: a predicted refit is reserved this many times over (costs measured on fewer rows)
REFIT_SAFETY = 1.25
#: growth of one fit's seconds with its rows, as (assumed, least, most): the exact SVM
#: ~n^2 (small fits measure less: their overheads), FALKON and the feature maps ~n
FIT_GROWTH = {"exact-svm": (2.0, 1.5, 2.5), "falkon": (1.0, 0.7, 1.5),
              "nystrom-svm": (1.0, 0.8, 1.5), "rff-svm": (1.0, 0.8, 1.5)}
#: a grid unit (a gamma with its C / alpha path on every fold) against one fit of the
#: family's defaults on the first fold's training rows, before any unit is measured:
#: measured at 3,000-100,000 rows of make_nonlinear_problem, 5 folds, 7 C / alphas (exact
#: 8-24x, FALKON 5-15x: its m x m eigendecompositions do not shrink with the rows)
UNIT_PER_FIT = {"exact-svm": 15.0, "falkon": 10.0, "nystrom-svm": 10.0, "rff-svm": 10.0}


class SearchTimeError(ValueError):
    """The time budget cannot pay for even the cheapest model (refused before the search)."""


def middle_point(family, space, settings):
    """The grid's configuration nearest the family's defaults: the middle gamma, C nearest
    1, FALKON's alpha nearest float32's floor (``cv_results_``'s ``params`` form)."""
    gamma = float(space["gamma_ref"] * middle_out(space["factors"])[0])
    if family == "falkon":
        alphas = np.asarray(space["alphas"], dtype=np.float64)
        target = FLOAT32_PENALTY_FLOOR * settings["weight_total"]
        alpha = float(alphas[np.argmin(np.abs(np.log(alphas / target)))])
        return {"family": "falkon", "gamma": gamma, "alpha": alpha,
                "n_components": int(space["n_components"]),
                "dtype": refit_dtype(alpha, settings["dtype"], settings["weight_total"])}
    Cs = np.asarray(space["Cs"], dtype=np.float64)
    point = {"family": family, "gamma": gamma, "C": float(Cs[np.argmin(np.abs(np.log(Cs)))])}
    if family in FEATURE_SVMS:
        point["n_components"] = int(space["n_components"])
    return point


def raw_params(search, point):
    """``point`` (in the searched columns) as the parameters of a model of the raw columns."""
    params = dict(point)
    if getattr(search, "kernel_metric_", None) is not None:  # the learned metric, scaled
        params["gamma"] = search.kernel_metric_.metric_.scaled(point["gamma"])
    elif search.widths_ is not None:
        params["gamma"] = point["gamma"] * search.widths_.gamma_
    return params


def model_on(search, state, point, rows, settings=None, base_rows=None):
    """The unfitted model of ``point`` for a fit on ``rows`` rows of the first fold's
    training rows (every row: ``rows = n``), and its parameters.

    FALKON's penalty is a sum over rows: on other rows than the grid scored it on
    (``base_rows``: its folds' training rows; by default the first fold's), it is
    scaled with them (the same penalty per row); the refit on every row keeps the
    grid's penalty, as a refit after ``GridSearchCV`` does.
    """
    params = raw_params(search, point)
    base = state.train0.size if base_rows is None else base_rows
    if params["family"] == "falkon" and (rows < state.train0.size or base != state.train0.size):
        params["alpha"] = params["alpha"] * rows / base
    if "n_components" in params and params["family"] != "rff-svm":
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
    return "falkon" if "falkon" in state.families else state.families[0]


def first_model(search, state, sched):
    """A fitted, scored model within seconds: the first family's middle configuration on
    ``FIRST_ROWS`` rows of the first fold's training rows, grown (doubling its rows)
    while its measured cost fits ``FIRST_SHARE`` of the budget.

    The first fit is the probe of the budget: it runs to its end, and if the budget
    is over by then the search is refused with the budget that would do.
    """
    family = first_family(state)
    point = middle_point(family, state.space, state.settings)
    curve = state.fit_curve = CostCurve(*FIT_GROWTH[family], warmup=True)
    state.fit_family, state.fit_point = family, point
    train = state.train0
    labels = state.data["y_index"]
    seed = state.settings["random_state"]
    seconds = None if sched.end is None else \
        max(FIRST_SHARE * sched.budget_s, min(FIRST_LEAST_SECONDS, 0.15 * sched.budget_s))
    rows = int(min(train.size, FIRST_ROWS))
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
            if seconds is None or part.size >= train.size:
                break
            nxt = int(min(train.size, 2 * part.size))
            if nxt > 0.75 * train.size:
                nxt = train.size
            # a second fit is made where it can (the first carries one-time costs, and
            # one measurement cannot tell how the cost grows)
            if run.left() < (curve.predict(nxt) if len(tried) > 1 else 2 * took):
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
    factor = point["gamma"] / state.space["gamma_ref"]
    text = f"gamma x {factor:.3g}"
    if "C" in point:
        text += f", C={point['C']:.3g}"
    if "alpha" in point:
        text += f", alpha={point['alpha']:.3g}"
    if "n_components" in point:
        text += f", {point['n_components']} centres"
    return text


def predicted_refit(state, family=None):
    """Seconds a refit on every row is predicted to take, from the fits measured so far."""
    curve = state.fit_curve
    if curve is None or not curve.points:
        return 0.0
    return curve.predict(state.n)


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
        if family == "exact-svm":
            seconds *= max(1.0, point["C"] / state.fit_point["C"]) ** 0.5
        elif family == "falkon" and point.get("dtype") == "float64":
            seconds *= 2.0
    else:
        seconds = refit_reserve(family, [r for r in records if r["params"]["family"] == family],
                                unit_seconds, n / n_train, state.data["X"].shape,
                                state.settings["memory_budget"])
    if state.settings.get("probability"):  # the calibration's 5 internal fits
        seconds *= 1 + 5 * (n_train / n)
    return REFIT_SAFETY * seconds


def predicted_unit(state, rows):
    """Seconds one grid unit (a gamma) on ``rows`` rows is predicted to take: measured
    units where there are some, else ``UNIT_PER_FIT`` first-model fits."""
    if state.unit_curve is not None and state.unit_curve.points:
        return state.unit_curve.predict(rows)
    family = first_family(state)
    return UNIT_PER_FIT[family] * (state.fit_curve.predict(rows * 0.8)
                                   if state.fit_curve is not None else 0.0)
