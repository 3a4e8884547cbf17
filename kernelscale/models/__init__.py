"""Estimators: linear and approximate-kernel classifiers and regressors."""

from ._approx_svr import ApproxKernelOneClassSVM, ApproxKernelSVR
from ._doubly_sgd import DoublySGDSVC
from ._falkon import (
    FLOAT32_PENALTY_FLOOR,
    NystromKernelRidge,
    NystromKernelRidgeClassifier,
    auto_n_components,
)
from ._kernel_svm import KernelSVC
from ._kernel_svr import KernelOneClassSVM, KernelSVR
from ._linear_svm import LinearSVC, fit_linear_svm
from ._logistic import KernelLogisticRegression
from ._matrix_svm import (
    OvoLayout,
    ThreadWorkspaces,
    combine_scores,
    fold_svm_problems,
    solve_problem_path,
    solve_svm_path,
    svm_decision_values,
    svm_problems,
    threads_in_budget,
    warn_unconverged,
    workspace_bytes,
)
from ._multiclass import base_weights, plus_minus_targets
from ._ridge import ApproxKernelRidge, ApproxKernelRidgeClassifier
from ._svm import ApproxKernelSVC
from ._unsupervised import ApproxKernelKMeans, ApproxKernelPCA

__all__ = [
    "ApproxKernelKMeans",
    "ApproxKernelOneClassSVM",
    "ApproxKernelPCA",
    "ApproxKernelRidge",
    "ApproxKernelRidgeClassifier",
    "ApproxKernelSVC",
    "ApproxKernelSVR",
    "DoublySGDSVC",
    "FLOAT32_PENALTY_FLOOR",
    "KernelLogisticRegression",
    "KernelOneClassSVM",
    "KernelSVC",
    "KernelSVR",
    "LinearSVC",
    "NystromKernelRidge",
    "NystromKernelRidgeClassifier",
    "OvoLayout",
    "ThreadWorkspaces",
    "auto_n_components",
    "base_weights",
    "combine_scores",
    "fit_linear_svm",
    "fold_svm_problems",
    "plus_minus_targets",
    "solve_problem_path",
    "solve_svm_path",
    "svm_decision_values",
    "svm_problems",
    "threads_in_budget",
    "warn_unconverged",
    "workspace_bytes",
]
