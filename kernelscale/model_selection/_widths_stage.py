"""The search's metric stage: per-feature kernel widths (:class:`KernelWidths`), then a
full metric by AGOP rounds from them (:class:`KernelMetric`), where they are to be
learned and their measured cost fits what the grid and the refit leave; the one that
scored best on held-out rows is the kernel the grid searches around."""

from __future__ import annotations

import numpy as np

from .._clock import now
from .._planner import held_plan, nbytes
from ..models.ridge import FLOAT32_PENALTY_FLOOR
from ._first_model import predicted_unit, refit_grant
from ._metric import KernelMetric, MetricTimeError
from ._schedule import CostCurve
from ._widths import KernelWidths, WidthsTimeError

__all__ = ["learn_metric", "learn_agop", "use_metric", "wants_widths", "run_seconds",
           "WIDTHS_MIN_ROWS", "WIDTHS_MAX_FEATURES", "grid_reserve"]

#: the most of the time budget the widths may take
WIDTHS_SHARE = 0.25
#: learn_widths="auto" learns them from this many rows on (below, the held-out parts
#: the widths are chosen on are too small to rank the features reliably) ...
WIDTHS_MIN_ROWS = 5_000
#: ... and for at most this many dense features (tabular data: a step costs n m d, and
#: images or text, thousands of like columns, gain little)
WIDTHS_MAX_FEATURES = 200
#: the fewest rows the widths are learned on when the time shrinks them
WIDTHS_LEAST_ROWS = 2_000
#: L-BFGS steps the widths are priced at (they stop early, ~20-40 steps, see _widths)
WIDTHS_STEPS = 30
#: where the time affords at least this share of the rows wanted, the widths get them all
#: (see _learn_widths)
WIDTHS_SNAP = 0.9
#: rows of the smaller of the two measurements that price a step of the widths
WIDTHS_PROBE_ROWS = 1_000
#: the least share of the time left the metric leaves the grid, where one gamma on every
#: row costs more (the grid then shrinks to a subsample: the metric is worth more than
#: the rows, measured at 1e5 rows and 30 s: 0.855 without widths, 0.91+ with)
GRID_LEAST_SHARE = 0.3
#: the most of the time budget AGOP's rounds may take
METRIC_SHARE = 0.25
#: rows one round of AGOP is measured on, to price the rounds
METRIC_PROBE_ROWS = 2_000
#: the fewest rows the metric is learned on when the time shrinks them
METRIC_LEAST_ROWS = 3_000
#: a fit of two L-BFGS iterations costs about this many steps (its loss and gradient at
#: the start, then per iteration; 2.1 s for 2 iterations against 0.42 s a step measured
#: on 20,000 rows x 20 features)
WIDTHS_PROBE_STEPS = 5.0


def wants_widths(learn_widths, X):
    """``(plan, why not)``: which metrics to learn for ``X`` ("both": the diagonal, then
    AGOP from it; "diagonal"; "agop"; None: none, and why)."""
    n, d = X.shape
    if learn_widths in ("auto", True):
        if learn_widths == "auto":
            if hasattr(X, "tocsr"):
                return None, "not learned: sparse columns (learn_widths='auto')"
            if n < WIDTHS_MIN_ROWS:
                return None, f"not learned: {n} rows < {WIDTHS_MIN_ROWS} (learn_widths='auto')"
            if not 2 <= d <= WIDTHS_MAX_FEATURES:
                return None, (f"not learned: {d} features, outside 2-{WIDTHS_MAX_FEATURES} "
                              "(learn_widths='auto')")
        return ("both" if d >= 2 else "diagonal"), ""
    if learn_widths in (False, "none"):
        return None, f"not learned: learn_widths={learn_widths!r}"
    return learn_widths, ""


def learn_metric(search, state, sched):
    """The per-feature widths (:class:`KernelWidths`), where they are to be learned and
    their measured cost fits what the grid and the refit leave."""
    X = state.data.X
    plan, why = wants_widths(search.learn_widths, X)
    if plan is None:
        sched.skip("widths", why)
        return
    widths = None
    if plan in ("both", "diagonal"):
        widths = _learn_widths(search, state, sched)
    metric = None
    if plan in ("both", "agop"):
        metric = learn_agop(search, state, sched, widths)
    if metric is not None and (widths is None or metric.best_round_ > 0):
        use_metric(search, state, metric)
    elif widths is not None:
        _use_widths(search, state, widths)


def _learn_widths(search, state, sched):
    """:class:`KernelWidths` within what the grid and the refit leave, or None."""
    X = state.data.X
    classifier = state.task == "classifier"
    y = state.data.y if classifier or state.data.y.ndim == 1 else state.data.y[:, 0]
    task = "classification" if classifier else "regression"
    seed = state.settings.random_state
    budget = state.settings.memory_budget
    n = X.shape[0]
    wanted = rows = int(min(n, KernelWidths().max_samples))
    reserve = grid_reserve(state, sched, n)
    granted = None
    if sched.end is not None:
        granted = min(WIDTHS_SHARE * sched.budget_s, sched.left() - reserve)
        least = min(WIDTHS_LEAST_ROWS, rows)
        if granted <= 0:
            sched.skip("widths", f"skipped for time: {max(sched.left(), 0):.1f} s are left, and "
                                 f"the grid and the refit are predicted at {reserve:.1f} s")
            return None
        # a step's cost is measured on two small subsamples (a fixed part, for the
        # centres, and a part that grows with the rows), then priced on the rows
        points = []
        with sched.stage("widths probe", seconds=granted) as run:
            for probe in sorted({min(n, WIDTHS_PROBE_ROWS), min(n, 4 * WIDTHS_PROBE_ROWS)}):
                began = now()
                try:
                    KernelWidths(task=task, max_samples=probe, max_iter=2,
                                 memory_budget=budget, random_state=seed).fit(X, y)
                except WidthsTimeError:
                    run.outcome = "stopped"
                    break
                points.append((probe, (now() - began) / WIDTHS_PROBE_STEPS))
            if points:
                run.note = (f"a step of the widths: {_step_curve(points).predict(rows):.2f} s "
                            f"on {rows} rows (measured on "
                            f"{', '.join(str(p[0]) for p in points)} rows)")
        curve = _step_curve(points)
        granted -= run_seconds(sched)
        rows = int(min(rows, curve.largest(granted / WIDTHS_STEPS)))
        if rows >= WIDTHS_SNAP * wanted:
            # a step's measured cost varies 2x between runs of the same data (bio: 0.43 s
            # and 1.00 s on 20,000 rows), and a cut of a few percent draws another
            # subsample, so other widths (bio: 0.99577 in five runs, 0.9942 in the one
            # whose widths got 19,564 rows); the widths' own time budget stops them where
            # they do run long, their best so far kept
            rows = wanted
        if run.outcome != "done" or len(points) < 1 or rows < least:
            sched.skip("widths", (
                f"skipped for time: {WIDTHS_STEPS} steps on {least} rows are predicted at "
                f"{WIDTHS_STEPS * curve.predict(least):.1f} s, and {max(granted, 0):.1f} s are "
                f"left beside the grid's and the refit's {reserve:.1f} s"),
                predicted=WIDTHS_STEPS * curve.predict(wanted))
            return None
    widths = KernelWidths(task=task, max_samples=rows, time_budget=granted,
                          memory_budget=budget, random_state=seed,
                          verbose=max(0, search.verbose - 1))
    with sched.stage("widths", reserve=reserve) as run:
        try:
            widths.fit(X, y)
        except WidthsTimeError as error:
            run.outcome = "skipped"
            run.note = f"skipped for time: their first step took {error.seconds:.1f} s"
            return None
        run.note = (f"learned on {rows} rows in {widths.n_iter_} steps (stopping loss "
                    f"{widths.initial_loss_:.4g} -> {widths.loss_:.4g})")
        if rows < wanted:
            run.outcome = "shrunk"
            run.note += f"; rows shrunk from {wanted} to fit the time"
    return widths if run.outcome in ("done", "shrunk") else None


def grid_reserve(state, sched, n):
    """Seconds the metric leaves the grid and the refit: the refit, and the grid's middle
    gamma on every row, or (where that is most of the time left: the grid then runs on a
    subsample) ``GRID_LEAST_SHARE`` of what is left."""
    unit = predicted_unit(state, n)
    if sched.end is not None:
        unit = min(unit, GRID_LEAST_SHARE * max(sched.left(), 0.0))
    return refit_grant(state, sched) + unit


def _step_curve(points):
    """A step's seconds by rows, from the probes measured (none: nothing is affordable)."""
    if len(points) > 1:
        return CostCurve.affine(points)
    curve = CostCurve(1.0, 1.0, 1.0)
    if points:
        curve.add(*points[0])
    return curve


def run_seconds(sched):
    """Seconds the last stage took."""
    return sched.records[-1].seconds


def _use_widths(search, state, widths):
    """Search on columns scaled by sqrt(widths): its gamma 1 is the learned kernel, its
    factors scale it; the refit puts gamma * widths on the raw columns."""
    data, space, settings = state.data, state.space, state.settings
    X = data.X
    scaled = widths.transform(X)
    copy = nbytes(scaled) if scaled is not X else 0
    held_plan("the columns scaled by the learned widths", settings.memory_budget,
              {"scaled columns": copy}, " (or learn_widths=False)")
    data.raw_X, data.X = X, scaled
    settings.memory_budget -= copy
    search.widths_ = widths
    search.feature_relevance_ = widths.feature_relevance_
    space.gamma_ref = 1.0
    if search.alphas is None:
        # at most float32's floor unless float64 is asked for: below it the refit is
        # float64, whose K(X, C) at 1e6 rows is recomputed at every CG step
        penalty = widths.penalty_ if search.dtype == "float64" else \
            max(widths.penalty_, FLOAT32_PENALTY_FLOOR)
        space.alphas = np.unique(np.r_[space.alphas, penalty * settings.weight_total])
    # the first model's configuration and the grid probe's records were on the raw
    # columns: no grid point is either now
    if state.best is not None and state.best.how == "first model":
        state.best.point = None
    state.screened, state.screened_rows = [], 0


def learn_agop(search, state, sched, widths):
    """:class:`KernelMetric` (AGOP rounds from the diagonal widths, or from the isotropic
    kernel), within what the grid and the refit leave; None where it did not fit."""
    X = state.data.X
    classifier = state.task == "classifier"
    y = state.data.y if classifier or state.data.y.ndim == 1 else state.data.y[:, 0]
    n = X.shape[0]
    reserve = grid_reserve(state, sched, n)
    rows = int(min(n, KernelMetric().max_samples))
    options = dict(task="classification" if classifier else "regression",
                   init=None if widths is None else widths.gamma_,
                   memory_budget=state.settings.memory_budget,
                   random_state=state.settings.random_state,
                   verbose=max(0, search.verbose - 1))
    granted = None
    if sched.end is not None:
        granted = min(METRIC_SHARE * sched.budget_s, sched.left() - reserve)
        probe = min(rows, METRIC_PROBE_ROWS)
        if granted <= 0:
            sched.skip("metric", f"skipped for time: {max(sched.left(), 0):.1f} s are left, and "
                                 f"the grid and the refit are predicted at {reserve:.1f} s")
            return None
        # a round's cost (a Nystrom fit of every penalty, then the gradients) measured
        # on a small subsample, priced on the rows as linear in them
        with sched.stage("metric probe", seconds=granted) as run:
            began = now()
            try:
                KernelMetric(n_rounds=1, max_samples=probe, **options).fit(X, y)
            except MetricTimeError:
                run.outcome = "stopped"
            took = (now() - began) / 2.0  # its two rounds
            run.note = f"a round of AGOP on {probe} rows: {took:.2f} s"
        curve = CostCurve(1.0, 1.0, 1.0)
        curve.add(probe, took)
        granted -= run_seconds(sched)
        rounds = KernelMetric().n_rounds + 1
        rows = int(min(rows, curve.largest(granted / rounds)))
        if run.outcome != "done" or rows < min(METRIC_LEAST_ROWS, n):
            sched.skip("metric", (
                f"skipped for time: {rounds} rounds on {min(METRIC_LEAST_ROWS, n)} rows are "
                f"predicted at {rounds * curve.predict(min(METRIC_LEAST_ROWS, n)):.1f} s, and "
                f"{max(granted, 0):.1f} s are left beside the grid's and the refit's "
                f"{reserve:.1f} s"), predicted=rounds * curve.predict(n))
            return None
    metric = KernelMetric(max_samples=rows, time_budget=granted, **options)
    with sched.stage("metric", reserve=reserve) as run:
        try:
            metric.fit(X, y)
        except MetricTimeError as error:
            run.outcome, run.note = "skipped", f"skipped for time: {error}"
            return None
        start = "the widths" if widths is not None else "the isotropic kernel"
        losses = ", ".join(f"{h['loss']:.4g}" for h in metric.history_)
        kept = ("kept round 0: AGOP did not improve on " + start) if metric.best_round_ == 0 \
            else f"kept round {metric.best_round_} (rank {metric.metric_.rank})"
        run.note = (f"AGOP from {start} on {rows} rows, {metric.n_iter_} rounds (held-out "
                    f"loss {losses}): {kept}")
        if metric.best_round_ > 0:
            state.choices.append(
                f"a metric learned by AGOP (round {metric.best_round_}: held-out loss "
                f"{metric.loss_:.4g} against {metric.initial_loss_:.4g} from {start})")
    return metric if run.outcome == "done" else None


def use_metric(search, state, metric):
    """Search on the rows in the metric's coordinates ``x L``: its gamma 1 is the learned
    kernel, its factors scale it; the refit puts ``gamma * M`` on the raw columns."""
    data, space, settings = state.data, state.space, state.settings
    X = data.X
    transformed = metric.transform(X)
    held_plan("the rows in the learned metric's coordinates", settings.memory_budget,
              {"transformed rows": nbytes(transformed)}, " (or learn_widths=False)")
    data.raw_X, data.X = X, transformed
    settings.memory_budget -= nbytes(transformed)
    search.kernel_metric_ = metric
    search.feature_relevance_ = metric.feature_relevance_
    space.gamma_ref = 1.0
    if search.alphas is None:
        penalty = metric.penalty_ if search.dtype == "float64" else \
            max(metric.penalty_, FLOAT32_PENALTY_FLOOR)
        space.alphas = np.unique(np.r_[space.alphas, penalty * settings.weight_total])
    if state.best is not None and state.best.how == "first model":
        state.best.point = None
    state.screened, state.screened_rows = [], 0
