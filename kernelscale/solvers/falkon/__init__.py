"""FALKON (Rudi, Carratino & Rosasco 2017), split as FALKON's own code is.

- ``_operator``: ``K(X, C)`` products, in memory or over a row source;
- ``_preconditioner``: the Cholesky preconditioner, both factors in one buffer;
- ``_driver``: right-hand side, preconditioned CG (:func:`kernelscale.solvers.conjugate_gradient`),
  coefficients;
- ``_products`` / ``_triangular``: the numba loops for a few right-hand sides;
- ``_settings``: the solver's constants (``FALKON_SETTINGS``).
"""

from ._driver import FalkonSystem, falkon, falkon_solve, falkon_system
from ._operator import ChunkedKernelOperator, KernelOperator
from ._preconditioner import MAX_RELATIVE_JITTER, FalkonPreconditioner
from ._products import normal_product
from ._settings import FALKON_SETTINGS, FalkonOptions, FalkonSettings
from ._triangular import solve_triangular

__all__ = ["falkon", "falkon_solve", "falkon_system", "FalkonSystem", "FalkonOptions",
           "KernelOperator", "ChunkedKernelOperator",
           "FalkonPreconditioner", "MAX_RELATIVE_JITTER", "normal_product", "solve_triangular",
           "FalkonSettings", "FALKON_SETTINGS"]
