"""A learned metric against diagonal widths on a planted subspace (issue 45).

The label is a smooth function of 2 random directions of 20 standard-normal columns
(``bench_tabular.py``'s ``planted`` problem). A diagonal width can shrink a column but
cannot turn the columns onto those directions; the AGOP metric of
:class:`kernelscale.KernelMetric` can. For each training size this script fits

- ``KernelWidths`` (diagonal) and ``KernelMetric`` (AGOP) at their defaults,
- the largest principal angle between the metric's top-2 directions and the planted
  ones (the goal: < 10 degrees),
- ``NystromKernelRidgeClassifier(n_components=1000)`` on each learned kernel and on the
  isotropic one, scored on 20,000 fresh rows (the goal: the metric >= the widths + 2 points),
- scikit-learn's ``HistGradientBoostingClassifier`` at its defaults on the same rows, the
  model a tabular user picks (its trees cut along columns, not along the directions),

with their fit seconds, the threads of each side and the machine's load (before and
after). Results: ``benchmarks/results/metric.json``.

Usage::

    python benchmarks/bench_metric.py --rows 12000 50000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, machine_state  # noqa: E402


def planted(n, seed, d=20):
    """``n`` rows of the planted-subspace problem (the same directions for every seed)."""
    directions = np.linalg.qr(np.random.default_rng(0).normal(size=(d, 2)))[0]
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    P = X @ directions
    f = np.sin(2 * P[:, 0]) + np.cos(1.5 * P[:, 1]) * P[:, 0]
    return X, (f > 0.3).astype(int), directions


def measure(rows):
    from scipy.linalg import subspace_angles

    from kernelscale import KernelMetric, KernelWidths, NystromKernelRidgeClassifier

    X, y, directions = planted(rows, 1)
    X_test, y_test, _ = planted(20_000, 2)

    def score(gamma):
        began = time.perf_counter()
        model = NystromKernelRidgeClassifier(gamma=gamma, n_components=1000,
                                             random_state=0).fit(X, y)
        return float(model.score(X_test, y_test)), time.perf_counter() - began

    began = time.perf_counter()
    widths = KernelWidths(random_state=0).fit(X, y)
    widths_s = time.perf_counter() - began
    began = time.perf_counter()
    metric = KernelMetric(random_state=0).fit(X, y)
    metric_s = time.perf_counter() - began
    angles = np.degrees(subspace_angles(metric.directions_[:2].T, directions))
    iso, _ = score("scale")
    diag, _ = score(widths.gamma_)
    agop, fit_s = score(metric.metric_)
    from sklearn.ensemble import HistGradientBoostingClassifier

    began = time.perf_counter()
    hgb = HistGradientBoostingClassifier(random_state=0).fit(X, y)
    hgb_s = time.perf_counter() - began
    return {"rows": rows, "largest_angle_deg": float(angles.max()),
            "accuracy": {"isotropic": iso, "widths": diag, "metric": agop,
                         "hgb": float(hgb.score(X_test, y_test))},
            "learn_s": {"widths": widths_s, "metric": metric_s}, "model_fit_s": fit_s,
            "hgb_fit_s": hgb_s, "metric_rounds": int(metric.best_round_)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[12_000, 50_000])
    args = parser.parse_args(argv)
    before = machine_state()
    records = [measure(rows) for rows in args.rows]
    after = machine_state()
    print(f"threads: ours and HGB {before['threads']}; 1-minute load before "
          f"{before['load_1min']:.2f}, after {after['load_1min']:.2f}")
    print("| rows | largest angle | isotropic | widths | metric | HGB | metric - widths | "
          "learn s (widths / metric) | HGB fit s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in records:
        a = r["accuracy"]
        print(f"| {r['rows']:,} | {r['largest_angle_deg']:.1f} deg | {a['isotropic']:.4f} | "
              f"{a['widths']:.4f} | {a['metric']:.4f} | {a['hgb']:.4f} | "
              f"{a['metric'] - a['widths']:+.4f} | {r['learn_s']['widths']:.1f} / "
              f"{r['learn_s']['metric']:.1f} | {r['hgb_fit_s']:.1f} |")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "metric.json").write_text(json.dumps(
        {"command": "python benchmarks/bench_metric.py " + " ".join(argv or sys.argv[1:]),
         "before": before, "after": after, "records": records}, indent=1))


if __name__ == "__main__":
    main()
