"""Our search against what a tabular user picks, on real tables (issue 45).

Every contender runs in its own process (its peak RSS its own), one after the other,
on the same split:

- ``search-<B>``: ``KernelClassifierCV`` / ``KernelRegressorCV(time_budget=B)`` at its
  defaults (learned metric: widths, then AGOP; families; capacity by time);
- ``given-<B>``: ``KernelRegressorCV(time_budget=B, log_target=False)``: the search
  on the target as given alone (what it was before it tried the log target);
- ``hgb``: scikit-learn's ``HistGradientBoosting*`` at its defaults;
- ``lightgbm``: ``LGBMClassifier`` / ``LGBMRegressor`` at their defaults;
- ``flaml-<B>``: FLAML's ``AutoML(time_budget=B)`` with its default estimators
  (LightGBM, XGBoost, forests, ...): the time-budgeted tool a tabular user would pick;
- ``xrfm``: xRFM (the strongest kernel model for tables) on the CPU at its defaults,
  with its own ``time_limit_s`` at the largest budget, on as many rows as a pilot on
  5,000 rows says it fits in that budget (its leaves cost ~rows^2); the rest held out
  as its validation rows, as it asks for some.

Data: ``bio`` (ROC AUC, split by protein), ``beijing`` (R^2 of log1p(PM2.5), split by
time), ``diamonds`` (R^2 of log price), ``bank``, ``california`` and ``electricity``
(pandas DataFrames with text as categories, each contender's own handling of them:
``bench_budget.TABLES``; xRFM, which takes numeric tensors, does not run on them),
``diamonds-raw``, ``california-raw`` and ``beijing-raw`` (their targets as the files
give them: price, house value, PM2.5), ``nonlinear-N`` (``make_nonlinear_problem(N)``),
``runtimes`` (100,000 synthetic run times of 14 power-of-two launch parameters, as
given; R^2), ``planted`` (100,000 rows of 20 standard-normal columns whose label is a
smooth function of 2 random directions; accuracy), ``smooth8`` (200,000 rows of a noiseless smooth
function of 8 discrete-valued columns; R^2). Results: ``benchmarks/results/tabular.json``.
With ``--repeats R`` every contender runs R times in turns (a time-budgeted search need
not find the same model twice): the report gives the median and every run.

Usage::

    python benchmarks/bench_tabular.py --datasets diamonds bio --budgets 2m 5m
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, machine_state, run_in_process  # noqa: E402
from bench_budget import load as load_budget  # noqa: E402
from bench_scale import SCORING  # noqa: E402

#: the six real tables (three read as a user reads them, text as categories) and the
#: synthetic problem at 1e5 and 1e6 rows (issue 62's table); planted and smooth8 on request
DATASETS = ["bio", "beijing", "diamonds", "bank", "california", "electricity",
            "nonlinear-100000", "nonlinear-1000000"]
BUDGETS = ["2m", "10m"]


def load(name):
    if name == "planted":
        return _planted()
    if name == "smooth8":
        return _smooth8()
    if name == "runtimes":
        return _runtimes()
    return load_budget(name)


def _runtimes(n=100_000, d=14):
    """Run times of a tuned kernel (as a GPU kernel's over its launch parameters): ``d``
    columns of 2 to 4 power-of-two levels, each a factor on the time and some pairs a
    factor together, the time spread over orders of magnitude; the target as given."""
    rng = np.random.default_rng(7)
    levels = [2.0 ** np.arange(rng.integers(2, 5)) for _ in range(d)]
    main = rng.normal(0.0, 0.6, size=d)
    pairs = [tuple(rng.choice(d, 2, replace=False)) for _ in range(d)]
    weights = rng.normal(0.0, 0.4, size=len(pairs))

    def draw(rows, seed):
        gen = np.random.default_rng(seed)
        X = np.column_stack([gen.choice(values, rows) for values in levels])
        L = np.log2(X) / np.array([max(1.0, np.log2(v[-1])) for v in levels])
        log_time = L @ main + sum(w * L[:, a] * L[:, b] for w, (a, b) in zip(weights, pairs))
        return X, np.exp(log_time + 0.05 * gen.normal(size=rows))
    X, y = draw(n, 1)
    X_test, y_test = draw(20_000, 2)
    return (X, y, X_test, y_test, "regression",
            f"{d} columns of 2-4 power-of-two levels, the time a product of their factors "
            "and some pairs' (synthetic), as given")


def _smooth8(n=200_000):
    """A noiseless smooth function of 8 discrete-valued columns (3 to 10 levels each): the
    issue's capacity check (test R^2 >= 0.999 within a 5-minute search)."""
    levels = [np.linspace(0.0, 1.0, k) for k in range(3, 11)]

    def draw(rows, seed):
        rng = np.random.default_rng(seed)
        X = np.column_stack([rng.choice(values, rows) for values in levels])
        y = (np.sin(2 * X[:, 0] + X[:, 1]) + X[:, 2] * X[:, 3] + np.cos(3 * X[:, 4]) * X[:, 5]
             + 0.5 * X[:, 6] ** 2 - X[:, 7])
        return X, y
    X, y = draw(n, 1)
    X_test, y_test = draw(20_000, 2)
    return (X, y, X_test, y_test, "regression",
            "8 columns of 3..10 evenly spaced levels, a noiseless smooth target")


def _planted(n=100_000, d=20):
    from bench_metric import planted

    X, y, _ = planted(n, 1, d)
    X_test, y_test, _ = planted(20_000, 2, d)
    return (X, y, X_test, y_test, "classification",
            f"{d} standard-normal columns, the label a smooth function of 2 random directions")


def _model(name, task, data):
    import kernelscale as ks
    from kernelscale._config import parse_duration

    classify = task == "classification"
    if name.startswith("search-"):
        cls = ks.KernelClassifierCV if classify else ks.KernelRegressorCV
        return cls(time_budget=name.split("-", 1)[1], scoring=SCORING.get(data), random_state=0)
    if name.startswith("given-"):  # the search with the target as given alone
        return ks.KernelRegressorCV(time_budget=name.split("-", 1)[1], log_target=False,
                                    scoring=SCORING.get(data), random_state=0)
    if name == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

        return (HistGradientBoostingClassifier if classify else
                HistGradientBoostingRegressor)(random_state=0)
    if name == "lightgbm":
        import lightgbm

        return (lightgbm.LGBMClassifier if classify else lightgbm.LGBMRegressor)(
            random_state=0, n_jobs=2, verbose=-1)
    if name.startswith("flaml-"):
        return _Flaml(parse_duration(name.split("-", 1)[1]), task, data)
    raise ValueError(name)


class _Flaml:
    """FLAML's AutoML with its defaults, its metric the one we report."""

    def __init__(self, seconds, task, data):
        from flaml import AutoML

        self.automl, self.seconds, self.task = AutoML(), seconds, task
        self.metric = "roc_auc" if data == "bio" else ("accuracy" if task == "classification"
                                                       else "r2")

    def fit(self, X, y):
        self.automl.fit(X, y, task=self.task, time_budget=self.seconds, metric=self.metric,
                        n_jobs=2, verbose=0, seed=0)
        return self

    def predict(self, X):
        return self.automl.predict(X)

    def predict_proba(self, X):
        return self.automl.predict_proba(X)


def _scores(model, X, y, task):
    from sklearn.metrics import average_precision_score, r2_score, roc_auc_score

    if task == "regression":
        return {"r2": float(r2_score(y, model.predict(X)))}
    out = {"accuracy": float(np.mean(model.predict(X) == y))}
    if len(np.unique(y)) == 2:
        if hasattr(model, "decision_function"):
            s = model.decision_function(X)
        else:
            s = model.predict_proba(X)[:, 1]
        s = s if np.ndim(s) == 1 else s[:, -1]
        out.update(roc_auc=float(roc_auc_score(y, s)),
                   average_precision=float(average_precision_score(y, s)))
    return out


def _xrfm(X, y, X_test, y_test, task, seconds):
    """xRFM on the CPU on as many rows as its pilot says fit ``seconds``."""
    import torch
    from xrfm import xRFM

    torch.set_num_threads(2)
    rng = np.random.default_rng(0)
    classify = task == "classification"

    def fit(rows, limit):
        order = rng.permutation(len(y))
        train, val = order[:int(0.8 * rows)], order[int(0.8 * rows):rows]
        model = xRFM(device="cpu", time_limit_s=limit, random_state=0, verbose=False,
                     tuning_metric="auc" if classify and len(np.unique(y)) == 2 else None)
        Xt = torch.tensor(X[train], dtype=torch.float32)
        Xv = torch.tensor(X[val], dtype=torch.float32)
        yt = torch.tensor(y[train], dtype=torch.float32)
        yv = torch.tensor(y[val], dtype=torch.float32)
        began = time.perf_counter()
        model.fit(Xt, yt if classify else yt[:, None], Xv, yv if classify else yv[:, None])
        return model, time.perf_counter() - began

    pilot_rows = min(len(y), 5000)
    _, pilot = fit(pilot_rows, seconds)
    rows = int(min(len(y), pilot_rows * np.sqrt(max(seconds / 2, pilot) / pilot)))
    model, fit_s = fit(rows, seconds - pilot)
    Xq = torch.tensor(X_test, dtype=torch.float32)

    class Wrapped:
        def predict(self, _):
            out = model.predict(Xq)
            out = out.numpy() if hasattr(out, "numpy") else np.asarray(out)
            return out.ravel()

        def predict_proba(self, _):
            out = model.predict_proba(Xq)
            return out.numpy() if hasattr(out, "numpy") else np.asarray(out)
    return Wrapped(), rows, pilot + fit_s


def one(data, name):
    """Run one contender in this process; print its record as JSON."""
    import resource
    import warnings

    X, y, X_test, y_test, task, note = load(data)
    record = {"data": data, "contender": name, "task": task, "note": note,
              "rows": int(X.shape[0]), "features": int(X.shape[1]), "machine": machine_state()}
    from kernelscale._parallel import LoadMeter

    meter = LoadMeter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        began = time.perf_counter()
        if name.startswith("xrfm-") and hasattr(X, "columns"):
            raise SystemExit("RESULT " + json.dumps({**record, "error": "xRFM takes numeric "
                                                     "tensors; this table holds text"}))
        if name.startswith("xrfm-"):
            from kernelscale._config import parse_duration

            model, rows, fit_s = _xrfm(X, y, X_test, y_test, task,
                                       parse_duration(name.split("-", 1)[1]))
            record["xrfm_rows"] = rows
        else:
            model = _model(name, task, data).fit(X, y)
            fit_s = time.perf_counter() - began
        record["fit_s"] = fit_s
        record["scores"] = _scores(model, X_test, y_test, task)
    record["others_cores"] = meter.others()
    record["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    if name.startswith(("search-", "given-")):
        record.update(origin=model.model_origin_, family=model.best_params_["family"],
                      kernel=model.best_params_.get("kernel", "rbf"),
                      params={k: v for k, v in model.best_params_.items()
                              if isinstance(v, (str, int, float))},
                      ensemble=None if model.ensemble_ is None else
                      {"weights": model.ensemble_["weights"],
                       "members": model.ensemble_["members"]},
                      n_scored=model.n_scored_, refit_rows=model.refit_rows_,
                      budget_used=model.budget_used_,
                      stages=[r.line() for r in model.stages_],
                      metric=None if model.kernel_metric_ is None else
                      model.kernel_metric_.best_round_)
    print("RESULT " + json.dumps(record), flush=True)


def report(records):
    key = {"bio": "roc_auc"}
    lines = []
    for data in dict.fromkeys(r["data"] for r in records):
        mine = [r for r in records if r["data"] == data]
        name = key.get(data, "accuracy" if mine[0].get("task") == "classification" else "r2")
        lines.append(f"\n{data} ({name}):")
        for contender in dict.fromkeys(r["contender"] for r in mine):
            runs = [r for r in mine if r["contender"] == contender]
            failed = [r for r in runs if r.get("error")]
            if failed:
                lines.append(f"  {contender:14s} error: {failed[0]['error'][:80]}")
                continue
            scores = [r["scores"][name] for r in runs]
            extra = f", {runs[-1]['xrfm_rows']} rows" if "xrfm_rows" in runs[-1] else ""
            each = (f" (runs: {', '.join(f'{v:.4f}' for v in scores)})" if len(runs) > 1
                    else "")
            lines.append(
                f"  {contender:14s} {np.median(scores):.4f}{each}  fit "
                f"{np.median([r['fit_s'] for r in runs]):.0f} s, RSS "
                f"{max(r['peak_rss_gb'] for r in runs):.2f} GB, others' load "
                f"{max(r['others_cores'] or 0 for r in runs):.2f} cores{extra}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--budgets", nargs="+", default=BUDGETS)
    parser.add_argument("--contenders", nargs="+",
                        default=["search", "hgb", "lightgbm", "flaml", "xrfm"])
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of every contender, in turns (A B A B): medians reported")
    parser.add_argument("--out", default="tabular")
    parser.add_argument("--one", nargs=2, metavar=("DATA", "CONTENDER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        one(*args.one)
        return
    from kernelscale._config import parse_duration

    path = RESULTS / f"{args.out}.json"
    records = json.loads(path.read_text())["records"] if path.exists() else []
    command = "python benchmarks/bench_tabular.py " + " ".join(argv or sys.argv[1:])
    for data in args.datasets:
        names = []
        for contender in args.contenders:
            if contender in ("search", "flaml", "given"):
                names += [f"{contender}-{b}" for b in args.budgets]
            elif contender == "xrfm":
                names.append(f"xrfm-{args.budgets[-1]}")
            else:
                names.append(contender)
        # in turns, so that a change of the machine's load falls on every contender
        for run, name in [(run, name) for run in range(args.repeats) for name in names]:
            budget = parse_duration(name.split("-", 1)[1]) if "-" in name else 600
            record = run_in_process([sys.executable, __file__, "--one", data, name],
                                    3 * budget + 900, data=data, contender=name)
            record.update(command=command, run=run)
            print(json.dumps({k: v for k, v in record.items()
                              if k not in ("stages", "machine")}), flush=True)
            records = [r for r in records
                       if (r["data"], r["contender"], r.get("run", 0)) != (data, name, run)] + \
                [record]
            RESULTS.mkdir(exist_ok=True)
            path.write_text(json.dumps({"records": records}, indent=1))
    print(report(records))


if __name__ == "__main__":
    main()
