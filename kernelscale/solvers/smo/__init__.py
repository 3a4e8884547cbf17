"""The exact SVM dual by SMO.

Two decompositions, one set of rules:

- :func:`smo` (``_solver``): working sets of up to ``working_set_size`` variables, over
  the rows protocol of ``_protocol`` (kernel rows computed by GEMM into an LRU cache,
  ``_rows``, or read from a matrix held whole, ``_matrix_rows``); the SVR and one-class
  duals (``_variants``) run through it.
- :func:`smo_dense` / :func:`smo_dense_path` (``_dense``): LIBSVM's pair SMO compiled
  whole on a matrix held whole, for ``KernelSVC``'s one-vs-one pairs and the search's C
  paths. On the same matrices it is 1.46-1.55x faster than :func:`smo` (MNIST-10k's 45
  pairs, the 26-class set's 325; ``benchmarks/bench_engines.py``), and it cannot run
  through a row cache: both are kept.

They share the intercept (``solution_summary``), the warm start along C
(``scaled_is_better``), the compiled pair step and their constants (``_settings``).
"""

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
