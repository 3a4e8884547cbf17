"""Run one family's grid: the shared-work engines, or fold-by-fold fits when they do not fit.

Every function here returns records ``{"params", "scores", "fit_times",
"score_times"}`` (one score and time per fold) and whether the grid completed
before the deadline.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._config import format_bytes
from .._validation import MemoryBudgetError
from ..feature_maps import Nystroem, RandomFourierFeatures
from ..models import ApproxKernelSVC, KernelSVC, NystromKernelRidgeClassifier
from ..solvers import base_weights, combine_scores, plus_minus_targets
from ._exact import exact_grid_memory, exact_svm_grid
from ._exact_rows import CACHE_SHARE, exact_svm_rows_grid
from ._features import (
    NYSTROM_RCOND,
    nystrom_svm_bytes,
    nystrom_svm_grid,
    nystrom_svm_solver,
    rff_svm_bytes,
    rff_svm_grid,
)
from ._least_squares import falkon_grid, falkon_grid_memory
from ._space import SCORERS, refit_dtype

__all__ = ["run_family", "middle_out", "classifier_model", "check_family_memory"]


def middle_out(factors):
    """Gamma factors nearest 1 first, so that a time budget cuts the extreme ones."""
    factors = np.asarray(factors, dtype=np.float64)
    return list(factors[np.argsort(np.abs(np.log(factors)), kind="stable")])


def _scorer(scoring, y_true, to_indices=None, classes=None):
    """``score(values)`` of one fold: ``to_indices`` turns a label scorer's values into
    class indices (the rule of the refitted model's ``predict``)."""
    func, needs, _ = SCORERS[scoring]

    def score(values):
        values = np.asarray(values)
        if needs in ("scores", "values"):
            one = values.ndim == 2 and np.ndim(y_true) == 1
            return float(func(y_true, values[:, 0] if one else values))
        return float(func(y_true, classes[to_indices(values)]))
    return score


def _fold_weights(task, data, folds, class_weight):
    n = data["y"].shape[0]
    weights = []
    for train, _ in folds:
        w = np.zeros(n)
        if task == "classifier":
            w[train] = base_weights(class_weight, data["classes"], data["y_index"][train],
                                    data["sample_weight"][train])[0]
        else:
            w[train] = data["sample_weight"][train]
        weights.append(w)
    return weights


def run_family(family, task, data, folds, space, settings, deadline, on_unit):
    """Cross-validate ``family`` over its grid; returns ``(records, complete)``.

    ``data``: ``X``, ``y``, ``y_index``, ``classes``, ``sample_weight``;
    ``space``: ``gamma_ref``, ``factors``, ``Cs``, ``alphas``, ``n_components``;
    ``settings``: ``scoring``, ``class_weight``, ``multiclass``, ``tol``,
    ``memory_budget``, ``n_jobs``, ``random_state``.
    """
    X, s = data["X"], settings
    factors = middle_out(space["factors"])
    plan = check_family_memory(family, task, data, folds, space, settings)
    if family == "exact-svm":
        n = X.shape[0]
        least, with_distances = plan.least, plan.shared
        shared = plan.choice != "rows"
        if not shared:
            warnings.warn(
                f"The exact SVM's kernel matrix for {n} rows and a solving thread's fold "
                f"blocks need {format_bytes(least)}, over the memory budget "
                f"({format_bytes(s['memory_budget'])}): the grid reads kernel rows through a "
                f"cache shared by the folds and the values of C (slower); memory_budget >= "
                f"{format_bytes(least)} holds the matrix, >= "
                f"{format_bytes(with_distances)} also shares the distances across "
                "gammas.", UserWarning, stacklevel=4)

        classes = data["classes"]

        def votes(values):
            return combine_scores(values, len(classes), s["multiclass"], s["break_ties"])
        scorers = [_scorer(s["scoring"], data["y"][val], votes, classes) for _, val in folds]

        def unit(records):
            on_unit([_svm_record(r) for r in records])
        options = dict(gamma_ref=space["gamma_ref"], factors=factors, Cs=space["Cs"],
                       class_weight=s["class_weight"], multiclass=s["multiclass"],
                       tol=s["tol"], score=lambda f, values: scorers[f](values),
                       memory_budget=s["memory_budget"], deadline=deadline, on_unit=unit)
        if shared:
            records, complete = exact_svm_grid(
                X, data["y_index"], classes, data["sample_weight"], folds,
                n_jobs=s["n_jobs"], **options)
        else:
            records, complete = exact_svm_rows_grid(
                X, data["y_index"], classes, data["sample_weight"], folds, **options)
        return [_svm_record(r) for r in records], complete
    if family in FEATURE_SVMS:
        return _feature_svm(family, data, folds, space, settings, factors, deadline, on_unit)
    # falkon
    if task == "classifier":
        classes = data["classes"]
        Y = plus_minus_targets(data["y_index"], len(classes))

        def argmax(values):  # one column (sign) for two classes, as the classifier predicts
            return combine_scores(values, len(classes), "ovr")
        scorers = [_scorer(s["scoring"], data["y"][val], argmax, classes) for _, val in folds]
    else:
        y = np.asarray(data["y"], dtype=np.float64)
        Y = y[:, None] if y.ndim == 1 else y
        scorers = [_scorer(s["scoring"], y[val]) for _, val in folds]
    weights = _fold_weights(task, data, folds, s["class_weight"])
    m = min(space["n_components"], X.shape[0])

    def record(r):
        return _falkon_record(r, refit_dtype(r["alpha"], s["dtype"], s["weight_total"]))

    def unit(records):
        on_unit([record(r) for r in records])
    records, complete = falkon_grid(
        X, Y, weights, folds, gamma_ref=space["gamma_ref"], factors=factors,
        alphas=space["alphas"], n_components=m, random_state=s["random_state"],
        score=lambda f, values: scorers[f](values), memory_budget=s["memory_budget"],
        deadline=deadline, on_unit=unit, keep_values=task == "classifier")
    return [record(r) for r in records], complete


def check_family_memory(family, task, data, folds, space, settings):
    """Refuse, before any work, a memory budget too small for ``family``'s grid on
    ``data`` (one line naming the budget or the size that would do); the exact SVM's
    and FALKON's plans otherwise."""
    X, s = data["X"], settings
    n = X.shape[0]
    if family == "exact-svm":
        # the matrix grid holds one kernel and a solving thread's copy of its fold blocks
        plan = exact_grid_memory(data["y_index"], data["classes"], data["sample_weight"],
                                 folds, s["class_weight"], s["multiclass"], s["n_jobs"],
                                 s["memory_budget"])
        if plan.choice == "rows" and CACHE_SHARE * s["memory_budget"] < 8 * n:
            raise MemoryBudgetError(
                f"memory_budget ({format_bytes(s['memory_budget'])}) cannot hold two "
                f"kernel rows of {n} values in the exact SVM's row cache "
                f"({CACHE_SHARE:.0%} of the budget); give memory_budget >= "
                f"{format_bytes(8 * n / CACHE_SHARE)} (ideally hundreds of rows: "
                f"{format_bytes(4 * n * 256 / CACHE_SHARE)}), or another family.")
        return plan
    if family in FEATURE_SVMS:
        _, memory, what, capped = FEATURE_SVMS[family]
        m = min(space["n_components"], n) if capped else space["n_components"]
        need = memory(n, m)
        if need > s["memory_budget"]:
            fits = 1  # the most components whose arrays fit (the need grows with m)
            while fits < m and memory(n, fits + 1) <= s["memory_budget"]:
                fits += 1
            raise ValueError(f"The {family} family's shared arrays for {n} rows x {m} {what} "
                             f"need {format_bytes(need)}, over memory_budget "
                             f"({format_bytes(s['memory_budget'])}): give memory_budget >= "
                             f"{format_bytes(need)} or n_components <= {fits}.")
        return None
    t = len(data["classes"]) if task == "classifier" and len(data["classes"]) > 2 else \
        (1 if task == "classifier" or data["y"].ndim == 1 else data["y"].shape[1])
    m = min(space["n_components"], n)
    return falkon_grid_memory(X, m, len(folds), t, len(space["alphas"]), s["memory_budget"])[0]


#: feature-map SVM families: (the grid, its memory, the map's name in messages,
#: whether the map has at most one feature per row: landmarks are rows)
FEATURE_SVMS = {"nystrom-svm": (nystrom_svm_grid, nystrom_svm_bytes, "landmarks", True),
                "rff-svm": (rff_svm_grid, rff_svm_bytes, "random Fourier features", False)}


def _feature_svm(family, data, folds, space, settings, factors, deadline, on_unit):
    s, classes = settings, data["classes"]
    grid, memory, what, capped = FEATURE_SVMS[family]
    n = data["X"].shape[0]
    m = min(space["n_components"], n) if capped else space["n_components"]
    need = memory(n, m)

    def argmax(values):  # one-vs-rest scores, the rule of ApproxKernelSVC's predict
        return combine_scores(values, len(classes), "ovr")
    scorers = [_scorer(s["scoring"], data["y"][val], argmax, classes) for _, val in folds]

    def record(r):
        return {"params": {"family": family, "gamma": float(r["gamma"]), "C": r["C"],
                           "n_components": r["n_components"]},
                **{k: r[k] for k in ("scores", "fit_times", "score_times")}}

    def unit(records):
        on_unit([record(r) for r in records])
    records, complete = grid(
        data["X"], data["y_index"], classes, data["sample_weight"], folds,
        gamma_ref=space["gamma_ref"], factors=factors, Cs=space["Cs"],
        n_components=m, class_weight=s["class_weight"], random_state=s["random_state"],
        score=lambda f, values: scorers[f](values),
        # the solver's row blocks get what the shared arrays leave
        memory_budget=max(s["memory_budget"] - need, 2**20),
        n_jobs=s["n_jobs"], deadline=deadline, on_unit=unit)
    return [record(r) for r in records], complete


def classifier_model(p, s):
    """The (unfitted) classifier of a configuration ``p`` (a ``cv_results_`` params
    dict), with the search's settings ``s``: the model whose CV score ``p`` has."""
    if p["family"] == "exact-svm":
        return KernelSVC(C=p["C"], gamma=p["gamma"], class_weight=s["class_weight"],
                         multiclass=s["multiclass"], break_ties=s["break_ties"],
                         probability=s.get("probability", False),
                         random_state=s["random_state"] if s.get("probability") else None,
                         memory_budget=s["memory_budget"], n_jobs=s["n_jobs"])
    if p["family"] == "rff-svm":
        # the draw the search made: the same frequencies and phases from the same seed
        features = RandomFourierFeatures(n_components=p["n_components"], gamma=p["gamma"],
                                         random_state=s["random_state"])
        return ApproxKernelSVC(feature_map=features, C=p["C"], class_weight=s["class_weight"],
                               solver=nystrom_svm_solver(p["n_components"]),
                               probability=s.get("probability", False),
                               memory_budget=s["memory_budget"],
                               random_state=s["random_state"])
    if p["family"] == "nystrom-svm":
        # the landmarks the search drew: the same draw from the same rows and seed
        landmarks = Nystroem(n_components=p["n_components"], gamma=p["gamma"],
                             decomposition="eigh", rcond=NYSTROM_RCOND,
                             random_state=s["random_state"])
        return ApproxKernelSVC(feature_map=landmarks, C=p["C"], class_weight=s["class_weight"],
                               solver=nystrom_svm_solver(p["n_components"]),
                               probability=s.get("probability", False),
                               memory_budget=s["memory_budget"],
                               random_state=s["random_state"])
    return NystromKernelRidgeClassifier(
        n_components=p["n_components"], gamma=p["gamma"], alpha=p["alpha"], dtype=p["dtype"],
        class_weight=s["class_weight"], memory_budget=s["memory_budget"],
        probability=s.get("probability", False), random_state=s["random_state"])


def _svm_record(r):
    return {"params": {"family": "exact-svm", "gamma": float(r["gamma"]), "C": r["C"]},
            **{k: r[k] for k in ("scores", "fit_times", "score_times")}}


def _falkon_record(r, dtype):
    # the out-of-fold predictions of the best so far travel with it (a classifier's
    # probabilities are calibrated on them)
    return {"params": {"family": "falkon", "gamma": float(r["gamma"]), "alpha": r["alpha"],
                       "n_components": r["n_components"], "dtype": dtype},
            **{k: r[k] for k in ("scores", "fit_times", "score_times", "values") if k in r}}
