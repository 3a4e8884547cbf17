"""Peak memory of every budgeted path against its memory budget.

Each path runs in a fresh process (``--path NAME`` runs one), once on 400 rows
(numba's compiled code loads, modules import) and then measured: the script
reports the budget, the peak of Python / NumPy allocations (tracemalloc) above
what was held before the call, the peak RSS above the RSS before the call (the
peak reset after the warm-up; RSS also counts what tracemalloc does not see:
numba's and BLAS's own buffers, freed memory the allocator keeps), the bytes of
what the call returned
(the fitted model or the returned matrix, which the budget does not bound), and
the ratio ``peak / (budget + returned)``.

    python benchmarks/bench_memory.py --out memory           # every path
    python benchmarks/bench_memory.py --path kernel-svc-rows  # one path
    python benchmarks/bench_memory.py --path search-1e6       # KernelClassifierCV, 1e6 rows
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

MIB = 2**20


def _status(field):
    """A ``/proc/self/status`` field in bytes (``VmRSS``: now, ``VmHWM``: the peak)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def _reset_peak_rss():
    """Start the peak RSS afresh (Linux: ``5`` to ``clear_refs`` resets ``VmHWM``), so the
    warm-up's peak is not the path's."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def _classification(n, d=5, classes=2, seed=0):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n, n_features=d, n_informative=min(d, 5),
                               n_redundant=0, n_classes=classes, n_clusters_per_class=1,
                               random_state=seed)
    return X, y


def _regression(n, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)


def _paths():
    """name -> (budget bytes, a function of no argument that runs the path and returns
    what it produced). Data are built before the measurement starts."""
    import scipy.sparse as sp

    import kernelscale as ks
    from kernelscale.kernels import pairwise_kernel

    paths = {}

    def add(name, budget, make_data, run):
        paths[name] = (budget, make_data, run)

    add("kernel-svc-rows", 8 * MIB, lambda: _classification(3000),
        lambda d, b: ks.KernelSVC(memory_budget=b).fit(*d))
    add("kernel-svc-matrix", 96 * MIB, lambda: _classification(3000, classes=3),
        lambda d, b: ks.KernelSVC(memory_budget=b, n_jobs=2).fit(*d))
    add("kernel-svr-rows", 8 * MIB, lambda: _regression(3000),
        lambda d, b: ks.KernelSVR(memory_budget=b).fit(*d))
    add("kernel-svr-matrix", 48 * MIB, lambda: _regression(3000),
        lambda d, b: ks.KernelSVR(memory_budget=b).fit(*d))
    add("one-class-svm", 8 * MIB, lambda: _regression(3000)[:1],
        lambda d, b: ks.KernelOneClassSVM(nu=0.2, memory_budget=b).fit(*d))
    add("sparse-kernel", 1 * MIB,
        lambda: (sp.random(200, 20000, density=0.01, format="csr", random_state=0),),
        lambda d, b: pairwise_kernel(d[0], d[0], kernel="rbf", gamma=0.1, memory_budget=b))
    add("dense-kernel", 4 * MIB, lambda: (np.random.default_rng(0).random((2000, 300)),),
        lambda d, b: pairwise_kernel(d[0], d[0][:500], kernel="rbf", memory_budget=b))
    add("falkon-recompute", 16 * MIB, lambda: _regression(20000),
        lambda d, b: ks.NystromKernelRidge(n_components=1000, memory_budget=b,
                                           random_state=0).fit(*d))
    add("falkon-kept", 128 * MIB, lambda: _regression(20000),
        lambda d, b: ks.NystromKernelRidge(n_components=1000, memory_budget=b,
                                           random_state=0).fit(*d))
    add("nystroem-transform", 4 * MIB, lambda: _regression(20000)[:1],
        lambda d, b: ks.Nystroem(n_components=500, memory_budget=b,
                                 random_state=0).fit(d[0]).transform(d[0]))
    add("rff-transform", 4 * MIB, lambda: _regression(20000)[:1],
        lambda d, b: ks.RandomFourierFeatures(n_components=1000, memory_budget=b,
                                              random_state=0).fit(d[0]).transform(d[0]))
    add("approx-svr", 64 * MIB, lambda: _regression(20000),
        lambda d, b: ks.ApproxKernelSVR(n_components=500, memory_budget=b,
                                        random_state=0).fit(*d))
    add("approx-svc", 64 * MIB, lambda: _classification(20000, d=8),
        lambda d, b: ks.ApproxKernelSVC(n_components=500, memory_budget=b,
                                        random_state=0).fit(*d))
    add("grid-exact-matrix", 64 * MIB, lambda: _classification(1500, classes=3),
        lambda d, b: ks.KernelClassifierCV(families="exact-svm", memory_budget=b,
                                           n_jobs=2, random_state=0).fit(*d))
    add("grid-exact-rows", 4 * MIB, lambda: _classification(1500),
        lambda d, b: ks.KernelClassifierCV(families="exact-svm", memory_budget=b,
                                           random_state=0).fit(*d))
    add("grid-falkon", 8 * MIB, lambda: _classification(20000, d=8),
        lambda d, b: ks.KernelClassifierCV(families="falkon", n_components=200,
                                           memory_budget=b, random_state=0).fit(*d))
    add("grid-falkon-regression", 8 * MIB, lambda: _regression(20000),
        lambda d, b: ks.KernelRegressorCV(n_components=200, memory_budget=b,
                                          random_state=0).fit(*d))
    add("grid-nystrom-svm", 32 * MIB, lambda: _classification(8000, d=8),
        lambda d, b: ks.KernelClassifierCV(families="nystrom-svm", n_components=200,
                                           memory_budget=b, random_state=0).fit(*d))
    add("grid-rff-svm", 32 * MIB, lambda: _classification(8000, d=8),
        lambda d, b: ks.KernelClassifierCV(families="rff-svm", n_components=200,
                                           memory_budget=b, random_state=0).fit(*d))
    return paths


#: paths run only when named (minutes each): ``--path search-1e6``
LARGE = {
    "search-1e6": (None, lambda: _nonlinear(1_000_000),
                   lambda d, b: _large_search(*d)),
}


def _nonlinear(n):
    from kernelscale.datasets import make_nonlinear_problem

    return make_nonlinear_problem(n)


def _large_search(X, y):
    """The search the README recommends for large data, at the default budget."""
    from kernelscale import KernelClassifierCV
    from kernelscale.datasets import make_nonlinear_problem

    search = KernelClassifierCV(time_budget="3m", n_jobs=2, random_state=0).fit(X, y)
    X_test, y_test = make_nonlinear_problem(100_000, rows_seed=1)
    print(f"search {search.search_time_:.0f} s, refit {search.refit_time_:.0f} s, "
          f"best {search.best_params_}, test accuracy {search.score(X_test, y_test):.4f}",
          file=sys.stderr)
    return search


def measure(name):
    """Run one path in this process; return its record."""
    if name in LARGE:  # the default budget; no warm-up (compile time is seconds here)
        from kernelscale import get_config

        _, make_data, run = LARGE[name]
        budget = get_config()["memory_budget"]
        data = make_data()
        return _measured(name, budget, data, run)
    budget, make_data, run = _paths()[name]
    data = make_data()
    with warnings.catch_warnings():
        # load the compiled code (numba's cache) and import what the path imports first:
        # that is the library's, not the path's memory
        warnings.simplefilter("ignore")
        try:
            run(tuple(a[:400] for a in data), budget)
        except Exception:  # noqa: BLE001 - a warm-up on too few rows may fail; the real run says
            pass
    return _measured(name, budget, data, run)


def _measured(name, budget, data, run):
    gc.collect()
    _reset_peak_rss()
    rss_before = _status("VmRSS")
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(data, budget)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    rss_peak = _status("VmHWM")
    returned = len(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    return {"path": name, "budget": budget, "peak_traced": peak,
            "peak_rss_above_start": max(0, rss_peak - rss_before), "returned": returned,
            "ratio": peak / (budget + returned), "seconds": seconds,
            "warnings": sorted({str(w.message)[:160] for w in caught})}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", help="run one path in this process (prints JSON)")
    parser.add_argument("--out", default=None, help="results/<OUT>.json")
    args = parser.parse_args(argv)
    if args.path:
        print(json.dumps(measure(args.path)))
        return 0
    from _common import machine_state, save

    records = []
    state = machine_state()
    for name in _paths():
        out = subprocess.run([sys.executable, __file__, "--path", name], capture_output=True,
                             text=True, check=False)
        if out.returncode:
            print(f"{name}: failed\n{out.stderr[-2000:]}")
            records.append({"path": name, "error": out.stderr[-2000:]})
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        records.append(r)
        print(f"{name:24s} budget {r['budget'] / MIB:7.1f}M  traced {r['peak_traced'] / MIB:8.1f}M"
              f"  RSS {r['peak_rss_above_start'] / MIB:8.1f}M  returned "
              f"{r['returned'] / MIB:6.1f}M  ratio {r['ratio']:5.2f}  {r['seconds']:6.1f} s",
              flush=True)
    if args.out:
        print(save(args.out, {"machine": state, "records": records}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
