"""scikit-learn's ``KernelRidge`` with kernelscale's kernel matrices.

scikit-learn's ``fit`` and ``predict`` (validation, its Cholesky solve with sample
weights and several alphas, ``dual_coef_`` and ``X_fit_``) with the kernel matrices
(``K(X, X)`` in ``fit``, ``K(X, X_fit_)`` in ``predict``, most of the time of either)
computed by :mod:`kernelscale.kernels`, in the input's float type. A kernel kernelscale
does not have (``chi2``, ``cosine``, a callable, ``kernel_params``) is scikit-learn's.
"""

from __future__ import annotations

from ..kernels import make_kernel
from ._routing import documented, original, record

__all__ = ["KernelRidge"]

_NAMES = {"rbf": "rbf", "laplacian": "laplacian", "linear": "linear", "poly": "polynomial",
          "polynomial": "polynomial", "sigmoid": "sigmoid"}
#: scikit-learn's pairwise-kernel defaults where KernelRidge passes None
_DEFAULT_COEF0 = 1.0


class KernelRidge(original("KernelRidge")):
    __doc__ = documented("KernelRidge")

    def _get_kernel(self, X, Y=None):
        reason = None
        if callable(self.kernel) or self.kernel not in _NAMES:
            reason = f"kernel={self.kernel!r}"
        elif self.kernel_params:
            reason = "kernel_params"
        elif self.gamma is not None and not self.gamma > 0 and self.kernel != "linear":
            reason = "gamma=0"
        elif _NAMES[self.kernel] == "polynomial" and not float(self.degree).is_integer():
            reason = f"degree={self.degree!r}"
        fitting = Y is None  # a prediction follows its fit's route: one record per fit
        if reason is not None:
            if fitting:
                record(self, "fit", reason)
            return super()._get_kernel(X, Y)
        gamma = 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)
        coef0 = _DEFAULT_COEF0 if self.coef0 is None else float(self.coef0)
        kernel = make_kernel(_NAMES[self.kernel], gamma=gamma, degree=int(self.degree),
                             coef0=coef0)
        if fitting:
            record(self, "fit", how=f"kernelscale's {kernel.name} kernel, {X.shape[0]} rows")
        return kernel.gram(X, Y)
