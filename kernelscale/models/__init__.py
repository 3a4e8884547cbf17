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

import warnings

from ._ensemble import WeightedEnsembleClassifier, WeightedEnsembleRegressor
from ._local import LocalKernelRegressor, leaf_index, leaf_thresholds, split_feature  # noqa: F401
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

#: names this package published before the families (kernelscale 0.1), and where they
#: live now; reading one warns, for one release
_MOVED = {
    **dict.fromkeys(["OvoLayout", "ThreadWorkspaces", "combine_scores", "fold_svm_problems",
                     "solve_problem_path", "solve_svm_path", "svm_decision_values",
                     "svm_problems", "threads_in_budget", "warn_unconverged",
                     "workspace_bytes", "base_weights", "plus_minus_targets"],
                    "kernelscale.solvers"),
    **dict.fromkeys(["FLOAT32_PENALTY_FLOOR", "auto_n_components"], "kernelscale.models.ridge"),
    "fit_linear_svm": "kernelscale.models.linear",
}


def __getattr__(name):
    if name in _MOVED:
        import importlib

        where = _MOVED[name]
        warnings.warn(f"kernelscale.models.{name} moved to {where}.{name}; the old name "
                      "goes in the next release.", FutureWarning, stacklevel=2)
        return getattr(importlib.import_module(where), name)
    raise AttributeError(f"module 'kernelscale.models' has no attribute {name!r}")
