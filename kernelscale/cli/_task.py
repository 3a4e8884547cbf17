"""Which task a command line asks for: classification or regression, from ``--task``,
``--model`` and the target itself.

A LIBSVM user names the task by the program (``svm-train -s 3``); a scikit-learn
user by the class. On the command line the target decides where it can: a float
target with fractional values is a regression, labels that are strings are
classes. An integer target is ambiguous (ratings, counts, class codes): it stays
a classification, as scikit-learn's ``type_of_target`` reads it, but with many
distinct values the command says so in one line and how to ask for a
regression (``--task regression``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["TASKS", "MODEL_TASKS", "MANY_CLASSES", "infer_task", "model_class",
           "default_model"]

TASKS = ("auto", "classification", "regression")
#: ``--model`` -> the estimator class for each task it serves ("auto" and the models
#: with a classifier and a regressor follow the target)
MODEL_TASKS = {
    "auto": {"classification": "auto", "regression": "auto"},
    "falkon": {"classification": "NystromKernelRidgeClassifier",
               "regression": "NystromKernelRidge"},
    "ridge": {"classification": "ApproxKernelRidgeClassifier",
              "regression": "ApproxKernelRidge"},
    "linear-svc": {"classification": "LinearSVC"},
    "approx-svc": {"classification": "ApproxKernelSVC"},
    "kernel-svc": {"classification": "KernelSVC"},
    "logistic": {"classification": "KernelLogisticRegression"},
    "dsgd": {"classification": "DoublySGDSVC"},
    "svr": {"regression": "KernelSVR"},
    "approx-svr": {"regression": "ApproxKernelSVR"},
    "one-class": {"outlier": "KernelOneClassSVM"},
    "approx-one-class": {"outlier": "ApproxKernelOneClassSVM"},
}
#: an integer target with more distinct values than this is said to look like a quantity
MANY_CLASSES = 20


def default_model(task):
    """The ``--model`` a command uses when none is named."""
    return "falkon" if task == "regression" else "approx-svc"


def _model_task(model):
    tasks = MODEL_TASKS[model]
    return next(iter(tasks)) if len(tasks) == 1 else None


def infer_task(y, asked="auto", model=None):
    """``(task, note)``: "classification", "regression" or "outlier", and a line to
    print (or None).

    Parameters
    ----------
    y : ndarray or None
        The target as read (None: not known yet, as with ``--stream``).
    asked : {"auto", "classification", "regression"}
        ``--task``.
    model : str or None
        ``--model`` (None: not named).

    Raises
    ------
    ValueError
        When ``--task`` and ``--model`` disagree, or the target cannot be what
        they ask for; one line saying what to change.
    """
    fixed = _model_task(model) if model is not None else None
    if fixed == "outlier":
        if asked != "auto":
            raise ValueError(f"--task {asked} does not apply to --model {model} (a one-class "
                             "model: it has no target); drop --task.")
        return "outlier", None
    if fixed is not None and asked not in ("auto", fixed):
        others = ", ".join(m for m, t in MODEL_TASKS.items() if asked in t)
        raise ValueError(f"--model {model} does {fixed}, not {asked}; for {asked} use "
                         f"--model {others}.")
    task = fixed if asked == "auto" else asked
    if y is None:
        return task or "classification", None
    y = np.asarray(y)
    numeric = y.dtype.kind in "biuf"
    if task == "regression":
        if not numeric:
            raise ValueError(f"--task regression needs a numeric target; the labels are "
                             f"text (e.g. {str(y.flat[0])!r}).")
        return task, None
    integral = numeric and (y.dtype.kind != "f" or
                            bool(np.all(np.isfinite(y)) and np.all(y == np.round(y))))
    distinct = np.unique(y).size
    if task is None and numeric and not integral:
        return "regression", (f"the target has fractional values ({distinct} distinct): "
                              "fitting a regression (--task classification to treat them "
                              "as classes)")
    if task == "classification" and numeric and not integral and model is not None \
            and asked == "auto":
        raise ValueError(f"--model {model} is a classifier but the target is continuous "
                         f"({distinct} distinct values, e.g. {float(y.flat[0]):.4g}); use "
                         "--model svr, approx-svr or falkon for a regression, or --task "
                         "classification to treat the values as classes.")
    note = None
    if asked == "auto" and numeric and distinct > MANY_CLASSES:
        note = (f"the target has {distinct} distinct integer values: fitting a "
                f"classification with {distinct} classes (--task regression if it is a "
                "quantity)")
    return "classification", note


def model_class(model, task):
    """The estimator class name ``--model`` stands for in ``task``."""
    tasks = MODEL_TASKS[model]
    if task not in tasks:
        served = " or ".join(tasks)
        raise ValueError(f"--model {model} does {served}, not {task}.")
    return tasks[task]
