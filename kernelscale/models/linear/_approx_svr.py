"""Approximate epsilon-SVR: a feature map and LIBLINEAR's dual coordinate descent."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.exceptions import ConvergenceWarning

from ..._constraints import VERBOSE, Interval, Options, validate_params
from ..._progress import convergence_bar, wants_bar
from ..._validation import (
    check_finite_fit,
    random_seed,
)
from ...solvers import dual_cd_svr
from ...sources import dask_method, is_dask_array
from .._approx import (
    APPROX_CONSTRAINTS,
    ApproxOneOutput,
)
from .._chunked_fits import chunked_source, fit_svr_chunked
from .._shells import fitted_scores

__all__ = ["ApproxKernelSVR"]


class ApproxKernelSVR(RegressorMixin, ApproxOneOutput):
    """Kernel epsilon-SVR through an explicit feature map and a linear SVR.

    ``fit`` maps the training data once (Nystroem, random Fourier or polynomial
    sketch features) and fits a linear epsilon-SVR on them by dual coordinate
    descent (LIBLINEAR's solvers 12 / 13, Ho & Lin 2012); ``predict`` maps new
    rows through the same map. The approximate counterpart of
    :class:`KernelSVR`, linear in the number of rows. A dask array or a
    :class:`kernelscale.datasets.ChunkedDataset` is fitted chunk by chunk under
    ``memory_budget`` (the squared loss: its primal by L-BFGS, the same
    minimiser as the in-memory dual).

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
        Penalty of the loss (> 0); scaled per sample by ``sample_weight``.
    epsilon : float, default=0.1
        Half-width of the insensitive tube (>= 0).
    loss : {"squared_epsilon_insensitive", "epsilon_insensitive"}, \
default="squared_epsilon_insensitive"
        The square of the epsilon-insensitive loss (smooth: dual CD converges in
        a few hundred passes, as :class:`ApproxKernelSVC`'s squared hinge), or
        :class:`KernelSVR`'s own loss, whose dual CD often needs thousands of
        passes at ``C >= 1`` (LIBLINEAR's solver 13 behaves the same).
    fit_intercept : bool, default=True
    intercept_scaling : float, default=1.0
        Value of the constant feature whose (regularized) weight is the intercept.
    tol : float, default=1e-4
        Stop when a pass's summed violation is below ``tol`` times the first pass's
        (chunked fits: when the gradient norm is below ``tol`` times its value at 0).
    max_iter : int, default=1000
        Passes over the data (chunked fits: L-BFGS iterations).
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
    intercept_ : ndarray of shape (1,)
    n_iter_ : int
    n_features_in_ : int

    See Also
    --------
    KernelSVR : The exact model.
    sklearn.svm.LinearSVR : The same solver on raw features.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import ApproxKernelSVR
    >>> X = np.linspace(0, 6, 300).reshape(-1, 1)
    >>> reg = ApproxKernelSVR(n_components=15, C=10.0, epsilon=0.05, gamma=2.0,
    ...                       random_state=0).fit(X, np.sin(X).ravel())
    >>> bool(np.abs(reg.predict(X) - np.sin(X).ravel()).max() < 0.1)
    True
    """

    _parameter_constraints = {
        **APPROX_CONSTRAINTS,
        "C": [Interval("real", 0, None, closed="neither")],
        "epsilon": [Interval("real", 0, None, closed="left")],
        "loss": [Options("epsilon_insensitive", "squared_epsilon_insensitive")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval("real", 0, None, closed="neither")],
        "tol": [Interval("real", 0, None, closed="neither")],
        "max_iter": [Interval("int", 1)],
        "verbose": VERBOSE,
    }

    def __init__(self, *, feature_map="nystroem", n_components=1000, kernel="rbf",
                 gamma="scale", degree=3, coef0=0.0, C=1.0, epsilon=0.1,
                 loss="squared_epsilon_insensitive", fit_intercept=True, intercept_scaling=1.0,
                 tol=1e-4, max_iter=1000, dtype="float32", memory_budget=None, verbose=0,
                 random_state=None):
        self.feature_map = feature_map
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.epsilon = epsilon
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None):
        """Map ``X`` and fit the linear SVR on the features.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, ChunkedDataset} of shape (n_samples, n_features)
            In memory: mapped once and solved by dual CD. Chunked (squared loss
            only): L-BFGS on the primal, one pass per step.
            A dask array (chunked by rows) is fitted on the active dask client;
            a :class:`kernelscale.datasets.ChunkedDataset` is streamed chunk by
            chunk under ``memory_budget`` (its chunks carry the labels).
        y : array-like or dask array of shape (n_samples,), default=None
            Required unless ``X`` is a ChunkedDataset.
        sample_weight : array-like of shape (n_samples,), default=None
            Multiplies C per sample.

        Returns
        -------
        self : ApproxKernelSVR
        """
        source = chunked_source(self, X, y, sample_weight)
        if source is not None:
            validate_params(self)
            fit_svr_chunked(self, source)
            check_finite_fit(self, "coef_", "intercept_")
            return self
        Z, y, sw = self._features(X, y, sample_weight, supervised=True)
        bias = float(self.intercept_scaling) if self.fit_intercept else 0.0
        # a pass is O(n D): one bar step per pass (the outcome does not depend on it)
        with convergence_bar("ApproxKernelSVR", verbose=self.verbose, tol=self.tol,
                             every=1) as monitor:
            coef, intercept, self.n_iter_, converged = dual_cd_svr(
                Z, y, float(self.C) * sw, float(self.epsilon), loss=self.loss, bias=bias,
                tol=float(self.tol), max_iter=int(self.max_iter),
                random_state=random_seed(self.random_state),
                monitor=monitor if wants_bar(self.verbose) else None)
        if not converged:
            warnings.warn(f"Dual CD stopped after max_iter={self.max_iter} passes above "
                          f"tol={self.tol}; raise max_iter"
                          + ("" if self.loss == "squared_epsilon_insensitive" else
                             ", or use loss='squared_epsilon_insensitive' (smooth, faster "
                             "to converge)") + ".",
                          ConvergenceWarning, stacklevel=2)
        self.coef_ = coef[None, :].astype(Z.dtype)
        self.intercept_ = np.array([intercept])
        check_finite_fit(self, "coef_", "intercept_")
        return self

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        if is_dask_array(X):
            return dask_method(self, "predict", X)
        return fitted_scores(self, X).ravel()
