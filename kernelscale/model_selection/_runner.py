"""The one loop over a grid's units (a gamma with its whole C / alpha path and every fold).

Every family's grid shares its work within a gamma and hands this loop one
function per gamma; the loop owns what is the same for all of them: the
deadline (no unit starts once it has passed; the first always starts, and an
armed time budget stops a unit already running at a checkpoint), the report
after each unit (progress, the deadline's measurements), and the rule that a
unit that fails drops that gamma's configurations with a warning instead of
ending the search.
"""

from __future__ import annotations

import warnings

from .._clock import checkpoint, now

__all__ = ["run_units"]


def run_units(factors, unit, *, deadline=None, on_unit=None, what="the grid"):
    """Run ``unit(factor)`` (a list of records) for each gamma factor, in order.

    Parameters
    ----------
    factors : sequence of float
    unit : callable
        ``unit(factor) -> list of records`` of that gamma.
    deadline : kernelscale.model_selection._deadline.Deadline or float, default=None
        No unit starts once ``now() > deadline`` (after the first).
    on_unit : callable, default=None
        ``on_unit(records_so_far)`` after each unit.
    what : str
        The grid's name in the warning of a failed unit.

    Returns
    -------
    records : list of dict
    complete : bool
        False when the deadline stopped the loop before every gamma.
    """
    records, tried = [], 0
    for factor in factors:
        if tried and deadline is not None and now() > deadline:
            return records, False
        tried += 1
        checkpoint()
        try:
            new = unit(factor)
        except Exception as error:  # a time budget's stop and Ctrl-C are not Exceptions
            warnings.warn(f"{what}: the gamma factor {factor:.4g} failed ({type(error).__name__}: "
                          f"{error}); its configurations are dropped and the search goes on.",
                          UserWarning, stacklevel=3)
            continue
        records += new
        if on_unit is not None:
            on_unit(records)
    return records, True
