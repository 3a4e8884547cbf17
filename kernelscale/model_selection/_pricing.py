"""What the search's work costs: the evaluator's prices (:class:`Pricing`).

Every "does this fit in the time left?" of the search is answered from here: a grid
unit's or a fit's operations (:meth:`Pricing.operations`, what its family's algorithm
performs at its size), priced by the search's cost model (:mod:`._cost`), fitted to
what this run measured; a refit also at its configuration's own fold fits, grown to
its rows (:meth:`Pricing.refit_price`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ._cost import largest_within
from ._families import FAMILIES

__all__ = ["Pricing"]


class Pricing:
    """The prices of :class:`._evaluator.Evaluator`, which it inherits: they read its
    ``data``, ``columns``, ``classifier``, ``n_splits`` and ``cost`` and its
    ``centres`` and ``settings_for``."""

    def operations(self, line, kind, rows, n_components=None, n_penalties=1):
        """The operations of a grid unit or a fit of ``line`` (what the cost model prices)."""
        family = FAMILIES[line.family]
        d = self.columns[line.metric].shape[1]
        m = int(n_components or self.centres(line, rows))
        outputs = (len(self.data.classes) if len(self.data.classes) > 2 else 1) \
            if self.classifier else (1 if self.data.y.ndim == 1 else self.data.y.shape[1])
        leaves = max(1, line.n_leaves)
        ops = family.operations(kind, max(1, rows // leaves), n_features=d, n_components=m,
                                n_penalties=n_penalties, n_folds=self.n_splits,
                                n_outputs=outputs, kernel=line.kernel,
                                memory_budget=self.settings_for(line, rows=rows).memory_budget)
        return {name: leaves * count for name, count in ops.items()}

    @staticmethod
    def kind(line, kind):
        """The cost model's kind of work of ``line`` (a family, its kernel, local models)."""
        leaves = ":leaves" if line.n_leaves > 1 else ""
        return f"{kind}:{line.family}:{line.kernel}{leaves}"

    def priced_kind(self, line, kind):
        """The kind whose measurements price ``line``'s work: its own, or, for local
        models never measured, the one model's they are made of (the same solver on each
        leaf's rows, its operations counted leaf by leaf). Priced at the operations'
        calibrated speed alone (unmeasured), Beijing's first four leaves at 2 minutes
        were predicted at 51 s a gamma and took 8 s, where FALKON's own fits had been
        measured all along."""
        own = self.kind(line, kind)
        if line.n_leaves > 1 and not self.cost.measured(own):
            one = self.kind(dataclasses.replace(line, n_leaves=1), kind)
            if self.cost.measured(one):
                return one
        return own

    def predict(self, line, kind, rows, n_components=None, n_units=1, n_penalties=1):
        """Seconds the cost model predicts for ``n_units`` grid units or fits.

        A fit is priced at no more than a grid unit of one penalty on as many rows (where
        grids were measured): that unit fits every fold on ``(k - 1) / k`` of the rows,
        at least one fit's work on all of them. A fit's own measurements are few and
        small (the held first model's), and extrapolated from one of 0.06 s on 667 rows
        a refit on 2,000 rows with 1,184 centres was priced at 16.5 s, where the grid had
        fitted those centres on every fold in 1.0 s: the refit was skipped, and the
        model held on a third of the rows came back."""
        ops = self.operations(line, kind, rows, n_components, n_penalties)
        seconds = self.cost.predict(self.priced_kind(line, kind), ops)
        grid = self.priced_kind(line, "grid")
        if kind == "fit" and self.cost.measured(grid):
            seconds = min(seconds, self.cost.predict(
                grid, self.operations(line, "grid", rows, n_components)))
        return n_units * seconds

    def refit_price(self, record, rows, n_components=None):
        """Seconds ``record``'s fit on ``rows`` rows (at ``n_components`` centres: its own
        by default) is predicted at: the dearer of the cost model's price and its own folds'
        mean fit grown to those rows and centres as the cost model grows a fit (the
        operations do not see what slows one configuration's solver: priced by them alone,
        diamonds at 10 minutes grew a member for refits past the time left)."""
        m = record.n_components if n_components is None else n_components
        predicted = self.predict(record.line, "fit", rows, m)
        times = np.asarray(record.fit_times, dtype=np.float64)
        train = record.rows * (self.n_splits - 1) // self.n_splits
        if times.size == 0 or not np.all(np.isfinite(times)) or train < 1:
            return predicted
        below = self.predict(record.line, "fit", train, record.n_components)
        growth = max(1.0, predicted / below) if below > 0 else rows / train
        return max(predicted, float(np.mean(times)) * growth)

    def most_rows(self, record, seconds, low, high):
        """The most rows in ``[low, high]`` on which ``record``'s configuration is
        predicted to fit within ``seconds`` (:meth:`refit_price`; ``low - 1`` where none
        is)."""
        return largest_within(lambda rows: self.refit_price(record, rows), seconds, low, high)
