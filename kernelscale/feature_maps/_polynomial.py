"""Random feature maps for the polynomial kernel ``(gamma x . y + coef0) ** degree``.

Both maps work on the augmented vector ``x~ = [sqrt(gamma) x, sqrt(coef0)]``,
for which ``(x~ . y~) ** degree`` is exactly the inhomogeneous polynomial kernel,
so only the homogeneous kernel ``(x~ . y~) ** degree`` has to be sketched.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import scipy.fft

from .._constraints import Interval
from .._parallel import parallel_guard
from .._planner import sparse_row_bytes
from .._validation import dense_rows
from ..kernels import DEFAULT_COEF0, DEFAULT_DEGREE, KERNEL_CONSTRAINTS, Polynomial, resolve_gamma
from ._base import _FeatureMap

__all__ = ["RandomMaclaurin", "TensorSketch"]


@parallel_guard
@numba.njit(parallel=True, cache=True)
def _count_sketch(X, hashes, signs, out):  # pragma: no cover - compiled
    """``out[i, hashes[k]] += signs[k] * X[i, k]``: the count sketch of each row."""
    n, d = X.shape
    for i in numba.prange(n):
        for j in range(out.shape[1]):
            out[i, j] = 0.0
        for k in range(d):
            out[i, hashes[k]] += signs[k] * X[i, k]


class _PolynomialSketch(_FeatureMap):
    """Shared parameters and the augmented input of the polynomial maps."""

    _parameter_constraints = {
        "n_components": [Interval("int", 1)],
        "degree": KERNEL_CONSTRAINTS["degree"],
        "gamma": KERNEL_CONSTRAINTS["gamma"],
        # coef0 < 0 gives a kernel that is not positive definite: no random features exist
        "coef0": [Interval("real", 0)],
        "dtype": ["dtype"],
        "memory_budget": ["memory"],
        "random_state": ["random_state"],
    }

    def __init__(
        self, *, n_components=100, degree=DEFAULT_DEGREE, gamma="scale", coef0=DEFAULT_COEF0,
        dtype="float32", memory_budget=None, random_state=None,
    ):
        self.n_components = n_components
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.random_state = random_state

    def _fit(self, X, rng):
        self.n_components_ = self.n_components
        coef0 = float(self.coef0)
        self.gamma_ = resolve_gamma(self.gamma, X)
        self.kernel_ = Polynomial(self.gamma_, self.degree, coef0)
        self._draw(X.shape[1] + 1, rng)
        return self

    @property
    def _n_features_out(self):
        return self.n_components_

    def _augmented_rows(self, X, start, stop, dtype):
        Xb = dense_rows(X, start, stop, dtype)
        aug = np.empty((stop - start, Xb.shape[1] + 1), dtype=dtype)
        np.multiply(Xb, dtype.type(math.sqrt(self.gamma_)), out=aug[:, :-1])
        aug[:, -1] = math.sqrt(self.coef0)
        return aug


class RandomMaclaurin(_PolynomialSketch):
    """Random Maclaurin features for the polynomial kernel (products of Rademacher projections).

    Each feature is ``prod_{j <= degree} <eps_j, x~> / sqrt(D)`` with independent
    random sign vectors ``eps_j``; its expectation over the signs is exactly
    ``(x~ . y~) ** degree`` (Kar & Karnick 2012). Simple and unbiased, but its
    variance grows quickly with the degree; :class:`TensorSketch` is usually
    more accurate at equal ``D``.

    Parameters
    ----------
    n_components : int, default=100
        Number of output features ``D``.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {"scale", "auto"} or float, default="scale"
        Scale of the inner product.
    coef0 : float, default=0.0
        Constant term (>= 0).
    dtype : {"float32", "float64"} or None, default="float32"
        Output dtype; None follows the input.
    memory_budget : int, default=None
        Bytes for the temporaries of one transform block.
    random_state : int, RandomState instance or None, default=None
        Seeds the sign vectors.

    Attributes
    ----------
    random_signs_ : ndarray of shape (degree, n_features_in + 1, n_components), int8
        The Rademacher vectors ``eps_j`` (the last input row acts on ``sqrt(coef0)``).
    kernel_ : kernelscale.kernels.Polynomial
        The kernel the map approximates.
    gamma_ : float
        The scale used.
    n_components_ : int
        Number of output features.
    n_features_in_ : int
        Number of features seen in ``fit``.

    References
    ----------
    .. [1] P. Kar and H. Karnick, "Random Feature Maps for Dot Product
       Kernels", AISTATS 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import RandomMaclaurin
    >>> X = np.random.default_rng(0).normal(size=(50, 4))
    >>> RandomMaclaurin(n_components=64, random_state=0).fit_transform(X).shape
    (50, 64)
    """

    def _draw(self, n_inputs, rng):
        shape = (self.degree, n_inputs, self.n_components_)
        self.random_signs_ = (2 * rng.randint(0, 2, size=shape) - 1).astype(np.int8)

    def _transform_state(self, dtype):
        return {"dtype": dtype, "signs": self.random_signs_.astype(dtype)}

    def _bytes_per_row(self, X, state):
        item = state["dtype"].itemsize
        return item * (2 * X.shape[1] + 1 + self.n_components_) + sparse_row_bytes(X)

    def _transform_rows(self, X, start, stop, out, state):
        aug = self._augmented_rows(X, start, stop, state["dtype"])
        signs = state["signs"]
        np.matmul(aug, signs[0], out=out)
        if self.degree > 1:
            factor = np.empty_like(out)
            for eps in signs[1:]:
                np.matmul(aug, eps, out=factor)
                out *= factor
        out *= out.dtype.type(1.0 / math.sqrt(self.n_components_))


class TensorSketch(_PolynomialSketch):
    """TensorSketch features for the polynomial kernel (Pham & Pagh 2013).

    The tensor power ``x~^{(x) degree}`` is sketched by convolving ``degree``
    independent count sketches of ``x~``, computed with FFTs in
    ``O(degree (d + D log D))`` per row. ``E[z(x) . z(y)] = (x~ . y~) ** degree``.

    Parameters
    ----------
    n_components : int, default=100
        Number of output features ``D``.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {"scale", "auto"} or float, default="scale"
        Scale of the inner product.
    coef0 : float, default=0.0
        Constant term (>= 0).
    dtype : {"float32", "float64"} or None, default="float32"
        Output dtype; None follows the input.
    memory_budget : int, default=None
        Bytes for the temporaries of one transform block.
    random_state : int, RandomState instance or None, default=None
        Seeds the hash functions and signs.

    Attributes
    ----------
    hash_indices_ : ndarray of shape (degree, n_features_in + 1), int64
        Bucket of each input coordinate in each count sketch.
    hash_signs_ : ndarray of shape (degree, n_features_in + 1)
        Sign of each input coordinate in each count sketch.
    kernel_ : kernelscale.kernels.Polynomial
        The kernel the map approximates.
    gamma_ : float
        The scale used.
    n_components_ : int
        Number of output features.
    n_features_in_ : int
        Number of features seen in ``fit``.

    References
    ----------
    .. [1] N. Pham and R. Pagh, "Fast and Scalable Polynomial Kernels via
       Explicit Feature Maps", KDD 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import TensorSketch
    >>> X = np.random.default_rng(0).normal(size=(50, 4))
    >>> TensorSketch(n_components=64, random_state=0).fit_transform(X).shape
    (50, 64)
    """

    @classmethod
    def from_hashes(cls, hash_indices, hash_signs, *, n_components, gamma,
                    coef0=DEFAULT_COEF0, dtype=None, memory_budget=None):
        """The sketch of hash functions drawn elsewhere (scikit-learn's
        ``PolynomialCountSketch``: its ``indexHash_`` and ``bitHash_``).

        Parameters
        ----------
        hash_indices : ndarray of int of shape (degree, n_inputs)
            The bucket of each coordinate of ``[sqrt(gamma) x, sqrt(coef0)]`` in each
            count sketch; ``n_inputs`` is ``n_features + 1``, or ``n_features`` when
            ``coef0`` is 0 (the constant coordinate is then 0 and needs no hash).
        hash_signs : ndarray of shape (degree, n_inputs)
            The sign of each coordinate in each count sketch.
        n_components : int
            Output features (every bucket below it).
        gamma : float
        coef0 : float, default=0.0
        dtype, memory_budget : as the constructor's.

        Returns
        -------
        sketch : TensorSketch
            Fitted.

        Examples
        --------
        >>> import numpy as np
        >>> sketch = TensorSketch.from_hashes(np.array([[0, 1]]), np.array([[1.0, 1.0]]),
        ...                                   n_components=2, gamma=1.0)
        >>> sketch.transform(np.array([[2.0, 3.0]]))
        array([[2., 3.]])
        """
        indices = np.asarray(hash_indices, dtype=np.int64)
        signs = np.asarray(hash_signs, dtype=np.float64)
        if indices.ndim != 2 or signs.shape != indices.shape:
            raise ValueError(f"hash_indices and hash_signs must be (degree, n_inputs) alike; "
                             f"got {indices.shape} and {signs.shape}.")
        n_features = indices.shape[1] - (0 if coef0 == 0 else 1)
        if coef0 == 0:  # the constant coordinate sqrt(coef0) = 0 adds nothing anywhere
            indices = np.hstack([indices, np.zeros((indices.shape[0], 1), np.int64)])
            signs = np.hstack([signs, np.zeros((signs.shape[0], 1))])
        if indices.size and not 0 <= indices.min() <= indices.max() < n_components:
            raise ValueError(f"hash_indices must lie in [0, {n_components}).")
        sketch = cls(n_components=n_components, degree=indices.shape[0], gamma=gamma,
                     coef0=coef0, dtype=dtype, memory_budget=memory_budget)
        sketch.n_components_ = n_components
        sketch.gamma_ = resolve_gamma(gamma)
        sketch.kernel_ = Polynomial(sketch.gamma_, indices.shape[0], float(coef0))
        sketch.hash_indices_, sketch.hash_signs_ = indices, signs
        sketch.n_features_in_ = n_features
        return sketch

    def _draw(self, n_inputs, rng):
        self.hash_indices_ = rng.randint(0, self.n_components_, size=(self.degree, n_inputs))
        self.hash_signs_ = (2 * rng.randint(0, 2, size=(self.degree, n_inputs)) - 1).astype(
            np.float64
        )

    def _transform_state(self, dtype):
        return {"dtype": dtype, "signs": self.hash_signs_.astype(dtype)}

    def _bytes_per_row(self, X, state):
        item = state["dtype"].itemsize
        n_freq = self.n_components_ // 2 + 1
        # augmented rows, one count sketch, and two complex spectra
        return item * (2 * X.shape[1] + 1 + self.n_components_ + 4 * n_freq) + sparse_row_bytes(X)

    def _transform_rows(self, X, start, stop, out, state):
        aug = self._augmented_rows(X, start, stop, state["dtype"])
        spectrum = None
        for hashes, signs in zip(self.hash_indices_, state["signs"]):
            _count_sketch(aug, hashes, signs, out)
            factor = scipy.fft.rfft(out, axis=1)
            spectrum = factor if spectrum is None else np.multiply(spectrum, factor, out=spectrum)
        out[...] = scipy.fft.irfft(spectrum, n=self.n_components_, axis=1)
