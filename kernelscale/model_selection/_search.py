"""What ``KernelClassifierCV`` and ``KernelRegressorCV`` share: every check before any
work, the search's space and settings, and the fitted attributes from what it held.

The search itself is one loop (:mod:`._run`): a searcher that proposes, one
evaluator that fits and scores, one cost model, one clock.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._config import format_bytes, parse_duration
from .._constraints import N_JOBS, VERBOSE, Interval, Options, validate_params
from .._planner import falkon_plan
from .._progress import wants_bar
from .._validation import (
    MemoryBudgetError,
    check_sample_weight,
    check_X_y,
    effective_n_jobs,
    resolve_memory_budget,
)
from ..datasets import TabularEncoder, is_frame
from ..kernels import make_kernel
from ..models.ridge import FLOAT32_PENALTY_FLOOR, auto_n_components
from ._choice import EXACT_MAX_ROWS
from ._cost import CostModel
from ._evaluator import Evaluator, rung_sizes
from ._families import EXACT_SVM, FALKON, FAMILIES, check_families
from ._inputs import SearchData, SearchSettings, SearchSpace
from ._records import Line, Records
from ._results import cv_results, edge_note, leaderboard
from ._run import SearchRun, SearchTimeError, interrupted
from ._schedule import Scheduler, print_stage
from ._searcher import ETA, Searcher
from ._space import (
    DEFAULT_GAMMA_FACTORS,
    check_grid,
    check_scoring,
    make_folds,
    representable_alphas,
    row_order,
)

__all__ = ["KernelSearch", "SearchTimeError", "wants_widths"]

#: centres the FALKON family searches with by default (its statistics cost n m^2 per
#: gamma); the search grows them where the time pays
SEARCH_MAX_CENTERS = 1000
#: the smallest subsample the race starts on: successive halving's screen ranked gammas
#: consistently from 500 rows on (benchmarks/HISTORY.md "Halving")
LEAST_ROWS = 500
#: learn_widths="auto" learns a metric from this many rows (below, the held-out parts it
#: is chosen on rank the features unreliably) and for 2 to this many dense features
#: (images or text, thousands of like columns, gained little)
WIDTHS_MIN_ROWS, WIDTHS_MAX_FEATURES = 5_000, 200
#: the rows are in an order of their own (folds of contiguous blocks, not shuffled) where
#: consecutive rows are nearer than random pairs by more than this many standard errors,
#: a one-sided test at p < 0.002: the real tables split at random measure z < 1, those
#: kept in time or protein order 13-131 (benchmarks/HISTORY.md "Stop 72")
ORDER_Z = 3.0
#: rows sorted by a regression target (shuffled folds: each contiguous block would lie
#: outside the others' targets) where fewer than this share of its steps from row to row
#: go against the sort: diamonds' CSV, sorted by price in runs, 0.014; the tables kept in
#: time order and those split at random, 0.495-0.499 (benchmarks/HISTORY.md "Stop 73")
SORTED_SHARE = 0.05


def fold_order(cv, X, y, classifier, seed, memory_budget):
    """``(shuffle, why)``: whether an int ``cv``'s folds are shuffled, and the line
    that says why not.

    Rows in the order they were observed hold near-twins side by side (the same
    half-hour's neighbours, one protein's examples): shuffled folds put one twin in
    the training rows and the other in the validation rows, and reward the model that
    memorizes, where later rows or another protein's would punish it. Such rows get
    scikit-learn's unshuffled folds (contiguous blocks). Rows sorted by a regression
    target, even in runs (a CSV sorted by price within each group), are not such an
    order (each block would lie outside the others' targets): they are shuffled.
    """
    if not isinstance(cv, (int, np.integer)):
        return True, ""
    if not classifier:
        steps = np.diff(np.asarray(y, dtype=np.float64).reshape(len(y), -1), axis=0)
        up, down = int(np.sum(steps > 0)), int(np.sum(steps < 0))
        if min(up, down) <= SORTED_SHARE * (up + down):  # sorted, perhaps in runs
            return True, ""
    ratio, z = row_order(X, seed, memory_budget)
    if z <= ORDER_Z:
        return True, ""
    return False, (f"folds: contiguous blocks of the rows, not shuffled: consecutive rows are "
                   f"{ratio:.2f}x as far apart as random pairs ({z:.0f} standard errors "
                   f"nearer), an order of their own whose near-twins shuffled folds would split "
                   f"(cv=KFold({int(cv)}, shuffle=True) shuffles them)")


def wants_widths(learn_widths, X):
    """``(metrics to learn, why not)``: ["diagonal", "agop"], one of them, or [] and why."""
    n, d = X.shape
    if learn_widths in ("auto", True):
        if learn_widths == "auto":
            if hasattr(X, "tocsr"):
                return [], "not learned: sparse columns (learn_widths='auto')"
            if n < WIDTHS_MIN_ROWS:
                return [], f"not learned: {n} rows < {WIDTHS_MIN_ROWS} (learn_widths='auto')"
            if not 2 <= d <= WIDTHS_MAX_FEATURES:
                return [], (f"not learned: {d} features, outside 2-{WIDTHS_MAX_FEATURES} "
                            "(learn_widths='auto')")
        return (["diagonal", "agop"] if d >= 2 else ["diagonal"]), ""
    if learn_widths in (False, "none"):
        return [], f"not learned: learn_widths={learn_widths!r}"
    return [learn_widths], ""


def _missing_labels(y):
    """Whether each row's label is missing (None, NaN, NA); None where ``y`` is no column."""
    values = np.asarray(y)
    if values.ndim not in (1, 2):  # check_X_y says what is wrong with it
        return None
    if values.dtype.kind == "f":
        missing = np.isnan(values)
    elif values.dtype.kind == "O":
        flat = values.ravel()
        missing = np.fromiter((v is None or v != v for v in flat), dtype=bool,
                              count=flat.size).reshape(values.shape)
    else:
        return np.zeros(values.shape[0], dtype=bool)
    return missing.any(axis=1) if missing.ndim == 2 else missing


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
        validate_params(self)
        budget_s = None if self.time_budget is None else parse_duration(self.time_budget)
        log = print_stage if (self.verbose or wants_bar(self.verbose)) else None
        sched = Scheduler(budget_s, log=log)
        self.stages_ = sched.records
        run = self._prepare(X, y, sample_weight, classifier, sched)
        try:
            run.run()
        except KeyboardInterrupt:
            interrupted(run)
        self._finish(run)
        return self

    # ------------------------------------------------------------------ before any work

    def _prepare(self, X, y, sample_weight, classifier, sched):
        """Every check before any work, then the search's data, folds, space, settings,
        evaluator and searcher."""
        families = self.families
        if families != "auto":
            families = check_families(families, self._task)
        factors = check_grid("gamma_factors", self.gamma_factors, default=DEFAULT_GAMMA_FACTORS)
        missing = None if y is None else _missing_labels(y)
        if missing is not None and missing.any():
            raise ValueError(f"y is missing on {int(missing.sum())} of {missing.size} rows: "
                             "drop those rows (e.g. X[y.notna()], y[y.notna()]) before the "
                             "search.")
        self.encoder_ = None
        if is_frame(X):
            # a table as a user has it (numbers, text, categories, booleans, dates, missing
            # cells): encoded as the command line encodes a CSV; best_estimator_ takes the
            # table (the encoder is its first step)
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
        penalties = self._penalties(n)
        if self.dtype == "float32" and self.alphas is not None:
            floor = FLOAT32_PENALTY_FLOOR * float(sw.sum())
            if np.all(penalties["alphas"] < floor):  # (raises; some below only warn, later)
                representable_alphas(penalties["alphas"], "float32", float(sw.sum()),
                                     given=True)
        int_cv = isinstance(self.cv, (int, np.integer))
        if self.halving is True and not int_cv:
            raise ValueError("halving=True draws its own folds on each subsample: give cv as "
                             "a number of folds.")
        # one generator for the whole fit: a RandomState instance is drawn from once
        # for the folds and once for the centres / landmarks (an int seeds both)
        rng = check_random_state(self.random_state)
        fold_seed = (int(self.random_state) if isinstance(self.random_state, numbers.Integral)
                     else rng.randint(2**31 - 1))
        scoring = check_scoring(self.scoring, self._task,
                                len(self.classes_) if classifier else None)
        log_target, log_note = self._log_target(y)
        budget = resolve_memory_budget(self.memory_budget)
        # the one pass over the rows before the folds: after every check of the input
        shuffle, order_note = fold_order(self.cv, X, y, classifier, fold_seed, budget)
        folds = make_folds(self.cv, X, y, data.y_index, data.classes, fold_seed,
                           shuffle=shuffle)
        seed = rng.randint(2**31 - 1)
        learn, why = wants_widths(self.learn_widths, X)
        choices = []
        if families == "auto":
            families = [FALKON.name] + ([EXACT_SVM.name] if classifier else [])
            choices.append(
                f"{n} rows x {d} features: " + (
                    "Nystrom kernel ridge (FALKON's model) and the exact SVM race on growing "
                    "subsamples; each goes on while it scores within the noise of the best"
                    if classifier else "regression is searched with Nystrom kernel ridge "
                                       "(FALKON's model); the exact SVR is not part of it"))
        else:
            choices.append(f"families given: {', '.join(families)}")
        if why:
            choices.append(f"metric {why}")
        if order_note:
            choices.append(order_note)
        if log_note:
            choices.append(log_note)
        n_train = min(len(tr) for tr, _ in folds)
        space = SearchSpace(
            list(factors), float(make_kernel("rbf", X, gamma="scale").gamma),
            int(self.n_components) if self.n_components is not None else
            min(auto_n_components(n_train, budget, 8), SEARCH_MAX_CENTERS), **penalties)
        settings = SearchSettings(scoring, budget, 1e-3, effective_n_jobs(self.n_jobs), seed,
                                  self.dtype, float(sw.sum()), **self._classifier_settings())
        if FALKON.name in families:
            space.alphas = self._falkon_alphas(n, d, space, settings, budget, choices)
        self.widths_ = self.kernel_metric_ = self.leaves_ = None
        timed = sched.timed
        halving = self.halving
        if halving == "auto":
            # under a budget the race starts cheap; without one, where the exact SVM's grid
            # on every row (about 5 minutes on 20,000 rows) would be the search's cost
            halving = int_cv and (timed or n > EXACT_MAX_ROWS)
        least = LEAST_ROWS
        if classifier:
            p_min = np.bincount(data.y_index).min() / n
            least = max(least, int(np.ceil(4 * len(folds) / p_min)))
        rungs = rung_sizes(n, least, ETA) if halving else [n]
        cost = CostModel().calibrate()
        # out-of-fold predictions are kept for the ensemble, which a time budget buys
        evaluator = Evaluator(self._task, data, folds, space, settings, cost, seed,
                              keep_oof=timed, shuffle=shuffle)
        families = self._fitting_families(evaluator, families, rungs[0], choices)
        records = Records(evaluator.oof_bytes)
        dense = not hasattr(X, "tocsr")
        searcher = Searcher(
            evaluator, records, rungs, families=list(families), factors=factors, learn=learn,
            laplacian=dense and FALKON.name in families,
            balance=classifier and self._imbalanced(data),
            local=timed, grow_centres=timed and self.n_components is None,
            leaves=timed and not classifier, log_target=log_target)
        self.family_choice_ = "; ".join(c.rstrip(".") for c in choices) + "."
        return SearchRun(self, evaluator, records, searcher, sched,
                         probability=bool(getattr(self, "probability", False)))

    def _fitting_families(self, evaluator, families, rows, choices):
        """The families whose grid fits the memory budget on the race's first rows: a
        family given whose grid does not is refused before any work (one line naming the
        budget that would do); one chosen ("auto") is left out, and said."""
        kept = []
        for family in families:
            line = Line(family)
            data, folds = evaluator.data_for(line, rows)
            space = SearchSpace([1.0], evaluator.gamma_ref(line),
                                evaluator.centres(line, rows), Cs=evaluator.space.Cs,
                                alphas=evaluator.space.alphas)
            try:
                FAMILIES[family].check_memory(self._task, data, folds, space,
                                              evaluator.settings_for(line, rows=rows))
            except (MemoryBudgetError, ValueError) as error:
                if self.families != "auto":
                    raise
                choices.append(f"{family} left out: {error}")
                continue
            kept.append(family)
        return kept

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

    @staticmethod
    def _float64_refit_fits(n, d, space, budget):
        """Whether a float64 FALKON refit keeps its K(X, C) within the budget."""
        m = space.n_components
        plan = falkon_plan("refit", n=n, m=m, n_targets=1, itemsize=8, budget=budget,
                           block_row_bytes=8 * m + 8 * d)
        return plan.choice == "kept" and plan.fits

    def _imbalanced(self, data):
        """Whether ``class_weight="auto"`` tries balanced classes: where the rarest class
        holds under half its share of the rows (a classifier's option)."""
        return False

    def _log_target(self, y):
        """``(try the log target, why)``: a regressor's option (never a classifier's)."""
        return False, ""

    def _classifier_settings(self):
        """A classifier's options among the search's settings (none for a regressor)."""
        return {}

    # ------------------------------------------------------------------ after the search

    def _finish(self, run):
        """The fitted attributes, from the model held and the records."""
        held, records, ev = run.held, list(run.records), run.ev
        self.n_splits_ = ev.n_splits
        self.cv_results_ = cv_results(
            [{"params": r.params, "scores": r.scores, "fit_times": r.fit_times,
              "score_times": r.score_times, "rows": r.rows} for r in records], self.n_splits_,
            keys=run.records.keys() if records else None)
        model = held.model
        if self.encoder_ is not None:
            from sklearn.pipeline import Pipeline

            model = Pipeline([("encoder", self.encoder_), ("model", model)])
            self.n_features_in_ = self.encoder_.n_features_in_
            self.feature_names_in_ = self.encoder_.feature_names_in_
        self.best_estimator_ = model
        self.best_params_ = dict(held.params)
        self.best_index_ = next((i for i, r in enumerate(records) if r is held.record), None)
        self.best_score_ = float(held.score)
        self.refit_rows_ = int(held.rows)
        self.model_origin_ = held.how
        self.calibration_ = held.calibration
        self.ensemble_ = held.ensemble
        self.n_scored_ = len(records)
        line = held.record.line
        if line.metric == "diagonal":
            self.widths_ = ev.learned["diagonal"]
            self.feature_relevance_ = self.widths_.feature_relevance_
        elif line.metric == "agop":
            self.kernel_metric_ = ev.learned["agop"]
            self.feature_relevance_ = self.kernel_metric_.feature_relevance_
        if line.n_leaves > 1:
            self.leaves_ = {"n_leaves": line.n_leaves}
        self.halving_ = run.searcher.log
        self.lines_ = {s.line.describe(): s.note or ("alive" if s.alive else "retired")
                       for s in run.searcher.lines.values()}
        stopped = {"stopped", "shrunk", "interrupted"}
        self.complete_ = bool(run.complete and not any(
            r.outcome in stopped for r in run.sched.records))
        self.refit_time_ = float(run.refit_seconds)
        self.budget_used_ = run.sched.elapsed()
        self.search_time_ = float(self.budget_used_ - self.refit_time_)
        if self.verbose >= 2:
            print("\n".join(self.leaderboard()), flush=True)

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
