"""FALKON's solver constants, each with why it has its value, and a fit's options.

The model-level choices (the automatic number of centres, the penalty of
``alpha="auto"``, float32's penalty floor) are the estimators' and live with them
(``kernelscale.models.ridge``); :class:`FalkonSettings` only decides how the solver
computes, :class:`FalkonOptions` what one fit asks of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["FalkonSettings", "FALKON_SETTINGS", "FalkonOptions"]


@dataclass(frozen=True)
class FalkonSettings:
    """How FALKON's solver works, not what it solves.

    Attributes
    ----------
    max_relative_jitter : float
        The largest jitter (relative to the mean diagonal of ``K_mm``) tried before a
        Cholesky factorisation of the centres' kernel matrix is given up; the error
        then quotes it.
    flush_rows : int
        Rows of ``K`` summed in ``K.dtype`` before the partial sum is added to the
        float64 total: float32 sums of a few hundred rows lose no more than a float32
        GEMM over a cache block did.
    """

    max_relative_jitter: float = 1e-2
    flush_rows: int = 128


#: the settings FALKON runs with
FALKON_SETTINGS = FalkonSettings()


@dataclass(frozen=True)
class FalkonOptions:
    """What one FALKON fit asks of the solver, passed whole to each of its phases.

    A phase that decides more builds a new value with :func:`dataclasses.replace`
    (the estimator sets ``dtype`` once it has seen the data), so no phase changes what
    another was given.

    Attributes
    ----------
    max_iter : int
        CG iterations at most.
    tol : float
        A target's CG stops when its relative residual is below ``tol``.
    preconditioner : bool
        False runs plain CG on ``H beta = b`` (for comparison only).
    dtype : numpy dtype
        dtype of the kernel blocks ``K(X, C)`` (sums across blocks are float64).
    memory_budget : int
        Bytes for the kernel blocks (or ``K(X, C)`` kept whole) and the m x m factors.
    verbose : int
        Print each iteration's largest residual and the elapsed time (>= 1).
    monitor : callable or None
        ``monitor(iteration, relative_residuals)`` after every iteration (progress bars).
    callback : callable or None
        ``callback(iteration, beta)`` with the current coefficients.
    """

    max_iter: int = 50
    tol: float = 1e-6
    preconditioner: bool = True
    dtype: Any = np.float32
    memory_budget: int = 2**30
    verbose: int = 0
    monitor: Callable | None = None
    callback: Callable | None = None
