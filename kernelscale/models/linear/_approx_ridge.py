"""Ridge regression and the least-squares classifier on explicit kernel features."""

from __future__ import annotations

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from ..._constraints import Interval, Options, validate_params
from ..._validation import check_finite_fit, resolve_memory_budget
from ...solvers import RidgeStatistics, accumulate, plus_minus_targets, solve_ridge
from .._approx import APPROX_CONSTRAINTS, ApproxKernelMixin
from .._chunked_fits import chunked_source, fit_ridge_chunked, partial_targets
from .._multiclass import classifier_data
from .._shells import ClassifierShell, RegressorShell

__all__ = ["ApproxKernelRidge", "ApproxKernelRidgeClassifier"]


class _RidgeBase(ApproxKernelMixin, BaseEstimator):
    _parameter_constraints = {
        **APPROX_CONSTRAINTS,
        "alpha": [Interval("real", 0)],
        "fit_intercept": ["boolean"],
    }

    def __init__(
        self, *, feature_map="nystroem", n_components=1000, kernel="rbf", gamma="scale",
        degree=3, coef0=0.0, alpha=1.0, fit_intercept=True, dtype="float32",
        memory_budget=None, random_state=None,
    ):
        self.feature_map = feature_map
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.random_state = random_state

    def _alpha(self):
        """Validate every parameter; return the penalty."""
        validate_params(self)
        return float(self.alpha)

    def _solve(self, X, Y, sample_weight):
        alpha = self._alpha()
        budget = resolve_memory_budget(self.memory_budget)
        Z = self._fit_features(X)
        stats = accumulate(Z, Y, sample_weight, budget)
        self._partial = stats
        self.coef_, self.intercept_ = solve_ridge(stats, alpha, self.fit_intercept)
        check_finite_fit(self, "coef_", "intercept_")

    def _partial_fit(self, X, y, classes, sample_weight, classifier):
        alpha = self._alpha()
        budget = resolve_memory_budget(self.memory_budget)
        first, X, Y, S = partial_targets(self, X, y, classes, sample_weight,
                                         classifier=classifier)
        if first:
            width = self.feature_map_.transform(X[:1]).shape[1]
            self._partial = RidgeStatistics(width, Y.shape[1])
        elif Y.shape[1] != self._partial.zy.shape[1]:
            raise ValueError(f"y has {Y.shape[1]} target(s) but earlier chunks had "
                             f"{self._partial.zy.shape[1]}.")
        for start, stop, Z in self._mapped_blocks(X, budget):
            accumulate(Z, Y[start:stop], S[start:stop], budget, stats=self._partial)
        # the statistics are exact, so the solve equals fit() on every row seen so far
        self.coef_, self.intercept_ = solve_ridge(self._partial, alpha, self.fit_intercept)
        return self

    def __sklearn_tags__(self):
        return self._more_tags_sparse(super().__sklearn_tags__())


class ApproxKernelRidge(RegressorShell, RegressorMixin, _RidgeBase):
    """Kernel ridge regression on an explicit feature map, solved in closed form.

    ``(Z^T Z + alpha I) beta = Z^T y`` on centred features, accumulated in row
    blocks with float64 statistics; several targets share one solve.

    Parameters
    ----------
    feature_map : str or transformer, default="nystroem"
        A name from :data:`kernelscale.feature_maps.FEATURE_MAPS` ("nystroem",
        "nystroem-kmeans", "nystroem-leverage", "rff", "rff-sincos", "orf",
        "sorf", "maclaurin", "tensorsketch"), built with the parameters below, or
        any transformer (cloned and used as is; ``n_components``, ``kernel``,
        ``gamma``, ``degree``, ``coef0`` and ``dtype`` are then ignored).
    n_components : int, default=1000
        Size of the feature map (landmarks for Nystroem).
    kernel : str, default="rbf"
        Kernel the map approximates.
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
        Polynomial kernel degree.
    coef0 : float, default=0.0
        Polynomial kernel constant.
    dtype : {"float32", "float64"}, default="float32"
        dtype of the features; float32 halves memory and doubles BLAS speed.
    alpha : float, default=1.0
        Penalty of ``||y - Z beta||^2 + alpha ||beta||^2`` (>= 0), as in
        :class:`sklearn.linear_model.Ridge`.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (the features are centred).
    memory_budget : int, default=None
        Bytes for row-block temporaries.
    random_state : int, RandomState instance or None, default=None
        Seeds the feature map.

    Attributes
    ----------
    feature_map_ : transformer
    coef_ : ndarray of shape (n_targets, n_features_out)
    intercept_ : ndarray of shape (n_targets,)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import ApproxKernelRidge
    >>> X = np.linspace(0, 6, 200)[:, None]
    >>> y = np.sin(X).ravel()
    >>> reg = ApproxKernelRidge(n_components=50, gamma=1.0, alpha=1e-3, random_state=0).fit(X, y)
    >>> float(np.abs(reg.predict(X) - y).max()) < 0.05
    True
    """

    def fit(self, X, y=None, sample_weight=None):
        """Fit the feature map and the ridge regression.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, ChunkedDataset} of shape (n_samples, n_features)
            A dask array (chunked by rows) is fitted on the active dask client;
            a :class:`kernelscale.datasets.ChunkedDataset` is streamed chunk by
            chunk under ``memory_budget`` (its chunks carry the labels).
        y : array-like or dask array of shape (n_samples,) or (n_samples, n_targets), default=None
            Required unless ``X`` is a ChunkedDataset.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : ApproxKernelRidge
        """
        source = chunked_source(self, X, y, sample_weight)
        if source is not None:
            return fit_ridge_chunked(self, source, self._alpha(), classifier=False)
        self._solve(*self._regression_data(X, y, sample_weight))
        return self

    def partial_fit(self, X, y, sample_weight=None):
        """Add a chunk of rows; the result equals ``fit`` on all rows seen so far.

        The first call fits the feature map on its chunk; every call adds the
        chunk's exact ridge statistics and re-solves (a ``D x D`` Cholesky).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : ApproxKernelRidge
        """
        return self._partial_fit(X, y, None, sample_weight, classifier=False)


class ApproxKernelRidgeClassifier(ClassifierShell, ClassifierMixin, _RidgeBase):
    """Least-squares (ridge) classifier on an explicit feature map: the fastest baseline.

    Targets are +1 / -1 per class (one column for two classes) and every class is
    solved in the same closed-form solve; ``predict`` takes the arg-max (the sign
    for two classes), as :class:`sklearn.linear_model.RidgeClassifier` does.

    Parameters
    ----------
    feature_map : str or transformer, default="nystroem"
        A name from :data:`kernelscale.feature_maps.FEATURE_MAPS` ("nystroem",
        "nystroem-kmeans", "nystroem-leverage", "rff", "rff-sincos", "orf",
        "sorf", "maclaurin", "tensorsketch"), built with the parameters below, or
        any transformer (cloned and used as is; ``n_components``, ``kernel``,
        ``gamma``, ``degree``, ``coef0`` and ``dtype`` are then ignored).
    n_components : int, default=1000
        Size of the feature map (landmarks for Nystroem).
    kernel : str, default="rbf"
        Kernel the map approximates.
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
        Polynomial kernel degree.
    coef0 : float, default=0.0
        Polynomial kernel constant.
    dtype : {"float32", "float64"}, default="float32"
        dtype of the features; float32 halves memory and doubles BLAS speed.
    alpha : float, default=1.0
        Penalty of ``||y - Z beta||^2 + alpha ||beta||^2`` (>= 0), as in
        :class:`sklearn.linear_model.Ridge`.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (the features are centred).
    memory_budget : int, default=None
        Bytes for row-block temporaries.
    random_state : int, RandomState instance or None, default=None
        Seeds the feature map.
    class_weight : dict, "balanced" or None, default=None
        Multiplies the sample weights by class; "balanced" weighs class c by
        ``n_samples / (n_classes * n_c)``, as in scikit-learn.

    Attributes
    ----------
    feature_map_ : transformer
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_features_out)
    intercept_ : ndarray of shape (n_problems,)
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelscale import ApproxKernelRidgeClassifier
    >>> X, y = make_moons(n_samples=400, noise=0.1, random_state=0)
    >>> clf = ApproxKernelRidgeClassifier(n_components=100, gamma=2.0, random_state=0)
    >>> clf.fit(X, y).score(X, y) > 0.95
    True
    """

    _parameter_constraints = {**_RidgeBase._parameter_constraints,
                              "class_weight": [None, "dict", Options("balanced")]}

    def __init__(
        self, *, feature_map="nystroem", n_components=1000, kernel="rbf", gamma="scale",
        degree=3, coef0=0.0, alpha=1.0, fit_intercept=True, class_weight=None,
        dtype="float32", memory_budget=None, random_state=None,
    ):
        super().__init__(
            feature_map=feature_map, n_components=n_components, kernel=kernel, gamma=gamma,
            degree=degree, coef0=coef0, alpha=alpha, fit_intercept=fit_intercept, dtype=dtype,
            memory_budget=memory_budget, random_state=random_state,
        )
        self.class_weight = class_weight

    def fit(self, X, y=None, sample_weight=None):
        """Fit the feature map and the least-squares classifier.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, ChunkedDataset} of shape (n_samples, n_features)
            A dask array (chunked by rows) is fitted on the active dask client;
            a :class:`kernelscale.datasets.ChunkedDataset` is streamed chunk by
            chunk under ``memory_budget`` (its chunks carry the labels).
        y : array-like or dask array of shape (n_samples,), default=None
            Required unless ``X`` is a ChunkedDataset.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : ApproxKernelRidgeClassifier
        """
        source = chunked_source(self, X, y, sample_weight)
        if source is not None:
            return fit_ridge_chunked(self, source, self._alpha(), classifier=True)
        X, y_index, weights = classifier_data(self, X, y, sample_weight)
        Y = plus_minus_targets(y_index, len(self.classes_))
        self._solve(X, Y, weights)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add a chunk of rows; the result equals ``fit`` on all rows seen so far.

        The first call fits the feature map on its chunk and needs ``classes``;
        every call adds the chunk's exact ridge statistics and re-solves.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            Every label of the stream; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : ApproxKernelRidgeClassifier
        """
        return self._partial_fit(X, y, classes, sample_weight, classifier=True)
