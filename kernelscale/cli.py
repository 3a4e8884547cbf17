"""Command line: ``kernelscale fit | predict | evaluate | bench | approx``.

Every command prints one-line errors (``kernelscale: error: ...``) and exits with
status 2 on bad input (missing files, malformed data, corrupt model files,
unknown options), never a traceback.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shlex
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from . import __version__
from ._config import config_context
from .bench import EXPERIMENTS, build_experiment, highlights, run_experiment, write_report
from .bench.approx import DEFAULT_MAPS, DEFAULT_SIZES, plot_approx, run_approx_experiment
from .datasets import (
    DATASETS,
    ChunkedDataset,
    guess_format,
    load_data,
    make_synthetic_problem,
    open_chunks,
)
from .feature_maps import FEATURE_MAPS
from .models import (
    ApproxKernelRidgeClassifier,
    ApproxKernelSVC,
    DoublySGDSVC,
    KernelLogisticRegression,
    KernelSVC,
    LinearSVC,
    NystromKernelRidgeClassifier,
)
from .persistence import load_model, save_model

__all__ = ["main"]


def _int_list(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _name_list(text):
    names = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [n for n in names if n not in FEATURE_MAPS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown map(s) {', '.join(unknown) or repr(text)}; "
            f"choose from {', '.join(FEATURE_MAPS)}"
        )
    return names


def _gamma(text):
    if text in ("scale", "auto"):
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"gamma must be 'scale', 'auto' or a number, got {text!r}"
        ) from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"gamma must be > 0, got {text!r}")
    return value


def _add_approx(subparsers):
    p = subparsers.add_parser(
        "approx",
        help="kernel approximation error and transform time of each feature map vs D",
        description=(
            "Fit every feature map at several sizes D on the training part of a built-in "
            "synthetic problem (the seed-000 make_classification set-up, standardized), "
            "and print the relative kernel approximation error ||K - ZZ^T||_F / ||K||_F "
            "on its held-out part, and the fit and transform times (medians over "
            "--repeats draws)."
        ),
    )
    p.add_argument("--kernel", choices=tuple(DEFAULT_MAPS), default="rbf")
    p.add_argument("--maps", type=_name_list, default=None,
                   help="comma-separated map names (default: all maps for the kernel)")
    p.add_argument("--sizes", type=_int_list, default=list(DEFAULT_SIZES),
                   help="comma-separated sizes D (default: %(default)s)")
    p.add_argument("--n-samples", type=int, default=5000,
                   help="rows generated; 75%% fit the maps, 25%% measure the error "
                        "(default: %(default)s)")
    p.add_argument("--gamma", type=_gamma, default="scale")
    p.add_argument("--degree", type=int, default=3,
                   help="polynomial degree (default: %(default)s)")
    p.add_argument("--coef0", type=float, default=0.0,
                   help="polynomial constant (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=3,
                   help="draws per map and size (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="base random seed (default: %(default)s)")
    p.add_argument("--plot", metavar="FILE", help="write a PNG of error and time vs D")
    p.add_argument("--json", metavar="FILE", help="write the records as JSON")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=_run_approx)


def _run_approx(args):
    if args.n_samples < 8:
        raise ValueError(f"--n-samples must be at least 8, got {args.n_samples}.")
    if args.repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {args.repeats}.")
    X, X_test, _, _ = make_synthetic_problem(args.n_samples, random_state=args.seed)
    maps = args.maps or DEFAULT_MAPS[args.kernel]
    with tqdm(total=len(maps) * len(args.sizes), desc="approx", unit="map",
              disable=args.no_progress, file=sys.stderr) as bar:
        records = run_approx_experiment(
            X, X_test, kernel=args.kernel, maps=maps, sizes=args.sizes, gamma=args.gamma,
            degree=args.degree, coef0=args.coef0, repeats=args.repeats,
            random_state=args.seed, progress=bar.update,
        )
    print(f"kernel={args.kernel} gamma={records[0]['gamma']:.4g} data: seed000 synthetic, "
          f"fit on {X.shape[0]} x {X.shape[1]}, error on {X_test.shape[0]} held-out rows "
          f"(median of {args.repeats} draws)")
    print(f"{'map':<18} {'D':>6} {'error':>9} {'fit s':>8} {'transform s':>12}")
    for r in records:
        print(f"{r['map']:<18} {r['n_features_out']:>6} {r['error']:>9.4f} "
              f"{r['fit_seconds']:>8.4f} {r['transform_seconds']:>12.4f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(records, fh, indent=1)
        print(f"records written to {args.json}")
    if args.plot:
        plot_approx(records, args.plot)
        print(f"plot written to {args.plot}")
    return 0


MODELS = {
    "linear-svc": (LinearSVC, "linear SVM on the raw features (dual coordinate descent)"),
    "approx-svc": (ApproxKernelSVC, "kernel SVM on a feature map (Nystroem, RFF, ...)"),
    "kernel-svc": (KernelSVC, "exact kernel SVM (SMO); for up to ~1e5 rows"),
    "ridge": (ApproxKernelRidgeClassifier, "kernel ridge classifier on a feature map"),
    "falkon": (NystromKernelRidgeClassifier, "Nystrom kernel ridge by preconditioned CG"),
    "logistic": (KernelLogisticRegression, "kernel logistic regression on a feature map"),
    "dsgd": (DoublySGDSVC, "kernel SVM by doubly stochastic gradients"),
}
"""``--model`` name -> (estimator class, description)."""

# command-line option -> (flag, estimator parameters it may set: the first one the model has)
_OPTION_PARAMS = {
    "map": ("--map", ("feature_map",)),
    "n_components": ("-m/--n-components", ("n_components", "n_centers")),
    "kernel": ("--kernel", ("kernel",)),
    "gamma": ("--gamma", ("gamma",)),
    "C": ("-C", ("C",)),
    "alpha": ("--alpha", ("alpha",)),
    "loss": ("--loss", ("loss",)),
    "max_iter": ("--max-iter", ("max_iter", "maxiter")),
    "seed": ("--seed", ("random_state",)),
}


def _positive_float(name):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{name} must be > 0, got {text!r}")
        return value
    return parse


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([kmgt]?)i?b?\s*$", re.I)


def _memory(text):
    match = _SIZE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"memory budget must look like 512M, 2G or a number of bytes, got {text!r}")
    scale = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[match.group(2).lower()]
    value = int(float(match.group(1)) * scale)
    if value < 1:
        raise argparse.ArgumentTypeError(f"memory budget must be positive, got {text!r}")
    return value


def _label_column(text):
    try:
        return int(text)
    except ValueError:
        return text


def _key_value(text):
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return key.strip(), value


def _add_data_options(p):
    p.add_argument("--format", choices=("auto", "svmlight", "csv", "npz", "npy"), default=None,
                   help="data format (default: by suffix; .csv/.tsv CSV, .npz / .npy NumPy, "
                        "otherwise svmlight; .gz/.bz2 allowed)")
    p.add_argument("--label-column", type=_label_column, default=None,
                   help="CSV label column: index (negative from the end) or header name "
                        "(default: -1, the last)")
    p.add_argument("--data-dir", default=None,
                   help="folder of the named data sets (default: $KERNELSCALE_DATA or "
                        "../shared/datasets)")
    p.add_argument("--memory-budget", type=_memory, default=None, metavar="SIZE",
                   help="bytes that blocked computations may use, e.g. 512M or 2G "
                        "(default: 256M)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")


@contextmanager
def _stages(names, disable):
    """A progress bar over named stages whose elapsed time keeps ticking during each."""
    import threading

    bar = tqdm(total=len(names), desc=names[0], unit="step", disable=disable, file=sys.stderr,
               bar_format="{desc:<28} {bar} {n_fmt}/{total_fmt} [{elapsed}]")
    stop = threading.Event()

    def tick():
        while not stop.wait(0.5):
            bar.refresh()

    thread = threading.Thread(target=tick, daemon=True)
    if not disable:
        thread.start()

    def advance(next_name=None):
        bar.update()
        if next_name:
            bar.set_description_str(next_name)

    try:
        yield advance
    finally:
        stop.set()
        bar.close()


def _budget(args):
    return config_context(memory_budget=args.memory_budget) if args.memory_budget \
        else config_context()


def _json_safe(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value if not isinstance(value, float) or np.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    return repr(value)


def _make_estimator(args):
    cls = MODELS[args.model][0]
    names = cls().get_params()
    params = {}
    for option, (flag, candidates) in _OPTION_PARAMS.items():
        value = getattr(args, option)
        if value is None:
            continue
        target = next((c for c in candidates if c in names), None)
        if target is None:
            raise ValueError(f"{flag} does not apply to --model {args.model} "
                             f"({cls.__name__}); its parameters: {', '.join(sorted(names))}.")
        params[target] = value
    if "random_state" in names:
        params.setdefault("random_state", 0)
    if args.verbose and "verbose" in names:
        params["verbose"] = 1
    for key, value in args.param:
        if key not in names:
            raise ValueError(f"--param {key}: {cls.__name__} has no parameter {key!r}; "
                             f"its parameters: {', '.join(sorted(names))}.")
        params[key] = value
    return cls(**params)


def _data_spec(args):
    """How to read data files, as stored in the model file for predict / evaluate."""
    return {"format": args.format or "auto",
            "label_column": -1 if args.label_column is None else args.label_column}


def _load(source, spec, data_dir, *, n_features=None, need_labels=True):
    X, y = load_data(source, format=spec["format"], n_features=n_features,
                     label_column=spec["label_column"], data_directory=data_dir)
    if need_labels and y is None:
        raise ValueError(f"{source}: no labels; training and evaluation need a label column.")
    if X.shape[0] == 0:
        raise ValueError(f"{source}: no rows.")
    return X, y


def _load_for_model(source, model, spec, data_dir, *, need_labels):
    """Read data to predict with a fitted model, in the layout it was trained on."""
    width = getattr(model, "n_features_in_", None)
    X, y = _load(source, spec, data_dir, n_features=width, need_labels=False)
    fmt = spec["format"]
    if fmt == "auto" and Path(str(source)).is_file():
        fmt = guess_format(source)
    if fmt == "csv" and width is not None and X.shape[1] == width - 1 and not need_labels:
        # a CSV without the label column: read every column as a feature
        X, y = _load(source, {**spec, "label_column": None}, data_dir, need_labels=False)
    if need_labels and y is None:
        raise ValueError(f"{source}: no labels to evaluate against.")
    if width is not None and X.shape[1] != width:
        raise ValueError(f"{source} has {X.shape[1]} features but the model was trained on "
                         f"{width}; pass data with the training columns.")
    return X, y


def _format_label(value):
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    if isinstance(value, (np.floating, float)):
        return repr(float(value))
    return str(value)


def _describe(X, y):
    kind = "sparse" if hasattr(X, "tocsr") else "dense"
    classes = np.unique(y)
    return (f"{X.shape[0]} rows x {X.shape[1]} features ({kind}), {len(classes)} classes "
            f"({', '.join(_format_label(c) for c in classes[:6])}"
            f"{', ...' if len(classes) > 6 else ''})")


def _add_fit(subparsers):
    models = "; ".join(f"{name}: {text}" for name, (_, text) in MODELS.items())
    p = subparsers.add_parser(
        "fit", help="train a model on a data file and write a model file",
        description=(
            "Train a classifier on TRAIN (svmlight, CSV or .npz file, or a named data set: "
            f"{', '.join(DATASETS)}, with :test for the test split), print its accuracy "
            "(on --test when given, else on the training data) and the timings, and "
            f"write the model file. Models: {models}."
        ),
    )
    p.add_argument("train", metavar="TRAIN", help="training data (file or a9a, mnist10k)")
    p.add_argument("--test", metavar="TEST", help="held-out data to report accuracy on")
    p.add_argument("--model", choices=tuple(MODELS), default="approx-svc",
                   help="which model (default: %(default)s)")
    p.add_argument("--map", choices=tuple(FEATURE_MAPS), default=None,
                   help="feature map of approx-svc / ridge / logistic (default: nystroem)")
    p.add_argument("-m", "--n-components", type=_positive_int, default=None,
                   help="features D or landmarks m (falkon: centres)")
    p.add_argument("--kernel", choices=("rbf", "laplacian", "polynomial", "linear"),
                   default=None, help="kernel (default: rbf)")
    p.add_argument("--gamma", type=_gamma, default=None,
                   help="kernel width: scale, auto or a number (default: scale)")
    p.add_argument("-C", type=_positive_float("C"), default=None,
                   help="SVM / logistic inverse regularization (default: 1)")
    p.add_argument("--alpha", type=_positive_float("alpha"), default=None,
                   help="ridge penalty (ridge, falkon)")
    p.add_argument("--loss", default=None, help="SVM loss: hinge or squared_hinge; dsgd: "
                                                "hinge or log_loss")
    p.add_argument("--max-iter", type=_positive_int, default=None, help="iteration limit")
    p.add_argument("--seed", type=int, default=None, help="random_state (default: 0)")
    p.add_argument("--param", type=_key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="any other estimator parameter, e.g. --param class_weight=balanced "
                        "(repeatable)")
    p.add_argument("--n-features", type=_positive_int, default=None,
                   help="svmlight: number of features (default: inferred)")
    p.add_argument("-o", "--output", required=True, metavar="MODEL",
                   help="model file to write (replaced atomically)")
    p.add_argument("--verbose", action="store_true", help="the solver's own progress output")
    p.add_argument("--stream", action="store_true",
                   help="read TRAIN (and TEST) in chunks instead of loading it: for data "
                        "larger than memory; the fit keeps to --memory-budget (models: "
                        f"{', '.join(_STREAM_MODELS)})")
    p.add_argument("--chunk-rows", type=_positive_int, default=None, metavar="N",
                   help="rows per chunk with --stream (default: sized from --memory-budget)")
    _add_data_options(p)
    p.set_defaults(func=_run_fit)


def _run_fit(args):
    estimator = _make_estimator(args)
    output = Path(args.output)
    if output.is_dir():
        raise IsADirectoryError(f"-o {args.output} is a directory; name a model file.")
    if not (output.parent if str(output.parent) else Path(".")).is_dir():
        raise FileNotFoundError(f"-o {args.output}: directory {str(output.parent)!r} does not "
                                "exist.")
    if args.stream:
        return _run_fit_stream(args, estimator, output)
    if args.chunk_rows is not None:
        raise ValueError("--chunk-rows applies to --stream fits only; add --stream.")
    spec = _data_spec(args)
    stages = ["loading training data"] + (["loading test data"] if args.test else []) + \
        [f"fitting {type(estimator).__name__}", "scoring", "writing model file"]
    timings = {}
    with _budget(args), _stages(stages, args.no_progress) as advance:
        start = time.perf_counter()
        X, y = _load(args.train, spec, args.data_dir, n_features=args.n_features)
        timings["load_s"] = time.perf_counter() - start
        advance(stages[1])
        if args.test:
            X_test, y_test = _load(args.test, spec, args.data_dir, n_features=X.shape[1])
            if X_test.shape[1] != X.shape[1]:
                raise ValueError(f"{args.test} has {X_test.shape[1]} features but {args.train} "
                                 f"has {X.shape[1]}; pass --n-features for svmlight files.")
            advance(stages[2])
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            estimator.fit(X, y)
        timings["fit_s"] = time.perf_counter() - start
        advance("scoring")
        X_eval, y_eval = (X_test, y_test) if args.test else (X, y)
        start = time.perf_counter()
        accuracy = float(np.mean(estimator.predict(X_eval) == y_eval))
        timings["predict_s"] = time.perf_counter() - start
        advance("writing model file")
        _save_fit(args, estimator, output, accuracy, timings,
                  {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1])})
        advance()
    lines = [f"train: {args.train}: {_describe(X, y)}"]
    if args.test:
        lines.append(f"test:  {args.test}: {X_test.shape[0]} rows")
    _print_fit(caught, lines, estimator, f"fit {timings['fit_s']:.2f} s, predict "
               f"{timings['predict_s']:.2f} s ({X_eval.shape[0]} rows), load "
               f"{timings['load_s']:.2f} s", args, accuracy, output)
    return 0


def _save_fit(args, estimator, output, accuracy, timings, data):
    """Write the model file with the fit's metadata (predict / evaluate read it back)."""
    metadata = {
        "model": args.model, "params": _json_safe(estimator.get_params()),
        "data": {**_data_spec(args), "source": str(args.train), **data},
        "accuracy": accuracy, "accuracy_on": "test" if args.test else "train",
        **{k: float(v) for k, v in timings.items()},
        "command": "kernelscale " + " ".join(shlex.quote(a) for a in args.argv),
    }
    save_model(estimator, output, metadata=metadata)


def _print_fit(caught, data_lines, estimator, timing_line, args, accuracy, output):
    """The fit's summary: warnings once each, the data, the model, times, accuracy."""
    for message in dict.fromkeys(str(w.message) for w in caught):
        print(f"kernelscale: warning: {message}", file=sys.stderr)
    for line in data_lines:
        print(line)
    print(f"model: {estimator!r}")
    print(timing_line)
    print(f"{'test' if args.test else 'training'} accuracy: {accuracy:.4f}")
    print(f"model written to {output}")


_STREAM_MODELS = ("approx-svc", "linear-svc", "ridge", "logistic", "falkon", "dsgd")


class _CountedChunks(ChunkedDataset):
    """A chunked data set that moves a progress bar as its chunks are read, pass after pass."""

    def __init__(self, inner, bar):
        super().__init__(inner.chunk_rows)
        self.inner, self.bar = inner, bar
        self.n_features, self.has_labels = inner.n_features, inner.has_labels
        self._n_samples, self.passes = inner._n_samples, 0

    def _chunks(self):
        self.passes += 1
        self.bar.set_description_str(f"pass {self.passes}")
        self.bar.reset(total=self._n_samples)
        for X, y in self.inner._chunks():
            yield X, y
            self.bar.update(X.shape[0])

    def head(self, n_rows):
        return self.inner.head(n_rows)

    def sample(self, n_rows, random_state=None):
        return self.inner.sample(n_rows, random_state)

    def classes(self):
        return self.inner.classes()


def _open_stream(source, args, n_features=None):
    path = Path(str(source))
    if not path.is_file():
        raise FileNotFoundError(f"--stream reads files: no file {str(source)!r} (named data "
                                "sets fit in memory; drop --stream for them).")
    fmt = args.format or "auto"
    label_column = -1 if args.label_column is None else args.label_column
    return open_chunks(path, format=fmt, chunk_rows=args.chunk_rows, label_column=label_column,
                       n_features=n_features, memory_budget=args.memory_budget)


def _stream_accuracy(estimator, data):
    hits = total = 0
    for X, y in data:
        hits += int(np.sum(estimator.predict(X) == y))
        total += X.shape[0]
    return hits / total, total


def _run_fit_stream(args, estimator, output):
    if args.model not in _STREAM_MODELS:
        raise ValueError(f"--stream is not available for --model {args.model}; use one of "
                         f"{', '.join(_STREAM_MODELS)}.")
    spec = _data_spec(args)
    if spec["format"] == "npz":
        raise ValueError("--stream cannot read .npz archives; save the data as .npy "
                         "(np.save(path, np.column_stack([X, y]))) and stream that.")
    train = _open_stream(args.train, args, n_features=args.n_features)
    test = _open_stream(args.test, args, n_features=train.n_features) if args.test else None
    if test is not None and test.n_features != train.n_features:
        raise ValueError(f"{args.test} has {test.n_features} features but {args.train} has "
                         f"{train.n_features}.")
    timings = {}
    bar = tqdm(total=train._n_samples, unit="row", unit_scale=True, disable=args.no_progress,
               file=sys.stderr, desc="pass 1")
    counted = _CountedChunks(train, bar)
    with _budget(args), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            estimator.fit(counted)
        finally:
            bar.close()
        timings["fit_s"] = time.perf_counter() - start
        start = time.perf_counter()
        accuracy, n_eval = _stream_accuracy(estimator, test if test is not None else train)
        timings["predict_s"] = time.perf_counter() - start
        _save_fit(args, estimator, output, accuracy, timings,
                  {"n_samples": int(counted.n_samples), "n_features": int(train.n_features),
                   "streamed": True, "chunk_rows": int(train.chunk_rows)})
    passes = f"{counted.passes} pass{'es' if counted.passes != 1 else ''}"
    _print_fit(caught, [f"train: {args.train}: {counted.n_samples} rows x {train.n_features} "
                        f"features, streamed in chunks of {train.chunk_rows} rows, {passes} "
                        f"over the data, {len(estimator.classes_)} classes"],
               estimator, f"fit {timings['fit_s']:.2f} s, predict {timings['predict_s']:.2f} s "
               f"({n_eval} rows)", args, accuracy, output)
    return 0


def _add_predict(subparsers):
    p = subparsers.add_parser(
        "predict", help="predict labels of a data file with a model file",
        description="Write one predicted label per line (in the label type of the training "
                    "data) to -o FILE or standard output. A CSV may omit the label column.",
    )
    p.add_argument("model", metavar="MODEL", help="model file written by kernelscale fit")
    p.add_argument("data", metavar="DATA", help="data file or named split (e.g. a9a:test)")
    p.add_argument("-o", "--output", metavar="FILE", help="write predictions here "
                                                          "(default: standard output)")
    _add_data_options(p)
    p.set_defaults(func=_run_predict)


def _read_model(args):
    model, header = load_model(args.model, return_header=True)
    if not hasattr(model, "predict"):
        raise ValueError(f"{args.model} holds a {type(model).__name__}, not a model that "
                         "predicts.")
    stored = header.get("metadata", {}).get("data", {})
    spec = {"format": args.format or stored.get("format", "auto"),
            "label_column": (args.label_column if args.label_column is not None
                             else stored.get("label_column", -1))}
    return model, header, spec


def _predict_file(args, *, need_labels):
    """Read MODEL and DATA, predict; what predict and evaluate share."""
    model, header, spec = _read_model(args)
    with _budget(args), _stages(["loading data", "predicting"], args.no_progress) as advance:
        X, y = _load_for_model(args.data, model, spec, args.data_dir, need_labels=need_labels)
        advance("predicting")
        start = time.perf_counter()
        pred = model.predict(X)
        seconds = time.perf_counter() - start
        advance()
    return model, header, X, y, pred, seconds


def _run_predict(args):
    _, _, _, _, pred, seconds = _predict_file(args, need_labels=False)
    text = "".join(_format_label(v) + "\n" for v in pred)
    if args.output:
        Path(args.output).write_text(text)
        print(f"{len(pred)} predictions written to {args.output} ({seconds:.2f} s)",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _add_evaluate(subparsers):
    p = subparsers.add_parser(
        "evaluate", help="accuracy and confusion matrix of a model file on labelled data",
        description="Predict DATA with MODEL and print the accuracy, the prediction time and "
                    "the confusion matrix (rows: true label, columns: predicted).",
    )
    p.add_argument("model", metavar="MODEL", help="model file written by kernelscale fit")
    p.add_argument("data", metavar="DATA", help="labelled data file or named split")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    _add_data_options(p)
    p.set_defaults(func=_run_evaluate)


def _run_evaluate(args):
    from sklearn.metrics import confusion_matrix

    model, header, X, y, pred, seconds = _predict_file(args, need_labels=True)
    labels = np.unique(np.concatenate([np.asarray(model.classes_), np.unique(y)])) \
        if np.asarray(y).dtype.kind == np.asarray(model.classes_).dtype.kind else \
        np.asarray(model.classes_)
    matrix = confusion_matrix(y, pred, labels=labels)
    accuracy = float(np.mean(pred == y))
    print(f"model: {header['estimator']} (kernelscale {header['kernelscale_version']}, "
          f"written {header['created']})")
    print(f"data: {args.data}: {X.shape[0]} rows")
    print(f"accuracy: {accuracy:.4f}   predict: {seconds:.2f} s")
    names = [_format_label(v) for v in labels]
    width = max(8, *(len(n) + 1 for n in names), len(str(matrix.max())) + 1)
    print("confusion matrix (rows: true, columns: predicted)")
    print(" " * width + "".join(f"{n:>{width}}" for n in names))
    for name, row in zip(names, matrix):
        print(f"{name:>{width}}" + "".join(f"{v:>{width}}" for v in row))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "accuracy": accuracy, "n_samples": int(X.shape[0]), "predict_s": seconds,
            "labels": names, "confusion_matrix": matrix.tolist(),
        }, indent=1))
    return 0


def _add_bench(subparsers):
    listing = "; ".join(f"{name}: {text}" for name, (_, text) in EXPERIMENTS.items())
    p = subparsers.add_parser(
        "bench", help="run a benchmark experiment, kernelscale beside scikit-learn",
        description=(
            "Run the source documents' experiments with kernelscale models and the "
            "scikit-learn peers side by side, and write report.md, results.json and PNG "
            f"plots into OUT/EXPERIMENT/. Experiments: {listing}; all runs every one."
        ),
    )
    p.add_argument("experiment", nargs="?", default="seed000",
                   choices=(*EXPERIMENTS, "all"), metavar="EXPERIMENT",
                   help=f"{', '.join(EXPERIMENTS)} or all (default: %(default)s)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="fewer sizes and smaller subsamples: a smoke run of a few minutes")
    size.add_argument("--full", action="store_true",
                      help="seed000 at the source document's 100,000 rows")
    p.add_argument("--out", default="kernelscale-report", metavar="DIR",
                   help="output folder (default: %(default)s)")
    p.add_argument("--repeats", type=_positive_int, default=3,
                   help="runs per model; tables show medians (default: %(default)s)")
    p.add_argument("--exact-rows", type=_positive_int, default=None,
                   help="fit the exact SVMs on a subsample of this many training rows "
                        "(default: all; --quick: a9a 8000, mnist 4000)")
    p.add_argument("--seed", type=int, default=0, help="base random seed (default: 0)")
    p.add_argument("--data-dir", default=None,
                   help="folder of a9a and MNIST (default: $KERNELSCALE_DATA or "
                        "../shared/datasets)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=_run_bench)


def _run_bench(args):
    names = list(EXPERIMENTS) if args.experiment == "all" else [args.experiment]
    command = "kernelscale " + " ".join(shlex.quote(a) for a in args.argv)
    for name in names:
        experiment = build_experiment(name, quick=args.quick, full=args.full,
                                      data_dir=args.data_dir, seed=args.seed,
                                      exact_rows=args.exact_rows)
        with tqdm(total=experiment.n_runs(args.repeats), desc=name, unit="fit",
                  disable=args.no_progress, file=sys.stderr) as bar:
            def progress(text, bar=bar):
                bar.set_postfix_str(text[-60:], refresh=False)
                bar.update()

            result = run_experiment(experiment, repeats=args.repeats, progress=progress,
                                    command=command)
        paths = write_report(result, Path(args.out) / name)
        print(f"# {name}: {result['title']} ({result['wall_s']:.0f} s)")
        print("\n".join(highlights(result)))
        print(f"report: {paths['report']}")
        print("plots: " + ", ".join(str(v) for k, v in paths.items()
                                    if k not in ("report", "results")))
    return 0



def build_parser():
    """Return the ``kernelscale`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="kernelscale",
        description="Kernel machines at scale: random features, Nystrom, fast solvers.",
    )
    parser.add_argument("--version", action="version", version=f"kernelscale {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_bench(subparsers)
    _add_fit(subparsers)
    _add_predict(subparsers)
    _add_evaluate(subparsers)
    _add_approx(subparsers)
    return parser


def main(argv=None):
    """Run the command line; returns the exit status."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    args.argv = argv
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("kernelscale: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError, MemoryError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"kernelscale: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
