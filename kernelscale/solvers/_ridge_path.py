"""Ridge solutions along a path of penalties from one eigendecomposition, and the
whitening of a kernel's centres (the Nystrom coordinates) they are solved in.

Both serve Nystrom kernel ridge wherever it is solved for many penalties at once:
the search's FALKON grid (every alpha of a gamma and fold), the Nystrom SVM grid's
map, and the learned metric's rounds.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .._parallel import large_symmetric_blas

__all__ = ["ridge_path", "whitening"]

# directions of K_mm below this fraction of its largest eigenvalue carry only
# round-off (FALKON's own Cholesky adds a jitter of the same order)
_RCOND = 1e-12


def ridge_path(A, b, basis, alphas):
    """Coefficients ``beta`` minimising ``beta^T A beta - 2 b^T beta + alpha beta^T R beta``.

    ``basis`` (m, k) whitens ``R`` (``basis^T R basis = I`` on its kept
    directions), so the system is ``(M + alpha I) z = c`` in ``z``: one
    eigendecomposition of ``M`` serves every alpha (LAPACK's divide and conquer: 1.2-1.6x
    faster than the default driver on these matrices, m = 500..1000). Returns a list (per
    alpha) of (m, t).
    """
    M = basis.T @ A @ basis
    M = (M + M.T) / 2
    with large_symmetric_blas(M.shape[0], M.dtype.itemsize):
        s, U = linalg.eigh(M, check_finite=False, driver="evd")
    # a fold's statistics (total minus the fold) carry round-off that whitening
    # can turn slightly negative: M is semi-definite, so those are 0
    s = np.maximum(s, 0.0)
    c = U.T @ (basis.T @ b)
    left = basis @ U
    return [left @ (c / (s + alpha)[:, None]) for alpha in alphas]


def whitening(K_mm, rcond=_RCOND, scale=None):
    """``V_k / sqrt(r_k)`` over the eigenpairs of ``K_mm`` above ``rcond`` x ``scale``.

    ``scale``: None for the largest eigenvalue; :class:`kernelscale.feature_maps.Nystroem`
    measures its cutoff against the largest diagonal entry instead.
    """
    with large_symmetric_blas(K_mm.shape[0], K_mm.dtype.itemsize):
        r, V = linalg.eigh(K_mm, check_finite=False, driver="evd")
    scale = r[-1] if scale is None else scale
    keep = r > rcond * max(scale, np.finfo(np.float64).tiny)
    return V[:, keep] / np.sqrt(r[keep])
