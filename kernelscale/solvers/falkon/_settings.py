"""FALKON's solver constants, in one place, each with why it has its value.

The model-level choices (the automatic number of centres, the penalty of
``alpha="auto"``, float32's penalty floor) are the estimators' and live with them
(``kernelscale.models.ridge``); these only decide how the solver computes.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FalkonSettings", "FALKON_SETTINGS"]


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
