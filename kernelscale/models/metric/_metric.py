"""``KernelMetric``: a Mahalanobis kernel metric learned by the Recursive Feature Machine.

Per-feature widths (:class:`KernelWidths`) can shrink a column but cannot turn or
combine columns; on tables the directions that matter are often combinations (a
delay is one column minus another). The Recursive Feature Machine (RFM,
Radhakrishnan, Beaglehole, Pandit & Belkin, Science 2024) learns a full metric
``M`` from the predictor itself: fit a kernel predictor with the current metric,
take the average outer product of its gradients over the rows (AGOP,
:func:`kernelscale.solvers.gradient_outer_product`), set ``M`` to a normalised
power of it, refit; a few rounds, the best chosen on held-out rows. Here the
predictor is Nystrom kernel ridge with every penalty of a grid solved from one
eigendecomposition (:func:`ridge_path`), on a subsample, within a time and a
memory budget.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..._clock import TimeUp, checkpoint, now
from ..._config import bytes_up, format_bytes, parse_duration
from ..._constraints import VERBOSE, Interval, Options, validate_params
from ..._planner import metric_plan
from ..._validation import check_X, check_X_y, dense_rows, resolve_memory_budget
from ...kernels import RBF, Exponential, Metric, check_metric, check_widths, resolve_gamma
from ...solvers import gradient_outer_product, ridge_path, whitening
from ._widths import is_classification, learning_rows, ridge_targets, split_rows

__all__ = ["KernelMetric", "MetricTimeError"]

#: a full d x d metric up to this many features; beyond, low rank plus a diagonal
FULL_MAX_FEATURES = 64
#: the low-rank part's directions beyond FULL_MAX_FEATURES
LOW_RANK = 16
#: penalties each round's predictor is solved for (relative to its training rows)
_PENALTIES = tuple(10.0 ** k for k in range(-7, 0))


class MetricTimeError(ValueError):
    """The time budget ended before the first round's predictor was scored."""


class KernelMetric(TransformerMixin, BaseEstimator):
    """A kernel metric ``M`` learned from the average gradient outer product (RFM).

    Each round fits Nystrom kernel ridge (every penalty of a grid, the best on
    held-out rows) with the current metric, computes the average gradient outer
    product ``G`` of the predictor over training rows (summed over a
    classifier's classes), and takes ``G ** power``, normalised so that the
    kernel's mean squared distance is that of ``gamma="scale"``, as the next
    metric. The metric whose predictor scored best on the held-out rows is kept
    (round 0 is the starting metric: isotropic, or ``init``), so the rounds never
    make it worse there.

    ``transform`` maps rows to the metric's coordinates ``x L`` (``M = L L^T``),
    where an isotropic model with ``gamma=1`` uses the learned kernel; or pass
    ``gamma=metric.metric_`` to any shift-invariant kernelscale estimator or map.

    Parameters
    ----------
    kernel : {"rbf", "exponential"}, default="rbf"
        The predictor's kernel: ``exp(-(x - y)^T M (x - y))`` or the Laplace-type
        ``exp(-||x - y||_M)`` RFM favours.
    structure : {"auto", "full", "diagonal", "low-rank"}, default="auto"
        The metric's form: a full d x d ``M``; its diagonal only (per-feature
        widths from the gradients); or ``LOW_RANK`` top directions plus a
        diagonal. "auto": full up to 64 features, low rank plus diagonal beyond.
    n_rounds : int, default=5
        AGOP rounds after the starting metric's predictor.
    power : float, default=0.5
        ``M = G ** power`` (0.5: the square root, as RFM's practice).
    n_components : int, default=1000
        Nystrom centres of the predictor.
    max_samples : int, default=20000
        Rows the metric is learned on (a stratified subsample of more).
    gradient_samples : int, default=5000
        Training rows the gradients are averaged over.
    validation_fraction : float, default=0.25
        Share of the rows held out to choose the penalty and the round.
    init : None, array-like of shape (n_features,) or Metric, default=None
        The starting metric: None is isotropic (``gamma="scale"``); per-feature
        widths (e.g. :class:`KernelWidths`' ``gamma_``) or a :class:`Metric`.
    task : {"auto", "classification", "regression"}, default="auto"
    time_budget : float or str, default=None
        Seconds (or "90s") for the rounds; the best metric so far is kept when it
        ends (an error if the first round's predictor was not scored).
    memory_budget : int or str, default=None
        Bytes for the kernel blocks (the subsample is reduced to fit, with a warning).
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
        1: one line per round.

    Attributes
    ----------
    metric_ : kernelscale.kernels.Metric
        The learned metric (pass it as ``gamma``).
    gamma_ : kernelscale.kernels.Metric
        The same (as :class:`KernelWidths`' ``gamma_``).
    penalty_ : float
        The best round's ridge penalty relative to the rows (``alpha = penalty_ * n``).
    loss_ : float
        Its held-out squared loss.
    initial_loss_ : float
        The starting metric's.
    best_round_ : int
        The round kept (0: the starting metric).
    history_ : list of dict
        Per round: ``loss``, ``penalty``, ``seconds``.
    n_iter_ : int
        Rounds of AGOP computed.
    feature_relevance_ : ndarray of shape (n_features_in,)
        Each feature's share of the kernel's expected squared distance
        (``M_dd Var(x_d)``, normalised).
    directions_ : ndarray of shape (n_directions, n_features_in)
        The metric's top directions over the standardised features (unit rows):
        the combinations of columns the kernel varies along most.
    direction_shares_ : ndarray of shape (n_directions,)
        Each direction's share of the kernel's expected squared distance.

    References
    ----------
    .. [1] A. Radhakrishnan, D. Beaglehole, P. Pandit, M. Belkin, "Mechanism for
       feature learning in neural networks and backpropagation-free machine
       learning models", Science 383 (2024).
    .. [2] D. Beaglehole, D. Holzmüller, A. Radhakrishnan, M. Belkin, "xRFM:
       accurate, scalable, and interpretable feature learning models for tabular
       data", arXiv 2508.10053 (2025).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.models import KernelMetric
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 4))
    >>> y = np.sin(X[:, 0] - X[:, 1])  # one direction, a combination of two columns
    >>> metric = KernelMetric(n_components=200, random_state=0).fit(X, y)
    >>> top = metric.directions_[0]
    >>> bool(abs(top[0] + top[1]) < 0.2 and abs(top[0]) > 0.6)
    True
    """

    _parameter_constraints = {
        "kernel": [Options("rbf", "exponential")],
        "structure": [Options("auto", "full", "diagonal", "low-rank")],
        "n_rounds": [Interval("int", 0)],
        "power": [Interval("real", 0, None, closed="neither")],
        "n_components": [Interval("int", 1)],
        "max_samples": [Interval("int", 20)],
        "gradient_samples": [Interval("int", 1)],
        "validation_fraction": [Interval("real", 0, 1, closed="neither")],
        "init": [None, "array-like", Metric],
        "task": [Options("auto", "classification", "regression")],
        "time_budget": [None, Interval("real", 0, None, closed="neither"), str],
        "memory_budget": ["memory"],
        "random_state": ["random_state"],
        "verbose": VERBOSE,
    }

    def __init__(self, *, kernel="rbf", structure="auto", n_rounds=5, power=0.5,
                 n_components=1000, max_samples=20000, gradient_samples=5000,
                 validation_fraction=0.25, init=None, task="auto", time_budget=None,
                 memory_budget=None, random_state=None, verbose=0):
        self.kernel = kernel
        self.structure = structure
        self.n_rounds = n_rounds
        self.power = power
        self.n_components = n_components
        self.max_samples = max_samples
        self.gradient_samples = gradient_samples
        self.validation_fraction = validation_fraction
        self.init = init
        self.task = task
        self.time_budget = time_budget
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y):
        """Learn the metric on (a subsample of) ``X``, ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : KernelMetric
        """
        validate_params(self)
        seconds = None if self.time_budget is None else parse_duration(self.time_budget)
        X, y = check_X_y(self, X, y)
        n, d = X.shape
        if n < 10:
            raise ValueError(f"KernelMetric needs at least 10 rows (it holds some out to "
                             f"choose its rounds); got n_samples={n}.")
        start = self._start(X, d)
        classification = is_classification(self.task, y)
        rng = check_random_state(self.random_state)
        rows = self._subsample(n, y if classification else None, rng)
        Xs = dense_rows(X[rows], 0, rows.size, np.float64)
        Y = ridge_targets(y[rows], classification)
        train, valid, stop = split_rows(rows.size, self.validation_fraction, rng,
                                    y[rows] if classification else None)
        valid = np.sort(np.r_[valid, stop])  # no early stopping here: one held-out part
        m = int(min(self.n_components, train.size))
        centres = Xs[rng.choice(train, m, replace=False)]
        grads = train if train.size <= self.gradient_samples else \
            np.sort(rng.choice(train, self.gradient_samples, replace=False))
        self._rounds(Xs, Y, train, valid, grads, centres, start, seconds)
        self._describe(Xs[train])
        return self

    def _start(self, X, d):
        if self.init is None:
            return Metric(factor=np.sqrt(resolve_gamma("scale", X)) * np.eye(d))
        if isinstance(self.init, Metric) or np.ndim(self.init) == 2:
            return check_metric(self.init, d)
        return Metric(factor=np.diag(np.sqrt(check_widths(self.init, d))))

    def _subsample(self, n, labels, rng):
        budget = resolve_memory_budget(self.memory_budget)
        m = self.n_components
        size = min(n, self.max_samples)
        plan = metric_plan(n=size, m=m, budget=budget)
        if plan.rows < size:
            import warnings

            warnings.warn(f"KernelMetric learns on {plan.rows} rows instead of {size}: the "
                          f"memory budget ({format_bytes(budget)}) holds the kernel blocks of "
                          f"only {plan.rows} rows with {m} centres; memory_budget >= "
                          f"{bytes_up(plan.total)} holds them all.", UserWarning, stacklevel=3)
            size = plan.rows
        return learning_rows(n, size, labels, rng)

    def _kernel(self):
        return RBF(1.0) if self.kernel == "rbf" else Exponential(1.0)

    def _round(self, Xs, Y, train, valid, centres, factor):
        """The predictor with the metric ``factor``: its coefficients, penalty, loss."""
        kernel = self._kernel()
        Zc = centres @ factor
        K_t = kernel.gram(Xs[train] @ factor, Zc, dtype=np.float64,
                          memory_budget=self.memory_budget)
        A, b = K_t.T @ K_t, K_t.T @ Y[train]
        del K_t
        checkpoint()  # a time budget's stop, between the m x m steps
        K_v = kernel.gram(Xs[valid] @ factor, Zc, dtype=np.float64,
                          memory_budget=self.memory_budget)
        basis = whitening(kernel.gram(Zc, dtype=np.float64))
        checkpoint()
        alphas = [p * train.size for p in _PENALTIES]
        best = None
        for alpha, beta in zip(alphas, ridge_path(A, b, basis, alphas)):
            R = K_v @ beta - Y[valid]
            loss = float(np.sum(R * R) / R.size)
            if best is None or loss < best[2]:
                best = (beta, alpha / train.size, loss)
        return best

    def _rounds(self, Xs, Y, train, valid, grads, centres, start, seconds):
        began = now()
        factor = start.factor
        history, best = [], None
        try:
            for r in range(self.n_rounds + 1):
                checkpoint()
                t0 = now()
                beta, penalty, loss = self._round(Xs, Y, train, valid, centres, factor)
                history.append({"loss": loss, "penalty": penalty, "seconds": now() - t0})
                if self.verbose:
                    print(f"[KernelMetric] round {r}: held-out loss {loss:.5g} (penalty "
                          f"{penalty:.3g}, rank {factor.shape[1]})", flush=True)
                if best is None or loss < best["loss"]:
                    best = {"factor": factor, "penalty": penalty, "loss": loss, "round": r}
                if r == self.n_rounds or (seconds is not None and
                                          now() - began + history[-1]["seconds"] > seconds):
                    break
                checkpoint()
                G = factor @ gradient_outer_product(Xs[grads] @ factor, centres @ factor, beta,
                                                    self.kernel, self.memory_budget) @ factor.T
                checkpoint()
                factor = self._next_factor(G, Xs[train])
        except TimeUp:  # a search's time for the metric ended: the best so far is kept
            if best is None:
                raise MetricTimeError(f"the time ended during the metric's first round "
                                      f"({now() - began:.1f} s).") from None
        self.metric_ = self.gamma_ = Metric(factor=best["factor"])
        self.penalty_, self.loss_ = best["penalty"], best["loss"]
        self.best_round_ = best["round"]
        self.initial_loss_ = history[0]["loss"]
        self.history_ = history
        self.n_iter_ = len(history) - 1

    def _next_factor(self, G, X_train):
        """The factor of the metric ``G ** power``, in the chosen structure, normalised."""
        d = G.shape[0]
        structure = self.structure
        if structure == "auto":
            structure = "full" if d <= FULL_MAX_FEATURES else "low-rank"
        if structure == "diagonal":
            M = np.diag(np.maximum(np.diag(G), 0.0) ** self.power)
        else:
            s, V = linalg.eigh(G, check_finite=False)
            s = np.maximum(s, 0.0) ** self.power
            M = (V * s) @ V.T
            if structure == "low-rank" and d > LOW_RANK:
                top = V[:, -LOW_RANK:] * s[-LOW_RANK:]
                low = top @ V[:, -LOW_RANK:].T
                rest = np.maximum(np.diag(M) - np.diag(low), 0.0)
                factor = np.hstack([V[:, -LOW_RANK:] * np.sqrt(s[-LOW_RANK:]),
                                    np.diag(np.sqrt(rest))])
                return self._normalised(factor, X_train)
        M = (M + M.T) / 2
        if not np.any(M):  # a constant predictor has no gradient: keep the scale
            M = np.eye(d)
        w, V = linalg.eigh(M, check_finite=False)
        keep = w > 1e-10 * max(float(w[-1]), np.finfo(float).tiny)
        return self._normalised(V[:, keep] * np.sqrt(w[keep]), X_train)

    @staticmethod
    def _normalised(factor, X_train):
        """``factor`` scaled so that the mean squared distance ``2 tr(M Cov)`` is 2, as
        ``gamma="scale"`` makes it for the isotropic kernel."""
        Z = (X_train - X_train.mean(axis=0)) @ factor
        spread = float(np.mean(np.sum(Z * Z, axis=1)))
        return factor / np.sqrt(max(spread, np.finfo(float).tiny))

    def _describe(self, X_train):
        """``feature_relevance_``, ``directions_`` and ``direction_shares_``."""
        L = self.metric_.factor
        std = np.maximum(X_train.std(axis=0), 1e-12 * max(float(X_train.std()), 1e-300))
        diagonal = np.sum(L * L, axis=1) * std ** 2
        self.feature_relevance_ = diagonal / max(float(diagonal.sum()), np.finfo(float).tiny)
        # in standardised coordinates: S M S with S = diag(std)
        SL = L * std[:, None]
        U, s, _ = linalg.svd(SL, full_matrices=False, check_finite=False)
        shares = s ** 2 / max(float(np.sum(s ** 2)), np.finfo(float).tiny)
        keep = shares > 1e-3
        signs = np.sign(U[np.argmax(np.abs(U), axis=0), np.arange(U.shape[1])])
        self.directions_ = (U * signs)[:, keep].T
        self.direction_shares_ = shares[keep]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def transform(self, X):
        """Rows in the metric's coordinates ``x L``: an isotropic RBF kernel with ``gamma=1``
        on them is the learned kernel.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_metric : ndarray of shape (n_samples, rank)
        """
        check_is_fitted(self)
        X = check_X(self, X, reset=False)
        return self.metric_.transform(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the metric's coordinates: ``metric0``, ``metric1``, ..."""
        check_is_fitted(self)
        return np.array([f"metric{k}" for k in range(self.metric_.rank)], dtype=object)
