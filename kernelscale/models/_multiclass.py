"""Labels, class weights and one-vs-rest problems shared by the classifiers.

One-vs-rest (seed 002) splits K classes into K binary problems "class c vs the
rest". Each problem is then imbalanced (1 : K-1); ``class_weight="balanced"``
here balances *each binary problem* (positives and negatives carry equal total
weight), which also puts the K decision functions on a comparable scale. This
differs from LIBLINEAR / scikit-learn, which only reweight the positive class.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    check_sample_weight,
    check_X,
    check_X_y,
    iter_row_blocks,
    resolve_memory_budget,
)
from ..sources import dask_method, is_dask_array

__all__ = [
    "encode_labels", "base_weights", "class_factors", "balanced_class_factors",
    "class_balanced_weights", "plus_minus_targets",
    "ovr_targets", "balanced_factors", "linear_scores", "fitted_scores",
    "ClassifierShell", "RegressorShell", "classifier_data",
]


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
    """Per-sample weights from ``sample_weight`` and a dict ``class_weight``.

    Returns ``(weights, balanced)``; ``balanced`` is True for ``"balanced"``, which
    is applied per binary problem by :func:`ovr_targets`.
    """
    factors = class_factors(class_weight, classes)
    return sample_weight * factors[y_index], isinstance(class_weight, str)


def class_factors(class_weight, classes):
    """Per-class multipliers of a dict ``class_weight`` (ones for None and "balanced").

    Raises for an unknown string, a label not in ``classes`` or a negative weight.
    """
    factors = np.ones(len(classes))
    if class_weight is None:
        return factors
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(
                f"Unknown class_weight={class_weight!r}; expected None, 'balanced' or a "
                "dict {label: weight}."
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
    :func:`class_balanced_weights`).
    """
    X, y = check_X_y(estimator, X, y)
    estimator.classes_, y_index = encode_labels(y)
    weights = class_balanced_weights(estimator.class_weight, estimator.classes_, y_index,
                                     check_sample_weight(sample_weight, len(y)))
    return X, y_index, weights


def class_balanced_weights(class_weight, classes, y_index, sample_weight):
    """Sample weights times class weights; "balanced" equalises the classes' totals."""
    if isinstance(class_weight, str) and class_weight == "balanced":
        counts = np.bincount(y_index, weights=sample_weight, minlength=len(classes))
        return sample_weight * balanced_class_factors(counts)[y_index]
    weights, _ = base_weights(class_weight, classes, y_index, sample_weight)
    return weights


def plus_minus_targets(y_index, n_classes):
    """+1 / -1 targets: one column for two classes, one per class otherwise."""
    if n_classes == 2:
        return np.where(y_index == 1, 1.0, -1.0)[:, None]
    Y = -np.ones((len(y_index), n_classes))
    Y[np.arange(len(y_index)), y_index] = 1.0
    return Y


def ovr_targets(y_index, n_classes, weights, balanced):
    """Yield ``(y_pm, f_pos, f_neg)`` for each binary problem (one if two classes).

    Row i of a problem weighs ``weights_i * (f_pos if y_pm_i > 0 else f_neg)``;
    the factors are 1 unless ``balanced``.
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


def fitted_scores(estimator, X):
    """Check that ``estimator`` is fitted, validate ``X``, return its raw score matrix."""
    check_is_fitted(estimator)
    X = check_X(estimator, X, reset=False)
    return estimator._raw_scores(X, resolve_memory_budget(estimator.memory_budget))


class ClassifierShell:
    """``predict`` and ``decision_function`` for classifiers with ``_raw_scores(X)``."""

    def decision_function(self, X):
        """Confidence scores, one column per class (one column for two classes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes, positive scores favour ``classes_[1]``.
        """
        if is_dask_array(X):
            return dask_method(self, "decision_function", X)
        scores = fitted_scores(self, X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predict class labels (the type of the training labels).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        if is_dask_array(X):
            return dask_method(self, "predict", X)
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


class RegressorShell:
    """Targets in, ``predict`` out, for regressors with ``_raw_scores(X)`` (multi-output)."""

    def _regression_data(self, X, y, sample_weight):
        """Validate; return ``(X, Y, weights)`` with ``Y`` of shape (n_samples, n_targets)."""
        X, y = check_X_y(self, X, y, multi_output=True, y_numeric=True)
        self._single_target = y.ndim == 1
        return (X, np.asarray(y, float).reshape(len(y), -1),
                check_sample_weight(sample_weight, len(y)))

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        if is_dask_array(X):
            return dask_method(self, "predict", X)
        out = fitted_scores(self, X)
        return out.ravel() if self._single_target else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
