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
import json
import os
import platform
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from matplotlib.figure import Figure

from ..feature_maps import kernel_approximation_error

__all__ = ["Method", "Experiment", "highlights", "machine", "timed", "run_experiment",
           "write_report"]

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
        ``repeats``, ``machine``, ``command``, ``created``, ``sizes`` and
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
    }


def _peer(record, records):
    """The scikit-learn record compared with a kernelscale one (same family and size)."""
    if record["library"] != KERNELSCALE:
        return None
    for other in records:
        if (other["library"] == SKLEARN and other["family"] == record["family"]
                and other["size"] == record["size"] and other["kind"] == record["kind"]):
            return other
    return None


def _fmt(value, spec):
    return "" if value is None else format(value, spec)


def _ratio_cells(record, records):
    peer = _peer(record, records)
    if peer is None:
        return "", ""
    return (f"{peer['total_s'] / record['total_s']:.1f}x",
            f"{100 * (record['accuracy'] - peer['accuracy']):+.2f}")


def _table(records, all_records, *, train):
    head = "| model | train rows | accuracy |" + (" train accuracy |" if train else "")
    head += " fit s | predict s | fit+predict s | kernel error | speed-up vs scikit-learn " \
            "| accuracy vs scikit-learn (points) |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in records:
        speed, gain = _ratio_cells(r, all_records)
        name = r["label"] if r["size"] is None else f"{r['label']}, D={r['size']}"
        cells = [name, str(r["train_rows"]), f"{r['accuracy']:.4f}"]
        if train:
            cells.append(_fmt(r.get("train_accuracy"), ".4f"))
        cells += [f"{r['fit_s']:.2f}", f"{r['predict_s']:.2f}", f"{r['total_s']:.2f}",
                  _fmt(r.get("approx_error"), ".4f"), speed, gain]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def highlights(result):
    """The report's highlight lines (markdown bullets) for a :func:`run_experiment` result."""
    records = result["records"]
    refs = [r for r in records if r["kind"] == "reference"]
    sweep = [r for r in records if r["kind"] == "sweep"]
    lines = []
    exact = next((r for r in refs if r["library"] == SKLEARN and r["family"] == "exact"), None)
    ours = [r for r in sweep if r["library"] == KERNELSCALE]
    theirs = [r for r in sweep if r["library"] == SKLEARN]
    if ours and theirs:
        best_ours = max(ours, key=lambda r: (r["accuracy"], -r["total_s"]))
        best_theirs = max(theirs, key=lambda r: (r["accuracy"], -r["total_s"]))
        for r, who in ((best_ours, "kernelscale"), (best_theirs, "scikit-learn")):
            lines.append(f"- Most accurate {who} approximate model: {r['label']}, D={r['size']}: "
                         f"accuracy {r['accuracy']:.4f} in {r['total_s']:.2f} s fit+predict.")
        # the cheapest kernelscale model at least as accurate as scikit-learn's best
        matches = [r for r in ours if r["accuracy"] >= best_theirs["accuracy"] - 1e-12]
        if matches:
            fast = min(matches, key=lambda r: r["total_s"])
            lines.append(
                f"- Fastest kernelscale model at least as accurate as scikit-learn's best: "
                f"{fast['label']}, D={fast['size']} ({fast['accuracy']:.4f}), speed-up "
                f"{best_theirs['total_s'] / fast['total_s']:.1f}x."
            )
        ratios = [(_peer(r, records), r) for r in ours]
        ratios = [theirs_r["total_s"] / r["total_s"] for theirs_r, r in ratios if theirs_r]
        if ratios:
            lines.append(f"- Same model and D, kernelscale vs scikit-learn fit+predict speed-up: "
                         f"median {np.median(ratios):.1f}x (range {min(ratios):.1f}x to "
                         f"{max(ratios):.1f}x over {len(ratios)} pairs).")
        if exact is not None:
            lines.append(
                f"- Versus scikit-learn's exact SVC ({exact['accuracy']:.4f} in "
                f"{exact['total_s']:.2f} s on {exact['train_rows']} rows): kernelscale's most "
                f"accurate approximate model: speed-up "
                f"{exact['total_s'] / best_ours['total_s']:.1f}x, "
                f"{100 * (best_ours['accuracy'] - exact['accuracy']):+.2f} points."
            )
    for r in refs:
        peer = _peer(r, records)
        if peer is not None:
            lines.append(f"- {r['label']} vs {peer['label']}: {r['accuracy']:.4f} vs "
                         f"{peer['accuracy']:.4f}, speed-up {peer['total_s'] / r['total_s']:.1f}x.")
    return lines


PLOTS = {
    "accuracy": "accuracy_vs_features.png",
    "time": "time_vs_features.png",
    "error": "approx_error_vs_features.png",
}


def write_report(result, out_dir):
    """Write ``report.md``, ``results.json`` and the plots of ``result`` into ``out_dir``.

    Parameters
    ----------
    result : dict
        Output of :func:`run_experiment`.
    out_dir : str or Path
        Created if missing.

    Returns
    -------
    paths : dict
        ``report``, ``results`` and one entry per plot.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"results": out / "results.json", "report": out / "report.md"}
    paths["results"].write_text(json.dumps(result, indent=1))
    for key, name in PLOTS.items():
        if _plot(result, key, out / name):
            paths[key] = out / name
    records = result["records"]
    refs = [r for r in records if r["kind"] == "reference"]
    train = any("train_accuracy" in r for r in records)
    m = result["machine"]
    lines = [
        f"# kernelscale bench {result['experiment']}: {result['title']}",
        "",
        f"- Command: `{result['command'] or 'kernelscale bench ' + result['experiment']}`",
        f"- Machine: {m['cpu']}, {m['cores']} cores; Python {m['python']}, NumPy {m['numpy']}, "
        f"SciPy {m['scipy']}, scikit-learn {m['sklearn']}, kernelscale {m['kernelscale']}",
        f"- Date: {result['created']}; total wall time {result['wall_s']:.0f} s",
        f"- Data: {result['data']['description']}; train {result['data']['train_shape'][0]} x "
        f"{result['data']['train_shape'][1]}, test {result['data']['test_rows']} rows",
        f"- RBF kernel, gamma = {result['gamma']:.6g} for every model; every number is the "
        f"median of {result['repeats']} run(s), the libraries interleaved in each run.",
        "- Speed-up = scikit-learn's fit+predict seconds / kernelscale's (below 1: kernelscale "
        "is slower), for the same model and number of features D (landmarks m for Nystroem); "
        "kernel error = "
        "||K - ZZ^T||_F / ||K||_F on test rows.",
    ]
    lines += [f"- {note}" for note in result["notes"]]
    lines += ["", "## Highlights", "", *highlights(result), "",
              "## Reference models", "", *_table(refs, records, train=train)]
    if result.get("highlight"):
        picks = [r for r in records if r["kind"] == "sweep"
                 and result["highlight"].get(r["family"]) == r["size"]]
        lines += ["", "## The source document's configuration", "",
                  *_table(refs + picks, records, train=train)]
    lines += ["", "## Accuracy and time vs number of features", ""]
    for size in result["sizes"]:
        rows = [r for r in records if r["kind"] == "sweep" and r["size"] == size]
        lines += _table(rows, records, train=train)[(0 if size == result["sizes"][0] else 2):]
    lines += ["", "## Plots", ""]
    lines += [f"![{key}]({path.name})" for key, path in paths.items() if key in PLOTS]
    paths["report"].write_text("\n".join(lines) + "\n")
    return paths


_COLORS = ["C0", "C1", "C2", "C3", "C4", "C5", "C6"]
_REF_STYLES = [("black", "--"), ("black", ":"), ("0.5", "--"), ("0.5", ":"), ("C7", "-."),
               ("C8", "-."), ("C9", "-.")]


def _plot(result, what, path):
    records = result["records"]
    key = {"accuracy": "accuracy", "time": "total_s", "error": "approx_error"}[what]
    sweep = [r for r in records if r["kind"] == "sweep" and key in r]
    if not sweep:
        return False
    fig = Figure(figsize=(9, 6.4), layout="constrained")
    ax = fig.subplots()
    labels = list(dict.fromkeys(r["label"] for r in sweep))
    # a scikit-learn model takes the colour of the kernelscale model of its family:
    # kernelscale solid with filled circles, scikit-learn dashed with hollow
    # squares drawn on top, so that identical curves stay visible
    colors, family_color = {}, {}
    for r in sorted(sweep, key=lambda r: r["library"] != KERNELSCALE):
        if r["label"] not in colors:
            if r["library"] == KERNELSCALE or r["family"] not in family_color:
                colors[r["label"]] = _COLORS[len(set(colors.values())) % len(_COLORS)]
                family_color.setdefault(r["family"], colors[r["label"]])
            else:
                colors[r["label"]] = family_color[r["family"]]
    for label in labels:
        rows = sorted((r for r in sweep if r["label"] == label), key=lambda r: r["size"])
        ours = rows[0]["library"] == KERNELSCALE
        color = colors[label]
        ax.plot([r["size"] for r in rows], [r[key] for r in rows], color=color,
                ls="-" if ours else "--", lw=2.2 if ours else 1.2,
                marker="o" if ours else "s", ms=7 if ours else 8,
                mfc=color if ours else "none", zorder=2 if ours else 3, label=label)
    if what != "error":
        refs = [r for r in records if r["kind"] == "reference"]
        n_train = result["data"]["train_shape"][0]
        for k, r in enumerate(refs):
            color, ls = _REF_STYLES[k % len(_REF_STYLES)]
            value = f"{r[key]:.4f}" if what == "accuracy" else f"{r[key]:.2f} s"
            rows = f", {r['train_rows']} training rows" if r["train_rows"] < n_train else ""
            ax.axhline(r[key], color=color, ls=ls, lw=1.2, label=f"{r['label']} ({value}{rows})")
    ax.set_xscale("log")
    sizes = sorted({r["size"] for r in sweep})
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("number of features D (landmarks m for Nystroem), log scale")
    if what == "accuracy":
        ax.set_ylabel("test accuracy (median)")
        ax.set_title(f"{result['title']}: test accuracy vs number of features")
    elif what == "time":
        ax.set_yscale("log")
        ax.set_ylabel("fit + predict seconds (median, log scale)")
        ax.set_title(f"{result['title']}: fit + predict time vs number of features")
    else:
        ax.set_yscale("log")
        ax.set_ylabel(r"relative kernel error $\|K - ZZ^T\|_F / \|K\|_F$")
        ax.set_title(f"{result['title']}: kernel approximation error vs D")
    ax.grid(True, which="both", alpha=0.3)
    fig.legend(fontsize=8, loc="outside lower center", ncols=2)
    fig.savefig(path, dpi=110)
    return True
