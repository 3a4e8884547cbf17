"""scikit-learn's ``SVC``, ``SVR`` and ``OneClassSVM`` with kernelscale's SMO inside.

Each class is scikit-learn's own (its name, signature, defaults, validation, ``predict``
and every fitted attribute) with the two methods that call LIBSVM's training replaced:
``_dense_fit`` and ``_sparse_fit``. They compute the float64 kernel matrix with
:mod:`kernelscale.kernels`, solve it with kernelscale's SMO (one-vs-one pairs through
:func:`kernelscale.solvers.solve_svm_path`, as LIBSVM pairs its classes) and store the
solution in LIBSVM's layout (:mod:`._libsvm_layout`), so scikit-learn's ``predict`` reads
it in float64 (its tests ask for 1e-6 agreements); ``predict`` and
``decision_function`` compute the same values with kernelscale's kernels in blocks
(:mod:`._libsvm_predict`), LIBSVM's code reading one row at a time. Past
``FLOAT64_MATRIX_BYTES``, the fit is kernelscale's own estimator's (float32 kernel rows
through a cache, or the float32 matrix), converted the same way. What kernelscale does
not do falls back to scikit-learn's code for that fit, with one line on the
``kernelscale`` logger.
"""

from __future__ import annotations

import threading
import warnings
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from .._parallel import one_thread
from .._validation import resolve_memory_budget
from ..kernels import make_kernel
from ..models import KernelOneClassSVM, KernelSVC, KernelSVR
from ..solvers import one_class_start, smo_dense
from ._libsvm_layout import native_ovo_model, ovo_model, single_model
from ._libsvm_predict import SMALL_MATRIX_ENTRIES, decision_values, predicted
from ._routing import documented, original, record

__all__ = ["SVC", "SVR", "OneClassSVM", "FLOAT64_MATRIX_BYTES"]

#: the largest float64 matrix of a problem's variables the patched fit holds (n x n for
#: a classifier or the one-class SVM, 2n x 2n for epsilon-SVR): 512 MB, 8,192 rows of a
#: classifier; LIBSVM's models there fit in seconds, and a larger problem goes to the
#: estimator whose float32 kernel rows come through a cache
FLOAT64_MATRIX_BYTES = 512 * 2**20

#: a sparse X is densified for its kernel matrix up to this size (the matrix itself
#: is dense and n / d times larger in the usual case)
DENSE_COPY_BYTES = 256 * 2**20
# fits of at most SMALL_MATRIX_ENTRIES also reuse a per-thread buffer: a fresh 2.6 MB
# matrix cost about 1 ms of page faults a fit
_SCRATCH = threading.local()
_NOT_FINITE = ("The dual coefficients or intercepts are not finite. The input data may "
               "contain large values and need to be preprocessed.")


def _weights(sample_weight, n):
    """LIBSVM's rule: rows of weight <= 0 take no part (scikit-learn keeps them in X)."""
    if sample_weight.size == 0:
        return np.ones(n)
    weights = np.where(sample_weight > 0, sample_weight, 0.0)
    if not np.any(weights > 0):
        raise ValueError("Invalid input - all samples have zero or negative weights.")
    return weights


class _KernelscaleLibsvm:
    """The LIBSVM training calls of ``BaseLibSVM``, answered by kernelscale."""

    def _dense_fit(self, X, y, sample_weight, solver_type, kernel, random_seed):
        if callable(self.kernel):
            # scikit-learn's own rule: keep X to compute K(X_test, X) at prediction
            self._BaseLibSVM__Xfit = X
            X = self._compute_kernel(X)
            if X.shape[0] != X.shape[1]:
                raise ValueError("X.shape[0] should be equal to X.shape[1]")
        if not self._fit_kernelscale(X, y, sample_weight, kernel, random_seed, sparse=False):
            # the kernel is computed already: scikit-learn's code gets it precomputed
            super()._dense_fit(X, y, sample_weight, solver_type, kernel, random_seed)

    def _sparse_fit(self, X, y, sample_weight, solver_type, kernel, random_seed):
        X.data = np.asarray(X.data, dtype=np.float64, order="C")
        X.sort_indices()
        if not self._fit_kernelscale(X, y, sample_weight, kernel, random_seed, sparse=True):
            super()._sparse_fit(X, y, sample_weight, solver_type, kernel, random_seed)

    # prediction: the model read by kernelscale's kernels (LIBSVM's where those return
    # None: a callable or precomputed kernel, gamma=0)
    def _dense_predict(self, X):
        return _either(predicted(self, X), super()._dense_predict, X)

    def _sparse_predict(self, X):
        return _either(predicted(self, X), super()._sparse_predict, X)

    def _dense_decision_function(self, X):
        return _either(decision_values(self, X), super()._dense_decision_function, X)

    def _sparse_decision_function(self, X):
        return _either(decision_values(self, X), super()._sparse_decision_function, X)

    def _unsupported(self, kernel, n):
        """Why kernelscale does not run this fit, or None."""
        if kernel != "precomputed" and self._gamma == 0:
            return "gamma=0 (a constant kernel)"
        if self._impl == "c_svc" and self._effective_probability and n > _largest_rows(
                self._impl):
            return (f"probability=True on {n} rows, past the float64 matrix's "
                    f"{_largest_rows(self._impl)}")
        return None

    def _fit_kernelscale(self, X, y, sample_weight, kernel, seed, *, sparse):
        """Fit with kernelscale and store LIBSVM's attributes; False where it does not."""
        n = X.shape[0]
        reason = self._unsupported(kernel, n)
        if reason is not None:
            record(self, "fit", reason)
            return False
        weights = _weights(np.asarray(sample_weight, dtype=np.float64), n)
        precomputed = kernel == "precomputed"
        if n <= _largest_rows(self._impl) or precomputed:
            small = n * n <= SMALL_MATRIX_ENTRIES
            with one_thread() if small else nullcontext():
                K = self._kernel_matrix(X, kernel, _scratch(n) if small else None)
                model = self._solve_matrix(K, y, weights, seed)
            how = "float64 kernel matrix" + (", one thread" if small else "")
        else:
            model, how = self._solve_native(X, y, weights, kernel), "float32 kernel rows"
        if model is None:  # LIBSVM drops a class left with no weight: its own code does it
            record(self, "fit", "a class whose every sample weight is <= 0")
            return False
        kept = None if np.all(weights > 0) else np.flatnonzero(weights > 0)
        model.store(self, X, precomputed=precomputed, sparse=sparse, kept=kept)
        record(self, "fit", how=f"{how}, {n} rows")
        self._warn_from_fit_status()
        return True

    def _kernel_matrix(self, X, kernel, out=None):
        if kernel == "precomputed":
            K = np.array(X, dtype=np.float64, order="C")
        else:
            if sp.issparse(X) and X.shape[0] * X.shape[1] * 8 <= DENSE_COPY_BYTES:
                # the dense route's very products: a sparse fit gives the dense fit's
                # model to the last bit (SMO's path turns 1e-16 into ties broken apart)
                X = X.toarray()
            K = make_kernel(kernel, gamma=float(self._gamma), degree=int(self.degree),
                            coef0=float(self.coef0)).gram(X, dtype=np.float64, out=out)
        # NaN and inf both reach the extremes: no n x n mask to allocate
        if not (np.isfinite(K.max()) and np.isfinite(K.min())):
            raise ValueError(_NOT_FINITE)
        return K

    def _solve_matrix(self, K, y, weights, seed):
        n = y.size
        options = {"tol": float(self.tol), "max_iter": int(self.max_iter)}
        with warnings.catch_warnings():  # scikit-learn warns from fit_status_ itself
            warnings.simplefilter("ignore", ConvergenceWarning)
            if self._impl == "c_svc":
                y_index = y.astype(np.intp)
                n_classes = len(self.classes_)
                bounds = _classifier_bounds(self, y_index, weights)
                present = np.unique(y_index[weights > 0])
                if present.size < 2:
                    raise ValueError("Invalid input - all samples with positive weights "
                                     "belong to the same class.")
                if present.size < n_classes:
                    return None
                return ovo_model(K, y_index, n_classes, bounds,
                                 probability=bool(self._effective_probability), seed=seed,
                                 **options)
            if self._impl == "one_class":
                res = smo_dense(K, np.ones(n), weights, linear_term=np.zeros(n),
                                alpha0=one_class_start(weights, float(self.nu)),
                                shrinking=bool(self.shrinking), warn=False, **options)
                return single_model(res["alpha"], res["intercept"], res["n_iter"],
                                    res["converged"])
            bounds = np.where(weights > 0, float(self.C) * weights, 0.0)
            doubled = np.block([[K, K], [K, K]])
            eps = float(self.epsilon)
            res = smo_dense(doubled, np.concatenate([np.ones(n), -np.ones(n)]),
                            np.concatenate([bounds, bounds]),
                            linear_term=np.concatenate([eps - y, eps + y]),
                            shrinking=bool(self.shrinking), warn=False, **options)
            coef = res["alpha"][:n] - res["alpha"][n:]
            return single_model(coef, res["intercept"], res["n_iter"], res["converged"])

    def _solve_native(self, X, y, weights, kernel):
        params = {"kernel": kernel, "gamma": float(self._gamma), "degree": int(self.degree),
                  "coef0": float(self.coef0), "tol": float(self.tol),
                  "max_iter": int(self.max_iter), "shrinking": bool(self.shrinking),
                  "cache_size": float(self.cache_size)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if self._impl == "c_svc":
                y_index = y.astype(np.intp)
                if np.unique(y_index[weights > 0]).size < len(self.classes_):
                    return None
                cw = np.asarray(getattr(self, "class_weight_", np.ones(len(self.classes_))))
                native = KernelSVC(C=float(self.C), **params).fit(
                    X, y_index, sample_weight=weights * cw[y_index])
                return native_ovo_model(native, y_index, len(self.classes_))
            if self._impl == "one_class":
                native = KernelOneClassSVM(nu=float(self.nu), **params).fit(
                    X, sample_weight=weights)
            else:
                native = KernelSVR(C=float(self.C), epsilon=float(self.epsilon),
                                   **params).fit(X, y, sample_weight=weights)
        coef = np.zeros(X.shape[0])
        coef[native.support_] = native.dual_coef_[0]
        return single_model(coef, float(native.intercept_[0]), int(np.max(native.n_iter_)),
                            native.fit_status_ == 0)


def _either(values, libsvm, X):
    return libsvm(X) if values is None else values


def _scratch(n):
    """An n x n float64 buffer this thread reuses from fit to fit (a small matrix)."""
    buffer = getattr(_SCRATCH, "buffer", None)
    if buffer is None or buffer.size < n * n:
        buffer = _SCRATCH.buffer = np.empty(n * n)
    return buffer[: n * n].reshape(n, n)


def _largest_rows(impl):
    """Rows whose float64 matrix of variables fits ``FLOAT64_MATRIX_BYTES`` and the
    memory budget (a smaller budget sends the fit to the estimator, whose plan keeps it)."""
    rows = int(np.sqrt(min(FLOAT64_MATRIX_BYTES, resolve_memory_budget(None)) / 8))
    return rows // 2 if impl == "epsilon_svr" else rows


def _classifier_bounds(estimator, y_index, weights):
    """``C`` times the class weight and the sample weight; 0 where the weight is 0."""
    cw = np.asarray(getattr(estimator, "class_weight_", np.ones(y_index.max() + 1)))
    bounds = float(estimator.C) * cw[y_index] * weights
    return np.where((weights > 0) & (cw[y_index] > 0), bounds, 0.0)


class SVC(_KernelscaleLibsvm, original("SVC")):
    __doc__ = documented("SVC")


class SVR(_KernelscaleLibsvm, original("SVR")):
    __doc__ = documented("SVR")


class OneClassSVM(_KernelscaleLibsvm, original("OneClassSVM")):
    __doc__ = documented("OneClassSVM")
