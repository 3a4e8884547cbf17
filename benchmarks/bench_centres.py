"""FALKON's capacity: tens of thousands of centres in float32 within the memory budget (issue 35).

``NystromKernelRidgeClassifier(n_components=m)`` on ``make_nonlinear_problem(--rows)``
with the kernel the learned widths find there (RBF on the 6 informative
features: a per-feature ``gamma``, 0 on the 22 noise columns), for each ``m`` in
its own process (its peak RSS is its own): fit seconds, test accuracy (a fresh
draw of 100,000 rows), peak RSS, and the memory plan (the m x m factors in the
kernel's dtype; ``K(X, C)`` kept or recomputed in blocks per CG step).

Usage::

    python benchmarks/bench_centres.py --rows 100000 --centres 2000 5000 10000 20000
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_line, machine_state, run_in_process, save  # noqa: E402


def one(rows, m, budget):
    from kernelscale import NystromKernelRidgeClassifier
    from kernelscale.datasets import make_nonlinear_problem

    X, y = make_nonlinear_problem(rows)
    X_test, y_test = make_nonlinear_problem(100_000, rows_seed=1)
    gamma = np.zeros(X.shape[1])
    gamma[:6] = 1.0 / (6 * X[:, :6].var())
    model = NystromKernelRidgeClassifier(n_components=m, gamma=gamma, alpha=1e-5 * rows,
                                         dtype="float32", memory_budget=budget,
                                         random_state=0)
    began = time.perf_counter()
    model.fit(X, y)
    fit_s = time.perf_counter() - began
    began = time.perf_counter()
    accuracy = float(np.mean(model.predict(X_test) == y_test))
    plan = model.memory_plan_
    print("RESULT " + json.dumps({
        "n_components": m, "rows": rows, "fit_s": fit_s,
        "predict_s": time.perf_counter() - began, "accuracy": accuracy,
        "dtype": "float32",
        "plan": str(plan.choice) if plan is not None else None,
        "plan_bytes": {k: int(v) for k, v in plan.parts.items()} if plan is not None else None,
        "budget_gb": plan.budget / 2**30 if plan is not None else None,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "data_gb": (X.nbytes + X_test.nbytes) / 2**30}), flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--centres", type=int, nargs="+", default=[2000, 5000, 10000, 20000])
    p.add_argument("--memory-budget", default=None, help="(default: the library's)")
    p.add_argument("--limit", type=float, default=1200, help="seconds per fit before it is "
                   "stopped (default: 1200)")
    p.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        return one(args.rows, args.one, args.memory_budget)
    before = machine_state()
    records = []
    for m in args.centres:
        command = [sys.executable, __file__, "--rows", str(args.rows), "--one", str(m)]
        if args.memory_budget:
            command += ["--memory-budget", args.memory_budget]
        record = run_in_process(command, args.limit, n_components=m)
        records.append(record)
        print(json.dumps({k: v for k, v in record.items() if k != "plan_bytes"}), flush=True)
    after = machine_state()
    print(load_line(before, after))
    print("saved", save("centres", {
        "command": "python benchmarks/bench_centres.py " + " ".join(argv or sys.argv[1:]),
        "machine_before": before, "machine_after": after, "records": records}))


if __name__ == "__main__":
    main()
