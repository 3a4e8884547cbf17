"""What the exact kernel SVMs share: kernel resolution, support vectors, their scores."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import validate_data

from ..._constraints import VERBOSE, Interval, Options, validate_params
from ..._planner import GIVEN_MATRIX_ADVICE, ROW_CACHE_ADVICE, smo_fit_plan
from ..._validation import (
    check_finite_fit,
    check_sample_weight,
    iter_row_blocks,
    refuse_chunked,
    resolve_memory_budget,
)
from ...kernels import KERNEL_CONSTRAINTS, blas_on_numba_threads, make_kernel
from ...solvers import KernelRows, training_kernel_matrix

__all__ = ["EXACT_CONSTRAINTS", "ExactKernelMixin", "ExactOneOutput"]

#: Parameters of every exact (SMO) kernel model.
EXACT_CONSTRAINTS = {
    **KERNEL_CONSTRAINTS,
    "kernel": [*KERNEL_CONSTRAINTS["kernel"], Options("precomputed")],
    "tol": [Interval("real", 0, None, closed="neither")],
    "cache_size": [Interval("real", 0, None, closed="neither")],
    "max_iter": [Interval("int", -1, -1), Interval("int", 1)],
    "shrinking": ["boolean"],
    "working_set_size": [Interval("int", 2)],
    "memory_budget": ["memory"],
    "verbose": VERBOSE,
}

class ExactKernelMixin:
    """Kernel resolution and the support-vector expansion of an exact kernel model.

    The estimator has the parameters of :data:`EXACT_CONSTRAINTS`; once fitted,
    ``kernel_``, ``support_``, ``support_vectors_``, ``dual_coef_`` (one row per
    output) and ``intercept_``.
    """

    @property
    def _precomputed(self):
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _make_kernel(self, X):
        if self._precomputed:
            return "precomputed"
        return make_kernel(self.kernel, X, gamma=self.gamma, degree=self.degree,
                           coef0=self.coef0, kernel_params=self.kernel_params)

    def _check_training_matrix(self, X):
        if self._precomputed and X.shape[0] != X.shape[1]:
            raise ValueError(
                f"kernel='precomputed' needs the square training Gram matrix; got X of "
                f"shape {X.shape}."
            )

    def _memory_plan(self, X, n_variables, budget, *, matrix, threads=1, workspace=0):
        """The planner's answer for this fit (:func:`kernelscale._planner.smo_fit_plan`)."""
        n, d = X.shape
        fill = 0 if self._precomputed else \
            self.kernel_.prepare(X[:1], np.float32).bytes_per_row(X)
        return smo_fit_plan(f"{type(self).__name__} on {n} rows", n=n,
                            n_variables=n_variables, n_features=d, budget=budget,
                            cache_bytes=int(float(self.cache_size) * 2**20),
                            working_set_size=int(self.working_set_size), matrix=matrix,
                            threads=threads, workspace=workspace, fill_row_bytes=fill,
                            precomputed=self._precomputed, sparse=sp.issparse(X),
                            float32_input=X.dtype == np.float32 and X.flags.c_contiguous)

    def _fit_plan(self, X, n_variables, budget, *, matrix, given, workspace=0):
        """The fit's plan: the kernel matrix where it is ``given`` (it must fit) or wanted
        (``matrix``) and fits beside ``workspace``, else the row cache (it must fit)."""
        if matrix or given:
            plan = self._memory_plan(X, n_variables, budget, matrix=True, workspace=workspace)
            if given:
                return plan.require(GIVEN_MATRIX_ADVICE)
            if plan.fits:
                return plan
        return self._memory_plan(X, n_variables, budget, matrix=False).require(ROW_CACHE_ADVICE)

    def _keep_support(self, X, coef_full):
        """Store the rows with a non-zero coefficient in any output of ``coef_full``."""
        self.support_ = np.flatnonzero(np.any(coef_full != 0, axis=0))
        self.dual_coef_ = coef_full[:, self.support_]
        if self._precomputed:
            self.support_vectors_ = np.empty((0, X.shape[1]))
        else:
            self.support_vectors_ = X[self.support_]

    def _raw_scores(self, X, budget):
        """``sum_i dual_coef_i k(x_i, X) + intercept_``, one column per output."""
        if self._precomputed and sp.issparse(X):
            X = X.toarray()
        coef = self.dual_coef_.T
        if self._precomputed:
            out = np.empty((X.shape[0], coef.shape[1]))
            for start, stop in iter_row_blocks(X.shape[0], 8 * self.support_.size + 1, budget,
                                               what="a block of K(X, support vectors)"):
                out[start:stop] = X[start:stop][:, self.support_] @ coef
        elif self.support_.size == 0:
            out = np.zeros((X.shape[0], coef.shape[1]))
        else:
            sv = self.support_vectors_
            if sp.issparse(sv):
                sv = sv.toarray()
            # kernel blocks and numba's exp alternate, as in the fit
            with blas_on_numba_threads():
                out = self.kernel_.expand(X, sv, coef, dtype=np.float32,
                                          memory_budget=budget)
        return out + self.intercept_

    @property
    def coef_(self):
        """Weights in input space, ``dual_coef_ @ support_vectors_`` (linear kernel only).

        ndarray of shape (n_outputs, n_features), as scikit-learn's SVMs'.
        """
        if not (isinstance(self.kernel, str) and self.kernel == "linear"):
            raise AttributeError("coef_ is only available when using a linear kernel")
        sv = self.support_vectors_
        return np.asarray(self.dual_coef_ @ (sv.toarray() if sp.issparse(sv) else sv))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = not self._precomputed
        tags.input_tags.pairwise = self._precomputed
        return tags


class ExactOneOutput(ExactKernelMixin, BaseEstimator):
    """Fit plumbing of the single-output exact models."""

    # whether to compute the whole kernel matrix when it fits the budget; measured at
    # 20,000 rows (benchmarks/bench_svr.py data): SVR 35 s with it against ~50 s through
    # the row cache (most rows are support vectors and come back many times), the
    # one-class SVM 2.3 s against 1.1 s (nu = 0.1), 4.0 s against 2.6 s (nu = 0.5): it
    # touches few rows, and the cache computes only those
    _whole_matrix = True

    def _prepare(self, X, y, sample_weight, *, supervised):
        refuse_chunked(self, X)
        validate_params(self)
        if not supervised:
            X = validate_data(self, X, accept_sparse=False if self._precomputed else "csr",
                              dtype=(np.float64, np.float32))
        else:
            X, y = validate_data(self, X, y, accept_sparse=False if self._precomputed
                                 else "csr", dtype=(np.float64, np.float32), y_numeric=True)
        self._check_training_matrix(X)
        sw = check_sample_weight(sample_weight, X.shape[0])
        self.kernel_ = self._make_kernel(X)
        if not self._precomputed:
            self.kernel_.check_range(X, np.float32)  # kernel rows are float32
        budget = resolve_memory_budget(self.memory_budget)
        n = X.shape[0]
        variables = 2 * n if supervised else n
        # computing every row once beats recomputing the rows an LRU cache loses
        plan = self._fit_plan(X, variables, budget, matrix=self._whole_matrix,
                              given=self._precomputed)
        if plan.choice == "matrix":
            source = training_kernel_matrix(
                self.kernel_, X, "precomputed" if self._precomputed else None, plan.fill_bytes)
            options = self._options(plan, plan.fill_bytes, 2)
        else:
            source = KernelRows(X, self.kernel_, plan.temporary_bytes, densify=plan.densify)
            options = self._options(plan, plan.temporary_bytes, plan.cache_bytes)
        self.memory_plan_ = plan
        return X, y, sw, source, options

    def _options(self, plan, temporary_bytes, cache_bytes):
        return {"tol": float(self.tol), "max_iter": int(self.max_iter),
                "working_set_size": plan.working_set_size, "shrinking": self.shrinking,
                # verbose=1 is a bar (convergence_bar); 2 and more the solver's lines
                "verbose": int(self.verbose) if self.verbose >= 2 else 0,
                "cache_bytes": cache_bytes,
                "batch_bytes": getattr(plan, "batch_bytes", None),
                "memory_budget": temporary_bytes}

    def _store_result(self, X, coef, res, start):
        self.fit_time_ = time.perf_counter() - start
        self._keep_support(X, coef[None, :])
        self.intercept_ = np.array([res["intercept"]])
        self.n_support_ = np.array([self.support_.size])
        self.n_iter_ = int(res["n_iter"])
        self.objective_ = float(res["objective"])
        self.fit_status_ = 0 if res["converged"] else 1
        check_finite_fit(self, "dual_coef_", "intercept_")
        return self
