"""Shared machinery of the feature maps: validation, dtype and the blocked transform."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._constraints import validate_params
from .._validation import check_X, iter_row_blocks, resolve_dtype, resolve_memory_budget
from ..sources import dask_map_rows, is_dask_array


class _FeatureMap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class: ``fit`` draws the map, ``transform`` applies it in row blocks.

    Subclasses implement

    - ``_fit(X, rng)``: validate parameters and set the fitted attributes;
    - ``_n_features_out`` (property): number of output columns;
    - ``_transform_state(dtype)``: the fitted arrays cast to the output dtype,
      computed once per ``transform`` call;
    - ``_bytes_per_row(X, state)``: temporary bytes per row of a block;
    - ``_transform_rows(X, start, stop, out, state)``: fill ``out`` with the map
      of ``X[start:stop]``;
    and set the fitted attribute ``kernel_`` (a :class:`kernelscale.kernels.Kernel`):
    the kernel the map approximates.
    """

    def fit(self, X, y=None):
        """Draw the feature map from the data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for pipeline compatibility.

        Returns
        -------
        self : object
            The fitted map.
        """
        validate_params(self)
        X = check_X(self, X, reset=True)
        self._fit(X, check_random_state(self.random_state))
        return self

    def transform(self, X):
        """Map ``X`` to the approximate feature space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Data to map; sparse input is densified one row block at a time.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features_out)
            The features, in ``dtype`` (the input's float type when ``dtype`` is
            None). ``Z @ Z.T`` approximates the kernel matrix of ``X``.
        """
        check_is_fitted(self)
        if is_dask_array(X):
            return self._dask_transform(X)
        X = check_X(self, X, reset=False)
        dtype = resolve_dtype(self.dtype, X.dtype)
        out = np.empty((X.shape[0], self._n_features_out), dtype=dtype)
        state = self._transform_state(dtype)
        budget = resolve_memory_budget(self.memory_budget)
        per_row = self._bytes_per_row(X, state)
        what = f"the {type(self).__name__} transform"
        for start, stop in iter_row_blocks(X.shape[0], per_row, budget, what=what):
            self._transform_rows(X, start, stop, out[start:stop], state)
        return out

    def _dask_transform(self, X):
        """Lazy transform of a dask array: one ``transform`` per row block (map sent once)."""
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[-1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input.")
        dtype = resolve_dtype(self.dtype, X.dtype)
        return dask_map_rows(self, "transform", X, self._n_features_out, dtype=dtype)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        try:
            dtype = resolve_dtype(self.dtype, np.float64)
        except ValueError:  # an invalid dtype is reported by fit, not by the tags
            return tags
        preserved = ["float64", "float32"] if self.dtype is None else [dtype.name]
        tags.transformer_tags.preserves_dtype = preserved
        return tags
