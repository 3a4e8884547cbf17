"""Probabilities: KernelSVC(probability=True) against SVC(probability=True), same C and gamma.

Both sides fit the model and 5 internal cross-validation models whose
held-out decision values calibrate Platt's sigmoids. Reported per data set:
test log-loss (goal: within 2% of scikit-learn's), fit time (goal: at most 1/3
of scikit-learn's), and the same for sklearnex's SVC(probability=True) where
the extra is installed; medians of ``--repeats`` runs, interleaved; the
machine, its load and the threads. ``--sides`` picks the contenders: ``ours``,
``sklearn``, ``sklearnex`` (the default three) and ``falkon``
(``NystromKernelRidgeClassifier(probability=True)`` at its defaults: the FALKON
classifier's calibrated scores).

Usage::

    python benchmarks/bench_probability.py --datasets mnist10k --repeats 3
    python benchmarks/bench_probability.py --datasets mnist10k a9a --sides ours falkon
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _common import load_line, machine_state, save, sklearnex_svc
from sklearn.metrics import log_loss
from sklearn.svm import SVC

from kernelscale import KernelSVC, NystromKernelRidgeClassifier
from kernelscale.datasets import load_dataset

SETTINGS = {"mnist10k": {"C": 10.0, "gamma": "scale"}, "a9a": {"C": 1.0, "gamma": "scale"}}


def load(name, rows, data_dir):
    X, y, Xt, yt = load_dataset(name, data_dir)
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    Xt = np.asarray(Xt.toarray() if hasattr(Xt, "toarray") else Xt, dtype=np.float64)
    if rows:
        X, y = X[:rows], y[:rows]
    return X, y, Xt, yt


def run_side(make, X, y, Xt, yt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # SVC's probability, deprecated in 1.9
        start = time.perf_counter()
        model = make().fit(X, y)
        fit_s = time.perf_counter() - start
        P = model.predict_proba(Xt)
    return {"fit_s": fit_s, "log_loss": float(log_loss(yt, P, labels=model.classes_)),
            "accuracy": float(np.mean(model.predict(Xt) == yt)),
            "argmax_agrees": float(np.mean(model.classes_[P.argmax(1)] == model.predict(Xt)))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["mnist10k"])
    parser.add_argument("--rows", type=int, default=0, help="training rows (0: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--sides", nargs="+", default=["ours", "sklearn", "sklearnex"],
                        choices=["ours", "sklearn", "sklearnex", "falkon"])
    args = parser.parse_args()
    before = machine_state()
    records = []
    for name in args.datasets:
        X, y, Xt, yt = load(name, args.rows, args.data_dir)
        s = SETTINGS[name]
        classes = {"ours": KernelSVC, "sklearn": SVC, "sklearnex": sklearnex_svc()}
        sides = {side: (lambda cls=cls, s=s: cls(probability=True, random_state=0, **s))
                 for side, cls in classes.items() if cls is not None and side in args.sides}
        if "falkon" in args.sides:
            sides["falkon"] = lambda s=s: NystromKernelRidgeClassifier(
                probability=True, random_state=0, gamma=s["gamma"])
        runs = {side: [] for side in sides}
        for _ in range(args.repeats):
            for side, make in sides.items():
                runs[side].append(run_side(make, X, y, Xt, yt))
        med = {side: {k: float(np.median([r[k] for r in rs])) for k in rs[0]}
               for side, rs in runs.items()}
        record = {"data": name, "n_train": len(y), "n_test": len(yt), **s, "median": med,
                  "runs": runs}
        if "ours" in med and "sklearn" in med:
            record["fit_ratio_vs_sklearn"] = med["ours"]["fit_s"] / med["sklearn"]["fit_s"]
            record["log_loss_rel_diff"] = med["ours"]["log_loss"] / med["sklearn"]["log_loss"] - 1
        records.append(record)
        print(f"{name} ({len(y)} rows, C={s['C']}, gamma={s['gamma']}):")
        for side, m in med.items():
            print(f"  {side:10s} fit {m['fit_s']:8.2f} s  log-loss {m['log_loss']:.4f}  "
                  f"accuracy {m['accuracy']:.4f}  argmax(proba) = predict on "
                  f"{100 * m['argmax_agrees']:.2f}%")
        if "fit_ratio_vs_sklearn" in record:
            print(f"  fit time ours / sklearn: {record['fit_ratio_vs_sklearn']:.3f} (goal <= "
                  f"0.333); log-loss vs sklearn: {100 * record['log_loss_rel_diff']:+.2f}% "
                  "(goal within 2%)")
    after = machine_state()
    print(load_line(before, after))
    default_sides = args.sides == ["ours", "sklearn", "sklearnex"]
    path = save(f"probability_{'_'.join(args.datasets)}"
                + ("" if default_sides else "_" + "_".join(args.sides)),
                {"command": "python benchmarks/bench_probability.py " + " ".join(
                    f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
                    for k, v in vars(args).items() if v), "before": before, "after": after,
                 "records": records})
    print(f"written to {path}")


if __name__ == "__main__":
    main()
