"""The exact SVM dual by SMO on batched working sets (``_solver``), with kernel rows
computed by GEMM and kept in an LRU cache (``_rows``) and numba inner loops (``_compiled``)."""

from ._dense import DenseWorkspace, scaled_start, smo_dense, smo_dense_path, submatrix
from ._linear import linear_one_class
from ._rows import KernelRows, RowCache
from ._solver import dual_objective, smo
from ._variants import PairedRows, one_class_start, smo_one_class, smo_regression

__all__ = ["DenseWorkspace", "KernelRows", "PairedRows", "RowCache", "dual_objective",
           "linear_one_class", "one_class_start", "scaled_start", "smo", "smo_dense",
           "smo_dense_path", "smo_one_class", "smo_regression", "submatrix"]
