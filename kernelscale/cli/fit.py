"""``kernelscale fit``: train a model on a data file and write a model file."""

from __future__ import annotations

import sys
import time
import warnings

from ._options import (
    DATASET_NAMES,
    KERNEL_NAMES,
    MAP_NAMES,
    MODELS,
    STREAM_MODELS,
    add_data_options,
    add_task_option,
    key_value,
    nonnegative_float,
    positive_float,
    positive_int,
)
from ._options import gamma as gamma_type
from ._table import add_table_options, with_preprocessing

__all__ = ["add_parser", "run", "make_estimator", "load_labelled"]

# command-line option -> the estimator parameter of the same meaning (one name per concept)
OPTION_PARAMS = {"map": "feature_map", "n_components": "n_components", "kernel": "kernel",
                 "gamma": "gamma", "C": "C", "alpha": "alpha", "loss": "loss",
                 "epsilon": "epsilon", "nu": "nu", "max_iter": "max_iter",
                 "seed": "random_state"}


def add_parser(subparsers):
    models = "; ".join(f"{name}: {text}" for name, (_, text) in MODELS.items())
    p = subparsers.add_parser(
        "fit", help="train a model on a data file and write a model file",
        description=(
            "Train a model on TRAIN (svmlight, CSV, .npz or .npy file, or a named data "
            f"set: {', '.join(DATASET_NAMES)}, with :test for the test split), print its "
            "accuracy (R^2 for svr; on --test when given, else on the training data) and the "
            "timings, and "
            f"write the model file. Models: {models}. Options a model does not have are an "
            "error; options left out take the model's own defaults."
        ),
    )
    p.add_argument("train", metavar="TRAIN", help="training data (file or a9a, mnist10k)")
    p.add_argument("--test", metavar="TEST", help="held-out data to report accuracy on")
    p.add_argument("--model", choices=tuple(MODELS), default=None,
                   help="which model (default: approx-svc for classes, falkon for a "
                        "regression); falkon, ridge and auto follow the task")
    p.add_argument("--map", choices=MAP_NAMES, default=None,
                   help="feature map of approx-svc / ridge / logistic (default: nystroem)")
    p.add_argument("-m", "--n-components", type=positive_int, default=None,
                   help="size of the approximation: features D, landmarks or centres m "
                        "(default: 1000 for approx-svc / ridge / logistic, auto for falkon)")
    p.add_argument("--kernel", choices=KERNEL_NAMES, default=None,
                   help="kernel (default: rbf)")
    p.add_argument("--gamma", type=gamma_type, default=None,
                   help="kernel scale: scale, auto, a number, per-feature widths (rbf, "
                        "laplacian, exponential) as a comma list or a file of numbers, or a "
                        "learned metric: a d x d matrix in a .npy or text file (tune writes "
                        "MODEL.metric.npy) (default: scale)")
    p.add_argument("-C", type=positive_float("C"), default=None,
                   help="SVM / logistic inverse regularization (default: 1)")
    p.add_argument("--alpha", type=positive_float("alpha"), default=None,
                   help="ridge / falkon penalty (default: 1 for ridge, auto = 1e-6 n for "
                        "falkon)")
    p.add_argument("--epsilon", type=nonnegative_float("epsilon"), default=None,
                   help="svr: half-width of the insensitive tube (LIBSVM's -p; default: 0.1)")
    p.add_argument("--nu", type=positive_float("nu"), default=None,
                   help="one-class: the share of training rows allowed outside, in (0, 1] "
                        "(LIBSVM's -n; default: 0.5)")
    p.add_argument("--loss", default=None,
                   help="SVM loss: hinge or squared_hinge (default: squared_hinge); dsgd: "
                        "hinge or log_loss (default: hinge)")
    p.add_argument("--max-iter", type=positive_int, default=None,
                   help="iteration limit (default: the model's: 1000 for the linear solvers, "
                        "50 CG iterations for falkon, 500 for logistic and dsgd, no limit "
                        "for kernel-svc)")
    p.add_argument("--seed", type=int, default=None, help="random_state (default: 0)")
    p.add_argument("--param", type=key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="any other estimator parameter, e.g. --param class_weight=balanced "
                        "(repeatable)")
    p.add_argument("--n-features", type=positive_int, default=None,
                   help="svmlight: number of features (default: inferred)")
    p.add_argument("-o", "--output", required=True, metavar="MODEL",
                   help="model file to write (replaced atomically)")
    p.add_argument("--verbose", action="store_true", help="the solver's own progress output")
    p.add_argument("--stream", action="store_true",
                   help="read TRAIN (and TEST) in chunks instead of loading it: for data "
                        "larger than memory; the fit keeps to --memory-budget (models: "
                        f"{', '.join(STREAM_MODELS)})")
    p.add_argument("--chunk-rows", type=positive_int, default=None, metavar="N",
                   help="rows per chunk with --stream (default: sized from --memory-budget)")
    p.add_argument("--cv", type=positive_int, default=None, metavar="K",
                   help="also print the K-fold cross-validation accuracy of these settings "
                        "on TRAIN (LIBSVM's svm-train -v; stratified folds, --seed)")
    p.add_argument("--scale", choices=("minmax", "standard"), default=None,
                   help="scale every feature on TRAIN and store the scaling in the model file, "
                        "so predict / evaluate scale their data the same way (the job of "
                        "LIBSVM's svm-scale): minmax to [-1, 1] (svm-scale's default; sparse "
                        "data: divided by the largest absolute value, keeping zeros), standard "
                        "to zero mean and unit variance (sparse: unit variance only). A CSV with "
                        "a header is standardised by its encoder whatever this says, as in "
                        "the Python API")
    add_task_option(p)
    add_table_options(p)
    add_data_options(p)
    p.set_defaults(func=run)


def make_estimator(args, task="classification"):
    """The estimator ``--model`` names for ``task``, with the options given on the
    command line."""
    import kernelscale

    from ._task import model_class

    if args.model == "auto":
        # the family is chosen once the data's shape is known (_run_in_memory)
        return None
    cls = getattr(kernelscale, model_class(args.model, task))
    names = cls().get_params()
    params = {}
    for option, param in OPTION_PARAMS.items():
        value = getattr(args, option, None)
        if value is None:
            continue
        if param not in names:
            flag = {"map": "--map", "n_components": "-m", "C": "-C", "max_iter": "--max-iter",
                    "seed": "--seed"}.get(option, "--" + option.replace("_", "-"))
            raise ValueError(f"{flag} does not apply to --model {args.model} "
                             f"({cls.__name__}); its parameters: {', '.join(sorted(names))}.")
        params[param] = value
    if "random_state" in names:
        params.setdefault("random_state", 0)
    if args.verbose and "verbose" in names:
        params["verbose"] = 1
    for key, value in args.param:
        if key not in names:
            raise ValueError(f"--param {key}: {cls.__name__} has no parameter {key!r}; "
                             f"its parameters: {', '.join(sorted(names))}.")
        params[key] = value
    estimator = cls(**params)
    from .._constraints import validate_params

    validate_params(estimator)  # a bad value is reported before any data is read
    return estimator


def with_scaling(args, estimator, X):
    """``estimator`` behind the scaler ``--scale`` names (fitted on the training rows)."""
    if args.scale is None:
        return estimator
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    sparse = hasattr(X, "tocsr")
    if args.scale == "minmax":
        scaler = MaxAbsScaler() if sparse else MinMaxScaler(feature_range=(-1, 1))
    else:
        scaler = StandardScaler(with_mean=not sparse)
    return make_pipeline(scaler, estimator)


def auto_estimator(args, X, y, task="classification"):
    """The estimator ``--model auto`` picks for these data, and why (one line)."""
    import numpy as np

    from .._validation import resolve_memory_budget
    from ..model_selection import FAMILIES, choose_families

    classify = task == "classification"
    families, why = choose_families("classifier" if classify else "regressor", X.shape[0],
                                    X.shape[1], int(np.unique(y).size) if classify else None,
                                    resolve_memory_budget(None))
    args.model = FAMILIES[families[0]].cli_model
    return make_estimator(args, task), why


def load_labelled(source, spec, data_dir, *, n_features=None, need_labels=True):
    from ..datasets import load_data

    X, y = load_data(source, format=spec["format"], n_features=n_features,
                     label_column=spec["label_column"], delimiter=spec.get("delimiter"),
                     data_directory=data_dir)
    if need_labels and y is None:
        raise ValueError(f"{source}: no labels; training and evaluation need a label column "
                         "(--label-column names or numbers it).")
    if X.shape[0] == 0:
        raise ValueError(f"{source}: no rows.")
    from .._validation import check_width, resolve_memory_budget

    check_width(X, resolve_memory_budget(None), str(source))  # --memory-budget is in force
    return X, y


def run(args):
    from ._output import check_output_path
    from ._task import default_model, infer_task

    output = check_output_path(args.output, "-o")
    # the options are checked against the model before any data is read: the model
    # named, else the one of the task --task or --model fixes (classes where neither does)
    task, _ = infer_task(None, args.task, args.model)
    if args.model is None and (args.stream or args.task != "auto"):
        args.model = default_model(task)
    estimator = make_estimator(_with_model(args, default_model(task)), task)
    follows = args.model in ("auto", "falkon", "ridge") and args.task == "auto"
    if args.model is None or (follows and not args.stream):
        estimator = None  # the target decides (_run_in_memory)
    if args.model == "auto" and (args.stream or args.chunk_rows is not None):
        raise ValueError("--model auto needs the data in memory; name a model with --stream "
                         f"({', '.join(STREAM_MODELS)}).")
    if args.cv is not None and estimator is not None:
        from ._output import task_of

        if task_of(estimator) == "outlier":
            raise ValueError("--cv scores a classifier or a regressor; a one-class model has "
                             "no labels to cross-validate against (drop --cv).")
    if args.cv is not None and (args.cv < 2 or args.stream):
        raise ValueError("--cv K needs K >= 2 folds" if args.cv < 2 else
                         "--cv needs the data in memory; drop --stream.")
    if args.stream and args.scale:
        raise ValueError("--scale needs the data in memory (the scaling is fitted on all of "
                         "TRAIN first); scale the file beforehand or drop --stream.")
    if args.stream:
        from .fit_stream import run_stream

        return run_stream(args, estimator, output)
    if args.chunk_rows is not None:
        raise ValueError("--chunk-rows applies to --stream fits only; add --stream.")
    return _run_in_memory(args, estimator, output)


def _run_in_memory(args, estimator, output):

    from ._output import budget, data_spec, describe, print_fit, quality, save_fit, stages

    spec = data_spec(args)
    timings = {}
    with budget(args), stages(args.no_progress) as advance:
        advance("loading training data")
        start = time.perf_counter()
        X, y, prep, record = load_training(args, spec)
        timings["load_s"] = time.perf_counter() - start
        if args.test:
            advance("loading test data")
            X_test, y_test = load_test(args, spec, X, prep, record)
            if X_test.shape[1] != X.shape[1]:
                raise ValueError(f"{args.test} has {X_test.shape[1]} features but {args.train} "
                                 f"has {X.shape[1]}; pass --n-features for svmlight files.")
        estimator, task = _for_target(args, estimator, X, y)
        estimator = with_preprocessing(prep, with_scaling(args, estimator, X))
        cv_line = _cross_validate(args, estimator, X, y, advance) if args.cv else None
        advance(f"fitting {type(estimator).__name__}")
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            estimator.fit(X, y)
        timings["fit_s"] = time.perf_counter() - start
        advance("scoring")
        X_eval, y_eval = (X_test, y_test) if args.test else (X, y)
        start = time.perf_counter()
        pred = estimator.predict(X_eval)
        timings["predict_s"] = time.perf_counter() - start
        scores = quality(estimator, y_eval, pred)
        advance("writing model file")
        save_fit(args, estimator, output, scores, timings,
                 {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]), **record})
    lines = [f"train: {args.train}: {describe(X, y, task)}"]
    if args.test:
        lines.append(f"test:  {args.test}: {X_test.shape[0]} rows")
    if cv_line:
        lines.append(cv_line)
    print_fit(caught, lines, estimator, f"fit {timings['fit_s']:.2f} s, predict "
              f"{timings['predict_s']:.2f} s ({X_eval.shape[0]} rows), load "
              f"{timings['load_s']:.2f} s", args, scores, output)
    return 0


def load_training(args, spec):
    """``(X, y, preprocessor, record)`` of TRAIN: a CSV with a header by its named columns
    (:mod:`kernelscale.cli._table`; the line of what is encoded goes to stderr), any other
    data as numbers (preprocessor None, record empty)."""
    from ._table import has_header, load_training_table, refuse_table_options

    if has_header(args.train, spec):
        X, y, prep, record, line = load_training_table(args.train, spec, args)
        if line:
            print(line, file=sys.stderr, flush=True)
        return X, y, prep, record
    refuse_table_options(args, args.train)
    X, y = load_labelled(args.train, spec, args.data_dir,
                         n_features=getattr(args, "n_features", None))
    return X, y, None, {}


def load_test(args, spec, X, prep, record):
    """``(X_test, y_test)`` read as TRAIN was."""
    from ._table import load_like_training

    if record:
        return load_like_training(args.test, record, spec, None, need_labels=True,
                                  imputes=prep is not None)
    return load_labelled(args.test, spec, args.data_dir, n_features=X.shape[1])


def _with_model(args, model):
    """``args`` with ``model`` where none is named (to check the options early)."""
    import copy

    if args.model is not None:
        return args
    checked = copy.copy(args)
    checked.model = model
    return checked


def _for_target(args, estimator, X, y):
    """``(estimator, task)``: the task the target (with --task and --model) asks for,
    checked against ``estimator``, or its estimator where the target decides (None)."""
    from ._task import default_model, infer_task

    task, note = infer_task(y, args.task, args.model)
    if note:
        print(f"kernelscale: {'warning' if task == 'classification' else 'task'}: {note}",
              file=sys.stderr, flush=True)
    if estimator is not None:
        return estimator, task
    if args.model is None:
        args.model = default_model(task)
    if args.model != "auto":
        return make_estimator(args, task), task
    estimator, choice = auto_estimator(args, X, y, task)
    print(f"model auto: {choice}", file=sys.stderr, flush=True)
    return estimator, task


def _cross_validate(args, estimator, X, y, advance):
    """LIBSVM's ``svm-train -v K``: the accuracy (R^2 for SVR) of K folds, as one line."""
    import numpy as np
    from sklearn.base import clone
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    from ._output import task_of

    if task_of(estimator) == "regressor":
        advance(f"{args.cv}-fold cross-validation")
        folds = KFold(args.cv, shuffle=True, random_state=args.seed or 0)
        scores = cross_val_score(clone(estimator), X, y, cv=folds, scoring="r2")
        return (f"cross-validation R^2 ({args.cv} folds): {scores.mean():.4f} "
                f"+- {scores.std():.4f}")
    labels, counts = np.unique(y, return_counts=True)
    if counts.min() < args.cv:
        raise ValueError(f"--cv {args.cv}: class {labels[np.argmin(counts)].tolist()!r} has "
                         f"{counts.min()} rows, fewer than the folds; give a smaller K.")
    advance(f"{args.cv}-fold cross-validation")
    folds = StratifiedKFold(args.cv, shuffle=True, random_state=args.seed or 0)
    scores = cross_val_score(clone(estimator), X, y, cv=folds)
    return (f"cross-validation accuracy ({args.cv} folds): {scores.mean():.4f} "
            f"+- {scores.std():.4f}")
