"""Row sources: one interface over streamed chunks and dask arrays for the multi-pass solvers.

A solver that can be written as sums over rows (ridge statistics, a loss and
its gradient, ``K_nm^T K_nm v``) asks a source for
``map_reduce(func, shared)``: ``func(X_chunk, y_chunk, w_chunk, *shared)`` on
every chunk, the results added up. :class:`StreamSource` runs it chunk after
chunk in this process (memory bounded by one chunk); :class:`DaskSource` runs
it as one task per row block on the active ``distributed`` client (or dask's
local scheduler) and adds the results by a tree reduction, the shared objects
(the fitted feature map, the current weights) sent to each worker once.

dask is optional: nothing here imports it unless a dask array was passed in.
"""

from __future__ import annotations

import abc
import os
import sys
import time

import numpy as np

__all__ = [
    "is_dask_array", "RowSource", "StreamSource", "DaskSource", "row_source", "add_results",
    "dask_map_rows",
]


def is_dask_array(X):
    """True when ``X`` is a ``dask.array.Array`` (without importing dask)."""
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


def _client():
    """The active ``distributed`` client, or None (dask's local scheduler is used)."""
    if "distributed" not in sys.modules:
        return None
    from distributed import get_client

    try:
        return get_client()
    except ValueError:
        return None


class _BlasThreads:
    """Worker plugin: cap BLAS threads so that a host's workers do not oversubscribe its cores.

    Each worker gets ``cores / (threads of all workers on its host)`` BLAS
    threads (at least 1), set at start-up, so restarted workers get it too.
    """

    name = "kernelscale-blas-threads"
    idempotent = True

    def __init__(self, threads_by_host):
        self.threads_by_host = threads_by_host

    def setup(self, worker):
        from threadpoolctl import threadpool_limits

        host = worker.address.rsplit(":", 1)[0]
        busy = self.threads_by_host.get(host, worker.state.nthreads)
        limit = max(1, (os.cpu_count() or 1) // max(busy, 1))
        worker.kernelscale_blas_limit = threadpool_limits(limits=limit)  # kept: stays in force
        worker.kernelscale_blas_threads = limit


def set_worker_blas_threads(client):
    """Register the BLAS-thread plugin on ``client``'s workers (once per client)."""
    if getattr(client, "_kernelscale_blas", False):
        return
    threads = {}
    for address, info in client.scheduler_info(n_workers=-1)["workers"].items():
        host = address.rsplit(":", 1)[0]
        threads[host] = threads.get(host, 0) + int(info.get("nthreads", 1))
    from distributed.diagnostics.plugin import WorkerPlugin

    plugin = type("KernelscaleBlasThreads", (_BlasThreads, WorkerPlugin), {})(threads)
    for attempt in range(3):
        try:
            client.register_plugin(plugin)
            break
        except (OSError, ValueError) as exc:
            # a worker dying during registration (CommClosedError is an OSError): the
            # scheduler keeps the plugin for the workers it starts next; try once more,
            # then go on without the cap rather than fail the fit
            if attempt == 2:
                import warnings

                warnings.warn(f"Could not cap BLAS threads on every dask worker ({exc}); "
                              "workers may oversubscribe their cores.", RuntimeWarning,
                              stacklevel=3)
            time.sleep(0.5)
    client._kernelscale_blas = True


def _share(client, obj):
    """``obj`` as one graph key: scattered to every worker once, or a delayed constant."""
    from dask import delayed
    from dask.delayed import Delayed

    if isinstance(obj, Delayed) or type(obj).__name__ == "Future":
        return obj  # already shared by DaskSource.share
    if client is not None:
        return client.scatter(obj, broadcast=True, hash=False)
    return delayed(obj, pure=True)


_SMALL = 1 << 20  # bytes: smaller arrays travel inside each task, larger ones once per worker


def _graph_argument(obj):
    """How ``obj`` enters a graph: handles as they are, small values inline, others as one key."""
    from dask import delayed
    from dask.delayed import Delayed

    if obj is None or isinstance(obj, (Delayed, bool, int, float, str, np.dtype, np.generic)) \
            or type(obj).__name__ == "Future":
        return obj
    if isinstance(obj, np.ndarray) and obj.nbytes <= _SMALL:
        return obj
    return delayed(obj, pure=True)


class DaskSource(RowSource):
    """Dask arrays chunked by rows: one task per row block, results tree-reduced.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
    y : dask array or ndarray of shape (n_samples,), default=None
    sample_weight : dask array or ndarray of shape (n_samples,), default=None
    verbose : int, default=0
        Print the time of each reduction.
    """

    def __init__(self, X, y=None, sample_weight=None, verbose=0):
        import dask.array as da

        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D dask array, got {X.ndim} dimensions.")
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})  # whole rows per task: every map needs all columns
        self.X = X
        self.n_features = X.shape[1]
        self.y = None if y is None else self._aligned(da, y, "y")
        self.sample_weight = None if sample_weight is None \
            else self._aligned(da, sample_weight, "sample_weight")
        self.verbose = verbose
        self.client = _client()
        if self.client is not None:
            set_worker_blas_threads(self.client)

    def share(self, obj):
        return _share(self.client, obj)

    def _aligned(self, da, v, name):
        v = v if is_dask_array(v) else da.from_array(np.asarray(v), chunks=(self.X.chunks[0],))
        if v.ndim != 1 or v.shape[0] != self.X.shape[0]:
            raise ValueError(f"{name} must be 1-D with one entry per row of X "
                             f"({self.X.shape[0]}), got shape {v.shape}.")
        return v if v.chunks[0] == self.X.chunks[0] else v.rechunk((self.X.chunks[0],))

    def _blocks(self, v):
        n_blocks = len(self.X.chunks[0])
        return [None] * n_blocks if v is None else list(v.to_delayed().ravel())

    def map_reduce(self, func, shared=(), combine=add_results):
        import dask
        from dask import delayed

        start = time.perf_counter()
        shared = [_graph_argument(obj) for obj in shared]
        task, merge = delayed(func, pure=True), delayed(combine, pure=True)
        parts = [task(xb, yb, wb, *shared) for xb, yb, wb in zip(
            self.X.to_delayed().ravel(), self._blocks(self.y), self._blocks(self.sample_weight))]
        while len(parts) > 1:  # a balanced tree: no worker receives every partial result
            paired = [merge(a, b) for a, b in zip(parts[::2], parts[1::2])]
            parts = paired + ([parts[-1]] if len(parts) % 2 else [])
        (total,) = dask.compute(parts[0])
        if self.verbose:
            print(f"[dask] reduction over {len(self.X.chunks[0])} blocks in "
                  f"{time.perf_counter() - start:.2f} s", flush=True)
        return total

    def iter_chunks(self):
        import dask

        for xb, yb, wb in zip(self.X.to_delayed().ravel(), self._blocks(self.y),
                              self._blocks(self.sample_weight)):
            yield dask.compute(xb, yb, wb)

    def head(self, n_rows, random_state=None):
        from .datasets import random_rows

        rows = random_rows(self.X.shape[0], n_rows, random_state)
        X = self.X[rows].compute()
        y = None if self.y is None else np.asarray(self.y[rows].compute())
        return X, y

    @property
    def n_rows(self):
        return int(self.X.shape[0])

    def classes(self):
        import dask.array as da

        if self.y is None:
            raise ValueError("A classifier needs labels: pass y.")
        return np.asarray(da.unique(self.y).compute())


def row_source(X, y=None, sample_weight=None, *, verbose=0):
    """The :class:`RowSource` for ``X`` when it is chunked, else None.

    ``X`` is chunked when it is a dask array or a
    :class:`kernelscale.datasets.ChunkedDataset` (whose chunks carry the labels,
    so ``y`` must then be None).
    """
    from .datasets import ChunkedDataset

    if isinstance(X, RowSource):
        return X
    if isinstance(X, ChunkedDataset):
        if y is not None or sample_weight is not None:
            raise ValueError("A ChunkedDataset carries its own labels: call fit(dataset) "
                             "without y and sample_weight.")
        return StreamSource(X)
    if is_dask_array(X):
        return DaskSource(X, y, sample_weight, verbose=verbose)
    return None


def _apply_rows(X, estimator, method):
    return np.asarray(getattr(estimator, method)(X))


def dask_map_rows(estimator, method, X, n_columns=None, dtype=np.float64):
    """``estimator.method`` applied to each row block of dask array ``X``, lazily.

    The estimator becomes one graph key (sent to each worker once). Returns a
    dask array of shape (n_samples,) when ``n_columns`` is None, else
    (n_samples, n_columns).
    """
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array, got {X.ndim} dimensions.")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    client = _client()
    if client is not None:
        set_worker_blas_threads(client)
    shared = _share(client, estimator)
    if n_columns is None:
        return X.map_blocks(_apply_rows, shared, method, drop_axis=1, dtype=dtype,
                            meta=np.empty((0,), dtype=dtype))
    return X.map_blocks(_apply_rows, shared, method, chunks=(X.chunks[0], (n_columns,)),
                        dtype=dtype, meta=np.empty((0, 0), dtype=dtype))
