"""Nystrom kernel ridge regression and classification solved by FALKON's preconditioned CG."""

from __future__ import annotations

import time
import warnings
from dataclasses import replace

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..._constraints import VERBOSE, Interval, Options, validate_params
from ..._progress import progress
from ..._validation import (
    check_finite_fit,
    check_sample_weight,
    resolve_dtype,
    resolve_memory_budget,
)
from ...feature_maps import SAMPLINGS, select_landmarks
from ...kernels import KERNEL_CONSTRAINTS, make_kernel
from ...solvers import FalkonOptions, falkon_solve, falkon_system, plus_minus_targets
from .._chunked_fits import (
    MAP_SAMPLE_ROWS,
    chunked_source,
    source_targets,
)
from .._multiclass import classifier_data
from .._probability import ProbabilityMixin
from .._shells import ClassifierShell, RegressorShell
from ._falkon_settings import (
    AUTO_PENALTY,
    FLOAT32_PENALTY_FLOOR,
    auto_n_components,
    convergence_message,
    recompute_message,
)

__all__ = ["NystromKernelRidge", "NystromKernelRidgeClassifier", "AUTO_PENALTY",
           "FLOAT32_PENALTY_FLOOR", "auto_n_components"]

class _NystromKernelRidgeBase(BaseEstimator):
    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        "n_components": [Options("auto"), Interval("int", 1)],
        "sampling": [Options(*SAMPLINGS)],
        "alpha": [Options("auto"), Interval("real", 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval("int", 1)],
        "tol": [Interval("real", 0)],
        "preconditioner": ["boolean"],
        "dtype": ["dtype"],
        "memory_budget": ["memory"],
        "random_state": ["random_state"],
        "verbose": VERBOSE,
    }

    #: models pickled before the parameter existed fitted none
    fit_intercept = False

    def __init__(
        self, *, n_components="auto", sampling="uniform", kernel="rbf", gamma="scale",
        degree=3, coef0=0.0, kernel_params=None, alpha="auto", fit_intercept=False,
        max_iter=50, tol=1e-3, preconditioner=True, dtype="float32", memory_budget=None,
        random_state=None, verbose=0,
    ):
        self.n_components = n_components
        self.sampling = sampling
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.preconditioner = preconditioner
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    def _n_components(self, n_samples, budget, itemsize):
        if isinstance(self.n_components, str):
            return auto_n_components(n_samples, budget, itemsize, warn=True)
        m = int(self.n_components)
        if m > n_samples:
            warnings.warn(
                f"n_components={m} is larger than n_samples={n_samples}; using all "
                f"{n_samples} samples as centres.", UserWarning, stacklevel=4,
            )
        return min(m, n_samples)

    def _alpha(self, weight_total):
        if isinstance(self.alpha, str):
            return AUTO_PENALTY * weight_total
        return float(self.alpha)

    def _options(self, callback):
        validate_params(self)
        return FalkonOptions(max_iter=int(self.max_iter), tol=float(self.tol),
                             preconditioner=bool(self.preconditioner),
                             memory_budget=resolve_memory_budget(self.memory_budget),
                             verbose=int(self.verbose), callback=callback)

    def _say(self, text, options):
        if options.verbose >= 2:
            print(f"[{type(self).__name__}] {text}", flush=True)

    def _fit_source(self, source, classifier, callback=None):
        """FALKON on a row source: every CG iteration is one pass over the chunks.

        A stream whose rows fit the memory budget is read once and fitted in
        memory instead (``K(X, C)`` then computed once when it fits too).
        """
        data = source.in_memory() if hasattr(source, "in_memory") else None
        if data is not None:
            X, y = data
            if classifier:
                X, y_index, weights = classifier_data(self, X, y, None)
                return self._fit(X, plus_minus_targets(y_index, len(self.classes_)), weights,
                                 callback=callback)
            return self._fit(*self._regression_data(X, y, None), callback=callback)
        encoder, n_rows = source_targets(self, source, classifier, centred=self.fit_intercept)
        self.n_features_in_ = int(source.n_features)
        return self._fit(source, encode=encoder, n_rows=n_rows, callback=callback)

    def _fit(self, data, Y=None, sample_weight=None, *, encode=None, n_rows=None,
             callback=None):
        """One fit for arrays and row sources: kernel, centres, FALKON's system, CG, solution.

        In-memory ``data`` come with targets ``Y`` and weights; a row source with
        ``encode`` (its chunks' targets and weights) and its weighted row count, and
        its centres are drawn from a sample of its rows.
        """
        start = time.perf_counter()
        options = self._options(callback)
        budget = options.memory_budget
        streamed = encode is not None
        if streamed:
            m = self._n_components(n_rows, budget, np.dtype(self.dtype or np.float64).itemsize)
            sample, _ = data.head(max(MAP_SAMPLE_ROWS, 2 * m), self.random_state)
        else:
            sample = data
        options = replace(options, dtype=resolve_dtype(self.dtype, sample.dtype))
        kernel = make_kernel(self.kernel, sample, gamma=self.gamma, degree=self.degree,
                             coef0=self.coef0, kernel_params=self.kernel_params)
        if not streamed:
            kernel.check_range(data, options.dtype)
            m = self._n_components(data.shape[0], budget, options.dtype.itemsize)
        centers, indices = select_landmarks(sample, m, self.sampling,
                                            check_random_state(self.random_state),
                                            kernel=kernel, memory_budget=budget)
        unit = streamed or np.all(sample_weight == 1.0)
        intercept = None
        if self.fit_intercept:
            # the targets' weighted mean is the model far from every centre (where the
            # kernel part fades to 0), not 0
            intercept = encode.shift if streamed else \
                np.average(Y, axis=0, weights=sample_weight)
            if not streamed:
                Y = Y - intercept
        system = falkon_system(data, centers, kernel, options, Y=Y,
                               weights=None if unit else sample_weight,
                               center_indices=None if streamed else indices, encode=encode)
        alpha = self._alpha(system.weight_total)
        self._say(f"n={system.n_rows}{' (chunked)' if streamed else ''} centres={m} "
                  f"({self.sampling}{f', from {sample.shape[0]} sampled rows' if streamed else ''})"
                  f" alpha={alpha:.4g}; system built in {time.perf_counter() - start:.2f} s",
                  options)
        bar = progress(options.max_iter, f"{type(self).__name__} CG", verbose=options.verbose)

        def monitor(iteration, relative):
            bar.update()
            bar.set_postfix_str(f"residual {relative.max():.1e} (tol {options.tol:g})")
        with bar:
            beta, info = falkon_solve(system, alpha, replace(options, monitor=monitor))
        self._set_solution(centers, None if streamed else indices, beta, info, alpha, kernel,
                           options, start)
        # 0 where not fitted, as scikit-learn's linear models
        self.intercept_ = np.zeros(beta.shape[1]) if intercept is None else \
            np.asarray(intercept, dtype=np.float64).reshape(-1)
        return self

    def _set_solution(self, centers, indices, beta, info, alpha, kernel, options, start):
        dtype, budget = options.dtype, options.memory_budget
        message = convergence_message(info, options.max_iter, options.tol, dtype, alpha)
        if message:
            warnings.warn(message, ConvergenceWarning, stacklevel=4)
        if info.get("kernel_kept") is False:
            warnings.warn(recompute_message(info["n_rows"], centers.shape[0], dtype, budget,
                                            info["n_iter"], info["plan"].kept_bytes),
                          UserWarning, stacklevel=4)
        self.memory_plan_ = info.get("plan")
        self.components_ = np.asarray(centers, dtype=dtype)
        self.component_indices_ = indices
        self.dual_coef_ = beta.T.copy()
        check_finite_fit(self, "dual_coef_")
        self.alpha_ = alpha
        self.n_components_ = centers.shape[0]
        self.n_iter_ = info["n_iter"]
        self.residuals_ = np.array(info["residuals"]).reshape(info["n_iter"], beta.shape[1])
        self.kernel_ = kernel
        self._say(f"fitted in {time.perf_counter() - start:.2f} s "
                  f"({self.n_iter_} CG iterations)", options)

    def _raw_scores(self, X, budget):
        scores = self.kernel_.expand(X, self.components_, self.dual_coef_.T,
                                     dtype=self.components_.dtype, memory_budget=budget)
        intercept = getattr(self, "intercept_", None)  # (models fitted without one)
        return scores if intercept is None else scores + intercept

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class NystromKernelRidge(RegressorShell, RegressorMixin, _NystromKernelRidgeBase):
    """Kernel ridge regression on Nystrom centres, solved by FALKON's preconditioned CG.

    Minimises ``sum_i w_i (f(x_i) - y_i)^2 + alpha ||f||^2`` over functions
    ``f = sum_j beta_j k(c_j, .)`` on m centres ``c_j`` (Rudi, Carratino &
    Rosasco 2017). The preconditioner from the Cholesky factors of ``K_mm`` and
    ``T T^T / m + lam I`` makes CG converge in a few tens of iterations, each one
    pass over ``K(X, C)``: O(n m t) time per iteration and O(m^2) memory beside
    the kernel blocks, instead of kernel ridge's O(n^3) time and O(n^2) memory.
    All targets share the CG run.

    Parameters
    ----------
    n_components : int or "auto", default="auto"
        Number of Nystrom centres m (the size of the approximation). "auto"
        uses ``7 sqrt(n) ln(n)`` (FALKON's ``O(sqrt(n) log n)``), at least
        1000, at most 10,000 and at most what keeps ``K(X, C)`` within
        ``memory_budget``, never more than n. m = n with a tiny ``tol`` is
        exact kernel ridge regression.
    sampling : {"uniform", "leverage", "kmeans"}, default="uniform"
        How centres are chosen (the Nystrom landmark samplers, the same name
        as :class:`Nystroem`'s): uniformly, by approximate ridge leverage
        scores, or as k-means centroids.
    kernel : str or callable, default="rbf"
        "linear", "polynomial", "rbf", "laplacian" or a callable.
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel.
    alpha : float or "auto", default="auto"
        Penalty of ``sum_i w_i (f(x_i) - y_i)^2 + alpha ||f||^2``, the meaning
        it has in :class:`sklearn.kernel_ridge.KernelRidge` (FALKON's penalty
        is ``alpha / n``). "auto" is ``1e-6 n``: small, since the centres and
        early stopping regularise too, yet well above float32 round-off;
        noisy targets want more (a9a: ``1e-4 n``).
    fit_intercept : bool, default=False
        Fit the targets' weighted mean (a classifier's: of its +1 / -1 columns) as an
        unpenalised intercept, and the kernel part on what is left. Without it (the
        model of :class:`sklearn.kernel_ridge.KernelRidge`) a prediction far from every
        centre fades to 0, not to that mean: an outlying row of a log price loses its
        whole value. :class:`KernelRegressorCV` fits one (for a classifier on bio_kdd04's
        rare class it scored within 0.001 ROC AUC of none, and is left off there).
    max_iter : int, default=50
        Most CG iterations; each is one pass over ``K(X, C)``.
    tol : float, default=1e-3
        Stop when every target's relative residual (of the preconditioned
        system) is below ``tol``.
    preconditioner : bool, default=True
        FALKON's Cholesky preconditioner; False runs plain CG, for comparison.
    dtype : {"float32", "float64"}, default="float32"
        dtype of the kernel blocks and of the O(m^3) factorisations; CG vectors
        and sums across blocks are float64.
    memory_budget : int, default=None
        Bytes for ``K(X, C)``: kept whole when it fits (computed once),
        otherwise recomputed in blocks of this size at every iteration. The
        m x m factors come on top (two of ``m^2`` dtype entries).
    random_state : int, RandomState instance or None, default=None
        Seeds the choice of centres.
    verbose : int, default=0
        1: a progress bar over the CG iterations (with the residual); 2: print
        the centres, alpha, and each CG iteration's residual and time.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features_in)
        The centres (named as :class:`Nystroem` names its landmarks).
    component_indices_ : ndarray of shape (n_components,) or None
        Rows of the training data the centres are (None for k-means centres).
    dual_coef_ : ndarray of shape (n_targets, n_components)
        Predictions are ``K(X, components_) @ dual_coef_.T``.
    intercept_ : ndarray of shape (n_targets,)
        Added to ``K(X, components_) @ dual_coef_.T``: the targets' weighted mean with
        ``fit_intercept=True``, else 0.
    kernel_ : kernelscale.kernels.Kernel
        The kernel, its parameters resolved.
    alpha_ : float
        The penalty used.
    n_components_ : int
    n_iter_ : int
        CG iterations run.
    residuals_ : ndarray of shape (n_iter, n_targets)
        Relative residual after each iteration.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import NystromKernelRidge
    >>> X = np.linspace(0, 6, 500)[:, None]
    >>> y = np.sin(X).ravel()
    >>> reg = NystromKernelRidge(n_components=50, gamma=1.0, random_state=0).fit(X, y)
    >>> float(np.abs(reg.predict(X) - y).max()) < 0.05
    True
    """

    def fit(self, X, y=None, sample_weight=None):
        """Choose centres and solve for their coefficients.

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
        self : NystromKernelRidge
        """
        source = chunked_source(self, X, y, sample_weight)
        if source is not None:
            return self._fit_source(source, classifier=False)
        return self._fit(*self._regression_data(X, y, sample_weight))


class NystromKernelRidgeClassifier(ProbabilityMixin, ClassifierShell, ClassifierMixin,
                                   _NystromKernelRidgeBase):
    """Least-squares kernel classifier on Nystrom centres (FALKON).

    Targets are +1 / -1 per class (one column for two classes), all solved in
    one CG run; ``predict`` takes the arg-max of the scores (their sign for two
    classes).

    Parameters
    ----------
    n_components : int or "auto", default="auto"
        Number of Nystrom centres m (the size of the approximation). "auto"
        uses ``7 sqrt(n) ln(n)`` (FALKON's ``O(sqrt(n) log n)``), at least
        1000, at most 10,000 and at most what keeps ``K(X, C)`` within
        ``memory_budget``, never more than n. m = n with a tiny ``tol`` is
        exact kernel ridge regression.
    sampling : {"uniform", "leverage", "kmeans"}, default="uniform"
        How centres are chosen (the Nystrom landmark samplers, the same name
        as :class:`Nystroem`'s): uniformly, by approximate ridge leverage
        scores, or as k-means centroids.
    kernel : str or callable, default="rbf"
        "linear", "polynomial", "rbf", "laplacian" or a callable.
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel.
    alpha : float or "auto", default="auto"
        Penalty of ``sum_i w_i (f(x_i) - y_i)^2 + alpha ||f||^2``, the meaning
        it has in :class:`sklearn.kernel_ridge.KernelRidge` (FALKON's penalty
        is ``alpha / n``). "auto" is ``1e-6 n``: small, since the centres and
        early stopping regularise too, yet well above float32 round-off;
        noisy targets want more (a9a: ``1e-4 n``).
    fit_intercept : bool, default=False
        Fit the targets' weighted mean (a classifier's: of its +1 / -1 columns) as an
        unpenalised intercept, and the kernel part on what is left. Without it (the
        model of :class:`sklearn.kernel_ridge.KernelRidge`) a prediction far from every
        centre fades to 0, not to that mean: an outlying row of a log price loses its
        whole value. :class:`KernelRegressorCV` fits one (for a classifier on bio_kdd04's
        rare class it scored within 0.001 ROC AUC of none, and is left off there).
    max_iter : int, default=50
        Most CG iterations; each is one pass over ``K(X, C)``.
    tol : float, default=1e-3
        Stop when every target's relative residual (of the preconditioned
        system) is below ``tol``.
    preconditioner : bool, default=True
        FALKON's Cholesky preconditioner; False runs plain CG, for comparison.
    dtype : {"float32", "float64"}, default="float32"
        dtype of the kernel blocks and of the O(m^3) factorisations; CG vectors
        and sums across blocks are float64.
    memory_budget : int, default=None
        Bytes for ``K(X, C)``: kept whole when it fits (computed once),
        otherwise recomputed in blocks of this size at every iteration. The
        m x m factors come on top (two of ``m^2`` dtype entries).
    random_state : int, RandomState instance or None, default=None
        Seeds the choice of centres.
    verbose : int, default=0
        1: a progress bar over the CG iterations (with the residual); 2: print
        the centres, alpha, and each CG iteration's residual and time.
    class_weight : dict, "balanced" or None, default=None
        Multiplies the sample weights by class; "balanced" weighs class c by
        ``n_samples / (n_classes * n_c)``, as in scikit-learn.
    probability : bool, default=False
        Fit ``predict_proba``: a calibrated mapping of the least-squares scores,
        Platt's sigmoid per class (one-vs-rest) fitted on the scores of a 5-fold
        internal cross-validation (5 more fits on 4/5 of the rows; every class
        needs 5 rows; data in memory), normalised over the classes, as
        :class:`ApproxKernelSVC` does. ``predict`` stays the arg-max of the scores.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    probA_, probB_ : ndarray of shape (n_problems,)
        The sigmoids of ``probability=True``.
    components_ : ndarray of shape (n_components, n_features_in)
        The centres (named as :class:`Nystroem` names its landmarks).
    component_indices_ : ndarray of shape (n_components,) or None
        Rows of the training data the centres are (None for k-means centres).
    dual_coef_ : ndarray of shape (n_targets, n_components)
        Predictions are ``K(X, components_) @ dual_coef_.T``.
    intercept_ : ndarray of shape (n_targets,)
        Added to ``K(X, components_) @ dual_coef_.T``: the targets' weighted mean with
        ``fit_intercept=True``, else 0.
    kernel_ : kernelscale.kernels.Kernel
        The kernel, its parameters resolved.
    alpha_ : float
        The penalty used.
    n_components_ : int
    n_iter_ : int
        CG iterations run.
    residuals_ : ndarray of shape (n_iter, n_targets)
        Relative residual after each iteration.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelscale import NystromKernelRidgeClassifier
    >>> X, y = make_moons(n_samples=1000, noise=0.1, random_state=0)
    >>> clf = NystromKernelRidgeClassifier(n_components=100, gamma=2.0, random_state=0)
    >>> clf.fit(X, y).score(X, y) > 0.95
    True
    """

    _parameter_constraints = {**_NystromKernelRidgeBase._parameter_constraints,
                              "class_weight": [None, "dict", Options("balanced")],
                              "probability": ["boolean"]}

    def __init__(self, *, n_components="auto", sampling="uniform", kernel="rbf", gamma="scale",
                 degree=3, coef0=0.0, kernel_params=None, alpha="auto", fit_intercept=False,
                 max_iter=50, tol=1e-3, preconditioner=True, class_weight=None,
                 probability=False, dtype="float32", memory_budget=None, random_state=None,
                 verbose=0):
        super().__init__(n_components=n_components, sampling=sampling, kernel=kernel,
                         gamma=gamma, degree=degree, coef0=coef0, kernel_params=kernel_params,
                         alpha=alpha, fit_intercept=fit_intercept, max_iter=max_iter, tol=tol,
                         preconditioner=preconditioner,
                         dtype=dtype, memory_budget=memory_budget, random_state=random_state,
                         verbose=verbose)
        self.class_weight = class_weight
        self.probability = probability

    def fit(self, X, y=None, sample_weight=None, *, callback=None):
        """Choose centres and solve for every class's coefficients in one CG run.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, ChunkedDataset} of shape (n_samples, n_features)
            A dask array (chunked by rows) is fitted on the active dask client;
            a :class:`kernelscale.datasets.ChunkedDataset` is streamed chunk by
            chunk under ``memory_budget`` (its chunks carry the labels).
        y : array-like or dask array of shape (n_samples,), default=None
            Required unless ``X`` is a ChunkedDataset.
        sample_weight : array-like of shape (n_samples,), default=None
        callback : callable, default=None
            ``callback(iteration, beta)`` after each CG iteration, with the
            current coefficients (shape (n_components, n_targets)); for studying
            convergence.

        Returns
        -------
        self : NystromKernelRidgeClassifier
        """
        source = chunked_source(self, X, y, sample_weight)
        if source is not None:
            if self.probability:
                raise ValueError("probability=True refits on row subsets (its internal "
                                 "cross-validation): give the data in memory, not a stream.")
            return self._fit_source(source, classifier=True, callback=callback)
        X, y_index, weights = classifier_data(self, X, y, sample_weight)
        if self.probability:
            self._check_probability_data(y_index)
        self._fit(X, plus_minus_targets(y_index, len(self.classes_)), weights, callback=callback)
        if self.probability:
            self._fit_probability(X, self.classes_[y_index], y_index,
                                  check_sample_weight(sample_weight, X.shape[0]))
        return self

