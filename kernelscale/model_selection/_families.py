"""The search's model families, each an object, in one registry.

A :class:`Family` says everything the search's evaluator needs of one kind of model
(as a subclass of scikit-learn's ``BaseSearchCV`` says which candidates): its grid
(its shared-work engine, gamma by gamma: the evaluator's batch form), the memory
that grid needs (refused before any work where it does not fit), the operations
its grid unit and its fit perform at a size (what the cost model prices), the
decision values its out-of-fold predictions are kept as (what the ensemble is
selected on), and the estimator that refits a configuration. A family's name is
written here and nowhere else in the search: every other module reads it from
:data:`FAMILIES` (``EXACT_SVM.name``, ``FALKON.name``).
"""

from __future__ import annotations

import dataclasses
import warnings
from abc import ABC, abstractmethod

import numpy as np

from .._config import format_bytes
from .._planner import falkon_plan, nystrom_svm_bytes, rff_svm_bytes
from .._validation import MemoryBudgetError
from ..feature_maps import Nystroem, RandomFourierFeatures
from ..models import (
    ApproxKernelSVC,
    KernelSVC,
    NystromKernelRidge,
    NystromKernelRidgeClassifier,
)
from ..solvers import base_weights, combine_scores, ovo_votes, plus_minus_targets
from ._exact import exact_grid_memory, exact_svm_grid
from ._exact_rows import CACHE_SHARE, exact_svm_rows_grid
from ._features import (
    NYSTROM_RCOND,
    nystrom_svm_grid,
    nystrom_svm_solver,
    rff_svm_grid,
)
from ._least_squares import falkon_grid, falkon_grid_memory
from ._space import SCORERS, refit_dtype, target_inverse

__all__ = ["Family", "FAMILIES", "EXACT_SVM", "FALKON", "NYSTROM_SVM", "RFF_SVM",
           "CLASSIFIER_FAMILIES", "REGRESSOR_FAMILIES", "check_families", "classifier_model",
           "middle_out", "decision_columns", "penalty_on_rows", "FALKON_CG_STEPS"]

#: the conjugate-gradient steps a FALKON fit is priced at (its tol 1e-3 stops it after
#: 8-20 steps on the benchmarks' tables: HISTORY "Stop 61", 16 steps at 800,000 rows)
FALKON_CG_STEPS = 20


def middle_out(factors):
    """Gamma factors nearest 1 first, so that a time budget cuts the extreme ones."""
    factors = np.asarray(factors, dtype=np.float64)
    return list(factors[np.argsort(np.abs(np.log(factors)), kind="stable")])


def decision_columns(values):
    """A model's decision values as columns: one for two classes (positive favours the
    second) or a regression's one target, else one per class or target.

    The search keeps out-of-fold predictions in this form and an ensemble reads its
    members' ``decision_function`` / ``predict`` the same way.

    Examples
    --------
    >>> decision_columns(np.array([0.5, -1.0])).shape
    (2, 1)
    """
    values = np.asarray(values, dtype=np.float32)
    return values[:, None] if values.ndim == 1 else values


def _scorer(scoring, y_true, to_indices=None, classes=None, keep=None, target="identity"):
    """``score(values)`` of one fold: ``to_indices`` turns a label scorer's values into
    class indices (the rule of the refitted model's ``predict``); ``keep(values)``,
    where given, makes the fold's out-of-fold decision columns kept beside its score.
    A regressor's values and ``y_true`` on its line's ``target`` are turned back to the
    target as given first: every line is scored, and kept, on the one target."""
    func, needs, _ = SCORERS[scoring]
    y_true = target_inverse(target, y_true)

    def score(values):
        values = target_inverse(target, np.asarray(values))
        if needs in ("scores", "values"):
            one = values.ndim == 2 and np.ndim(y_true) == 1
            value = float(func(y_true, values[:, 0] if one else values))
        else:
            value = float(func(y_true, classes[to_indices(values)]))
        return value if keep is None else (value, keep(values))
    return score


def _records(name, records, keys=("scores", "fit_times", "score_times"), **params):
    return [{"params": {"family": name, "gamma": float(r["gamma"]),
                        **{k: (v(r) if callable(v) else r[v]) for k, v in params.items()}},
             **{k: r[k] for k in keys if k in r}} for r in records]


class Family(ABC):
    """One family of the search: its grid, memory, operations, kept predictions and refit.

    Attributes
    ----------
    name : str
        Its name in ``families=``, ``cv_results_`` and ``best_params_``.
    descriptions : dict
        Per task ("classifier", "regressor") it serves: what it fits.
    cli_model : str
        ``kernelscale fit --model`` of its refitted estimator.
    penalty : {"C", "alpha"}
        Its regularisation parameter.
    capped : bool
        Its ``n_components`` are rows (centres, landmarks): at most the rows fitted on.
    centred : bool
        It has ``n_components`` (centres, landmarks or features) the search may grow.
    """

    name = None
    descriptions = {}
    cli_model = None
    penalty = "C"
    capped = True
    centred = False

    def check_memory(self, task, data, folds, space, settings):
        """Refuse, before any work, a budget too small for this grid (one line naming the
        budget or the size that would do); the plan, where there is one."""
        return None

    @abstractmethod
    def run(self, task, data, folds, space, settings, deadline, on_unit, keep_oof=False):
        """Cross-validate the family over its grid, its gammas in ``space.factors``'s
        order: ``(records, complete)``.

        ``data``, ``space`` and ``settings`` are the search's
        :class:`~kernelscale.model_selection._inputs.SearchData`,
        :class:`~kernelscale.model_selection._inputs.SearchSpace` and
        :class:`~kernelscale.model_selection._inputs.SearchSettings`. ``keep_oof``:
        each record also holds its folds' out-of-fold decision columns (``oof``, one
        array per fold, :func:`decision_columns`).
        """

    @abstractmethod
    def model(self, params, settings, task):
        """The unfitted estimator of a configuration ``params``: the model whose CV score
        ``params`` has, with the search's ``settings``."""

    @abstractmethod
    def operations(self, kind, rows, *, n_features, n_components, n_penalties, n_folds,
                   n_outputs, memory_budget, kernel="rbf"):
        """The operations one piece of work performs (what the cost model prices):
        ``kind`` "grid" is one gamma of the grid on ``rows`` rows (every penalty, every
        fold), "fit" one fit of the refitted estimator on ``rows`` rows. A dict of
        counts: ``gemm`` multiply-adds of products, ``eigh`` (``m^3`` each m x m
        eigendecomposition), ``exp`` elementwise passes (the Laplacian kernel's L1
        distances are elementwise, not a product)."""

    def _kept(self, values, settings, n_classes):
        """A fold's grid values as the decision columns its refitted model's
        ``decision_function`` gives (one-vs-rest or one column: the default)."""
        return decision_columns(values)

    def _scorers(self, data, folds, settings, rule, keep_oof=False):
        classes = data.classes
        n_classes = None if classes is None else len(classes)
        keep = (lambda values: self._kept(values, settings, n_classes)) if keep_oof else None
        return [_scorer(settings.scoring, data.y[val], rule, classes, keep)
                for _, val in folds]


class ExactSVM(Family):
    name = "exact-svm"
    descriptions = {"classifier": "KernelSVC: the exact SVM (SMO), the kernel matrix shared "
                                  "by the grid"}
    cli_model = "kernel-svc"

    def operations(self, kind, rows, *, n_features, n_components, n_penalties, n_folds,
                   n_outputs, memory_budget, kernel="rbf"):
        # the distances (one GEMM), an exp per gamma, and SMO's passes over the kernel
        # (their number grows with the rows and C: the cost model measures that part)
        square = float(rows) ** 2
        if kind == "grid":
            return {"gemm": square * n_features, "exp": square * (1 + n_penalties)}
        return {"gemm": square * n_features, "exp": 2 * square}

    def _kept(self, values, settings, n_classes):
        if n_classes > 2 and settings.multiclass == "ovo":
            # the votes and confidences KernelSVC.decision_function gives
            return decision_columns(ovo_votes(np.asarray(values), n_classes))
        return decision_columns(values)

    def check_memory(self, task, data, folds, space, settings):
        s, n = settings, data.X.shape[0]
        # the matrix grid holds one kernel and a solving thread's copy of its fold blocks
        plan = exact_grid_memory(data.y_index, data.classes, data.sample_weight,
                                 folds, s.class_weight, s.multiclass, s.n_jobs,
                                 s.memory_budget)
        if plan.choice == "rows" and CACHE_SHARE * s.memory_budget < 8 * n:
            raise MemoryBudgetError(
                f"memory_budget ({format_bytes(s.memory_budget)}) cannot hold two "
                f"kernel rows of {n} values in the exact SVM's row cache "
                f"({CACHE_SHARE:.0%} of the budget); give memory_budget >= "
                f"{format_bytes(8 * n / CACHE_SHARE)} (ideally hundreds of rows: "
                f"{format_bytes(4 * n * 256 / CACHE_SHARE)}), or another family.")
        return plan

    def run(self, task, data, folds, space, settings, deadline, on_unit, keep_oof=False):
        s, X, classes = settings, data.X, data.classes
        plan = self.check_memory(task, data, folds, space, settings)
        shared = plan.choice != "rows"
        if not shared:
            warnings.warn(
                f"The exact SVM's kernel matrix for {X.shape[0]} rows and a solving thread's "
                f"fold blocks need {format_bytes(plan.least)}, over the memory budget "
                f"({format_bytes(s.memory_budget)}): the grid reads kernel rows through a "
                f"cache shared by the folds and the values of C (slower); memory_budget >= "
                f"{format_bytes(plan.least)} holds the matrix, >= "
                f"{format_bytes(plan.shared)} also shares the distances across "
                "gammas.", UserWarning, stacklevel=5)
        scorers = self._scorers(data, folds, s, lambda values: combine_scores(
            values, len(classes), s.multiclass, s.break_ties), keep_oof)

        def record(records):
            return _records(self.name, records, ("scores", "fit_times", "score_times", "oof"),
                            C="C")
        options = dict(gamma_ref=space.gamma_ref, factors=list(space.factors),
                       Cs=space.Cs, class_weight=s.class_weight,
                       multiclass=s.multiclass, tol=s.tol,
                       score=lambda f, values: scorers[f](values),
                       memory_budget=s.memory_budget, deadline=deadline,
                       on_unit=lambda records: on_unit(record(records)))
        if shared:
            records, complete = exact_svm_grid(
                X, data.y_index, classes, data.sample_weight, folds,
                n_jobs=s.n_jobs, **options)
        else:
            records, complete = exact_svm_rows_grid(
                X, data.y_index, classes, data.sample_weight, folds, **options)
        return record(records), complete

    def model(self, params, settings, task):
        s = settings
        return KernelSVC(C=params["C"], gamma=params["gamma"], class_weight=s.class_weight,
                         multiclass=s.multiclass, break_ties=s.break_ties,
                         probability=s.probability,
                         random_state=s.random_state if s.probability else None,
                         memory_budget=s.memory_budget, n_jobs=s.n_jobs)


class Falkon(Family):
    name = "falkon"
    descriptions = {
        "classifier": "NystromKernelRidgeClassifier (Nystrom kernel ridge), fold statistics "
                      "merged, every alpha from one eigendecomposition per gamma and fold",
        "regressor": "NystromKernelRidge (Nystrom kernel ridge), fold statistics merged, every "
                     "alpha from one eigendecomposition per gamma and fold",
    }
    cli_model = "falkon"
    penalty = "alpha"
    centred = True

    def operations(self, kind, rows, *, n_features, n_components, n_penalties, n_folds,
                   n_outputs, memory_budget, kernel="rbf"):
        m = float(min(n_components, rows))
        n, d, t = float(rows), float(n_features), float(n_outputs)
        # the distances to the centres: one product, or (L1) an elementwise pass
        gemm_d, exp_d = (0.0, d) if kernel == "laplacian" else (d, 0.0)
        if kind == "grid":
            # a pass of kernel blocks summing K^T W K and K^T W Y, one scoring every
            # penalty; the m x m whitening and one eigendecomposition per fold
            # elementwise: the kernel from its distances, the weights, the scoring pass's
            # kernel of the held-out rows
            return {"gemm": n * m * (gemm_d + m + 2 * t * n_penalties),
                    "exp": n * m * (4 + exp_d), "eigh": (n_folds + 1) * m ** 3}
        itemsize = 4
        plan = falkon_plan("a fit", n=int(n), m=int(m), n_targets=int(t), itemsize=itemsize,
                           budget=memory_budget,
                           block_row_bytes=int(itemsize * m + 8 * d))
        steps = FALKON_CG_STEPS
        if plan.choice == "kept":  # K(X, C) once, then two products a step
            return {"gemm": n * m * (gemm_d + 2 * steps * t), "exp": n * m * (1 + exp_d),
                    "eigh": m ** 3 / 3}
        # recomputed at every step: K(X, C) built and applied twice
        return {"gemm": steps * n * m * (2 * gemm_d + 2 * t),
                "exp": steps * n * m * (1 + 2 * exp_d), "eigh": m ** 3 / 3}

    @staticmethod
    def _n_targets(task, data):
        if task == "classifier":
            return len(data.classes) if len(data.classes) > 2 else 1
        return 1 if data.y.ndim == 1 else data.y.shape[1]

    def check_memory(self, task, data, folds, space, settings):
        X = data.X
        m = min(space.n_components, X.shape[0])
        return falkon_grid_memory(X, m, len(folds), self._n_targets(task, data),
                                  len(space.alphas), settings.memory_budget, space.kernel)[0]

    def run(self, task, data, folds, space, settings, deadline, on_unit, keep_oof=False):
        s, X = settings, data.X
        self.check_memory(task, data, folds, space, settings)
        if task == "classifier":
            classes = data.classes
            Y = plus_minus_targets(data.y_index, len(classes))
            # one column (sign) for two classes, as the classifier predicts
            scorers = self._scorers(data, folds, s, lambda values: combine_scores(
                values, len(classes), "ovr"), keep_oof)
        else:
            y = np.asarray(data.y, dtype=np.float64)
            Y = y[:, None] if y.ndim == 1 else y
            scorers = [_scorer(s.scoring, y[val], keep=decision_columns if keep_oof else None,
                               target=s.target) for _, val in folds]
        weights = []
        for train, _ in folds:
            w = np.zeros(X.shape[0])
            w[train] = base_weights(s.class_weight, data.classes, data.y_index[train],
                                    data.sample_weight[train])[0] \
                if task == "classifier" else data.sample_weight[train]
            weights.append(w)

        def record(records):
            records = [{**r, "alpha": r["alpha"] / scale} for r in records]
            return _records(self.name, records,
                            ("scores", "fit_times", "score_times", "oof"),
                            kernel=lambda r: space.kernel,
                            alpha="alpha", n_components="n_components",
                            dtype=lambda r: refit_dtype(r["alpha"], s.dtype,
                                                        s.weight_total))
        # the space's penalties are every row's: on a subsample, scaled to its rows (the
        # records carry every row's, as every point does)
        scale = penalty_on_rows(float(data.sample_weight.sum()), s.weight_total)
        alphas = np.asarray(space.alphas, dtype=np.float64) * scale
        records, complete = falkon_grid(
            X, Y, weights, folds, gamma_ref=space.gamma_ref,
            factors=list(space.factors), alphas=alphas,
            n_components=min(space.n_components, X.shape[0]),
            random_state=s.random_state, score=lambda f, values: scorers[f](values),
            memory_budget=s.memory_budget, deadline=deadline,
            on_unit=lambda records: on_unit(record(records)),
            intercept=task == "regressor", kernel=space.kernel)
        return record(records), complete

    def model(self, params, settings, task):
        s = settings
        if task == "regressor":
            # far from every centre its predictions are the targets' mean, not 0
            return NystromKernelRidge(n_components=params["n_components"],
                                      kernel=params.get("kernel", "rbf"),
                                      gamma=params["gamma"], alpha=params["alpha"],
                                      fit_intercept=True,
                                      dtype=params["dtype"], memory_budget=s.memory_budget,
                                      random_state=s.random_state)
        return NystromKernelRidgeClassifier(
            n_components=params["n_components"], kernel=params.get("kernel", "rbf"),
            gamma=params["gamma"], alpha=params["alpha"],
            dtype=params["dtype"], class_weight=s.class_weight,
            memory_budget=s.memory_budget, probability=s.probability,
            random_state=s.random_state)


def penalty_on_rows(rows, reference_rows):
    """The factor of a FALKON penalty chosen for ``reference_rows`` on ``rows`` rows.

    The penalty is a sum over rows (``alpha = lam * W``); the best ``lam`` falls as
    the rows grow, about as ``1 / sqrt(n)`` (Rudi et al. 2017's rate, and measured on
    ``make_nonlinear_problem`` with 1,000 centres: the best ``lam`` 1e-4 on 4,000 rows,
    1e-5 on 32,000 and 256,000). Holding ``lam`` (a penalty per row) carried a
    2,000-row screen's penalty to a 256,000-row refit 100 times too strong (accuracy
    0.780 against 0.852); holding ``alpha`` errs the other way on small subsamples.

    Examples
    --------
    >>> from kernelscale.model_selection._families import penalty_on_rows
    >>> penalty_on_rows(2500, 10000)
    0.5
    """
    if rows <= 0 or reference_rows <= 0:
        return 1.0
    return float(np.sqrt(rows / reference_rows))


class _FeatureSVM(Family):
    """A linear SVM on a feature map whose expensive part the grid computes once."""

    cli_model = "approx-svc"
    grid = memory = None
    what = None
    centred = True

    def operations(self, kind, rows, *, n_features, n_components, n_penalties, n_folds,
                   n_outputs, memory_budget, kernel="rbf"):
        n, d, t = float(rows), float(n_features), float(n_outputs)
        m = float(min(n_components, rows)) if self.capped else float(n_components)
        # the map (distances or projections, then the features), then Newton's steps:
        # Hessians Z^T D Z per class, a few per penalty
        newton = 5 * t * n * m * m
        if kind == "grid":
            return {"gemm": n * m * d + n * m * m + n_folds * n_penalties * newton,
                    "exp": n * m, "eigh": m ** 3}
        return {"gemm": n * m * d + n * m * m + newton, "exp": n * m, "eigh": m ** 3}

    def _m(self, space, n):
        return min(space.n_components, n) if self.capped else space.n_components

    def _shared(self, space, n):
        """Its components on ``n`` rows and the bytes of the arrays its grid shares."""
        m = self._m(space, n)
        return m, type(self).memory(n, m)

    def check_memory(self, task, data, folds, space, settings):
        n = data.X.shape[0]
        m, need = self._shared(space, n)
        if need > settings.memory_budget:
            fits = 1  # the most components whose arrays fit (the need grows with m)
            while fits < m and type(self).memory(n, fits + 1) <= settings.memory_budget:
                fits += 1
            raise ValueError(
                f"The {self.name} family's shared arrays for {n} rows x {m} {self.what} need "
                f"{format_bytes(need)}, over memory_budget "
                f"({format_bytes(settings.memory_budget)}): give memory_budget >= "
                f"{format_bytes(need)} or n_components <= {fits}.")
        return None

    def run(self, task, data, folds, space, settings, deadline, on_unit, keep_oof=False):
        s, classes = settings, data.classes
        self.check_memory(task, data, folds, space, settings)
        m, need = self._shared(space, data.X.shape[0])
        # one-vs-rest scores, the rule of ApproxKernelSVC's predict
        scorers = self._scorers(data, folds, s, lambda values: combine_scores(
            values, len(classes), "ovr"), keep_oof)

        def record(records):
            return _records(self.name, records, ("scores", "fit_times", "score_times", "oof"),
                            C="C", n_components="n_components")
        records, complete = type(self).grid(
            data.X, data.y_index, classes, data.sample_weight, folds,
            gamma_ref=space.gamma_ref, factors=list(space.factors), Cs=space.Cs,
            n_components=m, class_weight=s.class_weight, random_state=s.random_state,
            score=lambda f, values: scorers[f](values),
            # the solver's row blocks get what the shared arrays leave
            memory_budget=max(s.memory_budget - need, 2**20),
            n_jobs=s.n_jobs, deadline=deadline,
            on_unit=lambda records: on_unit(record(records)))
        return record(records), complete

    @abstractmethod
    def _map(self, params, settings):
        """The unfitted feature map of a configuration ``params``."""

    def model(self, params, settings, task):
        s = settings
        return ApproxKernelSVC(feature_map=self._map(params, s), C=params["C"],
                               class_weight=s.class_weight,
                               solver=nystrom_svm_solver(params["n_components"]),
                               probability=s.probability,
                               memory_budget=s.memory_budget,
                               random_state=s.random_state)


class NystromSVM(_FeatureSVM):
    name = "nystrom-svm"
    descriptions = {"classifier": "ApproxKernelSVC on a Nystroem map (squared-hinge SVM on "
                                  "landmark features), landmark distances shared by every "
                                  "gamma, each fold's solutions warm-started along C"}
    grid, memory = staticmethod(nystrom_svm_grid), staticmethod(nystrom_svm_bytes)
    what = "landmarks"

    def _map(self, params, settings):
        # the landmarks the search drew: the same draw from the same rows and seed
        return Nystroem(n_components=params["n_components"], gamma=params["gamma"],
                        decomposition="eigh", rcond=NYSTROM_RCOND,
                        random_state=settings.random_state)


class RFFSVM(_FeatureSVM):
    name = "rff-svm"
    descriptions = {"classifier": "ApproxKernelSVC on random Fourier features (squared-hinge "
                                  "SVM), the projections X W0 of one standard-normal draw "
                                  "shared by every gamma, each fold's solutions "
                                  "warm-started along C"}
    grid, memory = staticmethod(rff_svm_grid), staticmethod(rff_svm_bytes)
    what = "random Fourier features"
    capped = False

    def _map(self, params, settings):
        # the draw the search made: the same frequencies and phases from the same seed
        return RandomFourierFeatures(n_components=params["n_components"],
                                     gamma=params["gamma"],
                                     random_state=settings.random_state)


#: every family by name
FAMILIES = {f.name: f for f in (ExactSVM(), Falkon(), NystromSVM(), RFFSVM())}
EXACT_SVM, FALKON = FAMILIES["exact-svm"], FAMILIES["falkon"]
NYSTROM_SVM, RFF_SVM = FAMILIES["nystrom-svm"], FAMILIES["rff-svm"]
#: name -> what it fits (the estimator ``best_estimator_`` will be), per task
CLASSIFIER_FAMILIES = {name: f.descriptions["classifier"] for name, f in FAMILIES.items()
                       if "classifier" in f.descriptions}
REGRESSOR_FAMILIES = {name: f.descriptions["regressor"] for name, f in FAMILIES.items()
                      if "regressor" in f.descriptions}


def check_families(families, task):
    """The family names to search (not "auto"), or one clear error."""
    known = CLASSIFIER_FAMILIES if task == "classifier" else REGRESSOR_FAMILIES
    if isinstance(families, str):
        families = [families]
    families = list(families)
    if not families:
        raise ValueError("families is empty: give at least one of "
                         f"{', '.join(known)}, or 'auto'.")
    unknown = [f for f in families if f not in known]
    if unknown:
        raise ValueError(f"Unknown families {unknown} for a {task}; choose from "
                         f"{', '.join(known)} or 'auto'.")
    return list(dict.fromkeys(families))


def classifier_model(params, settings):
    """The (unfitted) classifier of a configuration ``params`` (its ``class_weight``,
    where the search chose one, over the settings')."""
    if "class_weight" in params:
        settings = dataclasses.replace(settings, class_weight=params["class_weight"])
    return FAMILIES[params["family"]].model(params, settings, "classifier")
