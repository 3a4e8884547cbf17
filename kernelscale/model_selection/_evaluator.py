"""The search's one evaluator: every configuration is fitted and scored here.

Whatever the searcher asks (its first grid on a thousand rows, a gamma past the
grid's edge, more centres, local models), the answer comes from one of three
methods of :class:`Evaluator`, each returning :class:`._records.Record`\\ s with
every fold's score, the fit and score seconds and the out-of-fold predictions:

- :meth:`Evaluator.grid`, the batch form: a family's shared-work grid over some
  gammas on some rows (one kernel per gamma serves every ``C`` or ``alpha`` and
  every fold; :mod:`._families`);
- :meth:`Evaluator.fit_folds`, the plain form (scikit-learn's ``_fit_and_score``): the
  configuration's estimator fitted on each fold's training rows and scored on its
  held-out rows, for what no grid shares (local models);
- :meth:`Evaluator.fit`: a configuration fitted as a model, on a subsample or on
  every row (the best so far held, the refit, an ensemble's members, which
  :meth:`Evaluator.ensemble` puts together).

The rows a configuration is scored on are its *fidelity*: a nested subsample (the
first ``r`` of one stratified shuffle of the rows, so that a larger subsample holds
every smaller one) with its own stratified folds, or every row with the search's
folds. Its columns are its line's: as given, or in a learned metric's coordinates
(:meth:`Evaluator.learn`). What each piece of work took is fed to the search's
cost model.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from .._clock import TimeUp
from .._config import config_context
from .._planner import held_plan, nbytes
from ..models import LocalKernelRegressor, WeightedEnsembleClassifier, WeightedEnsembleRegressor
from ..models.metric import KernelMetric, KernelWidths, MetricTimeError, WidthsTimeError
from ._families import FAMILIES, classifier_model, decision_columns, penalty_on_rows
from ._inputs import SearchSpace
from ._pricing import Pricing
from ._records import Record
from ._schedule import Stopwatch
from ._space import (
    laplacian_gamma_ref,
    make_folds,
    refit_dtype,
    score_values,
    target_forward,
    target_model,
)

__all__ = ["Evaluator", "rung_sizes"]


def rung_sizes(n, least, eta):
    """The rows of the search's fidelities, smallest first: every row, a third of them,
    a ninth, ... down to ``least`` (Hyperband's ladder, anchored at every row).

    Examples
    --------
    >>> rung_sizes(100_000, 1_000, 3)
    [1235, 3704, 11112, 33334, 100000]
    >>> rung_sizes(800, 1_000, 3)
    [800]
    """
    sizes = [int(n)]
    while sizes[-1] / eta >= least:
        sizes.append(int(np.ceil(sizes[-1] / eta)))
    return sizes[::-1]


class Evaluator(Pricing):
    """Fits and scores the search's configurations on its rows, folds and columns, and
    prices them (:class:`._pricing.Pricing`).

    Parameters
    ----------
    task : {"classifier", "regressor"}
    data : SearchData
        Every row, in the columns the search was given (numbers).
    folds : list of (train, validation)
        The folds on every row.
    space : SearchSpace
        The reference scale (``gamma_ref``: "scale" on the given columns), the
        default centres and penalties.
    settings : SearchSettings
    cost : kernelscale.model_selection._cost.CostModel
    random_state : int
        The nested subsample's shuffle and its folds.
    keep_oof : bool, default=True
        Keep the out-of-fold predictions (what an ensemble is selected on), within a
        tenth of the memory budget, which the work then does without.
    shuffle : bool, default=True
        False: a subsample's folds are contiguous blocks of its rows, as the search's.
    """

    def __init__(self, task, data, folds, space, settings, cost, random_state,
                 keep_oof=True, shuffle=True):
        self.task, self.data, self.folds = task, data, folds
        self.space, self.settings, self.cost = space, settings, cost
        self.seed = int(random_state)
        self.classifier = task == "classifier"
        self.shuffle = bool(shuffle)
        self.n = data.n
        self.columns = {"none": data.X}
        self.learned = {}
        self._refs = {}
        self._rungs = {}
        self.held_bytes = 0  # the learned metrics' copies of the columns
        #: the out-of-fold predictions the search keeps for its ensemble: a tenth of the
        #: budget (:class:`._records.Records` drops the worst beyond it), none without one
        self.keep_oof = bool(keep_oof)
        self.oof_bytes = settings.memory_budget // 10 if keep_oof else 0
        self.learn_seconds = {}
        labels = data.y_index if self.classifier else None
        rng = np.random.RandomState(self.seed)
        if labels is None:
            self.order = rng.permutation(self.n)
        else:
            # stratified: each class spread evenly along the order, so every prefix holds
            # the classes in their shares
            ranks = np.empty(self.n)
            for value in np.unique(labels):
                members = np.flatnonzero(labels == value)
                ranks[rng.permutation(members)] = (np.arange(members.size) + rng.uniform()) \
                    / members.size
            self.order = np.argsort(ranks, kind="stable")

    # ------------------------------------------------------------------ rows and columns

    @property
    def n_splits(self):
        return len(self.folds)

    def rung(self, rows):
        """``(index, folds)`` of the nested subsample of ``rows`` rows (every row: the
        search's own folds); the folds index into the subsample."""
        if rows >= self.n:
            return np.arange(self.n), self.folds
        if rows not in self._rungs:
            index = np.sort(self.order[:rows])
            labels = self.data.y_index[index] if self.classifier else None
            folds = make_folds(self.n_splits, index[:, None], labels, labels,
                               self.data.classes, self.seed, shuffle=self.shuffle)
            self._rungs[rows] = (index, folds)
        return self._rungs[rows]

    def weight(self, rows):
        """The sample weight the first ``rows`` rows of the nested subsample carry."""
        index, _ = self.rung(rows)
        return float(self.data.sample_weight[index].sum())

    def gamma_ref(self, line):
        """The reference gamma of a line's kernel on its columns (its factors scale it)."""
        key = (line.metric, line.kernel)
        if key not in self._refs:
            if line.kernel == "laplacian":
                self._refs[key] = laplacian_gamma_ref(self.columns[line.metric], self.seed)
            else:
                # the learned metrics' coordinates hold the learned kernel at gamma 1
                self._refs[key] = self.space.gamma_ref if line.metric == "none" else 1.0
        return self._refs[key]

    def data_for(self, line, rows):
        """The line's columns on the nested subsample of ``rows`` rows (with its folds)."""
        index, folds = self.rung(rows)
        data = dataclasses.replace(self.data, X=self.columns[line.metric], raw_X=None)
        if rows < self.n:
            data = data.take(index)
        if line.target != "identity":
            data = dataclasses.replace(data, y=target_forward(line.target, data.y))
        return data, folds

    def memory_left(self, rows=None, copied=None):
        """The memory budget less what the search holds beside the work: the learned
        metrics' copies of the columns, the out-of-fold predictions kept
        (:attr:`oof_bytes`) and, for work on a subsample of ``rows`` rows, its copy
        (``copied``: the rows the work copies, where not those)."""
        copied = (rows if rows is not None and rows < self.n else 0) if copied is None \
            else copied
        copy = int(nbytes(self.data.X) * copied / self.n) + 24 * copied
        return self.settings.memory_budget - self.held_bytes - self.oof_bytes - copy

    def settings_for(self, line, probability=False, rows=None, copied=None):
        """The search's settings as the line's models see them on ``rows`` rows (their
        budget: :meth:`memory_left`)."""
        changes = {"memory_budget": self.memory_left(rows, copied)}
        if line.draw:  # another draw of the random centres (and the grid's, the same)
            changes["random_state"] = (self.settings.random_state + line.draw) % 2 ** 32
        if line.balanced:
            changes["class_weight"] = "balanced"
        if line.target != "identity":
            changes["target"] = line.target
        if not probability:
            changes["probability"] = False
        return dataclasses.replace(self.settings, **changes)

    def centres(self, line, rows):
        """The centres (landmarks) a line's grid on ``rows`` rows uses unless told: the
        search's, at most ``sqrt(n) ln n`` of a fold's ``n`` training rows (the rate of
        FALKON's theory, Rudi et al. 2017). On a small subsample more centres cost
        m x m eigendecompositions that outweigh the pass over its rows, and fit its
        noise."""
        family = FAMILIES[line.family]
        if not family.capped:
            return int(self.space.n_components)
        train = max(2, rows * (self.n_splits - 1) // self.n_splits)
        rate = int(np.ceil(np.sqrt(train) * np.log(train)))
        return int(max(1, min(self.space.n_components, train, rate)))

    def penalties(self, line):
        """The line's default penalties (``C`` or every row's ``alpha``)."""
        family = FAMILIES[line.family]
        values = self.space.alphas if family.penalty == "alpha" else self.space.Cs
        return list(np.asarray(values, dtype=np.float64))

    # ------------------------------------------------------------------ the batch form

    def grid(self, line, rows, factors, *, penalties=None, n_components=None, deadline=None,
             on_records=None):
        """``line``'s grid over the gamma ``factors`` (in that order) and ``penalties``
        on the nested subsample of ``rows`` rows: a record per configuration scored on
        every fold, and whether every gamma was (not: the deadline stopped the grid, or a
        gamma failed). ``on_records(new)`` receives each gamma's records as it ends, so
        that what a stop or a failure leaves unscored is all that is lost."""
        family = FAMILIES[line.family]
        data, folds = self.data_for(line, rows)
        penalties = self.penalties(line) if penalties is None else list(penalties)
        m = int(n_components or self.centres(line, rows))
        space = SearchSpace(list(factors), self.gamma_ref(line), m, kernel=line.kernel,
                            **{"alphas" if family.penalty == "alpha" else "Cs":
                               np.asarray(penalties, dtype=np.float64)})
        settings = self.settings_for(line, rows=rows)
        watch = Stopwatch()
        delivered = {}

        def unit_done(raw_records):
            ops = self.operations(line, "grid", rows, m, len(penalties))
            self.cost.observe(self.kind(line, "grid"), ops, watch.lap())
            new = []
            for raw in raw_records:
                key = tuple(sorted((k, v) for k, v in raw["params"].items()
                                   if isinstance(v, (int, float, str))))
                if key not in delivered:
                    delivered[key] = self._record(line, rows, raw, folds)
                    new.append(delivered[key])
            if new and on_records is not None:
                on_records(new)

        _, complete = family.run(self.task, data, folds, space, settings, deadline, unit_done,
                                 keep_oof=self.keep_oof)
        return list(delivered.values()), complete

    def _record(self, line, rows, raw, folds):
        params = dict(raw["params"])
        factor = params["gamma"] / self.gamma_ref(line)
        penalty = params.get("C", params.get("alpha"))
        params.update(line.params())
        oof = None
        if raw.get("oof") and all(part is not None for part in raw["oof"]):
            first = np.asarray(raw["oof"][0])
            oof = np.empty((rows, first.shape[1]), dtype=np.float32)
            for (_, val), part in zip(folds, raw["oof"]):
                oof[val] = part
        return Record(line, int(rows), float(factor), float(penalty),
                      params.get("n_components"), params,
                      np.asarray(raw["scores"], dtype=np.float64),
                      np.asarray(raw["fit_times"], dtype=np.float64),
                      np.asarray(raw["score_times"], dtype=np.float64), oof)

    # ------------------------------------------------------------------ the plain form

    def params(self, line, factor, penalty, n_components):
        """``cv_results_``'s ``params`` of a configuration (in the line's columns)."""
        family = FAMILIES[line.family]
        params = {"family": line.family}
        if family.penalty == "alpha":
            params["kernel"] = line.kernel
        params["gamma"] = float(factor * self.gamma_ref(line))
        if family.penalty == "alpha":
            params["alpha"] = float(penalty)
            params["dtype"] = refit_dtype(penalty, self.settings.dtype,
                                          self.settings.weight_total)
        else:
            params["C"] = float(penalty)
        if family.centred:
            params["n_components"] = int(n_components or self.space.n_components)
        params.update(line.params())
        return params

    def fit_folds(self, line, rows, configs, *, deadline=None, on_records=None):
        """Each ``(factor, penalty, n_components)`` of ``configs`` fitted on every fold's
        training rows of the nested subsample of ``rows`` rows and scored on its held-out
        rows (``on_records([record])`` as each ends); a configuration that fails drops out
        with a warning."""
        index, folds = self.rung(rows)
        if rows >= self.n:  # every row: no copy
            X, y, weights = self.data.X, self.data.y, self.data.sample_weight
        else:
            X, y = self.data.X[index], self.data.y[index]
            weights = self.data.sample_weight[index]
        classes = self.data.classes
        records = []
        for factor, penalty, n_components in configs:
            if deadline is not None and deadline.passed() and records:
                break
            params = self.params(line, factor, penalty, n_components)
            scores, fits, scored, parts = [], [], [], []
            try:
                for train, val in folds:
                    # the fold's training and held-out rows are copies: a rung's rows
                    model, _ = self.model(line, params, train.size, rows, copied=rows)
                    watch = Stopwatch()
                    with config_context(show_progress=False):
                        model.fit(X[train], y[train], sample_weight=weights[train])
                    fits.append(watch.lap())
                    self.cost.observe(self.kind(line, "fit"), self.operations(
                        line, "fit", train.size, n_components), fits[-1])
                    values = decision_columns(
                        model.decision_function(X[val]) if self.classifier
                        else model.predict(X[val]))
                    scores.append(score_values(self.settings.scoring, y[val], values,
                                               classes if self.classifier else None))
                    scored.append(watch.lap())
                    parts.append(values)
            except Exception as error:  # noqa: BLE001 (one configuration drops out)
                warnings.warn(f"{line.describe()}, gamma x {factor:.4g}: a fold's fit failed "
                              f"({type(error).__name__}: {error}); the configuration is "
                              "dropped and the search goes on.", UserWarning, stacklevel=2)
                continue
            oof = np.empty((rows, parts[0].shape[1]), dtype=np.float32)
            for (_, val), part in zip(folds, parts):
                oof[val] = part
            records.append(Record(line, int(rows), float(factor), float(penalty),
                                  params.get("n_components"), params, np.asarray(scores),
                                  np.asarray(fits), np.asarray(scored), oof))
            if on_records is not None:
                on_records(records[-1:])
        return records

    def oof_scores(self, rows, oof):
        """Each fold's score, on the nested subsample of ``rows`` rows, of out-of-fold
        decision columns ``oof`` (a record's ``scores``, of predictions made elsewhere)."""
        index, folds = self.rung(rows)
        y = self.data.y[index]
        classes = self.data.classes if self.classifier else None
        return np.array([score_values(self.settings.scoring, y[val], oof[val], classes)
                         for _, val in folds])

    # ------------------------------------------------------------------ models

    def raw_params(self, line, params):
        """A configuration's parameters on the given columns (``best_params_``): with a
        learned metric, ``gamma`` is per feature (widths) or a :class:`Metric`."""
        raw = dict(params)
        laplacian = line.kernel == "laplacian"
        if line.metric == "agop":  # on the rows x L an RBF's gamma scales M = L L^T
            raw["gamma"] = self.learned["agop"].metric_.scaled(
                params["gamma"] ** 2 if laplacian else params["gamma"])
        elif line.metric == "diagonal":
            # the columns were scaled by sqrt(widths): an RBF's squared distances carry
            # the widths, a Laplacian's absolute differences their square roots
            widths = self.learned["diagonal"].gamma_
            raw["gamma"] = params["gamma"] * (np.sqrt(widths) if laplacian else widths)
        return raw

    def model(self, line, params, train_rows, scored_rows=None, *, probability=False,
              copied=None):
        """The unfitted estimator of a configuration for a fit on ``train_rows`` rows of
        the given columns, and its ``best_params_``.

        FALKON's penalty is every row's (the grid's); on the subsample of ``scored_rows``
        rows its folds were scored with it times :func:`penalty_on_rows`, and a fit on
        that subsample or any of its folds takes the same (a refit on every row keeps
        it, as a refit after ``GridSearchCV`` does).
        """
        family = FAMILIES[line.family]
        raw = self.raw_params(line, params)
        scored_rows = self.n if scored_rows is None else scored_rows
        if family.penalty == "alpha" and scored_rows < self.n:
            raw["alpha"] = raw["alpha"] * penalty_on_rows(self.weight(scored_rows),
                                                          self.settings.weight_total)
        if "n_components" in raw and family.capped:
            raw["n_components"] = int(min(raw["n_components"], train_rows))
        settings = self.settings_for(line, probability, rows=train_rows, copied=copied)
        model_params = {k: v for k, v in raw.items()
                        if k not in ("metric", "n_leaves", "draw", "target")}
        if self.classifier:
            estimator = classifier_model(model_params, settings)
        else:
            estimator = family.model(model_params, settings, self.task)
        if line.n_leaves > 1:
            estimator = LocalKernelRegressor(estimator, n_leaves=line.n_leaves)
        return target_model(line.target, estimator), raw

    def fit(self, record, rows, *, probability=False):
        """``record``'s configuration fitted on the nested subsample of ``rows`` rows (every
        row: ``rows >= n``); the fitted model, its ``best_params_`` and its seconds."""
        index, _ = self.rung(rows)
        model, raw = self.model(record.line, record.params, index.size, record.rows,
                                probability=probability)
        watch = Stopwatch()
        data = self.data
        with config_context(show_progress=False):
            if index.size >= self.n:
                model.fit(data.X, data.y, sample_weight=data.sample_weight)
            else:
                model.fit(data.X[index], data.y[index], sample_weight=data.sample_weight[index])
        seconds = watch()
        if not probability:  # a calibrated fit is six fits: not the cost of one
            self.cost.observe(self.kind(record.line, "fit"), self.operations(
                record.line, "fit", index.size, record.n_components), seconds)
        return model, raw, seconds

    def ensemble(self, models, weights, calibrations):
        """The fitted ``models`` as one weighted ensemble (their fits are this evaluator's:
        :meth:`fit`); a classifier's members through their ``calibrations``."""
        if self.classifier:
            ensemble = WeightedEnsembleClassifier(models, weights=weights,
                                                  calibrations=calibrations, prefit=True)
        else:
            ensemble = WeightedEnsembleRegressor(models, weights=weights, prefit=True)
        return ensemble.fit(self.data.X[:1], self.data.y[:1])  # prefit: checks only

    # ------------------------------------------------------------------ learned metrics

    def learn(self, metric, seconds=None, verbose=0):
        """Learn ``metric`` ("diagonal": :class:`KernelWidths`; "agop":
        :class:`KernelMetric` from the widths where learned) within ``seconds``: its
        columns join the search's (True), or None where it could not be learned in
        the time, or did not improve on where it started (False)."""
        X = self.data.X
        y = self.data.y if self.classifier or self.data.y.ndim == 1 else self.data.y[:, 0]
        task = "classification" if self.classifier else "regression"
        budget = self.memory_left()
        common = dict(task=task, time_budget=seconds, memory_budget=budget,
                      random_state=self.seed, verbose=max(0, verbose - 1))
        watch = Stopwatch()
        try:
            if metric == "diagonal":
                learner = KernelWidths(**common).fit(X, y)
            else:
                widths = self.learned.get("diagonal")
                learner = KernelMetric(init=None if widths is None else widths.gamma_,
                                       **common).fit(X, y)
                if learner.best_round_ == 0:
                    return False
        except (WidthsTimeError, MetricTimeError, TimeUp):
            return None
        self.learn_seconds[metric] = watch()
        columns = learner.transform(X)
        held_plan(f"the columns in the learned {metric} metric's coordinates", budget,
                  {"columns": nbytes(columns)}, " (or learn_widths=False)")
        self.columns[metric] = columns
        self.learned[metric] = learner
        self.held_bytes += nbytes(columns)
        return True
