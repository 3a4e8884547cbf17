"""Solvers: plain functions on arrays, called by the estimators in ``kernelscale.models``."""

from ._blocked import margins, rmatvec, weighted_gram
from ._cg import conjugate_gradient
from ._chunked_solvers import (
    check_finite_chunk,
    chunked_kmeans,
    chunked_logistic,
    chunked_ridge,
    chunked_squared_hinge,
    feature_blocks,
    label_weights,
)
from ._dual_cd import dual_cd
from ._logistic import LogisticProblem, fit_logistic
from ._primal import squared_hinge_lbfgs, squared_hinge_newton, squared_hinge_objective
from ._ridge import RidgeStatistics, accumulate, solve_ridge
from ._sgd import SGDState, asgd_pass
from ._subgradient import kernel_subgradient_descent, kernel_subgradient_svm, subgradient_descent
from .falkon import (
    ChunkedKernelOperator,
    FalkonPreconditioner,
    KernelOperator,
    falkon,
    falkon_solve,
    normal_product,
    solve_triangular,
)
from .smo import KernelRows, RowCache, dual_objective, smo, smo_dense, submatrix

__all__ = [
    "ChunkedKernelOperator",
    "FalkonPreconditioner",
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
    "feature_blocks",
    "label_weights",
    "conjugate_gradient",
    "dual_cd",
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
    "KernelRows",
    "RowCache",
    "dual_objective",
    "smo",
    "smo_dense",
    "submatrix",
    "weighted_gram",
]
