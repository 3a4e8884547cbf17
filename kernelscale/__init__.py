"""kernelscale: kernel machines at scale.

Exact kernels (:mod:`kernelscale.kernels`), approximate feature maps
(:mod:`kernelscale.feature_maps`) and the estimators built on them. Everything
public is importable from the top-level package; the submodules are imported
on first use, so that ``import kernelscale`` (and ``kernelscale --help``) stays
fast and pulls in neither scikit-learn nor numba until a name needs them.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> the module that defines it
_NAMES = {
    "config_context": "._config", "get_config": "._config", "set_config": "._config",
    "MemoryBudgetError": "._validation", "MemoryPlan": "._planner",
    "Nystroem": ".feature_maps", "RandomFourierFeatures": ".feature_maps",
    "RandomMaclaurin": ".feature_maps", "TensorSketch": ".feature_maps",
    "kernel_approximation_error": ".feature_maps", "make_feature_map": ".feature_maps",
    "kernel_diagonal": ".kernels", "laplacian_kernel": ".kernels",
    "linear_kernel": ".kernels", "pairwise_kernel": ".kernels",
    "polynomial_kernel": ".kernels", "rbf_kernel": ".kernels",
    "ApproxKernelKMeans": ".models", "ApproxKernelPCA": ".models",
    "ApproxKernelRidge": ".models", "ApproxKernelRidgeClassifier": ".models",
    "ApproxKernelSVC": ".models", "DoublySGDSVC": ".models",
    "KernelLogisticRegression": ".models", "KernelSVC": ".models", "LinearSVC": ".models",
    "KernelSVR": ".models", "KernelOneClassSVM": ".models", "ApproxKernelSVR": ".models",
    "ApproxKernelOneClassSVM": ".models", "LocalKernelRegressor": ".models",
    "NystromKernelRidge": ".models", "NystromKernelRidgeClassifier": ".models",
    "KernelClassifierCV": ".model_selection", "KernelRegressorCV": ".model_selection",
    "KernelWidths": ".model_selection", "learn_widths": ".model_selection",
    "KernelMetric": ".model_selection", "SearchTimeError": ".model_selection",
    "Metric": ".kernels",
    "TabularEncoder": ".datasets",
    "ModelFileError": ".persistence", "load_model": ".persistence",
    "read_model_header": ".persistence", "save_model": ".persistence",
    "patch_sklearn": ".patch", "unpatch_sklearn": ".patch", "sklearn_is_patched": ".patch",
    "sklearn_patched": ".patch",
}

__all__ = sorted([*_NAMES, "__version__"])


def __getattr__(name):
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name], __name__), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'kernelscale' has no attribute {name!r}")


def __dir__():
    return __all__
