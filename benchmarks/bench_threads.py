"""BLAS and numba threads on a busy machine: fixed at every core, or the free cores (issue 44).

Beside two busy-loop processes on a 2-core machine, a BLAS product on 2 threads waits
for its slower thread, which the operating system keeps descheduling; on 1 thread it
does not. The search therefore sets BLAS's and numba's threads from the cores the
rest of the machine leaves free (:class:`kernelscale._parallel.ThreadGovernor`,
re-read as its units end). This script measures what that choice is worth on the
fit the issue named: MNIST-10k ``NystromKernelRidgeClassifier()`` at its defaults,

- ``idle``: the machine as it is, every core's threads (the governor's choice there);
- ``busy, every core``: two busy loops pinned one per core, threads left at every core
  (before the governor);
- ``busy, free cores``: the same loops, threads set by the governor from its
  measured load (after).

Medians of ``--repeats`` fits each, interleaved; test accuracy checked equal.
Results: ``benchmarks/results/threads.json``.

Usage::

    python benchmarks/bench_threads.py --repeats 5
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
from bench_budget import busy_loops  # noqa: E402


def fit_once(X, y, X_test, y_test, threads):
    """One fit on ``threads`` BLAS / numba threads (None: the governor's choice)."""
    import numba
    from threadpoolctl import threadpool_limits

    from kernelscale._parallel import LoadMeter, ThreadGovernor
    from kernelscale.models import NystromKernelRidgeClassifier

    governor = None
    if threads is None:
        meter = LoadMeter()
        time.sleep(1.0)  # one interval of load measured, as a search has after its first unit
        governor = ThreadGovernor(meter)
        used = governor.update()
    else:
        limits = threadpool_limits(limits=threads, user_api="blas")
        before = numba.get_num_threads()
        numba.set_num_threads(threads)
        used = threads
    try:
        began = time.perf_counter()
        model = NystromKernelRidgeClassifier().fit(X, y)
        seconds = time.perf_counter() - began
    finally:
        if governor is not None:
            governor.restore()
        else:
            limits.restore_original_limits()
            numba.set_num_threads(before)
    return seconds, used, float(np.mean(model.predict(X_test) == y_test))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    from kernelscale.datasets import load_mnist10k

    X, y, X_test, y_test = load_mnist10k()
    fit_once(X[:2000], y[:2000], X_test, y_test, 2)  # compiling, not measured
    cases = {"idle": [], "busy, every core": [], "busy, free cores": []}
    state = machine_state()
    for _ in range(args.repeats):
        cases["idle"].append(fit_once(X, y, X_test, y_test, 2))
        loops = busy_loops()
        try:
            cases["busy, every core"].append(fit_once(X, y, X_test, y_test, 2))
            cases["busy, free cores"].append(fit_once(X, y, X_test, y_test, None))
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()
        time.sleep(2.0)  # the loops' cores free again before the idle fit
    rows = {}
    for name, runs in cases.items():
        seconds = [r[0] for r in runs]
        rows[name] = {"median_s": float(np.median(seconds)), "runs_s": seconds,
                      "threads": sorted({r[1] for r in runs}),
                      "accuracy": sorted({round(r[2], 4) for r in runs})}
    idle = rows["idle"]["median_s"]
    print("| case | threads | fit s (median) | / idle | test accuracy |")
    print("|---|---|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['threads']} | {row['median_s']:.2f} | "
              f"{row['median_s'] / idle:.2f} | {row['accuracy']} |")
    ratio = rows["busy, free cores"]["median_s"] / rows["busy, every core"]["median_s"]
    print(f"busy: free cores / every core = {ratio:.2f}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "threads.json").write_text(json.dumps(
        {"command": "python benchmarks/bench_threads.py " + " ".join(argv or sys.argv[1:]),
         "machine": state, "cases": rows, "free_over_every": ratio}, indent=1))


if __name__ == "__main__":
    main()
