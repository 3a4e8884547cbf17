"""The search both ``KernelClassifierCV`` and ``KernelRegressorCV`` run: a short list of
stages over one state, each granted its time by one scheduler.

The stages (:mod:`._stages`, :mod:`._refit`): a first model within seconds,
the learned widths, the family screen, the grid (with halving), the refit of
the best on every row, the exact SVM as a challenger, a regressor's local models
(leaves along one column), FALKON's centres grown by the time left, the local models
averaged with other leaf counts. A model is
held from the first stage on and only replaced by one that scored better
(:class:`._state.SearchState`); the time budget's end, a Ctrl-C or a failed
configuration leave the best so far in place.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._clock import now
from .._config import format_bytes, parse_duration
from .._constraints import N_JOBS, VERBOSE, Interval, Options, validate_params
from .._planner import falkon_plan, nbytes
from .._progress import wants_bar
from .._validation import (
    check_sample_weight,
    check_X_y,
    effective_n_jobs,
    resolve_memory_budget,
)
from ..datasets import TabularEncoder, is_frame, needs_encoding
from ..kernels import make_kernel
from ..models.ridge import FLOAT32_PENALTY_FLOOR, auto_n_components
from ._average_stage import average_leaves
from ._choice import EXACT_MAX_ROWS, choose_families
from ._class_weight_stage import weigh_classes
from ._edge_stage import past_edge
from ._exact import exact_grid_memory
from ._families import FALKON, check_families, check_family_memory
from ._first_model import SearchTimeError, first_model
from ._inputs import SearchData, SearchSettings, SearchSpace
from ._kernel_stage import choose_kernel
from ._leaves_stage import split_leaves
from ._neighbours_stage import refine_challenger
from ._refit import challenge, grow, refit
from ._results import cv_results, edge_note, leaderboard
from ._schedule import Scheduler, print_stage
from ._space import (
    DEFAULT_GAMMA_FACTORS,
    check_grid,
    check_scoring,
    make_folds,
    representable_alphas,
)
from ._stages import grid, price_grid, screen
from ._state import SearchState, same_point
from ._widths_stage import learn_metric, wants_widths

__all__ = ["KernelSearch", "SearchTimeError"]

#: centres the FALKON family searches with by default (its statistics cost n m^2 per gamma)
SEARCH_MAX_CENTERS = 1000


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
        "learn_widths": ["boolean", Options("auto", "none", "diagonal", "agop")],
        "dtype": [None, Options("float32", "float64")],
        "memory_budget": ["memory"],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": VERBOSE,
    }

    def _common_fit(self, X, y, sample_weight, classifier):
        started = now()
        validate_params(self)
        budget_s = None if self.time_budget is None else parse_duration(self.time_budget)
        state = self._prepare(X, y, sample_weight, classifier)
        log = print_stage if (self.verbose or wants_bar(self.verbose)) else None
        scheduler = Scheduler(budget_s, started, log=log)
        self.stages_ = scheduler.records
        self.halving_ = [] if state.settings.halving else None
        try:
            for stage in (first_model, price_grid, learn_metric, choose_kernel, screen, grid,
                          weigh_classes, past_edge, refit, challenge, refine_challenger,
                          split_leaves, grow, average_leaves):
                stage(self, state, scheduler)
        except KeyboardInterrupt:
            if state.best is None:
                raise KeyboardInterrupt("interrupted before the first model: nothing was "
                                        "scored yet") from None
            state.complete = False
            warnings.warn(f"Search interrupted: keeping the best of the {state.n_scored} "
                          f"configurations scored so far ({state.best.how}).", UserWarning,
                          stacklevel=3)
        self._finish(state, scheduler)
        return self

    def _prepare(self, X, y, sample_weight, classifier):
        """Every check before any work, then the search's data, folds, grids and settings."""
        families = self.families
        if families != "auto":
            families = check_families(families, self._task)
        factors = check_grid("gamma_factors", self.gamma_factors, default=DEFAULT_GAMMA_FACTORS)
        self.encoder_ = None
        if is_frame(X) and needs_encoding(X):
            # a real table (text, categories, booleans, dates, missing cells): encoded as
            # numbers first; best_estimator_ takes the table (the encoder is its first step)
            self.encoder_ = TabularEncoder().fit(X)
            X = self.encoder_.transform(X)
        X, y = check_X_y(self, X, y, multi_output=not classifier, y_numeric=not classifier)
        n, d = X.shape
        sw = check_sample_weight(sample_weight, n)
        data = SearchData(X, y, sw)
        if isinstance(self.cv, (int, np.integer)) and n < self.cv:
            raise ValueError(f"n_samples={n} is fewer than the cv={self.cv} folds: give at "
                             f"least {self.cv} rows or a smaller cv.")
        if classifier:
            check_classification_targets(y)
            self.classes_, data.y_index = np.unique(y, return_inverse=True)
            if len(self.classes_) < 2:
                raise ValueError(f"{type(self).__name__} needs at least 2 classes; the data "
                                 "have 1 class.")
            data.classes = self.classes_
        # the penalty grids are checked before any long work: a bad grid, or float32 with
        # every given alpha below its floor, is one line now
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
        # for the folds and once for the centres / landmarks (an int seeds both)
        rng = check_random_state(self.random_state)
        fold_seed = (int(self.random_state) if isinstance(self.random_state, numbers.Integral)
                     else rng.randint(2**31 - 1))
        folds = make_folds(self.cv, X, y, data.y_index, data.classes, fold_seed)
        scoring = check_scoring(self.scoring, self._task,
                                len(self.classes_) if classifier else None)
        budget = resolve_memory_budget(self.memory_budget)
        seed = rng.randint(2**31 - 1)
        # where the widths will be learned, the search's plans get what their scaled copy
        # of the columns leaves
        widths, _ = wants_widths(self.learn_widths, X)
        copy = nbytes(X) if widths is not None else 0
        if families == "auto":
            exact_plan = None
            if classifier:  # the grid's own plan: one answer to "does the matrix fit"
                exact_plan = exact_grid_memory(
                    data.y_index, self.classes_, sw, folds,
                    self._classifier_settings()["class_weight"],
                    self.multiclass, effective_n_jobs(self.n_jobs), budget - copy)
            families, choice = choose_families(
                self._task, n, d, len(self.classes_) if classifier else None, budget - copy,
                exact_plan)
        else:
            choice = f"families given: {', '.join(families)}"
        choices = [choice]
        n_train = min(len(tr) for tr, _ in folds)
        space = SearchSpace(
            factors, float(make_kernel("rbf", X, gamma="scale").gamma),
            int(self.n_components) if self.n_components is not None else
            min(auto_n_components(n_train, budget, 8), SEARCH_MAX_CENTERS), **penalties)
        settings = SearchSettings(scoring, budget, 1e-3, effective_n_jobs(self.n_jobs), seed,
                                  self.dtype, float(sw.sum()), **self._classifier_settings())
        if FALKON.name in families:
            space.alphas = self._falkon_alphas(n, d, space, settings, budget, choices)
        halving = self.halving
        if halving == "auto":  # where the grid on every row is the search's cost
            halving = isinstance(self.cv, (int, np.integer)) and n > EXACT_MAX_ROWS
        settings.halving = bool(halving)
        for family in families:  # a budget too small for a grid: one line, before any work
            check_family_memory(family, self._task, data, folds, space, settings)
        self.widths_ = self.kernel_metric_ = self.leaves_ = None
        return SearchState(self._task, data, folds, space, settings, scoring, list(families),
                           choices=choices)

    def _falkon_alphas(self, n, d, space, settings, budget, choices):
        """The FALKON penalties to search, dropping those a float64 refit could not hold."""
        dtype = self.dtype
        if dtype is None and not self._float64_refit_fits(n, d, space, budget):
            # a float64 refit would recompute K(X, C) at every CG step (at 1e6 rows, 600 s
            # for a 10-minute search): penalties below float32's floor are not searched
            dtype = "float32"
            floor = FLOAT32_PENALTY_FLOOR * settings.weight_total
            if np.any(np.asarray(space.alphas) < floor):
                choices.append(
                    f"FALKON alphas below float32's floor ({floor:.3g}) not searched: "
                    f"their float64 refit could not keep K(X, C) ({n} x "
                    f"{space.n_components} float64) within the memory budget "
                    f"({format_bytes(budget)})")
        return representable_alphas(space.alphas, dtype, settings.weight_total,
                                    given=self.alphas is not None and self.dtype == "float32")

    def _finish(self, state, scheduler):
        """The fitted attributes, from the best model held and the stages' records."""
        best = state.best
        records = state.records or state.screened
        self.n_splits_ = len(state.folds) if state.records or not state.screened else \
            len(records[0]["scores"])
        self.cv_results_ = cv_results(records, self.n_splits_)
        self.best_estimator_ = best.model
        if self.encoder_ is not None:
            from sklearn.pipeline import Pipeline

            self.best_estimator_ = Pipeline([("encoder", self.encoder_), ("model", best.model)])
            self.n_features_in_ = self.encoder_.n_features_in_
            self.feature_names_in_ = self.encoder_.feature_names_in_
        # what each stage did to the choice of family, in the order they ran
        self.family_choice_ = "; ".join(c.rstrip(".") for c in state.choices) + "."
        self.best_params_ = dict(best.params)
        self.best_index_ = next((i for i, p in enumerate(self.cv_results_["params"])
                                 if same_point(p, best.point)), None)
        self.best_score_ = float(best.cv_score if best.cv_score is not None else best.score)
        self.refit_rows_ = int(best.rows)
        self.model_origin_ = best.how
        self.calibration_ = best.calibration
        self.n_scored_ = int(state.n_scored)
        stopped = {"stopped", "shrunk", "interrupted"}
        self.complete_ = bool(state.complete and not any(
            r.outcome in stopped or r.note.startswith("skipped for time")
            for r in scheduler.records))
        self.refit_time_ = float(sum(r.seconds for r in scheduler.records
                                     if r.stage == "refit"))
        self.search_time_ = float(sum(r.seconds for r in scheduler.records)) - self.refit_time_
        self.budget_used_ = now() - scheduler.started
        if self.verbose >= 2:
            print("\n".join(self.leaderboard()), flush=True)

    def _classifier_settings(self):
        """A classifier's options among the search's settings (none for a regressor)."""
        return {}

    @staticmethod
    def _float64_refit_fits(n, d, space, budget):
        """Whether a float64 FALKON refit keeps its K(X, C) within the budget."""
        m = space.n_components
        plan = falkon_plan("refit", n=n, m=m, n_targets=1, itemsize=8, budget=budget,
                           block_row_bytes=8 * m + 8 * d)
        return plan.choice == "kept" and plan.fits

    def leaderboard(self, top=10):
        """The ``top`` configurations, best first, as printable lines.

        A last line says when the best configuration sits on an edge of its
        family's grid (its gamma, C or alpha the smallest or largest tried):
        the optimum may lie beyond, so extending the grid there may do better.
        """
        check_is_fitted(self, "cv_results_")
        lines = leaderboard(self.cv_results_, top)
        note = None if self.best_index_ is None else edge_note(self.cv_results_,
                                                                self.best_index_)
        return lines + ([note] if note else [])

    def predict(self, X):
        """Predict through ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
