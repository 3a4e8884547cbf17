"""Full-batch solvers over a row source: every quantity is a sum over chunks.

The estimators' streaming and dask fits call these with a
:class:`kernelscale.sources.RowSource`, a fitted feature map (None: the raw
features) and ``encode(y, w) -> (Y, S)`` that turns a chunk's labels and sample
weights into targets and per-row (or per-row-and-problem) weights. Each chunk
is mapped block by block under the memory budget and reduced to a small result
(a Gram matrix, a loss and gradient), so the answer is that of the in-memory
solver on the same rows, whatever the chunking:

- ridge: the centred statistics of :class:`RidgeStatistics`, merged exactly;
- squared-hinge SVM: L-BFGS on the primal, one pass per evaluation, every
  one-vs-rest problem in the same pass (the objective is separable);
- squared epsilon-insensitive SVR: the same, one problem;
- logistic regression: L-BFGS, one pass per evaluation;
- k-means: Lloyd's iterations, one pass each.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._planner import sparse_row_bytes
from .._validation import iter_row_blocks
from ._logistic import LogisticProblem, ParameterLayout, fit_logistic, penalised
from ._primal import lbfgs_relative
from ._ridge import RidgeStatistics, accumulate

__all__ = [
    "check_finite_chunk", "feature_blocks", "chunked_ridge", "chunked_squared_hinge",
    "chunked_squared_svr", "chunked_logistic", "label_weights", "chunked_kmeans",
]


def check_finite_chunk(X):
    """Refuse a chunk holding NaN or infinity (sums over it would silently be NaN)."""
    values = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(values)):
        raise ValueError("A chunk of the data contains NaN or infinity; clean or impute those "
                         "rows before fitting.")


def feature_blocks(X, fmap, width, memory_budget):
    """Yield ``(start, stop, Z)``: the features of ``X`` in row blocks under the budget.

    ``fmap`` None means the raw features (dense rows as float64, CSR kept sparse).
    A chunk holding NaN or infinity is refused (the sums would silently be NaN).
    """
    check_finite_chunk(X)
    if fmap is None:
        if not sp.issparse(X):
            X = np.asarray(X, dtype=np.float64)
        yield 0, X.shape[0], X
        return
    itemsize = np.dtype(getattr(fmap, "dtype", None) or np.float64).itemsize
    per_row = 3 * itemsize * int(width) + sparse_row_bytes(X)
    for start, stop in iter_row_blocks(X.shape[0], per_row, memory_budget,
                                       what="a block of mapped features"):
        yield start, stop, fmap.transform(X[start:stop])


def _rows(S, start, stop):
    return None if S is None else S[start:stop]


# ---------------------------------------------------------------- ridge

def _ridge_part(X, y, w, fmap, encode, width, n_targets, budget):
    Y, S = (np.zeros((X.shape[0], 0)), w) if encode is None else encode(y, w)
    stats = RidgeStatistics(width, n_targets)
    for start, stop, Z in feature_blocks(X, fmap, width, budget):
        accumulate(Z, Y[start:stop], _rows(S, start, stop), budget, stats=stats)
    return stats


def _merge_statistics(a, b):
    return a.merge(b.weight, b.mean_z, b.mean_y, b.zz, b.zy)


def chunked_ridge(source, fmap, encode, width, n_targets, memory_budget):
    """Ridge statistics of every row of ``source`` (one pass).

    Parameters
    ----------
    source : RowSource
    fmap : fitted transformer or None
    encode : callable or None
        ``encode(y, w) -> (Y, S)`` with ``Y`` of shape (rows, n_targets) and ``S``
        per-row weights (or None); None: no targets (the feature moments only).
    width : int
        Columns of the features.
    n_targets : int
    memory_budget : int

    Returns
    -------
    stats : RidgeStatistics
    """
    return source.map_reduce(
        _ridge_part, (source.share(fmap), encode, width, n_targets, memory_budget),
        combine=_merge_statistics)


# ---------------------------------------------------------- squared hinge

def _hinge_part(X, y, w, fmap, encode, W, settings):
    bias, width, budget = settings
    Y, S = encode(y, w)
    value = 0.0
    grad = np.zeros_like(W)
    for start, stop, Z in feature_blocks(X, fmap, width, budget):
        M = np.asarray(Z @ W[:width].astype(Z.dtype), dtype=np.float64) + bias * W[width]
        Yb = Y[start:stop]
        slack = np.maximum(1.0 - Yb * M, 0.0)
        Sb = S[start:stop]
        P = Sb if Sb.ndim == 2 else Sb[:, None]
        value += float(np.sum(P * slack * slack))
        G = -2.0 * P * Yb * slack
        grad[:width] += np.asarray(Z.T @ G.astype(Z.dtype), dtype=np.float64)
        grad[width] += bias * G.sum(axis=0)
    return value, grad


def _lbfgs_over_chunks(source, part, args, shape, *, tol, max_iter, callback):
    """Minimise ``1/2 ||x||^2 + sum over chunks of part(chunk, x, *args)`` by L-BFGS.

    ``args`` is ``(shared map, encoder, settings)``; every chunk is reduced by
    ``part(X, y, w, map, encoder, x, settings)`` to its ``(loss, gradient)`` at
    the parameters ``x`` (of ``shape``). The gradient at zero is the reference
    of the stopping rule.
    """
    last = {}

    def fun(x):
        # L-BFGS starts by evaluating x0, which grad0 below has just done: one pass saved
        if "x" in last and np.array_equal(last["x"], x):
            return last["value"], last["grad"].copy()
        value, grad = source.map_reduce(part, (*args[:-1], x.reshape(shape), args[-1]))
        last.update(x=x.copy(), value=0.5 * float(x @ x) + value, grad=x + grad.ravel())
        return last["value"], last["grad"].copy()

    x0 = np.zeros(int(np.prod(shape)))
    grad0 = float(np.linalg.norm(fun(x0)[1]))
    x, n_iter, converged = lbfgs_relative(fun, x0, grad0=grad0, tol=tol, max_iter=max_iter,
                                          callback=callback)
    return x.reshape(shape), n_iter, converged


def chunked_squared_hinge(source, fmap, encode, width, n_problems, *, bias, tol, max_iter,
                          memory_budget, callback=None):
    """Squared-hinge SVMs (all one-vs-rest problems at once) by L-BFGS over chunks.

    Minimises ``sum_k [1/2 ||w_k||^2 + sum_i S_ik max(0, 1 - Y_ik w_k . z^_i)^2]``
    with ``z^_i = [z_i, bias]`` (LIBLINEAR's regularised intercept); ``S`` holds
    ``C`` times the row weights.

    Returns
    -------
    W : ndarray of shape (width + 1, n_problems)
    n_iter : int
    converged : bool
    """
    return _lbfgs_over_chunks(
        source, _hinge_part,
        (source.share(fmap), encode, (bias, width, memory_budget)), (width + 1, n_problems),
        tol=tol, max_iter=max_iter, callback=callback)


# ------------------------------------------------ squared epsilon-insensitive

def _svr_part(X, y, w, fmap, encode, x, settings):
    bias, epsilon, width, budget = settings
    Y, S = encode(y, w)
    value = 0.0
    grad = np.zeros_like(x)
    for start, stop, Z in feature_blocks(X, fmap, width, budget):
        residual = Y[start:stop, 0] - (
            np.asarray(Z @ x[:width].astype(Z.dtype), dtype=np.float64) + bias * x[width])
        excess = np.maximum(np.abs(residual) - epsilon, 0.0)
        Sb = S[start:stop]
        value += float(Sb @ (excess * excess))
        G = -2.0 * Sb * excess * np.sign(residual)
        grad[:width] += np.asarray(Z.T @ G.astype(Z.dtype), dtype=np.float64)
        grad[width] += bias * G.sum()
    return value, grad


def chunked_squared_svr(source, fmap, encode, width, *, epsilon, bias, tol, max_iter,
                        memory_budget, callback=None):
    """Linear epsilon-SVR with the squared epsilon-insensitive loss, by L-BFGS over chunks.

    Minimises ``1/2 ||w||^2 + sum_i S_i max(0, |y_i - w . z^_i| - epsilon)^2``
    with ``z^_i = [z_i, bias]``: the primal of LIBLINEAR's L2-loss SVR (solver
    11 / 12, the one :func:`dual_cd_svr` solves in memory). ``S`` holds ``C``
    times the row weights. The loss is differentiable, so every evaluation is
    one pass; the absolute (L1) loss is not, and has no chunked fit.

    Returns
    -------
    w : ndarray of shape (width + 1,)
    n_iter : int
    converged : bool
    """
    return _lbfgs_over_chunks(
        source, _svr_part,
        (source.share(fmap), encode, (bias, float(epsilon), width, memory_budget)),
        (width + 1,), tol=tol, max_iter=max_iter, callback=callback)


# ---------------------------------------------------------------- logistic

def _logistic_part(X, y, w, fmap, encode, coef, intercept, width, budget):
    targets, S = encode(y, w)
    k = coef.shape[1]
    loss, grad_coef, grad_b = 0.0, np.zeros_like(coef), np.zeros(k)
    for start, stop, Z in feature_blocks(X, fmap, width, budget):
        problem = LogisticProblem(Z, targets[start:stop], k, S[start:stop], 1.0, True, budget)
        part = problem.data_terms(coef, intercept)
        loss += part[0]
        grad_coef += part[1]
        grad_b += part[2]
    return loss, grad_coef, grad_b, float(S.sum())


class ChunkedLogisticProblem(ParameterLayout):
    """:class:`LogisticProblem`'s ``loss_grad`` / ``unpack`` with every evaluation a pass
    over the chunks of a row source, for :func:`fit_logistic`."""

    def __init__(self, source, fmap, encode, width, n_columns, C, fit_intercept, memory_budget):
        self.source, self.encode = source, encode
        self.shared_map = source.share(fmap)
        self.d, self.k = width, n_columns
        self.C, self.fit_intercept, self.memory_budget = C, fit_intercept, memory_budget

    def loss_grad(self, x):
        coef, intercept = self.unpack(x)
        loss, grad_coef, grad_b, total = self.source.map_reduce(
            _logistic_part, (self.shared_map, self.encode, coef, intercept, self.d,
                             self.memory_budget))
        return penalised(loss, grad_coef, grad_b, coef, total, self.C, self.fit_intercept)


def chunked_logistic(source, fmap, encode, width, n_columns, *, C, fit_intercept, tol,
                     max_iter, memory_budget, verbose=0):
    """L2-regularised logistic regression (binary or multinomial) by L-BFGS over chunks.

    Same objective, scaling and stopping rule as :func:`fit_logistic` on a
    :class:`LogisticProblem`; ``encode`` returns ``(targets, weights)`` with
    targets ``+-1`` (one column) or class indices.

    Returns
    -------
    coef : ndarray of shape (n_columns, width)
    intercept : ndarray of shape (n_columns,)
    n_iter : int
    converged : bool
    """
    problem = ChunkedLogisticProblem(source, fmap, encode, width, n_columns, C, fit_intercept,
                                     memory_budget)
    return fit_logistic(problem, solver="lbfgs", tol=tol, max_iter=max_iter, verbose=verbose)


# ------------------------------------------------------------------ labels

def _label_part(X, y, w):
    labels, index = np.unique(y, return_inverse=True)
    weights = np.bincount(index, weights=None if w is None else np.asarray(w, float),
                          minlength=len(labels))
    return labels, weights.astype(float)


def _merge_labels(a, b):
    labels = np.union1d(a[0], b[0])
    weights = np.zeros(len(labels))
    weights[np.searchsorted(labels, a[0])] += a[1]
    weights[np.searchsorted(labels, b[0])] += b[1]
    return labels, weights


def label_weights(source):
    """``(classes, total sample weight of each class)`` in one pass over ``source``."""
    return source.map_reduce(_label_part, (), combine=_merge_labels)


# ----------------------------------------------------------------- k-means

def _lloyd_part(X, y, w, fmap, centers, width, budget):
    k = centers.shape[0]
    sums, counts, inertia = np.zeros((k, width)), np.zeros(k), 0.0
    c_sq = np.einsum("ij,ij->i", centers, centers)
    for start, stop, Z in feature_blocks(X, fmap, width, budget):
        s = np.ones(stop - start) if w is None else np.asarray(w[start:stop], dtype=np.float64)
        cross = np.asarray(Z @ centers.T.astype(Z.dtype), dtype=np.float64)
        z_sq = np.einsum("ij,ij->i", Z, Z).astype(np.float64)
        distance = z_sq[:, None] - 2.0 * cross + c_sq
        labels = np.argmin(distance, axis=1)
        inertia += float(s @ np.maximum(distance[np.arange(len(labels)), labels], 0.0))
        # the weighted one-hot matrix sums every cluster's rows in one sparse product
        assign = sp.csr_matrix((s.astype(Z.dtype), (labels, np.arange(len(labels)))),
                               shape=(k, len(labels)))
        sums += np.asarray(assign @ Z, dtype=np.float64)
        counts += np.bincount(labels, weights=s, minlength=k)
    return sums, counts, inertia


def chunked_kmeans(source, fmap, centers, width, *, max_iter, tol, memory_budget):
    """Lloyd's k-means over the chunks of ``source``, one pass per iteration.

    Parameters
    ----------
    source : RowSource
    fmap : fitted transformer or None
    centers : ndarray of shape (n_clusters, width)
        Initial centres (k-means++ on a sample, say).
    width : int
    max_iter : int
    tol : float
        Stop when the squared centre shift is at most ``tol``.
    memory_budget : int

    Returns
    -------
    centers : ndarray of shape (n_clusters, width)
    inertia : float
        Weighted sum of squared distances to the closest centre, at the last pass.
    n_iter : int
    """
    shared_map = source.share(fmap)
    centers = np.asarray(centers, dtype=np.float64)
    inertia, n_iter, shift = 0.0, 0, np.inf
    while n_iter < max_iter and shift > tol:
        sums, counts, inertia = source.map_reduce(
            _lloyd_part, (shared_map, centers, width, memory_budget))
        # an empty cluster keeps its centre
        new = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1e-300)[:, None], centers)
        shift = float(np.sum((new - centers) ** 2))
        centers = new
        n_iter += 1
    return centers, inertia, n_iter
