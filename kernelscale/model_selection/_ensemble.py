"""Ensemble selection over the search's out-of-fold predictions (Caruana et al. 2004).

The evaluator keeps every scored configuration's out-of-fold predictions (the
best of them, within the memory budget). On the rows the best configuration was
scored on, greedy forward selection with replacement starts from the best single
model and adds, one at a time, the configuration whose addition makes the
averaged prediction score best (a classifier's calibrated probabilities, a
regressor's values), until no addition scores higher. The weights are the counts.
The ensemble is kept only where its out-of-fold score beats the best single
model's by more than the noise of their fold-by-fold difference: the selection
looked at these same rows, so a smaller gain is not evidence.

References
----------
.. [1] R. Caruana, A. Niculescu-Mizil, G. Crew, A. Ksikes, "Ensemble selection from
   libraries of models", ICML 2004.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..models.ridge import calibrated_proba, fold_calibration
from ._space import score_values

__all__ = ["Selection", "select_ensemble", "select_affordable"]


@dataclasses.dataclass
class Selection:
    """An ensemble chosen on out-of-fold predictions.

    Attributes
    ----------
    members : list of Record
    weights : list of int
        Each member's count in the selection.
    calibrations : list of (A, B) or None
        A classifier's sigmoids of each member's decision columns (None: a regressor).
    scores : ndarray of shape (n_folds,)
        The ensemble's out-of-fold score on each fold.
    gain, se : float
        Its mean fold-by-fold gain over the best single member, and that gain's
        standard error.
    """

    members: list
    weights: list
    calibrations: list | None
    scores: np.ndarray
    gain: float
    se: float

    @property
    def kept(self):
        """Whether it beat the best single model by more than the noise."""
        return len(self.members) > 1 and self.gain > self.se


def _fold_scores(prediction, y, folds, scoring, classes):
    return np.array([score_values(scoring, y[val], prediction[val], classes)
                     for _, val in folds])


def select_ensemble(records, y, y_index, classes, folds, scoring):
    """Caruana's greedy selection over ``records`` (their out-of-fold predictions, on the
    same rows and ``folds``); the :class:`Selection`, or None with fewer than two.

    Parameters
    ----------
    records : list of Record
        Scored on the same rows, each with ``oof``.
    y : ndarray of shape (rows,)
        The targets of those rows (a classifier's labels).
    y_index : ndarray of shape (rows,) or None
        A classifier's class index of each row.
    classes : ndarray or None
        A classifier's classes (None: a regression).
    folds : list of (train, validation)
    scoring : str
    """
    pool = [r for r in records if r.oof is not None and np.isfinite(r.mean)]
    if len(pool) < 2:
        return None
    calibrations = None
    if classes is not None:
        calibrations = [fold_calibration(r.oof, y_index, len(classes)) for r in pool]
        predictions = [calibrated_proba(r.oof, *c) for r, c in zip(pool, calibrations)]
    else:
        predictions = [np.asarray(r.oof, dtype=np.float64) for r in pool]

    def score(prediction):
        return score_values(scoring, y, prediction, classes)

    singles = [score(p) for p in predictions]
    first = int(np.argmax(singles))
    counts = np.zeros(len(pool), dtype=int)
    counts[first] = 1
    total = predictions[first].copy()
    current = singles[first]
    while True:
        size = counts.sum()
        trials = [score((total + p) / (size + 1)) for p in predictions]
        pick = int(np.argmax(trials))
        if not trials[pick] > current:
            break
        counts[pick] += 1
        total += predictions[pick]
        current = trials[pick]
    chosen = np.flatnonzero(counts)
    ensemble = total / counts.sum()
    scores = _fold_scores(ensemble, y, folds, scoring, classes)
    single = _fold_scores(predictions[first], y, folds, scoring, classes)
    diff = scores - single
    se = float(np.std(diff, ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else 0.0
    return Selection([pool[i] for i in chosen], [int(counts[i]) for i in chosen],
                     None if calibrations is None else [calibrations[i] for i in chosen],
                     scores, float(diff.mean()), se)


def select_affordable(pool, select, cost, best, affordable):
    """The best ensemble whose members' fits the time left pays for.

    ``select(pool)`` is the selection over ``pool``; while its members other than
    ``best`` (held fitted already) cost ``cost(member)`` seconds in all that
    ``affordable(seconds)`` refuses, the selection runs again without the costliest
    of them.

    Returns
    -------
    selection : Selection or None
        The last selection (None, or not ``kept``: no ensemble).
    seconds : float
        Its members' fits (the first refused selection's where none was affordable).
    left_out : int
        The candidates left out for time.
    refused : str or None
        What the first refused selection needed, in words (None: none was refused).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> def select(pool):  # every candidate of the pool, kept where two or more
    ...     return SimpleNamespace(members=pool, gain=0.1, kept=len(pool) > 1)
    >>> chosen, seconds, left_out, _ = select_affordable(
    ...     ["best", "cheap", "dear"], select, {"cheap": 1.0, "dear": 50.0}.get, "best",
    ...     lambda s: s <= 10)
    >>> chosen.members, seconds, left_out
    (['best', 'cheap'], 1.0, 1)
    """
    refused, first_seconds, left_out = None, 0.0, 0
    while True:
        selection = select(pool)
        if selection is None or not selection.kept:
            return selection, first_seconds, left_out, refused
        others = [m for m in selection.members if m is not best]
        costs = [cost(m) for m in others]
        seconds = float(sum(costs))
        if affordable(seconds):
            return selection, seconds, left_out, refused
        if refused is None:
            refused = (f"{len(selection.members)} members (+{selection.gain:.4f} out of fold) "
                       f"need {seconds:.1f} s of fits, past the time left")
            first_seconds = seconds
        costliest = others[int(np.argmax(costs))]
        pool = [r for r in pool if r is not costliest]
        left_out += 1
