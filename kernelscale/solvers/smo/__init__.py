"""The exact SVM dual by SMO on batched working sets (``_solver``), with kernel rows
computed by GEMM and kept in an LRU cache (``_rows``) and numba inner loops (``_compiled``)."""

from ._dense import smo_dense, submatrix
from ._rows import KernelRows, RowCache
from ._solver import dual_objective, smo

__all__ = ["KernelRows", "RowCache", "dual_objective", "smo", "smo_dense",
           "submatrix"]
