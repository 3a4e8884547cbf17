"""Helpers shared by the benchmark scripts: machine description, timing, output."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from kernelscale.bench import machine, timed  # noqa: F401  (re-exported for the scripts)

RESULTS = Path(__file__).resolve().parent / "results"


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
