"""What the subcommands share: the memory-budget context, stage lines, labels, the fit summary."""

from __future__ import annotations

import shlex
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = ["budget", "stages", "json_safe", "format_label", "describe", "print_warnings",
           "command_line", "check_output_path", "data_spec", "save_fit", "print_fit",
           "task_of", "quality", "format_quality"]


@contextmanager
def budget(args):
    """The command's ``--memory-budget`` and progress setting, for everything run inside."""
    from .._config import config_context

    options = {"show_progress": not getattr(args, "no_progress", False)}
    if getattr(args, "memory_budget", None):
        options["memory_budget"] = args.memory_budget
    with config_context(**options):
        yield


@contextmanager
def stages(disable):
    """``advance(name)`` prints each stage as it starts and the time the previous one took.

    The stages themselves (fits, searches) show their own progress bars; this
    only says where the command is, one line per stage on standard error.
    """
    state = {"name": None, "start": time.perf_counter()}

    def advance(name=None):
        now = time.perf_counter()
        if not disable and state["name"] is not None:
            print(f"  {state['name']}: {now - state['start']:.1f} s", file=sys.stderr,
                  flush=True)
        state["name"], state["start"] = name, now

    try:
        yield advance
    finally:
        advance()


def json_safe(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value if not isinstance(value, float) or np.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    return repr(value)


def format_label(value):
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    if isinstance(value, (np.floating, float)):
        return repr(float(value))
    return str(value)


def task_of(estimator):
    """"classifier", "regressor" or "outlier" (what a fitted model's scores mean)."""
    from sklearn.base import is_outlier_detector, is_regressor

    if is_regressor(estimator):
        return "regressor"
    return "outlier" if is_outlier_detector(estimator) else "classifier"


def quality(estimator, y, pred):
    """Named scores of predictions: accuracy; R^2, RMSE and MAE; or the inlier share.

    A one-class model's labels are compared with the data's when those are -1 / +1.
    """
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    task = task_of(estimator)
    if task == "regressor":
        return {"r2": float(r2_score(y, pred)),
                "rmse": float(np.sqrt(mean_squared_error(y, pred))),
                "mae": float(mean_absolute_error(y, pred))}
    if task == "outlier":
        scores = {"inlier_fraction": float(np.mean(pred == 1))}
        if y is not None and set(np.unique(y).tolist()) <= {-1, 1}:
            scores["accuracy"] = float(np.mean(pred == y))
        return scores
    return {"accuracy": float(np.mean(pred == y))}


def format_quality(scores):
    names = {"r2": "R^2", "rmse": "RMSE", "mae": "MAE", "inlier_fraction": "inlier fraction"}
    return ", ".join(f"{names.get(k, k)}: {v:.4f}" for k, v in scores.items())


def describe(X, y, task=None):
    """The data in one line: rows, features, and the classes or the target's range."""
    kind = "sparse" if hasattr(X, "tocsr") else "dense"
    if task == "regression" or (task is None and np.asarray(y).dtype.kind == "f"
                                and np.unique(y).size > 20):
        return (f"{X.shape[0]} rows x {X.shape[1]} features ({kind}), numeric targets in "
                f"[{np.min(y):.4g}, {np.max(y):.4g}]")
    classes = np.unique(y)
    return (f"{X.shape[0]} rows x {X.shape[1]} features ({kind}), {len(classes)} classes "
            f"({', '.join(format_label(c) for c in classes[:6])}"
            f"{', ...' if len(classes) > 6 else ''})")


def print_warnings(caught):
    """Each distinct warning once, as ``kernelscale: warning: ...``."""
    for message in dict.fromkeys(" ".join(str(w.message).split()) for w in caught):
        print(f"kernelscale: warning: {message}", file=sys.stderr)


def command_line(args):
    return "kernelscale " + " ".join(shlex.quote(a) for a in args.argv)


def check_output_path(path, flag):
    """Refuse an output path that cannot be written, before any work is done."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{flag} {path} is a directory; name a file.")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(f"{flag} {path}: directory {str(parent)!r} does not exist.")
    import os

    if not os.access(parent, os.W_OK):
        raise PermissionError(f"{flag} {path}: directory {str(parent)!r} is not writable.")
    if path.exists() and not os.access(path, os.W_OK):
        raise PermissionError(f"{flag} {path}: the file exists and is not writable.")
    return path


def data_spec(args):
    """How to read data files, as stored in the model file for predict / evaluate."""
    return {"format": args.format or "auto",
            "label_column": -1 if args.label_column is None else args.label_column,
            "delimiter": getattr(args, "delimiter", None)}


def save_fit(args, estimator, output, scores, timings, data):
    """Write the model file with the fit's metadata (predict / evaluate read it back).

    ``scores``: the accuracy (a float), or the named scores of :func:`quality`.
    """
    from ..persistence import save_model

    scores = scores if isinstance(scores, dict) else {"accuracy": scores}
    metadata = {
        "model": args.model, "params": json_safe(estimator.get_params()),
        "data": {**data_spec(args), "source": str(args.train), **data},
        **json_safe(scores), "accuracy_on": "test" if args.test else "train",
        **{k: float(v) for k, v in timings.items()},
        "command": command_line(args),
    }
    save_model(estimator, output, metadata=metadata)


def print_fit(caught, data_lines, estimator, timing_line, args, scores, output):
    """The fit's summary: warnings once each, the data, the model, times, scores."""
    print_warnings(caught)
    for line in data_lines:
        print(line)
    # a pipeline's steps before the model (the CSV's encoding, --scale) are said elsewhere
    print(f"model: {estimator[-1] if hasattr(estimator, 'steps') else estimator!r}")
    print(timing_line)
    scores = scores if isinstance(scores, dict) else {"accuracy": scores}
    print(f"{'test' if args.test else 'training'} {format_quality(scores)}")
    print(f"model written to {Path(output)}")
