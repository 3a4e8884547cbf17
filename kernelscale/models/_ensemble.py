"""Weighted ensembles of fitted kernel models: what ensemble selection returns.

Caruana et al.'s ensemble selection (ICML 2004) and AutoGluon's weighted
ensembles average their members' predictions with weights (the members' counts
in the greedy selection). A classifier averages calibrated class probabilities:
each member's decision columns (one for two classes, else one per class)
through its own sigmoids, fitted on out-of-fold decision values where the
members were cross-validated (Platt's method,
:func:`kernelscale.models.ridge.fold_calibration`); a regressor averages
predictions.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from .._constraints import validate_params
from .ridge import calibrated_proba

__all__ = ["WeightedEnsembleClassifier", "WeightedEnsembleRegressor"]


def _columns(values):
    values = np.asarray(values, dtype=np.float64)
    return values[:, None] if values.ndim == 1 else values


def _check(estimators, weights):
    if not estimators:
        raise ValueError("estimators is empty: give at least one estimator.")
    if weights is not None and (len(weights) != len(estimators)
                                or np.any(np.asarray(weights, dtype=float) < 0)
                                or not np.any(np.asarray(weights, dtype=float) > 0)):
        raise ValueError(f"weights must be {len(estimators)} non-negative numbers, not all 0; "
                         f"got {weights!r}.")
    return np.ones(len(estimators)) if weights is None else np.asarray(weights, dtype=float)


class _Ensemble(BaseEstimator):
    _parameter_constraints = {"estimators": [list, tuple], "weights": [None, "array-like"],
                              "prefit": ["boolean"]}

    def _fit_members(self, X, y, sample_weight):
        validate_params(self)
        self.weights_ = _check(self.estimators, self.weights)
        if self.prefit:
            for estimator in self.estimators:
                check_is_fitted(estimator)
            self.estimators_ = list(self.estimators)
        else:
            extra = {} if sample_weight is None else {"sample_weight": sample_weight}
            self.estimators_ = [clone(e).fit(X, y, **extra) for e in self.estimators]
        first = self.estimators_[0]
        if hasattr(first, "n_features_in_"):
            self.n_features_in_ = first.n_features_in_
        if hasattr(first, "feature_names_in_"):
            self.feature_names_in_ = first.feature_names_in_

    def _check_X(self, X):
        # each member checks X (its features, its dtype) as it predicts
        check_is_fitted(self, "estimators_")
        return X


class WeightedEnsembleClassifier(ClassifierMixin, _Ensemble):
    """The weighted average of classifiers' calibrated class probabilities.

    Parameters
    ----------
    estimators : list of estimators
        Classifiers with ``decision_function`` (fitted, with ``prefit=True``).
    weights : array-like of shape (n_estimators,), default=None
        Non-negative weights (None: equal).
    calibrations : list of (A, B), default=None
        Each member's sigmoids of its decision columns
        (:func:`kernelscale.models.ridge.fold_calibration`, fitted on out-of-fold
        decision values); None: each member's own ``predict_proba``.
    prefit : bool, default=False
        The estimators are fitted already: ``fit`` only checks them (and the labels).

    Attributes
    ----------
    estimators_ : list of estimators
    weights_ : ndarray of shape (n_estimators,)
    classes_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelscale import KernelSVC, NystromKernelRidgeClassifier
    >>> from kernelscale.models import WeightedEnsembleClassifier
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> ensemble = WeightedEnsembleClassifier(
    ...     [KernelSVC(probability=True, random_state=0),
    ...      NystromKernelRidgeClassifier(probability=True, random_state=0)],
    ...     weights=[2, 1]).fit(X, y)
    >>> ensemble.predict_proba(X[:2]).shape
    (2, 2)
    """

    _parameter_constraints = {**_Ensemble._parameter_constraints,
                              "calibrations": [None, list, tuple]}

    def __init__(self, estimators=(), *, weights=None, calibrations=None, prefit=False):
        self.estimators = estimators
        self.weights = weights
        self.calibrations = calibrations
        self.prefit = prefit

    def fit(self, X, y, sample_weight=None):
        """Fit every member (or, with ``prefit``, check them).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : WeightedEnsembleClassifier
        """
        self._fit_members(X, y, sample_weight)
        classes = [np.asarray(e.classes_) for e in self.estimators_]
        if any(c.shape != classes[0].shape or np.any(c != classes[0]) for c in classes):
            raise ValueError("The members' classes_ differ: every member must be fitted on "
                             "the same labels.")
        self.classes_ = classes[0]
        if self.calibrations is not None and len(self.calibrations) != len(self.estimators_):
            raise ValueError(f"calibrations has {len(self.calibrations)} entries for "
                             f"{len(self.estimators_)} estimators: give one (A, B) each.")
        return self

    def _member_proba(self, index, X):
        member = self.estimators_[index]
        if self.calibrations is None:
            return member.predict_proba(X)
        A, B = self.calibrations[index]
        return calibrated_proba(_columns(member.decision_function(X)), A, B)

    def predict_proba(self, X):
        """The weighted average of the members' class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        X = self._check_X(X)
        total = None
        for index, weight in enumerate(self.weights_):
            if weight <= 0:
                continue
            part = weight * self._member_proba(index, X)
            total = part if total is None else total + part
        return total / self.weights_.sum()

    def decision_function(self, X):
        """Scores for ``roc_auc`` and the like: the second class's probability for two
        classes, else every class's.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        proba = self.predict_proba(X)
        return proba[:, 1] if proba.shape[1] == 2 else proba

    def predict(self, X):
        """The class of the largest averaged probability.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class WeightedEnsembleRegressor(RegressorMixin, _Ensemble):
    """The weighted average of regressors' predictions.

    Parameters
    ----------
    estimators : list of estimators
        Regressors (fitted, with ``prefit=True``).
    weights : array-like of shape (n_estimators,), default=None
        Non-negative weights (None: equal).
    prefit : bool, default=False
        The estimators are fitted already: ``fit`` only checks them.

    Attributes
    ----------
    estimators_ : list of estimators
    weights_ : ndarray of shape (n_estimators,)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import NystromKernelRidge
    >>> from kernelscale.models import WeightedEnsembleRegressor
    >>> X = np.linspace(0, 3, 60)[:, None]
    >>> members = [NystromKernelRidge(n_components=20, random_state=0),
    ...            NystromKernelRidge(n_components=20, gamma=2.0, random_state=0)]
    >>> ensemble = WeightedEnsembleRegressor(members).fit(X, np.sin(X[:, 0]))
    >>> ensemble.predict(X[:3]).shape
    (3,)
    """

    def __init__(self, estimators=(), *, weights=None, prefit=False):
        self.estimators = estimators
        self.weights = weights
        self.prefit = prefit

    def fit(self, X, y, sample_weight=None):
        """Fit every member (or, with ``prefit``, check them).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : WeightedEnsembleRegressor
        """
        self._fit_members(X, y, sample_weight)
        return self

    def predict(self, X):
        """The weighted average of the members' predictions.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        X = self._check_X(X)
        total = None
        for member, weight in zip(self.estimators_, self.weights_):
            if weight <= 0:
                continue
            part = weight * np.asarray(member.predict(X), dtype=np.float64)
            total = part if total is None else total + part
        return total / self.weights_.sum()
