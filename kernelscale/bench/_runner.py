"""Run an experiment (kernelscale and scikit-learn side by side) and write its report.

An :class:`Experiment` names its data, a sweep over the number of features
(``D`` random features or ``m`` landmarks) and fixed reference models (exact
kernel SVMs, linear SVMs). :func:`run_experiment` fits every model ``repeats``
times, interleaving the libraries so that machine noise hits both alike, and
returns a JSON-able result; :func:`write_report` turns a result into
``report.md``, ``results.json`` and PNG plots, from the result alone.
"""

from __future__ import annotations

import datetime as _dt
import gc
import os
import platform
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..feature_maps import kernel_approximation_error

__all__ = ["Method", "Experiment", "machine", "machine_load", "timed", "run_experiment",
           "KERNELSCALE", "SKLEARN"]

_EVAL_SEED = 2_147_483_629
KERNELSCALE, SKLEARN = "kernelscale", "scikit-learn"


def machine():
    """A short description of the machine and library versions, for every record.

    Returns
    -------
    info : dict
        ``cpu``, ``cores``, ``python``, ``numpy``, ``scipy``, ``sklearn``, ``kernelscale``.
    """
    import scipy
    import sklearn

    from .. import __version__

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            names = (line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
            cpu = next(names)
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
        "numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__,
        "kernelscale": __version__,
    }


def machine_load():
    """The 1-minute load average and the cores, to record beside every timing.

    This VM is shared: ratios measured while the load exceeds the cores are not
    kernelscale's alone, and the report says so.

    Returns
    -------
    load : dict
        ``load_1min`` (float, None where the OS has no load average) and ``cores``.
    """
    try:
        load = float(os.getloadavg()[0])
    except (AttributeError, OSError):  # pragma: no cover - Windows
        load = None
    return {"load_1min": load, "cores": os.cpu_count()}


def timed(func, *args, **kwargs):
    """``(result, seconds)`` of one call, after a garbage collection."""
    gc.collect()
    start = time.perf_counter()
    result = func(*args, **kwargs)
    return result, time.perf_counter() - start


@dataclass(frozen=True)
class Method:
    """One model of an experiment.

    Parameters
    ----------
    label : str
        Shown in tables and legends.
    library : {"kernelscale", "scikit-learn"}
    family : str
        Models of the two libraries with the same family (and size) are compared:
        speed-up = scikit-learn's fit+predict time / kernelscale's.
    make : callable
        ``make(seed)`` for a reference model, ``make(size, seed)`` for a sweep
        model; returns an unfitted estimator.
    feature_map : callable, default=None
        ``feature_map(fitted_model)`` returns the fitted transformer whose kernel
        approximation error is reported; None for models without one.
    rows : int, default=None
        Fit on a fixed random subsample of this many training rows (exact
        kernel SVMs on large sets); None uses them all.
    """

    label: str
    library: str
    family: str
    make: Callable
    feature_map: Callable | None = None
    rows: int | None = None


@dataclass
class Experiment:
    """Data and models of one benchmark experiment (see :func:`run_experiment`)."""

    name: str
    title: str
    data: tuple
    data_description: str
    sizes: list
    sweep: list
    references: list
    gamma: float
    notes: list = field(default_factory=list)
    train_accuracy: bool = False
    n_eval: int = 1000
    seed: int = 0
    highlight: dict = field(default_factory=dict)

    def n_runs(self, repeats):
        """Model fits in one :func:`run_experiment` call."""
        return repeats * (len(self.references) + len(self.sweep) * len(self.sizes))


def _subsample(X, y, rows, seed):
    if rows is None or rows >= X.shape[0]:
        return X, y
    idx = np.sort(np.random.default_rng([seed, 7]).choice(X.shape[0], rows, replace=False))
    return X[idx], y[idx]


def _one_run(method, args, X_train, y_train, X_test, y_test, experiment):
    from sklearn.exceptions import ConvergenceWarning

    X_fit, y_fit = _subsample(X_train, y_train, method.rows, experiment.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model, fit_s = timed(method.make(*args).fit, X_fit, y_fit)
    pred, predict_s = timed(model.predict, X_test)
    record = {"fit_s": fit_s, "predict_s": predict_s, "total_s": fit_s + predict_s,
              "accuracy": float(np.mean(pred == y_test))}
    if experiment.train_accuracy:
        record["train_accuracy"] = float(np.mean(model.predict(X_fit) == y_fit))
    if method.feature_map is not None:
        fmap = method.feature_map(model)
        record["approx_error"] = float(kernel_approximation_error(
            X_test, fmap, kernel="rbf", gamma=experiment.gamma,
            n_samples=experiment.n_eval, random_state=_EVAL_SEED,
        ))
        probe = fmap.transform(X_test[:1])
        record["n_features_out"] = int(probe.shape[1])
    return record


_KEYS = ("fit_s", "predict_s", "total_s", "accuracy", "train_accuracy", "approx_error",
         "n_features_out")


def _summarize(runs):
    summary = {}
    for key in _KEYS:
        values = [r[key] for r in runs if key in r]
        if values:
            summary[key] = float(np.median(values))
    if "n_features_out" in summary:
        summary["n_features_out"] = int(summary["n_features_out"])
    summary["runs"] = runs
    return summary


def run_experiment(experiment, *, repeats=3, progress=None, command=None):
    """Fit and score every model of ``experiment`` ``repeats`` times; return medians.

    Parameters
    ----------
    experiment : Experiment
    repeats : int, default=3
        Runs per model (seeds ``experiment.seed + r``), interleaved: run ``r`` of
        every model happens before run ``r + 1`` of any.
    progress : callable, default=None
        Called as ``progress(description)`` after each fit.
    command : str, default=None
        The command line that ran the experiment, kept in the result.

    Returns
    -------
    result : dict
        JSON-able: ``experiment``, ``title``, ``data``, ``notes``, ``gamma``,
        ``repeats``, ``machine``, ``load`` (1-minute load average before and
        after the run, and the cores), ``command``, ``created``, ``sizes`` and
        ``records`` (one per model and size: ``label``, ``library``, ``family``,
        ``kind`` ("reference" or "sweep"), ``size``, ``train_rows`` and medians of
        ``accuracy``, ``fit_s``, ``predict_s``, ``total_s``, and when measured
        ``train_accuracy``, ``approx_error``, ``n_features_out``, with every run).
    """
    if int(repeats) < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}.")
    X_train, y_train, X_test, y_test = experiment.data
    jobs = [(m, None) for m in experiment.references]
    jobs += [(m, size) for size in experiment.sizes for m in experiment.sweep]
    runs = {index: [] for index in range(len(jobs))}
    load_before = machine_load()
    started = time.perf_counter()
    for r in range(int(repeats)):
        seed = experiment.seed + r
        for index, (method, size) in enumerate(jobs):
            args = (seed,) if size is None else (size, seed)
            runs[index].append(_one_run(method, args, X_train, y_train, X_test, y_test,
                                        experiment))
            if progress is not None:
                what = method.label if size is None else f"{method.label} D={size}"
                progress(f"run {r + 1}/{repeats}: {what}")
    records = []
    for index, (method, size) in enumerate(jobs):
        rows = X_train.shape[0] if method.rows is None else min(method.rows, X_train.shape[0])
        records.append({
            "label": method.label, "library": method.library, "family": method.family,
            "kind": "reference" if size is None else "sweep", "size": size,
            "train_rows": int(rows), **_summarize(runs[index]),
        })
    return {
        "experiment": experiment.name, "title": experiment.title,
        "data": {"description": experiment.data_description,
                 "train_shape": list(X_train.shape), "test_rows": int(X_test.shape[0])},
        "notes": list(experiment.notes), "gamma": float(experiment.gamma),
        "repeats": int(repeats), "sizes": [int(s) for s in experiment.sizes],
        "highlight": dict(experiment.highlight),
        "machine": machine(), "command": command,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_s": time.perf_counter() - started, "records": records,
        "load": {"before": load_before["load_1min"], "after": machine_load()["load_1min"],
                 "cores": load_before["cores"]},
    }
