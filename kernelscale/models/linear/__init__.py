"""Linear models, on the data or on an explicit feature map: linear SVMs, the approximate
kernel SVC / SVR / one-class SVM / ridge, kernel logistic regression, doubly stochastic SGD."""

from ._approx_one_class import ApproxKernelOneClassSVM
from ._approx_ridge import ApproxKernelRidge, ApproxKernelRidgeClassifier
from ._approx_svc import ApproxKernelSVC
from ._approx_svr import ApproxKernelSVR
from ._doubly_sgd import DoublySGDSVC
from ._linear_svc import LinearSVC, fit_linear_svm
from ._logistic import KernelLogisticRegression

__all__ = [
    "ApproxKernelOneClassSVM",
    "ApproxKernelRidge",
    "ApproxKernelRidgeClassifier",
    "ApproxKernelSVC",
    "ApproxKernelSVR",
    "DoublySGDSVC",
    "KernelLogisticRegression",
    "LinearSVC",
    "fit_linear_svm",
]
