"""What the exact kernel SVMs share: kernel resolution, support vectors, their scores."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._constraints import VERBOSE, Interval, Options
from .._planner import smo_plan
from .._validation import iter_row_blocks
from ..kernels import KERNEL_CONSTRAINTS, blas_on_numba_threads, make_kernel

__all__ = ["EXACT_CONSTRAINTS", "ExactKernelMixin", "EXACT_PARAMS_DOC"]

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

EXACT_PARAMS_DOC = """kernel : {"rbf", "linear", "polynomial", "poly", "laplacian", \
"precomputed"} or callable, default="rbf"
        A callable is called as ``kernel(X_block, Y, **kernel_params)`` and must
        return the Gram block. "precomputed": ``X`` is the training Gram matrix
        in ``fit`` and ``K(test, train)`` at prediction.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel scale; "scale" is ``1 / (n_features X.var())`` as in scikit-learn.
    coef0 : float, default=0.0
        Constant of the polynomial kernel.
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel.
    tol : float, default=1e-3
        Stop when the maximal violation of the optimality conditions is below it
        (LIBSVM's ``eps``).
    cache_size : float, default=256
        Kernel-row cache in MB (2**20 bytes), at most: the memory plan gives the
        cache what ``memory_budget`` leaves beside the prepared rows, the
        working set's blocks and the kernel's temporaries, when that is less.
    max_iter : int, default=-1
        Cap on SMO pair updates; -1 means LIBSVM's ``max(10^7, 100 n)``.
        Reaching it gives a ConvergenceWarning.
    shrinking : bool, default=True
        Drop variables stuck at a bound from the active set (LIBSVM's rule).
    working_set_size : int, default=1024
        Variables per working set; capped by what the cache holds.
    memory_budget : int, default=None
        Bytes the fit may hold: the kernel matrix (when it fits, with the
        solving threads' block copies) or the row cache with the prepared rows,
        the working set's blocks and the kernel's temporaries; and at
        prediction the kernel blocks. A budget too small for two kernel rows
        is an error naming the budget that would do. None uses
        :func:`kernelscale.get_config`.
    verbose : int, default=0
        1: a progress bar (for KernelSVR and KernelOneClassSVM, the share of the
        way from the first optimality gap to ``tol``); k >= 2: print the
        solver's progress every k outer iterations; 0: silent (a bar when the
        library's ``show_progress`` is on, as on the command line)."""


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
        """The planner's answer for this fit (:func:`kernelscale._planner.smo_plan`)."""
        n, d = X.shape
        if self._precomputed:
            # the matrix is the input; only a float32 copy of a float64 one is ours
            prepared, fill = 0, 0
            held = 0 if X.dtype == np.float32 and X.flags.c_contiguous else 4 * n * n
        else:
            dense_copy = not sp.issparse(X) or 4 * n * d <= budget // 4
            prepared = 4 * n * d if dense_copy else 0
            fill = self.kernel_.prepare(X[:1], np.float32).bytes_per_row(X)
            held = None
        plan = smo_plan(f"{type(self).__name__} on {n} rows", n_points=n,
                        n_variables=n_variables, n_features=d, budget=budget,
                        cache_bytes=int(float(self.cache_size) * 2**20),
                        working_set_size=int(self.working_set_size), matrix=matrix,
                        matrix_threads=threads, workspace=workspace, fill_row_bytes=fill,
                        prepared_bytes=prepared)
        if held is not None and matrix:
            plan.parts["kernel matrix"] = held
        plan.densify = bool(prepared) or not sp.issparse(X)
        return plan

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
