"""Helpers shared by the benchmark scripts: machine description, timing, output."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from kernelscale.bench import machine, machine_load, timed  # noqa: F401  (re-exported)

RESULTS = Path(__file__).resolve().parent / "results"


def threads():
    """Threads each side may use: BLAS (threadpoolctl) and numba, as a dict."""
    import numba
    from threadpoolctl import threadpool_info

    blas = [f"{p.get('internal_api')} {p.get('num_threads')}" for p in threadpool_info()]
    out = {"blas": blas, "numba": numba.get_num_threads()}
    try:  # scikit-learn-intelex's oneDAL threads, where the extra is installed
        import daal4py

        out["onedal"] = daal4py.num_threads()
    except ImportError:  # pragma: no cover - the extra is not installed
        pass
    return out


def machine_state():
    """The machine, its load now and the threads, to record with every run."""
    return {**machine(), **machine_load(), "threads": threads()}


def load_line(before, after):
    """The load of a run, and a warning when it exceeded the cores (a shared VM)."""
    cores = before["cores"]
    text = (f"load (1-minute average): {before['load_1min']:.2f} before, "
            f"{after['load_1min']:.2f} after, {cores} cores")
    if max(before["load_1min"], after["load_1min"]) > cores:
        text += " -- WARNING: busier than its cores; these ratios are not ours alone"
    return text


def sklearnex_svc():
    """``sklearnex.svm.SVC`` (Intel's scikit-learn-intelex, a benchmark-only extra) or None."""
    try:
        from sklearnex.svm import SVC
    except ImportError:  # pragma: no cover - the extra is not installed
        return None
    return SVC


def save(name, payload):
    """Write ``payload`` as ``benchmarks/results/<name>.json`` and return the path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1))
    return path


def fit_predict(make, X_train, y_train, X_test, y_test):
    """Fit, predict and score one model; return its record."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model, fit_s = timed(make().fit, X_train, y_train)
    pred, predict_s = timed(model.predict, X_test)
    return model, {"fit_s": fit_s, "predict_s": predict_s, "total_s": fit_s + predict_s,
                   "accuracy": float(np.mean(pred == y_test))}


def contest(title, contenders, data, repeats, reference):
    """Run every contender ``repeats`` times, interleaved; print and return medians.

    ``reference`` names the contender the speed-ups are relative to.
    """
    runs = {label: [] for label, _ in contenders}
    for seed in range(repeats):
        for label, make in contenders:
            _, record = fit_predict(lambda m=make, s=seed: m(s), *data)
            runs[label].append(record)
            print(f"  [{title}] seed {seed} {label}: {record}", flush=True)
    summary = {}
    for label, records in runs.items():
        summary[label] = {key: float(np.median([r[key] for r in records]))
                          for key in ("fit_s", "predict_s", "total_s", "accuracy")}
        summary[label]["runs"] = records
    base = summary[reference]["total_s"]
    print(f"\n## {title} (medians of {repeats} runs)")
    print("| model | accuracy | fit s | predict s | fit+predict s | speed-up vs "
          f"{reference} |")
    print("|---|---|---|---|---|---|")
    for label, s in summary.items():
        print(f"| {label} | {s['accuracy']:.4f} | {s['fit_s']:.2f} | {s['predict_s']:.2f} "
              f"| {s['total_s']:.2f} | {base / s['total_s']:.1f}x |")
    return summary


def run_in_process(command, limit, **identity):
    """Run one measurement in its own process (its peak RSS its own) and return the record
    it printed as ``RESULT {json}``: or ``identity`` with the error, or that it was stopped
    after ``limit`` seconds. ``wall_s`` is added."""
    import os
    import subprocess
    import time

    began = time.perf_counter()
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=limit,
                             env={**os.environ, "PYTHONWARNINGS": "ignore"})
        found = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
        record = json.loads(found[-1][7:]) if found else {
            **identity, "error": (run.stderr.strip().splitlines() or ["?"])[-1]}
    except subprocess.TimeoutExpired:
        record = {**identity, "error": f"stopped after {limit:.0f} s"}
    record["wall_s"] = time.perf_counter() - began
    return record
