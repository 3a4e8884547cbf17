"""The exact kernel SVM (SMO), the reference every approximation is measured against."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import validate_data

from ..._constraints import N_JOBS, Interval, Options, validate_params
from ..._planner import threads_in_budget
from ..._progress import convergence_bar
from ..._validation import (
    check_finite_fit,
    check_sample_weight,
    effective_n_jobs,
    refuse_chunked,
    resolve_memory_budget,
)
from ...solvers import (
    CLASS_WEIGHTS,
    dual_coefficients,
    ovo_classes,
    ovo_problems,
    ovo_votes,
    ovr_problems,
    solve_rows_path,
    solve_svm_path,
    training_kernel_matrix,
    workspace_bytes,
)
from ...sources import is_dask_array
from .._multiclass import encode_labels
from .._probability import ProbabilityMixin
from .._shells import ClassifierShell, fitted_scores
from ._exact_base import EXACT_CONSTRAINTS, ExactKernelMixin

__all__ = ["KernelSVC"]


class KernelSVC(ProbabilityMixin, ExactKernelMixin, ClassifierShell, ClassifierMixin,
                BaseEstimator):
    """Exact kernel support vector classifier, solved in the dual by SMO.

    LIBSVM's dual and stopping rule (``tol``), so the model is
    :class:`sklearn.svm.SVC`'s. When the float32 training kernel matrix and a
    solving thread's copy of its problem's block fit ``memory_budget``, the
    matrix is computed once (one GEMM) and SMO runs on it whole;
    otherwise on working sets of ``working_set_size`` variables whose rows come
    from an LRU cache of ``cache_size`` MB, computed together by one product
    (second-order pair selection, Fan, Chen & Lin 2005; shrinking). Several
    classes are trained one-vs-one by default, as LIBSVM does (0.5 points more
    accurate than one-vs-rest on MNIST), predicting by vote; ``multiclass="ovr"``
    trains one problem per class. ``decision_function_shape`` only shapes the
    scores, as in :class:`sklearn.svm.SVC`.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the hinge loss (> 0); scaled per sample by ``sample_weight``
        and ``class_weight``.
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
        Constant of the polynomial kernel (scikit-learn's SVC default).
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
    class_weight : dict, "balanced", "balanced_binary" or None, default=None
        Multiplies C per class. "balanced" weighs class c by
        ``n_samples / (n_classes * n_c)``, as in scikit-learn; "balanced_binary"
        equalises the two sides of every binary problem instead (one-vs-rest or
        one-vs-one), which also puts one-vs-rest scores on a comparable scale.
    max_iter : int, default=-1
        Cap on SMO pair updates per binary problem; -1 means LIBSVM's
        ``max(10^7, 100 n)``. Reaching it gives a ConvergenceWarning.
    multiclass : {"ovo", "ovr"}, default="ovo"
        How several classes are trained: one binary problem per pair of classes
        (prediction by vote, ties broken by summed confidence), or one per class
        against the rest (prediction by the largest score).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        Shape of ``decision_function`` for several classes: one score per class
        (for one-vs-one training, the votes plus a confidence below 1/3 that
        breaks ties, as scikit-learn's SVC computes it) or, for one-vs-one
        training only, the raw score of every pair of classes.
    break_ties : bool, default=False
        One-vs-one ``predict`` with several classes: False gives a tied vote to
        the class listed first (LIBSVM's and scikit-learn's SVC's rule, so the
        predictions are theirs); True to the larger summed confidence, so that
        ``predict`` is the arg-max of ``decision_function`` (scikit-learn's
        ``break_ties=True``).
    probability : bool, default=False
        Fit ``predict_proba``: LIBSVM's Platt scaling on the decision values of
        a 5-fold internal cross-validation (5 more fits on 4/5 of the rows;
        every class needs 5 rows), one-vs-one pairs coupled as LIBSVM does.
        ``predict`` is not changed (see :meth:`predict_proba`).
    shrinking : bool, default=True
        Drop variables stuck at a bound from the active set (LIBSVM's rule).
    working_set_size : int, default=1024
        Variables per working set; capped by what the cache holds.
    solver : {"smo", "subgradient"}, default="smo"
        "subgradient" runs seed 003's heavy-ball subgradient method on the
        representer coefficients (the intercept is then regularized) for
        comparison only; it needs ``max_iter`` passes over the kernel matrix.
    memory_budget : int, default=None
        Bytes the fit may hold: the kernel matrix (when it fits, with the
        solving threads' block copies) or the row cache with the prepared rows,
        the working set's blocks and the kernel's temporaries; and at
        prediction the kernel blocks. A budget too small for two kernel rows
        is an error naming the budget that would do. None uses
        :func:`kernelscale.get_config`.
    n_jobs : int, default=None
        Threads solving binary problems side by side (one-vs-one pairs, or the
        classes of one-vs-rest) when the kernel matrix is held whole; None means
        1, -1 every core. The problems share the one matrix; each thread also
        holds a copy of the block it solves, and fewer threads run (with a
        warning naming the budget that would run them all) where
        ``memory_budget`` cannot hold every thread's copy beside the matrix.
    verbose : int, default=0
        1: a progress bar over the binary problems (with the current gap); k >= 2:
        print solver progress every k outer iterations.
    random_state : int, RandomState instance or None, default=None
        Shuffles the internal folds of ``probability=True``; both solvers are
        deterministic.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training data (of any problem).
    support_vectors_ : {ndarray, sparse matrix} of shape (n_SV, n_features)
        Empty for ``kernel="precomputed"``.
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        ``y_i alpha_i`` of each support vector in each binary problem (zero
        where it is not a support vector of that problem).
    intercept_ : ndarray of shape (n_problems,)
    n_support_ : ndarray of shape (n_classes,)
        Support vectors per class.
    n_iter_ : ndarray of shape (n_problems,)
        SMO pair updates (or subgradient passes) per problem.
    objective_ : ndarray of shape (n_problems,)
        Dual objective ``1/2 a^T Q a - e^T a`` reached per problem (SMO).
    probA_, probB_ : ndarray of shape (n_problems,)
        The sigmoid ``1 / (1 + exp(A f + B))`` of each binary problem
        (``probability=True``).
    fit_time_ : float
        Seconds spent in the solver.
    memory_plan_ : kernelscale.MemoryPlan
        What the fit held, in bytes, and the route it chose (``choice``:
        "matrix" or the row cache's size).
    n_features_in_ : int

    See Also
    --------
    sklearn.svm.SVC : LIBSVM's implementation of the same model.
    ApproxKernelSVC : The approximate model, linear in n.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelscale import KernelSVC
    >>> X, y = make_moons(n_samples=300, noise=0.1, random_state=0)
    >>> clf = KernelSVC(C=10.0, gamma=2.0).fit(X, y)
    >>> clf.score(X, y) > 0.97
    True
    """

    _parameter_constraints = {
        **EXACT_CONSTRAINTS,
        "C": [Interval("real", 0, None, closed="neither", inf=True)],
        "class_weight": [None, "dict", Options(*CLASS_WEIGHTS)],
        "multiclass": [Options("ovo", "ovr")],
        "decision_function_shape": [Options("ovr", "ovo")],
        "break_ties": ["boolean"],
        "probability": ["boolean"],
        "solver": [Options("smo", "subgradient")],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
    }

    def __init__(
        self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, kernel_params=None,
        tol=1e-3, cache_size=256, class_weight=None, max_iter=-1, multiclass="ovo",
        decision_function_shape="ovr", break_ties=False, probability=False, shrinking=True,
        working_set_size=1024, solver="smo", memory_budget=None, n_jobs=None, verbose=0,
        random_state=None,
    ):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.multiclass = multiclass
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.probability = probability
        self.shrinking = shrinking
        self.working_set_size = working_set_size
        self.solver = solver
        self.memory_budget = memory_budget
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------------ fit

    def _validate_params(self):
        validate_params(self)
        if self.C == np.inf and self.solver != "smo":
            raise ValueError("C=inf (a hard margin) needs solver='smo'.")
        if self.multiclass == "ovr" and self.decision_function_shape == "ovo":
            raise ValueError("decision_function_shape='ovo' needs one-vs-one training "
                             "(multiclass='ovo'); one-vs-rest gives one score per class.")
        return float(self.C), float(self.tol), int(self.max_iter)

    def fit(self, X, y=None, sample_weight=None, *, kernel_matrix=None):
        """Fit the SVM.

        With more than one binary problem (more than two classes), when the
        memory plan (``memory_plan_``) holds the float32 ``n x n`` kernel
        beside one solving thread's copy of a problem's block, it is computed
        once by GEMM and every binary problem is solved on it by SMO on the
        whole matrix (one-vs-one pairs cut their rows out of it); otherwise,
        and for two classes (whose one problem reads fewer rows than the
        matrix has), kernel rows are computed as the solver needs them,
        through a cache of at most ``cache_size`` MB (less where the budget
        holds less). A ``kernel_matrix`` given is always used.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, or the (n_samples, n_samples) Gram matrix for
            ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels of any type (required; None only so that chunked data,
            which carry their labels, get the message that they must be in memory).
        sample_weight : array-like of shape (n_samples,), default=None
            Multiplies C per sample.
        kernel_matrix : ndarray of shape (n_samples, n_samples) or callable, default=None
            ``k(X, X)`` with this estimator's resolved kernel, when it is at hand
            already (a grid search computes it once per gamma): it is used
            instead of being computed. float32 (other dtypes are cast). A callable
            ``kernel_matrix(memory_budget)`` computes it, called only where the
            fit's own plan chooses the matrix (a search's refit: the kernel through
            the distances its grid used).

        Returns
        -------
        self : KernelSVC
        """
        refuse_chunked(self, X)
        C, tol, max_iter = self._validate_params()
        X, y = validate_data(
            self, X, y, accept_sparse=False if self._precomputed else "csr",
            dtype=(np.float64, np.float32),
        )
        self._check_training_matrix(X)
        self.classes_, y_index = encode_labels(y)
        n_classes = len(self.classes_)
        if self.probability:
            self._check_probability_data(y_index)
        budget = resolve_memory_budget(self.memory_budget)
        sw = check_sample_weight(sample_weight, X.shape[0])
        self.kernel_ = self._make_kernel(X)
        if not self._precomputed:
            self.kernel_.check_range(X, np.float32)  # kernel rows are float32
        start = time.perf_counter()
        if self.multiclass == "ovo" and n_classes > 2:
            problems = list(ovo_problems(self.class_weight, self.classes_, y_index, sw))
        else:
            problems = list(ovr_problems(self.class_weight, self.classes_, y_index, sw))
        n = X.shape[0]
        # one matrix for several problems (measured: 26 classes x 16k rows 3.6 s against
        # 6.2 s through row caches; MNIST-10k 1.5 s against 2.9 s); a single binary
        # problem reads fewer rows than the n^2 it would compute (14k x 10: 0.68 s
        # through the cache against 1.05 s; a9a's first 16k rows 1.95 s against 2.25 s)
        # beside the matrix, each solving thread copies its problem's block and compacts
        # it; the matrix route needs room for one thread's copies at least
        each = workspace_bytes([problems], n)
        # one plan decides (the memory planner): the matrix for several problems when it
        # fits with one solving thread's block copy; a given matrix always
        lazy = callable(kernel_matrix)
        given = self.solver == "smo" and (self._precomputed or
                                          (kernel_matrix is not None and not lazy))
        plan = self._fit_plan(X, n, budget, given=given, workspace=each,
                              matrix=self.solver == "smo" and len(problems) > 1)
        self.memory_plan_ = plan
        if plan.choice == "matrix":
            threads = threads_in_budget(min(effective_n_jobs(self.n_jobs), len(problems)),
                                        plan.total - each, each, budget,
                                        f"the {n}-row kernel matrix")
            if lazy:
                kernel_matrix = kernel_matrix(plan.fill_bytes)
            problems, results = self._solve_on_matrix(X, y_index, sw, C, tol, max_iter,
                                                      plan.fill_bytes, kernel_matrix, threads)
            self.fit_time_ = time.perf_counter() - start
            return self._finish(X, y, y_index, sw, problems, results)
        # the bar counts each problem's way from its first gap to tol
        # (an outer iteration of this SMO is a working set of many pair updates)
        bar = convergence_bar("KernelSVC", verbose=self.verbose, tol=tol, every=1,
                              parts=len(problems))

        def before(index, y_pm):
            if self.verbose >= 2:
                print(f"[KernelSVC] problem {index + 1}: {y_pm.size} samples")
        with bar as monitor:
            results = solve_rows_path(
                X, self.kernel_, [problems], [C], plan, tol=tol, max_iter=max_iter,
                shrinking=self.shrinking,
                verbose=self.verbose if self.verbose >= 2 else 0, monitor=monitor,
                solver=self.solver, densify=plan.densify, precomputed=self._precomputed,
                before=before, after=lambda index: bar.next_part())[0][0]
        self.fit_time_ = time.perf_counter() - start
        return self._finish(X, y, y_index, sw, problems, results)

    def _finish(self, X, y, y_index, sw, problems, results):
        self._store(X, problems, results, y_index)
        check_finite_fit(self, "dual_coef_", "intercept_")  # scikit-learn's SVC raises too
        if self.probability:
            self._fit_probability(X, y, y_index, sw)
        return self

    def _solve_on_matrix(self, X, y_index, sw, C, tol, max_iter, budget, kernel_matrix,
                         n_jobs):
        """The binary problems solved on the whole training kernel matrix."""
        K = training_kernel_matrix(self.kernel_, X, "precomputed" if self._precomputed
                                   else kernel_matrix, budget)
        multiclass = self.multiclass if len(self.classes_) > 2 else "ovr"
        problems, results = solve_svm_path(
            K, y_index, self.classes_, sw, Cs=[C], class_weight=self.class_weight,
            multiclass=multiclass, tol=tol, max_iter=max_iter,
            n_jobs=n_jobs, verbose=self.verbose)
        for index, ((_, y_pm, _), res) in enumerate(zip(problems, results[0][0])):
            self.verbose >= 2 and print(
                f"[SMO] problem {index + 1} on the {K.shape[0]}-row kernel matrix: {y_pm.size} "
                f"samples, {res['n_iter']} pair updates, gap {res['gap']:.2e}", flush=True)
        return problems, results[0][0]

    def _store(self, X, problems, results, y_index):
        self._keep_support(X, dual_coefficients(problems, results, X.shape[0]))
        self.intercept_ = np.array([r["intercept"] for r in results])
        self.n_iter_ = np.array([r["n_iter"] for r in results])
        self.objective_ = np.array([r["objective"] for r in results])
        self.n_support_ = np.bincount(y_index[self.support_], minlength=len(self.classes_))

    # -------------------------------------------------------------- predict

    @property
    def _votes(self):
        return self.multiclass == "ovo" and len(getattr(self, "classes_", ())) > 2

    def decision_function(self, X):
        """Confidence scores (see ``decision_function_shape``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            For ``kernel="precomputed"``: ``K(X, training data)``.

        Returns
        -------
        scores : ndarray of shape (n_samples,), (n_samples, n_classes) or \
(n_samples, n_classes * (n_classes - 1) / 2)
            For two classes, positive scores favour ``classes_[1]``. One-vs-one
            pairs are ordered (0, 1), (0, 2), ..., (1, 2), ...; a positive score
            favours the first class of the pair.
        """
        scores = super().decision_function(X)
        if is_dask_array(X) or not self._votes or self.decision_function_shape == "ovo":
            return scores
        return ovo_votes(scores, len(self.classes_))

    def predict(self, X):
        """Predict class labels (the type of the training labels).

        One-vs-one models vote over the pairs (a tie as ``break_ties`` says);
        one-vs-rest models take the largest score.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            For ``kernel="precomputed"``: ``K(X, training data)``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        if is_dask_array(X) or not self._votes:
            return super().predict(X)
        return self.classes_[ovo_classes(fitted_scores(self, X), len(self.classes_),
                                         self.break_ties)]
