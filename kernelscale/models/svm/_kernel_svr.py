"""Exact epsilon-SVR: LIBSVM's dual, solved by kernelscale's SMO."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import RegressorMixin

from ..._constraints import Interval
from ..._progress import convergence_bar
from ...solvers import smo_regression
from ...sources import dask_method, is_dask_array
from .._shells import fitted_scores
from ._exact_base import (
    EXACT_CONSTRAINTS,
    ExactOneOutput,
)

__all__ = ["KernelSVR"]


class KernelSVR(RegressorMixin, ExactOneOutput):
    """Exact epsilon-support vector regression, solved in the dual by SMO.

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
    kernel : {"rbf", "linear", "polynomial", "poly", "laplacian", "precomputed"} or callable, \
default="rbf"
        A callable is called as ``kernel(X_block, Y, **kernel_params)`` and must
        return the Gram block. "precomputed": ``X`` is the training Gram matrix
        in ``fit`` and ``K(test, train)`` at prediction.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel scale; "scale" is ``1 / (n_features X.var())`` as in scikit-learn.
    coef0 : float, default=0.0
        Constant of the polynomial kernel.
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel.
    tol : float, default=1e-3
        Stop when the maximal violation of the optimality conditions is below it
        (LIBSVM's ``eps``).
    cache_size : float, default=256
        Kernel-row cache in MB (2**20 bytes) of the working-set solver (used when
        the kernel matrix is over ``memory_budget``), at most: the memory plan
        gives the cache what ``memory_budget`` leaves beside the prepared rows,
        the working set's blocks and the kernel's temporaries, when that is less.
    max_iter : int, default=-1
        Cap on SMO pair updates; -1 means LIBSVM's ``max(10^7, 100 n)``.
        Reaching it gives a ConvergenceWarning.
    shrinking : bool, default=True
        Drop variables stuck at a bound from the active set (LIBSVM's rule).
    working_set_size : int, default=1024
        Variables per working set; capped by what the cache holds.
    memory_budget : int, default=None
        Bytes the fit may hold: the kernel matrix (when it fits, with the
        solving threads' block copies) or the row cache with the prepared rows,
        the working set's blocks and the kernel's temporaries; and at
        prediction the kernel blocks. A budget too small for two kernel rows
        is an error naming the budget that would do. None uses
        :func:`kernelscale.get_config`.
    verbose : int, default=0
        1: a progress bar (for KernelSVR and KernelOneClassSVM, the share of the
        way from the first optimality gap to ``tol``); k >= 2: print the
        solver's progress every k outer iterations; 0: silent (a bar when the
        library's ``show_progress`` is on, as on the command line).

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, n_SV)
        ``a_i - a*_i`` of each support vector.
    support_ : ndarray of shape (n_SV,)
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
    n_features_in_ : int

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
