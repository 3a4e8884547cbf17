"""Doubly stochastic gradient kernel SVM (Dai et al. 2014, seed 004)."""

from __future__ import annotations

import math
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state

from ..._constraints import VERBOSE, Interval, Options, validate_params
from ..._progress import progress
from ..._validation import (
    check_finite_fit,
    check_sample_weight,
    check_X_y,
    dense_rows,
    resolve_memory_budget,
)
from ...kernels import KERNEL_CONSTRAINTS, resolve_gamma
from ...solvers import CLASS_WEIGHTS, balanced_factors, base_weights, plus_minus_targets
from .._chunked_fits import MAP_SAMPLE_ROWS, chunked_source, source_classes
from .._multiclass import encode_labels
from .._probability import LogisticProbabilityMixin
from .._shells import ClassifierShell
from ._frequency_blocks import FrequencyBlocks

__all__ = ["DoublySGDSVC"]


class DoublySGDSVC(LogisticProbabilityMixin, ClassifierShell, ClassifierMixin, BaseEstimator):
    """Kernel SVM by doubly stochastic functional gradients (Dai et al. 2014).

    The decision function is ``f(x) = sum_t sum_j a_tj phi_tj(x) + b``, one
    block of ``block_size`` random Fourier frequencies per iteration. Iteration
    ``t`` samples a mini-batch of ``batch_size`` rows *and* a new block of
    frequencies (drawn from the seed ``(random_state, t)``), evaluates ``f`` on
    the batch, and takes the functional gradient step

        f <- (1 - eta_t nu) f - eta_t mean_i w_i l'(y_i, f(x_i)) k_t(x_i, .)

    where ``k_t`` is the kernel estimated by block ``t`` alone, so only the new
    block's coefficients are set and the old ones shrink. The model stores the
    per-block coefficients only (``O(iterations x block_size)`` numbers): the
    frequencies are regenerated from their seeds whenever they are needed. The
    penalty is ``nu = 1 / (C n)`` (the SVM's ``1/2 ||f||^2 + C sum_i loss_i``
    divided by ``C n``), the step ``eta_t = eta0 / (1 + eta0 nu t)``, and with
    ``averaging=True`` the returned function is the weighted average
    ``sum_t t f_t / sum_t t`` of the iterates (Lacoste-Julien et al. 2012), which
    removes most of the noise of the last iterate. Several classes are trained
    one-vs-rest *together*: the same batches and frequencies serve every class.

    Each iteration evaluates all previous blocks on its batch, so training costs
    ``O(T^2 batch_size block_size n_features)`` for T iterations: the method
    trades time for memory that does not grow with n.

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularization strength (> 0), as in :class:`KernelSVC`.
    kernel : {"rbf", "laplacian"}, default="rbf"
        Shift-invariant kernels with a Fourier sampling law.
    gamma : {"scale", "auto"} or float, default="scale"
    loss : {"hinge", "log_loss"}, default="hinge"
        "log_loss" gives kernel logistic regression.
    max_iter : int, default=500
        Iterations (blocks of frequencies) of ``fit``.
    batch_size : int, default=256
        Rows per iteration.
    block_size : int, default=32
        Frequencies per iteration; each gives a cosine and a sine feature.
    eta0 : float, default=5.0
        Initial step size (> 0).
    averaging : bool, default=True
        Return the weighted average of the iterates instead of the last one.
    fit_intercept : bool, default=True
        Learn an unregularized intercept with the same steps.
    class_weight : dict, "balanced", "balanced_binary" or None, default=None
        Multiplies C per class. "balanced" weighs class c by
        ``n_samples / (n_classes * n_c)``, as in scikit-learn; "balanced_binary"
        equalises the two sides of every binary problem instead (one-vs-rest or
        one-vs-one), which also puts one-vs-rest scores on a comparable scale.
    memory_budget : int, default=None
        Bytes for row-block temporaries and for the frequencies kept during a
        call (the rest are regenerated block by block).
    verbose : int, default=0
        1: a progress bar over the iterations; k >= 2: print progress every k
        iterations.
    random_state : int, RandomState instance or None, default=None
        Seeds the batches and the frequency blocks.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_iter, 2 * block_size, n_problems)
        Coefficients of each block's cosine and sine features (averaged when
        ``averaging``).
    intercept_ : ndarray of shape (n_problems,)
    gamma_ : float
    seed_ : int
        Base seed of the frequency blocks.
    n_iter_ : int
        Iterations (blocks) so far, ``partial_fit`` calls included.
    n_features_in_ : int

    See Also
    --------
    KernelSVC : The exact model.
    ApproxKernelSVC : A fixed feature map and a linear SVM.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelscale import DoublySGDSVC
    >>> X, y = make_moons(n_samples=400, noise=0.1, random_state=0)
    >>> clf = DoublySGDSVC(C=10.0, gamma=2.0, max_iter=200, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    def __init__(
        self, *, C=1.0, kernel="rbf", gamma="scale", loss="hinge", max_iter=500,
        batch_size=256, block_size=32, eta0=5.0, averaging=True, fit_intercept=True,
        class_weight=None, memory_budget=None, verbose=0, random_state=None,
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.loss = loss
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.block_size = block_size
        self.eta0 = eta0
        self.averaging = averaging
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.random_state = random_state

    # --------------------------------------------------------------- checks

    _parameter_constraints = {
        "C": [Interval("real", 0, None, closed="neither", inf=True)],
        "kernel": [Options("rbf", "laplacian")],
        "gamma": KERNEL_CONSTRAINTS["gamma"],
        "loss": [Options("hinge", "log_loss")],
        "max_iter": [Interval("int", 1)],
        "batch_size": [Interval("int", 1)],
        "block_size": [Interval("int", 1)],
        "eta0": [Interval("real", 0, None, closed="neither")],
        "averaging": ["boolean"],
        "fit_intercept": ["boolean"],
        "class_weight": [None, "dict", Options(*CLASS_WEIGHTS)],
        "memory_budget": ["memory"],
        "verbose": VERBOSE,
        "random_state": ["random_state"],
    }

    def _check_params(self):
        validate_params(self)

    def _blocks(self, memory_budget):
        """A fresh :class:`FrequencyBlocks` for this fitted model (one per fit or predict)."""
        return FrequencyBlocks(self.seed_, self.n_features_in_, self.coef_.shape[1] // 2,
                               self.kernel, self.gamma_, memory_budget)

    # ------------------------------------------------------------------ fit

    def fit(self, X, y=None, sample_weight=None):
        """Train from scratch for ``max_iter`` iterations.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, ChunkedDataset} of shape (n_samples, n_features)
            A dask array (chunked by rows) is fitted on the active dask client;
            a :class:`kernelscale.datasets.ChunkedDataset` is streamed chunk by
            chunk under ``memory_budget`` (its chunks carry the labels).
        y : array-like or dask array of shape (n_samples,), default=None
            Required unless ``X`` is a ChunkedDataset.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : DoublySGDSVC
        """
        self._check_params()
        for attr in ("coef_", "_state"):
            if hasattr(self, attr):
                delattr(self, attr)
        source = chunked_source(self, X, y, sample_weight)
        if source is not None:
            return self._fit_source(source)
        X, y = check_X_y(self, X, y)
        self.classes_, y_index = encode_labels(y)
        self._start(X, self.classes_)
        self._run(X, y_index, check_sample_weight(sample_weight, X.shape[0]), self.max_iter,
                  shuffle=True)
        return self

    def _fit_source(self, source):
        """``max_iter`` iterations cycling over the chunks of a row source, one at a time.

        The online algorithm is sequential: chunks are brought into this process
        in turn (dask blocks are computed one by one). The penalty uses the total
        number of rows, as ``fit`` on the whole data does.
        """
        source_classes(self, source)
        self.n_features_in_ = int(source.n_features)
        X_sample, _ = source.head(MAP_SAMPLE_ROWS, self.random_state)
        self._start(X_sample, self.classes_)
        remaining, epoch = int(self.max_iter), 0
        while remaining > 0:
            for X, y, w in source.iter_chunks():
                X, y = check_X_y(self, X, y, reset=False)
                unknown = ~np.isin(y, self.classes_)
                if unknown.any():
                    raise ValueError(f"y holds labels {np.unique(y[unknown]).tolist()} that a "
                                     "first pass over the data did not find.")
                steps = min(remaining, math.ceil(X.shape[0] / self._batch_size_for(X)))
                if epoch > 0:
                    self._state["n_seen"] -= X.shape[0]  # counted in the first epoch
                self._run(X, np.searchsorted(self.classes_, y),
                          check_sample_weight(w, X.shape[0]), steps, shuffle=True)
                remaining -= steps
                if remaining == 0:
                    break
            epoch += 1
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over a chunk: ``ceil(len(X) / batch_size)`` iterations.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            All the labels of the stream; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : DoublySGDSVC
        """
        self._check_params()
        first = not hasattr(self, "_state")
        X, y = check_X_y(self, X, y, reset=first)
        if first:
            if classes is None:
                raise ValueError("classes must be given on the first call to partial_fit.")
            classes = np.unique(np.asarray(classes))
            if classes.size < 2:
                raise ValueError(f"classes must hold at least 2 labels, got {classes.tolist()}.")
            self.classes_ = classes
            self._start(X, classes)
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(
                f"classes={list(classes)} differs from the first call's {list(self.classes_)}."
            )
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise ValueError(
                f"y holds labels {np.unique(y[unknown]).tolist()} not in classes "
                f"{self.classes_.tolist()}; pass every label in classes on the first call."
            )
        y_index = np.searchsorted(self.classes_, y)
        n_iter = math.ceil(X.shape[0] / self._batch_size_for(X))
        self._run(X, y_index, check_sample_weight(sample_weight, X.shape[0]), n_iter,
                  shuffle=False)
        return self

    def _batch_size_for(self, X):
        return min(self.batch_size, X.shape[0])

    def _start(self, X, classes):
        self.gamma_ = resolve_gamma(self.gamma, X)
        self.seed_ = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        n_problems = 1 if len(classes) == 2 else len(classes)
        self._state = {
            "t": 0, "n_seen": 0, "coef": np.zeros((0, 2 * self.block_size, n_problems)),
            "intercept": np.zeros(n_problems), "avg_coef": np.zeros((0, 2 * self.block_size,
                                                                       n_problems)),
            "avg_intercept": np.zeros(n_problems), "rng": np.random.default_rng(self.seed_),
            "blocks": FrequencyBlocks(self.seed_, X.shape[1], self.block_size, self.kernel,
                                      self.gamma_, resolve_memory_budget(self.memory_budget)),
        }

    def _weights(self, y_index, sample_weight, Y):
        weights, balanced = base_weights(self.class_weight, self.classes_, y_index, sample_weight)
        W = np.repeat(weights[:, None], Y.shape[1], axis=1)
        if balanced:
            # equal total weight on both sides of each one-vs-rest problem
            for k in range(Y.shape[1]):
                pos = Y[:, k] > 0
                f_pos, f_neg = balanced_factors(weights, pos)
                W[:, k] *= np.where(pos, f_pos, f_neg)
        return W

    def _run(self, X, y_index, sample_weight, n_iter, *, shuffle):
        st = self._state
        if "blocks" not in st:  # after unpickling: the blocks are drawn again from their seeds
            st["blocks"] = FrequencyBlocks(self.seed_, self.n_features_in_,
                                           st["coef"].shape[1] // 2, self.kernel, self.gamma_,
                                           resolve_memory_budget(self.memory_budget))
        blocks = st["blocks"]
        Y = plus_minus_targets(y_index, len(self.classes_))
        W = self._weights(y_index, sample_weight, Y)
        n = X.shape[0]
        st["n_seen"] += n
        nu = 1.0 / (float(self.C) * st["n_seen"])
        B = self._batch_size_for(X)
        rng = st["rng"]
        order = rng.permutation(n) if shuffle else np.arange(n)
        position = 0
        eta0 = float(self.eta0)
        start_time = time.perf_counter()
        # In fit, once the batches of one pass would cost more than touching every
        # row, keep f_t(x_i) for all training rows and update it with each new
        # block: the same iterates, O(n d r) per step instead of O(B d r t).
        values = None
        rows32 = self._dense_copy(X, blocks.memory_budget) if shuffle else None
        bar = progress(n_iter, "DoublySGDSVC", verbose=self.verbose)
        for _ in range(n_iter):
            bar.update()
            if position + B > n:
                order = rng.permutation(n) if shuffle else order
                position = 0 if shuffle else position
            batch = np.sort(order[position : position + B])
            position += B
            t = st["t"]
            if values is None and shuffle and (t + 1) * B >= n:
                values = blocks.all_values(rows32, st["coef"])
            eta = eta0 / (1.0 + eta0 * nu * t)
            if values is None:
                Xb = dense_rows(X[batch], 0, batch.size, np.float32)
                f = blocks.function(Xb, st["coef"], st["intercept"])
                grad = self._loss_gradient(f, Y[batch]) * W[batch]  # dl/df, weighted
                phi = blocks.features(Xb, t, t + 1)
                new = -eta * (phi.T.astype(np.float64) @ grad) / batch.size
            else:
                f = values[batch] + st["intercept"]
                grad = self._loss_gradient(f, Y[batch]) * W[batch]
                phi_all = blocks.block_values(rows32, t)
                new = -eta * (phi_all[batch].T.astype(np.float64) @ grad) / batch.size
                values *= 1.0 - eta * nu
                values += phi_all @ new.astype(np.float32)
            st["coef"] *= 1.0 - eta * nu
            st["coef"] = np.concatenate([st["coef"], new[None]], axis=0)
            if self.fit_intercept:
                st["intercept"] = st["intercept"] - eta * grad.mean(axis=0)
            st["t"] = t + 1
            # weighted averaging: rho_t = 2 / (t + 2), the newest block enters at zero
            rho = 2.0 / (t + 2.0)
            st["avg_coef"] = np.concatenate(
                [st["avg_coef"], np.zeros_like(new)[None]], axis=0) * (1.0 - rho)
            st["avg_coef"] += rho * st["coef"]
            st["avg_intercept"] = (1.0 - rho) * st["avg_intercept"] + rho * st["intercept"]
            if self.verbose >= 2 and st["t"] % self.verbose == 0:
                print(f"[DoublySGDSVC] iteration {st['t']:6d}  step {eta:.3g}  "
                      f"mean loss slope {np.abs(grad).mean():.3f}  "
                      f"{time.perf_counter() - start_time:7.2f} s")
        bar.close()
        if self.averaging:
            self.coef_, self.intercept_ = st["avg_coef"], st["avg_intercept"]
        else:
            self.coef_, self.intercept_ = st["coef"], st["intercept"]
        self.n_iter_ = st["t"]
        check_finite_fit(self, "coef_", "intercept_")

    @staticmethod
    def _dense_copy(X, memory_budget):
        """X as float32 rows: one dense copy if it fits the budget, else X itself."""
        if X.shape[0] * X.shape[1] * 4 <= memory_budget:
            return dense_rows(X, 0, X.shape[0], np.float32)
        return X

    def _loss_gradient(self, f, Y):
        margin = Y * f
        if self.loss == "hinge":
            return np.where(margin < 1.0, -Y, 0.0)
        # log(1 + exp(-m)) has slope -y / (1 + exp(m))
        return -Y * np.exp(-np.logaddexp(0.0, margin))

    # -------------------------------------------------------------- predict

    def _raw_scores(self, X, memory_budget):
        # a local FrequencyBlocks: prediction never touches the estimator's state
        return self._blocks(memory_budget).scores(X, self.coef_, self.intercept_)

    def __getstate__(self):
        # the frequencies are regenerated from their seeds; never pickle them
        state = self.__dict__.copy()
        if "_state" in state:
            state["_state"] = {k: v for k, v in state["_state"].items() if k != "blocks"}
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

