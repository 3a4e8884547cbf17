"""Fits over chunked data: streamed files (ChunkedDataset) and dask arrays.

``fit(X, y)`` of an estimator hands over to these functions when ``X`` is a
dask array or a :class:`kernelscale.datasets.ChunkedDataset`. The feature map is
fitted once on a sample of rows (landmarks, frequencies, ``gamma="scale"``),
then every solver pass maps the data chunk by chunk under the memory budget
(:mod:`kernelscale.solvers._chunked_solvers`). The encoders below turn one chunk's raw
labels and weights into targets; they are plain picklable objects because they
travel to dask workers.
"""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._validation import resolve_memory_budget
from ..solvers import (
    balanced_class_factors,
    check_finite_chunk,
    chunked_logistic,
    chunked_ridge,
    chunked_squared_hinge,
    chunked_squared_svr,
    class_factors,
    label_weights,
    solve_ridge,
)
from ..sources import row_source

__all__ = [
    "chunked_source", "fit_map_on_source", "source_classes", "ChunkTargets",
    "fit_ridge_chunked", "fit_svm_chunked", "fit_svr_chunked", "fit_logistic_chunked",
    "MAP_SAMPLE_ROWS", "chunk_class_factors", "fit_pca_chunked",
    "partial_targets", "source_targets", "source_target_mean",
]

# Rows the feature map is fitted on in a chunked fit: enough for k-means or
# leverage landmarks and a stable gamma="scale", small enough to hold in memory.
MAP_SAMPLE_ROWS = 20_000


def chunked_source(estimator, X, y, sample_weight):
    """The row source of a chunked ``fit`` input, or None for in-memory input."""
    return row_source(X, y, sample_weight, verbose=getattr(estimator, "verbose", 0) or 0,
                      memory_budget=resolve_memory_budget(getattr(estimator, "memory_budget",
                                                                  None)))


def _check_source_width(estimator, source):
    estimator.n_features_in_ = int(source.n_features)
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_


def fit_map_on_source(estimator, source):
    """Fit ``estimator.feature_map_`` on a sample of ``source``; return its output width."""
    _check_source_width(estimator, source)
    size = int(getattr(estimator, estimator._map_size_param))
    rows = max(MAP_SAMPLE_ROWS, 10 * size)
    X_sample, _ = source.head(rows, getattr(estimator, "random_state", None))
    check_finite_chunk(X_sample)
    estimator.feature_map_ = estimator._build_feature_map().fit(X_sample)
    width = getattr(estimator.feature_map_, "_n_features_out", None)
    if width is None:
        width = estimator.feature_map_.transform(X_sample[:1]).shape[1]
    return int(width)


def source_classes(estimator, source, need_weights=False):
    """Set ``classes_``; return the class weight totals too when ``need_weights``."""
    if need_weights:
        classes, totals = label_weights(source)
    else:
        classes, totals = np.asarray(source.classes()), None
    if len(classes) < 2:
        raise ValueError(
            f"The classifier needs samples of at least 2 classes in y; got only one class "
            f"{classes.tolist()}. Check the labels or the data split.")
    estimator.classes_ = classes
    return totals


def chunk_class_factors(estimator, totals):
    """Per-class weight multipliers of a chunked fit (``totals``: class weights, for "balanced").

    ``"balanced_binary"`` leaves the classes alone here: it balances each binary
    problem, by per-problem factors (see :func:`fit_svm_chunked`).
    """
    if isinstance(estimator.class_weight, str) and estimator.class_weight == "balanced":
        return balanced_class_factors(totals)
    return class_factors(estimator.class_weight, estimator.classes_)


class ChunkTargets:
    """Targets and weights of one chunk: ``encoder(y, w) -> (Y, S)``.

    Parameters
    ----------
    classes : ndarray or None
        None for regression (``Y`` is ``y`` as float columns).
    mode : {"plus_minus", "index", "binary", "regression"}
        ``+-1`` columns (one for two classes), class indices, one ``+-1``
        vector, or numeric targets.
    factors : ndarray of shape (n_classes,), default=None
        Per-class weight multipliers.
    pos_neg : ndarray of shape (n_problems, 2), default=None
        Per-problem multipliers of the positive and negative side: ``S`` is then
        a (rows, n_problems) matrix.
    scale : float, default=1.0
        Multiplies every weight (``C`` for the SVM).
    shift : ndarray of shape (n_targets,), default=None
        Subtracted from regression and ``+-1`` targets (their mean, for a fitted
        intercept).
    """

    def __init__(self, classes, mode, factors=None, pos_neg=None, scale=1.0, shift=None):
        self.classes = classes
        self.mode = mode
        self.factors = factors
        self.pos_neg = pos_neg
        self.scale = scale
        self.shift = shift

    def __call__(self, y, w):
        if y is None:
            raise ValueError("These data have no labels; a supervised fit needs a label column.")
        y = np.asarray(y)
        s = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
        if not np.all(np.isfinite(s)) or np.any(s < 0):
            raise ValueError("sample_weight must be finite and non-negative.")
        if self.mode == "regression":
            Y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
            if not np.all(np.isfinite(Y)):
                raise ValueError("y contains NaN or infinity.")
            if self.shift is not None:
                Y = Y - self.shift
            return Y, s * self.scale
        index = np.searchsorted(self.classes, y)
        index = np.minimum(index, len(self.classes) - 1)
        bad = self.classes[index] != y
        if bad.any():
            raise ValueError(f"y holds labels {np.unique(y[bad]).tolist()[:5]} that are not "
                             f"among the classes {self.classes.tolist()[:10]}.")
        if self.factors is not None:
            s = s * self.factors[index]
        s = s * self.scale
        k = len(self.classes)
        if self.mode == "index":
            return index, s
        if self.mode == "binary":
            return np.where(index == 1, 1.0, -1.0), s
        if k == 2:
            Y = np.where(index == 1, 1.0, -1.0)[:, None]
        else:
            Y = -np.ones((len(y), k))
            Y[np.arange(len(y)), index] = 1.0
        if self.shift is not None:
            Y = Y - self.shift
        if self.pos_neg is None:
            return Y, s
        S = s[:, None] * np.where(Y > 0, self.pos_neg[:, 0], self.pos_neg[:, 1])
        return Y, S


def _balanced_pos_neg(totals, n_problems):
    """Factors equalising both sides of each one-vs-rest problem (cf. ``balanced_factors``)."""
    total = totals.sum()
    positives = totals[1:2] if n_problems == 1 else totals
    pos = total / (2.0 * np.maximum(positives, 1e-300))
    neg = total / (2.0 * np.maximum(total - positives, 1e-300))
    return np.column_stack([pos, neg])


# ------------------------------------------------------------------ ridge

def fit_ridge_chunked(estimator, source, alpha, classifier):
    """Ridge (regressor or classifier) on a row source: one exact pass of statistics."""
    budget = resolve_memory_budget(estimator.memory_budget)
    if classifier:
        totals = source_classes(estimator, source,
                                need_weights=isinstance(estimator.class_weight, str))
        encoder = ChunkTargets(estimator.classes_, "plus_minus",
                               factors=chunk_class_factors(estimator, totals))
        n_targets = 1 if len(estimator.classes_) == 2 else len(estimator.classes_)
    else:
        # chunked targets are 1-D (the readers and DaskSource only accept those)
        n_targets, estimator._single_target = 1, True
        encoder = ChunkTargets(None, "regression")
    width = fit_map_on_source(estimator, source)
    stats = chunked_ridge(source, estimator.feature_map_, encoder, width, n_targets, budget)
    if not stats.weight > 0:
        raise ValueError("The sample weights sum to zero: at least one row needs weight > 0.")
    estimator.coef_, estimator.intercept_ = solve_ridge(stats, alpha, estimator.fit_intercept)
    estimator._partial = stats  # partial_fit may go on adding rows
    return estimator


def fit_pca_chunked(estimator, source):
    """Mean and centred covariance of the mapped rows of a source (one pass)."""
    budget = resolve_memory_budget(estimator.memory_budget)
    width = fit_map_on_source(estimator, source)
    stats = chunked_ridge(source, estimator.feature_map_, None, width, 0, budget)
    return stats


# -------------------------------------------------------------------- SVM

def fit_svm_chunked(estimator, source, params, *, mapped):
    """Squared-hinge SVM (one-vs-rest) on a row source by L-BFGS over chunks."""
    if params["loss"] != "squared_hinge":
        raise ValueError(
            "Chunked (streamed or dask) SVM fits need loss='squared_hinge', whose primal is "
            "differentiable and is minimised by full-batch L-BFGS over the chunks; for the "
            "hinge loss, load the data in memory or train online with partial_fit.")
    if params["solver"] not in ("auto", "lbfgs"):
        raise ValueError(f"solver={params['solver']!r} needs the data in memory; chunked fits "
                         "use solver='auto' or 'lbfgs'.")
    budget = resolve_memory_budget(estimator.memory_budget)
    balanced = isinstance(estimator.class_weight, str)
    totals = source_classes(estimator, source, need_weights=balanced)
    factors = chunk_class_factors(estimator, totals)
    if balanced and estimator.class_weight == "balanced":
        balanced = False  # applied to the classes by the factors
    n_problems = 1 if len(estimator.classes_) == 2 else len(estimator.classes_)
    pos_neg = _balanced_pos_neg(totals, n_problems) if balanced else None
    encoder = ChunkTargets(estimator.classes_, "plus_minus", factors=factors, pos_neg=pos_neg,
                           scale=params["C"])
    if mapped:
        width = fit_map_on_source(estimator, source)
        fmap = estimator.feature_map_
    else:
        _check_source_width(estimator, source)
        width, fmap = source.n_features, None
    W, n_iter, converged = chunked_squared_hinge(
        source, fmap, encoder, width, n_problems, bias=params["bias"], tol=params["tol"],
        max_iter=params["max_iter"], memory_budget=budget, callback=_printer(estimator))
    _warn_unconverged(estimator, converged, n_iter, params["max_iter"], params["tol"])
    estimator.coef_ = W[:width].T.copy()
    estimator.intercept_ = params["bias"] * W[width]
    estimator.n_iter_ = n_iter
    return estimator


def fit_svr_chunked(estimator, source):
    """Squared epsilon-insensitive SVR on a row source by L-BFGS over chunks."""
    if estimator.loss != "squared_epsilon_insensitive":
        raise ValueError(
            "Chunked (streamed or dask) SVR fits need loss='squared_epsilon_insensitive', "
            "whose primal is differentiable and is minimised by full-batch L-BFGS over the "
            f"chunks; loss={estimator.loss!r} needs the data in memory.")
    budget = resolve_memory_budget(estimator.memory_budget)
    encoder = ChunkTargets(None, "regression", scale=float(estimator.C))
    width = fit_map_on_source(estimator, source)
    bias = float(estimator.intercept_scaling) if estimator.fit_intercept else 0.0
    w, n_iter, converged = chunked_squared_svr(
        source, estimator.feature_map_, encoder, width, epsilon=float(estimator.epsilon),
        bias=bias, tol=float(estimator.tol), max_iter=int(estimator.max_iter),
        memory_budget=budget, callback=_printer(estimator))
    _warn_unconverged(estimator, converged, n_iter, int(estimator.max_iter),
                      float(estimator.tol))
    estimator.coef_ = w[None, :width].astype(np.dtype(estimator.dtype))
    estimator.intercept_ = np.array([bias * w[width]])
    estimator.n_iter_ = n_iter
    return estimator


def _printer(estimator):
    if not getattr(estimator, "verbose", 0):
        return None
    name = type(estimator).__name__

    def callback(iteration, state):
        print(f"[{name}] L-BFGS iteration {iteration}: objective {state['objective']:.8g}",
              flush=True)
    return callback


def _warn_unconverged(estimator, converged, n_iter, max_iter, tol):
    """Say why L-BFGS stopped short of ``tol``: ``max_iter``, or no further progress.

    Below ``n_iter < max_iter`` the line search found no decrease at float64
    precision: a larger ``max_iter`` would change nothing there.
    """
    if converged:
        return
    import warnings

    name = type(estimator).__name__
    if n_iter >= max_iter:
        message = (f"{name} did not converge within max_iter={max_iter} L-BFGS iterations; "
                   "increase max_iter or tol.")
    else:
        message = (f"{name}: L-BFGS stopped after {n_iter} iterations, short of tol={tol:g}, "
                   "where the line search found no further decrease (float64 precision); "
                   "a larger tol ends the fit there, a larger max_iter does not help.")
    warnings.warn(message, ConvergenceWarning, stacklevel=4)


# --------------------------------------------------------------- logistic

def fit_logistic_chunked(estimator, source, *, C, multiclass, tol, max_iter):
    """Kernel logistic regression on a row source by L-BFGS over chunks."""
    budget = resolve_memory_budget(estimator.memory_budget)
    totals = source_classes(estimator, source,
                            need_weights=isinstance(estimator.class_weight, str))
    factors = chunk_class_factors(estimator, totals)
    width = fit_map_on_source(estimator, source)
    k = len(estimator.classes_)
    if k == 2:
        runs = [(ChunkTargets(estimator.classes_, "binary", factors=factors), 1)]
    elif multiclass == "multinomial":
        runs = [(ChunkTargets(estimator.classes_, "index", factors=factors), k)]
    else:
        runs = [(_OneVsRest(estimator.classes_, c, factors), 1) for c in range(k)]
    coefs, intercepts, iters, converged = [], [], [], True
    for encoder, columns in runs:
        coef, intercept, n_iter, ok = chunked_logistic(
            source, estimator.feature_map_, encoder, width, columns, C=C,
            fit_intercept=bool(estimator.fit_intercept), tol=tol, max_iter=max_iter,
            memory_budget=budget, verbose=estimator.verbose)
        coefs.append(coef)
        intercepts.append(intercept)
        iters.append(n_iter)
        converged &= ok
    _warn_unconverged(estimator, converged, max(iters), max_iter, tol)
    estimator.coef_ = np.vstack(coefs)
    estimator.intercept_ = np.concatenate(intercepts)
    estimator.n_iter_ = max(iters)
    estimator._multinomial = k > 2 and multiclass == "multinomial"
    return estimator


class _OneVsRest(ChunkTargets):
    """``+-1`` targets of "class ``c`` against the rest"."""

    def __init__(self, classes, c, factors):
        super().__init__(classes, "index", factors=factors)
        self.c = c

    def __call__(self, y, w):
        index, s = super().__call__(y, w)
        return np.where(index == self.c, 1.0, -1.0), s


# ------------------------------------------------------------ partial_fit

def partial_targets(estimator, X, y, classes, sample_weight, *, classifier, scale=1.0):
    """Validate one ``partial_fit`` chunk; on the first call set the classes and fit the map.

    Returns ``(first, X, Y, S)``: whether this was the first chunk, the chunk,
    its targets (``+-1`` columns, or float targets for a regressor) and weights.
    """
    from .._validation import check_sample_weight, check_X_y

    first = not hasattr(estimator, "_partial")
    X, y = check_X_y(estimator, X, y, reset=first, multi_output=not classifier,
                     y_numeric=not classifier)
    if classifier:
        if first:
            if classes is None:
                raise ValueError("classes must be given on the first call to partial_fit "
                                 "(every label the stream will hold).")
            classes = np.unique(np.asarray(classes))
            if classes.size < 2:
                raise ValueError(f"classes must hold at least 2 labels, got {classes.tolist()}.")
            estimator.classes_ = classes
        elif classes is not None and not np.array_equal(np.unique(classes), estimator.classes_):
            raise ValueError(f"classes={list(classes)} differs from the first call's "
                             f"{list(estimator.classes_)}.")
        if isinstance(estimator.class_weight, str):
            raise ValueError(
                "class_weight='balanced' needs the class counts of the whole stream, which "
                "partial_fit cannot know; pass a dict of weights (for example from "
                "sklearn.utils.class_weight.compute_class_weight on the labels), or fit a "
                "ChunkedDataset, which counts them in a first pass.")
        factors = class_factors(estimator.class_weight, estimator.classes_)
        encoder = ChunkTargets(estimator.classes_, "plus_minus", factors=factors, scale=scale)
    else:
        if first:
            estimator._single_target = np.ndim(y) == 1
        encoder = ChunkTargets(None, "regression", scale=scale)
    if first:
        estimator.feature_map_ = estimator._build_feature_map().fit(X)
    Y, S = encoder(y, check_sample_weight(sample_weight, X.shape[0]))
    return first, X, Y, S


def _target_sums(X, y, w):
    Y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    s = np.ones(len(Y)) if w is None else np.asarray(w, dtype=np.float64)
    return s @ Y, float(s.sum())


def _add_sums(a, b):
    return a[0] + b[0], a[1] + b[1]


def source_target_mean(source):
    """The weighted mean of a row source's regression targets, in one pass."""
    sums, total = source.map_reduce(_target_sums, (), combine=_add_sums)
    if total <= 0:
        raise ValueError("sample_weight sums to 0: a weighted mean of y needs positive weights.")
    return np.asarray(sums, dtype=np.float64) / total


def source_targets(estimator, source, classifier, *, centred=False):
    """``(encoder, n_rows)`` of a least-squares fit on a row source: ``+-1`` columns for a
    classifier (``classes_`` set, its class weights applied), the targets for a regressor
    (less their mean where ``centred``, which takes one more pass)."""
    if classifier:
        totals = source_classes(estimator, source, need_weights=True)
        factors = chunk_class_factors(estimator, totals)
        mean = None
        if centred:  # the weighted mean of +-1 columns, from the classes' weight totals
            share = totals * factors / max(float(np.sum(totals * factors)), 1e-300)
            mean = 2.0 * share - 1.0
            mean = mean[1:] if len(share) == 2 else mean
        encoder = ChunkTargets(estimator.classes_, "plus_minus", factors=factors, shift=mean)
        return encoder, int(round(totals.sum()))
    estimator._single_target = True  # chunked targets are 1-D
    mean = source_target_mean(source) if centred else None
    return ChunkTargets(None, "regression", shift=mean), source.n_rows
