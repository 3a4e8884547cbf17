"""kernelscale's SVM solutions written as LIBSVM writes its model, so that scikit-learn's
own ``predict``, ``decision_function``, ``predict_proba``, ``coef_`` and pickles read them.

LIBSVM's layout (``svm_model``; scikit-learn keeps it as the private attributes of
``BaseLibSVM``): the support vectors grouped by class, in class order and training order
within a class; ``dual_coef_`` of shape (n_classes - 1, n_SV), where the coefficient of a
class-``i`` support vector in the pair ``(i, j)`` sits in row ``j - 1`` when ``i < j``
and in row ``j`` otherwise; one ``-rho`` per pair, the pair's decision positive for its
first class. scikit-learn's ``fit`` flips the signs of a two-class model afterwards.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..models import fit_sigmoid
from ..solvers import dual_coefficients, ovo_problems, pairs, solve_svm_path

__all__ = ["LibsvmModel", "ovo_model", "native_ovo_model", "pair_probabilities",
           "sparse_dual_coef", "single_model", "PROBABILITY_FOLDS"]

#: LIBSVM's internal cross-validation folds of the probability estimates
PROBABILITY_FOLDS = 5


class LibsvmModel:
    """The attributes ``libsvm.fit`` returns, as scikit-learn stores them."""

    def __init__(self, support, dual_coef, intercept, n_support, n_iter, converged,
                 prob_a=None, prob_b=None):
        self.support = np.asarray(support, dtype=np.int32)
        self.dual_coef = np.asarray(dual_coef, dtype=np.float64)
        self.intercept = np.asarray(intercept, dtype=np.float64)
        self.n_support = np.asarray(n_support, dtype=np.int32)
        self.n_iter = np.asarray(n_iter, dtype=np.int32)
        self.fit_status = 0 if converged else 1
        self.prob_a = np.empty(0) if prob_a is None else np.asarray(prob_a, np.float64)
        self.prob_b = np.empty(0) if prob_b is None else np.asarray(prob_b, np.float64)

    def store(self, estimator, X, *, precomputed, sparse, kept=None):
        """Set scikit-learn's fitted attributes (before its ``fit`` flips two-class signs).

        ``kept``: the rows of positive weight when some were not (LIBSVM trains on
        those alone, and scikit-learn's ``support_`` counts within them).
        """
        estimator.support_ = self.support
        if kept is not None and not precomputed:
            estimator.support_ = np.searchsorted(kept, self.support).astype(np.int32)
        if precomputed:
            estimator.support_vectors_ = np.empty((0, 0))
        elif sparse:
            rows = sp.csr_matrix(X[self.support])
            rows.sort_indices()
            estimator.support_vectors_ = rows
        else:
            estimator.support_vectors_ = np.ascontiguousarray(X[self.support])
        estimator._n_support = self.n_support
        estimator.dual_coef_ = sparse_dual_coef(self.dual_coef) if sparse else self.dual_coef
        estimator.intercept_ = self.intercept
        estimator._probA = self.prob_a
        estimator._probB = self.prob_b
        estimator.fit_status_ = self.fit_status
        estimator._num_iter = self.n_iter


def sparse_dual_coef(dual_coef):
    """``dual_coef_`` as scikit-learn builds it after a sparse fit: every entry stored
    (zeros included), row by row, so that its ``.data`` is the dense layout."""
    n_rows, n_sv = dual_coef.shape
    if n_sv == 0:
        return sp.csr_matrix((n_rows, 0))
    indices = np.tile(np.arange(n_sv, dtype=np.int32), n_rows)
    indptr = np.arange(0, n_rows * n_sv + 1, n_sv, dtype=np.int32)
    return sp.csr_matrix((dual_coef.ravel().copy(), indices, indptr), shape=(n_rows, n_sv))


def _layout(coef_full, y_index, n_classes):
    """Support vectors grouped by class and the (n_classes - 1, n_SV) coefficients of
    ``coef_full`` (one row per pair, in :func:`kernelscale.solvers.pairs` order)."""
    nonzero = np.any(coef_full != 0, axis=0)
    support = np.concatenate([np.flatnonzero(nonzero & (y_index == c))
                              for c in range(n_classes)]).astype(np.intp)
    sv_class = y_index[support]
    dual = np.zeros((n_classes - 1, support.size))
    for p, (i, j) in enumerate(pairs(n_classes)):
        of_i, of_j = sv_class == i, sv_class == j
        dual[j - 1, of_i] = coef_full[p, support[of_i]]
        dual[i, of_j] = coef_full[p, support[of_j]]
    return support, dual, np.bincount(sv_class, minlength=n_classes)


def ovo_model(K, y_index, n_classes, bounds, *, tol, max_iter, probability=False, seed=0):
    """Solve every pair of classes on the kernel matrix ``K`` (LIBSVM's one-vs-one).

    Parameters
    ----------
    K : ndarray of shape (n, n)
    y_index : ndarray of int of shape (n,)
    n_classes : int
    bounds : ndarray of shape (n,)
        ``C`` times the class and sample weights (0 leaves a row out).
    tol, max_iter : as LIBSVM's.
    probability : bool, default=False
        Fit LIBSVM's sigmoids on ``PROBABILITY_FOLDS``-fold decision values.
    seed : int, default=0
        Shuffles those folds.

    Returns
    -------
    model : LibsvmModel
    """
    classes = np.arange(n_classes)
    problems = [list(ovo_problems(None, classes, y_index, bounds))]
    problems, results = solve_svm_path(K, y_index, classes, bounds, Cs=[1.0],
                                       class_weight=None, multiclass="ovo", tol=tol,
                                       fold_problems=problems, max_iter=max_iter)
    solved = results[0][0]
    coef_full = dual_coefficients(problems, solved, y_index.size)
    support, dual, n_support = _layout(coef_full, y_index, n_classes)
    prob_a = prob_b = None
    if probability:
        prob_a, prob_b = pair_probabilities(K, y_index, n_classes, bounds, tol=tol,
                                            max_iter=max_iter, seed=seed)
    return LibsvmModel(support, dual, [r["intercept"] for r in solved], n_support,
                       [r["n_iter"] for r in solved], all(r["converged"] for r in solved),
                       prob_a, prob_b)


def pair_probabilities(K, y_index, n_classes, bounds, *, tol, max_iter, seed):
    """LIBSVM's ``svm_binary_svc_probability`` for every pair: ``(probA, probB)``.

    The rows are shuffled by ``seed`` and cut into ``PROBABILITY_FOLDS`` folds; each
    fold's pairs are solved on the other folds' rows and give decision values to the
    fold's own; a pair whose training part holds one class only gives +1 or -1, as
    LIBSVM does. Each pair's sigmoid ``1 / (1 + exp(A f + B))`` of its first class is
    fitted to those values.
    """
    n = y_index.size
    classes = np.arange(n_classes)
    order = np.random.RandomState(seed).permutation(n)
    held = [order[f * n // PROBABILITY_FOLDS:(f + 1) * n // PROBABILITY_FOLDS]
            for f in range(PROBABILITY_FOLDS)]
    per_fold, train = [], []
    for rows in held:
        weights = bounds.copy()
        weights[rows] = 0.0
        per_fold.append(list(ovo_problems(None, classes, y_index, weights)))
        train.append(np.setdiff1d(np.arange(n), rows))
    problems, results = solve_svm_path(K, y_index, classes, bounds, Cs=[1.0],
                                       class_weight=None, multiclass="ovo", tol=tol,
                                       folds=train, fold_problems=per_fold,
                                       max_iter=max_iter)
    decision = np.zeros((len(problems), n))
    in_fold = np.empty(n, dtype=np.intp)
    for f, rows in enumerate(held):
        in_fold[rows] = f
    for f in range(len(held)):
        for p, (members, y_pm, _) in enumerate(problems):
            weights = per_fold[f][p][2]
            test = members[in_fold[members] == f]
            positive, negative = np.any(weights[y_pm > 0] > 0), np.any(weights[y_pm < 0] > 0)
            if positive and negative:
                coef = results[f][0][p]["alpha"] * y_pm
                decision[p, test] = K[np.ix_(test, members)] @ coef + \
                    results[f][0][p]["intercept"]
            else:
                decision[p, test] = 1.0 if positive else (-1.0 if negative else 0.0)
    prob_a, prob_b = np.empty(len(problems)), np.empty(len(problems))
    for p, (members, y_pm, _) in enumerate(problems):
        prob_a[p], prob_b[p] = fit_sigmoid(decision[p, members], y_pm > 0)
    return prob_a, prob_b


def native_ovo_model(model, y_index, n_classes):
    """A fitted :class:`kernelscale.KernelSVC` (trained on class indices) in LIBSVM's layout.

    Its two-class problem is positive for class 1 (scikit-learn's public sign), LIBSVM's
    for class 0: that problem's signs are flipped; its pairs are LIBSVM's already.
    """
    coef_full = np.zeros((model.dual_coef_.shape[0], y_index.size))
    coef_full[:, model.support_] = model.dual_coef_
    intercept = np.asarray(model.intercept_, dtype=np.float64)
    if n_classes == 2:
        coef_full, intercept = -coef_full, -intercept
    support, dual, n_support = _layout(coef_full, y_index, n_classes)
    return LibsvmModel(support, dual, intercept, n_support, model.n_iter_,
                       model.fit_status_ == 0 if hasattr(model, "fit_status_") else True)


def single_model(coef, intercept, n_iter, converged):
    """A one-problem model (epsilon-SVR, the one-class SVM): the rows with a non-zero
    coefficient, LIBSVM's two-entry support count."""
    support = np.flatnonzero(coef != 0)
    return LibsvmModel(support, coef[support][None, :], [intercept],
                       [support.size, support.size], [n_iter], converged)
