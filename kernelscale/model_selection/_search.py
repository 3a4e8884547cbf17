"""The search both ``KernelClassifierCV`` and ``KernelRegressorCV`` run: widths, grid,
screens, challenger, capacity and the refit of what it scored."""

from __future__ import annotations

import numbers
import time
import warnings
from functools import partial

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._config import format_bytes, parse_duration
from .._constraints import N_JOBS, VERBOSE, Interval, Options, validate_params
from .._planner import MemoryPlan, falkon_plan, nbytes
from .._progress import progress
from .._validation import (
    check_sample_weight,
    check_X_y,
    effective_n_jobs,
    resolve_memory_budget,
)
from ..kernels import make_kernel
from ..models.ridge import FLOAT32_PENALTY_FLOOR, auto_n_components
from ._capacity import exact_challenger, grow_centres
from ._choice import EXACT_MAX_ROWS, choose_families
from ._deadline import Deadline, refit_reserve
from ._engines import classifier_model, run_family
from ._exact import exact_grid_memory, exact_kernel_matrix, exact_refit_plan
from ._halving import EXACT_SCREEN_ROWS, screen_families, screen_gammas
from ._results import cv_results, edge_note, leaderboard
from ._space import (
    DEFAULT_GAMMA_FACTORS,
    check_families,
    check_grid,
    check_scoring,
    make_folds,
    representable_alphas,
)
from ._widths import KernelWidths, WidthsTimeError

__all__ = ["KernelSearch", "SearchTimeError"]

#: centres the FALKON family searches with by default (its statistics cost n m^2 per gamma)
SEARCH_MAX_CENTERS = 1000
#: learn_widths="auto" learns them from this many rows on (below, the held-out parts
#: the widths are chosen on are too small to rank the features reliably)
WIDTHS_MIN_ROWS = 5_000
#: ... and for at most this many dense features (tabular data: a step costs n m d, and
#: images or text, thousands of like columns, gain little)
WIDTHS_MAX_FEATURES = 200
#: share of time_budget the widths may take
WIDTHS_TIME_SHARE = 0.25


class SearchTimeError(ValueError):
    """The time budget ended before one configuration was scored on every fold."""


def _fold_settings(data, fold, settings):
    """Settings of a fit on the first fold: uncalibrated, its budget less the fold's copy."""
    train, test = fold
    copy = nbytes(data["X"][:1]) * (len(train) + len(test))
    MemoryPlan("a fit on the first fold", settings["memory_budget"],
               {"the fold's rows": copy}).require()
    return {**settings, "probability": False, "memory_budget": settings["memory_budget"] - copy}


class KernelSearch(BaseEstimator):
    _task = None
    _parameter_constraints = {
        "families": [str, list, tuple],
        "gamma_factors": [None, "array-like"],
        "n_components": [None, Interval("int", 1)],
        "cv": [Interval("int", 2), "array-like", "splitter"],
        "scoring": [None, str],
        "time_budget": [None, Interval("real", 0, None, closed="neither"), str],
        "halving": ["boolean", Options("auto")],
        "learn_widths": ["boolean", Options("auto")],
        "dtype": [None, Options("float32", "float64")],
        "memory_budget": ["memory"],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": VERBOSE,
    }

    def _common_fit(self, X, y, sample_weight, classifier):
        validate_params(self)
        started = time.perf_counter()
        budget_s = None if self.time_budget is None else parse_duration(self.time_budget)
        families = self.families
        space = {"factors": check_grid("gamma_factors", self.gamma_factors,
                                       default=DEFAULT_GAMMA_FACTORS)}
        if families != "auto":
            families = check_families(families, self._task)
        X, y = check_X_y(self, X, y, multi_output=not classifier, y_numeric=not classifier)
        n, d = X.shape
        sw = check_sample_weight(sample_weight, n)
        data = {"X": X, "y": y, "sample_weight": sw, "classes": None, "y_index": None}
        if isinstance(self.cv, (int, np.integer)) and n < self.cv:
            raise ValueError(f"n_samples={n} is fewer than the cv={self.cv} folds: give at "
                             f"least {self.cv} rows or a smaller cv.")
        if classifier:
            check_classification_targets(y)
            self.classes_, data["y_index"] = np.unique(y, return_inverse=True)
            if len(self.classes_) < 2:
                raise ValueError(f"{type(self).__name__} needs at least 2 classes; the data "
                                 "have 1 class.")
            data["classes"] = self.classes_
        # the penalty grids are checked before any long work (the widths take minutes):
        # a bad grid, or float32 with every given alpha below its floor, is one line now
        penalties = self._penalties(n)
        if self.dtype == "float32" and self.alphas is not None:
            floor = FLOAT32_PENALTY_FLOOR * float(sw.sum())
            if np.all(penalties["alphas"] < floor):  # (raises; some below only warn, later)
                representable_alphas(penalties["alphas"], "float32", float(sw.sum()),
                                     given=True)
        if self.halving is True and not isinstance(self.cv, (int, np.integer)):
            raise ValueError("halving=True draws its own folds on each subsample: give cv as "
                             "a number of folds.")
        # one generator for the whole fit: a RandomState instance is drawn from once
        # for the folds and once for the centres / landmarks (an int seeds both as before)
        rng = check_random_state(self.random_state)
        fold_seed = (int(self.random_state) if isinstance(self.random_state, numbers.Integral)
                     else rng.randint(2**31 - 1))
        folds = make_folds(self.cv, X, y, data["y_index"], data["classes"], fold_seed)
        scoring = check_scoring(self.scoring, self._task,
                                len(self.classes_) if classifier else None)
        budget = resolve_memory_budget(self.memory_budget)
        seed = rng.randint(2**31 - 1)
        end = None if budget_s is None else started + budget_s
        self.widths_ = self._learn_widths(X, y, classifier, budget, budget_s, seed)
        if self.widths_ is not None:
            # the search runs on columns scaled by sqrt(widths): its gamma 1 is the learned
            # kernel, its factors scale it; the refit puts gamma * widths on the raw columns.
            # The scaled copy is held throughout: the search's plans get what is left
            data["raw_X"], data["X"] = X, self.widths_.transform(X)
            copy = nbytes(data["X"]) if data["X"] is not X else 0
            MemoryPlan("the columns scaled by the learned widths", budget,
                       {"scaled columns": copy}).require(" (or learn_widths=False)")
            budget -= copy
            self.feature_relevance_ = self.widths_.feature_relevance_
        if families == "auto":
            exact_plan = None
            if classifier:  # the grid's own plan: one answer to "does the matrix fit"
                exact_plan = exact_grid_memory(
                    data["y_index"], self.classes_, sw, folds, self.class_weight,
                    self.multiclass, effective_n_jobs(self.n_jobs), budget)
            families, self.family_choice_ = choose_families(
                self._task, n, d, len(self.classes_) if classifier else None, budget,
                exact_plan)
        else:
            self.family_choice_ = f"families given: {', '.join(families)}"
        space.update(penalties)
        n_train = min(len(tr) for tr, _ in folds)
        space["n_components"] = (int(self.n_components) if self.n_components is not None else
                                 min(auto_n_components(n_train, budget, 8), SEARCH_MAX_CENTERS))
        space["gamma_ref"] = 1.0 if self.widths_ is not None else \
            float(make_kernel("rbf", X, gamma="scale").gamma)
        if self.widths_ is not None and self.alphas is None:
            # at most float32's floor unless float64 is asked for: below it the refit is
            # float64, whose K(X, C) at 1e6 rows is recomputed at every CG step
            penalty = self.widths_.penalty_ if self.dtype == "float64" else \
                max(self.widths_.penalty_, FLOAT32_PENALTY_FLOOR)
            space["alphas"] = np.unique(np.r_[space["alphas"], penalty * float(sw.sum())])
        settings = {"scoring": scoring, "memory_budget": budget, "tol": 1e-3,
                    "n_jobs": effective_n_jobs(self.n_jobs), "random_state": seed,
                    "dtype": self.dtype, "weight_total": float(sw.sum()),
                    **self._classifier_settings()}
        if "falkon" in families:
            dtype = self.dtype
            if dtype is None and not self._float64_refit_fits(n, d, space, budget):
                # a float64 refit would recompute K(X, C) at every CG step (at 1e6 rows,
                # 600 s for a 10-minute search): penalties below float32's floor are not
                # searched, as with dtype="float32"
                dtype = "float32"
                floor = FLOAT32_PENALTY_FLOOR * settings["weight_total"]
                if np.any(np.asarray(space["alphas"]) < floor):
                    self.family_choice_ = self.family_choice_.rstrip(".") + (
                        f"; FALKON alphas below float32's floor ({floor:.3g}) not searched: "
                        f"their float64 refit could not keep K(X, C) ({n} x "
                        f"{space['n_components']} float64) within the memory budget "
                        f"({format_bytes(budget)})")
            space["alphas"] = representable_alphas(space["alphas"], dtype,
                                                   settings["weight_total"],
                                                   given=self.alphas is not None and
                                                   self.dtype == "float32")
        halving = self.halving
        if halving == "auto":  # where the grid on every row is the search's cost
            halving = isinstance(self.cv, (int, np.integer)) and n > EXACT_MAX_ROWS
        self.halving_ = [] if halving else None
        screened = self._screen_families(families, data, space, settings, end)
        self._search(families, data, folds, space, settings, end)
        first = folds[0]
        del folds  # the refit's memory plan has the whole budget
        self._refit(data, space, settings)
        self.challenger_ = self._challenge(data, space, first, settings, end, screened)
        if self.challenger_ is not None and self.challenger_["won"]:
            spent = self.refit_time_
            self._refit(data, space, settings, self.challenger_["params"])
            self.refit_time_ += spent
        self.capacity_ = self._grow(data, first, settings, end)
        if self.capacity_ and any(step["kept"] for step in self.capacity_):
            spent = self.refit_time_
            self._refit(data, space, settings)
            self.refit_time_ += spent
        return self

    def _screen_families(self, families, data, space, settings, end):
        """Beyond the rows where the rule searches the exact SVM, its whole grid and the
        chosen families' on one subsample (:func:`screen_families`, with halving);
        ``{family: best}`` or None."""
        n = data["X"].shape[0]
        if (self.halving_ is None or self._task != "classifier" or self.families != "auto"
                or "exact-svm" in families):
            return None
        rows = min(EXACT_SCREEN_ROWS, n // 2)
        # only where the exact grid's matrix fits on those rows (no slow row cache here)
        part_y = data["y_index"][:rows]
        part_folds = [(np.arange(rows), np.arange(0))] * int(self.cv)
        plan = exact_grid_memory(part_y, self.classes_, data["sample_weight"][:rows],
                                 part_folds, self.class_weight, self.multiclass,
                                 settings["n_jobs"], settings["memory_budget"])
        if plan.choice == "rows":
            return None
        deadline = None if end is None else Deadline(end)
        best = screen_families(run_family, self._task, ["exact-svm", *families], data,
                               space, settings, rows=rows, n_splits=int(self.cv),
                               deadline=deadline, log=self.halving_.append)
        if "exact-svm" in best:
            scores = ", ".join(f"{f} {b['score']:.4f}" for f, b in best.items())
            self.family_choice_ = self.family_choice_.rstrip(".") + (
                f"; the families screened on {rows} rows: {scores}")
        return best

    def _challenge(self, data, space, fold, settings, end, screened=None):
        """The exact SVM against a winner of another family, where its measured cost fits
        the time left (:func:`exact_challenger`): at its best configuration of the family
        screen, else (or when that one is predicted too slow) at its defaults; the step
        (the last one measured) or None."""
        p = self.cv_results_["params"][self.best_index_]
        if (self._task != "classifier" or p["family"] == "exact-svm" or end is None
                or self.families != "auto"):
            return None
        defaults = {"family": "exact-svm", "gamma": space["gamma_ref"], "C": 1.0}
        candidates = [("at its defaults (C=1)", defaults)]
        if screened and "exact-svm" in screened:
            best = screened["exact-svm"]["params"]
            if not (np.isclose(best["gamma"], defaults["gamma"]) and best["C"] == 1.0):
                candidates.insert(0, (
                    f"at its best on the family screen (C={best['C']:.4g}, gamma x "
                    f"{best['gamma'] / space['gamma_ref']:.4g})", best))
        fold_settings = _fold_settings(data, fold, settings)
        scored = float(self.cv_results_["split0_test_score"][self.best_index_])
        for how, params in candidates:  # noqa: B007 (``how`` describes the last one tried)
            steps = []
            exact_challenger(partial(classifier_model, params, fold_settings), data["X"],
                             data["y"], data["sample_weight"], fold, scored,
                             scoring=self.scoring, task=self._task, end=end,
                             seed=settings["random_state"], log=steps.append)
            step = {**steps[0], "params": params, "winner_score": scored}
            if step["score"] is not None:
                break
        if step["won"]:
            self.family_choice_ = self.family_choice_.rstrip(".") + (
                f"; the exact SVM {how} then scored {step['score']:.4f} on the "
                f"first fold against the search's {scored:.4f} and was refitted (its cost "
                f"measured: ~n^{step['exponent']:.2f}, {step['seconds']:.1f} s on the fold)")
        elif step["score"] is not None:
            self.family_choice_ = self.family_choice_.rstrip(".") + (
                f"; the exact SVM {how} scored {step['score']:.4f} on the first fold, "
                f"not above the search's {scored:.4f}")
        else:
            self.family_choice_ = self.family_choice_.rstrip(".") + (
                f"; the exact SVM was not fitted on every row: its cost measured on up to "
                f"{step['measured_rows'][-1]} rows (~n^{step['exponent']:.2f}) predicted "
                f"{step['predicted_fold_s']:.0f} s for the first fold and "
                f"{step['predicted_refit_s']:.0f} s for the refit, past the time left")
        return step

    def _classifier_settings(self):
        return {"class_weight": None, "multiclass": "ovo", "break_ties": False}

    @staticmethod
    def _float64_refit_fits(n, d, space, budget):
        """Whether a float64 FALKON refit keeps its K(X, C) within the budget."""
        m = space["n_components"]
        plan = falkon_plan("refit", n=n, m=m, n_targets=1, itemsize=8, budget=budget,
                           block_row_bytes=8 * m + 8 * d)
        return plan.choice == "kept" and plan.fits

    def _learn_widths(self, X, y, classifier, budget, budget_s, seed):
        """A fitted :class:`KernelWidths`, or None where the widths are not learned."""
        n, d = X.shape
        if self.learn_widths == "auto":
            if n < WIDTHS_MIN_ROWS or d < 2 or d > WIDTHS_MAX_FEATURES or hasattr(X, "tocsr"):
                return None
        elif not self.learn_widths:
            return None
        seconds = None if budget_s is None else WIDTHS_TIME_SHARE * budget_s
        widths = KernelWidths(task="classification" if classifier else "regression",
                              time_budget=seconds, memory_budget=budget, random_state=seed,
                              verbose=max(0, self.verbose - 1))
        try:
            widths.fit(X, y if classifier or y.ndim == 1 else y[:, 0])
        except WidthsTimeError as error:
            raise SearchTimeError(
                f"time_budget={self.time_budget!r} is too short to learn the kernel widths "
                f"({error.seconds:.1f} s for their first step); give time_budget >= "
                f"{np.ceil(error.seconds / WIDTHS_TIME_SHARE * 4):.0f}s, or "
                "learn_widths=False.") from None
        return widths

    def _search(self, families, data, folds, space, settings, end):
        start = time.perf_counter()
        # no unit starts unless it and the refit end within the budget (measured units)
        deadline = None if end is None else Deadline(end)
        n, n_train = data["X"].shape[0], min(len(tr) for tr, _ in folds)
        running = [None]
        units = None if self.halving_ is not None else len(space["factors"]) * len(families)
        bar = progress(units, f"{type(self).__name__} search", verbose=self.verbose,
                       unit="gamma")
        done, best, units_done = [], [-np.inf], [0]
        # the running family's records as each unit scores them: an interrupt keeps them
        scored = []

        def on_unit(records):
            scored[:] = records
            units_done[0] += 1
            if deadline is not None:
                deadline.unit_done()
                deadline.reserve = refit_reserve(running[0], records, deadline.unit,
                                                 n / n_train, data["X"].shape,
                                                 settings["memory_budget"])
                if settings.get("probability"):  # the calibration's 5 internal fits
                    deadline.reserve *= 1 + 5 * (n_train / n)
            if units_done[0] == 1 and deadline is not None and deadline.left() < 0:
                took = time.perf_counter() - start
                raise SearchTimeError(
                    f"time_budget={self.time_budget!r} is too small for one fit: the first "
                    f"gamma ({len(records)} configurations x {len(folds)} folds) took "
                    f"{took:.1f} s; give time_budget >= {np.ceil(took * 1.2):.0f}s.")
            bar.update()
            scores = [np.mean(r["scores"]) for r in records]
            best[0] = max(best[0], np.nanmax(scores))
            bar.set_postfix_str(f"best {best[0]:.4f}")

        complete = True
        try:
            with bar:
                for family in families:
                    if done and deadline is not None and time.perf_counter() > deadline:
                        complete = False
                        break
                    family_space = self._screen(family, data, space, settings, deadline)
                    scored.clear()
                    running[0] = family
                    if deadline is not None:
                        deadline.start_units()
                    records, finished = run_family(family, self._task, data, folds,
                                                   family_space, settings, deadline, on_unit)
                    scored.clear()
                    done += records
                    complete &= finished
        except KeyboardInterrupt:
            done += scored
            if not done:
                raise
            complete = False
            warnings.warn(f"Search interrupted: keeping the best of the {len(done)} "
                          "configurations scored so far.", UserWarning, stacklevel=3)
        self.search_time_ = time.perf_counter() - start
        self.complete_ = complete
        self.n_splits_ = len(folds)
        self.cv_results_ = cv_results(done, len(folds))
        self.best_index_ = int(np.argmin(self.cv_results_["rank_test_score"]))
        self.best_params_ = dict(self.cv_results_["params"][self.best_index_])
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        if self.verbose >= 2:
            print("\n".join(self.leaderboard()), flush=True)

    def _screen(self, family, data, space, settings, deadline):
        """The space to search on all rows: every gamma, or the survivors of halving."""
        if self.halving_ is None:
            return space
        kept = screen_gammas(run_family, self._task, family, data, space, settings,
                             n_splits=int(self.cv), deadline=deadline, log=self.halving_.append)
        return {**space, "factors": kept}

    def _grow(self, data, fold, settings, end):
        """FALKON's centres, grown while the time left allows and they score better on
        the first fold (:func:`grow_centres`, timed by the refit just done); the steps,
        or None."""
        p = self.best_params_
        if p["family"] != "falkon" or self.n_components is not None or end is None:
            return None
        steps = []
        scored_params = self.cv_results_["params"][self.best_index_]
        scored = float(self.cv_results_["split0_test_score"][self.best_index_])

        fold_settings = _fold_settings(data, fold, settings)
        dtype = scored_params.get("dtype") or data["X"].dtype
        itemsize = 4 if np.dtype(dtype) == np.float32 else 8

        def make_model(m):  # on the columns the grid scored (scaled by the widths)
            return self._best_model({**scored_params, "n_components": m}, fold_settings)[0]
        p["n_components"] = grow_centres(
            make_model, data["X"], data["y"], data["sample_weight"], fold, scored,
            m=p["n_components"], scoring=self.scoring, task=self._task, end=end,
            refit_seconds=self.refit_time_, memory_budget=settings["memory_budget"],
            fold_budget=fold_settings["memory_budget"], itemsize=itemsize, log=steps.append)
        if steps:
            tried = ", ".join(f"{s['n_components']}: {s['score']:.4f} in {s['seconds']:.1f} s"
                              for s in steps)
            self.family_choice_ = self.family_choice_.rstrip(".") + (
                f"; the time left grew FALKON's centres to {p['n_components']} (first fold: "
                f"{scored:.4f} with the grid's {steps[0]['n_components'] // 2}, then {tried})")
        return steps

    def _refit(self, data, space, settings, scored=None):
        """Fit ``scored`` (params in the searched columns; the grid's best by default) on
        every row as ``best_estimator_``; ``best_params_`` on the raw columns."""
        start = time.perf_counter()
        scored = dict(scored or self.cv_results_["params"][self.best_index_])
        if self.best_params_["family"] == scored["family"]:
            scored["n_components"] = self.best_params_.get("n_components")
            scored = {k: v for k, v in scored.items() if v is not None}
        self.best_params_ = p = dict(scored)
        X = data["X"]
        if self.widths_ is not None:
            # the scored kernel, on the raw columns: gamma * widths per feature
            p["gamma"] = scored["gamma"] * self.widths_.gamma_
            X = data["raw_X"]
        model, extra = self._best_model(p, settings)
        # KernelSVC's own rule: one matrix for several binary problems (its plan holds
        # it); the grid's distances make it bit for bit the kernel the search scored
        if p["family"] == "exact-svm" and len(data["classes"]) > 2:
            plan = exact_refit_plan(X, data["y_index"], data["classes"],
                                    data["sample_weight"], settings, p["gamma"])
            if plan.fits:
                factor = scored["gamma"] / space["gamma_ref"]
                extra = {"kernel_matrix": exact_kernel_matrix(
                    data["X"], space["gamma_ref"], factor, plan.fill_bytes)}
        model.fit(X, data["y"], data["sample_weight"], **extra)
        self.best_estimator_ = model
        self.refit_time_ = time.perf_counter() - start

    def leaderboard(self, top=10):
        """The ``top`` configurations, best first, as printable lines.

        A last line says when the best configuration sits on an edge of its
        family's grid (its gamma, C or alpha the smallest or largest tried):
        the optimum may lie beyond, so extending the grid there may do better.
        """
        check_is_fitted(self, "cv_results_")
        lines = leaderboard(self.cv_results_, top)
        note = edge_note(self.cv_results_, self.best_index_)
        return lines + ([note] if note else [])

    def predict(self, X):
        """Predict through ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
