"""Progress bars of long fits: a tqdm bar under ``verbose=1`` or ``set_config(show_progress=True)``.

``verbose=0`` is silent unless the library default ``show_progress`` is on (the
command line turns it on); ``verbose=1`` shows a bar; ``verbose >= 2`` prints the
solver's detailed lines instead. Bars go to standard error and disappear when
done, so that nested bars (a search over fits) do not pile up.
"""

from __future__ import annotations

import sys

from ._config import get_config

__all__ = ["progress", "wants_bar"]


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
