"""Estimators: linear and approximate-kernel classifiers and regressors."""

from ._linear_svm import LinearSVC
from ._ridge import ApproxKernelRidge, ApproxKernelRidgeClassifier
from ._svm import ApproxKernelSVC

__all__ = ["ApproxKernelRidge", "ApproxKernelRidgeClassifier", "ApproxKernelSVC", "LinearSVC"]
