"""Approximate kernel SVM: a feature map and a linear SVM, one estimator."""

from __future__ import annotations

from sklearn.base import BaseEstimator, ClassifierMixin

from ._approx import APPROX_PARAMS_DOC, ApproxKernelMixin
from ._linear_svm import fit_svm_estimator
from ._multiclass import ClassifierShell

__all__ = ["ApproxKernelSVC"]


class ApproxKernelSVC(ApproxKernelMixin, ClassifierShell, ClassifierMixin, BaseEstimator):
    __doc__ = """Kernel SVM through an explicit feature map and a fast linear SVM.

    ``fit`` maps the training data once (float32 by default) with a Nystroem,
    random Fourier or polynomial-sketch map, then trains :class:`LinearSVC`'s
    solvers on the features; ``predict`` maps new rows through the same fitted
    map, in blocks under the memory budget. Several classes are handled
    one-vs-rest on features computed once and shared by every class.

    Parameters
    ----------
    """ + APPROX_PARAMS_DOC + """
    C : float, default=1.0
        Inverse regularization strength (> 0).
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
    fit_intercept : bool, default=True
    intercept_scaling : float, default=1.0
    class_weight : dict, "balanced" or None, default=None
        "balanced" equalises both sides of every one-vs-rest problem.
    tol : float, default=1e-4
    max_iter : int, default=1000
    solver : {"auto", "newton", "lbfgs", "dual_cd", "subgradient"}, default="auto"
        See :class:`LinearSVC`.
    n_jobs : int, default=None
        Threads for one-vs-rest problems solved by dual CD.
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

    def __init__(
        self, *, feature_map="nystroem", n_components=1000, kernel="rbf", gamma="scale",
        degree=3, coef0=1.0, C=1.0, loss="squared_hinge", fit_intercept=True,
        intercept_scaling=1.0, class_weight=None, tol=1e-4, max_iter=1000, solver="auto",
        dtype="float32", n_jobs=None, memory_budget=None, verbose=0, random_state=None,
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
        self.dtype = dtype
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Fit the feature map and the linear SVM on its features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : ApproxKernelSVC
        """
        return fit_svm_estimator(self, X, y, sample_weight, features=self._fit_features)

    def __sklearn_tags__(self):
        return self._more_tags_sparse(super().__sklearn_tags__())
