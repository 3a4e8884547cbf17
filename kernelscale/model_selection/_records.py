"""What the search scored: one record per configuration and rows, and the one rule that
picks the best.

Every path of the search (a grid on a subsample or on every row, a local model's
folds, more centres) ends in :class:`Record`\\ s kept by one :class:`Records`.
A record's configuration is a point of the search's space: a :class:`Line`
(what a line of the search holds fixed: family, kernel, metric, class weights,
local models) and its gamma factor, penalty and centres; its fidelity is the
rows it was cross-validated on (a nested subsample, or every row).

The best is picked in one place (:meth:`Records.best`): among the records on the
most rows scored, by the mean cross-validated score (``GridSearchCV``'s rule);
a record on fewer rows by its mean less that mean's standard error over the folds,
and less what the configurations promoted from its rows lost on the most rows, where
they lost (:meth:`Records.debits`).
A configuration scored again on more rows is judged by that score alone.
The folds of a small subsample score noisily, so a lucky configuration on 1,000
rows does not outrank one measured on 100,000 unless it scored clearly higher. A
record's score estimates the model fitted on its rows, so the best on a subsample
is a model the search can return (fitted on those rows), and one fitted on more
rows is expected to do no worse.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["Line", "Record", "Records", "paired_gain"]


@dataclasses.dataclass(frozen=True)
class Line:
    """What one line of the search holds fixed.

    Attributes
    ----------
    family : str
        The family's name (:data:`kernelscale.model_selection._families.FAMILIES`).
    kernel : {"rbf", "laplacian"}
    metric : {"none", "diagonal", "agop"}
        The columns it searches: as given, scaled by learned widths, or in a
        learned metric's coordinates.
    balanced : bool
        ``class_weight="balanced"`` (over the search's own class weights).
    n_leaves : int
        Local models: one per leaf of the rows (1: one model).
    draw : int
        0, or the ``draw``-th other draw of the random centres of a configuration
        (a candidate for the ensemble, never the best: the luckiest of several draws
        of one configuration is picked on noise).
    target : {"identity", "log"}
        A regressor's target as given, or its log (fitted on ``log y``, predicting
        ``exp`` of that, scored as given).
    """

    family: str
    kernel: str = "rbf"
    metric: str = "none"
    balanced: bool = False
    n_leaves: int = 1
    draw: int = 0
    target: str = "identity"

    def params(self):
        """The line's own entries of a configuration's ``params`` (those not at their
        defaults)."""
        params = {}
        if self.metric != "none":
            params["metric"] = self.metric
        if self.balanced:
            params["class_weight"] = "balanced"
        if self.n_leaves > 1:
            params["n_leaves"] = int(self.n_leaves)
        if self.draw:
            params["draw"] = int(self.draw)
        if self.target != "identity":
            params["target"] = self.target
        return params

    def describe(self):
        """E.g. ``falkon, laplacian kernel, diagonal metric``."""
        parts = [self.family]
        if self.kernel != "rbf":
            parts.append(f"{self.kernel} kernel")
        if self.metric != "none":
            parts.append(f"{self.metric} metric")
        if self.balanced:
            parts.append("balanced classes")
        if self.n_leaves > 1:
            parts.append(f"{self.n_leaves} leaves")
        if self.target != "identity":
            parts.append(f"{self.target} target")
        if self.draw:
            parts.append(f"centres' draw {self.draw + 1}")
        return ", ".join(parts)


@dataclasses.dataclass(eq=False)
class Record:
    """One configuration cross-validated on some rows.

    Attributes
    ----------
    line : Line
    rows : int
        The rows it was cross-validated on (the search's fidelity).
    factor : float
        Its gamma over the line's reference gamma.
    penalty : float
        Its ``C`` or ``alpha`` (FALKON's for every row, as the grid's records say).
    n_components : int or None
    params : dict
        ``cv_results_``'s ``params``: ``family``, ``kernel``, ``metric``, ``gamma``
        (in the line's columns), ``C`` or ``alpha``, ``n_components``, ``dtype``,
        ``class_weight``, ``n_leaves``.
    scores, fit_times, score_times : ndarray of shape (n_folds,)
    oof : ndarray of shape (rows, n_columns) or None
        Out-of-fold decision columns (a regression's predictions) of the rows, in
        their order; None where not kept.
    """

    line: Line
    rows: int
    factor: float
    penalty: float
    n_components: int | None
    params: dict
    scores: np.ndarray
    fit_times: np.ndarray
    score_times: np.ndarray
    oof: np.ndarray | None = None

    @property
    def mean(self):
        """The mean cross-validated score (``-inf`` where a fold's is not finite)."""
        mean = float(np.mean(self.scores))
        return mean if np.isfinite(mean) else -np.inf

    @property
    def se(self):
        """The standard error of :attr:`mean` over the folds."""
        k = len(self.scores)
        return float(np.std(self.scores, ddof=1) / np.sqrt(k)) if k > 1 else 0.0

    def key(self, most_rows, debit=0.0):
        """What the best is picked by, where ``most_rows`` are the most rows scored: the
        mean on those rows, the mean less its standard error and ``debit`` on fewer
        (:meth:`Records.debits`)."""
        if not np.isfinite(self.mean):
            return -np.inf
        return self.mean if self.rows >= most_rows else self.mean - self.se - debit

    def same_point(self, other):
        """Whether ``other`` is the same configuration (at any rows)."""
        return (self.line == other.line and np.isclose(self.factor, other.factor)
                and np.isclose(self.penalty, other.penalty)
                and self.n_components == other.n_components)


def _point(record):
    """A configuration whatever its rows and the centres a subsample capped: its line,
    gamma and penalty."""
    return record.line, round(np.log(record.factor), 9), round(np.log(record.penalty), 9)


def paired_gain(new, old):
    """``(gain, standard error)``: how much ``new`` scored above ``old`` on the same folds
    (the mean of the fold-by-fold differences) and that mean's standard error; the
    difference of their means where they were scored on different rows.

    Examples
    --------
    >>> import numpy as np
    >>> line = Line("falkon")
    >>> def record(scores):
    ...     s = np.asarray(scores)
    ...     return Record(line, 100, 1.0, 1.0, None, {}, s, s, s)
    >>> gain, se = paired_gain(record([0.9, 0.8, 0.85]), record([0.88, 0.79, 0.83]))
    >>> round(gain, 3), round(se, 4)
    (0.017, 0.0033)
    """
    if new.rows != old.rows or len(new.scores) != len(old.scores):
        return new.mean - old.mean, float(np.hypot(new.se, old.se))
    diff = np.asarray(new.scores, dtype=float) - np.asarray(old.scores, dtype=float)
    if not np.all(np.isfinite(diff)):
        return (-np.inf if not np.isfinite(new.mean) else np.inf), 0.0
    se = float(np.std(diff, ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else 0.0
    return float(diff.mean()), se


class Records:
    """Every record of one search, in the order scored, and the best of them.

    ``oof_bytes``: the most bytes of out-of-fold predictions kept; beyond, those of the
    records least likely to join an ensemble (the lowest-ranked at their rows) are
    dropped first.
    """

    def __init__(self, oof_bytes):
        self.all = []
        self.oof_bytes = int(oof_bytes)

    def __len__(self):
        return len(self.all)

    def __iter__(self):
        return iter(self.all)

    def add(self, records):
        """Keep ``records``; the out-of-fold predictions held stay within ``oof_bytes``."""
        self.all.extend(records)
        held = [r for r in self.all if r.oof is not None]
        total = sum(r.oof.nbytes for r in held)
        if total <= self.oof_bytes:
            return
        most, debits = self.most_rows(), self.debits()
        for record in sorted(held, key=lambda r: r.key(most, debits.get(r.rows, 0.0))):
            total -= record.oof.nbytes
            record.oof = None
            if total <= self.oof_bytes:
                break

    def most_rows(self):
        """The most rows any record was scored on (0 for none)."""
        return max((r.rows for r in self.all), default=0)

    def debits(self):
        """``{rows: debit}``: what the configurations scored on ``rows`` rows and again on
        the most rows lost there, on average (none where they gained). The best of many
        configurations on a subsample is a lucky one, and the configurations promoted
        from it measure how lucky: beside two busy loops bio's race reached 36,000 rows
        on one line (0.9868 there, 0.9966 on 4,000 rows), and a 4,000-row record of
        0.9960 less its standard error outranked it. A score on fewer rows is never
        credited with a gain it did not measure."""
        most = self.most_rows()
        top = {_point(r): r.mean for r in self.all if r.rows == most and np.isfinite(r.mean)}
        losses = {}
        for r in self.all:
            if r.rows < most and _point(r) in top and np.isfinite(r.mean):
                losses.setdefault(r.rows, []).append(r.mean - top[_point(r)])
        return {rows: max(0.0, float(np.mean(lost))) for rows, lost in losses.items()}

    def keys(self):
        """Every record's :meth:`Record.key` (``cv_results_``'s ranks follow them); a record
        another supersedes, and another draw of a configuration's centres, ranks after
        every other, in its own order."""
        most, debits = self.most_rows(), self.debits()
        gone = self.superseded() | {id(r) for r in self.all if r.line.draw}
        keys = np.array([r.key(most, debits.get(r.rows, 0.0)) for r in self.all])
        if gone and np.isfinite(keys).any():
            low = np.nanmin(keys[np.isfinite(keys)])
            high = np.nanmax(keys[np.isfinite(keys)])
            for i, r in enumerate(self.all):
                if id(r) in gone:  # below every other, in its own order
                    keys[i] = keys[i] - (high - low) - 1.0
        return keys

    def superseded(self):
        """The records whose configuration was scored again on more rows: its score on the
        most rows is its estimate (on the same line, gamma and penalty, whatever centres a
        subsample capped)."""
        most = {}
        for r in self.all:
            most[_point(r)] = max(most.get(_point(r), 0), r.rows)
        return {id(r) for r in self.all if r.rows < most[_point(r)]}

    def best(self, where=None):
        """The best record (:meth:`Record.key`) among those ``where`` accepts and no record
        of the same configuration on more rows supersedes, other than another draw of
        a configuration's centres; None for none. Ties go to the one scored on more rows,
        then to the earlier."""
        most, debits = self.most_rows(), self.debits()
        gone = self.superseded()
        chosen, chosen_key = None, -np.inf
        for record in self.all:
            if id(record) in gone or record.line.draw or where is not None and not where(record):
                continue
            key = record.key(most, debits.get(record.rows, 0.0))
            if chosen is None or (key, record.rows) > (chosen_key, chosen.rows):
                chosen, chosen_key = record, key
        return chosen if chosen is not None and np.isfinite(chosen_key) else None

    def at(self, rows, line=None):
        """The records scored on ``rows`` rows (of ``line``, where given)."""
        return [r for r in self.all if r.rows == rows and (line is None or r.line == line)]

    def find(self, line, rows, factor, penalty, n_components):
        """The record of this configuration on these rows, or None."""
        for r in self.all:
            if r.line == line and r.rows == rows and np.isclose(r.factor, factor) and \
                    np.isclose(r.penalty, penalty) and r.n_components == n_components:
                return r
        return None

