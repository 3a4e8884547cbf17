"""Approximate kernel SVM: a feature map and a linear SVM, one estimator."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from ..._validation import (
    available_when,
    check_sample_weight,
    check_X_y,
    random_seed,
    resolve_memory_budget,
)
from ...solvers import SGDState, asgd_pass
from ...sources import is_dask_array
from .._approx import APPROX_CONSTRAINTS, ApproxKernelMixin
from .._chunked_fits import partial_targets
from .._probability import ProbabilityMixin
from .._shells import ClassifierShell
from ._linear_svc import SVM_CONSTRAINTS, check_svm_params, fit_svm_estimator

__all__ = ["ApproxKernelSVC"]

# Rows per SGD step. Small batches take more steps per pass, which one-pass training
# needs: measured one epoch of 1e6 rows, RFF 1024: 32 rows 0.824 accuracy in 6.2 s,
# 64 rows 0.812 in 6.2 s, 256 rows 0.789 in 4.8 s (benchmarks/bench_scaling.py data).
_SGD_BATCH = 32


def _without_probability(estimator):
    if estimator.probability:
        raise AttributeError("partial_fit is not available with probability=True: the "
                             "sigmoids come from fit's internal cross-validation.")
    return True


class ApproxKernelSVC(ProbabilityMixin, ApproxKernelMixin, ClassifierShell, ClassifierMixin,
                      BaseEstimator):
    """Kernel SVM through an explicit feature map and a fast linear SVM.

    ``fit`` maps the training data once (float32 by default) with a Nystroem,
    random Fourier or polynomial-sketch map, then trains :class:`LinearSVC`'s
    solvers on the features; ``predict`` maps new rows through the same fitted
    map, in blocks under the memory budget. Several classes are handled
    one-vs-rest on features computed once and shared by every class.

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
    C : float, default=1.0
        Inverse regularization strength (> 0).
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
    fit_intercept : bool, default=True
    intercept_scaling : float, default=1.0
    class_weight : dict, "balanced", "balanced_binary" or None, default=None
        Multiplies C per class. "balanced" weighs class c by
        ``n_samples / (n_classes * n_c)``, as in scikit-learn; "balanced_binary"
        equalises the two sides of every binary problem instead (one-vs-rest or
        one-vs-one), which also puts one-vs-rest scores on a comparable scale.
    tol : float, default=1e-4
    max_iter : int, default=1000
    solver : {"auto", "newton", "lbfgs", "dual_cd", "subgradient"}, default="auto"
        See :class:`LinearSVC`.
    probability : bool, default=False
        Fit ``predict_proba`` as :class:`KernelSVC` does: a sigmoid per
        one-vs-rest problem on the decision values of a 5-fold internal
        cross-validation, normalised over the classes (5 more fits; data in
        memory; ``partial_fit`` is then not available).
    n_jobs : int, default=None
        Threads for one-vs-rest problems solved by dual CD (None: 1, -1: every core).
    memory_budget : int, default=None
        Bytes for row-block temporaries (features at predict time included).
    verbose : int, default=0
    random_state : int, RandomState instance or None, default=None
        Seeds the feature map and the solver.

    Attributes
    ----------
    feature_map_ : transformer
        The fitted feature map.
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_features_out)
        Weights on the mapped features (one row for two classes).
    intercept_ : ndarray of shape (n_problems,)
    n_iter_ : int
    probA_, probB_ : ndarray of shape (n_problems,)
        The sigmoids of ``probability=True``.
    n_features_in_ : int

    See Also
    --------
    LinearSVC : The linear model on the raw features.
    ApproxKernelRidgeClassifier : Closed-form least-squares counterpart, faster still.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelscale import ApproxKernelSVC
    >>> X, y = make_moons(n_samples=400, noise=0.1, random_state=0)
    >>> clf = ApproxKernelSVC(n_components=100, gamma=2.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    _parameter_constraints = {**APPROX_CONSTRAINTS, **SVM_CONSTRAINTS,
                              "probability": ["boolean"]}

    def __init__(
        self, *, feature_map="nystroem", n_components=1000, kernel="rbf", gamma="scale",
        degree=3, coef0=0.0, C=1.0, loss="squared_hinge", fit_intercept=True,
        intercept_scaling=1.0, class_weight=None, tol=1e-4, max_iter=1000, solver="auto",
        probability=False, dtype="float32", n_jobs=None, memory_budget=None, verbose=0,
        random_state=None,
    ):
        self.feature_map = feature_map
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver
        self.probability = probability
        self.dtype = dtype
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None):
        """Fit the feature map and the linear SVM on its features.

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
        self : ApproxKernelSVC
        """
        if self.probability:
            if hasattr(X, "n_samples") or is_dask_array(X):
                raise ValueError("probability=True refits on row subsets (its internal "
                                 "cross-validation): give the data in memory, not a stream.")
            X, y = check_X_y(self, X, y)
            check_classification_targets(y)
            sample_weight = check_sample_weight(sample_weight, X.shape[0])
            self.classes_, y_index = np.unique(y, return_inverse=True)
            self._check_probability_data(y_index)
        fit_svm_estimator(self, X, y, sample_weight, features=self._fit_features)
        if self.probability:
            self._fit_probability(X, y, y_index, sample_weight)
        # partial_fit after fit goes on from the batch solution, as in scikit-learn
        bias = check_svm_params(self)["bias"]
        W = np.vstack([self.coef_.T, (self.intercept_ / bias if bias else
                                      np.zeros_like(self.intercept_))[None]])
        n_rows = X.n_samples if hasattr(X, "n_samples") else (
            X.shape[0] if hasattr(X, "shape") else np.asarray(X).shape[0])
        self._partial = SGDState.from_weights(W, n_rows)
        self._rng = np.random.default_rng(random_seed(self.random_state))
        return self

    @available_when(_without_probability)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass of averaged SGD over a chunk of rows (online training).

        The first call fits the feature map on its chunk and needs ``classes``.
        The weights are the running average of SGD iterates on the objective of
        every row seen so far (``solver`` is not used); call it again on the
        same chunks for more passes. After ``fit`` it goes on from the batch
        solution.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            Every label of the stream; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : ApproxKernelSVC
        """
        params = check_svm_params(self)
        budget = resolve_memory_budget(self.memory_budget)
        first, X, Y, S = partial_targets(self, X, y, classes, sample_weight, classifier=True)
        if first:
            width = self.feature_map_.transform(X[:1]).shape[1]
            self._partial = SGDState(width, Y.shape[1])
        if not hasattr(self, "_rng"):
            self._rng = np.random.default_rng(random_seed(self.random_state))
        for start, stop, Z in self._mapped_blocks(X, budget):
            asgd_pass(self._partial, Z, Y[start:stop], S[start:stop], C=params["C"],
                      loss=params["loss"], bias=params["bias"], batch_size=_SGD_BATCH,
                      rng=self._rng)
        W = self._partial.W_avg
        d = W.shape[0] - 1
        self.coef_ = W[:d].T.copy()
        self.intercept_ = params["bias"] * W[d]
        self.n_iter_ = self._partial.t
        return self

    def __sklearn_tags__(self):
        return self._more_tags_sparse(super().__sklearn_tags__())
