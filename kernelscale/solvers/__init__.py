"""Solvers: plain functions on arrays, called by the estimators in ``kernelscale.models``
and by the searches in ``kernelscale.model_selection``.

This front holds what those layers call (and the FALKON, SMO and CG solvers a reader
calls directly); the solvers' parts (SMO's row stores and caches, its settings, FALKON's
preconditioner and operators, the numba products) stay in their subpackages
(``kernelscale.solvers.smo``, ``kernelscale.solvers.falkon``) and modules.
"""

from ._agop import gradient_outer_product
from ._blocked import weighted_gram
from ._chunked_solvers import (
    check_finite_chunk,
    chunked_kmeans,
    chunked_logistic,
    chunked_ridge,
    chunked_squared_hinge,
    chunked_squared_svr,
    label_weights,
)
from ._dual_cd import dual_cd
from ._dual_cd_svr import dual_cd_svr
from ._liblinear_cd import crammer_singer_cd, l1_svc_cd
from ._logistic import LogisticProblem, fit_logistic
from ._primal import squared_hinge_lbfgs, squared_hinge_newton
from ._ridge import RidgeStatistics, accumulate, solve_ridge
from ._ridge_path import ridge_path, whitening
from ._sgd import SGDState, asgd_pass
from ._subgradient import subgradient_descent
from ._svm_path import (
    OvoLayout,
    ThreadWorkspaces,
    combine_scores,
    fold_svm_problems,
    path_units,
    solve_problem_path,
    solve_rows_path,
    solve_svm_path,
    svm_decision_values,
    training_kernel_matrix,
    warn_unconverged,
    workspace_bytes,
)
from ._svm_problems import (
    CLASS_WEIGHTS,
    balanced_class_factors,
    balanced_factors,
    base_weights,
    class_factors,
    dual_coefficients,
    ovo_classes,
    ovo_problems,
    ovo_votes,
    ovr_problems,
    ovr_targets,
    pairs,
    plus_minus_targets,
)
from ._widths import WIDTH_KERNELS, holdout_loss
from .falkon import FalkonOptions, falkon_solve, falkon_system
from .smo import (
    KernelRows,
    linear_one_class,
    one_class_start,
    smo_dense,
    smo_one_class,
    smo_regression,
)

__all__ = [
    "CLASS_WEIGHTS",
    "FalkonOptions",
    "KernelRows",
    "LogisticProblem",
    "OvoLayout",
    "RidgeStatistics",
    "SGDState",
    "ThreadWorkspaces",
    "WIDTH_KERNELS",
    "accumulate",
    "asgd_pass",
    "balanced_class_factors",
    "balanced_factors",
    "base_weights",
    "check_finite_chunk",
    "chunked_kmeans",
    "chunked_logistic",
    "chunked_ridge",
    "chunked_squared_hinge",
    "chunked_squared_svr",
    "class_factors",
    "combine_scores",
    "dual_cd",
    "dual_cd_svr",
    "l1_svc_cd",
    "crammer_singer_cd",
    "dual_coefficients",
    "falkon_solve",
    "falkon_system",
    "fit_logistic",
    "fold_svm_problems",
    "gradient_outer_product",
    "holdout_loss",
    "label_weights",
    "linear_one_class",
    "ovo_classes",
    "ovo_problems",
    "ovo_votes",
    "ovr_problems",
    "ovr_targets",
    "pairs",
    "path_units",
    "plus_minus_targets",
    "ridge_path",
    "one_class_start",
    "smo_dense",
    "smo_one_class",
    "smo_regression",
    "solve_problem_path",
    "solve_ridge",
    "solve_rows_path",
    "solve_svm_path",
    "squared_hinge_lbfgs",
    "squared_hinge_newton",
    "subgradient_descent",
    "svm_decision_values",
    "training_kernel_matrix",
    "warn_unconverged",
    "weighted_gram",
    "whitening",
    "workspace_bytes",
]
