"""Exact one-class SVM: Schoelkopf et al.'s nu formulation in LIBSVM's dual, solved by SMO."""

from __future__ import annotations

import time

from sklearn.base import OutlierMixin

from ..._constraints import Interval
from ..._progress import convergence_bar
from ...solvers import smo_one_class
from .._shells import OneClassShell
from ._exact_base import (
    EXACT_CONSTRAINTS,
    ExactOneOutput,
)

__all__ = ["KernelOneClassSVM"]


class KernelOneClassSVM(OneClassShell, OutlierMixin, ExactOneOutput):
    """Exact one-class SVM (novelty detection), solved in the dual by SMO.

    Schoelkopf et al.'s nu formulation with LIBSVM's dual, start and stopping
    rule, so the model is :class:`sklearn.svm.OneClassSVM`'s: a kernel
    expansion that is positive on the region holding most of the training data.

    Parameters
    ----------
    nu : float, default=0.5
        In (0, 1]: an upper bound on the fraction of training points outside the
        region and a lower bound on the fraction of support vectors.
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
        ``alpha_i`` of each support vector (in (0, 1], summing to ``nu n``).
    offset_ : ndarray of shape (1,)
        ``-intercept_``: ``decision_function = score_samples - offset_``.
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
