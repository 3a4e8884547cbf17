"""The search's stages after its grid: the refit of the best on every row (or, where the
time left cannot pay for it, on as many of the first fold's training rows as it can),
the exact SVM as a challenger, and FALKON's centres grown by the time left.

The refit is part of the plan: the grid stops starting gammas while the refit,
predicted from the winner's measured fits, still fits the budget; if it is
predicted not to fit when its turn comes, the winner is fitted on the most rows
the time left pays for and scored on the first fold's held-out rows, and it is
kept only if it scored better than the model already held.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._clock import now
from .._planner import held_plan, nbytes
from ..models.ridge import fold_calibration
from ._capacity import exact_challenger, grow_centres
from ._exact import exact_kernel_matrix
from ._families import EXACT_SVM, FALKON, FAMILIES, classifier_model
from ._first_model import REFIT_SAFETY, SIZED_SHARE, model_on, refit_seconds, subsample_rows
from ._leaves_stage import leaves_model
from ._schedule import CostCurve
from ._state import Candidate, same_point

__all__ = ["refit", "secure_screen", "challenge", "grow", "settings_on_fold"]

#: a refit predicted longer than this, and a large part of the time left, is preceded
#: by the winner fitted on a share of the rows (so that a machine that turns slower
#: still leaves its model, not the first one)
SECURE_SECONDS = 10.0
#: that share of the refit's predicted seconds
SECURE_SHARE = 0.15
#: a refit predicted at more than this share of the time left is secured first whatever
#: its size: a loaded machine slows it past its grant (Beijing, two busy loops, 2 minutes:
#: a 6 s refit stopped at the budget's end and the first model, 0.8627, stood where the
#: grid's winner on a subsample had scored 0.9128)
TIGHT_SHARE = 0.5
#: at most this many fits on more rows after a refit on a subsample
MORE_ROWS_ROUNDS = 3


def _winner(records):
    means = np.array([np.mean(r["scores"]) for r in records])
    means = np.where(np.isfinite(means), means, -np.inf)
    return records[int(np.argmax(means))]


def _describe(point, state):
    text = f"{point['family']}, gamma x {point['gamma'] / state.space.gamma_ref:.3g}"
    for key in ("C", "alpha"):
        if key in point:
            text += f", {key}={point[key]:.3g}"
    return text


def _fit_curve(state, winner, train_rows):
    """The winner's fit cost by rows: the first model's measured fits where it is that
    family (they measured the estimator's own fit), else its measured fold fits."""
    family = winner["params"]["family"]
    if state.fit_curve is not None and state.fit_curve.points and family == state.fit_family:
        curve = CostCurve(*FAMILIES[family].fit_growth)
        curve.points = list(state.fit_curve.points)
        return curve
    curve = CostCurve(*FAMILIES[family].fit_growth)
    path = [r for r in (state.records or state.screened)
            if r["params"]["family"] == family and r["params"]["gamma"] == winner["params"]["gamma"]
            and r["params"].get("C", 0) <= winner["params"].get("C", 0)]
    seconds = float(sum(np.mean(r["fit_times"]) for r in path)) if family != FALKON.name else \
        float(np.mean(winner["fit_times"]))
    curve.add(train_rows, seconds)
    return curve


def refit(search, state, sched):
    """The grid's winner on every row, where the time left pays for it; else on the most
    of the first fold's training rows it pays for. Kept only if it scored better."""
    records = state.records or state.screened
    if not records:
        sched.skip("refit", f"nothing was cross-validated: the {state.best.how} stands "
                            f"({state.best.rows} rows)")
        _more_rows(search, state, sched, records)
        return
    winner = _winner(records)
    point = winner["params"]
    n = state.n
    if state.records:
        score0, cv = float(winner["scores"][0]), float(np.mean(winner["scores"]))
        held = state.best
        state.credit(held)
        if not state.better(Candidate(None, {}, point, score0, cv, n, "refit"), held):
            which = (f"mean CV {held.cv_score:.4f} against {cv:.4f}" if held.cv_score is not None
                     else f"{held.score:.4f} against {score0:.4f} on the first fold's held-out "
                          "rows")
            _held_on_every_row(search, state, sched, (
                f"the grid's best ({_describe(point, state)}) did not score above the "
                f"{held.how} ({which})"))
            return
        unit = state.unit_curve.predict(n) if state.unit_curve is not None else 0.0
        predicted = refit_seconds(state, records, point, unit)
        if sched.affordable(predicted):
            left = sched.left()
            secure = (predicted >= SECURE_SECONDS and predicted > 0.3 * left) or \
                predicted > TIGHT_SHARE * left
            if secure and not same_point(held.point, point):
                _on_rows(search, state, sched, winner, SECURE_SHARE, predicted,
                         "refit (secured first)")
            _on_every_row(search, state, sched, winner, predicted)
            return
        why = (f"the refit on every row is predicted at {predicted:.1f} s, {sched.left():.1f} s "
               "are left")
    else:
        why = f"the grid was cross-validated on {state.screened_rows} rows only"
    _on_rows(search, state, sched, winner, None, None, "refit on a subsample", why)
    _more_rows(search, state, sched, records)


def _more_rows(search, state, sched, records):
    """The held configuration on more rows while the time left pays: on every row where
    the fits measured so far predict it, else on the most rows they predict (each fit
    measured in turn, so that the next prediction starts nearer). A budget priced from
    small fits alone is spent here rather than left unused."""
    for _ in range(MORE_ROWS_ROUNDS):
        held = state.best
        if held.point is None or held.rows >= state.n or sched.end is None:
            return
        predicted = refit_seconds(state, records, held.point)
        if sched.affordable(predicted):
            _held_on_every_row(search, state, sched, f"the {held.how}'s configuration")
            return
        curve = state.fit_curve
        if held.point["family"] != state.fit_family or curve is None or not curve.points:
            return
        rows = int(min(state.train0.size,
                       curve.largest(SIZED_SHARE * sched.left() / REFIT_SAFETY)))
        if rows < 2 * held.rows:
            return
        _on_rows(search, state, sched, {"params": held.point}, None, None,
                 "refit on a subsample", f"more rows for the {held.how}'s configuration")
        if state.best is held:  # more rows did not score better: no more of them
            return


#: the keys of a configuration that leave a fit's cost per row as it is (the exact SVM's
#: ``C`` does not: its iterations grow with it)
_COST_FREE = ("gamma", "alpha", "kernel")


def _measured(state, point, rows, seconds):
    """A fit of the first model's configuration but for its scale and penalty adds to its
    curve. One of another dtype or number of centres does not: a float64 fit held on
    loaded diamonds replaced the first model's float32 point, and the refit priced from
    it counted float64 twice (21.7 s reserved, 1.4 s taken)."""
    curve = state.fit_curve
    if curve is None or point["family"] != state.fit_family:
        return
    free = _COST_FREE if FAMILIES[point["family"]].penalty != "C" else ("gamma", "kernel")
    first = state.fit_point
    if any(point.get(key) != first.get(key) for key in set(point) | set(first)
           if key not in free):
        return
    curve.add(rows, seconds)


def _on_every_row(search, state, sched, winner, predicted):
    point = winner["params"]
    n = state.n
    data = state.data
    with sched.stage("refit", predicted=predicted) as run:
        model, params = model_on(search, state, point, n)
        extra = {}
        # where KernelSVC's own plan holds the matrix, the grid's distances make it bit
        # for bit the kernel the search scored
        if point["family"] == EXACT_SVM.name:
            factor = point["gamma"] / state.space.gamma_ref
            extra = {"kernel_matrix": lambda budget: exact_kernel_matrix(
                data.X, state.space.gamma_ref, factor, budget)}
        began = now()
        model.fit(state.data.columns, data.y, data.sample_weight, **extra)
        took = now() - began
        calibration = None
        if "values" in winner:  # FALKON's out-of-fold scores: its probabilities, for free
            calibration = fold_calibration(winner["values"], data.y_index,
                                           len(data.classes))
        candidate = Candidate(model, params, dict(point), float(winner["scores"][0]),
                              float(np.mean(winner["scores"])), n, "refit", calibration)
        state.consider(candidate)
        run.note = (f"{_describe(point, state)} on all {n} rows in {took:.1f} s "
                    f"(predicted {predicted:.1f} s)")
    if run.outcome == "stopped":
        run.note += f"; the {state.best.how} on {state.best.rows} rows stands"


def _held_on_every_row(search, state, sched, why):
    """The held model's configuration refitted on every row, where it was fitted on fewer
    and the time left pays for it (it carries the score it was kept for)."""
    held = state.best
    if held.rows >= state.n or held.point is None:
        sched.skip("refit", f"{why}: the {held.how} on {held.rows} rows stands")
        return
    predicted = refit_seconds(state, state.records or state.screened, held.point)
    if not sched.affordable(predicted):
        sched.skip("refit", f"{why}; its refit on every row is predicted at {predicted:.1f} s, "
                            f"{sched.left():.1f} s are left: the {held.how} on {held.rows} rows "
                            "stands", predicted=predicted)
        return
    with sched.stage("refit", predicted=predicted) as run:
        model, params = model_on(search, state, held.point, state.n)
        began = now()
        model.fit(state.data.columns, state.data.y, state.data.sample_weight)
        state.consider(Candidate(model, params, held.point, held.score, held.cv_score,
                                 state.n, held.how + ", refitted", fold_rows=held.fold_rows))
        run.note = (f"{why}: its configuration ({_describe(held.point, state)}) refitted on "
                    f"all {state.n} rows in {now() - began:.1f} s")


def secure_screen(search, state, sched, why):
    """The screen's winner fitted on the first fold's training rows, as many as its score
    was measured on, and scored on that fold's held-out rows: before grid work that a
    busy machine may stop past its grant, what the screen scored is held as a model, not
    only as a score (diamonds, two busy loops, 2 minutes: the halving's best scored
    0.9904 on 4,794 rows, the grid on 20,526 rows ran past its grant into the refit's, and
    the first model, 0.9522, stood). One fold's fit on the screen's rows: a fraction of
    what the halving measured.

    Returns the seconds its refit on every row is predicted at, from that fit's measured
    seconds (None where it fitted nothing: no budget, no screen, already held): the first
    model's fits, of a cheaper penalty or kernel, priced loaded diamonds' refit at 0.7 s
    during the grid, and at 14.0 s after it (too late: the held best on 3,835 rows
    stood)."""
    if not state.screened or sched.end is None:
        return None
    winner = _winner(state.screened)
    point = winner["params"]
    if same_point(state.best.point, point):
        return None
    fitted = _on_rows(search, state, sched, winner, None, None, "screen's winner", why,
                      rows=_screened_fold_rows(state), stage="secured")
    if fitted is None:
        return None
    rows, seconds = fitted
    state.measured_refit = (dict(point), seconds * (state.n / rows) ** _growth(state, point))
    return refit_seconds(state, state.screened, point)


def _growth(state, point):
    """How a held fit's seconds grow to every row: the family's refit power, or slower
    where the first model's fits of that family measured a slower growth (a small fit's
    overheads do not grow with its rows: loaded diamonds' held fits, grown linearly,
    raised the refit's reserve to 7.7 s and 21.7 s for refits that took 1.8 s and 1.4 s)."""
    power = FAMILIES[point["family"]].refit_power
    curve = state.fit_curve
    if point["family"] == state.fit_family and curve is not None and len(curve.points) > 1:
        return min(power, curve.growth)
    return power


def _screened_fold_rows(state):
    """The training rows of a fold of the screen's subsample: the rows behind its scores."""
    k = len(state.folds)
    return int(state.screened_rows * (k - 1) / k)


def _on_rows(search, state, sched, winner, share, predicted_full, how, why="", rows=None,
             stage="refit"):
    """The winner on the most of the first fold's training rows the time pays for (or on
    ``share`` of the rows a full refit predicted at ``predicted_full`` would take, or on
    ``rows`` where the time pays for them), scored on that fold's held-out rows. Returns
    ``(rows, seconds)`` of its last fit that ended (None where none did)."""
    point = winner["params"]
    train = state.train0
    curve = _fit_curve(state, winner,
                       train.size if state.records else _screened_fold_rows(state))
    seconds = SIZED_SHARE * sched.left() if share is None else share * predicted_full
    affordable = int(min(train.size, curve.largest(seconds / REFIT_SAFETY)))
    rows = affordable if rows is None else min(rows, affordable)
    held = state.best
    same = held is not None and same_point(held.point, point)
    if same and rows <= held.rows:
        _held_on_every_row(search, state, sched, f"{why}; its best is the {held.how}'s "
                                                 f"configuration, fitted on {held.rows} rows")
        return
    least = min(train.size, 200)
    if rows < least:
        sched.skip(stage, f"{why}; not even {least} rows of the first fold fit "
                          f"the {max(sched.left(), 0):.1f} s left: the {held.how} on "
                          f"{held.rows} rows stands", predicted=curve.predict(train.size))
        return
    sized = share is None and stage == "refit" and sched.end is not None
    if sized and not same and int(SECURE_SHARE * rows) >= least:
        # sized from the first model's fits, which may be of a cheaper penalty, kernel or
        # dtype (Beijing, two busy loops: a fit sized at 3.3 s of the 5.5 s left was
        # stopped at the budget's end, and the first model stood): a share of the rows
        # first, whose measured seconds then size the fit on more
        secured = int(SECURE_SHARE * rows)
        took = _fit_on_rows(search, state, sched, point, secured, how + " (secured first)",
                            why, curve.predict(secured), share, stage)
        if took is None:
            return None
        larger = int(min(rows, secured * SIZED_SHARE * sched.left() /
                         (REFIT_SAFETY * max(took, 1e-3))))
        if larger <= secured:
            return secured, took
        rows = larger
    took = _fit_on_rows(search, state, sched, point, rows, how, why, curve.predict(rows), share,
                        stage)
    return None if took is None else (rows, took)


def _fit_on_rows(search, state, sched, point, rows, how, why, predicted, share, stage):
    """``point`` fitted on ``rows`` of the first fold's training rows and scored on its
    held-out rows, offered as the best; the fit's seconds (None where the budget's end
    stopped it)."""
    train = state.train0
    took = None
    with sched.stage(stage, predicted=predicted) as run:
        part = subsample_rows(train, rows, state.data.y_index,
                              state.settings.random_state)
        model, params = model_on(search, state, point, part.size)
        seconds = state.fit_on(model, part)
        _measured(state, point, part.size, seconds)
        score = state.score_on_first_fold(model)
        state.n_scored += 1
        candidate = Candidate(model, params, dict(point), score, None, part.size, how,
                              fold_rows=part.size)
        kept = state.consider(candidate)
        took = seconds
        run.outcome = "shrunk" if share is None and stage == "refit" else "done"
        run.note = ((f"{why}: " if why else "") + f"{_describe(point, state)} fitted on "
                    f"{part.size} of the first fold's {train.size} training rows in "
                    f"{seconds:.1f} s: {score:.4f} on its held-out rows"
                    + ("" if kept else f", not above the {state.best.how}'s "
                       f"{state.best.score:.4f} (kept)"))
    return took


def settings_on_fold(state):
    """Settings of a fit on the first fold: uncalibrated, its budget less the fold's copy."""
    train, test = state.train0, state.valid0
    settings = state.settings
    copy = nbytes(state.data.X[:1]) * (len(train) + len(test))
    held_plan("a fit on the first fold", settings.memory_budget, {"the fold's rows": copy})
    return dataclasses.replace(settings, probability=False,
                               memory_budget=settings.memory_budget - copy)


def challenge(search, state, sched):
    """The exact SVM against a winner of another family, where its measured cost fits the
    time left (:func:`exact_challenger`); refitted on every row where it wins."""
    search.challenger_ = None
    best = state.best
    if (state.task != "classifier" or sched.end is None or search.families != "auto"
            or best.params["family"] == EXACT_SVM.name):
        sched.skip("challenger", "not needed: the exact SVM challenges a classifier's model of "
                                 "another family under a time budget")
        return
    space, data = state.space, state.data
    defaults = {"family": EXACT_SVM.name, "gamma": space.gamma_ref, "C": 1.0}
    candidates = [("at its defaults (C=1)", defaults)]
    screened = getattr(state, "screen", None)
    if screened and EXACT_SVM.name in screened:
        top = screened[EXACT_SVM.name]["params"]
        if not (np.isclose(top["gamma"], defaults["gamma"]) and top["C"] == 1.0):
            candidates.insert(0, (
                f"at its best on the family screen (C={top['C']:.4g}, gamma x "
                f"{top['gamma'] / space.gamma_ref:.4g})", top))
    scored = best.score
    fold = (state.train0, state.valid0)
    with sched.stage("challenger") as run:
        fold_settings = settings_on_fold(state)
        step = None
        for how, params in candidates:  # noqa: B007 (``how`` describes the last one tried)
            steps = []
            exact_challenger(lambda p=params: classifier_model(p, fold_settings), data.X,
                             data.y, data.sample_weight, fold, scored,
                             scoring=search.scoring, task=state.task, end=run.until,
                             seed=state.settings.random_state, log=steps.append)
            step = {**steps[0], "params": params, "winner_score": scored}
            search.challenger_ = step
            if step["score"] is not None:
                break
        run.note = _challenger_note(search, state, step, how, scored)
        if step["won"]:
            model, raw = model_on(search, state, params, state.n)
            model.fit(state.data.columns, data.y, data.sample_weight)
            state.n_scored += 1
            state.consider(Candidate(model, raw, dict(params), step["score"], None, state.n,
                                     "challenger"))


def _challenger_note(search, state, step, how, scored):
    if step["won"]:
        note = (f"the exact SVM {how} then scored {step['score']:.4f} on the first fold "
                f"against the search's {scored:.4f} and was refitted (its cost measured: "
                f"~n^{step['exponent']:.2f}, {step['seconds']:.1f} s on the fold)")
    elif step["score"] is not None:
        note = (f"the exact SVM {how} scored {step['score']:.4f} on the first fold, not above "
                f"the search's {scored:.4f}")
    else:
        note = (f"the exact SVM was not fitted on every row: its cost measured on up to "
                f"{step['measured_rows'][-1]} rows (~n^{step['exponent']:.2f}) predicted "
                f"{step['predicted_fold_s']:.0f} s for the first fold and "
                f"{step['predicted_refit_s']:.0f} s for the refit, past the time left")
    state.choices.append(note)
    return note


def grow(search, state, sched):
    """FALKON's centres, grown while the time left allows and they score better on the
    first fold (:func:`grow_centres`); the winner refitted with them on every row. Where
    local models won, each leaf's centres grow (fitted on the raw columns, as they were
    scored)."""
    search.capacity_ = None
    best = state.best
    leaves = state.leaves if best.how == "leaves" else None
    if (not (leaves or state.falkon_refitted())
            or search.n_components is not None or sched.end is None):
        sched.skip("growth", "not needed: FALKON's centres grow for a refitted FALKON winner "
                             "with automatic n_components under a time budget")
        return
    point = dict(best.point)
    refit_s = leaves["refit_seconds"] if leaves else \
        sum(r.seconds for r in sched.records if r.stage == "refit" and r.outcome == "done")
    steps = []
    with sched.stage("growth") as run:
        fold_settings = settings_on_fold(state)
        dtype = point.get("dtype") or state.data.X.dtype
        itemsize = 4 if np.dtype(dtype) == np.float32 else 8

        if leaves:
            X = state.data.columns

            def make_model(m):
                return leaves_model(search, state, {**point, "n_components": m},
                                    state.train0.size, leaves, fold_settings)[0]
        else:
            X = state.data.X

            def make_model(m):  # on the columns the grid scored (scaled by the widths)
                return search._best_model({**point, "n_components": m}, fold_settings)[0]
        search.capacity_ = steps
        fold_fits = []
        m = grow_centres(
            make_model, X, state.data.y, state.data.sample_weight,
            (state.train0, state.valid0), best.score, m=point["n_components"],
            scoring=search.scoring, task=state.task, end=run.until, refit_seconds=refit_s,
            memory_budget=state.settings.memory_budget,
            fold_budget=fold_settings.memory_budget, itemsize=itemsize, log=steps.append,
            max_m=leaves["largest_leaf"] if leaves else None,
            model_rows=leaves["largest_leaf"] if leaves else None,
            on_kept=lambda model, seconds: fold_fits.append((model, seconds)))
        state.n_scored += len(steps)
        what = "each leaf's centres" if leaves else "centres"
        tried = ", ".join(f"{s['n_components']}: {s['score']:.4f} in {s['seconds']:.1f} s"
                          for s in steps)
        capped = leaves is not None and 2 * point["n_components"] > leaves["largest_leaf"]
        run.note = (f"first fold: {best.score:.4f} with {point['n_components']} {what}"
                    + (f", then {tried}" if tried else
                       f"; the largest leaf holds {leaves['largest_leaf']} rows" if capped else
                       "; no doubling fits the time left"))
        kept = [s for s in steps if s["kept"]]
        # the refit of the most centres the time left pays for (each refit priced from its
        # fold fit, as the rows grow, as the doubling was): a refit stopped by the budget's
        # end loses every doubling (Beijing, 5 minutes: 8,000 centres scored, their refit
        # stopped, the leaves' 1,000 stood where 4,000 would have fitted)
        growth = state.n / state.train0.size
        while kept and now() + growth * kept[-1]["seconds"] > run.until:
            kept.pop()
        if len(kept) < len(fold_fits):
            run.note += (f"; the refit with {m} {what} is predicted past the time left"
                         + (f": {kept[-1]['n_components']} refitted" if kept else ""))
            m = kept[-1]["n_components"] if kept else point["n_components"]
            del fold_fits[len(kept):]
        if m == point["n_components"]:
            return
        state.choices.append(
            f"the time left grew FALKON's {what} to {m} (first fold: {best.score:.4f} with "
            f"the grid's {point['n_components']}, then {tried})")
        grown = {**point, "n_components": m}
        if leaves:
            model, params = leaves_model(search, state, grown, state.n, leaves)
        else:
            model, params = model_on(search, state, grown, state.n)
        began = now()
        model.fit(state.data.columns, state.data.y, state.data.sample_weight)
        if leaves:  # what the average of local models scores and prices with
            state.leaves = {**leaves, "refit_seconds": now() - began, "n_components": m,
                            "fold_model": fold_fits[-1][0], "fold_seconds": fold_fits[-1][1]}
        # the grid's configuration with more centres: best_index_ stays the grid's point
        state.consider(Candidate(model, params, dict(best.point), kept[-1]["score"], None,
                                 state.n, "growth"))
        run.note += f"; refitted with {m} {what} on every row"
    if run.outcome == "stopped":
        run.note += f"; the {state.best.how} with {state.best.params.get('n_components')} " \
                    "centres stands"
