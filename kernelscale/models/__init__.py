"""Estimators, grouped by family.

- :mod:`kernelscale.models.svm`: the exact kernel SVMs (SMO on the kernel's rows or matrix).
- :mod:`kernelscale.models.linear`: linear models, on the data or on an explicit feature
  map (random Fourier features, Nystrom, polynomial sketches).
- :mod:`kernelscale.models.ridge`: Nystrom kernel ridge solved by FALKON.
- :mod:`kernelscale.models.unsupervised`: kernel PCA and kernel k-means on a feature map.
- :mod:`kernelscale.models.metric`: learned kernel metrics (per-feature widths, AGOP).
- :class:`WeightedEnsembleClassifier`, :class:`WeightedEnsembleRegressor`: weighted
  averages of fitted models (what the search's ensemble selection returns).
- :class:`LocalKernelRegressor`: one model per leaf of the rows, split on one column
  (its ``split_feature`` and ``leaf_thresholds`` for the search's leaves).

``__all__`` lists the estimators; a family's package also publishes what the layers
above it use (FALKON's automatic size, the linear SVM's solver call).
"""

from ._ensemble import WeightedEnsembleClassifier, WeightedEnsembleRegressor
from ._local import LocalKernelRegressor, leaf_index, leaf_thresholds, split_feature  # noqa: F401
from ._probability import fit_sigmoid  # noqa: F401  (the patch's LIBSVM probabilities)
from .linear import (
    ApproxKernelOneClassSVM,
    ApproxKernelRidge,
    ApproxKernelRidgeClassifier,
    ApproxKernelSVC,
    ApproxKernelSVR,
    DoublySGDSVC,
    KernelLogisticRegression,
    LinearSVC,
)
from .metric import KernelMetric, KernelWidths
from .ridge import NystromKernelRidge, NystromKernelRidgeClassifier
from .svm import KernelOneClassSVM, KernelSVC, KernelSVR
from .unsupervised import ApproxKernelKMeans, ApproxKernelPCA

__all__ = [
    "ApproxKernelKMeans",
    "ApproxKernelOneClassSVM",
    "ApproxKernelPCA",
    "ApproxKernelRidge",
    "ApproxKernelRidgeClassifier",
    "ApproxKernelSVC",
    "ApproxKernelSVR",
    "DoublySGDSVC",
    "KernelLogisticRegression",
    "KernelMetric",
    "KernelOneClassSVM",
    "KernelSVC",
    "KernelSVR",
    "KernelWidths",
    "LinearSVC",
    "LocalKernelRegressor",
    "NystromKernelRidge",
    "NystromKernelRidgeClassifier",
    "WeightedEnsembleClassifier",
    "WeightedEnsembleRegressor",
]
