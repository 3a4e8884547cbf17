"""Shared machinery of the approximate-kernel estimators: build, fit and apply the feature map
(and the single-output models' validation)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, clone

from .._constraints import Interval, Options, validate_params
from .._planner import features_plan, linear_solver_bytes
from .._validation import (
    check_sample_weight,
    check_X,
    check_X_y,
    iter_row_blocks,
    resolve_memory_budget,
)
from ..feature_maps import FEATURE_MAPS, make_feature_map
from ..kernels import KERNEL_CONSTRAINTS
from ._multiclass import linear_scores

__all__ = ["ApproxKernelMixin", "ApproxOneOutput", "APPROX_CONSTRAINTS"]

#: The feature-map parameters every approximate-kernel estimator shares.
APPROX_CONSTRAINTS = {
    "feature_map": [Options(*FEATURE_MAPS), "transformer"],
    "n_components": [Interval("int", 1)],
    "kernel": KERNEL_CONSTRAINTS["kernel"],
    "gamma": KERNEL_CONSTRAINTS["gamma"],
    "degree": KERNEL_CONSTRAINTS["degree"],
    "coef0": KERNEL_CONSTRAINTS["coef0"],
    "dtype": ["dtype"],
    "memory_budget": ["memory"],
    "random_state": ["random_state"],
}

class ApproxKernelMixin:
    """Builds ``feature_map_`` from the estimator's parameters and maps rows in blocks."""

    # The parameter holding the size of the map: estimators whose own
    # ``n_components`` means something else (PCA) name it differently.
    _map_size_param = "n_components"

    def _build_feature_map(self):
        if not isinstance(self.feature_map, str):
            if not (hasattr(self.feature_map, "fit") and hasattr(self.feature_map, "transform")):
                raise TypeError(
                    "feature_map must be a name from kernelscale.feature_maps.FEATURE_MAPS "
                    f"or a transformer with fit/transform, got {self.feature_map!r}."
                )
            return clone(self.feature_map)
        if self.feature_map not in FEATURE_MAPS:
            raise ValueError(
                f"Unknown feature_map={self.feature_map!r}; expected one of "
                f"{', '.join(map(repr, FEATURE_MAPS))} or a transformer."
            )
        accepted = FEATURE_MAPS[self.feature_map][0]._get_param_names()
        candidates = {
            "n_components": getattr(self, self._map_size_param), "gamma": self.gamma,
            "degree": self.degree, "coef0": self.coef0, "dtype": self.dtype,
            "memory_budget": self.memory_budget, "random_state": self.random_state,
        }
        params = {k: v for k, v in candidates.items() if k in accepted}
        return make_feature_map(self.feature_map, kernel=self.kernel, **params)

    def _fit_features(self, X):
        """Fit ``feature_map_`` on ``X`` and return the features of ``X``.

        The features of every row are kept for the solver: the memory plan
        (:func:`kernelscale._planner.features_plan`) holds them, the solver's
        per-row vectors and the map's blocks within ``memory_budget``, and a
        budget too small for them is one error naming the budget that would
        do (or the streamed fit, whose memory does not grow with the rows).
        """
        self.feature_map_ = self._build_feature_map().fit(X)
        n = X.shape[0]
        width = getattr(self.feature_map_, "_n_features_out", None)
        if width is None:  # a user's transformer: one row tells its width
            width = self.feature_map_.transform(X[:1]).shape[1]
        itemsize = np.dtype(getattr(self.feature_map_, "dtype", None) or X.dtype).itemsize
        budget = resolve_memory_budget(getattr(self, "memory_budget", None))
        plan = features_plan(f"{type(self).__name__}'s features of {n} rows", n=n,
                             n_components=int(width), itemsize=itemsize, budget=budget,
                             extra=linear_solver_bytes(n, int(width)),
                             per_row_temporary=2 * itemsize * int(width) + 8 * X.shape[1])
        plan.require(" (every row's features are kept: use fewer components, or fit the "
                     "data as a stream, kernelscale.datasets.ArrayChunks(X, y), whose "
                     "memory does not grow with the rows)")
        self.memory_plan_ = plan
        params = self.feature_map_.get_params(deep=False)
        if "memory_budget" not in params:
            return self.feature_map_.transform(X)
        # the transform's blocks get what the plan leaves; predict keeps the user's budget
        self.feature_map_.set_params(memory_budget=plan.block_bytes)
        try:
            return self.feature_map_.transform(X)
        finally:
            self.feature_map_.set_params(memory_budget=params["memory_budget"])

    def _mapped_blocks(self, X, memory_budget):
        """Yield ``(start, stop, Z_block)``: the features of ``X`` in row blocks."""
        width = (getattr(self.feature_map_, "_n_features_out", None)
                 or getattr(self, self._map_size_param))
        itemsize = np.dtype(self.dtype or np.float64).itemsize
        per_row = 2 * itemsize * int(width)
        for start, stop in iter_row_blocks(X.shape[0], per_row, memory_budget,
                                           what="a block of mapped features"):
            yield start, stop, self.feature_map_.transform(X[start:stop])

    def _raw_scores(self, X, memory_budget):
        """``feature_map_(X) @ coef_.T + intercept_``, mapping ``X`` block by block."""
        out = np.empty((X.shape[0], self.coef_.shape[0]))
        for start, stop, Z in self._mapped_blocks(X, memory_budget):
            out[start:stop] = linear_scores(Z, self.coef_, self.intercept_, memory_budget)
        return out

    def _more_tags_sparse(self, tags):
        tags.input_tags.sparse = True
        return tags


class ApproxOneOutput(ApproxKernelMixin, BaseEstimator):
    def _features(self, X, y, sample_weight, *, supervised):
        validate_params(self)
        if not supervised:
            X = check_X(self, X, reset=True)
        else:
            X, y = check_X_y(self, X, y, y_numeric=True)
        sw = check_sample_weight(sample_weight, X.shape[0])
        Z = self._fit_features(X)
        return np.asarray(Z), y, sw

    def __sklearn_tags__(self):
        return self._more_tags_sparse(super().__sklearn_tags__())
