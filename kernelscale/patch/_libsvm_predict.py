"""scikit-learn's SVM prediction from its LIBSVM-layout model, by kernelscale's kernels.

LIBSVM predicts one row at a time: one kernel value per support vector, one thread.
The same decision values are one product here: the float64 kernel rows of a block of
test rows against every support vector (BLAS), times a matrix holding each pair's
coefficients (column ``p`` of pair ``(i, j)``: class ``i``'s support vectors carry
``dual_coef_[j - 1]``, class ``j``'s ``dual_coef_[i]``, as LIBSVM's
``svm_predict_values`` reads them), plus the intercepts. The one-vs-one vote is
LIBSVM's (a positive value votes for the first class of its pair; the first class with
the most votes wins). Blocks follow the memory budget.

A callable or precomputed kernel, and ``gamma=0``, keep LIBSVM's code (``None`` here).
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp

from .._parallel import one_thread
from .._validation import iter_row_blocks, resolve_memory_budget
from ..kernels import make_kernel

__all__ = ["decision_values", "predicted", "ROUTED_KERNELS", "SMALL_MATRIX_ENTRIES"]

#: the kernels whose prediction kernelscale computes
ROUTED_KERNELS = ("rbf", "linear", "poly", "sigmoid")

#: a float64 kernel block of at most this many entries (a 1,024-row square) is computed on
#: one thread, the fit's as the prediction's: on a 569-row fit (breast_cancer) two threads
#: cost 3.3 ms against 2.4 ms on one (one table; bench_patch's small problems check it)
SMALL_MATRIX_ENTRIES = 1 << 20


def _pair_coefficients(estimator):
    """``(n_SV, n_columns)``: decision values = K(X, SV) @ this + ``_intercept_``."""
    dual = estimator._dual_coef_
    dual = dual.toarray() if sp.issparse(dual) else np.asarray(dual, dtype=np.float64)
    if estimator._impl != "c_svc":
        return np.ascontiguousarray(dual.T)
    starts = np.concatenate([[0], np.cumsum(estimator._n_support)])
    n_classes = len(estimator._n_support)
    coef = np.zeros((dual.shape[1], n_classes * (n_classes - 1) // 2))
    p = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            own, other = slice(starts[i], starts[i + 1]), slice(starts[j], starts[j + 1])
            coef[own, p] = dual[j - 1, own]
            coef[other, p] = dual[i, other]
            p += 1
    return coef


def decision_values(estimator, X):
    """LIBSVM's decision values of ``X`` (validated: float64, CSR where sparse):
    ``(n_samples, n_pairs)`` for a classifier, ``(n_samples, 1)`` otherwise; None
    where LIBSVM's own code predicts."""
    kernel = estimator.kernel
    if callable(kernel) or kernel not in ROUTED_KERNELS:
        return None
    if kernel != "linear" and not float(estimator._gamma) > 0:
        return None
    support = estimator.support_vectors_
    coef = _pair_coefficients(estimator)
    n, n_sv = X.shape[0], support.shape[0]
    out = np.empty((n, coef.shape[1]))
    out[...] = np.asarray(estimator._intercept_, dtype=np.float64)
    if n == 0 or n_sv == 0:
        return out
    function = make_kernel(kernel, gamma=float(estimator._gamma),
                           degree=int(estimator.degree), coef0=float(estimator.coef0))
    budget = resolve_memory_budget(None)
    with one_thread() if n * n_sv <= SMALL_MATRIX_ENTRIES else nullcontext():
        prepared = function.prepare(support, np.float64, budget)
        per_row = prepared.bytes_per_row(X) + 8 * n_sv
        for start, stop in iter_row_blocks(n, per_row, budget,
                                           what="the kernel rows of the support vectors"):
            block = np.empty((stop - start, n_sv))
            prepared.evaluate_rows(X, start, stop, block)
            out[start:stop] += block @ coef
    return out


def predicted(estimator, X):
    """What LIBSVM's ``predict`` returns for ``X`` (class indices as floats, +1 / -1,
    or values), or None where its own code predicts."""
    values = decision_values(estimator, X)
    if values is None:
        return None
    if estimator._impl == "one_class":
        return np.where(values[:, 0] > 0, 1.0, -1.0)
    if estimator._impl != "c_svc":
        return values[:, 0]
    n_classes = len(estimator._n_support)
    votes = np.zeros((X.shape[0], n_classes), dtype=np.int64)
    rows = np.arange(X.shape[0])
    p = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            np.add.at(votes, (rows, np.where(values[:, p] > 0, i, j)), 1)
            p += 1
    return votes.argmax(axis=1).astype(np.float64)
