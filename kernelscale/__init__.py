"""kernelscale: kernel machines at scale.

Exact kernels (:mod:`kernelscale.kernels`), approximate feature maps
(:mod:`kernelscale.feature_maps`) and the estimators built on them. Everything
public is importable from the top-level package.
"""

from ._config import config_context, get_config, set_config
from ._validation import MemoryBudgetError
from .feature_maps import (
    Nystroem,
    RandomFourierFeatures,
    RandomMaclaurin,
    TensorSketch,
    kernel_approximation_error,
    make_feature_map,
)
from .kernels import (
    kernel_diagonal,
    laplacian_kernel,
    linear_kernel,
    pairwise_kernel,
    polynomial_kernel,
    rbf_kernel,
)
from .models import (
    ApproxKernelKMeans,
    ApproxKernelPCA,
    ApproxKernelRidge,
    ApproxKernelRidgeClassifier,
    ApproxKernelSVC,
    DoublySGDSVC,
    KernelLogisticRegression,
    KernelSVC,
    LinearSVC,
    NystromKernelRidge,
    NystromKernelRidgeClassifier,
)
from .persistence import ModelFileError, load_model, read_model_header, save_model

__version__ = "0.1.0"

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
    "MemoryBudgetError",
    "ModelFileError",
    "NystromKernelRidge",
    "NystromKernelRidgeClassifier",
    "Nystroem",
    "RandomFourierFeatures",
    "RandomMaclaurin",
    "TensorSketch",
    "__version__",
    "config_context",
    "get_config",
    "kernel_approximation_error",
    "kernel_diagonal",
    "laplacian_kernel",
    "linear_kernel",
    "load_model",
    "make_feature_map",
    "pairwise_kernel",
    "polynomial_kernel",
    "rbf_kernel",
    "read_model_header",
    "save_model",
    "set_config",
]
