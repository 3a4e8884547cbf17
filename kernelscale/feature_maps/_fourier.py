"""Random Fourier features for shift-invariant kernels (Rahimi & Recht 2007)."""

from __future__ import annotations

import math

import numba
import numpy as np

from .._constraints import Interval, Options
from .._parallel import parallel_guard
from .._planner import sparse_row_bytes
from .._validation import dense_rows
from ..kernels import (
    KERNEL_CONSTRAINTS,
    RBF,
    Exponential,
    Laplacian,
    Linear,
    Metric,
    check_kernel,
    resolve_gamma,
)
from ._base import _FeatureMap

__all__ = ["RandomFourierFeatures"]


@numba.njit(cache=True)
def _fwht(v):  # pragma: no cover - compiled
    """Unnormalised fast Walsh-Hadamard transform of ``v`` (length a power of 2), in place."""
    n = v.shape[0]
    h = 1
    while h < n:
        for i in range(0, n, 2 * h):
            for j in range(i, i + h):
                a = v[j]
                b = v[j + h]
                v[j] = a + b
                v[j + h] = a - b
        h *= 2


@parallel_guard
@numba.njit(parallel=True, cache=True)
def _sorf_project(X, signs, scale, out):  # pragma: no cover - compiled
    """``out[i, b*p:(b+1)*p] = scale * H D1 H D2 H D3 x_i`` for every block ``b``."""
    n, d = X.shape
    n_blocks, _, p = signs.shape
    for i in numba.prange(n):
        v = np.empty(p, dtype=out.dtype)
        for b in range(n_blocks):
            v[:] = 0.0
            for k in range(d):
                v[k] = X[i, k] * signs[b, 2, k]
            _fwht(v)
            for k in range(p):
                v[k] *= signs[b, 1, k]
            _fwht(v)
            for k in range(p):
                v[k] *= signs[b, 0, k]
            _fwht(v)
            for k in range(p):
                out[i, b * p + k] = v[k] * scale


def _orthogonal_gaussian(n_features, n_freq, rng):
    """Frequencies in blocks of orthogonal directions with chi-distributed norms.

    Each block is a Haar-random orthogonal matrix whose columns are rescaled to
    the norms of independent standard Gaussian vectors, so every column has the
    N(0, I) marginal while the columns of a block are exactly orthogonal
    (Yu et al. 2016).
    """
    blocks = []
    for _ in range(math.ceil(n_freq / n_features)):
        Q, R = np.linalg.qr(rng.standard_normal((n_features, n_features)))
        Q *= np.sign(np.diag(R))  # makes Q Haar distributed
        blocks.append(Q * np.sqrt(rng.chisquare(n_features, size=n_features)))
    return np.hstack(blocks)[:, :n_freq]


class RandomFourierFeatures(_FeatureMap):
    """Random Fourier features approximating the RBF or Laplacian kernel.

    By Bochner's theorem a shift-invariant kernel is the Fourier transform of a
    probability density ``p(w)``; sampling frequencies ``w ~ p`` gives an explicit
    map with ``z(x) . z(y) ~= k(x, y)``. ``kind="cos"`` uses
    ``z(x) = sqrt(2/D) cos(W^T x + b)`` with phases ``b ~ U[0, 2 pi]``;
    ``kind="sincos"`` uses ``D/2`` frequencies and
    ``z(x) = sqrt(2/D) [cos(W^T x), sin(W^T x)]``, which has lower variance (an
    odd ``D`` adds one random-phase cosine, weighted so the estimate stays
    unbiased).

    For ``kernel="rbf"`` (``exp(-gamma ||x-y||^2)``) the frequencies are
    ``N(0, 2 gamma I)``; for ``kernel="laplacian"`` (``exp(-gamma ||x-y||_1)``)
    each coordinate is Cauchy with scale ``gamma``; for ``kernel="exponential"``
    (``exp(-sqrt(gamma) ||x-y||_2)``) they are multivariate Cauchy with scale
    ``sqrt(gamma)``.

    Parameters
    ----------
    n_components : int, default=100
        Number of output features ``D``.
    kernel : {"rbf", "laplacian", "exponential"}, default="rbf"
        The shift-invariant kernel to approximate.
    gamma : {"scale", "auto"}, float, array-like of shape (n_features,) or Metric, \
default="scale"
        Kernel scale; ``"scale"`` is ``1 / (n_features * X.var())``. An array
        is one width per feature: each feature's frequencies are scaled by its
        own (``sqrt(2 gamma_d)`` for rbf, ``gamma_d`` for laplacian). A
        :class:`kernelscale.kernels.Metric` ``M = L L^T`` (or a d x d matrix): the
        frequencies are drawn in ``L``'s r coordinates and mapped back by ``L``
        (the isotropic map of the rows ``x L``).
    kind : {"cos", "sincos"}, default="cos"
        Cosine-with-random-phase map, or the paired sine/cosine map.
    sampling : {"iid", "orthogonal", "structured"}, default="iid"
        ``"iid"``: independent frequencies. ``"orthogonal"``: orthogonal random
        features (Yu et al. 2016), lower variance at equal ``D``.
        ``"structured"``: SORF, ``sqrt(2 gamma) H D1 H D2 H D3`` with Walsh-Hadamard
        matrices ``H`` and random sign diagonals, applied by a fast transform in
        ``O(D log d)`` per row, its rows rescaled to chi-distributed norms as in
        Fastfood (Le et al. 2013) so that it stays unbiased when ``d`` is small.
        The last two require ``kernel="rbf"``.
    dtype : {"float32", "float64"} or None, default="float32"
        Output dtype. float32 halves memory and doubles speed; its rounding
        (1e-7) is far below the approximation error (about ``1/sqrt(D)``).
        None follows the input.
    memory_budget : int, default=None
        Bytes for the temporaries of one transform block; None uses
        :func:`kernelscale.get_config`.
    random_state : int, RandomState instance or None, default=None
        Seeds the frequencies; an int makes ``fit`` deterministic.

    Attributes
    ----------
    kernel_ : kernelscale.kernels.Kernel
        The kernel the map approximates (``RBF`` or ``Laplacian``).
    gamma_ : float or ndarray of shape (n_features_in,)
        The kernel scale used (per-feature widths as given).
    n_components_ : int
        Number of output features.
    random_weights_ : ndarray of shape (n_features_in, n_frequencies)
        The frequencies (``sampling`` "iid" or "orthogonal").
    random_signs_ : ndarray of shape (n_blocks, 3, padded_n_features)
        The sign diagonals ``D1, D2, D3`` of each SORF block (``sampling="structured"``).
    random_norms_ : ndarray of shape (n_frequencies,)
        Radial rescaling of each SORF frequency, ``chi(padded) / sqrt(padded)``
        (``sampling="structured"``).
    random_offset_ : ndarray of shape (n_phased,)
        The phases ``b`` of the random-phase cosines (all ``n_components`` of
        them for ``kind="cos"``; one for ``kind="sincos"`` with odd ``D``).
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    Nystroem : Data-dependent approximation, usually more accurate per feature.

    References
    ----------
    .. [1] A. Rahimi and B. Recht, "Random Features for Large-Scale Kernel
       Machines", NIPS 2007.
    .. [2] F. X. Yu, A. T. Suresh, K. Choromanski, D. Holtmann-Rice and S. Kumar,
       "Orthogonal Random Features", NIPS 2016.
    .. [3] Q. Le, T. Sarlos and A. Smola, "Fastfood: Approximating Kernel
       Expansions in Loglinear Time", ICML 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import RandomFourierFeatures
    >>> X = np.random.default_rng(0).normal(size=(100, 5))
    >>> rff = RandomFourierFeatures(n_components=256, gamma=0.1, random_state=0)
    >>> Z = rff.fit_transform(X)
    >>> Z.shape, Z.dtype
    ((100, 256), dtype('float32'))
    """

    _parameter_constraints = {
        "n_components": [Interval("int", 1)],
        "kernel": KERNEL_CONSTRAINTS["kernel"],
        "gamma": KERNEL_CONSTRAINTS["gamma"],
        "kind": [Options("cos", "sincos")],
        "sampling": [Options("iid", "orthogonal", "structured")],
        "dtype": ["dtype"],
        "memory_budget": ["memory"],
        "random_state": ["random_state"],
    }

    def __init__(
        self, *, n_components=100, kernel="rbf", gamma="scale", kind="cos",
        sampling="iid", dtype="float32", memory_budget=None, random_state=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.kind = kind
        self.sampling = sampling
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.random_state = random_state

    def _check_params(self):
        kernel = check_kernel(self.kernel)
        if not isinstance(kernel, str) or kernel not in ("rbf", "laplacian", "exponential"):
            raise ValueError(
                f"RandomFourierFeatures approximates shift-invariant kernels: kernel must "
                f"be 'rbf', 'laplacian' or 'exponential', got {self.kernel!r}. Use Nystroem "
                "for other kernels, or RandomMaclaurin / TensorSketch for the polynomial "
                "kernel."
            )
        n_components, kind, sampling = self.n_components, self.kind, self.sampling
        if sampling != "iid" and kernel != "rbf":
            raise ValueError(
                f"sampling={sampling!r} needs a rotation-invariant frequency density, which "
                f"only kernel='rbf' has; use sampling='iid' with kernel={self.kernel!r}."
            )
        return kernel, n_components, kind, sampling

    @classmethod
    def from_frequencies(cls, weights, offset, *, gamma, dtype=None, memory_budget=None):
        """The RBF map ``sqrt(2/D) cos(x W + b)`` of frequencies drawn elsewhere.

        scikit-learn's ``RBFSampler`` draws ``W`` and ``b`` as ``fit`` does here
        (``kind="cos"``, i.i.d. sampling); this map transforms with them, so its
        features are that sampler's.

        Parameters
        ----------
        weights : ndarray of shape (n_features, n_components)
            The frequencies ``W``, scaled for ``gamma`` already.
        offset : ndarray of shape (n_components,)
            The phases ``b``.
        gamma : float
            The kernel scale the frequencies were drawn for (> 0).
        dtype, memory_budget : as the constructor's.

        Returns
        -------
        features : RandomFourierFeatures
            Fitted.

        Examples
        --------
        >>> import numpy as np
        >>> W, b = np.ones((2, 3)), np.zeros(3)
        >>> rff = RandomFourierFeatures.from_frequencies(W, b, gamma=0.5)
        >>> rff.transform(np.zeros((1, 2))).round(4)
        array([[0.8165, 0.8165, 0.8165]])
        """
        weights = np.asarray(weights, dtype=np.float64)
        offset = np.asarray(offset, dtype=np.float64)
        if weights.ndim != 2 or offset.shape != (weights.shape[1],):
            raise ValueError(f"weights must be (n_features, n_components) and offset "
                             f"(n_components,); got {weights.shape} and {offset.shape}.")
        features = cls(n_components=weights.shape[1], gamma=gamma, kind="cos", dtype=dtype,
                       memory_budget=memory_budget)
        features.gamma_ = resolve_gamma(gamma)
        features.kernel_ = RBF(features.gamma_)
        features.n_components_ = weights.shape[1]
        features.random_weights_ = weights
        features.random_offset_ = offset
        features.n_features_in_ = weights.shape[0]
        return features

    def _fit(self, X, rng):
        kernel, n_components, kind, sampling = self._check_params()
        self.gamma_ = resolve_gamma(self.gamma, X)
        self.kernel_ = {"rbf": RBF, "laplacian": Laplacian,
                        "exponential": Exponential}[kernel](self.gamma_)
        self.n_components_ = n_components
        # with a metric M = L L^T the map is the isotropic one (gamma 1) of the rows x L:
        # its frequencies are drawn in L's r coordinates and carried back by L
        metric = self.gamma_ if isinstance(self.gamma_, Metric) else None
        n_features = X.shape[1] if metric is None else metric.rank
        n_pairs, n_phased = self._layout(kind, n_components)
        n_freq = n_pairs + n_phased
        if sampling == "structured":
            padded = 1 << max(n_features - 1, 0).bit_length()
            n_blocks = math.ceil(n_freq / padded)
            self.random_signs_ = rng.choice([-1.0, 1.0], size=(n_blocks, 3, padded))
            # Every SORF row has norm sqrt(padded); rescaling rows to independent
            # chi(padded) norms, as Fastfood does, gives each frequency the radial
            # law of a Gaussian vector and removes SORF's bias at small d.
            chi = np.sqrt(rng.chisquare(padded, size=n_blocks * padded)[:n_freq])
            self.random_norms_ = chi / math.sqrt(padded)
        elif sampling == "orthogonal":
            W = _orthogonal_gaussian(n_features, n_freq, rng)
            self.random_weights_ = self._scaled(W, np.sqrt(2.0), lambda g: np.sqrt(2.0 * g),
                                                metric)
        elif kernel == "rbf":
            W = rng.standard_normal((n_features, n_freq))
            self.random_weights_ = self._scaled(W, np.sqrt(2.0), lambda g: np.sqrt(2.0 * g),
                                                metric)
        elif kernel == "exponential":
            # exp(-||x - y||)'s spectral density is the multivariate Cauchy law:
            # a Gaussian vector over the absolute value of a Gaussian
            W = rng.standard_normal((n_features, n_freq)) / \
                np.abs(rng.standard_normal(n_freq))
            self.random_weights_ = self._scaled(W, 1.0, np.sqrt, metric)
        else:
            W = rng.standard_cauchy((n_features, n_freq))
            self.random_weights_ = self._scaled(W, 1.0, lambda g: g, metric)
        if n_phased:
            self.random_offset_ = rng.uniform(0.0, 2.0 * np.pi, size=n_phased)
        return self

    def _scaled(self, W, unit, scale, metric):
        """Frequencies ``W`` drawn for the isotropic kernel of gamma 1 (``unit`` their scale),
        carried to this one: through the metric's factor, or scaled per feature or at once
        by ``scale(gamma)``."""
        if metric is not None:
            return metric.factor @ (W * unit)
        return W * self._row_scale(scale(np.asarray(self.gamma_, dtype=np.float64)))

    @staticmethod
    def _row_scale(scale):
        """A scale of the frequencies: one number, or one per feature (a row of ``W``):
        per-feature widths are the isotropic kernel on the columns scaled by them."""
        scale = np.asarray(scale, dtype=np.float64)
        return scale[:, None] if scale.ndim else float(scale)

    @staticmethod
    def _layout(kind, n_components):
        """``(n_pairs, n_phased)``: sine/cosine pairs and random-phase cosines."""
        n_pairs = n_components // 2 if kind == "sincos" else 0
        return n_pairs, n_components - 2 * n_pairs

    @property
    def _n_features_out(self):
        return self.n_components_

    def _fitted_layout(self):
        """``(structured, n_pairs, n_phased)`` read from the fitted arrays, not the
        parameters, so that ``set_params`` after ``fit`` cannot desynchronise them."""
        structured = hasattr(self, "random_signs_")
        n_freq = len(self.random_norms_) if structured else self.random_weights_.shape[1]
        n_pairs = self.n_components_ - n_freq
        return structured, n_pairs, n_freq - n_pairs

    def _transform_state(self, dtype):
        structured, n_pairs, n_phased = self._fitted_layout()
        state = {"dtype": dtype, "structured": structured, "layout": (n_pairs, n_phased)}
        if structured:
            state["signs"] = self.random_signs_.astype(dtype)
            state["norms"] = self.random_norms_.astype(dtype)
        else:
            state["projection"] = Linear().prepare(self.random_weights_.T, dtype)
        if n_phased:
            state["offset"] = self.random_offset_.astype(dtype)
        return state

    def _bytes_per_row(self, X, state):
        item = state["dtype"].itemsize
        n_pairs, n_phased = state["layout"]
        per_row = item * (n_pairs + n_phased) if n_pairs else 0
        if state["structured"]:
            n_blocks, _, padded = self.random_signs_.shape
            return per_row + item * (X.shape[1] + (n_blocks + 1) * padded) + sparse_row_bytes(X)
        return per_row + state["projection"].bytes_per_row(X)

    def _project(self, X, start, stop, state, out):
        """Write ``X[start:stop] @ W`` (the frequencies' phases) into ``out``."""
        if not state["structured"]:
            return state["projection"].evaluate_rows(X, start, stop, out)
        Xb = dense_rows(X, start, stop, state["dtype"])
        signs = state["signs"]
        padded = signs.shape[2]
        full = np.empty((stop - start, signs.shape[0] * padded), dtype=state["dtype"])
        # H D1 H D2 H D3 with unnormalised H has rows of norm padded**1.5; dividing by
        # padded gives rows of norm sqrt(padded), the mean norm of a N(0, I) vector.
        if isinstance(self.gamma_, Metric):  # the isotropic map of the rows x L
            Xb = self.gamma_.transform(Xb, Xb.dtype) * Xb.dtype.type(np.sqrt(2.0))
            scale = 1.0 / padded
        else:
            width = np.sqrt(2.0 * np.asarray(self.gamma_, dtype=np.float64))
            if width.ndim:  # per-feature widths: the isotropic map of the scaled columns
                Xb = Xb * width.astype(Xb.dtype)
                scale = 1.0 / padded
            else:
                scale = float(width) / padded
        _sorf_project(Xb, signs, out.dtype.type(scale), full)
        np.multiply(full[:, : out.shape[1]], state["norms"], out=out)
        return out

    def _transform_rows(self, X, start, stop, out, state):
        n_pairs, n_phased = state["layout"]
        if n_pairs == 0:
            self._project(X, start, stop, state, out)
            out += state["offset"]
            np.cos(out, out=out)
        else:
            phases = np.empty((stop - start, n_pairs + n_phased), dtype=out.dtype)
            self._project(X, start, stop, state, phases)
            np.cos(phases[:, :n_pairs], out=out[:, :n_pairs])
            np.sin(phases[:, :n_pairs], out=out[:, n_pairs : 2 * n_pairs])
            if n_phased:
                lone = phases[:, n_pairs:] + state["offset"]
                np.cos(lone, out=out[:, 2 * n_pairs :])
        # Each pair, and each phased cosine scaled by sqrt(2), is one unbiased
        # estimate of k(x, y); averaging the n_pairs + n_phased of them fixes the scale.
        n_estimates = n_pairs + n_phased
        out[:, : 2 * n_pairs] *= out.dtype.type(1.0 / math.sqrt(n_estimates))
        out[:, 2 * n_pairs :] *= out.dtype.type(math.sqrt(2.0 / n_estimates))
