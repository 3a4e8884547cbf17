"""Exact epsilon-SVR and one-class SVM against LIBSVM (scikit-learn) and Intel's sklearnex.

Experiments (fit + predict, same C / epsilon / nu / gamma for every side, interleaved):

``svr``        Friedman #1 regression (10 features, noise 1, targets standardised), --rows
               training rows + 2,000 test rows: ``KernelSVR`` vs ``sklearnex.svm.SVR``
               (oneDAL; a benchmark-only extra) and ``sklearn.svm.SVR`` (LIBSVM), 256 MB
               cache each; ``ApproxKernelSVR`` (Nystroem 1,000) beside them. Test MSE,
               seconds, support vectors, and the largest prediction difference to LIBSVM's.
``approx-svr`` the ``ApproxKernelSVR`` rows of ``svr`` (both losses) beside sklearnex's SVR.
``one-class``  the same rows: ``KernelOneClassSVM`` vs ``sklearn.svm.OneClassSVM`` (sklearnex
               has none) and ``ApproxKernelOneClassSVM``: seconds, share predicted inside,
               agreement of the labels with LIBSVM's, largest decision-function difference.

LIBSVM's SVR takes minutes at 20,000 rows; ``--peer-repeats`` (default 1) sets its runs
apart from the others' ``--repeats`` (default 3).

Usage::

    python benchmarks/bench_svr.py [--experiments svr one-class] [--rows 20000]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
from _common import load_line, machine_state, save
from sklearn.datasets import make_friedman1
from sklearn.svm import SVR, OneClassSVM

from kernelscale import ApproxKernelOneClassSVM, ApproxKernelSVR, KernelOneClassSVM, KernelSVR

C, EPSILON, NU, CACHE_MB = 10.0, 0.1, 0.1, 256


def data(rows):
    X, y = make_friedman1(n_samples=rows + 2000, n_features=10, noise=1.0, random_state=0)
    y = (y - y.mean()) / y.std()
    return X[:rows], y[:rows], X[rows:], y[rows:]


def _run(make, fit_args, X_test, what):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(*fit_args)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    out = getattr(model, what)(X_test)
    return model, out, fit_s, time.perf_counter() - start


def _median_runs(contenders, fit_args, X_test, what, record):
    results = {label: [] for label, _, _ in contenders}
    outputs = {}
    for r in range(max(reps for _, _, reps in contenders)):
        for label, make, reps in contenders:
            if r >= reps:
                continue
            model, out, fit_s, predict_s = _run(make, fit_args, X_test, what)
            outputs[label] = (model, out)
            rec = {"fit_s": fit_s, "predict_s": predict_s, "total_s": fit_s + predict_s,
                   **record(model, out)}
            results[label].append(rec)
            print(f"  run {r} {label}: {rec}", flush=True)
    summary = {label: {k: float(np.median([x[k] for x in recs])) for k in recs[0]}
               | {"runs": len(recs)} for label, recs in results.items() if recs}
    return summary, outputs


def svr_experiment(rows, repeats, peer_repeats, approx_only=False):
    from sklearnex.svm import SVR as XSVR

    X, y, X_test, y_test = data(rows)
    contenders = [
        ("kernelscale KernelSVR", lambda: KernelSVR(C=C, epsilon=EPSILON), repeats),
        ("sklearnex SVR", lambda: XSVR(C=C, epsilon=EPSILON, cache_size=CACHE_MB), repeats),
        ("sklearn SVR", lambda: SVR(C=C, epsilon=EPSILON, cache_size=CACHE_MB), peer_repeats),
        ("kernelscale ApproxKernelSVR (Nystroem 1000)",
         lambda: ApproxKernelSVR(C=C, epsilon=EPSILON, n_components=1000, random_state=0,
                                 loss="epsilon_insensitive"), repeats),
        ("kernelscale ApproxKernelSVR (Nystroem 1000, squared loss)",
         lambda: ApproxKernelSVR(C=C, epsilon=EPSILON, n_components=1000, random_state=0,
                                 loss="squared_epsilon_insensitive"), repeats),
    ]

    def record(model, pred):
        return {"test_mse": float(np.mean((pred - y_test) ** 2)),
                "n_support": float(getattr(model, "support_", np.empty(0)).size)}

    if approx_only:
        # the approximate models beside the strongest peer, in the same run
        contenders = [c for c in contenders if "Approx" in c[0] or "sklearnex" in c[0]]
        summary = _median_runs(contenders, (X, y), X_test, "predict", record)[0]
        for label in [k for k in summary if "Approx" in k]:
            summary[f"{label} speedup vs sklearnex SVR"] = (
                summary["sklearnex SVR"]["total_s"] / summary[label]["total_s"])
        return summary
    summary, outputs = _median_runs(contenders, (X, y), X_test, "predict", record)
    ref = outputs["sklearn SVR"][1]
    for label in summary:
        summary[label]["max_abs_prediction_diff_vs_libsvm"] = float(
            np.abs(outputs[label][1] - ref).max())
    ours = summary["kernelscale KernelSVR"]["total_s"]
    for peer in ("sklearnex SVR", "sklearn SVR"):
        summary[f"speedup vs {peer}"] = summary[peer]["total_s"] / ours
    return summary


def one_class_experiment(rows, repeats, peer_repeats):
    X, _, X_test, _ = data(rows)
    contenders = [
        ("kernelscale KernelOneClassSVM", lambda: KernelOneClassSVM(nu=NU), repeats),
        ("sklearn OneClassSVM", lambda: OneClassSVM(nu=NU, cache_size=CACHE_MB), peer_repeats),
        ("kernelscale ApproxKernelOneClassSVM (Nystroem 1000)",
         lambda: ApproxKernelOneClassSVM(nu=NU, n_components=1000, random_state=0), repeats),
    ]

    def record(model, dec):
        return {"inside_share": float(np.mean(dec > 0))}

    summary, outputs = _median_runs(contenders, (X,), X_test, "decision_function",
                                    record)
    ref = outputs["sklearn OneClassSVM"][1]
    for label in summary:
        dec = outputs[label][1]
        summary[label]["label_agreement_vs_libsvm"] = float(np.mean((dec > 0) == (ref > 0)))
        summary[label]["max_abs_decision_diff_vs_libsvm"] = float(np.abs(dec - ref).max())
    summary["speedup vs sklearn OneClassSVM"] = (
        summary["sklearn OneClassSVM"]["total_s"]
        / summary["kernelscale KernelOneClassSVM"]["total_s"])
    return summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--experiments", nargs="+", default=["svr", "one-class"],
                   choices=["svr", "one-class", "approx-svr"])
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--peer-repeats", type=int, default=1)
    args = p.parse_args(argv)
    before = machine_state()
    results = {"command": "python benchmarks/bench_svr.py " + " ".join(argv or sys.argv[1:]),
               "rows": args.rows, "C": C, "epsilon": EPSILON, "nu": NU, "gamma": "scale",
               "machine_before": before}
    for name in args.experiments:
        print(f"[{name}] {args.rows} training rows", flush=True)
        run = {"svr": svr_experiment, "one-class": one_class_experiment,
               "approx-svr": lambda *a: svr_experiment(*a, approx_only=True)}[name]
        results[name] = run(args.rows, args.repeats, args.peer_repeats)
        print(results[name], flush=True)
    after = machine_state()
    results["machine_after"] = after
    results["load"] = load_line(before, after)
    print(results["load"])
    print("written", save(f"{'_'.join(args.experiments)}_{args.rows}", results))


if __name__ == "__main__":
    main()
