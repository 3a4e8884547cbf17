"""Local kernel models: the rows split into leaves at quantiles of one column, one model per
leaf, each row routed to its leaf's model at predict.

A kernel model whose centres cover the whole table spends them everywhere; the same
centres spread over a quarter of the range of the column that matters most resolve it
four times finer, at a quarter of the cost per leaf (xRFM's idea, Beaglehole et al.
2025, which splits on the top direction of the AGOP; here a column chosen as a
regression tree chooses its first splits, measured better on diamonds than the top
principal or AGOP-like directions, see benchmarks/HISTORY.md "Stop 53").
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from .._constraints import Interval, Options, validate_params
from .._validation import check_sample_weight, check_X, check_X_y
from .ridge import NystromKernelRidge

__all__ = ["LocalKernelRegressor", "leaf_index", "leaf_thresholds", "split_feature"]


def _column(X, j):
    column = X[:, j]
    return np.asarray(column.toarray()).ravel() if sp.issparse(column) else np.asarray(column)


def leaf_index(X, feature, thresholds):
    """The leaf of each row of ``X``: how many ``thresholds`` its column ``feature`` reaches.

    Examples
    --------
    >>> import numpy as np
    >>> leaf_index(np.array([[0.0], [2.0], [5.0]]), 0, np.array([2.0, 4.0])).tolist()
    [0, 1, 2]
    """
    return np.searchsorted(thresholds, _column(X, feature), side="right")


def _weights_for(model, weights):
    """``fit``'s keyword for row weights: a pipeline's go to its last step."""
    if isinstance(model, Pipeline):
        return {f"{model.steps[-1][0]}__sample_weight": weights}
    return {"sample_weight": weights}


def leaf_thresholds(values, n_leaves, sample_weight=None):
    """Thresholds that split ``values`` into at most ``n_leaves`` leaves of equal weight.

    A row goes to leaf ``searchsorted(thresholds, value, side="right")``: leaf ``l``
    holds the values in ``[thresholds[l - 1], thresholds[l])``. Each threshold is a
    value of the column and every leaf holds rows; ties can leave fewer leaves than
    asked (a column of 2 values splits into 2 at most).

    Parameters
    ----------
    values : ndarray of shape (n,)
    n_leaves : int
    sample_weight : ndarray of shape (n,), default=None

    Returns
    -------
    thresholds : ndarray of shape (n_thresholds,)

    Examples
    --------
    >>> import numpy as np
    >>> leaf_thresholds(np.arange(8.0), 4).tolist()
    [2.0, 4.0, 6.0]
    >>> leaf_thresholds(np.array([0.0, 0.0, 0.0, 1.0]), 4).tolist()
    [1.0]
    """
    values = np.asarray(values, dtype=np.float64)
    weights = np.ones(values.size) if sample_weight is None else np.asarray(sample_weight)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    cumulative = np.cumsum(weights[order])
    total = cumulative[-1] if cumulative.size else 0.0
    cuts = []
    for q in range(1, n_leaves):
        i = min(int(np.searchsorted(cumulative, q * total / n_leaves, side="right")),
                values.size - 1)
        t = ordered[i]
        # a threshold above the smallest value and above the last one: no leaf is empty
        if t > ordered[0] and (not cuts or t > cuts[-1]):
            cuts.append(t)
    return np.asarray(cuts, dtype=np.float64)


def split_feature(X, y, n_leaves, sample_weight=None):
    """The column whose ``n_leaves`` quantile leaves leave the least weighted variance of
    ``y`` within them (a regression tree's criterion), and its thresholds.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
    y : ndarray of shape (n,) or (n, n_targets)
    n_leaves : int
    sample_weight : ndarray of shape (n,), default=None

    Returns
    -------
    feature : int
    thresholds : ndarray

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 3))
    >>> split_feature(X, np.sin(6 * X[:, 2]), 4)[0]
    2
    """
    n, d = X.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    Y = np.asarray(y, dtype=np.float64).reshape(n, -1)
    best = (np.inf, 0, np.empty(0))
    for j in range(d):
        thresholds = leaf_thresholds(_column(X, j), n_leaves, w)
        leaf = leaf_index(X, j, thresholds)
        weight = np.bincount(leaf, w, minlength=thresholds.size + 1)
        spread = 0.0
        for t in range(Y.shape[1]):
            sums = np.bincount(leaf, w * Y[:, t], minlength=weight.size)
            squares = np.bincount(leaf, w * Y[:, t] ** 2, minlength=weight.size)
            with np.errstate(divide="ignore", invalid="ignore"):
                spread += float(np.sum(squares - np.where(weight > 0, sums**2 / weight, 0.0)))
        if spread < best[0]:
            best = (spread, j, thresholds)
    return best[1], best[2]


class LocalKernelRegressor(RegressorMixin, BaseEstimator):
    """One kernel model per leaf: the rows split at quantiles of one column.

    Each leaf gets a clone of ``estimator`` fitted on its rows only (its
    ``n_components``, where it has one, capped at the leaf's rows); ``predict``
    routes each row to its leaf's model. Within a leaf the same centres cover a
    ``1 / n_leaves`` share of the column's range, so a larger ``gamma`` (a finer
    kernel) usually pays: ``KernelRegressorCV`` scores the leaves and their gamma on
    its first fold and keeps them only where they score higher.

    Parameters
    ----------
    estimator : regressor, default=None
        The model fitted in each leaf; None: ``NystromKernelRidge()``.
    n_leaves : int, default=4
        Leaves to split the rows into (of equal total weight). Ties in the column
        can leave fewer (``n_leaves_``).
    feature : int or "auto", default="auto"
        The column whose quantiles split the rows. "auto": the column whose leaves
        leave the least variance of ``y`` within them (:func:`split_feature`).
    leaf_params : list of dict or None, default=None
        Parameters set on each leaf's clone of ``estimator``, one dict per leaf in
        the column's order (e.g. each leaf's own ``gamma``: widths learned on its
        rows). Their number must be the leaves made.

    Attributes
    ----------
    feature_ : int
        The column split on.
    thresholds_ : ndarray of shape (n_thresholds,)
        Leaf ``l`` holds the rows whose column lies in ``[thresholds_[l - 1],
        thresholds_[l])``.
    estimators_ : list of estimators
        The fitted model of each leaf.
    leaf_rows_ : ndarray of shape (n_thresholds + 1,)
        The training rows of each leaf.
    n_leaves_ : int
        The leaves made (at most ``n_leaves``).
    n_features_in_ : int
        Columns seen in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import LocalKernelRegressor, NystromKernelRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 2))
    >>> y = np.sin(8 * X[:, 0]) + 0.1 * X[:, 1]
    >>> model = LocalKernelRegressor(NystromKernelRidge(n_components=50, gamma=10.0, alpha=1e-3,
    ...                                                 random_state=0), n_leaves=2)
    >>> model.fit(X, y).n_leaves_, model.feature_
    (2, 0)
    >>> bool(model.score(X, y) > 0.99)
    True
    """

    _parameter_constraints = {
        "estimator": [None, "regressor"],
        "n_leaves": [Interval("int", 1)],
        "feature": [Options("auto"), Interval("int", 0)],
        "leaf_params": [None, list, tuple],
    }

    def __init__(self, estimator=None, *, n_leaves=4, feature="auto", leaf_params=None):
        self.estimator = estimator
        self.n_leaves = n_leaves
        self.feature = feature
        self.leaf_params = leaf_params

    def _estimator(self):
        return NystromKernelRidge() if self.estimator is None else self.estimator

    def fit(self, X, y, sample_weight=None):
        """Split the rows into leaves and fit one model on each.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : LocalKernelRegressor
        """
        validate_params(self)
        X, y = check_X_y(self, X, y, multi_output=True, y_numeric=True)
        n, d = X.shape
        weights = None if sample_weight is None else check_sample_weight(sample_weight, n)
        if self.feature == "auto":
            feature, thresholds = split_feature(X, y, self.n_leaves, weights)
        else:
            if not isinstance(self.feature, numbers.Integral) or self.feature >= d:
                raise ValueError(f"feature={self.feature!r} is not a column of X's {d}: give "
                                 f"an index below {d}, or feature='auto'.")
            feature = int(self.feature)
            thresholds = leaf_thresholds(_column(X, feature), self.n_leaves, weights)
        leaf = leaf_index(X, feature, thresholds)
        if self.leaf_params is not None and len(self.leaf_params) != thresholds.size + 1:
            raise ValueError(f"leaf_params has {len(self.leaf_params)} entries for the "
                             f"{thresholds.size + 1} leaves made: give one dict per leaf.")
        template = self._estimator()
        # centres (of the model, or of a pipeline's steps) beyond a leaf's rows are its rows
        components = {name: value for name, value in template.get_params().items()
                      if (name == "n_components" or name.endswith("__n_components"))
                      and isinstance(value, numbers.Integral)}
        self.estimators_ = []
        for index in range(thresholds.size + 1):
            rows = np.flatnonzero(leaf == index)
            model = clone(template)
            model.set_params(**{name: int(rows.size) for name, value in components.items()
                                if value > rows.size})
            if self.leaf_params is not None:
                model.set_params(**self.leaf_params[index])
            extra = {} if weights is None else _weights_for(model, weights[rows])
            self.estimators_.append(model.fit(X[rows], y[rows], **extra))
        self.feature_ = int(feature)
        self.thresholds_ = thresholds
        self.leaf_rows_ = np.bincount(leaf, minlength=thresholds.size + 1)
        self.n_leaves_ = int(thresholds.size + 1)
        return self

    def apply(self, X):
        """The leaf of each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        leaves : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "estimators_")
        X = check_X(self, X, reset=False)
        return leaf_index(X, self.feature_, self.thresholds_)

    def predict(self, X):
        """Each row's prediction by its leaf's model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        check_is_fitted(self, "estimators_")
        X = check_X(self, X, reset=False)
        leaf = leaf_index(X, self.feature_, self.thresholds_)
        out = None
        for index, model in enumerate(self.estimators_):
            rows = np.flatnonzero(leaf == index)
            if rows.size == 0:
                continue
            part = np.asarray(model.predict(X[rows]), dtype=np.float64)
            if out is None:
                out = np.empty((X.shape[0],) + part.shape[1:])
            out[rows] = part
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self._estimator())
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.target_tags.multi_output = inner.target_tags.multi_output
        return tags
