"""Real CSVs on the command line: columns by name, text categories encoded, missing values.

A CSV with a header is read by :func:`kernelscale.datasets.load_table` (pandas). Its
columns are encoded by :class:`kernelscale.datasets.TabularEncoder`, the Python API's
encoder at its defaults: numbers standardised, text one-hot (or ordinal, where declared;
compactly where it has hundreds of values), dates as year, day of year and weekday
(cycles), missing cells imputed (or refused, listing every affected column at once),
fitted on the training rows and stored in the model file as the first step of a
pipeline, so that predict and evaluate apply exactly what fit did. The model file
remembers the training columns by name: predict and evaluate accept a CSV with or
without the label column, in any column order, and refuse one whose features differ,
naming the difference. A label cell left empty in predict's data is a row to predict.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

__all__ = ["add_table_options", "encoded_names", "has_header", "load_training_table",
           "load_like_training",
           "with_preprocessing", "refuse_table_options", "PREPROCESS_STEP"]

#: the name of the preprocessing step in a model file's pipeline
PREPROCESS_STEP = "columns"


def add_table_options(p):
    """``--columns``, ``--drop-columns``, ``--ordinal``, ``--missing``,
    ``--drop-missing-labels``, ``--unknown-categories``."""
    names = dict(type=lambda text: [t.strip() for t in text.split(",") if t.strip()],
                 metavar="NAME[,NAME]")
    p.add_argument("--columns", default=None, **names,
                   help="CSV with a header: the feature columns to use (default: all but the "
                        "label and --drop-columns)")
    p.add_argument("--drop-columns", default=[], **names,
                   help="CSV with a header: columns to leave out (e.g. an id or a date)")
    p.add_argument("--ordinal", default=[], **names,
                   help="text columns to encode as one ordinal number (their values in sorted "
                        "order) instead of one-hot")
    p.add_argument("--missing", choices=("impute", "refuse"), default="impute",
                   help="missing cells (empty, NA, NaN, null, ?): impute (median; the most "
                        "frequent value of a text column) or refuse, listing every affected "
                        "column (default: impute)")
    p.add_argument("--drop-missing-labels", action="store_true",
                   help="CSV with a header: leave out the rows whose label cell is empty or "
                        "NA (default: refuse them, naming the lines)")
    p.add_argument("--unknown-categories", choices=("warn", "refuse"), default="warn",
                   help="at predict, a text value training never saw: warn and encode it as "
                        "unknown (no category), or refuse (default: warn)")


def has_header(source, spec):
    """Whether ``source`` is a CSV file whose first line names its columns."""
    from ..datasets import guess_format, sniff_delimiter
    from ..datasets import has_header as csv_has_header

    path = Path(str(source))
    fmt = spec.get("format") or "auto"
    if not path.is_file() or (fmt == "auto" and guess_format(path) != "csv") or \
            fmt not in ("auto", "csv"):
        return False
    return csv_has_header(path, spec.get("delimiter") or sniff_delimiter(path))


def _label(spec):
    label = spec.get("label_column", -1)
    return -1 if label is None else label


def _listing(counts):
    return ", ".join(f"{name} ({count})" for name, count in counts.items())


def load_training_table(source, spec, args):
    """``(X, y, preprocessor, record, line)`` of a headed training CSV.

    ``preprocessor`` is the table's encoder (:class:`kernelscale.datasets.TabularEncoder`
    at the Python API's defaults: numbers standardised); ``record`` what the model file
    keeps to read data the same way; ``line`` says what was encoded, imputed and dropped
    (None when every column is a complete number).
    """
    from ..datasets import load_table, sniff_delimiter

    delimiter = spec.get("delimiter") or sniff_delimiter(source)
    table = load_table(source, label=_label(spec), columns=args.columns,
                       drop_columns=args.drop_columns, delimiter=delimiter,
                       drop_missing_labels=getattr(args, "drop_missing_labels", False))
    if not table.names:
        raise ValueError(f"{source}: no feature columns left (--columns / --drop-columns).")
    text = [n for n, k in zip(table.names, table.kinds) if k == "text"]
    undeclared = [n for n in args.ordinal if n not in text]
    if undeclared:
        raise ValueError(f"--ordinal: {', '.join(undeclared)}: not a text column of "
                         f"{source} (its text columns: {', '.join(text) or 'none'}).")
    missing = table.missing()
    if missing and args.missing == "refuse":
        raise ValueError(f"{source}: missing values in {len(missing)} column"
                         f"{'s' if len(missing) > 1 else ''}: {_listing(missing)}; give "
                         "--missing impute, or --drop-columns them.")
    record = {"columns": table.names, "kinds": table.kinds, "label_name": table.label,
              "dropped": table.others, "missing": args.missing,
              "unknown_categories": args.unknown_categories}
    from ..datasets import TabularEncoder

    # the Python API's encoder with the API's defaults: numbers standardised, so that a
    # kernel compares columns on one scale (raw pressures near 1,000 beside 0 / 1 columns
    # gave gamma="scale" 1.7e-07 and a model at 0.67-0.71 where HGB scored 0.97). Fitted
    # here for its report, refitted on the same rows by the fit
    preprocessor = TabularEncoder(ordinal=list(args.ordinal) or None, missing=args.missing,
                                  unknown="ignore", feature_names=table.names)
    X = table.frame
    preprocessor.fit(X)
    dropped = (f"{table.dropped} rows without a label left out (--drop-missing-labels)"
               if table.dropped else None)
    if not (text or missing):  # numbers only: standardised, nothing to report
        return X, table.y, preprocessor, record, dropped
    lines = [f"columns: {len(table.names)} features ({len(table.names) - len(text)} numeric, "
             f"{len(text)} text)"] + [f"  {line}" for line in preprocessor.report_]
    if table.others:
        lines.append("  not used: " + ", ".join(table.others))
    if dropped:
        lines.append(f"  {dropped}")
    return X, table.y, preprocessor, record, "\n".join(lines)


def encoded_names(preprocessor, record):
    """The names of the model's input columns: the CSV's, a one-hot column as
    ``name=value``, a date's parts as ``name_year`` ... (None when the training data
    had no header).

    Examples
    --------
    >>> encoded_names(None, {"columns": ["a", "b"]})
    ['a', 'b']
    >>> encoded_names(None, {})
    """
    columns = record.get("columns")
    if not columns:
        return None
    if preprocessor is None:
        return list(columns)
    return [str(n) for n in preprocessor.get_feature_names_out()]


def load_like_training(source, record, spec, model, *, need_labels, imputes=None):
    """``(X, y)`` of a headed CSV, in the training columns' order and encoding.

    The label column may be there or not; features missing or extra (other than
    those training left out) are refused, naming them. ``model``: the fitted
    model (its preprocessing checks the categories), or None before the fit
    (``imputes`` then says whether missing cells will be imputed).
    """
    import pandas as pd

    from ..datasets import Table, load_table, sniff_delimiter

    delimiter = spec.get("delimiter") or sniff_delimiter(source)
    label = record.get("label_name")
    table = load_table(source, label=label, delimiter=delimiter, need_label=False)
    if need_labels and table.y is None:
        raise ValueError(f"{source}: no label column {label!r}; evaluate compares with "
                         "labels (use predict for data without them).")
    trained = record["columns"]
    absent = [n for n in trained if n not in table.names]
    extra = [n for n in table.names if n not in trained and n not in record.get("dropped", [])]
    if absent or extra:
        what = []
        if absent:
            what.append(f"missing {', '.join(absent)}")
        if extra:
            what.append(f"not in training: {', '.join(extra)}")
        raise ValueError(f"{source}: its columns differ from the model's training columns "
                         f"({'; '.join(what)}); pass data with the columns "
                         f"{', '.join(trained)}.")
    frame = table.frame[list(trained)].copy()
    kinds = Table(frame=frame).kinds
    for name, was, now in zip(trained, record["kinds"], kinds):
        if was == "numeric" and now == "text":
            sample = next(v for v in frame[name] if isinstance(v, str))
            raise ValueError(f"{source}: column {name} was numeric in training; here it holds "
                             f"text (e.g. {sample!r}).")
        if was == "text" and now == "numeric":  # numbers in a text column are its values
            frame[name] = frame[name].map(lambda v: None if pd.isna(v) else f"{v:g}")
    aligned = Table(frame=frame, y=table.y, label=table.label)
    missing = aligned.missing()
    preprocess = _preprocess_step(model)
    if imputes is None:
        imputes = preprocess is not None
    if missing and (record.get("missing") == "refuse" or not imputes):
        raise ValueError(f"{source}: missing values in {_listing(missing)}; the model was "
                         "fitted without imputing them: fill or drop those rows.")
    if preprocess is not None:
        _check_categories(source, aligned, preprocess, record)
    X, y = (aligned.frame if preprocess is not None else aligned.to_array()), aligned.y
    if y is not None and y.dtype == object and any(v is None for v in y):
        # an empty label cell is a row to predict: predict takes it, evaluate cannot score it
        known = np.array([v is not None for v in y])
        if need_labels:
            print(f"kernelscale: warning: {int((~known).sum())} rows have no label: evaluated "
                  f"on the other {int(known.sum())}", file=sys.stderr, flush=True)
            X = X.iloc[known] if hasattr(X, "iloc") else X[known]
            y = np.array(y[known].tolist())
    return X, y


def _preprocess_step(model):
    steps = getattr(model, "named_steps", {})
    return steps.get(PREPROCESS_STEP)


def with_preprocessing(preprocessor, estimator):
    """``estimator`` behind the CSV's preprocessing (when there is any)."""
    if preprocessor is None:
        return estimator
    from sklearn.pipeline import Pipeline

    return Pipeline([(PREPROCESS_STEP, preprocessor), ("model", estimator)])


def refuse_table_options(args, source):
    """--columns and the like name CSV columns: refuse them for other data."""
    given = [flag for flag, value in (("--columns", args.columns),
                                      ("--drop-columns", args.drop_columns),
                                      ("--ordinal", args.ordinal)) if value]
    if given:
        raise ValueError(f"{', '.join(given)} name{'s' if len(given) == 1 else ''} columns of a "
                         f"CSV with a header; {source} is not one.")


def _check_categories(source, table, preprocess, record):
    """Warn about (or refuse) text values training never saw, per column."""
    unknown = {}
    if hasattr(preprocess, "unknown_values"):  # the tabular encoder
        for name, values in preprocess.unknown_values(table.frame).items():
            column = table.frame[name].astype(str).str.strip()
            unknown[name] = (int(column.isin(values).sum()), values[:3])
    if not unknown:
        return
    text = "; ".join(f"{name}: {count} rows ({', '.join(map(repr, values))}"
                     f"{', ...' if count > len(values) else ''})"
                     for name, (count, values) in unknown.items())
    if record.get("unknown_categories") == "refuse":
        raise ValueError(f"{source}: values training never saw in {text}; the model was "
                         "fitted with --unknown-categories refuse.")
    print(f"kernelscale: warning: values training never saw, encoded as unknown: {text}",
          file=sys.stderr, flush=True)
