"""The search's one cost model: seconds of any of its work, fitted to what it measured.

Every question "does this fit in the time left?" is answered here. A piece of work
(a family's grid unit, one fit, a learner's run) declares its *operations* as
its algorithm counts them at its size: multiply-adds of products (``gemm``), of
eigendecompositions (``eigh``, counted as ``m^3``) and elementwise passes
(``exp``); each family says how many for its rows, centres and features
(:meth:`kernelscale.model_selection._families.Family.operations`). This
machine's speed at each is measured once, on small arrays, when the search starts
(:meth:`CostModel.calibrate`): the *work* of a piece is then the seconds those
operations would take at that speed.

What the work leaves out (overheads, an SVM's iterations, the cache) is what the
search measures: each kind of work keeps its measured ``(work, seconds)``, and
from its sizes (the median seconds of each) a prediction is ``overhead + rate *
work``, through the two largest sizes measured; beyond the largest, the part above
the overhead grows as ``work ** power``, the power measured between those two sizes
(at least 1, at most :data:`MOST_POWER`: an SVM's iterations grow faster than its
kernel's operations). From one size it cannot tell overhead from work: half of its
seconds are taken for each (all overhead priced the exact SVM's next round at a
quarter of its seconds; all work priced a small FALKON grid's at ten times its).
Before any measurement of a kind, its work is its price.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from ._schedule import Stopwatch

__all__ = ["CostModel", "MOST_POWER"]

#: the fastest growth beyond its operation count a kind of work is priced at: between
#: subsamples three times apart, the exact SVM's grid units grew as work^1.0..1.3 and
#: FALKON's as work^0.8..1.1 (electricity, nonlinear-1e5, bio; 30 s and 2-minute runs)
MOST_POWER = 1.5


class CostModel:
    """Seconds of the search's work, by kind, from operation counts and measurements.

    Examples
    --------
    >>> cost = CostModel(rates={"gemm": 1e-9, "eigh": 1e-8, "exp": 1e-8})
    >>> cost.predict("grid", {"gemm": 2e9})  # nothing measured: the operations' price
    2.0
    >>> cost.observe("grid", {"gemm": 1e9}, 3.0)  # one size: half overhead, half work
    >>> cost.predict("grid", {"gemm": 2e9})
    4.5
    >>> cost.observe("grid", {"gemm": 4e9}, 9.0)  # two: 1 s of overhead, 2 s per 1e9
    >>> round(cost.predict("grid", {"gemm": 8e9}), 1)
    17.0
    """

    def __init__(self, rates=None):
        self.rates = dict(rates) if rates is not None else None
        self.points = {}

    def calibrate(self):
        """Measure this machine's seconds per operation (about a tenth of a second)."""
        if self.rates is not None:
            return self
        rng = np.random.RandomState(0)
        watch = Stopwatch()
        rates = {}
        # float64, as the grids' statistics and eigendecompositions are (a float32 product
        # runs about twice as fast: its work is priced on the safe side)
        A = rng.standard_normal((384, 384))
        A @ A  # the first product pays BLAS's start
        best = math.inf
        for _ in range(3):
            watch.lap()
            A @ A
            best = min(best, watch.lap())
        rates["gemm"] = best / 384.0 ** 3
        # large enough for LAPACK's divide and conquer to run at its speed (at 160 its
        # fixed costs priced a 1,000-centre eigendecomposition at 8 s, for 0.1 s)
        S = rng.standard_normal((320, 320))
        S = S @ S.T
        best = math.inf
        for _ in range(3):
            watch.lap()
            linalg.eigh(S, check_finite=False, driver="evd")
            best = min(best, watch.lap())
        rates["eigh"] = best / 320.0 ** 3
        E = rng.standard_normal(250_000).astype(np.float32)
        best = math.inf
        for _ in range(3):
            watch.lap()
            np.exp(E, out=E)
            E *= -1.0
            best = min(best, watch.lap())
        rates["exp"] = best / E.size
        # a clock too coarse (or a test's fake one) to see the work: a floor, not zero
        self.rates = {name: max(rate, 1e-12) for name, rate in rates.items()}
        return self

    def work(self, operations):
        """Seconds ``operations`` (a dict: ``gemm``, ``eigh``, ``exp`` counts) take at the
        calibrated speed."""
        rates = self.rates or {"gemm": 1e-10, "eigh": 1e-9, "exp": 1e-9}
        return float(sum(rates[name] * count for name, count in operations.items()))

    def observe(self, kind, operations, seconds):
        """Record work of ``kind`` whose operations took ``seconds``."""
        work = self.work(operations)
        if work > 0 and np.isfinite(seconds):
            self.points.setdefault(kind, []).append((work, max(float(seconds), 1e-6)))

    def measured(self, kind):
        """Whether work of ``kind`` was measured."""
        return bool(self.points.get(kind))

    def _sizes(self, kind):
        """``[(work, median seconds)]`` of each size measured, smallest first."""
        by_size = {}
        for work, seconds in self.points.get(kind, []):
            by_size.setdefault(float(f"{work:.3g}"), []).append(seconds)
        return sorted((w, float(np.median(t))) for w, t in by_size.items())

    def line(self, kind):
        """``(overhead, rate, power)`` of ``kind``: seconds = overhead + rate * work up to
        the largest size measured, the part above the overhead growing as work ** power
        beyond it."""
        sizes = self._sizes(kind)
        if not sizes:
            return 0.0, 1.0, 1.0
        w1, t1 = sizes[-1]
        if len(sizes) == 1:
            return 0.5 * t1, 0.5 * t1 / w1, 1.0
        w0, t0 = sizes[-2]
        rate = (t1 - t0) / (w1 - w0)
        overhead = t1 - rate * w1
        if rate <= 0:  # no slower on more work: noise, all of it work
            return 0.0, t1 / w1, 1.0
        if overhead < 0:  # faster than linear: no overhead, a power
            overhead = 0.0
        power = math.log((t1 - overhead) / max(t0 - overhead, 1e-9)) / math.log(w1 / w0)
        return float(overhead), float((t1 - overhead) / w1), \
            float(np.clip(power, 1.0, MOST_POWER))

    def predict(self, kind, operations):
        """Seconds predicted for ``operations`` of work of ``kind``."""
        work = self.work(operations)
        sizes = self._sizes(kind)
        if not sizes:
            return work
        overhead, rate, power = self.line(kind)
        w1, t1 = sizes[-1]
        if work <= w1:
            return overhead + rate * work
        return overhead + (t1 - overhead) * (work / w1) ** power


def largest_within(seconds_of, seconds, low, high):
    """The largest size in ``[low, high]`` whose ``seconds_of(size)`` (growing with the
    size) is within ``seconds``, to 1% of ``low``; ``low - 1`` where none is.

    Examples
    --------
    >>> 4950 <= largest_within(lambda rows: rows / 1000, 5.0, 1, 100_000) <= 5000
    True
    """
    if seconds_of(low) > seconds:
        return low - 1
    if seconds_of(high) <= seconds:
        return high
    while high - low > max(1, low // 100):
        middle = (low + high) // 2
        if seconds_of(middle) <= seconds:
            low = middle
        else:
            high = middle
    return low
