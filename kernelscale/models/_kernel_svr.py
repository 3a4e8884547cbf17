"""Exact epsilon-SVR and one-class SVM: LIBSVM's duals, solved by kernelscale's SMO."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin, RegressorMixin
from sklearn.utils.validation import validate_data

from .._constraints import Interval, validate_params
from .._progress import convergence_bar
from .._validation import (
    check_finite_fit,
    check_sample_weight,
    refuse_chunked,
    resolve_memory_budget,
)
from ..solvers import KernelRows, smo_one_class, smo_regression
from ..sources import dask_method, is_dask_array
from ._exact_base import EXACT_CONSTRAINTS, EXACT_PARAMS_DOC, ExactKernelMixin
from ._matrix_svm import training_kernel_matrix
from ._shells import OneClassShell, fitted_scores

__all__ = ["KernelSVR", "KernelOneClassSVM"]

_ATTRIBUTES_DOC = """support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training data.
    support_vectors_ : {ndarray, sparse matrix} of shape (n_SV, n_features)
        Empty for ``kernel="precomputed"``.
    intercept_ : ndarray of shape (1,)
    n_support_ : ndarray of shape (1,)
        The number of support vectors.
    n_iter_ : int
        SMO pair updates.
    objective_ : float
        Dual objective reached (LIBSVM's ``obj``).
    fit_status_ : int
        0 when the solver met ``tol``, 1 when ``max_iter`` stopped it.
    fit_time_ : float
        Seconds spent in the solver.
    memory_plan_ : kernelscale.MemoryPlan
        What the fit held, in bytes, and the route it chose (the kernel matrix
        or a row cache).
    n_features_in_ : int"""


class _ExactOneOutput(ExactKernelMixin, BaseEstimator):
    """Fit plumbing of the single-output exact models."""

    # whether to compute the whole kernel matrix when it fits the budget; measured at
    # 20,000 rows (benchmarks/bench_svr.py data): SVR 35 s with it against ~50 s through
    # the row cache (most rows are support vectors and come back many times), the
    # one-class SVM 2.3 s against 1.1 s (nu = 0.1), 4.0 s against 2.6 s (nu = 0.5): it
    # touches few rows, and the cache computes only those
    _whole_matrix = True

    def _prepare(self, X, y, sample_weight, *, supervised):
        refuse_chunked(self, X)
        validate_params(self)
        if not supervised:
            X = validate_data(self, X, accept_sparse=False if self._precomputed else "csr",
                              dtype=(np.float64, np.float32))
        else:
            X, y = validate_data(self, X, y, accept_sparse=False if self._precomputed
                                 else "csr", dtype=(np.float64, np.float32), y_numeric=True)
        self._check_training_matrix(X)
        sw = check_sample_weight(sample_weight, X.shape[0])
        self.kernel_ = self._make_kernel(X)
        if not self._precomputed:
            self.kernel_.check_range(X, np.float32)  # kernel rows are float32
        budget = resolve_memory_budget(self.memory_budget)
        n = X.shape[0]
        variables = 2 * n if supervised else n
        plan = None
        if self._precomputed or self._whole_matrix:
            # computing every row once beats recomputing the rows an LRU cache loses
            plan = self._memory_plan(X, variables, budget, matrix=True)
            if self._precomputed:
                plan.require(" (the kernel matrix is given: a smaller one, or more budget)")
            elif not plan.fits:
                plan = None
        if plan is not None:
            source = training_kernel_matrix(
                self.kernel_, X, "precomputed" if self._precomputed else None, plan.fill_bytes)
            options = self._options(plan, plan.fill_bytes, 2)
        else:
            plan = self._memory_plan(X, variables, budget, matrix=False).require(
                " (the row cache must hold two kernel rows beside the working set and the "
                "kernel's temporaries)")
            source = KernelRows(X, self.kernel_, plan.temporary_bytes, densify=plan.densify)
            options = self._options(plan, plan.temporary_bytes, plan.cache_bytes)
        self.memory_plan_ = plan
        return X, y, sw, source, options

    def _options(self, plan, temporary_bytes, cache_bytes):
        return {"tol": float(self.tol), "max_iter": int(self.max_iter),
                "working_set_size": plan.working_set_size, "shrinking": self.shrinking,
                # verbose=1 is a bar (convergence_bar); 2 and more the solver's lines
                "verbose": int(self.verbose) if self.verbose >= 2 else 0,
                "cache_bytes": cache_bytes,
                "batch_bytes": getattr(plan, "batch_bytes", None),
                "memory_budget": temporary_bytes}

    def _store_result(self, X, coef, res, start):
        self.fit_time_ = time.perf_counter() - start
        self._keep_support(X, coef[None, :])
        self.intercept_ = np.array([res["intercept"]])
        self.n_support_ = np.array([self.support_.size])
        self.n_iter_ = int(res["n_iter"])
        self.objective_ = float(res["objective"])
        self.fit_status_ = 0 if res["converged"] else 1
        check_finite_fit(self, "dual_coef_", "intercept_")
        return self


class KernelSVR(RegressorMixin, _ExactOneOutput):
    __doc__ = f"""Exact epsilon-support vector regression, solved in the dual by SMO.

    LIBSVM's epsilon-SVR dual (``2 n`` variables ``a``, ``a*`` under one
    equality constraint) and stopping rule, so the model is
    :class:`sklearn.svm.SVR`'s; solved by the same working-set SMO as
    :class:`KernelSVC` (kernel rows by GEMM through an LRU cache, second-order
    pair selection, shrinking), each training row's kernel row computed once for
    both of its variables.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the epsilon-insensitive loss (> 0); scaled per sample by
        ``sample_weight``.
    epsilon : float, default=0.1
        Half-width of the tube within which errors cost nothing (>= 0).
    {EXACT_PARAMS_DOC}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, n_SV)
        ``a_i - a*_i`` of each support vector.
    {_ATTRIBUTES_DOC}

    See Also
    --------
    sklearn.svm.SVR : LIBSVM's implementation of the same model.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import KernelSVR
    >>> X = np.linspace(0, 6, 200).reshape(-1, 1)
    >>> reg = KernelSVR(C=10.0, epsilon=0.05, gamma=1.0).fit(X, np.sin(X).ravel())
    >>> bool(np.abs(reg.predict(X) - np.sin(X).ravel()).max() < 0.1)
    True
    """

    _parameter_constraints = {
        **EXACT_CONSTRAINTS,
        "C": [Interval("real", 0, None, closed="neither")],
        "epsilon": [Interval("real", 0, None, closed="left")],
    }

    def __init__(self, *, C=1.0, epsilon=0.1, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 kernel_params=None, tol=1e-3, cache_size=256, max_iter=-1, shrinking=True,
                 working_set_size=1024, memory_budget=None, verbose=0):
        self.C = C
        self.epsilon = epsilon
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.tol = tol
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.working_set_size = working_set_size
        self.memory_budget = memory_budget
        self.verbose = verbose

    def fit(self, X, y=None, sample_weight=None):
        """Fit the SVR.

        Parameters
        ----------
        X : {{array-like, sparse matrix}} of shape (n_samples, n_features)
            Training data, or the (n_samples, n_samples) Gram matrix for
            ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Targets (required; None only so that chunked data, which carry their
            targets, get the message that they must be in memory).
        sample_weight : array-like of shape (n_samples,), default=None
            Multiplies C per sample.

        Returns
        -------
        self : KernelSVR
        """
        X, y, sw, rows, options = self._prepare(X, y, sample_weight, supervised=True)
        start = time.perf_counter()
        with convergence_bar("KernelSVR", verbose=self.verbose, tol=self.tol) as monitor:
            res = smo_regression(rows, np.asarray(y, dtype=np.float64), float(self.C) * sw,
                                 float(self.epsilon), monitor=monitor, **options)
        return self._store_result(X, res["coef"], res, start)

    def predict(self, X):
        """Predict targets: ``sum_i dual_coef_i k(x_i, x) + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            For ``kernel="precomputed"``: ``K(X, training data)``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        if is_dask_array(X):
            return dask_method(self, "predict", X)
        return fitted_scores(self, X).ravel()


class KernelOneClassSVM(OneClassShell, OutlierMixin, _ExactOneOutput):
    __doc__ = f"""Exact one-class SVM (novelty detection), solved in the dual by SMO.

    Schoelkopf et al.'s nu formulation with LIBSVM's dual, start and stopping
    rule, so the model is :class:`sklearn.svm.OneClassSVM`'s: a kernel
    expansion that is positive on the region holding most of the training data.

    Parameters
    ----------
    nu : float, default=0.5
        In (0, 1]: an upper bound on the fraction of training points outside the
        region and a lower bound on the fraction of support vectors.
    {EXACT_PARAMS_DOC}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, n_SV)
        ``alpha_i`` of each support vector (in (0, 1], summing to ``nu n``).
    offset_ : ndarray of shape (1,)
        ``-intercept_``: ``decision_function = score_samples - offset_``.
    {_ATTRIBUTES_DOC}

    See Also
    --------
    sklearn.svm.OneClassSVM : LIBSVM's implementation of the same model.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import KernelOneClassSVM
    >>> X = np.random.default_rng(0).normal(size=(300, 2))
    >>> det = KernelOneClassSVM(nu=0.1, gamma=0.5).fit(X)
    >>> det.predict([[0.0, 0.0], [6.0, 6.0]]).tolist()
    [1, -1]
    """

    _parameter_constraints = {
        **EXACT_CONSTRAINTS,
        "nu": [Interval("real", 0, 1, closed="right")],
    }
    _whole_matrix = False

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 kernel_params=None, tol=1e-3, cache_size=256, max_iter=-1, shrinking=True,
                 working_set_size=1024, memory_budget=None, verbose=0):
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.tol = tol
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.working_set_size = working_set_size
        self.memory_budget = memory_budget
        self.verbose = verbose

    def fit(self, X, y=None, sample_weight=None):
        """Fit the region that holds the training data.

        Parameters
        ----------
        X : {{array-like, sparse matrix}} of shape (n_samples, n_features)
            Training data, or the (n_samples, n_samples) Gram matrix for
            ``kernel="precomputed"``.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Upper bound of each dual variable (LIBSVM's weighted form).

        Returns
        -------
        self : KernelOneClassSVM
        """
        X, _, sw, rows, options = self._prepare(X, None, sample_weight, supervised=False)
        start = time.perf_counter()
        with convergence_bar("KernelOneClassSVM", verbose=self.verbose,
                             tol=self.tol) as monitor:
            res = smo_one_class(rows, float(self.nu), sw, monitor=monitor, **options)
        self._store_result(X, res["alpha"], res, start)
        self.offset_ = -self.intercept_
        return self
