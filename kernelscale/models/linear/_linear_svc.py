"""Linear SVM: the one-vs-rest driver over the solvers, and the ``LinearSVC`` estimator."""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from ..._constraints import N_JOBS, VERBOSE, Interval, Options, validate_params
from ..._progress import progress
from ..._validation import (
    check_finite_fit,
    check_sample_weight,
    check_X_y,
    effective_n_jobs,
    random_seed,
    resolve_memory_budget,
)
from ...solvers import (
    CLASS_WEIGHTS,
    base_weights,
    dual_cd,
    ovr_targets,
    squared_hinge_lbfgs,
    squared_hinge_newton,
    subgradient_descent,
    weighted_gram,
)
from .._chunked_fits import chunked_source, fit_svm_chunked
from .._multiclass import encode_labels, linear_scores
from .._shells import ClassifierShell

__all__ = ["LinearSVC", "fit_linear_svm", "fit_svm_estimator", "check_svm_params",
           "SVM_CONSTRAINTS"]

LOSSES = ("hinge", "squared_hinge")
SOLVERS = ("auto", "newton", "lbfgs", "dual_cd", "subgradient")
# Newton factors a (d+1)^2 Hessian: cheap up to a few thousand features, then
# L-BFGS (one pass over the data per iteration, no Hessian) takes over.
_NEWTON_MAX_FEATURES = 4096
# Below this many rows per feature dual CD (duality-gap stop, prefetching) beats
# Newton's O(n d^2) Hessian at an equal or lower objective. Measured on one
# machine: MNIST-10k on 2,000 Nystroem features (n / d = 4), 10 classes: 4.0 s
# vs 15.1 s; MNIST pixels (n / d = 10): 1.9 s vs 4.0 s; a9a on 2,000 Nystroem
# features (n / d = 16): 3.1 s vs 3.3 s; 75,000 rows on 2,000 / 1,000 features
# (n / d = 37 / 75): 5.8 s vs 5.8 s / 3.8 s vs 2.2 s.
_DUAL_CD_ROWS_PER_FEATURE = 20


#: The parameters every linear-SVM estimator shares (LinearSVC, ApproxKernelSVC).
SVM_CONSTRAINTS = {
    # finite, as scikit-learn's LinearSVC: the primal solvers need a finite objective
    # (KernelSVC(kernel="linear", C=np.inf) is the hard-margin SVM)
    "C": [Interval("real", 0, None, closed="neither")],
    "loss": [Options(*LOSSES)],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [Interval("real", 0, None, closed="neither")],
    "class_weight": [None, "dict", Options(*CLASS_WEIGHTS)],
    "tol": [Interval("real", 0, None, closed="neither")],
    "max_iter": [Interval("int", 1)],
    "solver": [Options(*SOLVERS)],
    "n_jobs": N_JOBS,
    "memory_budget": ["memory"],
    "verbose": VERBOSE,
    "random_state": ["random_state"],
}


def resolve_solver(solver, loss, Z):
    """The concrete solver for ``solver="auto"`` and a check of the combination."""
    if solver == "auto":
        if loss == "hinge" or Z.shape[0] < _DUAL_CD_ROWS_PER_FEATURE * Z.shape[1]:
            return "dual_cd"
        if Z.shape[1] > _NEWTON_MAX_FEATURES:
            return "dual_cd" if sp.issparse(Z) else "lbfgs"
        return "newton"
    if solver in ("newton", "lbfgs") and loss == "hinge":
        raise ValueError(
            f"solver={solver!r} needs a differentiable loss: use loss='squared_hinge', "
            "or solver='dual_cd' for the hinge loss."
        )
    return solver


def _solve_one(Z, y_pm, C_i, *, solver, loss, bias, tol, max_iter, budget, seed,
               hessian_all=None, callback=None, w0=None):
    if solver == "dual_cd":
        w, _, n_iter, converged = dual_cd(Z, y_pm, C_i, loss=loss, bias=bias, tol=tol,
                                          max_iter=max_iter, seed=seed)
    elif solver == "newton":
        w, n_iter, converged = squared_hinge_newton(
            Z, y_pm, C_i, bias=bias, tol=tol, max_iter=max_iter, memory_budget=budget,
            hessian_all=hessian_all, callback=callback, w0=w0)
    elif solver == "lbfgs":
        w, n_iter, converged = squared_hinge_lbfgs(
            Z, y_pm, C_i, bias=bias, tol=tol, max_iter=max_iter, memory_budget=budget,
            callback=callback, w0=w0)
    else:
        w, n_iter, converged = subgradient_descent(
            Z, y_pm, C_i, loss=loss, bias=bias, tol=tol, max_iter=max_iter,
            memory_budget=budget, callback=callback)
    return w, n_iter, converged


def _shared_hessians(Z, problems, weights, bias, budget):
    """All-active Newton Hessians of every OvR problem from one shared Gram matrix.

    Problem c weights row i by ``weights_i * f(i)`` with one factor for its
    positives and one for its negatives, so its Hessian at ``w = 0`` is
    ``I + 2 (f_neg G + (f_pos - f_neg) G_c)`` with ``G`` the weighted Gram of all
    rows and ``G_c`` that of class c's rows: one ``n d^2`` pass serves every class.
    """
    G = weighted_gram(Z, None, weights, bias, budget)
    for y_pm, f_pos, f_neg in problems:
        H = 2.0 * f_neg * G
        if f_pos != f_neg:
            pos = np.flatnonzero(y_pm > 0)
            H = weighted_gram(Z, pos, 2.0 * (f_pos - f_neg) * weights, bias, budget, out=H)
        H[np.diag_indices_from(H)] += 1.0
        yield H


def fit_linear_svm(
    Z, y_index, n_classes, weights, balanced, *, C, loss, solver, bias, tol, max_iter,
    n_jobs, memory_budget, seed, verbose=0, name="LinearSVC", warm_start=None,
):
    """Fit one binary SVM per one-vs-rest problem on features ``Z``.

    ``warm_start``: ``(coef, intercept)`` of an earlier fit on the same
    features and problems (a smaller ``C`` of a search path), the Newton and
    L-BFGS solvers' starting point; dual coordinate descent starts from 0.

    Returns
    -------
    coef : ndarray of shape (n_problems, n_features)
    intercept : ndarray of shape (n_problems,)
    n_iter : ndarray of shape (n_problems,)
    """
    solver = resolve_solver(solver, loss, Z)
    problems = list(ovr_targets(y_index, n_classes, weights, balanced))

    def penalties(y_pm, f_pos, f_neg):
        return C * weights * np.where(y_pm > 0, f_pos, f_neg)

    common = dict(solver=solver, loss=loss, bias=bias, tol=tol, max_iter=max_iter,
                  budget=memory_budget, seed=seed)
    start = time.perf_counter()

    def report(k):
        def callback(iteration, state):
            if verbose > 1:
                print(f"[{name}] problem {k}: iteration {iteration} {state}", flush=True)
        return callback

    bar = progress(len(problems), f"{name} ({solver})", verbose=verbose, unit="problem")

    def counted(result):
        bar.update()
        return result

    with bar:
        if warm_start is not None and solver in ("newton", "lbfgs"):
            coef, intercept = warm_start
            starts = np.column_stack([coef, intercept / bias if bias else 0.0 * intercept])
            results = [counted(_solve_one(Z, p[0], penalties(*p), w0=w0, **common))
                       for p, w0 in zip(problems, starts)]
        elif solver == "newton" and len(problems) > 1:
            hessians = _shared_hessians(Z, problems, weights * C, bias, memory_budget)
            results = [counted(_solve_one(Z, p[0], penalties(*p), hessian_all=H,
                                          callback=report(k), **common))
                       for k, (p, H) in enumerate(zip(problems, hessians))]
        elif solver == "dual_cd" and len(problems) > 1 and effective_n_jobs(n_jobs) > 1:
            jobs = min(len(problems), effective_n_jobs(n_jobs))
            results = Parallel(n_jobs=jobs, prefer="threads")(
                delayed(_solve_one)(Z, p[0], penalties(*p), **common) for p in problems)
        else:
            results = [counted(_solve_one(Z, p[0], penalties(*p), callback=report(k), **common))
                       for k, p in enumerate(problems)]
    W = np.array([w for w, _, _ in results])
    n_iter = np.array([it for _, it, _ in results])
    if verbose >= 2:
        print(f"[{name}] {len(problems)} problem(s) solved by {solver} in "
              f"{time.perf_counter() - start:.2f}s, iterations {n_iter.tolist()}", flush=True)
    if not all(converged for _, _, converged in results):
        warnings.warn(f"{name} did not converge within max_iter={max_iter} (solver={solver!r}, "
                      f"loss={loss!r}); {_advice(solver, loss)}", ConvergenceWarning,
                      stacklevel=3)
    d = Z.shape[1]
    return W[:, :d], bias * W[:, d], n_iter


def _advice(solver, loss):
    """What to do about a solver that stopped early: only advice true for these parameters."""
    if solver == "subgradient":
        return "the subgradient solver is offered for comparison only; use solver='auto'."
    if solver == "dual_cd" and loss == "hinge":
        return ("increase max_iter or tol, or use loss='squared_hinge', whose Newton solver "
                "converges in a few iterations.")
    if solver == "dual_cd":
        return "increase max_iter or tol, or use solver='newton' (exact, a few iterations)."
    return "increase max_iter or tol."


def fit_svm_estimator(est, X, y, sample_weight, features):
    """The body of ``fit`` of the SVM estimators: validate, map (``features``), solve.

    ``features(X)`` fits the estimator's feature map and returns the mapped rows;
    None trains on ``X`` itself. Sets ``classes_``, ``coef_``, ``intercept_`` and
    ``n_iter_`` on ``est`` and returns it.
    """
    source = chunked_source(est, X, y, sample_weight)
    if source is not None:
        return fit_svm_chunked(est, source, check_svm_params(est), mapped=features is not None)
    X, y = check_X_y(est, X, y)
    params = check_svm_params(est)
    est.classes_, y_index = encode_labels(y)
    weights, balanced = base_weights(
        est.class_weight, est.classes_, y_index, check_sample_weight(sample_weight, len(y))
    )
    Z = X if features is None else features(X)
    est.coef_, est.intercept_, n_iter = fit_linear_svm(
        Z, y_index, len(est.classes_), weights, balanced, C=params["C"],
        loss=params["loss"], solver=params["solver"], bias=params["bias"],
        tol=params["tol"], max_iter=params["max_iter"], n_jobs=est.n_jobs,
        memory_budget=resolve_memory_budget(est.memory_budget),
        seed=random_seed(est.random_state), verbose=est.verbose, name=type(est).__name__,
    )
    est.n_iter_ = int(n_iter.max())
    check_finite_fit(est, "coef_", "intercept_")
    return est


def check_svm_params(est):
    """Validate the estimator's parameters (its constraint table); return the solver's."""
    validate_params(est)
    return {"C": float(est.C), "loss": est.loss, "solver": est.solver, "tol": float(est.tol),
            "max_iter": int(est.max_iter),
            "bias": float(est.intercept_scaling) if est.fit_intercept else 0.0}


class LinearSVC(ClassifierShell, ClassifierMixin, BaseEstimator):
    """Linear support vector classifier (Newton, dual coordinate descent, L-BFGS).

    Minimises ``1/2 ||w||^2 + sum_i C_i loss(y_i (w . x_i + b))`` with
    ``C_i = C * class_weight * sample_weight``. As in LIBLINEAR (and scikit-learn's
    ``LinearSVC``) the intercept is the weight of a constant feature
    ``intercept_scaling`` and is regularized with the other weights, so objectives
    are directly comparable with scikit-learn's. More than two classes are
    handled one-vs-rest.

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularization strength (> 0).
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
    fit_intercept : bool, default=True
    intercept_scaling : float, default=1.0
        Value of the constant feature carrying the intercept.
    class_weight : dict, "balanced", "balanced_binary" or None, default=None
        Multiplies C per class. "balanced" weighs class c by
        ``n_samples / (n_classes * n_c)``, as in scikit-learn; "balanced_binary"
        equalises the two sides of every binary problem instead (one-vs-rest or
        one-vs-one), which also puts one-vs-rest scores on a comparable scale.
    tol : float, default=1e-4
        Stopping tolerance: relative gradient norm (Newton, L-BFGS), spread of
        projected gradients or relative duality gap, whichever is first (dual
        CD; the gap certifies an objective within ``tol`` of the minimum),
        relative objective stall (subgradient).
    max_iter : int, default=1000
        Iterations of the solver (passes over the data for dual CD / subgradient).
    solver : {"auto", "newton", "lbfgs", "dual_cd", "subgradient"}, default="auto"
        ``"newton"``: primal Newton with the generalized Hessian and exact line
        search (Keerthi & DeCoste 2005, Chapelle 2007), squared hinge only.
        ``"lbfgs"``: primal L-BFGS, squared hinge only, for wide data.
        ``"dual_cd"``: dual coordinate descent with shrinking (Hsieh et al. 2008),
        both losses. ``"subgradient"``: heavy-ball subgradient (seed 003),
        for comparison only. ``"auto"``: dual CD for the hinge loss and whenever
        there are fewer than 20 rows per feature; otherwise Newton for the
        squared hinge with up to 4096 features, L-BFGS (dense) or dual CD
        (sparse) above.
    n_jobs : int, default=None
        Threads for one-vs-rest problems solved by dual CD: None means 1 (as in
        scikit-learn), -1 every core. Newton and L-BFGS use multi-threaded BLAS
        whatever ``n_jobs`` is.
    memory_budget : int, default=None
        Bytes for row-block temporaries; None uses :func:`kernelscale.get_config`.
    verbose : int, default=0
        1: a progress bar over the one-vs-rest problems; 2: a summary per fit and
        every solver iteration.
    random_state : int, RandomState instance or None, default=None
        Seeds the coordinate order of dual CD.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_ : int
        Largest iteration count over the binary problems.
    n_features_in_ : int

    References
    ----------
    .. [1] C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan,
       "A Dual Coordinate Descent Method for Large-scale Linear SVM", ICML 2008.
    .. [2] S. S. Keerthi and D. DeCoste, "A Modified Finite Newton Method for Fast
       Solution of Large Scale Linear SVMs", JMLR 2005.
    .. [3] O. Chapelle, "Training a Support Vector Machine in the Primal", Neural
       Computation 2007.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from kernelscale import LinearSVC
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> clf = LinearSVC(C=1.0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    """

    _parameter_constraints = SVM_CONSTRAINTS

    def __init__(
        self, *, C=1.0, loss="squared_hinge", fit_intercept=True, intercept_scaling=1.0,
        class_weight=None, tol=1e-4, max_iter=1000, solver="auto", n_jobs=None,
        memory_budget=None, verbose=0, random_state=None,
    ):
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None):
        """Fit the linear SVM.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, ChunkedDataset} of shape (n_samples, n_features)
            float32 input stays float32.
            A dask array (chunked by rows) is fitted on the active dask client;
            a :class:`kernelscale.datasets.ChunkedDataset` is streamed chunk by
            chunk under ``memory_budget`` (its chunks carry the labels).
        y : array-like or dask array of shape (n_samples,), default=None
            Required unless ``X`` is a ChunkedDataset.
            Labels of any type.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : LinearSVC
        """
        return fit_svm_estimator(self, X, y, sample_weight, features=None)

    def _raw_scores(self, X, budget):
        return linear_scores(X, self.coef_, self.intercept_, budget)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
