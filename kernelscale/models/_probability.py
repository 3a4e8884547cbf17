"""Probabilities of an SVM: Platt scaling on cross-validated decision values, coupled pairs.

As LIBSVM (``-b 1``) and scikit-learn's ``SVC(probability=True)``: decision
values of rows the model was not trained on (an internal cross-validation)
are fitted by a sigmoid ``P(first class | f) = 1 / (1 + exp(A f + B))`` per
binary problem (Platt 2000, with the targets and the Newton iteration of Lin,
Lin & Weng 2007); the pairwise probabilities of one-vs-one training are
coupled into one distribution per row (Wu, Lin & Weng 2004, their method 2,
solved exactly as a small linear system instead of LIBSVM's fixed-point
iteration); one-vs-rest probabilities are normalised to sum to 1.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from .._validation import available_when
from ..solvers import pairs
from ._shells import fitted_scores

__all__ = ["fit_sigmoid", "sigmoid", "per_class", "couple_pairs", "ProbabilityMixin",
           "PROBABILITY_FOLDS",
           "LogisticProbabilityMixin"]

#: internal cross-validation folds of ``probability=True`` (LIBSVM's 5)
PROBABILITY_FOLDS = 5


def _sigmoid_loss(f, t, A, B):
    z = f * A + B
    # log(1 + exp(-|z|)) keeps both branches of LIBSVM's expression finite
    return float(np.sum(np.where(z >= 0, t * z, (t - 1) * z) + np.log1p(np.exp(-np.abs(z)))))


def fit_sigmoid(decision, positive, max_iter=100):
    """``(A, B)`` of the sigmoid ``1 / (1 + exp(A f + B))`` fitted to ``P(positive | f)``.

    Parameters
    ----------
    decision : ndarray of shape (n,)
        Decision values (from rows the model was not trained on).
    positive : ndarray of bool, shape (n,)
        Which rows belong to the class the sigmoid gives the probability of.
    max_iter : int, default=100

    Returns
    -------
    A, B : float

    Examples
    --------
    >>> import numpy as np
    >>> A, B = fit_sigmoid(np.array([-2.0, -1.0, 1.0, 2.0]), np.array([0, 0, 1, 1], bool))
    >>> bool(A < 0)
    True
    """
    f = np.asarray(decision, dtype=np.float64)
    n_pos = int(np.sum(positive))
    n_neg = f.size - n_pos
    # Platt's regularised targets: never exactly 0 or 1
    t = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    loss = _sigmoid_loss(f, t, A, B)
    for _ in range(max_iter):
        z = f * A + B
        p = np.where(z >= 0, np.exp(-np.abs(z)) / (1 + np.exp(-np.abs(z))),
                     1 / (1 + np.exp(-np.abs(z))))
        q = 1.0 - p
        d2 = p * q
        h11, h22, h21 = 1e-12 + np.sum(f * f * d2), 1e-12 + np.sum(d2), np.sum(f * d2)
        d1 = t - p
        g1, g2 = np.sum(f * d1), np.sum(d1)
        if abs(g1) < 1e-5 and abs(g2) < 1e-5:
            break
        det = h11 * h22 - h21 * h21  # > 0: the 1e-12 ridge keeps it so
        dA, dB = -(h22 * g1 - h21 * g2) / det, -(-h21 * g1 + h11 * g2) / det
        slope = g1 * dA + g2 * dB
        step = 1.0
        while step >= 1e-10:
            new = _sigmoid_loss(f, t, A + step * dA, B + step * dB)
            if new < loss + 1e-4 * step * slope:
                A, B, loss = A + step * dA, B + step * dB, new
                break
            step /= 2
        else:
            break  # no decrease along Newton's direction: at the optimum to round-off
    return float(A), float(B)


def sigmoid(decision, A, B):
    """``1 / (1 + exp(A f + B))``, computed without overflow."""
    z = np.asarray(decision, dtype=np.float64) * A + B
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, e / (1 + e), 1 / (1 + e))


def couple_pairs(r, n_classes):
    """Class probabilities from pairwise ones (Wu, Lin & Weng's method 2).

    ``r[:, p]`` is ``P(i | i or j)`` for the ``p``-th pair ``(i, j)`` in
    :func:`pairs` order. Minimises ``sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2``
    over the simplex: the equality-constrained minimiser, one ``(k+1)``-square
    solve per row, is non-negative (their Theorem 2), so no iteration is needed.
    """
    n = r.shape[0]
    R = np.zeros((n, n_classes, n_classes))
    for p, (i, j) in enumerate(pairs(n_classes)):
        R[:, i, j] = r[:, p]
        R[:, j, i] = 1.0 - r[:, p]
    # Q_tt = sum_{j != t} r_jt^2, Q_tj = -r_jt r_tj
    Q = -np.transpose(R, (0, 2, 1)) * R
    idx = np.arange(n_classes)
    Q[:, idx, idx] = np.sum(np.transpose(R, (0, 2, 1)) ** 2, axis=2)
    system = np.zeros((n, n_classes + 1, n_classes + 1))
    system[:, :n_classes, :n_classes] = Q
    system[:, :n_classes, n_classes] = 1.0
    system[:, n_classes, :n_classes] = 1.0
    rhs = np.zeros((n, n_classes + 1, 1))
    rhs[:, n_classes] = 1.0
    P = np.linalg.solve(system, rhs)[:, :n_classes, 0]
    P = np.clip(P, 0.0, None)  # round-off only
    return P / P.sum(axis=1, keepdims=True)


def _has_probability(estimator):
    if not estimator.probability:
        raise AttributeError("predict_proba is available with probability=True (set at fit "
                             "time: the sigmoids are fitted then).")
    return True


def per_class(r):
    """Probabilities from one sigmoid per class (one column for two classes), normalised."""
    if r.shape[1] == 1:
        return np.column_stack([1.0 - r[:, 0], r[:, 0]])
    return r / np.maximum(r.sum(axis=1, keepdims=True), np.finfo(float).tiny)


class _LogProbability:
    """``predict_log_proba`` wherever the class's ``predict_proba`` is available."""

    @available_when(lambda estimator: estimator.predict_proba is not None)
    def predict_log_proba(self, X):
        """``log(predict_proba(X))``, where ``predict_proba`` is available."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class ProbabilityMixin(_LogProbability):
    """``probability=True`` for an SVM whose ``_problem_scores(X)`` gives one column per
    binary problem (pairs in :func:`pairs` order, or one per class, or one for two
    classes with positive scores favouring ``classes_[1]``)."""

    #: one-vs-one pairs (``KernelSVC`` overrides it); otherwise one problem per class
    _votes = False

    def _problem_scores(self, X):
        return fitted_scores(self, X)

    def _check_probability_data(self, y_index):
        counts = np.bincount(y_index, minlength=len(self.classes_))
        # one class: the estimator's own error ("needs 2 classes") says it better
        if len(counts) >= 2 and counts.min() < PROBABILITY_FOLDS:
            raise ValueError(
                f"probability=True fits its sigmoids on a {PROBABILITY_FOLDS}-fold internal "
                f"cross-validation; class {self.classes_[np.argmin(counts)].tolist()!r} has "
                f"{counts.min()} rows: give each class at least {PROBABILITY_FOLDS} rows or "
                "set probability=False.")

    def _fit_probability(self, X, y, y_index, sample_weight):
        """Fit ``probA_`` / ``probB_`` on decision values of held-out rows."""
        folds = StratifiedKFold(PROBABILITY_FOLDS, shuffle=True,
                                random_state=self.random_state).split(X, y_index)
        scores = None
        for train, val in folds:
            model = clone(self).set_params(probability=False, verbose=0)
            model.fit(X[train], y[train], sample_weight[train])
            fold_scores = model._problem_scores(X[val])
            if scores is None:
                scores = np.empty((X.shape[0], fold_scores.shape[1]))
            scores[val] = fold_scores
        A, B = [], []
        for p in range(scores.shape[1]):
            rows, positive = self._problem_rows(p, y_index)
            a, b = fit_sigmoid(scores[rows, p], positive)
            A.append(a)
            B.append(b)
        self.probA_, self.probB_ = np.array(A), np.array(B)

    def _problem_rows(self, p, y_index):
        """Rows of binary problem ``p`` and which of them are its positive class."""
        k = len(self.classes_)
        if k == 2:
            return slice(None), y_index == 1
        if self._votes:
            i, j = pairs(k)[p]
            rows = np.flatnonzero((y_index == i) | (y_index == j))
            return rows, y_index[rows] == i
        return slice(None), y_index == p

    @available_when(_has_probability)
    def predict_proba(self, X):
        """Class probabilities (``probability=True`` only).

        ``predict`` stays the model's own rule (the vote of the pairs, or the
        sign), as in LIBSVM and scikit-learn's SVC, so it can differ from
        ``argmax(predict_proba)`` on rows near a boundary: the probabilities
        come from sigmoids fitted on held-out decision values, not from the
        model's decision values themselves.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order.
        """
        r = sigmoid(self._problem_scores(X), self.probA_, self.probB_)
        if self._votes:
            return couple_pairs(r, len(self.classes_))
        return per_class(r)


def _has_log_loss(estimator):
    if estimator.loss != "log_loss":
        raise AttributeError("predict_proba is available with loss='log_loss' (a logistic "
                             f"model); loss={estimator.loss!r} gives only decision values.")
    return True


class LogisticProbabilityMixin(_LogProbability):
    """``predict_proba`` of a one-vs-rest logistic model (``loss="log_loss"``): each
    class's ``1 / (1 + exp(-f))``, normalised over the classes for more than two, as
    scikit-learn's one-vs-rest ``LogisticRegression`` does. No calibration is fitted:
    the model's loss is the log-likelihood, so its scores are log-odds already."""

    @available_when(_has_log_loss)
    def predict_proba(self, X):
        """Class probabilities (``loss="log_loss"`` only).

        ``argmax(predict_proba)`` equals ``predict`` (both take the largest score).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order.
        """
        return per_class(sigmoid(fitted_scores(self, X), -1.0, 0.0))
