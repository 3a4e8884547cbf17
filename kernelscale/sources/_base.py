"""The row-source interface and the in-process stream of a chunked data set."""

from __future__ import annotations

import abc
import sys

__all__ = ["is_dask_array", "RowSource", "StreamSource", "add_results"]


def is_dask_array(X):
    """True when ``X`` is a ``dask.array.Array`` (without importing dask).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.sources import is_dask_array
    >>> is_dask_array(np.zeros(3))
    False
    """
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(X, module.Array)


def add_results(a, b):
    """Add two partial results: arrays and numbers add, tuples add element-wise."""
    if isinstance(a, tuple):
        return tuple(add_results(u, v) for u, v in zip(a, b))
    return a + b


class RowSource(abc.ABC):
    """Rows of ``(X, y, sample_weight)`` that solvers see only through sums over chunks."""

    n_features: int

    @abc.abstractmethod
    def map_reduce(self, func, shared=(), combine=add_results):
        """Return the combination over all chunks of ``func(X, y, w, *shared)``."""

    def share(self, obj):
        """A handle for ``obj`` to pass in ``shared`` on every pass (sent to workers once)."""
        return obj

    @abc.abstractmethod
    def iter_chunks(self):
        """Yield ``(X, y, w)`` chunk after chunk into this process (for online solvers)."""

    @abc.abstractmethod
    def head(self, n_rows, random_state=None):
        """Rows ``(X, y)`` (at most ``n_rows``) to fit a feature map or choose centres on."""

    @abc.abstractmethod
    def classes(self):
        """Sorted distinct labels."""


class StreamSource(RowSource):
    """A :class:`kernelscale.datasets.ChunkedDataset` read chunk by chunk in this process.

    Parameters
    ----------
    dataset : ChunkedDataset
    """

    def __init__(self, dataset):
        self.dataset = dataset
        self.n_features = dataset.n_features

    def map_reduce(self, func, shared=(), combine=add_results):
        total = None
        for X, y in self.dataset:
            part = func(X, y, None, *shared)
            total = part if total is None else combine(total, part)
        return total

    def iter_chunks(self):
        for X, y in self.dataset:
            yield X, y, None

    def head(self, n_rows, random_state=None):
        # random rows where the data set can read them cheaply (.npy, arrays), else
        # the first rows: a random sample of a text file would cost a full pass
        return self.dataset.sample(n_rows, random_state)

    def classes(self):
        return self.dataset.classes()

    @property
    def n_rows(self):
        return self.dataset.n_samples
