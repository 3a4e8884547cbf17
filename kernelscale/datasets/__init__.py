"""Data: the synthetic problems of the seeds, loaders for the real data sets, chunked readers.

Real data are never shipped with the package: loaders take a path, or find the
named data sets under a data directory (``data_dir=``, the ``KERNELSCALE_DATA``
environment variable, or ``../shared/datasets`` beside the project when present).
Data sets larger than memory are read as a stream of row chunks
(:func:`open_chunks`), which the estimators' ``fit`` accepts.
"""

from ._chunked import (
    ArrayChunks,
    ChunkedDataset,
    CsvChunks,
    NonlinearChunks,
    NpyChunks,
    SvmlightChunks,
    default_chunk_rows,
    open_chunks,
    random_rows,
)
from ._loaders import (
    DATASETS,
    data_dir,
    guess_format,
    iter_nonlinear_chunks,
    load_a9a,
    load_csv,
    load_data,
    load_dataset,
    load_mnist10k,
    load_mnist_idx,
    load_npz,
    load_svmlight,
    make_nonlinear_problem,
    make_seed000_problem,
)

__all__ = [
    "DATASETS", "data_dir", "load_svmlight", "load_csv", "load_npz", "load_a9a",
    "load_mnist_idx", "load_mnist10k", "load_dataset", "load_data", "guess_format",
    "make_seed000_problem", "make_nonlinear_problem", "iter_nonlinear_chunks",
    "ChunkedDataset", "ArrayChunks", "NpyChunks", "CsvChunks", "SvmlightChunks",
    "NonlinearChunks", "open_chunks", "default_chunk_rows", "random_rows",
]
