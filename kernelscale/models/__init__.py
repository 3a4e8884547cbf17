"""Estimators: linear and approximate-kernel classifiers and regressors."""

from ._doubly_sgd import DoublySGDSVC
from ._falkon import NystromKernelRidge, NystromKernelRidgeClassifier
from ._kernel_svm import KernelSVC
from ._linear_svm import LinearSVC
from ._logistic import KernelLogisticRegression
from ._ridge import ApproxKernelRidge, ApproxKernelRidgeClassifier
from ._svm import ApproxKernelSVC
from ._unsupervised import ApproxKernelKMeans, ApproxKernelPCA

__all__ = [
    "ApproxKernelKMeans",
    "ApproxKernelPCA",
    "ApproxKernelRidge",
    "ApproxKernelRidgeClassifier",
    "ApproxKernelSVC",
    "DoublySGDSVC",
    "KernelLogisticRegression",
    "KernelSVC",
    "LinearSVC",
    "NystromKernelRidge",
    "NystromKernelRidgeClassifier",
]
