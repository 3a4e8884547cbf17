"""The search space: the default grids, their validation, and the scores.

Every value is checked before any work: an empty grid, a value out of range, an
unknown family or scoring name is one clear error.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.stats import rankdata
from sklearn import metrics
from sklearn.model_selection import KFold, StratifiedKFold

from .._planner import block_rows, sparse_row_bytes
from ..models.ridge import FLOAT32_PENALTY_FLOOR

__all__ = ["SCORERS", "DEFAULT_GAMMA_FACTORS",
           "DEFAULT_CS", "default_alphas", "check_grid", "check_scoring",
           "make_folds", "row_order", "representable_alphas", "refit_dtype", "laplacian_gamma_ref",
           "score_values", "LOG_TARGET_RANGE", "wants_log_target", "target_forward",
           "target_inverse", "target_model"]

#: gamma = gamma_scale * factor: scikit-learn's "scale" times 2^-3 .. 2^3
DEFAULT_GAMMA_FACTORS = tuple(2.0 ** k for k in range(-3, 4))
#: C = 10^-1 .. 10^2 in half decades
DEFAULT_CS = tuple(10.0 ** (k / 2) for k in range(-2, 5))


#: "auto" tries the log of a target whose largest value is at least this many times its
#: smallest (an order of magnitude): over a narrower range the log is all but affine. On
#: diamonds' log price (1.7 times) its lines lost every round and cost 0.0001 of R^2;
#: the run times it won on span 2,800 times (benchmarks/HISTORY.md "Stop 73")
LOG_TARGET_RANGE = 10.0


def wants_log_target(log_target, y):
    """``(try the log target, why)`` for a regressor's ``log_target`` and target ``y``.

    "auto" tries it where every value is positive, the largest at least
    :data:`LOG_TARGET_RANGE` times the smallest, and the log brings the target's skewness
    nearer zero by more than its standard error (prices, counts, run times: a target
    spread over orders of magnitude, whose errors on the largest values would otherwise
    rule the fit); the race keeps whichever scores higher on the target as given. True
    tries it on any positive target (one clear error otherwise), False never.

    Examples
    --------
    >>> import numpy as np
    >>> wants_log_target("auto", np.exp(np.random.default_rng(0).normal(size=500)))[0]
    True
    >>> wants_log_target("auto", np.random.default_rng(0).normal(size=500) + 10)[0]
    False
    """
    if log_target is False:
        return False, ""
    y = np.asarray(y, dtype=np.float64)
    low = float(np.min(y))
    if low <= 0:
        if log_target is True:
            raise ValueError(f"log_target=True needs a positive target; y's smallest value "
                             f"is {low:.6g}: give log_target='auto' or False, or shift y.")
        return False, ""
    if log_target is True:
        return True, "the log target tried (log_target=True)"
    if float(np.max(y)) < LOG_TARGET_RANGE * low:
        return False, ""
    from scipy.stats import skew

    before, after = abs(float(skew(y, axis=None))), abs(float(skew(np.log(y), axis=None)))
    # nearer zero by more than a sample skewness's standard error (sqrt(6 / n)): over a
    # narrow range of values the log is all but affine, and changes no fit
    if not before - after > np.sqrt(6.0 / y.size):
        return False, ""
    return True, (f"the log target tried: the target spans {float(np.max(y)) / low:.3g} "
                  f"times its smallest value, and its log brings the skewness from "
                  f"{before:.2f} to {after:.2f}")


def target_forward(target, y):
    """The target a line's models are fitted on ("identity" or "log")."""
    return np.log(y) if target == "log" else y


def target_inverse(target, values):
    """Predictions on the target as given, from a line's models' predictions."""
    return np.exp(values) if target == "log" else values


def target_model(target, estimator):
    """``estimator`` fitted on the line's target and predicting the target as given
    (scikit-learn's :class:`~sklearn.compose.TransformedTargetRegressor`)."""
    if target != "log":
        return estimator
    from sklearn.compose import TransformedTargetRegressor

    return TransformedTargetRegressor(regressor=estimator, func=np.log, inverse_func=np.exp,
                                      check_inverse=False)


def default_alphas(n_samples):
    """The ridge penalties tried by default: ``n * 10^-7 .. n * 10^-1`` (FALKON's scale)."""
    return tuple(n_samples * 10.0 ** k for k in range(-7, 0))


def representable_alphas(alphas, dtype, weight_total, *, given):
    """The FALKON penalties to search for a refit in ``dtype`` (None: float32 where it can).

    With ``dtype="float32"`` the penalties below float32's floor
    (``FLOAT32_PENALTY_FLOOR * weight_total``) are dropped: a float32 fit would
    not be the model their score describes. A warning names the dropped ones
    the user gave; an error says when none is left. Otherwise every penalty is
    searched (those below the floor are refitted in float64).
    """
    if dtype != "float32":
        return alphas
    floor = FLOAT32_PENALTY_FLOOR * weight_total
    kept = alphas[alphas >= floor]
    dropped = alphas[alphas < floor]
    if kept.size == 0:
        raise ValueError(f"Every alpha is below float32's floor ({FLOAT32_PENALTY_FLOOR:g} n = "
                         f"{floor:.4g}), where a float32 FALKON fit is not the model the "
                         "search scores: give larger alphas, or dtype='float64' (or None).")
    if dropped.size and given:
        warnings.warn(f"alphas {', '.join(f'{a:.3g}' for a in dropped)} are below float32's "
                      f"floor ({FLOAT32_PENALTY_FLOOR:g} n = {floor:.4g}) and are not "
                      "searched with dtype='float32'; dtype=None refits them in float64.",
                      UserWarning, stacklevel=4)
    return kept


def refit_dtype(alpha, dtype, weight_total):
    """The dtype a FALKON configuration with penalty ``alpha`` is refitted (and stands) in."""
    if dtype is not None:
        return dtype
    return "float32" if alpha >= FLOAT32_PENALTY_FLOOR * weight_total else "float64"


def _accuracy(y_true, y_pred):
    """``accuracy_score`` of 1-d labels, without its input checks.

    The grid scores each (fold, gamma, C): 245 times for the default grid,
    where scikit-learn's checks of the labels cost more than the comparison
    (0.4 s of an 11 s 26-class grid).
    """
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def _roc_auc(positive, scores):
    """``roc_auc_score`` of a boolean ``positive`` and 1-d ``scores``: the Mann-Whitney
    statistic of the positives' ranks (ties sharing their average rank, as the curve's
    trapezoids do), without scikit-learn's checks and curve.

    The ensemble's selection scores every candidate at every addition: on 108,000 rows
    one took 51 ms through scikit-learn and 19 ms here. With one class present it is
    scikit-learn's (which says so in one line).
    """
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return metrics.roc_auc_score(positive, scores)
    ranks = rankdata(np.asarray(scores, dtype=np.float64))
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


#: scoring name -> (function of (y_true, values), what it needs: "labels" or "scores", task)
SCORERS = {
    "accuracy": (_accuracy, "labels", "classifier"),
    "balanced_accuracy": (metrics.balanced_accuracy_score, "labels", "classifier"),
    "f1": (metrics.f1_score, "labels", "binary"),
    "f1_macro": (lambda t, p: metrics.f1_score(t, p, average="macro"), "labels", "classifier"),
    "f1_weighted": (lambda t, p: metrics.f1_score(t, p, average="weighted"), "labels",
                    "classifier"),
    "roc_auc": (_roc_auc, "scores", "binary"),
    "r2": (metrics.r2_score, "values", "regressor"),
    "neg_mean_squared_error": (lambda t, p: -metrics.mean_squared_error(t, p), "values",
                               "regressor"),
    "neg_root_mean_squared_error": (
        lambda t, p: -float(np.sqrt(metrics.mean_squared_error(t, p))), "values", "regressor"),
    "neg_mean_absolute_error": (lambda t, p: -metrics.mean_absolute_error(t, p), "values",
                                "regressor"),
}


def check_scoring(scoring, task, n_classes=None):
    """The scoring name to use (``None``: accuracy or r2); one clear error otherwise."""
    if scoring is None:
        return "accuracy" if task == "classifier" else "r2"
    if not isinstance(scoring, str) or scoring not in SCORERS:
        names = [k for k, v in SCORERS.items() if v[2] in (task, "binary")
                 or (task == "classifier" and v[2] == "classifier")]
        raise ValueError(f"Unknown scoring={scoring!r} for a {task}; choose from "
                         f"{', '.join(names)}.")
    kind = SCORERS[scoring][2]
    if task == "regressor" and kind != "regressor" or task == "classifier" and kind == "regressor":
        raise ValueError(f"scoring={scoring!r} does not score a {task}.")
    if kind == "binary" and n_classes is not None and n_classes != 2:
        raise ValueError(f"scoring={scoring!r} needs two classes; these data have {n_classes}: "
                         "use e.g. 'f1_macro' or 'accuracy'.")
    return scoring


def check_grid(name, values, *, default=None, integer=False, minimum=0.0):
    """A sorted 1-D array of distinct positive values (``default`` for None), or one clear
    error."""
    if values is None:
        values = default
    if values is None:
        return None
    if isinstance(values, (numbers.Real, np.number)) and not isinstance(values, bool):
        values = [values]
    try:
        array = np.asarray(list(values), dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers, got {values!r}.") from None
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} is empty: give at least one value.")
    bad = array[~np.isfinite(array) | (array <= minimum)]
    if bad.size:
        raise ValueError(f"{name} holds {bad[0]:g}, out of range: every value must be a "
                         f"finite number > {minimum:g}.")
    if integer and np.any(array != np.round(array)):
        raise ValueError(f"{name} must hold whole numbers, got {values!r}.")
    return np.unique(array)


def make_folds(cv, X, y, y_index, classes, seed, shuffle=True):
    """``(train, validation)`` index pairs from ``cv``, or one clear error.

    An int is stratified folds for a classifier (``y_index`` given), plain
    folds otherwise, shuffled by ``seed`` (with ``shuffle=False``, contiguous
    blocks of the rows: scikit-learn's unshuffled folds); a class with fewer rows
    than folds is refused before any work. A splitter's ``split`` or an iterable
    of pairs is taken as given, provided every training part holds every class.
    """
    if isinstance(cv, (int, np.integer)):
        if y_index is not None:
            counts = np.bincount(y_index)
            small = int(np.argmin(counts))
            if counts[small] < cv:
                raise ValueError(
                    f"Class {classes[small]!r} has {counts[small]} rows, fewer than the "
                    f"cv={cv} folds: use cv={max(int(counts[small]), 2)} or fewer, or remove "
                    "or merge that class.")
            splitter = StratifiedKFold(int(cv), shuffle=shuffle,
                                       random_state=seed if shuffle else None)
        else:
            splitter = KFold(int(cv), shuffle=shuffle, random_state=seed if shuffle else None)
        folds = list(splitter.split(X, y))
    else:
        folds = list(cv.split(X, y) if hasattr(cv, "split") else cv)
    folds = [(np.asarray(tr, dtype=np.intp), np.asarray(va, dtype=np.intp)) for tr, va in folds]
    if len(folds) < 2 or any(tr.size == 0 or va.size == 0 for tr, va in folds):
        raise ValueError("cv must give at least 2 folds, each with training and validation "
                         "rows.")
    if y_index is not None and any(np.unique(y_index[tr]).size < len(classes)
                                   for tr, _ in folds):
        raise ValueError("A fold's training rows miss a class: use stratified folds (an int "
                         "cv) or fewer folds.")
    return folds


def row_order(X, random_state, memory_budget, pairs=100_000, block=4_096):
    """How much nearer consecutive rows are than random pairs: ``(ratio, z)``.

    ``ratio`` is the mean squared distance between rows ``i`` and ``i + 1`` over that
    between row ``i`` and a random row (each column scaled by its spread between
    random pairs, a constant column left out), on at most ``pairs`` rows ``i``; ``z``
    is how many standard errors the paired difference lies above zero. Rows in the
    order of their observation (half-hours, a protein's examples one after another)
    have near-twins next to each other (``ratio`` well below 1); shuffled rows have
    ``ratio`` near 1 and ``z`` near 0. The rows are read at most ``block`` at a time,
    as many as ``memory_budget`` holds (the planner's :func:`block_rows`; sparse rows
    stay sparse).

    Examples
    --------
    >>> import numpy as np
    >>> walk = np.cumsum(np.random.RandomState(0).normal(size=(2_000, 3)), axis=0)
    >>> ratio, z = row_order(walk, 0, 2**28)
    >>> bool(ratio < 0.1 and z > 10)
    True
    >>> ratio, z = row_order(np.random.RandomState(1).permutation(walk), 0, 2**28)
    >>> bool(abs(ratio - 1) < 0.1 and z < 3)
    True
    """
    n = X.shape[0]
    if n < 3:
        return 1.0, 0.0
    rng = np.random.RandomState(random_state)
    m = min(n - 1, int(pairs))
    first = np.sort(rng.choice(n - 1, m, replace=False)) if m < n - 1 else np.arange(n - 1)
    other = rng.randint(0, n, m)
    # three rows' copies, two differences and a temporary, in float64 (or sparse)
    row_bytes = 6 * (sparse_row_bytes(X) or 8 * X.shape[1])
    block = min(block, block_rows(m, row_bytes, memory_budget, "the rows' order check"))

    def differences(start, consecutive=True):
        """Squared differences, column by column, of the random pairs from ``start`` on,
        and first of the consecutive ones (sparse rows stay sparse)."""
        i, j = first[start:start + block], other[start:start + block]
        rows = [X[k] for k in ((i + 1, j) if consecutive else (j,))]
        a = X[i]
        if hasattr(a, "toarray"):
            return [(a - r).power(2).tocsr() for r in rows]
        a = np.nan_to_num(np.asarray(a, dtype=np.float64))
        return [(a - np.nan_to_num(np.asarray(r, dtype=np.float64))) ** 2 for r in rows]

    spread = sum(np.asarray(differences(start, consecutive=False)[0].sum(axis=0)).ravel()
                 for start in range(0, m, block)) / m
    keep = np.isfinite(spread) & (spread > 0)
    if not keep.any():
        return 1.0, 0.0
    weight = np.where(keep, 1.0 / np.where(keep, spread, 1.0), 0.0)
    near, far, gap, gap2 = 0.0, 0.0, 0.0, 0.0
    for start in range(0, m, block):
        consecutive, random = (np.asarray(d @ weight).ravel() for d in differences(start))
        near, far = near + consecutive.sum(), far + random.sum()
        gap, gap2 = gap + (random - consecutive).sum(), gap2 + ((random - consecutive) ** 2).sum()
    mean = gap / m
    sd = np.sqrt(max(gap2 / m - mean ** 2, 0.0))
    ratio = near / far if far > 0 else 1.0
    z = mean / (sd / np.sqrt(m)) if sd > 0 else (np.inf if mean > 0 else 0.0)
    return float(ratio), float(z)


def laplacian_gamma_ref(X, random_state, pairs=4_000):
    """The Laplacian's reference ``gamma``: one over the mean L1 distance between
    ``pairs`` random pairs of rows, so its typical exponent is 1 (as ``gamma="scale"``'s
    is for the RBF kernel).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> laplacian_gamma_ref(X, 0) > 0
    True
    """
    rng = np.random.RandomState(random_state)
    n = X.shape[0]
    first, second = rng.randint(0, n, pairs), rng.randint(0, n, pairs)
    a, b = X[first], X[second]
    if hasattr(a, "toarray"):
        a, b = a.toarray(), b.toarray()
    mean = float(np.mean(np.abs(np.asarray(a, dtype=np.float64)
                                - np.asarray(b, dtype=np.float64)).sum(axis=1)))
    return 1.0 / mean if mean > 0 else 1.0


def score_values(scoring, y_true, values, classes=None):
    """The score ``scoring`` gives predictions ``values``: a classifier's class
    probabilities (or decision columns) of shape (n, n_classes) or (n, 1), a
    regressor's predictions.

    Examples
    --------
    >>> import numpy as np
    >>> proba = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> score_values("accuracy", np.array(["a", "b"]), proba, np.array(["a", "b"]))
    1.0
    """
    func, needs, _ = SCORERS[scoring]
    values = np.asarray(values)
    if classes is None:  # a regression
        if values.ndim == 2 and values.shape[1] == 1 and np.ndim(y_true) == 1:
            values = values[:, 0]
        return float(func(y_true, values))
    if values.ndim == 2 and values.shape[1] == 1:  # one column: positive is classes[1]
        column = values[:, 0]
        if needs == "scores":
            return float(func(y_true == classes[1], column))
        return float(func(y_true, classes[(column > 0).astype(np.intp)]))
    if needs == "scores":  # two classes: the second's column
        return float(func(y_true == classes[1], values[:, 1]))
    return float(func(y_true, classes[np.argmax(values, axis=1)]))
