"""Model selection: the best kernel model for the data, by searches that share their work."""

from ._choice import EXACT_MAX_ROWS, choose_families
from ._classifier import KernelClassifierCV
from ._exact import (
    exact_grid_bytes,
    exact_grid_memory,
    exact_kernel_matrix,
    exact_matrix_bytes,
    exact_svm_bytes,
    exact_svm_grid,
)
from ._exact_rows import exact_svm_rows_grid
from ._families import CLASSIFIER_FAMILIES, FAMILIES, REGRESSOR_FAMILIES, Family
from ._features import nystrom_svm_grid, rff_svm_grid
from ._least_squares import falkon_grid, fold_statistics, ridge_path
from ._metric import KernelMetric
from ._regressor import KernelRegressorCV
from ._results import cv_results, leaderboard
from ._search import SearchTimeError
from ._space import (
    DEFAULT_CS,
    DEFAULT_GAMMA_FACTORS,
    SCORERS,
    default_alphas,
)
from ._widths import KernelWidths, learn_widths

__all__ = ["KernelClassifierCV", "KernelRegressorCV", "SearchTimeError", "KernelWidths",
           "KernelMetric",
           "learn_widths", "choose_families",
           "EXACT_MAX_ROWS", "exact_svm_grid", "exact_svm_bytes", "exact_kernel_matrix",
           "exact_matrix_bytes", "exact_grid_bytes", "exact_grid_memory", "exact_svm_rows_grid",
           "falkon_grid", "nystrom_svm_grid", "rff_svm_grid", "fold_statistics", "ridge_path",
           "cv_results", "leaderboard",
           "CLASSIFIER_FAMILIES", "REGRESSOR_FAMILIES", "FAMILIES",
           "Family", "SCORERS", "DEFAULT_CS",
           "DEFAULT_GAMMA_FACTORS", "default_alphas"]
