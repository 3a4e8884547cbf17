"""Exact kernels and blocked Gram matrices under a memory budget.

The kernel math of the library is written once, here: feature maps and solvers
evaluate kernels through :func:`pairwise_kernel`, :func:`iter_kernel_blocks` or
the private :class:`_PreparedKernel` that both are built on.

Kernels (``gamma`` > 0, ``degree`` >= 1):

- ``"linear"``: ``x . y``
- ``"polynomial"`` (alias ``"poly"``): ``(gamma x . y + coef0) ** degree``
- ``"rbf"`` (alias ``"gaussian"``): ``exp(-gamma ||x - y||_2^2)``
- ``"laplacian"``: ``exp(-gamma ||x - y||_1)``
- a callable ``k(X_block, Y, **kernel_params) -> ndarray (len(X_block), len(Y))``.
"""

from ._gram import (
    iter_kernel_blocks,
    kernel_diagonal,
    laplacian_kernel,
    linear_kernel,
    pairwise_kernel,
    polynomial_kernel,
    rbf_kernel,
)
from ._params import KERNELS, check_kernel, kernel_arguments, resolve_gamma

__all__ = [
    "KERNELS",
    "check_kernel",
    "kernel_arguments",
    "resolve_gamma",
    "pairwise_kernel",
    "iter_kernel_blocks",
    "linear_kernel",
    "polynomial_kernel",
    "rbf_kernel",
    "laplacian_kernel",
    "kernel_diagonal",
]
