"""Argument types, shared options and the names the parser offers (no heavy imports here).

The command line must answer ``--help`` in a fraction of a second, so nothing
here imports scikit-learn, numba or the estimators: the names below are the
library's registries written out, and ``tests/test_cli.py`` checks that they
match (``FEATURE_MAPS``, ``KERNELS``, ``EXPERIMENTS``, the model table).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys

__all__ = [
    "ParserError", "Parser", "MODELS", "MAP_NAMES", "KERNEL_NAMES", "EXPERIMENT_NAMES",
    "DATASET_NAMES", "STREAM_MODELS", "gamma", "positive_float", "nonnegative_float",
    "positive_int", "int_list",
    "map_list", "memory", "label_column", "key_value", "add_data_options", "add_task_option",
]

#: ``--model`` name -> (estimator class in ``kernelscale``, description)
MODELS = {
    "auto": ("auto", "chosen from the data's shape and the memory budget, at its defaults "
                     "(the rule of kernelscale tune's families=auto)"),
    "linear-svc": ("LinearSVC", "linear SVM on the raw features"),
    "approx-svc": ("ApproxKernelSVC", "kernel SVM on a feature map (Nystroem, RFF, ...)"),
    "kernel-svc": ("KernelSVC", "exact kernel SVM (SMO); for up to ~1e5 rows"),
    "ridge": ("ApproxKernelRidgeClassifier", "kernel ridge classifier on a feature map"),
    "falkon": ("NystromKernelRidgeClassifier", "Nystrom kernel ridge by preconditioned CG"),
    "logistic": ("KernelLogisticRegression", "kernel logistic regression on a feature map"),
    "dsgd": ("DoublySGDSVC", "kernel SVM by doubly stochastic gradients"),
    "svr": ("KernelSVR", "exact epsilon-SVR regression (SMO; numeric targets)"),
    "one-class": ("KernelOneClassSVM", "exact one-class SVM for novelty detection (labels "
                                       "ignored; predicts +1 inside, -1 outside)"),
    "approx-svr": ("ApproxKernelSVR", "epsilon-SVR on a feature map (linear in n)"),
    "approx-one-class": ("ApproxKernelOneClassSVM", "one-class SVM on a feature map"),
}
MAP_NAMES = ("rff", "rff-sincos", "orf", "sorf", "nystroem", "nystroem-kmeans",
             "nystroem-leverage", "maclaurin", "tensorsketch")
KERNEL_NAMES = ("rbf", "laplacian", "exponential", "polynomial", "sigmoid", "linear")
EXPERIMENT_NAMES = ("synthetic", "adult", "mnist", "narrow-kernel")
DATASET_NAMES = ("a9a", "mnist10k")
#: models whose fit can stream a file chunk by chunk (``fit --stream``)
#: search family -> the ``fit --model`` name of the model it refits
STREAM_MODELS = ("approx-svc", "approx-svr", "linear-svc", "ridge", "logistic", "falkon",
                 "dsgd")


class ParserError(Exception):
    """A bad command line: reported on one line with exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but every error is one line (``kernelscale: error: ...``), never the usage."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # "-5G" or "-1e3" are values (wrong ones, reported by their type), not options
        self._negative_number_matcher = re.compile(r"^-(\d|\.\d)[\w.+-]*$")

    def error(self, message):
        raise ParserError(f"{message} (see {self.prog} --help)")


def _number(text, name, kind=float):
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}") from None


def gamma(text):
    """``scale``, ``auto``, a positive number, per-feature widths (a comma list ``0.5,0,2``
    or a file of numbers: ``.npy``, or text with commas, spaces or lines; what
    ``kernelscale tune`` writes as ``*.widths.txt``) or a metric (a d x d matrix in a
    ``.npy`` file, or a text file of d lines of d numbers; ``tune``'s ``*.metric.npy``)."""
    if text in ("scale", "auto"):
        return text
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is not None:
        if not value > 0:
            raise argparse.ArgumentTypeError(
                f"gamma must be 'scale', 'auto' or > 0, got {text!r}")
        return value
    if "," in text:
        return _widths(text.split(","), text)
    from pathlib import Path

    path = Path(text)
    if path.is_file():
        import numpy as np

        if path.suffix == ".npy":
            values = np.load(path)
            if values.ndim == 2:
                return _matrix(values, text)
            return _widths(values.ravel().tolist(), text)
        rows = [line.replace(",", " ").split() for line in path.read_text().splitlines()
                if line.strip()]
        if len(rows) > 1 and all(len(r) == len(rows) for r in rows) and len(rows[0]) > 1:
            return _matrix(rows, text)
        return _widths([v for r in rows for v in r], text)
    raise argparse.ArgumentTypeError(
        f"gamma must be 'scale', 'auto', a number > 0, a comma list of per-feature widths "
        f"or a file of them; {text!r} is none of these (no such file)")


def _widths(items, text):
    try:
        values = [float(v) for v in items if str(v).strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--gamma {text!r}: per-feature widths must all be numbers") from None
    if not values or any(not (v >= 0) or v == float("inf") for v in values) \
            or not any(v > 0 for v in values):
        raise argparse.ArgumentTypeError(
            f"--gamma {text!r}: per-feature widths must be finite, >= 0, and not all 0")
    return tuple(values)


def _matrix(rows, text):
    """A metric's d x d matrix (its checks, symmetric and positive semi-definite, are the
    kernel's: :class:`kernelscale.kernels.Metric`)."""
    import numpy as np

    try:
        values = np.array(rows, dtype=float)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--gamma {text!r}: a metric's entries must all be numbers") from None
    if values.ndim != 2 or values.shape[0] != values.shape[1]:
        raise argparse.ArgumentTypeError(
            f"--gamma {text!r}: a metric must be a square d x d matrix, got {values.shape}")
    return values


def positive_float(name):
    def parse(text):
        value = _number(text, name)
        if not value > 0 or value != value:
            raise argparse.ArgumentTypeError(f"{name} must be > 0, got {text!r}")
        return value
    return parse


def nonnegative_float(name):
    def parse(text):
        value = _number(text, name)
        if not value >= 0:
            raise argparse.ArgumentTypeError(f"{name} must be >= 0, got {text!r}")
        return value
    return parse


def positive_int(text):
    value = _number(text, "the value", int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def int_list(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def map_list(text):
    names = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [n for n in names if n not in MAP_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown map(s) {', '.join(unknown) or repr(text)}; choose from "
            f"{', '.join(MAP_NAMES)}")
    return names


_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([kmgt]?)i?b?\s*$", re.I)


def memory(text):
    """``512M``, ``2G``, ``1.5G`` or a number of bytes."""
    if text.strip().startswith("-"):
        raise argparse.ArgumentTypeError(f"memory budget must be positive, got {text!r}")
    match = _SIZE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"memory budget must look like 512M, 2G or a number of bytes, got {text!r}")
    scale = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[match.group(2).lower()]
    value = int(float(match.group(1)) * scale)
    if value < 1:
        raise argparse.ArgumentTypeError(f"memory budget must be positive, got {text!r}")
    return value


def label_column(text):
    try:
        return int(text)
    except ValueError:
        return text


def key_value(text):
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return key.strip(), value


def add_task_option(p):
    """``--task``: what the target is, where the data alone cannot say."""
    p.add_argument("--task", choices=("auto", "classification", "regression"), default="auto",
                   help="auto: a target with fractional values is a regression, anything "
                        "else classes (an integer target with many values says so); or name "
                        "it (default: auto)")


def add_data_options(p):
    """``--format``, ``--label-column``, ``--data-dir``, ``--memory-budget``, ``--no-progress``."""
    p.add_argument("--format", choices=("auto", "svmlight", "csv", "npz", "npy"), default=None,
                   help="data format (default: by suffix; .csv/.tsv CSV, .npz / .npy NumPy, "
                        "otherwise svmlight; .gz/.bz2 allowed)")
    p.add_argument("--label-column", type=label_column, default=None,
                   help="CSV / .npy label column: index (negative from the end) or header "
                        "name (default: -1, the last)")
    p.add_argument("--delimiter", default=None, metavar="SEP",
                   help="CSV field separator (default: detected: comma, semicolon, tab or "
                        "bar; tab for .tsv)")
    p.add_argument("--data-dir", default=None,
                   help="folder of the named data sets (default: $KERNELSCALE_DATA or "
                        "../shared/datasets)")
    p.add_argument("--memory-budget", type=memory, default=None, metavar="SIZE",
                   help="bytes that blocked computations may use, e.g. 512M or 2G "
                        "(default: the library's, see kernelscale.get_config)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")


def stderr(text):
    print(text, file=sys.stderr, flush=True)
