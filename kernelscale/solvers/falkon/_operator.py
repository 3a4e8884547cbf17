"""``K(X, C)`` as an operator: in memory (kept whole when it fits) or over a row source."""

from __future__ import annotations

import numpy as np

from ..._clock import checkpoint
from ..._validation import iter_row_blocks
from .._chunked_solvers import check_finite_chunk
from ._products import normal_product

__all__ = ["KernelOperator", "ChunkedKernelOperator"]


class KernelOperator:
    """``K(X, C)`` applied in row blocks, kept whole when it fits in ``memory_budget``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    centers : ndarray of shape (m, n_features)
    kernel : kernelscale.kernels.Kernel
    dtype : numpy dtype
        dtype of the kernel blocks and of the GEMMs on them (sums across blocks
        are float64).
    memory_budget : int
        Bytes for the kernel matrix if kept, else for one block and its temporaries.
    weights : ndarray of shape (n_samples,), default=None
    keep : bool, default=None
        Keep ``K(X, C)`` whole (what a memory plan decided; ``memory_budget`` is
        then the fill's blocks); None: where it fits ``memory_budget``.
    """

    def __init__(self, X, centers, kernel, dtype, memory_budget, weights=None, keep=None):
        self.X = X
        self.dtype = np.dtype(dtype)
        self.weights = None if weights is None else np.asarray(weights, dtype=self.dtype)
        self.kernel = kernel.prepare(centers, self.dtype)
        n, m = X.shape[0], centers.shape[0]
        item = self.dtype.itemsize
        self.per_row = self.kernel.bytes_per_row(X) + item * m
        self.kept = None
        if keep if keep is not None else n * m * item <= memory_budget:
            self.kept = np.empty((n, m), dtype=self.dtype)
            for start, stop in iter_row_blocks(n, self.kernel.bytes_per_row(X),
                                               memory_budget, what="a kernel block"):
                self.kernel.evaluate_rows(X, start, stop, self.kept[start:stop])
            self.blocks = [(0, n)]
        else:
            self.blocks = list(iter_row_blocks(n, self.per_row, memory_budget,
                                               what="a block of K(X, centres)"))

    @property
    def shape(self):
        return self.X.shape[0], self.kernel.n_columns

    def _block(self, start, stop):
        if self.kept is not None:
            return self.kept[start:stop]
        out = np.empty((stop - start, self.kernel.n_columns), dtype=self.dtype)
        return self.kernel.evaluate_rows(self.X, start, stop, out)

    def normal_apply(self, V=None, Y=None):
        """Return ``K^T D (K V + Y)`` (float64, shape (m, t)); ``V`` or ``Y`` may be None."""
        out = None
        for start, stop in self.blocks:
            if self.kept is None:
                # a recomputed K(X, C) is the CG step's cost: a stop is honoured per block
                # (180k rows at 2,000 centres: ~4 s between the steps' checks)
                checkpoint()
            part = normal_product(
                self._block(start, stop), V, None if Y is None else Y[start:stop],
                None if self.weights is None else self.weights[start:stop],
            )
            out = part if out is None else out + part
        return out

    def center_rows(self, indices):
        """``K(C, C)`` read off the kept matrix when the centres are rows ``indices`` of X."""
        if self.kept is None or indices is None:
            return None
        return self.kept[indices]


def _normal_part(X, y, w, spec, encode, V, budget):
    check_finite_chunk(X)
    centers, kernel, dtype = spec
    Y, S = encode(y, w)
    unit = S is None or np.all(S == 1.0)
    operator = KernelOperator(X, centers, kernel, dtype, budget, None if unit else S)
    if V is None:
        return operator.normal_apply(None, np.asarray(Y, dtype=dtype)), float(
            len(Y) if S is None else np.sum(S))
    return operator.normal_apply(V)


class ChunkedKernelOperator:
    """``K(X, C)^T D K(X, C) V`` summed over the chunks of a row source (one pass each).

    Parameters
    ----------
    source : RowSource
    encode : callable
        ``encode(y, w) -> (Y, S)``: targets and row weights of a chunk.
    centers : ndarray of shape (m, n_features)
    kernel : kernelscale.kernels.Kernel
    dtype : numpy dtype
    memory_budget : int
        Bytes for one chunk's kernel blocks.
    """

    kept = None

    def __init__(self, source, encode, centers, kernel, dtype, memory_budget):
        self.source = source
        self.encode = encode
        self.spec = source.share((np.asarray(centers, dtype=dtype), kernel, np.dtype(dtype)))
        self.memory_budget = memory_budget

    def targets(self):
        """``(K^T D Y, total weight)``: the right-hand side's pass."""
        return self.source.map_reduce(
            _normal_part, (self.spec, self.encode, None, self.memory_budget))

    def normal_apply(self, V):
        return self.source.map_reduce(
            _normal_part, (self.spec, self.encode, np.asarray(V), self.memory_budget))
