"""The row source a ``fit`` input calls for: a stream, dask, or None for in-memory data."""

from __future__ import annotations

from ..datasets import ChunkedDataset
from ._base import RowSource, StreamSource, is_dask_array

__all__ = ["row_source"]


def row_source(X, y=None, sample_weight=None, *, verbose=0, memory_budget=None):
    """The :class:`RowSource` for ``X`` when it is chunked, else None.

    ``X`` is chunked when it is a dask array or a
    :class:`kernelscale.datasets.ChunkedDataset` (whose chunks carry the labels,
    so ``y`` must then be None). A stream keeps its chunks in memory when they
    fit ``memory_budget`` (see :class:`StreamSource`).
    """
    if isinstance(X, RowSource):
        return X
    if isinstance(X, ChunkedDataset):
        if y is not None or sample_weight is not None:
            raise ValueError("A ChunkedDataset carries its own labels: call fit(dataset) "
                             "without y and sample_weight.")
        return StreamSource(X, memory_budget)
    if is_dask_array(X):
        from ._dask import DaskSource

        return DaskSource(X, y, sample_weight, verbose=verbose)
    return None
