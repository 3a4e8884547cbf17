"""``kernelscale predict`` and ``kernelscale evaluate``: a model file applied to a data file."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ._options import add_data_options

__all__ = ["add_parsers", "run_predict", "run_evaluate"]


def add_parsers(subparsers):
    p = subparsers.add_parser(
        "predict", help="predict labels of a data file with a model file",
        description="Write one predicted label per line (in the label type of the training "
                    "data) to -o FILE or standard output. A CSV may omit the label column.",
    )
    p.add_argument("model", metavar="MODEL", help="model file written by kernelscale fit")
    p.add_argument("data", metavar="DATA", help="data file or named split (e.g. a9a:test)")
    p.add_argument("-o", "--output", metavar="FILE", help="write predictions here "
                                                          "(default: standard output)")
    extra = p.add_mutually_exclusive_group()
    extra.add_argument("--probability", action="store_true",
                       help="after each label, the probability of every class (LIBSVM's "
                            "-b 1 output: a first line 'labels' and the classes); the model "
                            "must be fitted with probabilities (--param probability=True)")
    extra.add_argument("--decision-values", action="store_true",
                       help="after each label, the model's decision values")
    add_data_options(p)
    p.set_defaults(func=run_predict)
    p = subparsers.add_parser(
        "evaluate", help="accuracy and confusion matrix of a model file on labelled data",
        description="Predict DATA with MODEL and print the accuracy, the prediction time and "
                    "the confusion matrix (rows: true label, columns: predicted); for an SVR "
                    "model R^2, RMSE and MAE; for a one-class model the share of rows "
                    "predicted inside (and the accuracy when the labels are -1 / +1).",
    )
    p.add_argument("model", metavar="MODEL", help="model file written by kernelscale fit")
    p.add_argument("data", metavar="DATA", help="labelled data file or named split")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    add_data_options(p)
    p.set_defaults(func=run_evaluate)


def _read_model(args):
    from ..persistence import load_model

    model, header = load_model(args.model, return_header=True)
    if not hasattr(model, "predict"):
        raise ValueError(f"{args.model} holds a {type(model).__name__}, not a model that "
                         "predicts.")
    for flag, method in (("probability", "predict_proba"),
                         ("decision_values", "decision_function")):
        if getattr(args, flag, False) and not hasattr(model, method):
            why = (" was fitted without probabilities: refit it with --param probability=True"
                   if hasattr(type(model), "predict_proba") else " gives no " + method)
            raise ValueError(f"--{flag.replace('_', '-')}: {args.model} "
                             f"({type(model).__name__}){why}.")
    stored = header.get("metadata", {}).get("data", {})
    spec = {"format": args.format or stored.get("format", "auto"),
            "label_column": (args.label_column if args.label_column is not None
                             else stored.get("label_column", -1)),
            "delimiter": args.delimiter or stored.get("delimiter")}
    return model, header, spec


def load_for_model(source, model, spec, data_dir, *, need_labels, stored=None):
    """Read data to predict with a fitted model, in the layout it was trained on
    (``stored``: the model file's record of its training data)."""
    from ..datasets import FeatureCountError, guess_format
    from ._table import has_header, load_like_training
    from .fit import load_labelled

    if stored and stored.get("columns"):  # trained on a CSV read by its named columns
        if has_header(source, spec):
            return load_like_training(source, stored, spec, model, need_labels=need_labels)
        if any(kind != "numeric" for kind in stored["kinds"]):
            raise ValueError(f"{source} has no header; the model reads its columns by name "
                             f"({', '.join(stored['columns'])}): add the header line.")

    width = getattr(model, "n_features_in_", None)
    try:
        X, y = load_labelled(source, spec, data_dir, n_features=width, need_labels=False)
    except FeatureCountError as exc:
        raise ValueError(f"{source} has {exc.found} features but the model was trained on "
                         f"{width}; pass data with the training columns.") from None
    fmt = spec["format"]
    if fmt == "auto" and Path(str(source)).is_file():
        fmt = guess_format(source)
    if fmt == "csv" and width is not None and X.shape[1] == width - 1:
        if need_labels:
            raise ValueError(f"{source}: its {width} columns are the model's {width} features "
                             "and no label column; evaluate compares with labels, so add the "
                             "label column (or use predict).")
        # a CSV without the label column: read every column as a feature
        X, y = load_labelled(source, {**spec, "label_column": None}, data_dir,
                             need_labels=False)
    if need_labels and y is None:
        raise ValueError(f"{source}: no labels to evaluate against; evaluate needs the label "
                         "column (--label-column names or numbers it).")
    if width is not None and X.shape[1] != width:
        if fmt == "csv" and y is not None:
            # say how the columns were read: one of them was taken as the label
            where = spec.get("label_column", -1)
            raise ValueError(
                f"{source} has {X.shape[1] + 1} columns, read as {X.shape[1]} feature"
                f"{'s' if X.shape[1] != 1 else ''} and "
                f"a label (column {where}, where the model's training data had it), but the "
                f"model was trained on {width} features: give a CSV of its {width} feature "
                "columns (with or without the label).")
        raise ValueError(f"{source} has {X.shape[1]} features but the model was trained on "
                         f"{width}; pass data with the training columns.")
    return X, y


def _predict_file(args, *, need_labels):
    """Read MODEL and DATA, predict; what predict and evaluate share."""
    from ._output import budget, stages

    model, header, spec = _read_model(args)
    with budget(args), stages(args.no_progress) as advance:
        advance("loading data")
        X, y = load_for_model(args.data, model, spec, args.data_dir, need_labels=need_labels,
                              stored=header.get("metadata", {}).get("data"))
        advance("predicting")
        start = time.perf_counter()
        pred = model.predict(X)
        seconds = time.perf_counter() - start
    return model, header, X, y, pred, seconds


def run_predict(args):
    from ._output import check_output_path, format_label

    if args.output:
        check_output_path(args.output, "-o")
    model, _, X, _, pred, seconds = _predict_file(args, need_labels=False)
    lines = [format_label(v) for v in pred]
    if args.probability or args.decision_values:
        values = model.predict_proba(X) if args.probability else model.decision_function(X)
        values = values.reshape(len(pred), -1)
        lines = [f"{label} " + " ".join(f"{v:.6g}" for v in row)
                 for label, row in zip(lines, values)]
        if args.probability:
            lines.insert(0, "labels " + " ".join(format_label(c) for c in model.classes_))
    text = "".join(line + "\n" for line in lines)
    if args.output:
        Path(args.output).write_text(text)
        print(f"{len(pred)} predictions written to {args.output} ({seconds:.2f} s)",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def run_evaluate(args):
    import numpy as np
    from sklearn.metrics import confusion_matrix

    from ._output import (
        check_output_path,
        format_label,
        format_quality,
        json_safe,
        quality,
        task_of,
    )

    if args.json:
        check_output_path(args.json, "--json")
    model, header, X, y, pred, seconds = _predict_file(args, need_labels=True)
    steps = getattr(model, "steps", None)
    name = " -> ".join(type(step).__name__ for _, step in steps) if steps else \
        header["estimator"]
    print(f"model: {name} (kernelscale {header['kernelscale_version']}, "
          f"written {header['created']})")
    print(f"data: {args.data}: {X.shape[0]} rows")
    if task_of(model) != "classifier":
        scores = quality(model, y, pred)
        print(f"{format_quality(scores)}   predict: {seconds:.2f} s")
        if args.json:
            Path(args.json).write_text(json.dumps({
                **json_safe(scores), "n_samples": int(X.shape[0]), "predict_s": seconds},
                indent=1))
        return 0
    classes = np.asarray(model.classes_)
    labels = np.unique(np.concatenate([classes, np.unique(y)])) \
        if np.asarray(y).dtype.kind == classes.dtype.kind else classes
    unseen = ~np.isin(y, classes)
    if unseen.any():
        names = ", ".join(format_label(v) for v in np.unique(np.asarray(y)[unseen])[:10])
        print(f"kernelscale: warning: {int(unseen.sum())} of {len(y)} rows have labels the "
              f"model never saw in training ({names}; it knows "
              f"{', '.join(format_label(c) for c in classes[:10])}): they count as wrong. "
              "Check the label column and that these are the training task's data.",
              file=sys.stderr)
    matrix = confusion_matrix(y, pred, labels=labels)
    accuracy = float(np.mean(pred == y))
    print(f"accuracy: {accuracy:.4f}   predict: {seconds:.2f} s")
    names = [format_label(v) for v in labels]
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
