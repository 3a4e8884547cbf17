"""Probabilities of Nystrom kernel ridge scores from out-of-fold values it already has.

A least-squares classifier's score estimates ``2 P(class) - 1`` (its targets are
+1 / -1), so a sigmoid of it per class, fitted on scores of rows the model was not
trained on, is a calibrated probability (Platt's method). A search that scored
the model on every fold holds exactly such scores, so it can offer
``predict_proba`` without the five extra fits of ``probability=True``.
"""

from __future__ import annotations

import numpy as np

from .._probability import fit_sigmoid, per_class, sigmoid

__all__ = ["fold_calibration", "calibrated_proba"]


def fold_calibration(scores, y_index, n_classes):
    """One sigmoid per score column, fitted on out-of-fold ``scores``.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_columns)
        Out-of-fold decision values: one column for two classes (positive favours
        the second class), else one per class (one-vs-rest).
    y_index : ndarray of shape (n_samples,)
        Class index of each row.
    n_classes : int

    Returns
    -------
    A, B : ndarray of shape (n_columns,)

    Examples
    --------
    >>> import numpy as np
    >>> A, B = fold_calibration(np.array([[-1.0], [-0.5], [0.4], [1.2]]),
    ...                         np.array([0, 0, 1, 1]), 2)
    >>> bool(A[0] < 0)
    True
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(len(y_index), -1)
    A, B = [], []
    for column in range(scores.shape[1]):
        positive = (y_index == 1) if n_classes == 2 else (y_index == column)
        a, b = fit_sigmoid(scores[:, column], positive)
        A.append(a)
        B.append(b)
    return np.array(A), np.array(B)


def calibrated_proba(scores, A, B):
    """Class probabilities from decision ``scores`` and :func:`fold_calibration`'s sigmoids.

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1:
        scores = scores[:, None]
    return per_class(sigmoid(scores, A, B))
