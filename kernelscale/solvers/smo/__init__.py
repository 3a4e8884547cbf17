"""The exact SVM dual by SMO: one decomposition around one pair solver.

LIBSVM has one ``Solver`` over an abstract ``QMatrix``; here:

- :func:`smo` (``_solver``) is the decomposition, over the rows protocol of
  ``_protocol``. It picks the working set: the whole problem when its store holds
  the problem's kernel matrix (``RowStore.whole``: a matrix held whole, one row per
  variable), otherwise up to ``working_set_size`` variables at a time, whose rows
  come from an LRU cache filled by GEMM (``_rows``) or from a matrix (SVR's ``2 n``
  variables over ``n`` rows, ``_variants``).
- ``solve_pairs`` (``_dense_compiled``) is the pair solver every working set goes
  through: LIBSVM's second-order pair selection and analytic step, compiled, and
  LIBSVM's shrinking (by compaction) when the working set is the whole problem.
- The rules are written once and shared: which variables may move and the maximal
  violation (``set_flags``, ``violation_bounds``), which to shrink
  (``shrink_marks``), rho (``solution_summary``), the warm start along C
  (``scaled_is_better``), and the constants (``_settings``).
- :func:`smo_dense` is :func:`smo` on a matrix given as an array, with its gradient
  returned; :func:`smo_dense_path` runs the whole-problem case for every fold and
  every C of a search in one compiled call (``_path_compiled``); ``linear_one_class``
  (``_linear``) is the decomposition over explicit features, whose gradient is
  ``Z w`` and never a kernel row.
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
