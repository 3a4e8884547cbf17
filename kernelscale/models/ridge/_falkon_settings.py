"""FALKON's automatic settings, its convergence and budget messages, and its shared docs."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._config import format_bytes

__all__ = ["AUTO_PENALTY", "FLOAT32_PENALTY_FLOOR", "auto_n_components", "convergence_message",
           "recompute_message"]

#: ``alpha="auto"`` sets FALKON's penalty ``lam = alpha / n`` to this. The
#: restriction to m centres and CG's early stopping regularise too, so the
#: explicit penalty can be small; noisy targets want more (a9a: ``1e-4 * n``).
#: Much smaller penalties drown in the float32 kernel's round-off (relative
#: 1e-7): the coefficients grow like 1 / lam and their cancellation in
#: ``K(x, C) @ beta`` loses every digit.
AUTO_PENALTY = 1e-6

#: The smallest FALKON penalty ``lam = alpha / n`` whose float32 fit reproduces the float64
#: model: below it the float32 preconditioner's triangular solves (condition number
#: ~ 1 / sqrt(lam)) lose the digits CG needs. Measured (make_friedman1, 22,500 rows,
#: test R^2 of float32 / float64 fits, tol 1e-3): m = 4,000: lam = 1e-6 0.9852 / 0.9862,
#: 1e-7 0.9800 / 0.9858; m = 8,000: 1e-5 0.9843 / 0.9845, 1e-6 0.9823 / 0.9866, 1e-8
#: 0.3733 / 0.9833. The search refits a penalty below it in float64.
FLOAT32_PENALTY_FLOOR = 1e-5

# n_components="auto": FALKON's statistical rate needs O(sqrt(n) log n) centres; this
# constant times that, at least this floor, capped so K(X, C) stays within the
# memory budget and the O(m^3) factorisations stay affordable.
_AUTO_CENTER_FACTOR = 7.0
_AUTO_CENTER_FLOOR = 1000
_AUTO_CENTER_CAP = 10_000


def auto_n_components(n_samples, memory_budget, itemsize, *, warn=False):
    """The number of centres ``n_components="auto"`` uses for ``n_samples`` rows.

    ``min(n, max(1000, min(7 sqrt(n) ln(n), 10000, m_fit)))`` where ``m_fit``
    is the most centres whose ``K(X, C)`` fits in ``memory_budget`` beside
    the ``m x m`` preconditioner (so it is computed once, not at every CG
    iteration). With ``warn=True``, says when
    the budget lowered the number, and the budget that would not have.
    """
    target = _AUTO_CENTER_FACTOR * math.sqrt(n_samples) * math.log(max(n_samples, 2))
    wanted = int(min(n_samples, max(_AUTO_CENTER_FLOOR, min(target, _AUTO_CENTER_CAP))))
    # K(X, C) and the m x m factors both held: itemsize (m^2 + n m) <= budget
    n = n_samples
    fit = int((-n + math.sqrt(n * n + 4.0 * memory_budget / itemsize)) / 2)
    m = int(min(n_samples, max(_AUTO_CENTER_FLOOR, min(target, _AUTO_CENTER_CAP, fit))))
    if warn and m < wanted:
        need = (n_samples + wanted) * wanted * itemsize
        warnings.warn(
            f"n_components='auto' uses {m} centres for {n_samples} rows instead of {wanted}: "
            f"the memory budget ({format_bytes(memory_budget)}) holds K(X, C) for only {m} "
            f"centres; memory_budget >= {format_bytes(need)} gives {wanted} centres (often "
            "more accurate), with K(X, C) still computed once.", UserWarning, stacklevel=5)
    return m


def recompute_message(n_rows, m, dtype, memory_budget, n_iter, need):
    """The warning for a fit whose ``K(X, C)`` did not fit the budget and was recomputed.

    ``need``: the plan's bytes with ``K(X, C)`` kept (it, the m x m factors, CG's vectors).
    """
    size = n_rows * m * np.dtype(dtype).itemsize
    return (f"K(X, C) ({n_rows} x {m} {np.dtype(dtype).name}, {format_bytes(size)}) does not "
            f"fit the memory budget ({format_bytes(memory_budget)}) beside the m x m factors, "
            f"so it was recomputed at each of the {n_iter} CG iterations (several times "
            f"slower); memory_budget >= {format_bytes(need)} keeps it, computed once.")


def convergence_message(info, max_iter, tol, dtype, alpha):
    """What to tell the user about a CG run that did not converge (None if it did).

    A breakdown (the system stopped being positive definite to working
    precision) is said as such, with what helps; only a run that simply ran out
    of iterations is told to raise ``max_iter``.
    """
    broke = np.flatnonzero(info.get("breakdown", ()))
    if broke.size:
        first = int(np.min(np.asarray(info["breakdown"])[broke]))
        fix = "use dtype='float64' or a larger alpha" if np.dtype(dtype) == np.float32 \
            else "use a larger alpha (or fewer, better spread centres)"
        return (f"Conjugate gradient broke down at iteration {first} for {broke.size} "
                f"target(s): with alpha={alpha:.3g} the system is not positive definite to "
                f"{np.dtype(dtype).name} precision (the penalty drowns in round-off), so those "
                f"targets stopped at their last iterate; {fix}.")
    if not info["converged"]:
        return (f"Conjugate gradient stopped at max_iter={max_iter} with relative residual "
                f"{info['residuals'][-1].max():.2e} > tol={tol:g}; increase max_iter or tol "
                "(a few tens of iterations usually reach the best test accuracy).")
    return None

