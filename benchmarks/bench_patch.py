"""scikit-learn code run unchanged: without a patch, with ``kernelscale.patch_sklearn()``
and with scikit-learn-intelex's ``patch_sklearn()``, in the same run.

The seed experiments' code (``SVC``, ``Nystroem`` + ``LinearSVC``, ``RBFSampler`` +
``LinearSVC``, ``GridSearchCV(SVC)``) on a9a (the first 20,000 training rows, the
test file to score), and the small problems where most scikit-learn code lives
(``SVC`` on breast_cancer and on 2,000 rows of a9a, a 3 x 3 ``GridSearchCV(SVC)`` on
breast_cancer, each a ``StandardScaler`` pipeline where the data are not scaled).
Each variant runs in a process of its own (a patch is process-wide): one warm-up
call (numba loads its cache, sklearnex its library), then ``--repeats`` timed calls
(more for the small problems: ``SMALL_REPEATS``) whose median is reported, with the
first call's time beside it. Each call's ``fit`` is timed on its own (the goals are on
it), and with the scoring of the test rows (the patches route the prediction too).
``--loads busy`` runs everything again beside two busy-loop processes, one pinned to each core.
``--regions`` measures a guarded parallel kernel function against its serial
compilation at growing sizes, idle and busy: where ``kernelscale._parallel.SERIAL_BELOW``
comes from.

Usage::

    python benchmarks/bench_patch.py --loads idle busy
    python benchmarks/bench_patch.py --regions
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from _common import load_line, machine_state, run_in_process, save
from bench_budget import busy_loops

VARIANTS = ("scikit-learn", "kernelscale", "sklearnex")
EXPERIMENTS = {
    # name: (what the code is, data, goal on patched / scikit-learn time)
    "svc-a9a-20k": ("SVC(kernel='rbf', gamma='scale') on 20,000 rows of a9a", "a9a", 0.5),
    "nystroem-linearsvc": ("Nystroem(n_components=1000) + LinearSVC on 20,000 rows of a9a",
                           "a9a", None),
    "rbfsampler-linearsvc": ("RBFSampler(n_components=1000) + LinearSVC on 20,000 rows of "
                             "a9a", "a9a", None),
    "grid-a9a-5k": ("GridSearchCV(SVC(), 3 x 3 C x gamma, 3 folds) on 5,000 rows of a9a",
                    "a9a", None),
    "svc-breast-cancer": ("StandardScaler + SVC on breast_cancer (569 rows)", "small", 1.0),
    "svc-a9a-2k": ("SVC on 2,000 rows of a9a", "a9a", 1.0),
    "grid-breast-cancer": ("GridSearchCV(StandardScaler + SVC, 3 x 3, 5 folds) on "
                           "breast_cancer", "small", 1.0),
}


#: the timed calls of the small problems (at least; ``--repeats`` for the rest)
SMALL_REPEATS = {"svc-breast-cancer": 50, "grid-breast-cancer": 10, "svc-a9a-2k": 10}


def _data(name):
    from kernelscale.datasets import load_a9a

    if name == "small":
        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import train_test_split

        X, y = load_breast_cancer(return_X_y=True)
        return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    X, y, X_test, y_test = load_a9a()
    return X.toarray() if hasattr(X, "toarray") else X, X_test.toarray() if hasattr(
        X_test, "toarray") else X_test, y, y_test


def _experiment(name, X, X_test, y, y_test):
    """The unchanged scikit-learn code of ``name``: a callable returning the test score."""
    from sklearn.kernel_approximation import Nystroem, RBFSampler
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, LinearSVC

    grid = {"svc__C": [0.1, 1.0, 10.0], "svc__gamma": ["scale", 0.01, 0.1]}
    if name == "svc-a9a-20k":
        model, rows = SVC(kernel="rbf", gamma="scale"), 20_000
    elif name == "nystroem-linearsvc":
        model = make_pipeline(Nystroem(n_components=1000, gamma=0.05, random_state=0),
                              LinearSVC())
        rows = 20_000
    elif name == "rbfsampler-linearsvc":
        model = make_pipeline(RBFSampler(n_components=1000, gamma=0.05, random_state=0),
                              LinearSVC())
        rows = 20_000
    elif name == "grid-a9a-5k":
        model, rows = GridSearchCV(make_pipeline(SVC()), grid, cv=3), 5_000
    elif name == "svc-breast-cancer":
        model, rows = make_pipeline(StandardScaler(), SVC()), None
    elif name == "svc-a9a-2k":
        model, rows = SVC(), 2_000
    else:
        model = GridSearchCV(make_pipeline(StandardScaler(), SVC()), grid, cv=5)
        rows = None
    X, y = (X, y) if rows is None else (X[:rows], y[:rows])

    def run():
        began = time.perf_counter()
        model.fit(X, y)
        fitted = time.perf_counter() - began
        return float(model.score(X_test, y_test)), fitted

    return run


def one(variant, name, repeats):
    """Run ``name`` under ``variant`` in this process; print ``RESULT {json}``."""
    if variant == "kernelscale":
        import kernelscale

        kernelscale.patch_sklearn()
    elif variant == "sklearnex":
        from sklearnex import patch_sklearn

        patch_sklearn(verbose=False)
    import warnings

    warnings.simplefilter("ignore")
    run = _experiment(name, *_data(EXPERIMENTS[name][1]))
    # milliseconds vary by tenths from call to call: small problems get more calls
    repeats = max(repeats, SMALL_REPEATS.get(name, 0))
    began = time.perf_counter()
    score, first_fit = run()
    first = time.perf_counter() - began
    times, fits = [], []
    for _ in range(repeats):
        began = time.perf_counter()
        score, fit_s = run()
        times.append(time.perf_counter() - began)
        fits.append(fit_s)
    counts = {}
    if variant == "kernelscale":
        import kernelscale.patch

        counts = kernelscale.patch.fit_counts()
    print("RESULT " + json.dumps({"variant": variant, "experiment": name, "score": score,
                                  "first_s": first, "first_fit_s": first_fit,
                                  "times_s": times, "median_s": float(np.median(times)),
                                  "fit_s": fits, "median_fit_s": float(np.median(fits)),
                                  "routes": counts}))


def regions(sizes, repeats=50):
    """Seconds per call of a guarded kernel function, parallel and serial, per size."""
    from kernelscale.kernels._compiled import rbf_exponent

    parallel, serial = rbf_exponent.dispatcher, rbf_exponent.serial()
    rows = []
    for n in sizes:
        out = np.random.default_rng(0).random((n, n))
        x, y = np.ones(n), np.ones(n)
        for fn in (parallel, serial):
            fn(out.copy(), x, y, -1e300)  # compiled / loaded
        timing = {}
        for label, fn in (("parallel", parallel), ("serial", serial)):
            calls = []
            for _ in range(repeats):
                block = out.copy()
                began = time.perf_counter()
                fn(block, x, y, -1e300)
                calls.append(time.perf_counter() - began)
            timing[label] = float(np.median(calls))
        rows.append({"elements": n * n, **timing})
        print(f"  {n * n:>9d} elements: parallel {timing['parallel'] * 1e6:9.1f} us, "
              f"serial {timing['serial'] * 1e6:9.1f} us", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", nargs="+", default=list(EXPERIMENTS),
                        choices=list(EXPERIMENTS))
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--loads", nargs="+", default=["idle"], choices=["idle", "busy"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--regions", action="store_true")
    parser.add_argument("--one", nargs=2, metavar=("VARIANT", "EXPERIMENT"))
    parser.add_argument("--out", default="patch")
    args = parser.parse_args()
    if args.one:
        return one(args.one[0], args.one[1], args.repeats)
    command = "python benchmarks/bench_patch.py " + " ".join(sys.argv[1:])
    if args.regions:
        report = {"command": command, "machine": machine_state()}
        for load in args.loads:
            loops = busy_loops() if load == "busy" else []
            try:
                print(f"# {load}")
                report[load] = regions([16, 32, 64, 128, 256, 512, 1024])
            finally:
                for loop in loops:
                    loop.kill()
        print("saved", save(args.out + "_regions", report))
        return None
    before = machine_state()
    records = []
    for load in args.loads:
        loops = busy_loops() if load == "busy" else []
        try:
            for name in args.experiments:
                for variant in args.variants:
                    record = run_in_process(
                        [sys.executable, __file__, "--one", variant, name, "--repeats",
                         str(args.repeats)], 3600, variant=variant, experiment=name)
                    record["load"] = load
                    records.append(record)
                    print(json.dumps(record), flush=True)
        finally:
            for loop in loops:
                loop.kill()
    after = machine_state()
    print()
    print(load_line(before, after))
    print("| experiment | load | variant | test score | fit s | fit + score s | first "
          "call s | fit ratio to scikit-learn | fit + score ratio | goal (fit ratio) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for load in args.loads:
        for name in args.experiments:
            base = next((r for r in records if r["experiment"] == name and r["load"] == load
                         and r["variant"] == "scikit-learn" and "median_s" in r), None)
            for r in (r for r in records if r["experiment"] == name and r["load"] == load):
                if "median_s" not in r:
                    print(f"| {name} | {load} | {r['variant']} | {r.get('error')} |")
                    continue
                fit_ratio = r["median_fit_s"] / base["median_fit_s"] if base else float("nan")
                ratio = r["median_s"] / base["median_s"] if base else float("nan")
                goal = EXPERIMENTS[name][2]
                print(f"| {name} | {load} | {r['variant']} | {r['score']:.4f} | "
                      f"{r['median_fit_s']:.4f} | {r['median_s']:.4f} | {r['first_s']:.3f} | "
                      f"{fit_ratio:.2f} | {ratio:.2f} | "
                      f"{'' if goal is None or r['variant'] != 'kernelscale' else f'<= {goal}'}"
                      " |")
    print("saved", save(args.out, {"command": command, "before": before, "after": after,
                                   "records": records}))
    return None


if __name__ == "__main__":
    main()
