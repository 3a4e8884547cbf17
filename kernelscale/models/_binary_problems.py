"""The binary problems of a multiclass kernel SVM: one-vs-rest, one-vs-one, and the vote."""

from __future__ import annotations

import functools

import numpy as np

from ._multiclass import balanced_factors, base_weights, ovr_targets

__all__ = ["pairs", "ovo_votes", "ovo_classes", "dual_coefficients", "ovr_problems",
           "ovo_problems", "take_rows"]


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
