"""Approximate one-class SVM: a feature map and a linear one-class solver."""

from __future__ import annotations

import numpy as np
from sklearn.base import OutlierMixin

from ..._constraints import VERBOSE, Interval
from ..._progress import convergence_bar
from ..._validation import (
    check_finite_fit,
)
from ...solvers import linear_one_class
from .._approx import (
    APPROX_CONSTRAINTS,
    ApproxOneOutput,
)
from .._shells import OneClassShell

__all__ = ["ApproxKernelOneClassSVM"]


class ApproxKernelOneClassSVM(OneClassShell, OutlierMixin, ApproxOneOutput):
    """One-class SVM (novelty detection) through an explicit feature map.

    ``fit`` maps the training data once and solves the nu one-class dual with
    the linear kernel of the features, never forming the ``n x n`` matrix: the
    gradient is one product ``Z w`` per iteration and each working set a small
    block ``Z_B Z_B^T`` (the exact model's pair updates). The approximate
    counterpart of :class:`KernelOneClassSVM`, linear in the number of rows;
    with the exact kernel's features it is that model.

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
    nu : float, default=0.5
        In (0, 1]: an upper bound on the fraction of training points outside the
        region and a lower bound on the fraction of support vectors.
    tol : float, default=1e-3
        LIBSVM's stopping rule (maximal violation).
    max_iter : int, default=1000
        Outer iterations (gradient recomputations).
    memory_budget : int, default=None
        Bytes for row-block temporaries (features at predict time included).
    verbose : int, default=0
        1: a progress bar of the solver's convergence; 2 and more: the one-class
        solver's lines.
    random_state : int, RandomState instance or None, default=None
        Seeds the feature map (and the coordinate order of the SVR solver).

    Attributes
    ----------
    feature_map_ : transformer
    coef_ : ndarray of shape (1, n_features_out)
        ``sum_i alpha_i z_i``.
    intercept_ : ndarray of shape (1,)
    offset_ : ndarray of shape (1,)
        ``-intercept_``: ``decision_function = score_samples - offset_``.
    n_iter_ : int
    n_features_in_ : int

    See Also
    --------
    KernelOneClassSVM : The exact model.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import ApproxKernelOneClassSVM
    >>> X = np.random.default_rng(0).normal(size=(300, 2))
    >>> det = ApproxKernelOneClassSVM(nu=0.1, gamma=0.5, n_components=100,
    ...                               random_state=0).fit(X)
    >>> det.predict([[0.0, 0.0], [6.0, 6.0]]).tolist()
    [1, -1]
    """

    _parameter_constraints = {
        **APPROX_CONSTRAINTS,
        "nu": [Interval("real", 0, 1, closed="right")],
        "tol": [Interval("real", 0, None, closed="neither")],
        "max_iter": [Interval("int", 1)],
        "verbose": VERBOSE,
    }

    def __init__(self, *, feature_map="nystroem", n_components=1000, kernel="rbf",
                 gamma="scale", degree=3, coef0=0.0, nu=0.5, tol=1e-3, max_iter=1000,
                 dtype="float32", memory_budget=None, verbose=0, random_state=None):
        self.feature_map = feature_map
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.nu = nu
        self.tol = tol
        self.max_iter = max_iter
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None):
        """Map ``X`` and fit the region that holds it.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Upper bound of each dual variable (LIBSVM's weighted form).

        Returns
        -------
        self : ApproxKernelOneClassSVM
        """
        Z, _, sw = self._features(X, None, sample_weight, supervised=False)
        # verbose=1 is a bar; 2 and more the solver's lines
        with convergence_bar("ApproxKernelOneClassSVM", verbose=self.verbose,
                             tol=self.tol, every=1) as monitor:
            res = linear_one_class(Z, float(self.nu), sw, tol=float(self.tol),
                                   max_iter=int(self.max_iter),
                                   verbose=int(self.verbose) if self.verbose >= 2 else 0,
                                   monitor=monitor)
        self.coef_ = res["coef"][None, :].astype(Z.dtype)
        self.intercept_ = np.array([res["intercept"]])
        self.offset_ = -self.intercept_
        self.n_iter_ = res["n_iter"]
        check_finite_fit(self, "coef_", "intercept_")
        return self
