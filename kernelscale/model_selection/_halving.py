"""Successive halving over gamma: screen every gamma on a subsample, promote the best.

A gamma is the unit of shared work (one kernel matrix, or one set of
statistics, serves every C / alpha and every fold of it), so halving runs over
gammas: round ``r`` cross-validates the surviving gammas (each with its whole
C / alpha path) on ``n / eta^(R - r)`` rows drawn stratified, and keeps the
best ``1 / eta`` of them by their best score; the last round is the full data.
The cost is dominated by the last round, which sees only a few gammas: with the
default 7 gammas and ``eta = 3``, the full data see 1 gamma instead of 7.

Families are screened once, on one subsample small enough for the exact SVM's
grid (:func:`screen_families`): beyond the rows where the family rule searches
the exact SVM, its whole (gamma, C) grid still runs there, beside the other
families' on the same rows, and its best configuration is what the search then
challenges its winner with on all rows, where the exact SVM's measured cost
allows.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split

from .._clock import now

__all__ = ["EXACT_SCREEN_ROWS", "halving_schedule", "screen_families", "screen_gammas",
           "subsample_data", "subsample_folds"]

#: rows the families are screened on. The exact SVM's 7 x 7 grid, 5 folds, on 10,000 rows
#: of 28 features took 32.5 s on 2 cores, which at 1e5 rows and a 3-minute budget left
#: the challenger no time to fit (93.26% test against 93.57% when it had; see
#: benchmarks/HISTORY.md "At scale"); its cost grows with the rows squared
EXACT_SCREEN_ROWS = 5_000


def halving_schedule(n_rows, n_factors, eta, min_rows):
    """Row counts of the screening rounds (smallest first), before the full-data round."""
    rounds = math.ceil(math.log(n_factors, eta)) if n_factors > 1 else 0
    sizes = [int(n_rows / eta ** (rounds - r)) for r in range(rounds)]
    return [s for s in sizes if s >= min_rows and s < n_rows]


def subsample_data(data, size, seed, stratify):
    """``data`` on a random (stratified) subsample of ``size`` rows, in their order
    (``data`` itself where ``size`` is all of them)."""
    if size >= data.n:
        return data
    keep, _ = train_test_split(np.arange(data.n), train_size=size, random_state=seed,
                               stratify=data.y_index if stratify else None)
    return data.take(np.sort(keep))


def subsample_folds(part, n_splits, seed, classifier):
    """Shuffled (stratified) folds of a subsample."""
    splitter = (StratifiedKFold if classifier else KFold)(n_splits, shuffle=True,
                                                          random_state=seed)
    return list(splitter.split(part.X, part.y))


def _best_by_gamma(records, gamma_ref):
    best = {}
    for r in records:
        factor = r["params"]["gamma"] / gamma_ref
        best[factor] = max(best.get(factor, -np.inf), float(np.mean(r["scores"])))
    return best


def screen_families(run_family, task, families, data, space, settings, *, rows, n_splits,
                    deadline, log):
    """Every family's whole grid on one stratified subsample of ``rows`` rows.

    Returns
    -------
    best : dict
        ``{family: {"params": ..., "score": ...}}``, each family's best configuration
        (its mean held-out score) on the subsample; a family the deadline left
        unscored is absent.
    """
    classifier = task == "classifier"
    seed = settings.random_state
    part = subsample_data(data, rows, seed, classifier)
    folds = subsample_folds(part, n_splits, seed, classifier)
    best = {}
    for family in families:
        start = now()
        records, _ = run_family(family, task, part, folds, space, settings, deadline,
                                lambda records: None)
        if not records:
            continue
        top = max(records, key=lambda r: float(np.mean(r["scores"])))
        best[family] = {"params": dict(top["params"]), "score": float(np.mean(top["scores"]))}
        log({"stage": "families", "family": family, "rows": rows,
             "gammas": len(_best_by_gamma(records, space.gamma_ref)), "kept": 1,
             "best_score": best[family]["score"], "best_params": best[family]["params"],
             "seconds": now() - start})
    return best


def screen_gammas(run_family, task, family, data, space, settings, *, n_splits, deadline,
                  log, eta=3, afford=None, keep=None):
    """Screen the gammas of ``space`` on growing subsamples; the factors to fit on all rows.

    ``run_family`` is :func:`kernelscale.model_selection._engines.run_family`;
    ``log`` receives one dict per round (rows, gammas tried and kept, best
    score, seconds). The smallest round keeps at least 4 rows per fold of the
    rarest class (and 500 rows). ``afford(rows, n_gammas)``, where given, says
    whether a round fits the time left (screening stops at the first that does
    not); ``keep(records, rows)`` receives each round's cross-validated records
    as it ends (a time budget that ends later keeps the last).
    """
    classifier = task == "classifier"
    n = data.X.shape[0]
    p_min = np.bincount(data.y_index).min() / n if classifier else 1.0
    min_rows = max(500, int(np.ceil(4 * n_splits / p_min)))
    seed = settings.random_state
    factors = list(space.factors)
    for size in halving_schedule(n, len(factors), eta, min_rows):
        if afford is not None and not afford(size, len(factors)):
            break
        start = now()
        part = subsample_data(data, size, seed, classifier)
        folds = subsample_folds(part, n_splits, seed, classifier)
        records, _ = run_family(family, task, part, folds, space.with_factors(factors),
                                settings, deadline, lambda records: None)
        if not records:  # every gamma failed (each with its warning)
            break
        if keep is not None:
            keep(records, size)
        best = _best_by_gamma(records, space.gamma_ref)
        ranked = sorted(best, key=lambda f: -best[f])
        kept = ranked[:max(1, math.ceil(len(factors) / eta))]
        log({"stage": "gammas", "family": family, "rows": size, "gammas": len(best),
             "kept": len(kept), "best_score": best[ranked[0]],
             "seconds": now() - start})
        factors = [f for f in factors if any(np.isclose(f, k) for k in kept)]
        if len(factors) <= 1:
            break
    return factors
