"""SMO's working sets on a kernel matrix held whole: batches of rows, or the whole problem.

``smo`` picks its working set from the store it reads: batches of up to 256 variables
over a row cache, the whole problem when the store holds the problem's matrix (the
pair solver on the matrix, with LIBSVM's shrinking by compaction). This runs every
one-vs-one problem of a multiclass set both ways through ``smo`` on the same float32
matrix and tolerance (batches forced by a store that does not offer its matrix whole),
and ``smo_dense``, the same whole-problem case called on the array, and reports
seconds (medians of --repeats, interleaved), pair updates and the summed dual
objectives (equal to the tolerance: the same optimum).

Usage::

    python benchmarks/bench_engines.py [--datasets mnist10k classes26] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import load_line, machine_state, save
from sklearn.datasets import make_classification

from kernelscale.datasets import load_mnist10k
from kernelscale.kernels import make_kernel
from kernelscale.solvers import ovo_problems
from kernelscale.solvers.smo import MatrixCache, MatrixRows, smo, smo_dense, submatrix


def _data(name):
    if name == "mnist10k":  # the shapes experiment's MNIST-10k training rows, C = 10
        X, y, _, _ = load_mnist10k()
        return np.asarray(X[:8000], dtype=np.float64), y[:8000], 10.0
    # the shapes experiment's 26 classes x 16 features x 16,000 rows, C = 1
    X, y = make_classification(20_000, n_features=16, n_informative=12, n_classes=26,
                               n_clusters_per_class=1, random_state=0)
    return X[:16_000], y[:16_000], 1.0


class _Batched(MatrixCache):
    """The matrix, not offered whole: ``smo`` solves it by batched working sets."""

    def whole(self):
        return None


ENGINES = {"smo, batched working sets": "batched", "smo, the whole problem": "whole",
           "smo_dense": "dense"}


def _solve_all(engine, K, problems, C):
    start = time.perf_counter()
    updates, objective = 0, 0.0
    for members, y_pm, c_bounds in problems:
        block = K if members is None else submatrix(K, members)
        if ENGINES[engine] != "dense":
            rows = MatrixRows(block, block.shape[0], 2**26)
            store = (_Batched if ENGINES[engine] == "batched" else MatrixCache)(rows)
            res = smo(rows, store, y_pm, C * c_bounds, tol=1e-3)
        else:
            res = smo_dense(block, y_pm, C * c_bounds, tol=1e-3)
        updates += res["n_iter"]
        objective += res["objective"]
    return time.perf_counter() - start, updates, objective


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["mnist10k", "classes26"],
                        choices=["mnist10k", "classes26"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    before = machine_state()
    print(before)
    engines = list(ENGINES)
    records = {}
    for name in args.datasets:
        X, y, C = _data(name)
        classes, y_index = np.unique(y, return_inverse=True)
        K = make_kernel("rbf", X, gamma="scale").gram(X, dtype=np.float32)
        problems = list(ovo_problems(None, classes, y_index, np.ones(len(y))))
        runs = {e: [] for e in engines}
        for _ in range(args.repeats):
            for engine in engines:  # interleaved
                runs[engine].append(_solve_all(engine, K, problems, C))
        records[name] = {}
        for engine in engines:
            seconds = [r[0] for r in runs[engine]]
            records[name][engine] = {"seconds": float(np.median(seconds)), "runs_s": seconds,
                                     "pair_updates": runs[engine][0][1],
                                     "objective_sum": runs[engine][0][2]}
            print(f"{name}, {len(problems)} problems, {engine}: {np.median(seconds):.2f} s "
                  f"(runs {', '.join(f'{s:.2f}' for s in seconds)}), "
                  f"{runs[engine][0][1]} pair updates, objectives {runs[engine][0][2]:.6f}",
                  flush=True)
        seconds = {ENGINES[e]: records[name][e]["seconds"] for e in engines}
        records[name]["ratio_batched_over_whole"] = seconds["batched"] / seconds["whole"]
        records[name]["ratio_whole_over_smo_dense"] = seconds["whole"] / seconds["dense"]
        print(f"{name}: batched / whole = {seconds['batched'] / seconds['whole']:.2f}, "
              f"whole / smo_dense = {seconds['whole'] / seconds['dense']:.2f}", flush=True)
    after = machine_state()
    print(load_line(before, after))
    print(f"results: {save('engines', {'before': before, 'after': after, 'records': records})}")


if __name__ == "__main__":
    main()
