"""Approximate kernel feature maps (scikit-learn transformers).

``make_feature_map(name, **params)`` builds a map from a short name, the way the
command line and the estimators that take ``feature_map="nystroem"`` do.
"""

from __future__ import annotations

from ._error import kernel_approximation_error
from ._fourier import RandomFourierFeatures
from ._landmarks import SAMPLINGS, select_landmarks
from ._nystroem import Nystroem
from ._polynomial import RandomMaclaurin, TensorSketch

__all__ = [
    "FEATURE_MAPS",
    "Nystroem",
    "RandomFourierFeatures",
    "RandomMaclaurin",
    "TensorSketch",
    "kernel_approximation_error",
    "make_feature_map",
    "SAMPLINGS",
    "select_landmarks",
]

_ANY_KERNEL = ("linear", "polynomial", "rbf", "laplacian")

# name -> (class, fixed parameters, kernels it can approximate)
FEATURE_MAPS = {
    "rff": (RandomFourierFeatures, {}, ("rbf", "laplacian")),
    "rff-sincos": (RandomFourierFeatures, {"kind": "sincos"}, ("rbf", "laplacian")),
    "orf": (RandomFourierFeatures, {"kind": "sincos", "sampling": "orthogonal"}, ("rbf",)),
    "sorf": (RandomFourierFeatures, {"kind": "sincos", "sampling": "structured"}, ("rbf",)),
    "nystroem": (Nystroem, {}, _ANY_KERNEL),
    "nystroem-kmeans": (Nystroem, {"sampling": "kmeans"}, _ANY_KERNEL),
    "nystroem-leverage": (Nystroem, {"sampling": "leverage"}, _ANY_KERNEL),
    "maclaurin": (RandomMaclaurin, {}, ("polynomial",)),
    "tensorsketch": (TensorSketch, {}, ("polynomial",)),
}


def make_feature_map(name, *, kernel="rbf", **params):
    """Build the feature map called ``name`` for ``kernel``.

    Parameters
    ----------
    name : str
        A key of :data:`FEATURE_MAPS`: ``"rff"``, ``"rff-sincos"``, ``"orf"``,
        ``"sorf"``, ``"nystroem"``, ``"nystroem-kmeans"``, ``"nystroem-leverage"``,
        ``"maclaurin"`` or ``"tensorsketch"``.
    kernel : str, default="rbf"
        The kernel to approximate; must be one the map supports.
    **params
        Further constructor parameters (``n_components``, ``gamma``, ``random_state``...).

    Returns
    -------
    feature_map : transformer
        An unfitted map.

    Examples
    --------
    >>> from kernelscale.feature_maps import make_feature_map
    >>> rff = make_feature_map("orf", n_components=64, gamma=0.1)
    >>> rff.kind, rff.sampling, rff.n_components
    ('sincos', 'orthogonal', 64)
    """
    from ..kernels import check_kernel

    if name not in FEATURE_MAPS:
        raise ValueError(
            f"Unknown feature map {name!r}; expected one of {', '.join(map(repr, FEATURE_MAPS))}."
        )
    cls, fixed, kernels = FEATURE_MAPS[name]
    kernel = check_kernel(kernel)
    if kernel not in kernels:
        raise ValueError(
            f"Feature map {name!r} approximates the {', '.join(kernels)} kernel(s), not "
            f"{kernel!r}; pick a map listed for {kernel!r} in "
            "kernelscale.feature_maps.FEATURE_MAPS."
        )
    params = {**fixed, **params}
    if cls is not RandomMaclaurin and cls is not TensorSketch:
        params["kernel"] = kernel
    return cls(**params)
