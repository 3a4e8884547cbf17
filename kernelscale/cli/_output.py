"""What the subcommands share: the memory-budget context, stage lines, labels, the fit summary."""

from __future__ import annotations

import shlex
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = ["budget", "stages", "json_safe", "format_label", "describe", "print_warnings",
           "command_line", "check_output_path", "data_spec", "save_fit", "print_fit"]


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


def describe(X, y):
    kind = "sparse" if hasattr(X, "tocsr") else "dense"
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


def save_fit(args, estimator, output, accuracy, timings, data):
    """Write the model file with the fit's metadata (predict / evaluate read it back)."""
    from ..persistence import save_model

    metadata = {
        "model": args.model, "params": json_safe(estimator.get_params()),
        "data": {**data_spec(args), "source": str(args.train), **data},
        "accuracy": accuracy, "accuracy_on": "test" if args.test else "train",
        **{k: float(v) for k, v in timings.items()},
        "command": command_line(args),
    }
    save_model(estimator, output, metadata=metadata)


def print_fit(caught, data_lines, estimator, timing_line, args, accuracy, output):
    """The fit's summary: warnings once each, the data, the model, times, accuracy."""
    print_warnings(caught)
    for line in data_lines:
        print(line)
    print(f"model: {estimator!r}")
    print(timing_line)
    print(f"{'test' if args.test else 'training'} accuracy: {accuracy:.4f}")
    print(f"model written to {Path(output)}")
