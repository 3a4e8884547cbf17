"""Nystrom kernel ridge regression solved by FALKON (preconditioned CG on m centres)."""

from ._calibration import calibrated_proba, fold_calibration
from ._falkon import NystromKernelRidge, NystromKernelRidgeClassifier
from ._falkon_settings import FLOAT32_PENALTY_FLOOR, auto_n_components

__all__ = [
    "FLOAT32_PENALTY_FLOOR",
    "NystromKernelRidge",
    "NystromKernelRidgeClassifier",
    "auto_n_components",
    "calibrated_proba",
    "fold_calibration",
]
