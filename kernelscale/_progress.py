"""Progress bars of long fits: a tqdm bar under ``verbose=1`` or ``set_config(show_progress=True)``.

``verbose=0`` is silent unless the library default ``show_progress`` is on (the
command line turns it on); ``verbose=1`` shows a bar; ``verbose >= 2`` prints the
solver's detailed lines instead. Bars go to standard error and disappear when
done, so that nested bars (a search over fits) do not pile up.
"""

from __future__ import annotations

import sys

import numpy as np

from ._config import get_config

__all__ = ["progress", "wants_bar", "convergence_bar"]


class _Silent:
    """The bar's interface, doing nothing."""

    n = 0

    def update(self, n=1):
        self.n += n

    def set_postfix_str(self, text, refresh=True):
        pass

    def set_description_str(self, text, refresh=True):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def wants_bar(verbose):
    """True when a fit with this ``verbose`` shows a progress bar."""
    verbose = int(verbose or 0)
    return verbose == 1 or (verbose == 0 and get_config()["show_progress"])


def progress(total, desc, *, verbose=0, unit="it"):
    """A tqdm bar (or a silent stand-in) for ``total`` steps of a fit.

    Parameters
    ----------
    total : int or None
        Steps expected (None: unknown, the bar counts).
    desc : str
        What is running, e.g. ``"FALKON CG"``.
    verbose : int, default=0
        The estimator's ``verbose``.
    unit : str, default="it"

    Returns
    -------
    bar : tqdm or a silent object with ``update``, ``set_postfix_str``, ``close``

    Examples
    --------
    >>> from kernelscale._progress import progress
    >>> with progress(3, "demo") as bar:  # silent: verbose=0 and no show_progress
    ...     bar.update()
    """
    if not wants_bar(verbose):
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                dynamic_ncols=True)


class convergence_bar:
    """A bar for a solver that stops at a tolerance: 0-100% as its gap falls to ``tol``.

    The number of iterations an SMO solve takes is not known in advance, but its
    optimality gap falls roughly geometrically, so the share of the way from the
    first gap to ``tol`` on a log scale is what the bar counts. Use as a context
    manager; it yields the solver's ``monitor(n_outer, gap, n_active)``. A fit of
    several problems solved one after another (``parts``) calls ``next_part()``
    between them; each takes an equal share of the bar.

    Examples
    --------
    >>> with convergence_bar("demo", verbose=0, tol=1e-3) as monitor:
    ...     for k, gap in enumerate([1.0, 0.1, 0.01, 0.001]):
    ...         monitor(16 * k, gap, 10)
    """

    def __init__(self, desc, *, verbose, tol, every=16, parts=1):
        self.bar = progress(100, desc, verbose=verbose, unit="%")
        self.tol = float(tol)
        self.every = int(every)  # outer iterations between updates (SMO's are milliseconds)
        self.parts = max(int(parts), 1)
        self.part = 0
        self.first = None

    def _advance(self, done):
        target = min(int(100 * (self.part + min(max(done, 0.0), 1.0)) / self.parts), 100)
        if target > self.bar.n:
            self.bar.update(target - self.bar.n)

    def monitor(self, n_outer, gap, n_active):
        if self.first is None:
            self.first = max(float(gap), 10 * self.tol)
        if n_outer % self.every:
            return
        span = np.log(self.first / self.tol)
        self._advance(np.log(self.first / max(float(gap), self.tol)) / span
                      if span > 0 else 1.0)
        which = f"problem {self.part + 1}/{self.parts}: " if self.parts > 1 else ""
        self.bar.set_postfix_str(f"{which}gap {gap:.1e} (tol {self.tol:g}), "
                                 f"{n_active} active")

    def next_part(self):
        """The current problem is solved: its share is full, the next starts afresh."""
        self._advance(1.0)
        self.part += 1
        self.first = None

    def __enter__(self):
        self.bar.__enter__()
        return self.monitor

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)
