"""``cv_results_`` in :class:`sklearn.model_selection.GridSearchCV`'s format."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["PARAM_NAMES", "cv_results", "leaderboard", "edge_note"]

#: the searched parameters, in the order the tables show them
PARAM_NAMES = ("family", "kernel", "metric", "gamma", "C", "alpha", "n_components", "dtype",
               "class_weight", "n_leaves", "draw", "target")


def _masked(values):
    array = np.ma.MaskedArray(np.empty(len(values), dtype=object),
                              mask=[v is None for v in values])
    for i, v in enumerate(values):
        if v is not None:
            array[i] = v
    return array


def cv_results(records, n_splits, keys=None):
    """The dict of arrays ``GridSearchCV.cv_results_`` holds, from the search's records.

    Each record has ``params`` (dict), ``scores``, ``fit_times`` and
    ``score_times`` (one per fold), and ``rows`` where it was scored on a
    subsample (``n_resources``, as ``HalvingGridSearchCV`` says). A parameter a
    family does not have (``C`` for FALKON, ``alpha`` for the SVM) is masked, as
    in GridSearchCV over a list of grids.
    """
    scores = np.array([r["scores"] for r in records], dtype=np.float64).reshape(-1, n_splits)
    results = {}
    for key in ("fit_times", "score_times"):
        times = np.array([r[key] for r in records], dtype=np.float64).reshape(-1, n_splits)
        name = key[:-1]
        results[f"mean_{name}"] = times.mean(axis=1)
        results[f"std_{name}"] = times.std(axis=1)
    for name in PARAM_NAMES:
        if any(name in r["params"] for r in records):
            results[f"param_{name}"] = _masked([r["params"].get(name) for r in records])
    results["params"] = [dict(r["params"]) for r in records]
    if any("rows" in r for r in records):
        results["n_resources"] = np.array([r.get("rows", 0) for r in records], dtype=np.int64)
    for k in range(n_splits):
        results[f"split{k}_test_score"] = scores[:, k]
    mean = scores.mean(axis=1)
    results["mean_test_score"] = mean
    results["std_test_score"] = scores.std(axis=1)
    # GridSearchCV ranks a NaN score last; ``keys`` (the search's rule, where given) rank
    # in the mean's place
    rank_by = mean if keys is None else np.asarray(keys, dtype=np.float64)
    finite = np.where(np.isfinite(rank_by), rank_by, -np.inf)
    results["rank_test_score"] = rankdata(-finite, method="min").astype(np.int32)
    return results


def leaderboard(results, top=10):
    """The ``top`` configurations as text lines (rank, score +- std, parameters, fit time)."""
    order = np.argsort(results["rank_test_score"], kind="stable")[:top]
    rows = results.get("n_resources")
    lines = [f"{'rank':>4}  {'score':>15}  {'fit s':>7}  " + ("   rows  " if rows is not None
                                                               else "") + "parameters"]
    for i in order:
        params = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in results["params"][i].items())
        lines.append(f"{results['rank_test_score'][i]:>4}  "
                     f"{results['mean_test_score'][i]:.4f} +- {results['std_test_score'][i]:.4f}"
                     f"  {results['mean_fit_time'][i]:>7.3f}  "
                     + (f"{rows[i]:>7}  " if rows is not None else "") + params)
    return lines


def edge_note(results, best):
    """A line saying which of the best configuration's values sit on its grid's edge, or None.

    Within the best's family, a value (gamma, C, alpha) that is the smallest or
    the largest of several tried is an edge: the optimum may lie beyond it.
    """
    params = results["params"]
    mine = params[best]
    family = [p for p in params if p.get("family") == mine.get("family")]
    edges = []
    for name in ("gamma", "C", "alpha"):
        if name not in mine:
            continue
        values = sorted({p[name] for p in family if name in p})
        if len(values) < 2:
            continue
        if np.isclose(mine[name], values[0]):
            edges.append(f"{name}={mine[name]:.4g} is the smallest tried")
        elif np.isclose(mine[name], values[-1]):
            edges.append(f"{name}={mine[name]:.4g} is the largest tried")
    if not edges:
        return None
    return ("note: the best sits on the edge of its grid (" + "; ".join(edges)
            + "): a wider grid there may score better.")
