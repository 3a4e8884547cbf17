"""``Metric``: a learned Mahalanobis metric for the shift-invariant kernels.

A scalar ``gamma`` weighs every direction alike, per-feature widths (a 1-D
``gamma``) weigh each column; a metric ``M`` (d x d, positive semi-definite) also
turns and combines columns: ``exp(-(x - y)^T M (x - y))`` for the RBF kernel. With
``M = L L^T`` (``L``: d x r) that is the isotropic kernel (``gamma = 1``) on the
rows ``x L``, which is how every kernel block, feature map and solver uses it: the
rows are transformed once per block and the rest is the isotropic code. A factor
of low rank ``r < d`` makes wide data cheaper (blocks of r columns). The
Recursive Feature Machine learns such a metric from the average gradient outer
product of a kernel predictor (:class:`kernelscale.model_selection.KernelMetric`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy import linalg

__all__ = ["Metric", "check_metric"]

#: eigenvalues of a given matrix below this fraction of its largest are round-off
_RCOND = 1e-10


class Metric:
    """A Mahalanobis metric ``M = L L^T`` for the RBF, Laplacian and exponential kernels.

    Give exactly one of ``matrix`` (a d x d symmetric positive semi-definite ``M``)
    or ``factor`` (``L``, d x r). The RBF kernel with this metric as ``gamma`` is
    ``exp(-(x - y)^T M (x - y))``, the isotropic kernel on ``X L``; the exponential
    kernel ``exp(-||x - y||_M)``; the Laplacian ``exp(-||(x - y) L||_1)`` (for a
    ``matrix``, ``L`` is its symmetric square root). Per-feature widths
    ``gamma_d`` are the diagonal metric ``M = diag(gamma_d)``.

    Parameters
    ----------
    matrix : array-like of shape (n_features, n_features), default=None
    factor : array-like of shape (n_features, rank), default=None

    Attributes
    ----------
    factor : ndarray of shape (n_features, rank)
        ``L`` (read-only; from a ``matrix``, its square root restricted to the
        directions above round-off).
    n_features : int
    rank : int

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.kernels import RBF, Metric
    >>> M = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> x, y = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> d = (x - y)[0]
    >>> bool(np.isclose(RBF(Metric(matrix=M)).gram(x, y)[0, 0], np.exp(-d @ M @ d)))
    True
    """

    def __init__(self, matrix=None, factor=None):
        if (matrix is None) == (factor is None):
            raise ValueError("Metric takes a matrix (d x d, positive semi-definite) or a "
                             "factor (d x r, M = L L^T), not both and not neither.")
        if matrix is not None:
            self.factor = _factor_of(_check_matrix(matrix))
        else:
            self.factor = _check_factor(factor)
        self.factor.setflags(write=False)

    @property
    def n_features(self):
        return self.factor.shape[0]

    @property
    def rank(self):
        return self.factor.shape[1]

    @property
    def matrix(self):
        """``M = L L^T`` (d x d)."""
        return self.factor @ self.factor.T

    def scaled(self, factor):
        """This metric times ``factor`` (> 0): ``factor * M``, as a gamma factor scales a
        kernel's gamma."""
        return Metric(factor=self.factor * np.sqrt(float(factor)))

    def transform(self, X, dtype=None):
        """``X L``: the rows in the metric's coordinates (dense), where the isotropic
        kernel with ``gamma = 1`` is this metric's.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        dtype : numpy dtype, default=None
            None: X's floating dtype (float64 for other input).

        Returns
        -------
        Z : ndarray of shape (n_samples, rank)
        """
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, the metric {self.n_features}.")
        dtype = np.dtype(dtype or (X.dtype if X.dtype in (np.float32, np.float64)
                                   else np.float64))
        Z = X @ self.factor if sp.issparse(X) else np.asarray(X, dtype=np.float64) @ self.factor
        return np.ascontiguousarray(np.asarray(Z), dtype=dtype)

    def __eq__(self, other):
        return isinstance(other, Metric) and np.array_equal(self.factor, other.factor)

    def __hash__(self):
        return hash((self.factor.shape, self.factor.tobytes()[:256]))

    def __repr__(self):
        return f"Metric(n_features={self.n_features}, rank={self.rank})"


def _check_matrix(matrix):
    try:
        M = np.array(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"The metric must be a d x d matrix of numbers, got {matrix!r}.") \
            from None
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0:
        raise ValueError(f"The metric must be a square d x d matrix, got shape {M.shape}.")
    if not np.all(np.isfinite(M)):
        i, j = np.argwhere(~np.isfinite(M))[0]
        raise ValueError(f"The metric must be finite; entry ({i}, {j}) is {M[i, j]!r}.")
    scale = max(float(np.max(np.abs(M))), np.finfo(np.float64).tiny)
    if not np.allclose(M, M.T, rtol=1e-8, atol=1e-10 * scale):
        raise ValueError("The metric must be symmetric (M = M^T); symmetrise it, e.g. "
                         "(M + M.T) / 2.")
    return (M + M.T) / 2


def _factor_of(M):
    """The symmetric square root's directions above round-off, as a d x r factor."""
    s, V = linalg.eigh(M, check_finite=False)
    top = max(float(s[-1]), 0.0)
    if s[0] < -1e-8 * max(top, 1.0):
        raise ValueError(f"The metric must be positive semi-definite; its smallest eigenvalue "
                         f"is {s[0]:.3g} (largest {top:.3g}).")
    if top <= 0.0:
        raise ValueError("The metric is 0: the kernel would be constant; give a metric "
                         "with at least one positive eigenvalue.")
    keep = s > _RCOND * top
    return np.ascontiguousarray(V[:, keep] * np.sqrt(s[keep]))


def _check_factor(factor):
    try:
        L = np.array(factor, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"The metric's factor must be a d x r matrix of numbers, got "
                         f"{factor!r}.") from None
    if L.ndim != 2 or L.size == 0:
        raise ValueError(f"The metric's factor must be a d x r matrix, got shape {L.shape}.")
    if not np.all(np.isfinite(L)):
        raise ValueError("The metric's factor must be finite.")
    if not np.any(L):
        raise ValueError("The metric's factor is 0: the kernel would be constant.")
    return np.ascontiguousarray(L)


def check_metric(metric, n_features=None):
    """A :class:`Metric` from a Metric or a d x d matrix, checked against ``n_features``."""
    if not isinstance(metric, Metric):
        metric = Metric(matrix=metric)
    if n_features is not None and metric.n_features != n_features:
        raise ValueError(f"The metric is for {metric.n_features} features but the data have "
                         f"{n_features}: give a {n_features} x {n_features} metric.")
    return metric
