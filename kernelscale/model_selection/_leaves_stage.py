"""The search's local models: a refitted FALKON regressor split into leaves along one column
(:class:`kernelscale.LocalKernelRegressor`), kept where it scores higher on the first fold.

Within a leaf the same centres cover a share of the column's range, so the leaves'
kernel may be finer: the stage scores ``LEAF_COUNTS[0]`` leaves at each of
``LEAF_GAMMA_FACTORS`` (the grid's gamma times the factor), then the other leaf counts
at the best factor, each fitted on the first fold's training rows and scored on its
held-out rows, as the growth of the centres is. The column is the one a regression
tree would split first (:func:`kernelscale.models.split_feature`), chosen on the first
fold's training rows. Where the search learned widths and the time left pays, each of
``LEAF_COUNTS[0]`` leaves then learns its own (:func:`leaf_widths`, once, on its rows of
the first fold; the refit and the growth keep them). The best, if it scored above the
held model, is refitted on every row; FALKON's growth then grows each leaf's centres
(:func:`kernelscale.model_selection._refit.grow`), and the time left averages them with
other leaf counts (:mod:`._average_stage`).

Measured on diamonds (HISTORY "Stop 53"): the search's Laplacian model with 8,000
centres 0.99244 test R^2; four leaves with 1,000 centres each 0.99259 in a tenth of
its time, with 8,000 each and gamma x 3 0.99298, with 4,000 each and their own widths
0.99308. Local models are regressors only.
"""

from __future__ import annotations

import numpy as np

from .._clock import now
from ..models import LocalKernelRegressor, leaf_index, leaf_thresholds, split_feature
from ._first_model import model_on
from ._state import Candidate
from ._widths import KernelWidths, WidthsTimeError

__all__ = ["split_leaves", "leaves_model", "leaf_widths", "LEAF_COUNTS",
           "LEAF_GAMMA_FACTORS",
           "LEAF_MIN_ROWS"]

#: leaf counts scored, the first at every gamma factor, the others at the best factor
LEAF_COUNTS = (4, 2, 8)
#: the grid's gamma times these in the leaves (their centres cover less of the range)
LEAF_GAMMA_FACTORS = (1.0, 2.0, 4.0)
#: the fewest first-fold training rows per leaf
LEAF_MIN_ROWS = 2_000


#: a leaves fit with twice the centres over the same fit, measured on Beijing's 4 leaves
#: of ~61,000 rows (1,000 -> 2,000 centres: 3.0 -> 6.7 s and 3.6 -> 9.4 s): the m^3
#: factorisations grow faster than the kernel blocks. Priced at 2, the ladder took a
#: third gamma factor (-0.0003) and the refit of the doubled centres (+0.0038 on the
#: first fold) no longer fitted the time left
DOUBLING_COST = 2.6


def leaves_model(search, state, point, rows, leaves, settings=None):
    """``point``'s model for ``rows`` rows, split into ``leaves`` (a dict of ``n_leaves``,
    ``feature`` and ``gamma_factor``); its parameters (``best_params_``) with the leaves'."""
    scaled = {**point, "gamma": point["gamma"] * leaves["gamma_factor"]}
    model, params = model_on(search, state, scaled, rows, settings)
    extra = {"n_leaves": leaves["n_leaves"], "leaf_feature": leaves["feature"]}
    leaf_params = None
    if leaves.get("leaf_gammas") is not None:
        # each leaf's own widths (xRFM's own metric per leaf), learned once
        factor = leaves["gamma_factor"]
        leaf_params = [{"gamma": factor * g} for g in leaves["leaf_gammas"]]
        params = {**params, "gamma": [p["gamma"] for p in leaf_params]}
        extra["leaf_widths"] = True
    local = LocalKernelRegressor(model, n_leaves=leaves["n_leaves"], feature=leaves["feature"],
                                 leaf_params=leaf_params)
    return local, {**params, **extra}


def leaf_widths(state, rows, feature, n_leaves, kernel, seconds=None):
    """Widths learned on each leaf's part of ``rows`` (``KernelWidths`` of the search's
    kernel, each within ``seconds`` where given: its best so far then stands); None
    where the rows make fewer leaves, or a leaf's first step alone takes longer."""
    data, settings = state.data, state.settings
    X = data.columns[rows]
    values = X[:, [feature]].toarray().ravel() if hasattr(X, "toarray") else X[:, feature]
    thresholds = leaf_thresholds(values, n_leaves, data.sample_weight[rows])
    if thresholds.size + 1 != n_leaves:
        return None
    leaf = leaf_index(X, feature, thresholds)
    gammas = []
    for index in range(n_leaves):
        part = rows[leaf == index]
        widths = KernelWidths(kernel=kernel, random_state=settings.random_state,
                              memory_budget=settings.memory_budget, time_budget=seconds)
        try:
            gammas.append(widths.fit(data.columns[part], data.y[part]).gamma_)
        except WidthsTimeError:
            return None
    return gammas


def _step(step):
    if "skipped" in step:
        return f"own widths per leaf skipped for time (predicted {step['skipped']:.1f} s)"
    what = "own widths" if step["own_widths"] else f"gamma x {step['gamma_factor']:g}"
    return f"{step['n_leaves']} x {what}: {step['score']:.4f} in {step['seconds']:.1f} s"


def _doubling(search, top, unit, growth):
    """Seconds kept for the growth's first doubling of the centres of leaves that won (a
    fold fit and a refit, each ``DOUBLING_COST`` times theirs): it scores more than the
    ladder's further steps (Beijing: 1,000 -> 2,000 centres +0.0042 on the first fold,
    the other gamma factors and leaf counts at most +0.0016)."""
    if top["leaves"] is None or search.n_components is not None:
        return 0.0
    return DOUBLING_COST * unit * (1.0 + growth)


def _why_not(search, state, sched):
    if state.task != "regressor":
        return "not needed: local models are regressors"
    if not state.falkon_refitted():
        return "not needed: the leaves split a refitted FALKON winner"
    if sched.end is None:
        return "not needed: the leaves are scored under a time budget"
    if state.train0.size < 2 * LEAF_MIN_ROWS:
        return (f"not needed: the first fold's {state.train0.size} training rows make no two "
                f"leaves of {LEAF_MIN_ROWS} rows")
    return None


def split_leaves(search, state, sched):
    """Local models along one column, kept (and refitted on every row) where they score
    higher on the first fold than the held model."""
    search.leaves_ = None
    state.leaves = None
    why = _why_not(search, state, sched)
    if why:
        sched.skip("leaves", why)
        return
    best = state.best
    data, train = state.data, state.train0
    n = state.n
    growth = n / train.size
    # a leaves fit on the fold costs about the held model's fit on the fold (the same
    # K(X, C) entries in all, smaller m x m parts); its refit, growth times that
    refit_s = sum(r.seconds for r in sched.records if r.stage == "refit" and r.outcome == "done")
    unit = refit_s / growth if refit_s > 0 else None
    counts = [k for k in LEAF_COUNTS if train.size / k >= LEAF_MIN_ROWS]
    steps = []
    with sched.stage("leaves") as run:
        feature, _ = split_feature(data.columns[train], data.y[train], counts[0],
                                   data.sample_weight[train])
        top = {"score": best.score, "leaves": None, "largest_leaf": None}

        def score(k, factor, gammas=None):
            leaves = {"n_leaves": k, "feature": int(feature), "gamma_factor": factor,
                      "own_widths": gammas is not None, "leaf_gammas": gammas}
            model, _ = leaves_model(search, state, best.point, train.size, leaves)
            took = state.fit_on(model, train)
            value = state.score_on_first_fold(model)
            state.n_scored += 1
            kept = bool(np.isfinite(value) and value > top["score"])
            steps.append({**leaves, "score": value, "seconds": took, "kept": kept,
                          "largest_leaf": int(model.leaf_rows_.max())})
            if kept:
                top.update(score=value, leaves=leaves, largest_leaf=steps[-1]["largest_leaf"],
                           model=model, fit_seconds=took)
            return took

        ladder = [(counts[0], f) for f in LEAF_GAMMA_FACTORS]
        while ladder:
            k, factor = ladder.pop(0)
            # this fit, and the refit of the best on every row, within the time left; once
            # leaves won, also the growth's first doubling of their centres
            ahead = 0.0 if unit is None else \
                unit * (1.0 + growth) + _doubling(search, top, unit, growth)
            if now() + ahead > run.until:
                run.outcome = "shrunk"
                break
            unit = score(k, factor)
            if not ladder and k == counts[0]:  # the other counts at the best factor
                factor = (top["leaves"] or {"gamma_factor": 1.0})["gamma_factor"]
                ladder = [(c, factor) for c in counts[1:]]
        if run.outcome == "done" and search.widths_ is not None:
            # each leaf's own widths, learned once on the fold's rows of each of
            # LEAF_COUNTS[0] leaves, where they and the refit fit the time left: each
            # leaf's widths priced as the search's (their steps' fixed cost does not
            # shrink with the rows: 8 leaves of diamonds took 38 s, the search's 6.9 s)
            k = counts[0]
            widths_s = sum(r.seconds for r in sched.records if r.stage == "widths")
            own = k * widths_s + unit
            if now() + own + unit * growth + _doubling(search, top, unit, growth) <= run.until:
                kernel = best.point.get("kernel", "rbf")
                began = now()
                gammas = leaf_widths(state, train, feature, k, kernel)
                if gammas is not None:
                    score(k, 1.0, gammas)
                    steps[-1]["seconds"] = now() - began  # the widths' time with the fit
            else:
                steps.append({"own_widths": True, "skipped": own + unit * growth})
        search.leaves_ = steps
        tried = ", ".join(_step(s) for s in steps)
        run.note = (f"column {feature}; first fold {best.score:.4f} without leaves"
                    + (f", then {tried}" if tried else "; no leaves fit the time left"))
        chosen = top["leaves"]
        if chosen is None:
            return
        began = now()
        model, params = leaves_model(search, state, best.point, n, chosen)
        model.fit(data.columns, data.y, sample_weight=data.sample_weight)
        # the fold's model and its fit's seconds: the average of local models scores with
        # them and prices its own fits from them
        state.leaves = {**chosen, "refit_seconds": now() - began,
                        "largest_leaf": top["largest_leaf"],
                        "n_components": best.point["n_components"],
                        "fold_model": top["model"], "fold_seconds": top["fit_seconds"]}
        how = "each with its own widths" if chosen["own_widths"] else \
            f"gamma x {chosen['gamma_factor']:g}"
        state.choices.append(
            f"{chosen['n_leaves']} local models along column {feature} ({how}): first fold "
            f"{top['score']:.4f} against {best.score:.4f} without leaves")
        # the grid's point: best_index_ stays the grid's configuration
        state.consider(Candidate(model, params, dict(best.point), top["score"], None, n,
                                 "leaves"))
        run.note += f"; {chosen['n_leaves']} leaves refitted on every row"
