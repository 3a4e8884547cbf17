"""Labels, class weights and the binary problems shared by the classifiers.

``class_weight`` has two balancing modes, one name each, the same in every
estimator that offers them:

- ``"balanced"`` is scikit-learn's: class ``c`` weighs ``n / (n_classes n_c)``,
  so every class carries the same total weight (all classifiers).
- ``"balanced_binary"`` (the SVMs, which train binary problems) balances *each
  binary problem* instead: in "class c vs the rest" (one-vs-rest, seed 002) or
  "class i vs class j" (one-vs-one) both sides carry equal total weight. For
  two classes the modes coincide; with one-vs-rest they differ (the positive
  side is 1 : K-1 under "balanced"), and "balanced_binary" also puts the K
  decision functions on a comparable scale.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from .._validation import (
    check_sample_weight,
    check_X_y,
    iter_row_blocks,
)

__all__ = [
    "encode_labels", "base_weights", "class_factors", "balanced_class_factors",
    "plus_minus_targets", "ovr_targets", "balanced_factors", "linear_scores",
    "classifier_data", "CLASS_WEIGHTS", "CLASS_WEIGHT_DOC", "BINARY_CLASS_WEIGHT_DOC",
]

#: the class_weight strings: scikit-learn's "balanced", and per-binary-problem balancing
CLASS_WEIGHTS = ("balanced", "balanced_binary")

CLASS_WEIGHT_DOC = """class_weight : dict, "balanced" or None, default=None
        Multiplies the sample weights by class; "balanced" weighs class c by
        ``n_samples / (n_classes * n_c)``, as in scikit-learn."""

BINARY_CLASS_WEIGHT_DOC = """class_weight : dict, "balanced", "balanced_binary" or None, \
default=None
        Multiplies C per class. "balanced" weighs class c by
        ``n_samples / (n_classes * n_c)``, as in scikit-learn; "balanced_binary"
        equalises the two sides of every binary problem instead (one-vs-rest or
        one-vs-one), which also puts one-vs-rest scores on a comparable scale."""


def encode_labels(y):
    """Return ``(classes, y_index)``; raise if ``y`` holds fewer than two classes."""
    check_classification_targets(y)
    classes, y_index = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(
            f"The classifier needs samples of at least 2 classes in y; got only one class "
            f"{classes.tolist()}. Check the labels or the data split."
        )
    return classes, y_index


def base_weights(class_weight, classes, y_index, sample_weight):
    """Per-sample weights from ``sample_weight`` and ``class_weight``.

    Returns ``(weights, per_problem)``: ``per_problem`` is True for
    ``"balanced_binary"``, which :func:`ovr_targets` (or the one-vs-one pairs)
    apply to each binary problem; ``"balanced"`` is applied here, to the classes.
    """
    if isinstance(class_weight, str) and class_weight == "balanced":
        counts = np.bincount(y_index, weights=sample_weight, minlength=len(classes))
        return sample_weight * balanced_class_factors(counts)[y_index], False
    factors = class_factors(class_weight, classes)
    per_problem = isinstance(class_weight, str) and class_weight == "balanced_binary"
    return sample_weight * factors[y_index], per_problem


def class_factors(class_weight, classes):
    """Per-class multipliers of a dict ``class_weight`` (ones for None and the strings).

    Raises for an unknown string, a label not in ``classes`` or a negative weight.
    """
    factors = np.ones(len(classes))
    if class_weight is None:
        return factors
    if isinstance(class_weight, str):
        if class_weight not in CLASS_WEIGHTS:
            raise ValueError(
                f"Unknown class_weight={class_weight!r}; expected None, 'balanced', "
                "'balanced_binary' (the SVMs) or a dict {label: weight}."
            )
        return factors
    if not isinstance(class_weight, dict):
        raise TypeError(f"class_weight must be None, 'balanced' or a dict, got {class_weight!r}.")
    for label, weight in class_weight.items():
        hits = np.flatnonzero(classes == label)
        if hits.size == 0:
            raise ValueError(
                f"class_weight names label {label!r}, which is not in y "
                f"(classes: {list(classes)})."
            )
        if not isinstance(weight, numbers.Real) or not weight >= 0:
            raise ValueError(f"class_weight[{label!r}] must be a number >= 0, got {weight!r}.")
        factors[hits[0]] = float(weight)
    return factors


def balanced_class_factors(totals):
    """``total / (n_classes * total_c)``: the factors that give every class equal weight."""
    return totals.sum() / (len(totals) * np.maximum(totals, 1e-300))


def classifier_data(estimator, X, y, sample_weight):
    """Validate ``X, y``, set ``classes_``; return ``(X, y_index, weights)``.

    The weights are ``sample_weight`` times ``estimator.class_weight`` (see
    :func:`base_weights`).
    """
    X, y = check_X_y(estimator, X, y)
    estimator.classes_, y_index = encode_labels(y)
    weights, _ = base_weights(estimator.class_weight, estimator.classes_, y_index,
                              check_sample_weight(sample_weight, len(y)))
    return X, y_index, weights


def plus_minus_targets(y_index, n_classes):
    """+1 / -1 targets: one column for two classes, one per class otherwise."""
    if n_classes == 2:
        return np.where(y_index == 1, 1.0, -1.0)[:, None]
    Y = -np.ones((len(y_index), n_classes))
    Y[np.arange(len(y_index)), y_index] = 1.0
    return Y


def ovr_targets(y_index, n_classes, weights, balanced):
    """Yield ``(y_pm, f_pos, f_neg)`` for each one-vs-rest problem (one if two classes).

    Row i of a problem weighs ``weights_i * (f_pos if y_pm_i > 0 else f_neg)``;
    the factors are 1 unless ``balanced`` (``class_weight="balanced_binary"``).
    """
    positives = [1] if n_classes == 2 else range(n_classes)
    for c in positives:
        is_pos = y_index == c
        y_pm = np.where(is_pos, 1.0, -1.0)
        if not balanced:
            yield y_pm, 1.0, 1.0
            continue
        yield (y_pm, *balanced_factors(weights, is_pos))


def balanced_factors(weights, is_pos):
    """``(f_pos, f_neg)`` that give both sides of a binary problem equal total weight."""
    total = weights.sum()
    w_pos = weights[is_pos].sum()
    return total / (2.0 * max(w_pos, 1e-300)), total / (2.0 * max(total - w_pos, 1e-300))


def linear_scores(Z, coef, intercept, memory_budget):
    """``Z @ coef.T + intercept`` in row blocks, ``coef`` cast to ``Z``'s dtype; float64 out."""
    coef_t = np.ascontiguousarray(coef.T, dtype=Z.dtype)
    out = np.empty((Z.shape[0], coef.shape[0]))
    per_row = coef.shape[0] * Z.dtype.itemsize
    for start, stop in iter_row_blocks(Z.shape[0], per_row, memory_budget, what="scores"):
        out[start:stop] = Z[start:stop] @ coef_t
    out += intercept
    return out
