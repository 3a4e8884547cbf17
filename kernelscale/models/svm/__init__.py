"""Exact kernel SVMs: LIBSVM's duals (classification, epsilon-SVR, one-class) solved by
SMO on the kernel's rows or its whole matrix."""

from ._kernel_one_class import KernelOneClassSVM
from ._kernel_svc import KernelSVC
from ._kernel_svr import KernelSVR

__all__ = [
    "KernelOneClassSVM",
    "KernelSVC",
    "KernelSVR",
]
