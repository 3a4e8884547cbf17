"""Kernel logistic regression on an explicit feature map."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from ..._constraints import VERBOSE, Interval, Options, validate_params
from ..._progress import progress
from ..._validation import check_finite_fit, resolve_memory_budget
from ...solvers import LogisticProblem, fit_logistic
from ...sources import dask_method, is_dask_array
from .._approx import APPROX_CONSTRAINTS, ApproxKernelMixin
from .._chunked_fits import (
    chunked_source,
    fit_logistic_chunked,
)
from .._multiclass import classifier_data
from .._shells import ClassifierShell

__all__ = ["KernelLogisticRegression"]


class KernelLogisticRegression(ApproxKernelMixin, ClassifierShell, ClassifierMixin,
                               BaseEstimator):
    """Kernel logistic regression through an explicit feature map.

    Maps the data once (Nystroem, random Fourier or polynomial-sketch
    features, float32 by default) and fits L2-regularised logistic regression
    on the features with L-BFGS or Newton-CG, every evaluation a blocked pass
    over the features. Gives calibrated ``predict_proba`` where the SVMs give
    only scores.

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
        Inverse regularisation strength: ``C sum_i s_i loss_i + ||w||^2 / 2``,
        as in :class:`sklearn.linear_model.LogisticRegression`.
    multiclass : {"multinomial", "ovr"}, default="multinomial"
        Softmax over all classes, or one binary problem per class (the
        probabilities then normalised). Two classes always use one binary problem.
    solver : {"lbfgs", "newton-cg"}, default="lbfgs"
    fit_intercept : bool, default=True
        Fit an unpenalised intercept.
    class_weight : dict, "balanced" or None, default=None
    tol : float, default=1e-4
    max_iter : int, default=500
    memory_budget : int, default=None
        Bytes for row-block temporaries.
    verbose : int, default=0
        1: a progress bar over the solver's iterations; 2: every objective value.
    random_state : int, RandomState instance or None, default=None
        Seeds the feature map.

    Attributes
    ----------
    feature_map_ : transformer
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_features_out)
        One row for two classes, one per class otherwise.
    intercept_ : ndarray of shape (n_problems,)
    n_iter_ : int
        Iterations of the (slowest) solve.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelscale import KernelLogisticRegression
    >>> X, y = make_moons(n_samples=400, noise=0.1, random_state=0)
    >>> clf = KernelLogisticRegression(n_components=100, gamma=2.0, C=100, random_state=0)
    >>> clf.fit(X, y).score(X, y) > 0.95
    True
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    _parameter_constraints = {
        **APPROX_CONSTRAINTS,
        # C = inf: no penalty (scikit-learn accepts it too)
        "C": [Interval("real", 0, None, closed="neither", inf=True)],
        "multiclass": [Options("multinomial", "ovr")],
        "solver": [Options("lbfgs", "newton-cg")],
        "fit_intercept": ["boolean"],
        "class_weight": [None, "dict", Options("balanced")],
        "tol": [Interval("real", 0, None, closed="neither")],
        "max_iter": [Interval("int", 1)],
        "verbose": VERBOSE,
    }

    def __init__(
        self, *, feature_map="nystroem", n_components=1000, kernel="rbf", gamma="scale",
        degree=3, coef0=0.0, C=1.0, multiclass="multinomial", solver="lbfgs",
        fit_intercept=True, class_weight=None, tol=1e-4, max_iter=500, dtype="float32",
        memory_budget=None, verbose=0, random_state=None,
    ):
        self.feature_map = feature_map
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.multiclass = multiclass
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None):
        """Fit the feature map and the logistic regression.

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
        self : KernelLogisticRegression
        """
        validate_params(self)
        C, multiclass, solver = float(self.C), self.multiclass, self.solver
        tol, max_iter = float(self.tol), int(self.max_iter)
        source = chunked_source(self, X, y, sample_weight)
        if source is not None:
            return fit_logistic_chunked(self, source, C=C, multiclass=multiclass, tol=tol,
                                        max_iter=max_iter)
        X, y_index, weights = classifier_data(self, X, y, sample_weight)
        budget = resolve_memory_budget(self.memory_budget)
        Z = self._fit_features(X)
        n_classes = len(self.classes_)
        if n_classes == 2:
            problems = [(np.where(y_index == 1, 1.0, -1.0), 1)]
        elif multiclass == "multinomial":
            problems = [(y_index, n_classes)]
        else:
            problems = [(np.where(y_index == c, 1.0, -1.0), 1) for c in range(n_classes)]
        coefs, intercepts, iters, converged = [], [], [], True
        bar = progress(max_iter * len(problems), f"KernelLogisticRegression ({solver})",
                       verbose=self.verbose)
        with bar:
            for targets, columns in problems:
                problem = LogisticProblem(Z, targets, columns, weights, C,
                                          bool(self.fit_intercept), budget)
                coef, intercept, n_iter, ok = fit_logistic(
                    problem, solver=solver, tol=tol, max_iter=max_iter,
                    verbose=self.verbose >= 2, callback=bar.update,
                )
                coefs.append(coef)
                intercepts.append(intercept)
                iters.append(n_iter)
                converged &= ok
        if not converged:
            warnings.warn(
                f"The {solver} solver reached max_iter={max_iter} before converging; "
                "increase max_iter, or C smaller (stronger regularisation) converges faster.",
                ConvergenceWarning, stacklevel=2,
            )
        self.coef_ = np.vstack(coefs)
        self.intercept_ = np.concatenate(intercepts)
        self.n_iter_ = max(iters)
        self._multinomial = n_classes > 2 and multiclass == "multinomial"
        check_finite_fit(self, "coef_", "intercept_")
        return self

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        if is_dask_array(X):
            return dask_method(self, "predict_proba", X)
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        if self._multinomial:
            return softmax(scores, axis=1)
        p = expit(scores)
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def __sklearn_tags__(self):
        return self._more_tags_sparse(super().__sklearn_tags__())
