"""Blocked products with a feature matrix, float32 BLAS inside, float64 across blocks.

The solvers see the data only through these three operations, each a loop over
row blocks sized by the memory budget:

- :func:`margins`: ``Z w + bias w_b`` (one GEMV per block);
- :func:`rmatvec`: ``[Z, bias]^T v`` (one GEMV per block);
- :func:`weighted_gram`: ``sum_i c_i z^_i z^_i^T`` over chosen rows (one SYRK per block),

where ``z^_i = [z_i, bias]`` carries the intercept. ``Z`` may be a float32 or
float64 ndarray or a CSR matrix; weights are cast to ``Z``'s dtype so a float32
``Z`` is never upcast whole, and block results are summed in float64.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas

from .._parallel import large_symmetric_blas
from .._planner import sparse_row_bytes
from .._validation import iter_row_blocks

__all__ = ["margins", "rmatvec", "weighted_gram"]


def _item(Z):
    return Z.dtype.itemsize


def margins(Z, w, bias, memory_budget):
    """Return ``Z @ w[:-1] + bias * w[-1]`` as float64, shape (n_samples,)."""
    n, d = Z.shape
    wz = np.asarray(w[:d], dtype=Z.dtype)
    out = np.empty(n)
    per_row = 2 * _item(Z) + sparse_row_bytes(Z)
    for start, stop in iter_row_blocks(n, per_row, memory_budget, what="margins"):
        out[start:stop] = Z[start:stop] @ wz
    out += bias * w[d]
    return out


def rmatvec(Z, v, bias, memory_budget):
    """Return ``[Z, bias 1]^T v`` as float64, shape (n_features + 1,)."""
    n, d = Z.shape
    out = np.zeros(d + 1)
    vz = np.asarray(v, dtype=Z.dtype)
    per_row = _item(Z) + sparse_row_bytes(Z)
    for start, stop in iter_row_blocks(n, per_row, memory_budget, what="a gradient"):
        out[:d] += Z[start:stop].T @ vz[start:stop]
    out[d] = bias * float(np.sum(v))
    return out


def _syrk(A, alpha):
    """Upper triangle of ``alpha A^T A`` for C-contiguous dense ``A`` (``A^T`` is F-ordered)."""
    routine = blas.ssyrk if A.dtype == np.float32 else blas.dsyrk
    with large_symmetric_blas(A.shape[1], A.dtype.itemsize):
        return routine(alpha, A.T, trans=0, lower=0)


def _weighted_block(Z, rows, start, stop, weights):
    """``(A, alpha, root, w_b)`` with ``alpha A^T A = sum_b w_i z_i z_i^T`` over one block.

    Contiguous blocks are views; a block of equal weights is passed as SYRK's
    ``alpha`` instead of being scaled (``root`` is then None), so the common
    cases copy nothing. Otherwise rows are scaled by ``root = sqrt(w)``.
    """
    if rows is None:
        block, w_b = Z[start:stop], weights[start:stop]
    else:
        idx = rows[start:stop]
        block, w_b = (Z[idx] if sp.issparse(Z) else np.take(Z, idx, axis=0)), weights[idx]
    if np.all(w_b == w_b[0]):
        return block, float(w_b[0]), None, w_b
    root = np.sqrt(w_b).astype(Z.dtype)
    if sp.issparse(block):
        return sp.diags(root) @ block, 1.0, root, w_b
    if rows is None:
        return block * root[:, None], 1.0, root, w_b
    block *= root[:, None]  # our own gathered copy: scale in place
    return block, 1.0, root, w_b


def weighted_gram(Z, rows, weights, bias, memory_budget, out=None, sign=1.0):
    """Add ``sign * sum_{i in rows} weights_i z^_i z^_i^T`` to the upper triangle of ``out``.

    Only the upper triangle (including the diagonal and the last column) is
    accumulated: it is all a Cholesky factorization with ``lower=False`` reads.

    Parameters
    ----------
    Z : ndarray or csr_matrix of shape (n_samples, n_features)
    rows : ndarray of int or None
        Rows to include (None: all, taken as contiguous views).
    weights : ndarray of shape (n_samples,)
        Non-negative row weights (indexed by row number).
    bias : float
        Constant feature value (0: no intercept row / column contribution).
    memory_budget : int
        Bytes for one block's temporaries.
    out : ndarray of shape (n_features + 1, n_features + 1), default=None
        Accumulator; a new zero matrix when None.
    sign : float, default=1.0
        +1 adds the rows, -1 removes them (incremental Hessian updates).

    Returns
    -------
    out : ndarray of shape (n_features + 1, n_features + 1)
        Valid in its upper triangle.
    """
    n, d = Z.shape
    if out is None:
        out = np.zeros((d + 1, d + 1))
    count = n if rows is None else len(rows)
    if count == 0:
        return out
    rows = None if rows is None else np.asarray(rows)
    per_row = 2 * _item(Z) * d + sparse_row_bytes(Z)
    total_weight = 0.0
    for start, stop in iter_row_blocks(count, per_row, memory_budget, what="a Gram block"):
        A, alpha, root, w_b = _weighted_block(Z, rows, start, stop, weights)
        total_weight += float(w_b.sum())
        if sp.issparse(A):
            out[:d, :d] += sign * alpha * np.triu((A.T @ A).toarray())
        else:
            out[:d, :d] += sign * _syrk(A, alpha)
        # sum_i w_i z_i: alpha * (column sums) unscaled, A^T sqrt(w) when scaled
        col = A.sum(axis=0) if root is None else A.T @ root
        out[:d, d] += sign * bias * alpha * np.asarray(col, dtype=np.float64).ravel()
    out[d, d] += sign * bias * bias * total_weight
    return out
