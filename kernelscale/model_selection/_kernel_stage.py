"""The search's kernel stage: RBF or the Laplacian kernel for the FALKON family.

A learned width per feature shapes an RBF kernel, whose functions are smooth. On
tables of discrete-valued columns and steps (a price that jumps at a carat, an hour,
a station), the Laplacian kernel ``exp(-gamma ||x - y||_1)`` fits closer: on
diamonds it scored R^2 0.9923 against the RBF's 0.9916 with the same widths (its
columns scaled by their square roots), on Beijing 0.917 against 0.878 at one
untuned gamma; on bio_kdd04 (74 continuous columns) it scored lower (ROC AUC 0.986
against 0.993). So neither is assumed: both kernels' grids (every gamma and
penalty) are scored on one held-out part of a subsample of the searched columns,
and the Laplacian is kept only where its best scores higher than the RBF's. The
rest of the search (the grid, the refit, more centres) then runs on the kernel
kept.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._clock import now
from ._deadline import Deadline
from ._families import FALKON, middle_out, run_family
from ._first_model import SIZED_SHARE, predicted_unit
from ._halving import subsample_data, subsample_folds
from ._widths_stage import grid_reserve

__all__ = ["choose_kernel", "laplacian_gamma_ref", "KERNEL_CHOICES"]

#: FALKON's kernels the stage chooses between (the first is the search's default)
KERNEL_CHOICES = ("rbf", "laplacian")
#: the most of the time budget the stage may take
KERNEL_SHARE = 0.15
#: rows both grids are scored on (a subsample of more) ...
KERNEL_MAX_ROWS = 20_000
#: ... and the fewest, when the time shrinks them
KERNEL_LEAST_ROWS = 3_000
#: where both grids fit on no subsample, the middle gammas compared instead
KERNEL_FEW_FACTORS = 2
#: the fewest rows of a classifier's rarest class in the held-out part (bio_kdd04, 1%
#: positives: on 3,361 rows the held-out part held 7, ROC AUC ranked the Laplacian
#: 0.9993 against 0.9985, and the grid on every row then scored it 0.9852 against the
#: RBF's 0.9880)
KERNEL_LEAST_CLASS_ROWS = 100
#: pairs of rows the Laplacian's reference scale is measured on
SCALE_PAIRS = 4_000
#: one held-out part costs about this share of a grid unit on every fold (its
#: statistics pass is the same; fewer m x m eigendecompositions). 0.5 was too few: on a
#: loaded machine both grids on 9,800 diamonds took 30 s against 18 s predicted, and the
#: grid after them was stopped (the first model came back)
ONE_FOLD_SHARE = 1.0


def _cost(state, rows, factors):
    """Both kernels' grids over ``factors`` on one held-out part of ``rows`` rows, at the
    grid's measured prices."""
    return len(KERNEL_CHOICES) * len(factors) * ONE_FOLD_SHARE * predicted_unit(state, rows)


def _sized(state, n, factors, granted):
    """The most rows (from ``KERNEL_MAX_ROWS`` down) whose grids fit ``SIZED_SHARE`` of the
    grant (a stopped grid loses the comparison), and whether any do."""
    rows = int(min(n, KERNEL_MAX_ROWS))
    while rows > KERNEL_LEAST_ROWS and _cost(state, rows, factors) > SIZED_SHARE * granted:
        rows = int(rows * 0.7)
    fits = rows >= min(KERNEL_LEAST_ROWS, n) and \
        _cost(state, rows, factors) <= SIZED_SHARE * granted
    return rows, fits


def laplacian_gamma_ref(X, random_state):
    """The Laplacian's reference ``gamma``: one over the mean L1 distance between random
    pairs of rows, so its typical exponent is 1 (as ``gamma="scale"``'s is for RBF).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> laplacian_gamma_ref(X, 0) > 0
    True
    """
    rng = np.random.RandomState(random_state)
    n = X.shape[0]
    first, second = rng.randint(0, n, SCALE_PAIRS), rng.randint(0, n, SCALE_PAIRS)
    mean = float(np.mean(np.abs(np.asarray(X[first], dtype=np.float64)
                                - np.asarray(X[second], dtype=np.float64)).sum(axis=1)))
    return 1.0 / mean if mean > 0 else 1.0


def choose_kernel(search, state, sched):
    """Where FALKON is the search's one family on dense columns: the RBF's and the
    Laplacian's grids scored on one held-out part of a subsample of the searched
    columns (scaled by the learned widths, or in a learned metric's coordinates),
    within what the grid and the refit leave; the Laplacian kept (in
    ``state.space``) only where its best scored higher."""
    X = state.data.X
    if state.families != [FALKON.name]:
        sched.skip("kernel", "not needed: the kernel is chosen for the FALKON family alone")
        return
    if hasattr(X, "tocsr"):
        sched.skip("kernel", "not tried: sparse columns (the RBF kernel is kept)")
        return
    n = state.n
    factors = list(state.space.factors)
    reserve = grid_reserve(state, sched, n)
    granted = None
    if sched.end is not None:
        granted = min(KERNEL_SHARE * sched.budget_s, sched.left() - reserve)
        rows, fits = _sized(state, n, factors, granted)
        if not fits and len(factors) > KERNEL_FEW_FACTORS:
            # the middle gammas only, rather than no comparison (Beijing at 2 minutes:
            # 7 gammas on 2,352 rows priced 19.2 s against 18.0 s granted)
            few = middle_out(factors)[:KERNEL_FEW_FACTORS]
            rows_few, fits = _sized(state, n, few, granted)
            if fits:
                rows, factors = rows_few, sorted(few)
        if not fits:
            price = _cost(state, rows, factors)
            sched.skip("kernel", (
                f"skipped for time: both kernels' grids on {rows} rows are predicted at "
                f"{price:.1f} s, and {max(granted, 0.0):.1f} s are left beside the "
                f"grid's and the refit's {reserve:.1f} s"), predicted=price)
            return
    else:
        rows = int(min(n, KERNEL_MAX_ROWS))
    classifier = state.task == "classifier"
    seed = state.settings.random_state
    if rows < n:
        part = subsample_data(state.data, rows, seed, classifier)
        folds = subsample_folds(part, len(state.folds), seed, classifier)[:1]
    else:
        part, folds = state.data, state.folds[:1]
    if classifier:
        held = np.bincount(part.y_index[folds[0][1]], minlength=len(state.data.classes))
        if held.min() < KERNEL_LEAST_CLASS_ROWS:
            sched.skip("kernel", (
                f"not tried: the held-out part of {rows} rows holds {int(held.min())} of the "
                f"rarest class (< {KERNEL_LEAST_CLASS_ROWS}), too few to rank the kernels "
                "(the RBF kernel is kept)"))
            return
    references = {"rbf": state.space.gamma_ref, "laplacian": laplacian_gamma_ref(part.X, seed)}
    best, notes, kept = {}, [], "rbf"  # a stage stopped by its grant keeps RBF
    with sched.stage("kernel", reserve=reserve, seconds=granted) as run:
        deadline = None if sched.end is None else Deadline(run.until)
        for kernel in KERNEL_CHOICES:
            began = now()
            space = dataclasses.replace(state.space, kernel=kernel, factors=factors,
                                        gamma_ref=references[kernel])
            records, complete = run_family(FALKON.name, state.task, part, folds, space,
                                           state.settings, deadline, lambda records: None)
            state.n_scored += len(records)
            scores = [float(np.mean(r["scores"])) for r in records if r["scores"]]
            if scores and np.isfinite(np.nanmax(scores)):
                best[kernel] = float(np.nanmax(scores))
            notes.append(f"{kernel} {best.get(kernel, float('nan')):.4f} "
                         f"({len(records)} configurations{'' if complete else ', stopped'}, "
                         f"{now() - began:.1f} s)")
            if not complete:
                break
        kept = "laplacian" if best.get("laplacian", -np.inf) > best.get("rbf", np.inf) \
            else "rbf"
        few = "" if len(factors) == len(state.space.factors) else \
            f", the middle {len(factors)} gammas"
        run.note = (f"on {rows} rows{few}, one held-out part: " + ", ".join(notes)
                    + f": kept {kept}")
    if kept != state.space.kernel:
        state.space.kernel, state.space.gamma_ref = kept, references[kept]
        state.choices.append(f"the {kept} kernel (held-out {best[kept]:.4f} against "
                             f"{best['rbf']:.4f} for RBF on {rows} rows)")
