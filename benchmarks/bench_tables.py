"""Reading and encoding tables: before (hand-written reader and encoder, commit c15a4c6)
and now (pandas' reader, scikit-learn's transformers), beside ``pandas.read_csv`` alone
and skrub's ``TableVectorizer`` (issue 63).

``--load``: seconds to read three CSVs, median of ``--repeats`` runs, each reader in a
process of its own:

- ``beijing``: the raw Beijing air-quality table (420,768 rows, 18 columns, two text
  columns, empty cells; bz2), as ``../shared/datasets/large`` holds it;
- ``mixed-100k``: 100,000 rows written here with text, dates and empty cells (the
  issue's goal: under 1 s idle);
- ``nonlinear-1e6``: ``make_nonlinear_problem(1_000_000)`` written as a CSV (28 numeric
  columns and the label).

and ``tune``'s own "reading the data" time on each (``kernelscale tune FILE
--time-budget 5s``, ``--tune-budget``; the model file's header records it, and a budget
too short for the reading says it in its error; Beijing's label there is
``hour``, a column with no empty cell, which the old reader requires).

``--encoders``: the six tables of ``../shared/datasets/large`` read by pandas, encoded
by the old ``TabularEncoder``, the current one, and skrub's ``TableVectorizer`` followed
by median imputation with missing indicators and a standard scaler; then one fixed model
(``NystromKernelRidge`` / ``NystromKernelRidgeClassifier``, 1,000 centres, the current
code) fitted on at most
20,000 training rows of each encoding and scored on the held-out rows. The encoder's
seconds are its ``fit_transform`` plus its ``transform`` of the test rows.

``--tune``: ``kernelscale tune TRAIN.csv --time-budget 2m --test TEST.csv`` on the raw
Beijing table as a user would have it (a text date column written from the year, month,
day and hour; wind direction and station as text; empty cells; the label PM2.5 empty on
some rows, dropped by ``--drop-missing-labels``; the last 20% of the hours held out), its
wall time (loading included) against the 126 s the budget allows, and the same budget
through the Python API (``pandas.read_csv``, then ``KernelRegressorCV(time_budget="2m")``
on the frame): the two test R^2 values side by side. ``--loads idle busy`` runs it
beside two busy loops too.

``--old`` names the checkout of the old code (``git worktree add /tmp/old c15a4c6``).

Usage::

    python benchmarks/bench_tables.py --load --encoders --old /tmp/old
    python benchmarks/bench_tables.py --tune --loads idle busy
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_state, save  # noqa: E402
from bench_scale import LARGE  # noqa: E402

#: table: (file, label, task, split, label transform)
TABLES = {
    "bio": ("bio_kdd04.csv.gz", "target", "classification", "random", None),
    "beijing": ("beijing_air_quality.csv.bz2", "PM2.5", "regression", "time", "log1p"),
    "diamonds": ("diamonds.csv.gz", "price", "regression", "random", "log"),
    "bank": ("bank_marketing.csv.gz", "y", "classification", "random", None),
    "california": ("california_housing.csv.gz", "median_house_value", "regression",
                   "random", "log"),
    "electricity": ("electricity.csv.gz", "class", "classification", "time", None),
}
DROP = {"bio": ["EXAMPLE_ID", "BLOCK_ID"], "beijing": ["No"], "bank": ["duration"]}
TRAIN_ROWS = 20_000


def _mixed(path, n=100_000):
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "when": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 10**8, n),
                                                               unit="s"),
        "city": rng.choice(["Lyon", "Paris", "Nice", "Lille", "Brest"], n),
        "grade": rng.choice(["A", "B", "C", None], n),
        **{f"x{i}": rng.normal(size=n) for i in range(8)},
        "count": rng.integers(0, 100, n).astype(float),
    })
    frame.loc[rng.random(n) < 0.05, "x0"] = np.nan
    frame.loc[rng.random(n) < 0.05, "count"] = np.nan
    frame["y"] = (frame["x1"] + (frame["city"] == "Paris") > 0.5).astype(int)
    frame.to_csv(path, index=False)


def _nonlinear(path):
    import pandas as pd

    from kernelscale.datasets import make_nonlinear_problem

    X, y = make_nonlinear_problem(1_000_000)[:2]
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["y"] = y
    frame.to_csv(path, index=False, float_format="%.6g")


def _reader_run(code, checkout, repeats):
    """Median seconds of ``code`` (which sets ``seconds``) in a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    script = ("import time, json, statistics\nruns = []\n"
              f"for _ in range({repeats}):\n"
              "    began = time.perf_counter()\n"
              + "".join(f"    {line}\n" for line in code.splitlines()) +
              "    runs.append(time.perf_counter() - began)\n"
              "print('RESULT', json.dumps(runs))\n")
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=str(checkout),
                         capture_output=True, text=True, timeout=3600)
    line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
    if not line:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "no result"}
    runs = json.loads(line[0][7:])
    return {"median_s": float(np.median(runs)), "runs_s": runs}


def _tune_reading(path, label, checkout, work, budget="5s"):
    """``tune``'s recorded seconds reading (and encoding) the data."""
    model = Path(work) / "m.ksm"
    env = dict(os.environ, PYTHONPATH=str(checkout))
    command = [sys.executable, "-m", "kernelscale.cli", "tune", str(path), "--label-column",
               label, "--time-budget", budget, "--output", str(model), "--no-progress"]
    began = time.perf_counter()
    out = subprocess.run(command, env=env, cwd=str(checkout), capture_output=True,
                         text=True, timeout=3600)
    wall = time.perf_counter() - began
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1], "wall_s": wall}
    header = subprocess.run(
        [sys.executable, "-c", "import json, sys; from kernelscale import read_model_header;"
         f"h = read_model_header({str(model)!r}); print(json.dumps(h, default=str))"],
        env=env, cwd=str(checkout), capture_output=True, text=True, timeout=600)
    text = header.stdout
    start = text.find('"load_s"')
    load_s = float(text[start:].split(":", 1)[1].split(",")[0].split("}")[0]) \
        if start >= 0 else None
    return {"load_s": load_s, "wall_s": wall}


def run_load(args, work):
    files = {"beijing": (LARGE / "beijing_air_quality.csv.bz2", "hour"),
             "mixed-100k": (Path(work) / "mixed.csv", "y"),
             "nonlinear-1e6": (Path(work) / "nonlinear.csv", "y")}
    files = {name: files[name] for name in args.files}
    if "mixed-100k" in files:
        _mixed(files["mixed-100k"][0])
    if "nonlinear-1e6" in files:
        _nonlinear(files["nonlinear-1e6"][0])
    rows = []
    for name, (path, label) in files.items():
        result = {"file": name, "bytes": path.stat().st_size}
        result["pandas"] = _reader_run(f"import pandas; pandas.read_csv({str(path)!r})",
                                       args.new, args.repeats)
        call = (f"from kernelscale.datasets import load_table; "
                f"load_table({str(path)!r}, label={label!r})")
        result["now"] = _reader_run(call, args.new, args.repeats)
        if args.old:
            result["before"] = _reader_run(call, args.old, 1 if "1e6" in name else
                                           args.repeats)
        result["tune_now"] = _tune_reading(path, label, args.new, work, args.tune_budget)
        if args.old:
            result["tune_before"] = _tune_reading(path, label, args.old, work,
                                                  args.tune_budget)
        print(json.dumps(result), flush=True)
        rows.append(result)
    return rows


ENCODE = r"""
import json, sys, time
import numpy as np, pandas as pd
sys.path.insert(0, {bench!r})
from bench_tables import read
X, y, X_test, y_test, task = read({table!r})
kind = {kind!r}
began = time.perf_counter()
if kind == "skrub":
    from skrub import TableVectorizer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    # TableVectorizer passes numeric NaN through: imputed as ours imputes them
    encoder = make_pipeline(TableVectorizer(), SimpleImputer(add_indicator=True),
                            StandardScaler())
else:
    from kernelscale.datasets import TabularEncoder
    encoder = TabularEncoder()
Z = np.asarray(encoder.fit_transform(X), dtype=np.float64)
Z_test = np.asarray(encoder.transform(X_test), dtype=np.float64)
seconds = time.perf_counter() - began
np.savez({out!r}, Z=Z, y=y, Z_test=Z_test, y_test=y_test)
print("RESULT", json.dumps({{"seconds": seconds, "columns": Z.shape[1], "task": task}}))
"""


def read(table):
    """``(X, y, X_test, y_test, task)`` of a raw table as pandas reads it, the training
    rows cut to :data:`TRAIN_ROWS` (a random subset)."""
    import pandas as pd

    file, label, task, split, transform = TABLES[table]
    frame = pd.read_csv(LARGE / file).drop(columns=DROP.get(table, []))
    frame = frame[frame[label].notna()].reset_index(drop=True)
    y = frame.pop(label).to_numpy()
    if transform is not None:
        y = getattr(np, transform)(y.astype(float))
    elif task == "classification":
        y = np.unique(y, return_inverse=True)[1]
    rng = np.random.default_rng(0)
    if split == "time":
        cut = int(0.8 * len(y))
        train, test = np.arange(cut), np.arange(cut, len(y))
    else:
        order = rng.permutation(len(y))
        cut = int(0.8 * len(y))
        train, test = order[:cut], order[cut:]
    if len(train) > TRAIN_ROWS:
        train = np.sort(rng.choice(train, TRAIN_ROWS, replace=False))
    return frame.iloc[train], y[train], frame.iloc[test], y[test], task


def _score(Z, y, Z_test, y_test, task, table):
    from sklearn.metrics import r2_score, roc_auc_score

    from kernelscale.models import NystromKernelRidge, NystromKernelRidgeClassifier

    began = time.perf_counter()
    if task == "regression":
        model = NystromKernelRidge(n_components=1000, random_state=0).fit(Z, y)
        score = {"r2": float(r2_score(y_test, model.predict(Z_test)))}
    else:
        model = NystromKernelRidgeClassifier(n_components=1000, random_state=0).fit(Z, y)
        score = {"accuracy": float(model.score(Z_test, y_test))}
        if table == "bio":
            score["roc_auc"] = float(roc_auc_score(y_test, model.decision_function(Z_test)))
    score["model_s"] = time.perf_counter() - began
    return score


def run_encoders(args, work):
    rows = []
    variants = [("now", args.new), ("skrub", args.new)]
    if args.old:
        variants.insert(0, ("before", args.old))
    for table in args.tables:
        for name, checkout in variants:
            out = str(Path(work) / f"{table}-{name}.npz")
            code = ENCODE.format(bench=str(Path(__file__).resolve().parent), table=table,
                                 kind="skrub" if name == "skrub" else "ours", out=out)
            env = dict(os.environ, PYTHONPATH=str(checkout))
            done = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(checkout),
                                  capture_output=True, text=True, timeout=3600)
            line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
            if not line:
                record = {"table": table, "encoder": name,
                          "error": (done.stderr.strip().splitlines() or ["?"])[-1]}
            else:
                record = {"table": table, "encoder": name, **json.loads(line[0][7:])}
                data = np.load(out, allow_pickle=True)
                try:
                    record.update(_score(data["Z"], data["y"], data["Z_test"],
                                         data["y_test"], record["task"], table))
                except ValueError as error:  # an encoding the model cannot take
                    record["error"] = str(error)
            print(json.dumps(record), flush=True)
            rows.append(record)
    return rows


def _beijing_raw(work):
    """Train and test CSVs of the raw Beijing table with a text date column."""
    import pandas as pd

    frame = pd.read_csv(LARGE / "beijing_air_quality.csv.bz2").drop(columns=["No"])
    when = pd.to_datetime(frame[["year", "month", "day", "hour"]])
    frame = frame.drop(columns=["year", "month", "day", "hour"])
    frame.insert(0, "date", when.dt.strftime("%Y-%m-%d %H:00"))
    frame = frame.sort_values("date", kind="stable").reset_index(drop=True)
    cut = int(0.8 * len(frame))
    train, test = Path(work) / "beijing_train.csv", Path(work) / "beijing_test.csv"
    frame.iloc[:cut].to_csv(train, index=False)
    frame.iloc[cut:][frame["PM2.5"].iloc[cut:].notna()].to_csv(test, index=False)
    return train, test


API = r"""
import json, time
began = time.perf_counter()
import numpy as np, pandas as pd
from sklearn.metrics import r2_score
from kernelscale import KernelRegressorCV
frame = pd.read_csv({train!r})
frame = frame[frame["PM2.5"].notna()]
y = frame.pop("PM2.5").to_numpy()
search = KernelRegressorCV(time_budget="2m", random_state={seed!r}).fit(frame, y)
wall = time.perf_counter() - began
test = pd.read_csv({test!r})
y_test = test.pop("PM2.5").to_numpy()
print("RESULT", json.dumps({{"r2": float(r2_score(y_test, search.predict(test))),
                             "wall_s": wall, "origin": search.model_origin_}}))
"""


def _find(mapping, key):
    """The first value of ``key`` anywhere in nested dicts."""
    if isinstance(mapping, dict):
        if key in mapping:
            return mapping[key]
        for value in mapping.values():
            found = _find(value, key)
            if found is not None:
                return found
    return None


def run_tune(args, work):
    from bench_budget import busy_loops

    train, test = _beijing_raw(work)
    rows = []
    # None: each path's default (the CLI's --seed 0, the API's random_state=None)
    for load, seed in [(load, seed) for load in args.loads for seed in args.seeds or [None]]:
        loops = busy_loops() if load == "busy" else []
        try:
            model = Path(work) / "beijing.ksm"
            command = [sys.executable, "-m", "kernelscale.cli", "tune", str(train),
                       "--label-column", "PM2.5", "--drop-missing-labels", "--time-budget",
                       "2m", "--test", str(test), "--output", str(model), "--no-progress"]
            command += [] if seed is None else ["--seed", str(seed)]
            began = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
            wall = time.perf_counter() - began
            record = {"load": load, "path": "cli", "seed": seed, "wall_s": wall,
                      "rc": done.returncode}
            if done.returncode == 0:
                from kernelscale import read_model_header

                header = read_model_header(model)
                record["r2"] = _find(header, "r2")
                record["load_s"] = _find(header, "load_s")
                record["time_line"] = next((line for line in done.stdout.splitlines()
                                            if line.startswith("time used")), None)
            else:
                record["error"] = (done.stderr.strip().splitlines() or ["?"])[-1]
            print(json.dumps(record), flush=True)
            rows.append(record)
            done = subprocess.run([sys.executable, "-c", API.format(train=str(train),
                                                                    test=str(test),
                                                                    seed=seed)],
                                  capture_output=True, text=True, timeout=1800)
            line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
            result = json.loads(line[0][7:]) if line else {
                "error": (done.stderr.strip().splitlines() or ["?"])[-1]}
            record = {"load": load, "path": "api", "seed": seed, **result}
            print(json.dumps(record), flush=True)
            rows.append(record)
        finally:
            for loop in loops:
                loop.kill()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", action="store_true")
    parser.add_argument("--encoders", action="store_true")
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--files", nargs="+", default=["beijing", "mixed-100k",
                                                       "nonlinear-1e6"])
    parser.add_argument("--tune-budget", default="5s",
                        help="tune's budget in --load (it must cover the reading)")
    parser.add_argument("--loads", nargs="+", default=["idle"], choices=["idle", "busy"])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES))
    parser.add_argument("--old", type=Path, default=None)
    parser.add_argument("--new", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, nargs="+", default=None,
                        help="--tune: the CLI's --seed and the API's random_state (default: "
                             "each path's own default)")
    parser.add_argument("--out", default="tables")
    args = parser.parse_args()
    report = {"command": "python benchmarks/bench_tables.py " + " ".join(sys.argv[1:]),
              "before": machine_state()}
    with tempfile.TemporaryDirectory() as work:
        if args.load:
            report["load"] = run_load(args, work)
        if args.encoders:
            report["encoders"] = run_encoders(args, work)
        if args.tune:
            report["tune"] = run_tune(args, work)
    report["after"] = machine_state()
    print("saved", save(args.out, report))


if __name__ == "__main__":
    main()
