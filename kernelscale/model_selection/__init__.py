"""Model selection: the best kernel model for the data, by one search that shares its work.

``KernelClassifierCV`` / ``KernelRegressorCV`` run one optimizer: a searcher that
proposes configurations (:mod:`._searcher`), one evaluator that fits and scores them
(:mod:`._evaluator`: the families' shared-work grids are its batch form), one cost
model (:mod:`._cost`), one clock (:mod:`._schedule`), and ensemble selection over
the out-of-fold predictions (:mod:`._ensemble`).
"""

from ..models.metric import KernelMetric, KernelWidths, learn_widths
from ._choice import choose_families
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
from ._least_squares import falkon_grid, fold_statistics
from ._regressor import KernelRegressorCV
from ._results import cv_results, leaderboard
from ._run import SearchTimeError
from ._space import (
    DEFAULT_CS,
    DEFAULT_GAMMA_FACTORS,
    SCORERS,
    default_alphas,
)

__all__ = ["KernelClassifierCV", "KernelRegressorCV", "SearchTimeError", "KernelWidths",
           "KernelMetric", "learn_widths",
           "choose_families", "exact_svm_grid", "exact_svm_bytes", "exact_kernel_matrix",
           "exact_matrix_bytes", "exact_grid_bytes", "exact_grid_memory", "exact_svm_rows_grid",
           "falkon_grid", "nystrom_svm_grid", "rff_svm_grid", "fold_statistics",
           "cv_results", "leaderboard",
           "CLASSIFIER_FAMILIES", "REGRESSOR_FAMILIES", "FAMILIES",
           "Family", "SCORERS", "DEFAULT_CS",
           "DEFAULT_GAMMA_FACTORS", "default_alphas"]
