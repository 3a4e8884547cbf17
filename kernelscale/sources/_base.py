"""The row-source interface and the in-process stream of a chunked data set."""

from __future__ import annotations

import abc
import sys

import numpy as np

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


def _nbytes(X, y):
    size = sum(getattr(X, a).nbytes for a in ("data", "indices", "indptr")) \
        if hasattr(X, "indptr") else X.nbytes
    return size + (0 if y is None else np.asarray(y).nbytes)


def _owned(a):
    return a.copy() if getattr(a, "base", None) is not None else a


class StreamSource(RowSource):
    """A :class:`kernelscale.datasets.ChunkedDataset` read chunk by chunk in this process.

    The first pass keeps the chunks while they fit ``memory_budget``: when the
    whole data set does, later passes reuse them instead of reading (and
    decompressing) the file again. Otherwise every pass re-reads the file, and
    ``rereads`` says so (also set on the data set, for progress output).

    Parameters
    ----------
    dataset : ChunkedDataset
    memory_budget : int, default=None
        Bytes the kept chunks may take; None keeps nothing.
    """

    def __init__(self, dataset, memory_budget=None):
        self.dataset = dataset
        self.n_features = dataset.n_features
        self.memory_budget = memory_budget
        self._kept = None
        self.rereads = None  # decided by the first pass

    def _chunks(self):
        if self._kept is not None:
            yield from self._kept
            return
        kept, used = [], 0
        keeping = self.memory_budget is not None
        for X, y in self.dataset:
            if keeping:
                used += _nbytes(X, y)
                keeping = used <= self.memory_budget
                if keeping:
                    # a view would keep its whole base array alive: keep own copies
                    kept.append((_owned(X), None if y is None else _owned(np.asarray(y))))
                else:
                    kept = []  # the data do not fit: every pass reads the file
            yield X, y
        self._kept = kept if keeping else None
        self.rereads = not keeping
        if hasattr(self.dataset, "rereads"):
            self.dataset.rereads = self.rereads

    def in_memory(self):
        """``(X, y)`` of the whole data set when it fits the budget (one pass), else None."""
        if self._kept is None and self.rereads is None:
            for _ in self._chunks():
                pass
        if not self._kept:
            return None
        import scipy.sparse as sp

        parts_X = [X for X, _ in self._kept]
        X = sp.vstack(parts_X, format="csr") if sp.issparse(parts_X[0]) \
            else np.concatenate(parts_X)
        y = None if self._kept[0][1] is None else np.concatenate([y for _, y in self._kept])
        self._kept = [(X, y)]  # one copy, not the chunks and their concatenation
        return X, y

    def map_reduce(self, func, shared=(), combine=add_results):
        total = None
        for X, y in self._chunks():
            part = func(X, y, None, *shared)
            total = part if total is None else combine(total, part)
        return total

    def iter_chunks(self):
        for X, y in self._chunks():
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
