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
    EXACT_PARAMS_DOC,
    ONE_OUTPUT_ATTRIBUTES_DOC,
    ExactOneOutput,
)

__all__ = ["KernelOneClassSVM"]


class KernelOneClassSVM(OneClassShell, OutlierMixin, ExactOneOutput):
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
    {ONE_OUTPUT_ATTRIBUTES_DOC}

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
