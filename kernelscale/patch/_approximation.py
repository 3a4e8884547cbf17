"""scikit-learn's ``RBFSampler``, ``PolynomialCountSketch`` and ``Nystroem`` on kernelscale.

Each keeps scikit-learn's ``fit`` draws (the same random numbers for the same
``random_state``, so the same model), and kernelscale computes what costs: the
sampler's and the sketch's transforms are kernelscale's maps built from those draws
(:meth:`kernelscale.RandomFourierFeatures.from_frequencies`,
:meth:`kernelscale.TensorSketch.from_hashes`: compiled, in row blocks, where
scikit-learn's sketch loops over features in Python); Nystroem's kernel blocks are
kernelscale's kernels. A kernel kernelscale does not have (``chi2``, ``cosine``, a
callable) runs scikit-learn's code, with one line on the ``kernelscale`` logger.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils._array_api import get_namespace
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from ..feature_maps import RandomFourierFeatures, TensorSketch
from ..kernels import make_kernel
from ._routing import documented, original, record

__all__ = ["RBFSampler", "PolynomialCountSketch", "Nystroem"]

#: scikit-learn's pairwise-kernel defaults for Nystroem's None parameters
_SKLEARN_DEFAULTS = {"degree": 3, "coef0": 1.0}
_NAMES = {"rbf": "rbf", "laplacian": "laplacian", "linear": "linear", "poly": "polynomial",
          "polynomial": "polynomial", "sigmoid": "sigmoid"}


class RBFSampler(original("RBFSampler")):
    __doc__ = documented("RBFSampler")

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        gamma = float(getattr(self, "_gamma", self.gamma))
        if not gamma > 0:
            record(self, "transform", "gamma=0 (a constant kernel)")
            return super().transform(X)
        # scikit-learn's product's type: float32 only when the draws are float32 too
        dtype = np.result_type(X.dtype, self.random_weights_.dtype).name
        features = RandomFourierFeatures.from_frequencies(
            self.random_weights_, self.random_offset_, gamma=gamma, dtype=dtype)
        out = features.transform(X)
        # scikit-learn scales by its n_components parameter, which set_params may change
        if out.shape[1] != self.n_components:
            out *= out.dtype.type(np.sqrt(out.shape[1] / self.n_components))
        record(self, "transform", how=f"compiled cosines, {X.shape[0]} rows")
        return out


class PolynomialCountSketch(original("PolynomialCountSketch")):
    __doc__ = documented("PolynomialCountSketch")

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csc", reset=False)
        expected = self.indexHash_.shape[1] - (0 if self.coef0 == 0 else 1)
        if X.shape[1] != expected:
            raise ValueError("Number of features of test samples does not match that of "
                             "training samples.")
        if not self.gamma > 0 or self.coef0 < 0:
            record(self, "transform", "gamma=0 or coef0 < 0")
            return super().transform(X)
        sketch = TensorSketch.from_hashes(
            self.indexHash_, self.bitHash_, n_components=int(self.n_components),
            gamma=float(self.gamma), coef0=float(self.coef0), dtype="float64")
        record(self, "transform", how=f"compiled count sketches, {X.shape[0]} rows")
        return sketch.transform(X.tocsr() if hasattr(X, "tocsr") else X)


class Nystroem(original("Nystroem")):
    __doc__ = documented("Nystroem")

    def _kernelscale_kernel(self, X):
        """kernelscale's kernel of this sampler's parameters, or why there is none."""
        if callable(self.kernel) or self.kernel not in _NAMES:
            return None, f"kernel={self.kernel!r}"
        if self.kernel_params:
            return None, "kernel_params"
        if get_namespace(X)[1]:
            return None, "array API input"
        name = _NAMES[self.kernel]
        gamma = 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)
        if name != "linear" and not gamma > 0:
            return None, "gamma=0"
        degree = _SKLEARN_DEFAULTS["degree"] if self.degree is None else self.degree
        coef0 = _SKLEARN_DEFAULTS["coef0"] if self.coef0 is None else self.coef0
        if name == "polynomial" and not float(degree).is_integer():
            return None, f"degree={degree!r}"
        return make_kernel(name, gamma=gamma, degree=int(degree), coef0=float(coef0)), None

    def fit(self, X, y=None):
        X_checked = validate_data(self, X, accept_sparse="csr")
        kernel, reason = self._kernelscale_kernel(X_checked)
        if kernel is None:
            record(self, "fit", reason)
            return super().fit(X, y)
        n_samples = X_checked.shape[0]
        if self.n_components > n_samples:
            warnings.warn("n_components > n_samples. This is not possible.\nn_components "
                          "was set to n_samples, which results in inefficient evaluation of "
                          "the full kernel.", stacklevel=2)
        n_components = min(n_samples, self.n_components)
        basis_inds = check_random_state(self.random_state).permutation(n_samples)[
            :n_components].astype(np.int64)
        basis = X_checked[basis_inds]
        basis_kernel = kernel.gram(basis)
        U, S, V = np.linalg.svd(basis_kernel)
        S = np.clip(S, 1e-12, None)  # scikit-learn's floor: the same normalization
        self.normalization_ = U / np.sqrt(S) @ V
        self.components_ = basis
        self.component_indices_ = basis_inds
        self._n_features_out = n_components
        record(self, "fit", how=f"kernelscale's {kernel.name} kernel, {n_components} "
                                "components")
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        kernel, _ = self._kernelscale_kernel(X)
        if kernel is None:  # its fit's route (recorded there)
            return super().transform(X)
        embedded = kernel.gram(X, self.components_)
        return embedded @ self.normalization_.T.astype(embedded.dtype, copy=False)
