"""scikit-learn's ``LinearSVC`` with kernelscale's linear SVM solvers inside.

scikit-learn's ``fit`` (its validation, ``classes_``, ``dual="auto"``, the
Crammer-Singer two-class form) with LIBLINEAR's training call answered by
kernelscale: dual coordinate descent (:func:`kernelscale.solvers.dual_cd`,
LIBLINEAR's algorithm, Hsieh et al. 2008) for ``dual=True``, Newton's method on the
squared-hinge primal (:func:`kernelscale.solvers.squared_hinge_newton`) for
``dual=False``; the intercept is LIBLINEAR's, a constant feature of value
``intercept_scaling``, regularized. What kernelscale has no solver for
(negative sample weights, the combinations scikit-learn refuses) runs LIBLINEAR, with
one line on the ``kernelscale`` logger. ``penalty="l1"`` is LIBLINEAR's L1 coordinate
descent and ``multi_class="crammer_singer"`` its sequential dual, both re-implemented
in :mod:`kernelscale.solvers` (``l1_svc_cd``, ``crammer_singer_cd``).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm._base import _fit_liblinear
from sklearn.svm._classes import _validate_dual_parameter
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from .._validation import resolve_memory_budget
from ..solvers import crammer_singer_cd, dual_cd, l1_svc_cd, squared_hinge_newton
from ._routing import documented, original, record

__all__ = ["LinearSVC"]


class LinearSVC(original("LinearSVC")):
    __doc__ = documented("LinearSVC")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C",
                             accept_large_sparse=False)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        dual = _validate_dual_parameter(self.dual, self.loss, self.penalty, self.multi_class,
                                        X)
        reason = self._unsupported(dual, sample_weight)
        if reason is None:
            coef, intercept, n_iter = self._fit_kernelscale(X, y, sample_weight, dual)
            record(self, "fit", how=f"{self._solver_name(dual)}, {X.shape[0]} rows")
        else:
            record(self, "fit", reason)
            coef, intercept, n_iter = _fit_liblinear(
                X, y, self.C, self.fit_intercept, self.intercept_scaling, self.class_weight,
                self.penalty, dual, self.verbose, self.max_iter, self.tol,
                self.random_state, self.multi_class, self.loss,
                sample_weight=sample_weight)
        self.coef_, self.intercept_ = coef, intercept
        self.n_iter_ = np.max(n_iter).item()
        if self.multi_class == "crammer_singer" and len(self.classes_) == 2:
            self.coef_ = (self.coef_[1] - self.coef_[0]).reshape(1, -1)
            if self.fit_intercept:
                self.intercept_ = np.array([self.intercept_[1] - self.intercept_[0]])
        return self

    def _solver_name(self, dual):
        if self.multi_class == "crammer_singer":
            return "Crammer-Singer sequential dual"
        if self.penalty == "l1":
            return "L1 coordinate descent"
        return "dual coordinate descent" if dual else "Newton"

    def _unsupported(self, dual, sample_weight):
        if self.multi_class != "crammer_singer" and self.penalty == "l1" and (
                self.loss == "hinge" or dual):
            return "penalty='l1' with loss='hinge' or dual=True (scikit-learn's own error)"
        if not dual and self.loss == "hinge" and self.multi_class != "crammer_singer":
            return "loss='hinge' with dual=False (scikit-learn's own error for it)"
        if sample_weight is not None and np.any(np.asarray(sample_weight) < 0):
            return "negative sample weights (LIBLINEAR's rule for them)"
        return None

    def _fit_kernelscale(self, X, y, sample_weight, dual):
        """LIBLINEAR's one-vs-rest problems: ``(coef, intercept, n_iter)``."""
        if len(self.classes_) < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the data, "
                             f"but the data contains only one class: {self.classes_[0]!r}")
        if self.fit_intercept and self.intercept_scaling <= 0:
            raise ValueError(f"Intercept scaling is {self.intercept_scaling!r} but needs to "
                             "be greater than 0. To disable fitting an intercept, set "
                             "fit_intercept=False.")
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        cw = compute_class_weight(self.class_weight, classes=self.classes_, y=y,
                                  sample_weight=sample_weight)
        y_index = np.searchsorted(self.classes_, y)
        bias = float(self.intercept_scaling) if self.fit_intercept else 0.0
        seed = check_random_state(self.random_state).randint(np.iinfo("i").max)
        bounds = float(self.C) * sw * cw[y_index]
        if self.multi_class == "crammer_singer":  # one problem over every class
            W, n_iter = crammer_singer_cd(X, y_index, len(self.classes_), bounds, bias=bias,
                                          tol=float(self.tol), max_iter=int(self.max_iter),
                                          seed=int(seed))
            return self._split_bias(W, bias, [n_iter])
        positives = [1] if len(self.classes_) == 2 else range(len(self.classes_))
        weights, iterations = [], []
        for c in positives:
            y_pm = np.where(y_index == c, 1.0, -1.0)
            if self.penalty == "l1":
                w, n_iter = l1_svc_cd(X, y_pm, bounds, bias=bias, tol=float(self.tol),
                                      max_iter=int(self.max_iter), seed=int(seed))
            elif dual:
                w, _, n_iter, _ = dual_cd(X, y_pm, bounds, loss=self.loss, bias=bias,
                                          tol=float(self.tol), max_iter=int(self.max_iter),
                                          seed=int(seed))
            else:
                w, n_iter, _ = squared_hinge_newton(
                    X, y_pm, bounds, bias=bias, tol=float(self.tol),
                    max_iter=int(self.max_iter),
                    memory_budget=resolve_memory_budget(None) // 4)
            weights.append(w)
            iterations.append(n_iter)
        return self._split_bias(np.vstack(weights), bias, iterations)

    def _split_bias(self, W, bias, iterations):
        """``(coef, intercept, n_iter)`` of LIBLINEAR's weights, the bias's last."""
        if max(iterations) >= self.max_iter:
            warnings.warn("Liblinear failed to converge, increase the number of iterations.",
                          ConvergenceWarning, stacklevel=3)
        if self.fit_intercept:
            return W[:, :-1], bias * W[:, -1], np.asarray(iterations)
        return W[:, :-1], 0.0, np.asarray(iterations)
