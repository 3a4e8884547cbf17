"""The kernel API every layer above uses: :class:`Kernel` objects and their prepared blocks.

A :class:`Kernel` holds resolved (numeric) parameters. ``kernel.prepare(Y, dtype)``
returns a :class:`PreparedKernel`: the second argument ``Y`` converted once to the
kernel's *working representation* (for the RBF kernel ``sqrt(gamma) (y - mu)``
with its squared norms), so that blocks ``k(X_block, Y)`` are one GEMM and a
fused pass. Inputs are scaled by ``sqrt(gamma)`` (``gamma`` for the Laplacian
kernel) in their own precision *before* any float32 cast, so features of huge or
tiny magnitude neither overflow nor underflow in float32 blocks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import scipy.sparse as sp

from .._planner import sparse_row_bytes
from .._validation import iter_row_blocks, resolve_memory_budget
from ._compiled import exp_floor, scaled_exp
from ._exp import exp_block32

__all__ = ["Kernel", "ShiftInvariantKernel", "PreparedKernel", "SparsePreparedKernel"]

# Below this fraction of non-zeros a sparse row block is multiplied as sparse;
# above it, densifying the block and calling GEMM is faster (BLAS runs ~100x
# more flops per second than scipy's single-threaded sparse product).
SPARSE_DENSITY_THRESHOLD = 0.01


def _dense_block(Xb, dtype):
    """A dense copy of the block ``Xb`` in ``dtype``, or in float64 for float64 sparse input
    (a float32 cast of unscaled sparse values could overflow)."""
    if sp.issparse(Xb):
        work = np.float64 if Xb.dtype == np.float64 else dtype
        return Xb.astype(work, copy=False).toarray()
    return np.asarray(Xb)


class Kernel(ABC):
    """A positive semi-definite kernel with numeric parameters.

    Subclasses (:class:`~kernelscale.kernels.RBF`, ``Laplacian``, ``Polynomial``,
    ``Linear``, ``CallableKernel``) implement the working representation
    (``_evaluate`` on dense working rows, and ``_evaluate_sparse`` on sparse
    rows when they set ``sparse_products``) and ``diagonal``; this base class
    offers everything built on it: prepared blocks, Gram matrices in row blocks
    under a memory budget, diagonals and kernel expansions.
    """

    name = None
    #: True when ``k(x, y)`` depends on ``x - y`` only (RBF, Laplacian).
    shift_invariant = False
    #: True when a sparse row block may be multiplied without densifying it
    #: (the kernel then defines ``_evaluate_sparse(Xb, Yw, setup, columns, out)`` and,
    #: for a sparse second argument, ``_from_products(products, x_sqnorm, y_sqnorm,
    #: out)``: ``k`` from the float64 products ``x . y`` and the squared norms).
    sparse_products = False
    #: False when the kernel sees the rows as given (a callable), not densified.
    dense_input = True

    # ------------------------------------------------------------ parameters

    def get_params(self):
        """The kernel's parameters as a dict (what the constructor takes)."""
        return {}

    def with_params(self, **changes):
        """A copy with some parameters changed, e.g. ``rbf.with_params(gamma=0.5)``."""
        return type(self)(**{**self.get_params(), **changes})

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        if type(other) is not type(self):
            return False
        mine, theirs = self.get_params(), other.get_params()
        return mine.keys() == theirs.keys() and all(
            np.array_equal(mine[k], theirs[k]) if isinstance(mine[k], np.ndarray)
            or isinstance(theirs[k], np.ndarray) else mine[k] == theirs[k] for k in mine)

    def __hash__(self):
        return hash((type(self).__name__, repr(self)))

    def _column_scale(self):
        """Per-column scaling a sparse second argument needs (per-feature widths), or None."""
        return None

    # -------------------------------------------------- working representation

    def _setup(self, Y):
        """Parameters of the working representation chosen from ``Y`` (e.g. a shift)."""
        return {}

    def _work(self, Xb, setup, dtype):
        """Dense rows ``Xb`` in the working representation, C-contiguous ``dtype``."""
        return np.ascontiguousarray(Xb, dtype=dtype)

    def _columns(self, Yw, setup):
        """Per-column arrays kept beside the working ``Y`` (sliced by ``subset``)."""
        return {}

    @abstractmethod
    def _evaluate(self, Xw, Yw, setup, columns, out):
        """Write ``k`` of the working rows ``Xw`` against ``Yw`` into ``out``."""

    def _extra_bytes(self, n_columns, dtype):
        """Temporary bytes per row that evaluation needs beyond the working rows."""
        return 0

    # ------------------------------------------------------------ evaluation

    def prepare(self, Y, dtype=np.float64, memory_budget=None):
        """Prepare ``Y`` once for many blocks ``k(X_block, Y)``.

        Parameters
        ----------
        Y : {ndarray, sparse matrix} of shape (n_columns, n_features)
        dtype : numpy dtype, default=float64
            dtype of the blocks and of the GEMMs that compute them.
        memory_budget : int, default=None
            A sparse ``Y`` whose dense working copy would take more than half
            of it stays sparse (kernels with sparse products: RBF, polynomial,
            linear); None: ``Y`` is densified.

        Returns
        -------
        prepared : PreparedKernel or SparsePreparedKernel
        """
        if (memory_budget is not None and sp.issparse(Y) and self.sparse_products
                and 2 * 8 * Y.shape[0] * Y.shape[1] > memory_budget // 2):
            return SparsePreparedKernel(self, Y, dtype)
        return PreparedKernel(self, Y, dtype)

    def gram(self, X, Y=None, *, dtype=None, memory_budget=None, out=None):
        """The Gram matrix ``k(X, Y)``, computed in row blocks under ``memory_budget``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples_X, n_features)
        Y : {ndarray, sparse matrix} of shape (n_samples_Y, n_features), default=None
            None means ``Y = X``.
        dtype : numpy dtype, default=None
            None: float32 when both inputs are float32, float64 otherwise.
        memory_budget : int, default=None
            Bytes for the temporaries of one block; None uses the library default.
        out : ndarray of shape (n_samples_X, n_samples_Y), default=None
            C-contiguous array of the result dtype to write into.

        Returns
        -------
        K : ndarray of shape (n_samples_X, n_samples_Y)
        """
        Y = X if Y is None else Y
        dtype = np.dtype(dtype) if dtype is not None else np.result_type(X.dtype, Y.dtype)
        budget = resolve_memory_budget(memory_budget)
        prepared = self.prepare(Y, dtype, budget)
        shape = (X.shape[0], prepared.n_columns)
        if out is None:
            out = np.empty(shape, dtype=dtype)
        elif out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous {dtype} array of shape {shape}, "
                             f"got {out.dtype} {out.shape}.")
        for start, stop in iter_row_blocks(shape[0], prepared.bytes_per_row(X), budget,
                                           what="a kernel block"):
            prepared.evaluate_rows(X, start, stop, out[start:stop])
        return out

    def blocks(self, X, Y=None, *, dtype=None, memory_budget=None):
        """Yield ``(start, stop, k(X[start:stop], Y))`` with each block within the budget."""
        Y = X if Y is None else Y
        dtype = np.dtype(dtype) if dtype is not None else np.result_type(X.dtype, Y.dtype)
        budget = resolve_memory_budget(memory_budget)
        prepared = self.prepare(Y, dtype, budget)
        # the caller holds the last block while the next one is computed
        per_row = prepared.bytes_per_row(X) + 2 * dtype.itemsize * prepared.n_columns
        for start, stop in iter_row_blocks(X.shape[0], per_row, budget, what="a kernel block"):
            block = np.empty((stop - start, prepared.n_columns), dtype=dtype)
            yield start, stop, prepared.evaluate_rows(X, start, stop, block)

    def expand(self, X, Y, coef, *, dtype=np.float32, memory_budget=None):
        """``k(X, Y) @ coef`` (float64), the kernel computed one row block at a time.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Y : ndarray of shape (m, n_features)
        coef : ndarray of shape (m, n_targets)
        dtype : numpy dtype, default=float32
            dtype of the kernel blocks and of the GEMM.
        memory_budget : int, default=None

        Returns
        -------
        out : ndarray of shape (n_samples, n_targets)
        """
        dtype = np.dtype(dtype)
        prepared = self.prepare(Y, dtype)
        coef = np.asarray(coef, dtype=dtype)
        out = np.empty((X.shape[0], coef.shape[1]))
        per_row = prepared.bytes_per_row(X) + dtype.itemsize * (prepared.n_columns
                                                                + coef.shape[1])
        budget = resolve_memory_budget(memory_budget)
        buffer = None  # one block's memory for every block (the first is the largest)
        for start, stop in iter_row_blocks(X.shape[0], per_row, budget,
                                           what="a block of K(X, centres)"):
            if buffer is None:
                buffer = np.empty((stop - start, prepared.n_columns), dtype=dtype)
            block = buffer[: stop - start]
            out[start:stop] = prepared.evaluate_rows(X, start, stop, block) @ coef
        return out

    def check_range(self, X, dtype):
        """Raise when ``k(x, x)`` of a row of ``X`` overflows ``dtype`` (or is not finite).

        For a positive semi-definite kernel ``|k(x, y)| <= sqrt(k(x, x) k(y, y))``,
        so the diagonal bounds every block: a kernel that overflows float32 blocks
        is refused here, not turned into a model that predicts one class.
        Callable kernels check their own blocks instead.
        """
        if self.dense_input is False or self.shift_invariant:
            return  # callables check every block; shift-invariant kernels are <= 1
        diagonal = self.diagonal(X)
        limit = float(np.finfo(dtype).max)  # a Python float: comparing casts nothing
        largest = float(np.max(np.abs(diagonal))) if diagonal.size else 0.0
        if not np.isfinite(largest) or largest > limit:
            raise ValueError(
                f"The {type(self).__name__} kernel overflows {np.dtype(dtype).name} on these "
                f"data (k(x, x) reaches {largest:.3g}, beyond {limit:.3g}): rescale the "
                "features (e.g. sklearn.preprocessing.StandardScaler) or lower gamma, degree "
                "or coef0.")

    @abstractmethod
    def diagonal(self, X):
        """``k(x_i, x_i)`` for every row of ``X`` (float64), without a Gram matrix."""


class ShiftInvariantKernel(Kernel):
    """A kernel ``k(x, y) = exp(-D(x, y))`` with ``D`` proportional to gamma (RBF, Laplacian).

    Subclasses define ``_distances`` (``D`` of working rows); every gamma of a
    search is then one elementwise pass over one ``D`` (:meth:`distances`,
    :meth:`from_distances`).
    """

    shift_invariant = True

    @abstractmethod
    def _distances(self, Xw, Yw, setup, columns, out):
        """Write ``D`` of the working rows ``Xw`` against ``Yw`` into ``out``."""

    def diagonal(self, X):
        return np.ones(X.shape[0])

    def distances(self, X, Y=None, *, dtype=np.float32, memory_budget=None, out=None):
        """``D`` with ``k(x, y) = exp(-D)`` of a shift-invariant kernel, in row blocks.

        ``gamma ||x - y||^2`` for :class:`RBF`, ``gamma ||x - y||_1`` for
        :class:`Laplacian`. The same kernel with ``gamma * factor`` is
        ``exp(-factor D)`` (:meth:`from_distances`): a search over gamma
        computes ``D`` once and every gamma by one elementwise pass.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples_X, n_features)
        Y : {ndarray, sparse matrix} of shape (n_samples_Y, n_features), default=None
            None means ``Y = X`` (the diagonal is then exactly 0).
        dtype : numpy dtype, default=float32
        memory_budget : int or str, default=None
        out : ndarray of shape (n_samples_X, n_samples_Y), default=None

        Returns
        -------
        D : ndarray of shape (n_samples_X, n_samples_Y)
        """
        same = Y is None
        Y = X if same else Y
        dtype = np.dtype(dtype)
        prepared = self.prepare(Y, dtype)
        shape = (X.shape[0], prepared.n_columns)
        out = np.empty(shape, dtype=dtype) if out is None else out
        budget = resolve_memory_budget(memory_budget)
        for start, stop in iter_row_blocks(shape[0], prepared.bytes_per_row(X), budget,
                                           what="a block of distances"):
            Xw = prepared.work_rows(X, start, stop)
            self._distances(Xw, prepared.Yw, prepared.setup, prepared.columns,
                            out[start:stop])
        if same:
            np.einsum("ii->i", out)[:] = 0
        return out

    def from_distances(self, D, factor=1.0, out=None):
        """``exp(-factor D)`` for ``D`` from :meth:`distances`: the kernel with ``gamma * factor``.

        ``out=D`` overwrites ``D``. Values below the dtype's normal range are 0
        (see :func:`tiny_floor`), as in every kernel block.
        """
        out = np.empty_like(D) if out is None else out
        if D.dtype == np.float32 and out.dtype == np.float32:
            exp_block32(D, -factor, exp_floor(D.dtype), out)
        else:
            scaled_exp(D, D.dtype.type(-factor), exp_floor(D.dtype), out)
        return out



class PreparedKernel:
    """A kernel with its second argument ``Y`` in working form, evaluated on row blocks.

    Made by :meth:`Kernel.prepare`. ``evaluate(X_block, out)`` writes
    ``k(X_block, Y)`` into ``out`` (C-contiguous, ``(len(X_block), n_columns)``,
    of ``dtype``). Rows converted once with :meth:`work_rows` are evaluated
    without converting them again (:meth:`evaluate_work`), and :meth:`subset`
    keeps a subset of the columns without recomputing anything; the exact SVM's
    kernel rows use both.
    """

    def __init__(self, kernel, Y, dtype, *, _state=None):
        self.kernel = kernel
        self.dtype = np.dtype(dtype)
        if _state is not None:
            self.setup, self.Yw, self.columns = _state
            return
        self.setup = kernel._setup(Y)
        self.Yw = kernel._work(self._input(Y), self.setup, self.dtype)
        self.columns = kernel._columns(self.Yw, self.setup)

    @property
    def n_columns(self):
        return self.Yw.shape[0]

    def _use_sparse(self, X):
        if not sp.issparse(X) or not self.kernel.sparse_products:
            return False
        n, d = X.shape
        return X.nnz < SPARSE_DENSITY_THRESHOLD * max(n * d, 1)

    def bytes_per_row(self, X):
        """Temporary bytes one row of ``X`` costs in :meth:`evaluate_rows`."""
        d = X.shape[1]
        if self._use_sparse(X):
            return 8 * (self.n_columns + 2) + sparse_row_bytes(X)
        input_item = 8 if X.dtype == np.float64 else self.dtype.itemsize
        densified = input_item * d if sp.issparse(X) else 0
        # the block in its own precision, its working copy, and the kernel's extras
        return (densified + (input_item + self.dtype.itemsize) * d + 8
                + self.kernel._extra_bytes(self.n_columns, self.dtype) + sparse_row_bytes(X))

    def work_rows(self, X, start=0, stop=None):
        """Rows ``start:stop`` of ``X`` in the working representation (dense ``dtype``)."""
        stop = X.shape[0] if stop is None else stop
        return self.kernel._work(self._input(X[start:stop]), self.setup, self.dtype)

    def _input(self, Xb):
        return _dense_block(Xb, self.dtype) if self.kernel.dense_input else Xb

    def evaluate_work(self, Xw, out):
        """Write ``k(Xw, Y)`` for working rows ``Xw`` (from :meth:`work_rows`) into ``out``."""
        self.kernel._evaluate(Xw, self.Yw, self.setup, self.columns, out)
        return out

    def evaluate(self, Xb, out):
        """Write ``k(Xb, Y)`` into ``out`` for a block ``Xb`` already cut from the data."""
        if self._use_sparse(Xb):
            self.kernel._evaluate_sparse(Xb, self.Yw, self.setup, self.columns, out)
            return out
        return self.evaluate_work(self.work_rows(Xb), out)

    def evaluate_rows(self, X, start, stop, out):
        """Write ``k(X[start:stop], Y)`` into ``out``."""
        return self.evaluate(X[start:stop], out)

    def subset(self, columns):
        """The same prepared kernel restricted to ``Y[columns]`` (no recomputation)."""
        columns = np.asarray(columns, dtype=np.intp)
        kept = {k: v[columns] for k, v in self.columns.items()}
        Yw = self.Yw[columns]
        if isinstance(Yw, np.ndarray):
            Yw = np.ascontiguousarray(Yw)
        return PreparedKernel(self.kernel, None, self.dtype, _state=(self.setup, Yw, kept))


def _csr_sqnorms(A):
    """Squared row norms of a CSR matrix (float64), without a squared copy of it."""
    squares = np.square(A.data, dtype=np.float64)
    out = np.zeros(A.shape[0])
    rows = np.flatnonzero(np.diff(A.indptr))
    if rows.size:
        out[rows] = np.add.reduceat(squares, A.indptr[rows])
    return out


class SparsePreparedKernel:
    """A kernel with a sparse second argument kept sparse, evaluated on row blocks.

    Made by :meth:`Kernel.prepare` when densifying ``Y`` would overrun the
    memory budget (a wide CSR matrix: 200 x 20,000 is 32 MB dense, 0.5 MB at 1%
    density). Each block is ``x . y`` by a sparse product (float64) and the
    kernel's own finish (its ``_from_products``); no shift is applied, so
    the products are float64 whatever the output dtype.
    """

    def __init__(self, kernel, Y, dtype):
        if not kernel.sparse_products:
            raise ValueError(f"{type(kernel).__name__} has no sparse products: a sparse second "
                             "argument is densified for it (Kernel.prepare does so).")
        self.kernel = kernel
        self.dtype = np.dtype(dtype)
        self.scale = kernel._column_scale()
        self.Y = self._scaled(Y)
        self.sqnorm = _csr_sqnorms(self.Y)

    def _scaled(self, A):
        A = A.tocsr().astype(np.float64, copy=False)
        return A if self.scale is None else A.multiply(self.scale).tocsr()

    @property
    def n_columns(self):
        return self.Y.shape[0]

    def bytes_per_row(self, X):
        """Temporary bytes one row of ``X`` costs: its products (sparse, then dense) and
        their finish, in float64."""
        return 28 * self.n_columns + 8 + 2 * sparse_row_bytes(X) + (
            0 if sp.issparse(X) else 8 * X.shape[1])

    def evaluate_rows(self, X, start, stop, out):
        """Write ``k(X[start:stop], Y)`` into ``out``."""
        Xb = X[start:stop]
        if sp.issparse(Xb):
            Xb = self._scaled(Xb)
            products = (Xb @ self.Y.T).toarray()
            x_sqnorm = _csr_sqnorms(Xb)
        else:
            Xb = np.asarray(Xb, dtype=np.float64)
            if self.scale is not None:
                Xb = Xb * self.scale
            products = np.asarray(self.Y @ Xb.T).T
            x_sqnorm = np.einsum("ij,ij->i", Xb, Xb)
        self.kernel._from_products(products, x_sqnorm, self.sqnorm, out)
        return out
