"""``KernelWidths``: per-feature RBF widths learned from the data (automatic relevance).

An isotropic kernel weighs every feature alike: on ``make_nonlinear_problem`` 22
noise columns dilute the 6 that matter, and FALKON loses 8 points of accuracy to
them. Gradient boosting ignores such columns by construction; a kernel machine
can too, once each feature has its own width ``gamma_d`` in
``exp(-sum_d gamma_d (x_d - z_d)^2)``. This module learns the widths (and a ridge
penalty) by L-BFGS on the hold-out loss of Nystrom kernel ridge, with its
analytic gradient (:func:`kernelscale.solvers.holdout_loss`), on a subsample,
with early stopping on a third part of it, within a time and a memory budget.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.optimize
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from ..._clock import TimeUp, now
from ..._config import format_bytes, parse_duration
from ..._constraints import VERBOSE, Interval, Options, validate_params
from ..._planner import bytes_up, widths_plan
from ..._validation import check_X, check_X_y, dense_rows, resolve_memory_budget
from ...solvers import WIDTH_KERNELS, holdout_loss

__all__ = ["KernelWidths", "WidthsTimeError", "learn_widths", "ridge_targets", "split_rows",
           "is_classification", "learning_rows"]

# bounds of the search, relative to the starting point (log scale): widths may
# shrink to 1e-8 of it (a feature ignored) or grow 1e4-fold
_SHRINK, _GROW = np.log(1e-8), np.log(1e4)
_MIN_ROWS = 10


class WidthsTimeError(ValueError):
    """The time budget ended before the widths' first step."""

    def __init__(self, message, seconds):
        super().__init__(message)
        self.seconds = seconds


class KernelWidths(TransformerMixin, BaseEstimator):
    """Per-feature RBF kernel widths learned by the gradient of a hold-out loss.

    Fits Nystrom kernel ridge (the least-squares surrogate for classification:
    +1 / -1 targets per class) on a subsample and optimises the log of every
    feature's width and of the penalty by L-BFGS on the squared loss of
    validation rows, with the loss's analytic gradient; a third part of the
    subsample stops the optimisation when its loss no longer improves. Widths of
    features that do not help prediction shrink towards 0.

    ``transform`` rescales the columns by ``sqrt(gamma_)`` (the Laplacian's:
    ``gamma_``), so that an isotropic model of the same kernel with ``gamma=1``
    downstream uses the learned kernel; or pass ``gamma=widths.gamma_`` to any
    kernelscale estimator or map with that kernel.

    Parameters
    ----------
    n_components : int, default=500
        Nystrom centres of the surrogate model.
    kernel : {"rbf", "laplacian"}, default="rbf"
        The kernel the widths are learned for: ``exp(-sum_d gamma_d (x_d - z_d)^2)``
        or ``exp(-sum_d gamma_d |x_d - z_d|)``.
    max_samples : int, default=20000
        Rows the widths are learned on (a stratified subsample of more).
    validation_fraction : float, default=0.25
        Share of the subsample whose loss is optimised; another tenth stops it.
    task : {"auto", "classification", "regression"}, default="auto"
        "auto": a classification for integer, string or boolean targets with
        fewer than 50 distinct values, a regression otherwise.
    max_iter : int, default=100
        L-BFGS iterations at most.
    patience : int, default=8
        Stop after this many iterations without a better loss on the stopping rows.
    tol : float, default=1e-4
        A relative improvement of the stopping loss smaller than this is none.
    time_budget : float or str, default=None
        Seconds (or "90s", "2m") for the optimisation; the best widths so far are
        kept when it ends.
    memory_budget : int or str, default=None
        Bytes for the kernel blocks (a subsample too large for it is reduced,
        with a warning naming the budget that would hold it).
    random_state : int, RandomState instance or None, default=None
        The subsample, its split and the centres.
    verbose : int, default=0
        1: one line per iteration.

    Attributes
    ----------
    gamma_ : ndarray of shape (n_features_in,)
        The learned widths (``gamma`` of a kernelscale model).
    feature_relevance_ : ndarray of shape (n_features_in,)
        ``gamma_d Var(x_d)`` (the Laplacian's: ``gamma_d Std(x_d)``), normalised to
        sum to 1: each feature's share of the kernel's expected (squared) distance
        (scale-free; ~0 for an ignored feature).
    penalty_ : float
        The learned ridge penalty relative to the rows (``alpha = penalty_ * n``
        for :class:`kernelscale.NystromKernelRidge` on n rows).
    loss_ : float
        The stopping rows' loss at the kept widths.
    initial_loss_ : float
        Their loss at the starting point (``gamma="scale"`` per feature).
    n_iter_ : int
    history_ : list of dict
        Per iteration: ``loss`` (validation), ``stop_loss``, ``seconds``.
    n_features_in_ : int

    References
    ----------
    .. [1] G. Meanti, L. Carratino, E. De Vito, L. Rosasco, "Efficient
       Hyperparameter Tuning for Large Scale Kernel Ridge Regression", AISTATS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.models import KernelWidths
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 4))
    >>> y = np.sin(2 * X[:, 0])  # only the first feature matters
    >>> widths = KernelWidths(n_components=100, random_state=0).fit(X, y)
    >>> int(np.argmax(widths.feature_relevance_))
    0
    """

    _parameter_constraints = {
        "n_components": [Interval("int", 1)],
        "kernel": [Options("rbf", "laplacian")],
        "max_samples": [Interval("int", 20)],
        "validation_fraction": [Interval("real", 0, 1, closed="neither")],
        "task": [Options("auto", "classification", "regression")],
        "max_iter": [Interval("int", 1)],
        "patience": [Interval("int", 1)],
        "tol": [Interval("real", 0)],
        "time_budget": [None, Interval("real", 0, None, closed="neither"), str],
        "memory_budget": ["memory"],
        "random_state": ["random_state"],
        "verbose": VERBOSE,
    }

    def __init__(self, *, n_components=500, kernel="rbf", max_samples=20000,
                 validation_fraction=0.25, task="auto", max_iter=100, patience=8, tol=1e-4,
                 time_budget=None, memory_budget=None, random_state=None, verbose=0):
        self.n_components = n_components
        self.kernel = kernel
        self.max_samples = max_samples
        self.validation_fraction = validation_fraction
        self.task = task
        self.max_iter = max_iter
        self.patience = patience
        self.tol = tol
        self.time_budget = time_budget
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y):
        """Learn the widths on (a subsample of) ``X``, ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : KernelWidths
        """
        validate_params(self)
        seconds = None if self.time_budget is None else parse_duration(self.time_budget)
        X, y = check_X_y(self, X, y)
        n, d = X.shape
        if n < _MIN_ROWS:
            raise ValueError(f"KernelWidths needs at least {_MIN_ROWS} rows (it splits them into "
                             f"training, validation and stopping parts); got n_samples={n}.")
        classification = is_classification(self.task, y)
        rng = check_random_state(self.random_state)
        n_targets = 1 if not classification or np.unique(y).size == 2 else np.unique(y).size
        rows = self._subsample(n, d, n_targets, y if classification else None, rng)
        Xs = dense_rows(X[rows], 0, rows.size, np.float64)
        Y = ridge_targets(y[rows], classification)
        parts = split_rows(rows.size, self.validation_fraction, rng,
                       y[rows] if classification else None)
        m = int(min(self.n_components, parts[0].size))
        centres = Xs[rng.choice(parts[0], m, replace=False)]
        variance = np.maximum(Xs.var(axis=0), 1e-12 * max(float(Xs.var()), 1e-300))
        # each column's typical distance (squared for RBF) is 1 / d of the exponent's
        spread = variance if self.kernel == "rbf" else np.sqrt(variance)
        start = np.log(1.0 / (d * spread))
        n_t = parts[0].size
        theta0 = np.r_[start, np.log(1e-4 * n_t)]
        bounds = [(s + _SHRINK, s + _GROW) for s in start] + \
            [(np.log(1e-9 * n_t), np.log(10.0 * n_t))]
        self._optimise(theta0, bounds, Xs, Y, parts, centres, seconds)
        self.feature_relevance_ = self.gamma_ * spread
        self.feature_relevance_ = self.feature_relevance_ / self.feature_relevance_.sum()
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _subsample(self, n, d, n_targets, labels, rng):
        budget = resolve_memory_budget(self.memory_budget)
        size = min(n, self.max_samples)
        plan = widths_plan(n=size, m=self.n_components, d=d, n_targets=n_targets,
                           budget=budget)
        if plan.rows < _MIN_ROWS:
            least = widths_plan(n=_MIN_ROWS, m=self.n_components, d=d, n_targets=n_targets,
                                budget=budget)
            least.require(f" (or fewer n_components than {self.n_components})")
        if plan.rows < size:
            warnings.warn(
                f"KernelWidths learns on {plan.rows} rows instead of {size}: the memory budget "
                f"({format_bytes(budget)}) holds the kernel blocks of only {plan.rows} rows "
                f"with {self.n_components} centres; memory_budget >= {bytes_up(plan.total)} "
                "holds them all.", UserWarning, stacklevel=3)
            size = plan.rows
        return learning_rows(n, size, labels, rng)

    def _optimise(self, theta0, bounds, X, Y, parts, centres, seconds):
        train, validation, stopping = parts
        X_t, Y_t = X[train], Y[train]
        X_v, Y_v = X[validation], Y[validation]
        X_s, Y_s = X[stopping], Y[stopping]
        d = X.shape[1]
        began = now()
        last = {}
        history = []

        def fun(theta):
            loss, grad, beta = holdout_loss(theta, X_t, Y_t, X_v, Y_v, centres,
                                            kernel=self.kernel)
            last["theta"], last["beta"] = theta.copy(), beta
            return loss, grad

        def stop_loss(theta, beta):
            K = WIDTH_KERNELS[self.kernel](np.exp(theta[:d])).gram(X_s, centres,
                                                                   dtype=np.float64)
            R = K @ beta - Y_s
            return float(np.sum(R * R) / R.size)

        try:
            loss0, _, beta0 = holdout_loss(theta0, X_t, Y_t, X_v, Y_v, centres,
                                           kernel=self.kernel)
        except TimeUp:  # a search's time ended during the first step: nothing learned
            took = now() - began
            raise WidthsTimeError(
                f"the time ended during the widths' first step on {train.size} rows "
                f"({took:.1f} s).", took) from None
        took = now() - began
        if seconds is not None and took > seconds:
            raise WidthsTimeError(
                f"time_budget={self.time_budget!r} is too short to learn the widths: their "
                f"first step on {train.size} rows took {took:.1f} s; give time_budget >= "
                f"{np.ceil(4 * took):.0f}s, or fewer max_samples / n_components.", took)
        best = {"theta": theta0, "loss": stop_loss(theta0, beta0), "iteration": 0}
        self.initial_loss_ = best["loss"]

        def callback(intermediate_result):
            theta = intermediate_result.x
            beta = last["beta"] if np.array_equal(theta, last.get("theta")) else \
                holdout_loss(theta, X_t, Y_t, X_v, Y_v, centres, gradient=False,
                             kernel=self.kernel)[1]
            loss = stop_loss(theta, beta)
            history.append({"loss": float(intermediate_result.fun), "stop_loss": loss,
                            "seconds": now() - began})
            if self.verbose:
                print(f"[KernelWidths] iteration {len(history)}: validation loss "
                      f"{intermediate_result.fun:.5g}, stopping loss {loss:.5g}", flush=True)
            if loss < best["loss"] * (1.0 - self.tol):
                best.update(theta=theta.copy(), loss=loss, iteration=len(history))
            if len(history) - best["iteration"] >= self.patience:
                raise StopIteration
            if seconds is not None and now() - began > seconds:
                raise StopIteration

        try:
            scipy.optimize.minimize(fun, theta0, jac=True, method="L-BFGS-B", bounds=bounds,
                                    callback=callback,
                                    options={"maxiter": int(self.max_iter), "ftol": 1e-12,
                                             "gtol": 1e-10})
        except TimeUp:
            # a search's time for the widths ended (kernelscale._clock): the best so far
            # is kept, as at this estimator's own time_budget
            pass
        theta = best["theta"]
        self.gamma_ = np.exp(theta[:d])
        self.penalty_ = float(np.exp(theta[d]) / train.size)
        self.loss_ = best["loss"]
        self.n_iter_ = len(history)
        self.history_ = history
        self.components_ = centres

    def transform(self, X):
        """Columns scaled by ``sqrt(gamma_)`` (the Laplacian's: ``gamma_``): an isotropic
        kernel of the same kind with ``gamma=1`` on them is the learned kernel.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_scaled : {ndarray, sparse matrix} of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = check_X(self, X, reset=False)
        scale = np.sqrt(self.gamma_) if self.kernel == "rbf" else self.gamma_
        if hasattr(X, "multiply"):
            return X.multiply(scale).tocsr()
        return X * scale.astype(X.dtype)


def learn_widths(X, y, **params):
    """Per-feature RBF widths for ``X``, ``y``: :class:`KernelWidths` fitted, its ``gamma_``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 3))
    >>> learn_widths(X, np.sin(X[:, 1]), n_components=50, random_state=0).shape
    (3,)
    """
    return KernelWidths(**params).fit(X, y).gamma_


def ridge_targets(y, classification):
    """Least-squares targets: +1 / -1 per class (one column for two classes), or ``y``
    standardised."""
    if classification:
        classes, index = np.unique(y, return_inverse=True)
        columns = 1 if classes.size == 2 else classes.size
        Y = -np.ones((y.size, columns))
        if columns == 1:
            Y[index == 1, 0] = 1.0
        else:
            Y[np.arange(y.size), index] = 1.0
        return Y
    y = np.asarray(y, dtype=np.float64)
    return ((y - y.mean()) / max(float(y.std()), 1e-300))[:, None]


def is_classification(task, y):
    """Whether a learner of ``task`` ("auto", "classification", "regression") classifies
    ``y``: "auto" takes binary and multiclass targets of fewer than 50 classes."""
    if task != "auto":
        return task == "classification"
    return type_of_target(y) in ("binary", "multiclass") and np.unique(y).size < 50


def learning_rows(n, size, labels, rng):
    """The sorted indices of ``size`` of ``n`` rows (all of them where ``size >= n``),
    stratified by ``labels`` unless None."""
    if size >= n:
        return np.arange(n)
    if labels is None:
        return np.sort(rng.choice(n, size, replace=False))
    from sklearn.model_selection import train_test_split

    keep, _ = train_test_split(np.arange(n), train_size=size, stratify=labels,
                               random_state=rng.randint(2**31 - 1))
    return np.sort(keep)


def split_rows(n, validation_fraction, rng, labels):
    """Training, validation (optimised) and stopping (early stopping) positions.

    With labels, every class is spread evenly over the three parts: rows are
    ordered by their rank within their class, relative to the class's size.
    """
    order = rng.permutation(n)
    if labels is not None:
        position = np.empty(n)
        for value in np.unique(labels):
            at = order[labels[order] == value]
            position[at] = (np.arange(at.size) + 0.5) / at.size
        order = order[np.argsort(position[order], kind="stable")]
    stop = max(1, int(round(0.1 * n)))
    validation = max(1, int(round(validation_fraction * (n - stop))))
    return (np.sort(order[stop + validation:]), np.sort(order[stop:stop + validation]),
            np.sort(order[:stop]))
