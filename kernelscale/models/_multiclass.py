"""Labels, class-weight documentation and scores shared by the classifiers (the weights
themselves and the binary problems are solver plumbing: ``kernelscale.solvers``).

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

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from .._validation import (
    check_sample_weight,
    check_X_y,
    iter_row_blocks,
)
from ..solvers import base_weights

__all__ = [
    "encode_labels", "linear_scores", "classifier_data",
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


def linear_scores(Z, coef, intercept, memory_budget):
    """``Z @ coef.T + intercept`` in row blocks, ``coef`` cast to ``Z``'s dtype; float64 out."""
    coef_t = np.ascontiguousarray(coef.T, dtype=Z.dtype)
    out = np.empty((Z.shape[0], coef.shape[0]))
    per_row = coef.shape[0] * Z.dtype.itemsize
    for start, stop in iter_row_blocks(Z.shape[0], per_row, memory_budget, what="scores"):
        out[start:stop] = Z[start:stop] @ coef_t
    out += intercept
    return out
