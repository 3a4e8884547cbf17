"""One model at its defaults for the data at hand (``kernelscale fit --model auto``).

The search races its families and keeps what scores; a single fit has no scores to go
by, so it follows a rule written from the grid searches measured in
benchmarks/HISTORY.md (2 cores, the default 7 x 7 grid, 5 folds):

- the exact SVM's grid, on a kernel matrix shared by every gamma, C and fold,
  took 42 s on MNIST-10k (10,000 rows) and about 5 minutes on 20,000 rows of a
  26-class, 16-feature problem: it is the most accurate family and the fastest
  route to its own accuracy while the ``n x n`` matrices (``8 n^2`` bytes)
  fit the memory budget and ``n`` stays near 20,000;
- past that, the SVM's cost grows with ``n^2`` (time and memory) while
  Nystrom kernel ridge (FALKON's model) grows with ``n m^2``: it takes over.
A regressor has no exact family (the exact SVR is not part of the search), so
it is always Nystrom kernel ridge.
"""

from __future__ import annotations

from .._config import format_bytes
from .._planner import bytes_up, exact_grid_plan
from ._families import EXACT_SVM, FALKON

__all__ = ["choose_families"]

#: largest training set the exact SVM is chosen for (see the module docstring)
EXACT_MAX_ROWS = 20_000


def choose_families(task, n_samples, n_features, n_classes, memory_budget, exact_plan=None):
    """The families to search and why, as ``(families, reasoning)``.

    Parameters
    ----------
    task : {"classifier", "regressor"}
    n_samples, n_features : int
    n_classes : int or None
    memory_budget : int
    exact_plan : kernelscale.MemoryPlan, default=None
        The exact grid's plan for these data and folds
        (:func:`kernelscale.model_selection._exact.exact_grid_memory`): the same answer
        the grid will give to "does the matrix fit". None: the planner's answer
        without the solving threads' copies of the fold blocks.

    Returns
    -------
    families : list of str
    reasoning : str
        The rule as it applied to these data, for a user to print.
    """
    shape = f"{n_samples} rows x {n_features} features"
    if task == "regressor":
        return [FALKON.name], (f"{shape}: regression is searched with Nystrom kernel ridge "
                            "(FALKON's model); the exact SVR is not part of the search.")
    if exact_plan is None:  # the planner's answer without the threads' block copies
        exact_plan = exact_grid_plan(n_samples, 0, 1, memory_budget)
    need, fits = exact_plan.least, exact_plan.choice != "rows"
    shape += f", {n_classes} classes"
    if n_samples <= EXACT_MAX_ROWS and fits:
        return [EXACT_SVM.name], (
            f"{shape}: the exact SVM, its kernel matrix computed once and shared by the "
            f"grid ({format_bytes(need)} with a solving thread's fold blocks), fits the "
            f"memory budget ({format_bytes(memory_budget)}) and n <= {EXACT_MAX_ROWS}, where "
            "it is the fastest route to the best accuracy.")
    if not fits and n_samples <= EXACT_MAX_ROWS:
        why = (f"the exact SVM's kernel matrix and a solving thread's fold blocks "
               f"({format_bytes(need)}) exceed the memory budget "
               f"({format_bytes(memory_budget)}; a budget >= {bytes_up(need)} would choose it)")
    else:
        why = (f"n > {EXACT_MAX_ROWS}, where the exact SVM's n^2 cost overtakes Nystrom "
               "kernel ridge's n m^2")
    return [FALKON.name], f"{shape}: Nystrom kernel ridge (FALKON's model), because {why}."
