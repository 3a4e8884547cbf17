"""The exact SVM dual by SMO on batched working sets (``_solver``), with kernel rows
computed by GEMM and kept in an LRU cache (``_rows``) or read from a matrix held whole
(``_matrix_rows``), both behind the protocols of ``_protocol``, and numba inner loops
(``_compiled``)."""

from ._dense import DenseWorkspace, scaled_start, smo_dense, smo_dense_path, submatrix
from ._linear import linear_one_class
from ._matrix_rows import MatrixCache, MatrixRows
from ._protocol import ComputedRows, ComputingRowStore, KernelRowSource, RowStore
from ._rows import KernelRows, RowCache
from ._settings import SMO_SETTINGS, SMOSettings
from ._solver import dual_objective, smo
from ._variants import PairedRows, one_class_start, smo_one_class, smo_regression

__all__ = ["DenseWorkspace", "KernelRows", "PairedRows", "RowCache", "MatrixRows", "MatrixCache",
           "KernelRowSource", "ComputedRows", "RowStore", "ComputingRowStore", "SMOSettings",
           "SMO_SETTINGS", "dual_objective",
           "linear_one_class", "one_class_start", "scaled_start", "smo", "smo_dense",
           "smo_dense_path", "smo_one_class", "smo_regression", "submatrix"]
