"""Solvers: plain functions on arrays, called by the estimators in ``kernelscale.models``."""

from ._blocked import margins, rmatvec, weighted_gram
from ._cg import conjugate_gradient
from ._chunked_solvers import (
    check_finite_chunk,
    chunked_kmeans,
    chunked_logistic,
    chunked_ridge,
    chunked_squared_hinge,
    chunked_squared_svr,
    feature_blocks,
    label_weights,
)
from ._dual_cd import dual_cd
from ._dual_cd_svr import dual_cd_svr, svr_primal_objective
from ._logistic import LogisticProblem, fit_logistic
from ._primal import squared_hinge_lbfgs, squared_hinge_newton, squared_hinge_objective
from ._ridge import RidgeStatistics, accumulate, solve_ridge
from ._sgd import SGDState, asgd_pass
from ._subgradient import kernel_subgradient_descent, kernel_subgradient_svm, subgradient_descent
from ._widths import holdout_loss, width_statistics
from .falkon import (
    MAX_RELATIVE_JITTER,
    ChunkedKernelOperator,
    FalkonPreconditioner,
    KernelOperator,
    falkon,
    falkon_solve,
    normal_product,
    solve_triangular,
)
from .smo import (
    DenseWorkspace,
    KernelRows,
    PairedRows,
    RowCache,
    dual_objective,
    linear_one_class,
    one_class_start,
    scaled_start,
    smo,
    smo_dense,
    smo_dense_path,
    smo_one_class,
    smo_regression,
    submatrix,
)

__all__ = [
    "holdout_loss",
    "width_statistics",
    "ChunkedKernelOperator",
    "FalkonPreconditioner",
    "MAX_RELATIVE_JITTER",
    "KernelOperator",
    "normal_product",
    "solve_triangular",
    "LogisticProblem",
    "RidgeStatistics",
    "SGDState",
    "accumulate",
    "check_finite_chunk",
    "asgd_pass",
    "chunked_kmeans",
    "chunked_logistic",
    "chunked_ridge",
    "chunked_squared_hinge",
    "chunked_squared_svr",
    "feature_blocks",
    "label_weights",
    "conjugate_gradient",
    "dual_cd",
    "dual_cd_svr",
    "svr_primal_objective",
    "linear_one_class",
    "falkon",
    "falkon_solve",
    "fit_logistic",
    "margins",
    "rmatvec",
    "solve_ridge",
    "squared_hinge_lbfgs",
    "squared_hinge_newton",
    "squared_hinge_objective",
    "subgradient_descent",
    "kernel_subgradient_descent",
    "kernel_subgradient_svm",
    "DenseWorkspace",
    "KernelRows",
    "PairedRows",
    "RowCache",
    "one_class_start",
    "smo_one_class",
    "smo_regression",
    "dual_objective",
    "scaled_start",
    "smo",
    "smo_dense",
    "smo_dense_path",
    "submatrix",
    "weighted_gram",
]
