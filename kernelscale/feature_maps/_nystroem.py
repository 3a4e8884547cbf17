"""Nystrom feature map: kernel columns at landmarks, whitened by K_mm."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
from scipy.linalg import blas, lapack

from .._constraints import Interval, Options
from .._parallel import large_symmetric_blas
from .._validation import resolve_dtype, resolve_memory_budget
from ..kernels import DEFAULT_COEF0, DEFAULT_DEGREE, KERNEL_CONSTRAINTS, flush_tiny, make_kernel
from ._base import _FeatureMap
from ._landmarks import SAMPLINGS, select_landmarks

__all__ = ["Nystroem"]

# Relative cutoff (times the largest diagonal entry of K_mm) below which a
# direction of K_mm is dropped: K_mm is factored in float64, whose pivoted
# Cholesky resolves pivots down to ~m eps max(diag). Measured on 2- to 8-D
# Gaussian data, m = 1000, several gammas: 1e-13 keeps enough directions for a
# held-out kernel error at or below scikit-learn's Nystroem in every case (1e-12
# was up to 1% above it on 2-3-D data, the former float32 cutoff 1e-5 up to 2x).
_DEFAULT_RCOND = 1e-13
# Kept pivots (relative) below this amplify the float32 rounding of k(x, L) past
# the approximation error (measured: 3-D data, gamma 0.5, cutoff 1e-12: error
# 0.64 with float32 blocks vs 8.4e-4 with float64), so such maps compute their
# blocks in float64 and round only the output to float32; above it (a9a, MNIST:
# smallest pivots 5e-3 to 2e-2) float32 blocks are as accurate and twice as fast.
_FLOAT32_SAFE_PIVOT = 1e-5


def _pivoted_cholesky(K, rcond, rank):
    """Rank-revealing factor: ``K[p][:, p] ~= L L^T`` with pivots above ``rcond``.

    Returns ``(L, p)`` with ``L`` lower triangular of shape ``(r, r)`` and ``p``
    the ``r`` kept landmark indices. The factorization stops at the first pivot
    (residual diagonal) below ``rcond * max(diag(K))``: those landmarks are, to
    working precision, combinations of the kept ones, and dividing by them is
    what makes naive Nystrom blow up.
    """
    tol = rcond * float(np.max(np.diag(K)))
    with large_symmetric_blas(K.shape[0], 8):
        factor, piv, r, info = lapack.dpstrf(K, tol=tol, lower=1)
    if info < 0:  # pragma: no cover - LAPACK argument error
        raise RuntimeError(f"LAPACK dpstrf failed with info={info}.")
    r = min(int(r), rank) if rank is not None else int(r)
    return np.tril(factor[:r, :r]), piv[:r] - 1


def _truncated_eigh(K, rcond, rank):
    """Top eigenpairs of ``K`` with eigenvalues above ``rcond * max(diag(K))``, at most ``rank``."""
    with large_symmetric_blas(K.shape[0], K.dtype.itemsize):
        eigenvalues, eigenvectors = scipy.linalg.eigh(K)
    eigenvalues, eigenvectors = eigenvalues[::-1], eigenvectors[:, ::-1]
    if not eigenvalues[0] > 0:
        raise ValueError(
            "The kernel matrix of the landmarks has no positive eigenvalue; the "
            "kernel must be positive semi-definite."
        )
    keep = int(np.sum(eigenvalues > rcond * float(np.max(np.diag(K)))))
    if rank is not None:
        keep = min(keep, rank)
    return eigenvalues[:keep], eigenvectors[:, :keep]


class Nystroem(_FeatureMap):
    """Nystrom approximation of a kernel map from ``m`` landmarks.

    With landmarks ``L`` and ``K_mm = k(L, L)``, the map is
    ``z(x) = K_mm^{-1/2} k(L, x)`` restricted to the numerically non-null part
    of ``K_mm``, so that ``Z Z^T = K_nm K_mm^+ K_mn`` approximates the kernel
    matrix. Directions of ``K_mm`` below ``rcond`` times its largest scale are
    dropped rather than divided by: duplicate or nearly dependent landmarks
    never produce NaN or blown-up features.

    Parameters
    ----------
    n_components : int, default=100
        Number of landmarks ``m``. Clamped to ``n_samples`` with a warning.
    kernel : str, callable or Kernel, default="rbf"
        ``"linear"``, ``"polynomial"``, ``"rbf"``, ``"laplacian"``, a callable
        ``k(X, Y, **kernel_params)`` returning a positive semi-definite Gram block,
        or a :class:`kernelscale.kernels.Kernel` object.
    gamma : {"scale", "auto"}, float or array-like of shape (n_features,), default="scale"
        Kernel scale (polynomial, rbf, laplacian).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Constant term of the polynomial kernel.
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel.
    sampling : {"uniform", "kmeans", "leverage"}, default="uniform"
        Landmark selection: distinct rows drawn uniformly without replacement;
        k-means centres (Zhang et al. 2008), measured the most accurate at
        equal ``m`` (13-20% less kernel error than uniform on a9a, at 2-4x the
        fitting time); or rows drawn by approximate ridge leverage scores
        (Musco & Musco 2017), which tie with uniform on a9a's smooth kernel.
    rank : int, default=None
        Keep at most this many directions of ``K_mm``; None keeps all that
        pass ``rcond``.
    reg : float, default=0.0
        Ridge added to the diagonal of ``K_mm`` before factorization.
    decomposition : {"auto", "cholesky", "eigh"}, default="auto"
        How ``K_mm`` is factored. ``"cholesky"``: pivoted Cholesky, which drops
        redundant landmarks and maps through a triangular matrix (about 4x
        cheaper to fit and 2x cheaper to transform). ``"eigh"``: the
        eigendecomposition, which drops small eigen-directions and, with
        ``rank``, keeps the best rank-``rank`` part of ``K_mm``. ``"auto"``
        uses ``"eigh"`` when ``rank`` is given, ``"cholesky"`` otherwise. When
        ``K_mm`` is well conditioned both give the same ``Z Z^T``.
    rcond : float, default=None
        Relative cutoff: pivots (Cholesky) or eigenvalues (eigh) at or below
        ``rcond`` times the largest diagonal entry of ``K_mm`` are dropped. None
        means 1e-13, as many directions as float64 (in which ``K_mm`` is
        factored) resolves. When the smallest kept pivot is below 1e-5 the
        transform computes its blocks in float64 even for float32 output (the
        rounding of float32 blocks would be amplified past the approximation
        error); well-conditioned maps keep the float32 fast path.
    dtype : {"float32", "float64"} or None, default="float32"
        Output dtype; None follows the input. ``K_mm`` is always factored in
        float64.
    memory_budget : int, default=None
        Bytes for the temporaries of one row block; None uses
        :func:`kernelscale.get_config`. The fitted landmarks and factor are part
        of the model and not counted.
    random_state : int, RandomState instance or None, default=None
        Seeds the landmark selection.

    Attributes
    ----------
    components_ : ndarray of shape (n_landmarks, n_features_in)
        The landmarks the map uses (with Cholesky, only the kept pivots).
    component_indices_ : ndarray of shape (n_landmarks,) or None
        Rows of the training data the landmarks are; None for k-means centres.
    normalization_ : ndarray of shape (n_landmarks, rank)
        ``z(x) = k(x, components_) @ normalization_``. Upper triangular with
        the Cholesky decomposition.
    eigenvalues_ : ndarray of shape (rank,)
        Kept eigenvalues of ``K_mm`` (``decomposition_ == "eigh"`` only).
    rank_ : int
        Number of output features: ``n_components_`` unless landmarks are
        numerically dependent (then a warning says so).
    min_pivot_ : float
        Smallest kept pivot (or eigenvalue) of ``K_mm`` relative to its largest
        diagonal entry.
    decomposition_ : str
        ``"cholesky"`` or ``"eigh"``.
    kernel_ : kernelscale.kernels.Kernel
        The kernel the map approximates, its parameters resolved.
    gamma_ : float or None
        The kernel scale used (None for linear and callable kernels).
    n_components_ : int
        Number of landmarks drawn (``n_components`` clamped to ``n_samples``).
    n_features_in_ : int
        Number of features seen in ``fit``.

    References
    ----------
    .. [1] C. Williams and M. Seeger, "Using the Nystrom Method to Speed Up
       Kernel Machines", NIPS 2001.
    .. [2] K. Zhang, I. Tsang and J. Kwok, "Improved Nystrom Low-Rank
       Approximation and Error Analysis", ICML 2008.
    .. [3] C. Musco and C. Musco, "Recursive Sampling for the Nystrom Method",
       NIPS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import Nystroem
    >>> X = np.random.default_rng(0).normal(size=(500, 8))
    >>> Z = Nystroem(n_components=100, random_state=0).fit_transform(X)
    >>> Z.shape
    (500, 100)
    """

    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        "n_components": [Interval("int", 1)],
        "sampling": [Options(*SAMPLINGS)],
        "rank": [None, Interval("int", 1)],
        "reg": [Interval("real", 0)],
        "decomposition": [Options("auto", "cholesky", "eigh")],
        "rcond": [None, Interval("real", 0, 1, closed="neither")],
        "dtype": ["dtype"],
        "memory_budget": ["memory"],
        "random_state": ["random_state"],
    }

    def __init__(
        self, *, n_components=100, kernel="rbf", gamma="scale", degree=DEFAULT_DEGREE,
        coef0=DEFAULT_COEF0,
        kernel_params=None, sampling="uniform", rank=None, reg=0.0,
        decomposition="auto", rcond=None, dtype="float32", memory_budget=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.sampling = sampling
        self.rank = rank
        self.reg = reg
        self.decomposition = decomposition
        self.rcond = rcond
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.random_state = random_state

    def _check_params(self, n_samples, input_dtype):
        m = self.n_components
        if m > n_samples:
            warnings.warn(
                f"n_components={m} is larger than n_samples={n_samples}; using "
                f"{n_samples} landmarks (every sample).", UserWarning, stacklevel=4,
            )
            m = n_samples
        decomposition = self.decomposition
        if decomposition == "auto":
            decomposition = "eigh" if self.rank is not None else "cholesky"
        rcond = _DEFAULT_RCOND if self.rcond is None else self.rcond
        return m, self.rank, decomposition, rcond, float(self.reg)

    def _fit(self, X, rng):
        m, rank, decomposition, rcond, reg = self._check_params(X.shape[0], X.dtype)
        kernel = make_kernel(self.kernel, X, gamma=self.gamma, degree=self.degree,
                             coef0=self.coef0, kernel_params=self.kernel_params)
        kernel.check_range(X, resolve_dtype(self.dtype, X.dtype))
        budget = resolve_memory_budget(self.memory_budget)
        landmarks, indices = select_landmarks(
            X, m, self.sampling, rng, kernel=kernel, memory_budget=budget
        )
        K_mm = kernel.gram(landmarks, memory_budget=budget)
        if reg:
            K_mm[np.diag_indices_from(K_mm)] += reg
        if not np.max(np.diag(K_mm)) > 0:
            raise ValueError(
                "The kernel matrix of the landmarks is zero on its diagonal, so it "
                "spans nothing; check the data (all-zero rows?) and the kernel parameters."
            )
        scale = float(np.max(np.diag(K_mm)))
        if decomposition == "cholesky":
            factor, keep = _pivoted_cholesky(K_mm, rcond, rank)
            inverse, _ = lapack.dtrtri(factor, lower=1)
            self.normalization_ = np.ascontiguousarray(inverse.T)
            landmarks = landmarks[keep]
            indices = indices[keep] if indices is not None else None
            smallest = float(np.min(np.diag(factor)) ** 2) if len(keep) else 0.0
        else:
            eigenvalues, eigenvectors = _truncated_eigh(K_mm, rcond, rank)
            self.eigenvalues_ = eigenvalues
            self.normalization_ = eigenvectors / np.sqrt(eigenvalues)
            smallest = float(eigenvalues[-1]) if len(eigenvalues) else 0.0
        self.min_pivot_ = smallest / scale
        if rank is None and self.normalization_.shape[1] < m:
            r = self.normalization_.shape[1]
            why = ("the kernel is wide for these data; a larger gamma would use more of them"
                   if kernel.shift_invariant else
                   f"the kernel's feature space has only {r} dimensions on these data")
            warnings.warn(
                f"Nystroem: the {m} landmarks span only {r} independent directions of the "
                f"kernel to float64 precision ({why}), so the map has {r} features; "
                f"n_components={r} gives the same map faster.", UserWarning, stacklevel=4)
        self.components_ = landmarks
        self.component_indices_ = indices
        self.rank_ = self.normalization_.shape[1]
        self.decomposition_ = decomposition
        self.kernel_ = kernel
        self.gamma_ = getattr(kernel, "gamma", None)
        self.n_components_ = m
        return self

    @property
    def _n_features_out(self):
        return self.rank_

    def _transform_state(self, dtype):
        # float32 output of an ill-conditioned factor is computed in float64
        work = np.dtype(np.float64) if self.min_pivot_ < _FLOAT32_SAFE_PIVOT else dtype
        prepared = self.kernel_.prepare(self.components_, work)
        # tiny entries would make subnormal products that slow every TRMM / GEMM
        normalization = flush_tiny(self.normalization_.astype(work))
        return {"kernel": prepared, "normalization": normalization, "work": work}

    def _bytes_per_row(self, X, state):
        per_row = state["kernel"].bytes_per_row(X)
        width = self.components_.shape[0]
        if self.decomposition_ == "eigh":
            per_row += state["work"].itemsize * width
        if state["work"] != resolve_dtype(self.dtype, X.dtype):
            per_row += state["work"].itemsize * width
        return per_row

    def _transform_rows(self, X, start, stop, out, state):
        work = state["work"]
        block = out if out.dtype == work else np.empty(out.shape, dtype=work)
        T = state["normalization"]
        if self.decomposition_ == "eigh":
            K_block = np.empty((stop - start, T.shape[0]), dtype=work)
            state["kernel"].evaluate_rows(X, start, stop, K_block)
            np.matmul(K_block, T, out=block)
        else:
            # Triangular T: the kernel block is written into the output and multiplied
            # in place by TRMM, half the flops of a GEMM and no temporary.
            state["kernel"].evaluate_rows(X, start, stop, block)
            trmm = blas.strmm if work == np.float32 else blas.dtrmm
            result = trmm(1.0, T, block.T, side=0, lower=0, trans_a=1, overwrite_b=1)
            if not np.shares_memory(result, block):  # pragma: no cover - f2py copied
                block[...] = result.T
        if block is not out:
            out[...] = block
