"""BLAS and numba threads on a busy machine: every core, or only the free ones (issue 44).

Beside two busy-loop processes on a 2-core machine, does a fit run faster on every
core's threads (each sharing its core with a loop) or on the cores the loops leave
free (here 1)? The issue saw FALKON slow 4.9x under such load on 2 threads and asked
for threads chosen from the free cores; this script measures both choices on that
fit, MNIST-10k ``NystromKernelRidgeClassifier()`` at its defaults:

- ``idle``: the machine as it is, 2 threads;
- ``busy, every core``: two busy loops pinned one per core, 2 threads;
- ``busy, free cores``: the same loops, 1 thread (the cores they leave free).

Medians of ``--repeats`` fits each, interleaved, the same centres (``random_state=0``).
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
    """One fit on ``threads`` BLAS / numba threads: (seconds, threads, test accuracy)."""
    import numba
    from threadpoolctl import threadpool_limits

    from kernelscale.models import NystromKernelRidgeClassifier

    limits = threadpool_limits(limits=threads, user_api="blas")
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        began = time.perf_counter()
        model = NystromKernelRidgeClassifier(random_state=0).fit(X, y)
        seconds = time.perf_counter() - began
    finally:
        limits.restore_original_limits()
        numba.set_num_threads(before)
    return seconds, threads, float(np.mean(model.predict(X_test) == y_test))


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
            cases["busy, free cores"].append(fit_once(X, y, X_test, y_test, 1))
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
