"""The binary problems of a classifier: class weights, one-vs-rest and one-vs-one problems,
and the one-vs-one vote (the exact SVM, its search, and the models that train per class)."""

from __future__ import annotations

import functools
import numbers

import numpy as np

__all__ = ["pairs", "ovo_votes", "ovo_classes", "dual_coefficients", "ovr_problems",
           "ovo_problems", "take_rows", "CLASS_WEIGHTS", "base_weights", "class_factors",
           "balanced_class_factors", "plus_minus_targets", "ovr_targets", "balanced_factors"]

#: the class_weight strings: scikit-learn's "balanced", and per-binary-problem balancing
CLASS_WEIGHTS = ("balanced", "balanced_binary")

def base_weights(class_weight, classes, y_index, sample_weight):
    """Per-sample weights from ``sample_weight`` and ``class_weight``.

    Returns ``(weights, per_problem)``: ``per_problem`` is True for
    ``"balanced_binary"``, which :func:`ovr_targets` (or the one-vs-one pairs)
    apply to each binary problem; ``"balanced"`` is applied here, to the classes.
    """
    if isinstance(class_weight, str) and class_weight == "balanced":
        counts = np.bincount(y_index, weights=sample_weight, minlength=len(classes))
        return sample_weight * balanced_class_factors(counts)[y_index], False
    factors = class_factors(class_weight, classes)
    per_problem = isinstance(class_weight, str) and class_weight == "balanced_binary"
    return sample_weight * factors[y_index], per_problem


def class_factors(class_weight, classes):
    """Per-class multipliers of a dict ``class_weight`` (ones for None and the strings).

    Raises for an unknown string, a label not in ``classes`` or a negative weight.
    """
    factors = np.ones(len(classes))
    if class_weight is None:
        return factors
    if isinstance(class_weight, str):
        if class_weight not in CLASS_WEIGHTS:
            raise ValueError(
                f"Unknown class_weight={class_weight!r}; expected None, 'balanced', "
                "'balanced_binary' (the SVMs) or a dict {label: weight}."
            )
        return factors
    if not isinstance(class_weight, dict):
        raise TypeError(f"class_weight must be None, 'balanced' or a dict, got {class_weight!r}.")
    for label, weight in class_weight.items():
        hits = np.flatnonzero(classes == label)
        if hits.size == 0:
            raise ValueError(
                f"class_weight names label {label!r}, which is not in y "
                f"(classes: {list(classes)})."
            )
        if not isinstance(weight, numbers.Real) or not weight >= 0:
            raise ValueError(f"class_weight[{label!r}] must be a number >= 0, got {weight!r}.")
        factors[hits[0]] = float(weight)
    return factors


def balanced_class_factors(totals):
    """``total / (n_classes * total_c)``: the factors that give every class equal weight."""
    return totals.sum() / (len(totals) * np.maximum(totals, 1e-300))


def plus_minus_targets(y_index, n_classes):
    """+1 / -1 targets: one column for two classes, one per class otherwise."""
    if n_classes == 2:
        return np.where(y_index == 1, 1.0, -1.0)[:, None]
    Y = -np.ones((len(y_index), n_classes))
    Y[np.arange(len(y_index)), y_index] = 1.0
    return Y


def ovr_targets(y_index, n_classes, weights, balanced):
    """Yield ``(y_pm, f_pos, f_neg)`` for each one-vs-rest problem (one if two classes).

    Row i of a problem weighs ``weights_i * (f_pos if y_pm_i > 0 else f_neg)``;
    the factors are 1 unless ``balanced`` (``class_weight="balanced_binary"``).
    """
    positives = [1] if n_classes == 2 else range(n_classes)
    for c in positives:
        is_pos = y_index == c
        y_pm = np.where(is_pos, 1.0, -1.0)
        if not balanced:
            yield y_pm, 1.0, 1.0
            continue
        yield (y_pm, *balanced_factors(weights, is_pos))


def balanced_factors(weights, is_pos):
    """``(f_pos, f_neg)`` that give both sides of a binary problem equal total weight."""
    total = weights.sum()
    w_pos = weights[is_pos].sum()
    return total / (2.0 * max(w_pos, 1e-300)), total / (2.0 * max(total - w_pos, 1e-300))



def pairs(n_classes):
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


def ovo_classes(scores, n_classes, break_ties=False):
    """Class indices from one-vs-one scores by vote.

    LIBSVM's rule (``break_ties=False``): the most votes, a tie going to the
    class listed first; ``break_ties=True``: a tie goes to the larger summed
    confidence (the arg-max of :func:`ovo_votes`), as scikit-learn's
    ``SVC(break_ties=True)``.
    """
    if break_ties:
        return np.argmax(ovo_votes(scores, n_classes), axis=1)
    # the counts alone: each pair adds 1 to its second class, moved to its first
    # where its score is > 0 (one product; a grid search votes ~10^3 times)
    first, second = _pair_members(n_classes)
    counts = (scores > 0).astype(np.float64) @ (first - second) + second.sum(axis=0)
    return np.argmax(counts, axis=1)


def ovo_votes(scores, n_classes):
    """Classes from one-vs-one scores: votes, ties broken by summed confidence.

    ``scores[:, p]`` > 0 votes for the first class of pair ``p`` (in the order
    (0, 1), (0, 2), ..., (1, 2), ...). The confidences are squashed into
    (-1/3, 1/3) so that they only break ties between equal vote counts.
    """
    first, second = _pair_members(n_classes)
    positive = (scores > 0).astype(np.float64)
    votes = positive @ first + (1.0 - positive) @ second
    confidence = scores @ (first - second)
    squashed = confidence / (3.0 * (np.abs(confidence) + 1.0))
    return votes + squashed


@functools.lru_cache(maxsize=8)
def _pair_members(n_classes):
    """Pair -> class indicator matrices: each pair votes for its first class or its second.

    Cached (read-only): a grid search votes once per (fold, gamma, C).
    """
    index = np.array(pairs(n_classes), dtype=np.intp).reshape(-1, 2)
    first = np.zeros((len(index), n_classes))
    second = np.zeros((len(index), n_classes))
    first[np.arange(len(index)), index[:, 0]] = 1.0
    second[np.arange(len(index)), index[:, 1]] = 1.0
    first.flags.writeable = False
    second.flags.writeable = False
    return first, second


def ovr_problems(class_weight, classes, y_index, sw):
    """Yield ``(None, y_pm, C factors)`` per one-vs-rest problem (all rows each)."""
    weights, balanced = base_weights(class_weight, classes, y_index, sw)
    for y_pm, f_pos, f_neg in ovr_targets(y_index, len(classes), weights, balanced):
        yield None, y_pm, weights * np.where(y_pm > 0, f_pos, f_neg)


def ovo_problems(class_weight, classes, y_index, sw):
    """Yield ``(rows, y_pm, C factors)`` per pair of classes, in :func:`pairs` order."""
    weights, balanced = base_weights(class_weight, classes, y_index, sw)
    for i, j in pairs(len(classes)):
        members = np.flatnonzero((y_index == i) | (y_index == j))
        y_pm = np.where(y_index[members] == i, 1.0, -1.0)
        w = weights[members]
        if balanced:
            f_pos, f_neg = balanced_factors(w, y_pm > 0)
            w = w * np.where(y_pm > 0, f_pos, f_neg)
        yield members, y_pm, w


def take_rows(X, members, precomputed):
    if precomputed:
        return X[np.ix_(members, members)]
    return X[members]


def dual_coefficients(problems, results, n_samples):
    """``y_i alpha_i`` of every binary problem over all training rows, (n_problems, n)."""
    coef_full = np.zeros((len(results), n_samples))
    for p, ((members, y_pm, _), res) in enumerate(zip(problems, results)):
        # subgradient coefficients are signed already (beta = y alpha)
        coef = res["alpha"] * (1.0 if res.get("signed") else y_pm)
        coef_full[p, slice(None) if members is None else members] = coef
    return coef_full
