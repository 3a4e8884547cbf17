"""Input checks shared by every estimator, and the row-block planner.

Every error raised here names the offending value and says how to fix it, so
that estimators can call these helpers instead of writing their own messages.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from ._clock import checkpoint
from ._config import get_config, parse_memory

__all__ = [
    "MemoryBudgetError",
    "effective_n_jobs",
    "check_finite_fit",
    "random_seed",
    "check_option",
    "check_int",
    "check_float",
    "resolve_memory_budget",
    "resolve_dtype",
    "check_X",
    "check_X_y",
    "check_sample_weight",
    "iter_row_blocks",
    "refuse_chunked",
    "dense_rows",
    "csr_int32",
    "check_width",
]


def effective_n_jobs(n_jobs):
    """Threads for ``n_jobs``: None means 1 (scikit-learn's convention), -1 every core."""
    import os

    if n_jobs is None:
        return 1
    if n_jobs == -1:
        return os.cpu_count() or 1
    return int(n_jobs)


def random_seed(random_state):
    """An int seed (for numba solvers and numpy Generators) from a ``random_state`` parameter."""
    from sklearn.utils import check_random_state

    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class MemoryBudgetError(ValueError):
    """Raised when a memory budget is too small for even the smallest unit of work."""


def check_option(name, value, options):
    """Return ``value`` if it is one of ``options``, else raise a ValueError naming them."""
    if isinstance(value, str) and value in options:
        return value
    choices = ", ".join(repr(o) for o in options)
    raise ValueError(f"Unknown {name}={value!r}; expected one of {choices}.")


def check_int(name, value, *, min_value=1, allow_none=False):
    """Return ``value`` as int after checking it is an integer >= ``min_value``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__}).")
    if value < min_value:
        raise ValueError(f"{name} must be >= {min_value}, got {value}.")
    return int(value)


def check_float(name, value, *, min_value=None, strict=False, allow_none=False):
    """Return ``value`` as float after checking it is a finite real number.

    ``strict=True`` makes ``min_value`` exclusive (``value > min_value``).
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__}).")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}.")
    if min_value is not None:
        bad = value <= min_value if strict else value < min_value
        if bad:
            relation = ">" if strict else ">="
            raise ValueError(f"{name} must be {relation} {min_value}, got {value}.")
    return value


def resolve_memory_budget(memory_budget):
    """Return the budget in bytes: ``memory_budget`` itself (a number or ``"2G"``) or the
    library default."""
    if memory_budget is None:
        return get_config()["memory_budget"]
    return parse_memory(memory_budget)


_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def resolve_dtype(dtype, input_dtype):
    """Return the output dtype: ``dtype`` itself, or the input's float dtype if None."""
    if dtype is None:
        dt = np.dtype(input_dtype)
        return dt if dt in _FLOAT_DTYPES else np.dtype(np.float64)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in _FLOAT_DTYPES:
        raise ValueError(
            f"dtype must be 'float32', 'float64' or None (follow the input), got {dtype!r}."
        )
    return dt


CHUNKED_ESTIMATORS = (
    "LinearSVC, ApproxKernelSVC (squared hinge), ApproxKernelSVR (squared loss), "
    "ApproxKernelRidge, ApproxKernelRidgeClassifier, KernelLogisticRegression, "
    "NystromKernelRidge, NystromKernelRidgeClassifier, ApproxKernelPCA, ApproxKernelKMeans, "
    "DoublySGDSVC"
)


def refuse_chunked(estimator, X):
    """Raise when a dask collection or a chunked data set reaches code that needs it in memory.

    Both are recognised by protocol (dask's ``__dask_graph__``, kernelscale's
    ``_kernelscale_chunked``), so this module imports neither dask nor the data layer.
    """
    if hasattr(X, "__dask_graph__") or getattr(X, "_kernelscale_chunked", False):
        raise TypeError(
            f"{type(estimator).__name__} needs its data in memory here and got "
            f"{type(X).__name__}; load it (X.compute() for dask), or fit one of the "
            f"estimators that take chunked data: {CHUNKED_ESTIMATORS}."
        )


def _located(exc, X, y=None):
    """scikit-learn's long NaN / inf message replaced by one line that says where it is."""
    text = str(exc)
    if "NaN" not in text and "infinity" not in text:
        return exc
    name = "X"
    if text.startswith("Input y") and y is not None:
        name, X = "y", np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    try:
        values = X.tocsr() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        if sp.issparse(values):
            k = int(np.flatnonzero(~np.isfinite(values.data))[0])
            row = int(np.searchsorted(values.indptr, k, side="right") - 1)
            column = int(values.indices[k])
        else:
            row, column = (int(v) for v in np.argwhere(~np.isfinite(values))[0])
        where = f" (first at row {row}, column {column})"
    except (IndexError, TypeError, ValueError):
        where = ""
    return ValueError(f"{name} contains NaN or infinity{where}; remove or impute those values "
                      "(e.g. sklearn.impute.SimpleImputer) first.")


#: Per-column arrays a model or a scaling keeps (coefficients, their gradient and
#: curvature, a scaler's statistics): what a column costs beyond its non-zeros
COLUMN_BYTES = 4 * 8


def check_width(X, memory_budget, what="X"):
    """Refuse a sparse matrix whose column count alone overruns the memory budget.

    A svmlight file with a feature index of 2,000,000,000 loads as a sparse
    matrix of that width; every model then keeps arrays per column (coefficients,
    a scaler's minima and maxima), 16 GB each: refused here, with the width and
    what it would need, before any of them is allocated.
    """
    if not sp.issparse(X):
        return X
    need = COLUMN_BYTES * X.shape[1]
    if need > memory_budget:
        from ._config import format_bytes

        raise MemoryBudgetError(
            f"{what} has {X.shape[1]:,} columns ({X.nnz:,} non-zero values): the per-column "
            f"arrays of a model or a scaling need {format_bytes(need)}, over memory_budget "
            f"({format_bytes(memory_budget)}); check the feature indices (an svmlight file "
            "numbers features from 1, and its largest index sets the width), or give "
            f"memory_budget >= {format_bytes(need)}.")
    return X


def check_X(estimator, X, *, reset, accept_sparse="csr"):
    """Validate a feature matrix for ``estimator`` (2-D, finite, non-empty, float).

    ``reset=True`` (in ``fit``) records ``n_features_in_``; ``reset=False`` (at
    predict / transform time) checks that the feature count matches it.
    """
    refuse_chunked(estimator, X)
    try:
        X = validate_data(estimator, X, accept_sparse=accept_sparse,
                          dtype=(np.float64, np.float32), reset=reset)
    except ValueError as exc:
        raise _located(exc, X) from None
    if reset:
        check_width(X, resolve_memory_budget(getattr(estimator, "memory_budget", None)))
    return X


def check_X_y(estimator, X, y, *, reset=True, multi_output=False, y_numeric=False):
    """Validate ``X`` (as :func:`check_X`) and ``y`` (1-D, same length, finite)."""
    refuse_chunked(estimator, X)
    try:
        X, y = validate_data(
            estimator, X, y, accept_sparse="csr", dtype=(np.float64, np.float32),
            reset=reset, multi_output=multi_output, y_numeric=y_numeric,
        )
    except ValueError as exc:
        raise _located(exc, X, y) from None
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("Input y contains NaN or infinity; remove or impute those rows.")
    if reset:
        check_width(X, resolve_memory_budget(getattr(estimator, "memory_budget", None)))
    return X, y


def check_sample_weight(sample_weight, n_samples):
    """Return float64 sample weights of length ``n_samples`` (ones when None).

    Weights must be finite, non-negative and not all zero.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    if isinstance(sample_weight, numbers.Real):
        sample_weight = np.full(n_samples, float(sample_weight))
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.ndim != 1 or sw.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must be a 1-D array with one weight per sample "
            f"({n_samples}), got shape {sw.shape}."
        )
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sw < 0):
        raise ValueError(
            f"sample_weight has {int(np.sum(sw < 0))} negative entries; weights must be >= 0: "
            "a row of weight 0 is ignored, so drop such rows or give them weight 0 (every "
            "kernelscale estimator refuses negative weights, which no loss here can use).")
    if not sw.sum() > 0:
        raise ValueError("sample_weight sums to zero: at least one sample needs weight > 0.")
    return sw


def check_finite_fit(estimator, *names):
    """Raise when a fitted attribute holds NaN or infinity (never a silent bad model).

    Parameters
    ----------
    estimator : object
    *names : str
        Fitted attributes to check (``coef_``, ``intercept_``, ``dual_coef_`` ...).
    """
    for name in names:
        value = getattr(estimator, name, None)
        if value is not None and not np.all(np.isfinite(np.asarray(value, dtype=np.float64))):
            raise ValueError(
                f"{type(estimator).__name__}: the fitted {name} is not finite: the kernel or "
                "the loss overflowed on these data. Rescale the features (e.g. "
                "sklearn.preprocessing.StandardScaler), or lower gamma, degree or C.")


def iter_row_blocks(n_rows, bytes_per_row, memory_budget, *, what="this computation"):
    """Yield ``(start, stop)`` row ranges whose temporaries fit ``memory_budget``.

    Parameters
    ----------
    n_rows : int
        Rows to cover.
    bytes_per_row : int
        Temporary bytes one row of a block needs.
    memory_budget : int
        Bytes available to one block.
    what : str
        Named in the error message when one row does not fit.

    Yields
    ------
    start, stop : int
        Consecutive half-open row ranges covering ``range(n_rows)``.
    """
    bytes_per_row = max(int(bytes_per_row), 1)
    rows = memory_budget // bytes_per_row
    if rows < 1:
        raise MemoryBudgetError(
            f"memory_budget={memory_budget} bytes cannot hold one row of {what}, which "
            f"needs {bytes_per_row} bytes; raise memory_budget to at least "
            f"{bytes_per_row} (ideally a few hundred times more for speed)."
        )
    for start in range(0, n_rows, rows):
        checkpoint()  # a time budget's stop, if one is armed (kernelscale._clock)
        yield start, min(start + rows, n_rows)


def dense_rows(X, start, stop, dtype):
    """Return rows ``start:stop`` of ``X`` as a C-contiguous dense array of ``dtype``.

    Sparse rows are densified here, one block at a time, so that a sparse matrix
    never has to be densified whole.
    """
    block = X[start:stop]
    if sp.issparse(block):
        # cast while sparse so the dense block is allocated once, in ``dtype``
        return block.astype(dtype, copy=False).toarray()
    return np.ascontiguousarray(block, dtype=dtype)


def csr_int32(X):
    """``X`` with 32-bit CSR indices when they fit (scikit-learn refuses 64-bit ones)."""
    if sp.issparse(X) and X.format == "csr" and X.indices.dtype != np.int32 \
            and X.nnz < np.iinfo(np.int32).max:
        X = sp.csr_matrix(
            (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
        )
    return X


class available_when:  # noqa: N801 (used as a decorator, as scikit-learn's available_if)
    """A method that exists only when ``check(estimator)`` holds, whose absence says why.

    scikit-learn's ``available_if`` turns every failed check into ``This 'X' has no
    attribute 'predict_proba'``; here the ``AttributeError`` the check raises (with
    what to do, e.g. "set probability=True") is the one the caller sees, and
    ``hasattr`` stays False, as duck typing (``GridSearchCV``, pipelines) expects.

    Examples
    --------
    >>> class Model:
    ...     probability = False
    ...     def _has(self):
    ...         if not self.probability:
    ...             raise AttributeError("predict_proba needs probability=True")
    ...         return True
    ...     @available_when(_has)
    ...     def predict_proba(self, X):
    ...         return X
    >>> hasattr(Model(), "predict_proba")
    False
    """

    def __init__(self, check):
        self.check = check

    def __call__(self, function):
        self.function = function
        self.__doc__ = function.__doc__
        self.__name__ = function.__name__
        self.__wrapped__ = function
        return self

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.function  # on the class: the function (docs, introspection)
        if not self.check(obj):
            raise AttributeError(f"This {type(obj).__name__!r} has no attribute "
                                 f"{self.__name__!r}.")
        return self.function.__get__(obj, owner)
