"""The anytime search under its time budget, on an idle and on a loaded machine (issue 44).

Every run is ``KernelClassifierCV`` / ``KernelRegressorCV(time_budget=B)`` at its
defaults, in its own process, on one data set at one budget, twice: on the idle
machine, and with two busy-loop processes pinned beside it, one per core (the
machine's load made on purpose, as a laptop with a browser or a shared server). Each
record has the fit's wall time against the budget (the promise: wall <= budget + 5%,
+ 2 s under a minute), whether a model came back, its test score, where the time went
(``stages_``), the model's origin (first model, refit, ...), the load measured during
the run and the peak RSS. The report puts the busy run beside the idle one: the
score lost under load.

Data sets: ``nonlinear-N`` (``make_nonlinear_problem(N)``, a fresh test draw),
``bio`` (ROC AUC, split by protein), ``beijing`` (R^2 of log1p(PM2.5), split by time),
``diamonds`` (R^2 of log price, ordered categories as their ranks, a random 20% held
out), and three tables read as a user reads them (pandas, text as categories):
``bank`` (bank marketing without the call's duration; accuracy), ``california``
(R^2 of log house value) and ``electricity`` (accuracy, split by time);
``diamonds-raw``, ``california-raw`` and ``beijing-raw``: their targets as the files
give them (price, house value, PM2.5), not their logs. Results:
``benchmarks/results/budget.json`` (merged run by run).

Usage::

    python benchmarks/bench_budget.py --budgets 30s 2m --loads idle busy
    python benchmarks/bench_budget.py --datasets nonlinear-1000000 --budgets 10m
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, machine_state, run_in_process  # noqa: E402
from bench_scale import LARGE, SCORING  # noqa: E402
from bench_scale import load as load_scale  # noqa: E402

DATASETS = ["nonlinear-10000", "nonlinear-100000", "nonlinear-1000000", "bio", "beijing",
            "diamonds", "bank", "california", "electricity"]
BUDGETS = ["30s", "2m", "10m"]
#: diamonds' ordered categories, worst first
ORDERS = {"cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
          "color": ["J", "I", "H", "G", "F", "E", "D"],
          "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]}


def load(name, data_dir=LARGE):
    """``(X_train, y_train, X_test, y_test, task, note)``; ``<table>-raw``: a regression
    table's target as the file gives it (diamonds' price, california's house value,
    Beijing's PM2.5), not its log."""
    if name.endswith("-raw"):
        X, y, X_test, y_test, task, note = load(name[:-4], data_dir)
        inverse = np.expm1 if name.startswith("beijing") else np.exp
        return (X, inverse(y), X_test, inverse(y_test), task,
                re.sub(r"log(1p)?\(([^)]*)\)", r"\2", note) + " (the target as given)")
    if name == "diamonds":
        return _diamonds(data_dir)
    if name in TABLES:
        return TABLES[name](data_dir)
    return load_scale(name, data_dir)


def _frame(path):
    """A CSV as a user reads it: pandas, text columns as categories (every peer's native
    form for them: HistGradientBoosting's ``categorical_features="from_dtype"``,
    LightGBM's, FLAML's; the search's encoder reads them as text)."""
    import pandas as pd

    frame = pd.read_csv(path)
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            frame[column] = frame[column].astype("category")
    return frame


def _split(frame, target, test_share=0.2, by_time=False, stratify=None):
    from sklearn.model_selection import train_test_split

    X, y = frame.drop(columns=[target]), frame[target].to_numpy()
    if by_time:
        cut = int((1 - test_share) * len(y))
        return X.iloc[:cut], y[:cut], X.iloc[cut:], y[cut:]
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_share, random_state=0, stratify=y if stratify else None)
    return X_train, y_train, X_test, y_test


def _bank(data_dir, duration=False):
    frame = _frame(data_dir / "bank_marketing.csv.gz")
    frame["y"] = (frame["y"] == "yes").astype(int)
    if not duration:  # known only after the call
        frame = frame.drop(columns=["duration"])
    parts = _split(frame, "y", stratify=True)
    return (*parts, "classification",
            f"{frame.shape[1] - 1} columns (9 text as categories), 11.7% yes, "
            f"{'with' if duration else 'without'} duration, a stratified random 20% held out")


def _california(data_dir):
    frame = _frame(data_dir / "california_housing.csv.gz")
    frame["median_house_value"] = np.log(frame["median_house_value"])
    parts = _split(frame, "median_house_value")
    return (*parts, "regression",
            "9 columns (ocean_proximity text, total_bedrooms with 207 empty cells), "
            "log(median_house_value), a random 20% held out")


def _electricity(data_dir):
    frame = _frame(data_dir / "electricity.csv.gz")
    parts = _split(frame, "class", by_time=True)
    return (*parts, "classification", "6 columns in [0, 1], the last 20% of the half hours "
                                      "held out")


#: the real tables read as a user reads them (pandas, text as categories)
TABLES = {"bank": _bank, "bank-duration": lambda d: _bank(d, duration=True),
          "california": _california, "electricity": _electricity}


def _diamonds(data_dir):
    import csv
    import gzip

    with gzip.open(data_dir / "diamonds.csv.gz", "rt", newline="") as handle:
        rows = list(csv.DictReader(handle))
    numeric = ["carat", "depth", "table", "x", "y", "z"]
    X = np.array([[float(r[c]) for c in numeric] + [ORDERS[c].index(r[c]) for c in ORDERS]
                  for r in rows], dtype=np.float64)
    y = np.log(np.array([float(r["price"]) for r in rows]))
    order = np.random.default_rng(0).permutation(len(y))
    cut = int(0.8 * len(y))
    train, test = order[:cut], order[cut:]
    return (X[train], y[train], X[test], y[test], "regression",
            "9 features (6 numbers, cut / color / clarity as ranks), log(price), "
            "a random 20% held out")


def busy_loops():
    """Two busy-loop processes, each pinned to a core: the load beside a run."""
    code = "while True: pass"
    loops = []
    for core in range(min(2, os.cpu_count() or 1)):
        process = subprocess.Popen([sys.executable, "-c", code])
        try:
            os.sched_setaffinity(process.pid, {core})
        except (AttributeError, OSError):  # pragma: no cover - no affinity here
            pass
        loops.append(process)
    time.sleep(2.0)  # the loops are running before the run starts
    return loops


def one(data, budget):
    """Run the search in this process; print its record as JSON."""
    import resource
    import warnings

    import kernelscale as ks
    from kernelscale._config import parse_duration
    from kernelscale._parallel import LoadMeter

    X, y, X_test, y_test, task, note = load(data)
    seconds = parse_duration(budget)
    classify = task == "classification"
    cls = ks.KernelClassifierCV if classify else ks.KernelRegressorCV
    search = cls(time_budget=budget, scoring=SCORING.get(data), random_state=0)
    meter = LoadMeter()
    state = machine_state()
    began = time.perf_counter()
    error = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            search.fit(X, y)
        except Exception as exc:  # a refusal or a failure is the result to report
            error = f"{type(exc).__name__}: {exc}"
    wall = time.perf_counter() - began
    others = meter.others()
    record = {"data": data, "budget": budget, "budget_s": seconds, "task": task, "note": note,
              "rows": int(X.shape[0]), "features": int(X.shape[1]), "fit_s": wall,
              "limit_s": seconds * 1.05 + (2.0 if seconds < 60 else 0.0),
              "others_cores": others, "machine": state, "error": error,
              "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}
    record["within"] = wall <= record["limit_s"]
    if error is None:
        from bench_scale import _scores

        record.update(scores=_scores(search, X_test, y_test, task),
                      origin=search.model_origin_, refit_rows=search.refit_rows_,
                      family=search.best_params_["family"], complete=search.complete_,
                      stages=[r.line() for r in search.stages_],
                      n_scored=search.n_scored_)
    print("RESULT " + json.dumps(record), flush=True)


def report(records):
    lines = ["| data | budget | idle: score (fit s, model) | busy: score (fit s, model) | "
             "lost under load | within budget + 5% |", "|---|---|---|---|---|---|"]
    key = {"classification": "accuracy", "regression": "r2"}
    for data in dict.fromkeys(r["data"] for r in records):
        for budget in BUDGETS:
            pair = {r["load"]: r for r in records if r["data"] == data and r["budget"] == budget}
            if not pair:
                continue
            cells, values = [], {}
            for load in ("idle", "busy"):
                r = pair.get(load)
                if r is None:
                    cells.append("-")
                    continue
                if r.get("error"):
                    cells.append(f"no model: {r['error'][:60]} ({r.get('fit_s', 0):.0f} s)")
                    continue
                name = "roc_auc" if data == "bio" else key[r["task"]]
                values[load] = r["scores"][name]
                cells.append(f"{name} {values[load]:.4f} ({r['fit_s']:.0f} s, {r['origin']})")
            lost = f"{values['idle'] - values['busy']:+.4f}" if len(values) == 2 else "-"
            within = ", ".join(f"{load} {'yes' if r.get('within') else 'NO'}"
                               for load, r in pair.items())
            lines.append(f"| {data} | {budget} | {cells[0]} | {cells[1]} | {lost} | {within} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--budgets", nargs="+", default=BUDGETS)
    parser.add_argument("--loads", nargs="+", default=["idle", "busy"],
                        choices=["idle", "busy"])
    parser.add_argument("--out", default="budget")
    parser.add_argument("--one", nargs=2, metavar=("DATA", "BUDGET"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        one(*args.one)
        return
    from kernelscale._config import parse_duration

    path = RESULTS / f"{args.out}.json"
    records = json.loads(path.read_text())["records"] if path.exists() else []
    command = "python benchmarks/bench_budget.py " + " ".join(argv or sys.argv[1:])
    for data in args.datasets:
        for budget in args.budgets:
            for load in args.loads:
                loops = busy_loops() if load == "busy" else []
                try:
                    limit = parse_duration(budget) * 3 + 600  # data loading included
                    record = run_in_process(
                        [sys.executable, __file__, "--one", data, budget], limit,
                        data=data, budget=budget)
                finally:
                    for process in loops:
                        process.kill()
                record.update(load=load, command=command)
                print(json.dumps({k: v for k, v in record.items()
                                  if k not in ("stages", "machine")}), flush=True)
                records = [r for r in records if (r["data"], r["budget"], r.get("load")) !=
                           (data, budget, load)] + [record]
                RESULTS.mkdir(exist_ok=True)
                path.write_text(json.dumps({"records": records}, indent=1))
    print(report(records))


if __name__ == "__main__":
    main()
