"""Row sources: one interface over streamed chunks and dask arrays for the multi-pass solvers.

A solver that can be written as sums over rows (ridge statistics, a loss and
its gradient, ``K_nm^T K_nm v``) asks a source for
``map_reduce(func, shared)``: ``func(X_chunk, y_chunk, w_chunk, *shared)`` on
every chunk, the results added up. :class:`StreamSource` runs it chunk after
chunk in this process (memory bounded by one chunk); ``DaskSource`` runs it as
one task per row block on the active ``distributed`` client (or dask's local
scheduler) and adds the results by dask's tree reduction, the shared objects
(the fitted feature map, the current weights) sent to each worker once.

This layer sits directly above :mod:`kernelscale.datasets`. dask is optional:
nothing here imports it unless a dask array was passed in.
"""

from ._base import RowSource, StreamSource, add_results, is_dask_array
from ._dispatch import row_source

__all__ = ["RowSource", "StreamSource", "add_results", "is_dask_array", "row_source",
           "dask_map_rows", "dask_method", "DaskSource", "set_worker_blas_threads"]

_DASK_NAMES = ("dask_map_rows", "dask_method", "DaskSource", "set_worker_blas_threads")


def __getattr__(name):
    # the dask half is imported on first use, so that numpy users never load it
    if name in _DASK_NAMES:
        from . import _dask

        return getattr(_dask, name)
    raise AttributeError(f"module 'kernelscale.sources' has no attribute {name!r}")
