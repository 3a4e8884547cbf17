"""``predict`` / ``decision_function`` shared by the classifiers and regressors."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._validation import check_sample_weight, check_X, check_X_y, resolve_memory_budget
from ..sources import dask_method, is_dask_array

__all__ = ["ClassifierShell", "RegressorShell", "OneClassShell", "fitted_scores"]


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


class OneClassShell:
    """``decision_function``, ``score_samples`` and ``predict`` of a one-class model.

    The model's ``_raw_scores(X)`` is its decision function (one column) and
    ``offset_`` the threshold subtracted from ``score_samples`` (scikit-learn's
    ``OneClassSVM`` convention).
    """

    def decision_function(self, X):
        """Signed distance to the region's boundary: positive inside, negative outside.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        if is_dask_array(X):
            return dask_method(self, "decision_function", X)
        return fitted_scores(self, X).ravel()

    def score_samples(self, X):
        """The decision function before the offset: ``decision_function + offset_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        return self.decision_function(X) + self.offset_[0]

    def predict(self, X):
        """+1 inside the region (inliers), -1 outside (outliers).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        if is_dask_array(X):
            return dask_method(self, "predict", X)
        return np.where(self.decision_function(X) > 0, 1, -1)
