"""The state one search's stages read and write, and the rule by which a model is kept.

An anytime search holds one best-so-far model (a :class:`Candidate`) from its
first seconds. A later candidate replaces it only if it scored better on the
same yardstick (:meth:`SearchState.consider`):

- where both are configurations cross-validated on every row (the grid's
  points; a first model whose configuration the grid then scored carries the
  grid's score), by their mean cross-validated score, the rule of
  ``GridSearchCV``;
- otherwise by their score on the first fold's held-out rows, which every
  candidate is measured on (a model fitted on a subsample of that fold's
  training rows is scored there; a configuration refitted on every row carries
  the score its fold-0 fit had there).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.metrics import get_scorer

from .._clock import now
from .._config import config_context
from ._families import FALKON
from ._inputs import SearchData, SearchSettings, SearchSpace
from ._schedule import CostCurve

__all__ = ["Candidate", "SearchState", "same_point"]


@dataclasses.dataclass
class Candidate:
    """A fitted model the search may return, and the evidence for it.

    Attributes
    ----------
    model : estimator
        Fitted (on the raw columns).
    params : dict
        Its ``best_params_`` (on the raw columns: with learned widths, ``gamma``
        per feature).
    point : dict or None
        The grid configuration it is (``cv_results_``'s ``params``, in the
        searched columns), None for none.
    score : float
        Its score on the first fold's held-out rows.
    cv_score : float or None
        The mean cross-validated score of ``point`` on every row, where scored.
    rows : int
        Rows it was fitted on.
    how : str
        What made it: "first model", "screen's winner" (the halving's best, secured),
        "refit", "refit on a subsample", "challenger", ...
    calibration : (A, B) or None
        Sigmoids of its decision values fitted on the grid's out-of-fold scores (a
        FALKON classifier's ``predict_proba`` without more fits).
    fold_rows : int or None
        The first fold's training rows behind ``score`` where fewer than all of them
        (a refit on a subsample), None where all.
    """

    model: object
    params: dict
    point: dict | None
    score: float
    cv_score: float | None
    rows: int
    how: str
    calibration: tuple | None = None
    fold_rows: int | None = None


def same_point(a, b):
    """Whether two configurations (``params`` dicts) are the same grid point."""
    if a is None or b is None or a.get("family") != b.get("family"):
        return False
    for key in set(a) | set(b):
        x, y = a.get(key), b.get(key)
        if isinstance(x, (float, np.floating)) and isinstance(y, (float, np.floating)):
            if not np.isclose(x, y, rtol=1e-9, atol=0.0):
                return False
        elif x != y:
            return False
    return True


@dataclasses.dataclass
class SearchState:
    """Everything the stages of one fit share.

    ``data``, ``space`` and ``settings`` are what the families' grids read
    (:mod:`kernelscale.model_selection._inputs`); ``records`` the
    configurations cross-validated on every row, ``screened`` those of the
    largest subsample where none was (the grid shrunk to fit the time); ``choices``
    what each stage did to the choice of family, in order (``family_choice_``).
    """

    task: str
    data: SearchData
    folds: list
    space: SearchSpace
    settings: SearchSettings
    scoring: str
    families: list = dataclasses.field(default_factory=list)
    choices: list = dataclasses.field(default_factory=list)
    records: list = dataclasses.field(default_factory=list)
    screened: list = dataclasses.field(default_factory=list)
    screened_rows: int = 0
    best: Candidate | None = None
    n_scored: int = 0
    complete: bool = True
    fit_curve: CostCurve | None = None
    fit_family: str | None = None
    fit_point: dict | None = None
    # a configuration and its refit's seconds on every row, grown from its own measured
    # fit (the first model's fits may be of a cheaper penalty, kernel or dtype)
    measured_refit: tuple | None = None
    unit_family: str | None = None
    # the family screen's best per family (None where it did not run)
    screen: dict | None = None
    unit_curve: CostCurve | None = None
    # the local models kept (n_leaves, feature, gamma_factor, ...), None for none
    leaves: dict | None = None
    # the rows of the first fold, the yardstick every candidate is scored on
    train0: np.ndarray | None = None
    valid0: np.ndarray | None = None

    def __post_init__(self):
        self.train0, self.valid0 = self.folds[0]

    @property
    def n(self):
        return self.data.n

    def score_on_first_fold(self, model):
        """``model``'s score on the first fold's held-out rows (the search's scoring)."""
        valid = self.valid0
        return float(get_scorer(self.scoring)(model, self.data.columns[valid], self.data.y[valid]))

    def fit_on(self, model, rows):
        """Fit ``model`` on ``rows`` of the raw columns; the seconds it took."""
        began = now()
        weights = self.data.sample_weight[rows]
        # fits on subsamples are short and many: no progress bar of their own
        with config_context(show_progress=False):
            model.fit(self.data.columns[rows], self.data.y[rows], sample_weight=weights)
        return now() - began

    def credit(self, candidate):
        """The grid's mean score for ``candidate.point``, where the grid scored it."""
        for record in self.records:
            if same_point(candidate.point, record["params"]):
                candidate.cv_score = float(np.mean(record["scores"]))
        return candidate

    def better(self, new, old):
        """Whether ``new`` scored better than ``old`` (ties: the newer) on a common yardstick."""
        if old is None:
            return True
        if new.cv_score is not None and old.cv_score is not None:
            return bool(new.cv_score >= old.cv_score)
        if not np.isfinite(new.score):
            return False
        return bool(not np.isfinite(old.score) or new.score >= old.score)

    def falkon_refitted(self):
        """Whether the held model is a FALKON configuration fitted on every row (by the
        refit, whichever way it got there) whose first-fold score is of a fit on all the
        fold's training rows: what local models and more centres are scored against."""
        best = self.best
        return (best is not None and best.point is not None
                and best.point.get("family") == FALKON.name and best.rows >= self.n
                and best.how.startswith("refit")
                and (best.fold_rows is None or best.fold_rows >= self.train0.size))

    def consider(self, candidate):
        """Keep ``candidate`` as the best-so-far if it scored better; whether it did."""
        if self.best is not None:
            self.credit(self.best)
        self.credit(candidate)
        if self.better(candidate, self.best):
            self.best = candidate
            return True
        return False
