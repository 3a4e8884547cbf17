"""The search's average of local models: the held leaves and the same model split into
other numbers of leaves, averaged where the average scores higher on the first fold.

Local models have edges: near a leaf's boundary each model sees the rows on one side
only. Split into 3 leaves instead of 4, the boundaries fall elsewhere, and the
average of the two partitions smooths both. Measured on diamonds (HISTORY "Stop 54",
test R^2 of log price, each leaf with its own widths and up to 8,000 centres): 4
leaves 0.99302, 3 leaves 0.99314, 8 leaves 0.99300; averaged 4 and 8 0.99317, 4, 8
and 3 0.99325. Three seeds of the 4 leaves' centres averaged moved it by 0.000001:
the partitions, not the centres, make the gain.

With the time a budget has left once the leaves and their centres are grown, each
other leaf count of ``AVERAGE_LEAF_COUNTS`` in turn is fitted on the first fold's
training rows (its own widths learned on its leaves there where the held leaves
have theirs, else the held leaves' gamma factor; the held model's centres) and
kept where the average with it scores higher on the fold's held-out rows than the
average without it. The kept ones are then refitted on every row in the order they
were kept, and each average so made, whose fold score was measured, is offered as
the best in turn: the budget's end during a refit leaves the last one standing.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import VotingRegressor
from sklearn.frozen import FrozenEstimator

from .._clock import now
from ..models import leaf_index, leaf_thresholds
from . import _leaves_stage
from ._capacity import RECOMPUTE_STEPS, kept_centres
from ._leaves_stage import leaf_widths, leaves_model
from ._refit import settings_on_fold
from ._state import Candidate

__all__ = ["average_leaves", "averaged", "AVERAGE_LEAF_COUNTS"]

#: the leaf counts tried beside the held model's, in this order (the held count skipped)
AVERAGE_LEAF_COUNTS = (3, 8, 2, 6, 5)
#: a leaf's own widths may take this many times the seconds a leaf's took in the leaves
#: stage before their best so far stands: the steps L-BFGS takes vary (Beijing, 5
#: minutes: ~23 s a leaf against 11.4 s measured, and the budget's end stopped the
#: partition with nothing scored); the partition is priced at this cap
WIDTHS_PER_LEAF_CAP = 1.25


def averaged(models, templates, X, y):
    """A ``VotingRegressor`` (the mean of ``models``' predictions) of already fitted
    ``models``, whose parameters are the unfitted ``templates`` they were fitted from.

    Each model is fitted once (on the rows the search chose); the ensemble holds them
    frozen, and its ``estimators`` are then set to the unfitted templates, so that
    ``clone(ensemble).fit(X, y)`` refits every member as a ``VotingRegressor`` does.
    The members' fits are deterministic (their ``random_state`` fixed), so the
    ensemble is the one that refit would make on the same rows. ``X`` and ``y`` are
    not fitted on (the members are frozen): they only check the ensemble's input.
    """
    names = [f"leaves_{index}" for index in range(len(models))]
    ensemble = VotingRegressor([(name, FrozenEstimator(model))
                                for name, model in zip(names, models)])
    ensemble.fit(X, y)
    return ensemble.set_params(estimators=list(zip(names, templates)))


def _why_not(state, sched):
    best, leaves = state.best, state.leaves
    if best is None or leaves is None or best.how not in ("leaves", "growth") or \
            "fold_model" not in leaves:
        return "not needed: the average is of local models, and none won"
    if sched.end is None:
        return "not needed: the average of local models is scored under a time budget"
    if state.data.y.ndim > 1:
        return "not needed: the average of local models takes one target"
    return None


def _step_line(step):
    if "skipped" in step:
        return f"{step['n_leaves']} leaves skipped for time (predicted {step['skipped']:.1f} s)"
    return f"with {step['n_leaves']} leaves {step['score']:.4f} in {step['seconds']:.1f} s"


def average_leaves(search, state, sched):
    """The held local models averaged with other leaf counts, each kept where the
    average scores higher on the first fold; the kept ones refitted on every row."""
    why = _why_not(state, sched)
    if why:
        sched.skip("average", why)
        return
    best, held = state.best, state.leaves
    data, train = state.data, state.train0
    k0 = held["n_leaves"]
    point = {**best.point, "n_components": held["n_components"]}
    own = held.get("leaf_gammas") is not None
    widths_s = sum(r.seconds for r in sched.records if r.stage == "widths")
    counts = [k for k in AVERAGE_LEAF_COUNTS
              if k != k0 and train.size / k >= _leaves_stage.LEAF_MIN_ROWS]
    fold_models, top = [held["fold_model"]], best.score
    members = []  # (leaves, fold score of the average with it)
    # each step goes into leaves_ as it is made: the budget's end in the middle keeps them
    search.leaves_ = list(search.leaves_ or [])
    steps = []

    def record(step):
        steps.append(step)
        search.leaves_.append(step)
    with sched.stage("average") as run:
        # the split column of the fold's rows (no copy of the fold: the stage's fits make
        # their own, as the leaves stage's do)
        values = data.columns[:, [held["feature"]]][train]
        values = values.toarray() if hasattr(values, "toarray") else np.asarray(values)
        weights = data.sample_weight[train]
        held_rows = held["fold_model"].leaf_rows_
        m = held["n_components"]
        room = _Kept(state, point)
        per_leaf = _widths_per_leaf(search.leaves_, k0, widths_s)
        reserved = 0.0  # the kept members' refits on every row, predicted
        for k in counts:
            # a partition's fits cost as the held one's, scaled by their work: the kernel
            # blocks (rows x centres) and the m x m factorisations, each leaf's centres
            # capped at its rows (8 leaves of diamonds: half the held 4's work, not twice),
            # the blocks recomputed at every step where a larger leaf cannot keep them;
            # its own widths cost as the held leaves' did, per leaf
            thresholds = leaf_thresholds(values.ravel(), k, weights)
            sizes = np.bincount(leaf_index(values, 0, thresholds), minlength=k)
            fold_scale = _scale(sizes, held_rows, m, room.fold)
            refit = held["refit_seconds"] * _scale(sizes * room.growth, held_rows * room.growth,
                                                   m, room.refit)
            cap = WIDTHS_PER_LEAF_CAP * per_leaf
            price = (k * cap if own else 0.0) + held["fold_seconds"] * fold_scale + refit
            if now() + price + reserved > run.until:
                # another count's leaves may cost less (Beijing, 10 minutes: 3 leaves
                # recompute their kernel blocks, 8 and 2 do not)
                record({"n_leaves": k, "averaged": True, "skipped": price + reserved})
                run.outcome = "shrunk"
                continue
            began = now()
            leaves = _leaves(held, n_leaves=k, leaf_gammas=None)
            if own:
                leaves["leaf_gammas"] = leaf_widths(state, train, held["feature"], k,
                                                    point.get("kernel", "rbf"), seconds=cap)
                if leaves["leaf_gammas"] is None:  # ties made fewer leaves, or a first step
                    # took longer than the cap
                    continue
            model, _ = leaves_model(search, state, point, train.size, leaves)
            state.fit_on(model, train)
            state.n_scored += 1
            value = state.score_on_first_fold(
                averaged(fold_models + [model], fold_models + [model], data.columns, data.y))
            kept = bool(np.isfinite(value) and value > top)
            record({**{key: leaves[key] for key in ("n_leaves", "own_widths")},
                          "averaged": True, "score": value, "seconds": now() - began,
                          "kept": kept})
            if kept:
                reserved += refit
                fold_models.append(model)
                members.append((leaves, value))
                top = value
        tried = ", ".join(_step_line(s) for s in steps)
        run.note = note = (f"first fold {best.score:.4f} with {k0} leaves"
                    + (f"; averaged {tried}" if tried else
               f"; no other leaf count leaves {_leaves_stage.LEAF_MIN_ROWS} rows in each leaf"
               if not counts else "; no other leaf count fits the time left"))
        fitted, templates = [best.model], [_template(search, state, point, held)]
        line = None
        for leaves, value in members:
            template = leaves_model(search, state, point, state.n, leaves)[0]
            model = clone(template).fit(data.columns, data.y, sample_weight=data.sample_weight)
            fitted.append(model)
            templates.append(template)
            counts_kept = [k0] + [m["n_leaves"] for m, _ in members[:len(fitted) - 1]]
            ensemble = averaged(fitted, templates, data.columns, data.y)
            state.consider(Candidate(ensemble, {**best.params, "averaged_n_leaves": counts_kept},
                                     dict(best.point), value, None, state.n, "average"))
            if line is not None:  # one line: the average that stands
                state.choices.remove(line)
            line = (f"the {k0} local models averaged with the same split into "
                    f"{' and '.join(map(str, counts_kept[1:]))} leaves: first fold "
                    f"{value:.4f} against {best.score:.4f}")
            state.choices.append(line)
            run.note = note + f"; {len(fitted)} partitions refitted on every row"


class _Kept:
    """Whether a leaf of so many rows keeps its ``K(X, C)`` at ``m`` centres, on the first
    fold (the budget less the fold's copy) and on every row (the whole budget)."""

    def __init__(self, state, point):
        X = state.data.X
        self.growth = state.n / state.train0.size
        self.itemsize = np.dtype(point.get("dtype") or X.dtype).itemsize
        self.d = X.shape[1]
        # the fold's fits' budget as the growth's (the budget less the fold's copy)
        self.budgets = {"fold": settings_on_fold(state).memory_budget,
                        "refit": state.settings.memory_budget}

    def fold(self, rows, m):
        return self._keeps(rows, m, self.budgets["fold"])

    def refit(self, rows, m):
        return self._keeps(rows, m, self.budgets["refit"])

    def _keeps(self, rows, m, budget):
        rows = int(np.ceil(rows))
        return min(rows, m) <= kept_centres(rows, self.d, budget, self.itemsize)


def _scale(sizes, held_sizes, m, keeps):
    """A partition's fit over the held one's: the larger of the ratios of their kernel
    blocks' work (``RECOMPUTE_STEPS`` times where the partition's largest leaf recomputes
    them at every step and the held one's kept them) and of their factorisations'."""
    (blocks, cubes), (blocks0, cubes0) = _work(sizes, m), _work(held_sizes, m)
    if not keeps(max(sizes), m) and keeps(max(held_sizes), m):
        blocks *= RECOMPUTE_STEPS
    return max(blocks / blocks0 if blocks0 > 0 else 1.0, cubes / cubes0 if cubes0 > 0 else 1.0)


def _widths_per_leaf(steps, k0, widths_s):
    """Seconds of one leaf's own widths: as the leaves stage measured them (its own-widths
    step less a fit of the same leaves), at least the search's widths' (Beijing's 4 leaves
    took 11 s each, the search's 8.7 s)."""
    steps = [s for s in steps or [] if s.get("n_leaves") == k0 and "score" in s
             and not s.get("averaged")]
    own = [s["seconds"] for s in steps if s.get("own_widths")]
    fits = [s["seconds"] for s in steps if not s.get("own_widths")]
    if not own or not fits:
        return widths_s
    return max(widths_s, (own[-1] - min(fits)) / k0)


def _work(leaf_rows, m):
    """A partition's fit work: its kernel blocks (rows x centres) and its m x m
    factorisations, each leaf's centres capped at its rows."""
    rows = np.asarray(leaf_rows, dtype=np.float64)
    centres = np.minimum(rows, m)
    return float(np.sum(rows * centres)), float(np.sum(centres**3))


def _template(search, state, point, held):
    """The held local models' unfitted model (the ensemble's parameters)."""
    return leaves_model(search, state, point, state.n, _leaves(held))[0]


def _leaves(held, **changes):
    """The leaves dict :func:`leaves_model` reads, from the held one's."""
    keys = ("n_leaves", "feature", "gamma_factor", "own_widths", "leaf_gammas")
    return {**{key: held.get(key) for key in keys}, **changes}
