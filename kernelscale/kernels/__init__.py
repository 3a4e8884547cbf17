"""Exact kernels: the kernel layer every feature map, solver and model calls.

A :class:`Kernel` object (:class:`RBF`, :class:`Laplacian`, :class:`Polynomial`, :class:`Sigmoid`,
:class:`Linear`, :class:`CallableKernel`) knows its parameters, computes Gram
blocks in float32 or float64 under the memory budget (:meth:`Kernel.gram`,
:meth:`Kernel.blocks`, :meth:`Kernel.expand`), its diagonal, and prepares the
reusable parts of a second argument once (:meth:`Kernel.prepare`).
:func:`blas_on_numba_threads` runs their products on numba's threads, for
loops that alternate products with numba-parallel work.
:func:`make_kernel` builds one from an estimator's ``kernel`` / ``gamma`` /
``degree`` / ``coef0`` parameters. The function interface
(:func:`pairwise_kernel` and friends) is built on the objects.

Kernels (``gamma`` > 0, ``degree`` >= 1):

- ``"linear"``: ``x . y``
- ``"polynomial"`` (alias ``"poly"``): ``(gamma x . y + coef0) ** degree``
  (defaults ``degree=3``, ``coef0=0``, as scikit-learn's SVC, everywhere)
- ``"rbf"`` (alias ``"gaussian"``): ``exp(-gamma ||x - y||_2^2)``
- ``"laplacian"``: ``exp(-gamma ||x - y||_1)``
- ``"exponential"``: ``exp(-sqrt(gamma) ||x - y||_2)`` (the Laplace kernel of the
  Euclidean norm)

The shift-invariant kernels (RBF, Laplacian, exponential) also take per-feature
widths (a 1-D ``gamma``) or a learned :class:`Metric` ``M = L L^T`` (``gamma=Metric(...)``
or a d x d matrix): the isotropic kernel on the rows ``x L``.
- a callable ``k(X_block, Y, **kernel_params) -> ndarray (len(X_block), len(Y))``.
"""

from ._base import Kernel, PreparedKernel, ShiftInvariantKernel
from ._compiled import flush_tiny, tiny_floor
from ._gram import (
    iter_kernel_blocks,
    kernel_diagonal,
    laplacian_kernel,
    linear_kernel,
    pairwise_kernel,
    polynomial_kernel,
    rbf_kernel,
)
from ._kernels import (
    RBF,
    CallableKernel,
    Exponential,
    Laplacian,
    Linear,
    Polynomial,
    Sigmoid,
    check_widths,
)
from ._metric import Metric, check_metric
from ._params import (
    DEFAULT_COEF0,
    DEFAULT_DEGREE,
    KERNEL_CONSTRAINTS,
    KERNELS,
    check_kernel,
    make_kernel,
    resolve_gamma,
)
from ._products import blas_on_numba_threads, gram_product

__all__ = [
    "Kernel", "ShiftInvariantKernel", "PreparedKernel", "RBF", "Laplacian", "Exponential",
    "Polynomial", "Sigmoid", "Linear", "CallableKernel", "Metric", "check_metric",
    "KERNELS", "KERNEL_CONSTRAINTS", "DEFAULT_DEGREE", "DEFAULT_COEF0", "check_kernel",
    "make_kernel", "check_widths",
    "resolve_gamma", "pairwise_kernel", "iter_kernel_blocks", "linear_kernel",
    "polynomial_kernel", "rbf_kernel", "laplacian_kernel", "kernel_diagonal", "tiny_floor",
    "flush_tiny", "blas_on_numba_threads", "gram_product",
]
