"""Data: file parsers, the named real data sets, synthetic problems, chunked readers.

Real data are never shipped with the package: loaders take a path, or find the
named data sets under a data directory (``data_dir=``, the ``KERNELSCALE_DATA``
environment variable, or ``../shared/datasets`` beside the project when present).
Data sets larger than memory are read as a stream of row chunks
(:func:`open_chunks`), which the estimators' ``fit`` accepts.

Modules: ``_files`` (svmlight, CSV, .npz and IDX parsers), ``_named`` (a9a,
MNIST-10k, :func:`load_data`), ``_table`` (a CSV by named columns, with text and
missing cells: :func:`load_table`), ``_synthetic`` (generated problems), ``_chunks``
and ``_file_chunks`` (chunked data sets in memory and from files).
"""

from ._chunks import ArrayChunks, ChunkedDataset, NonlinearChunks, default_chunk_rows, random_rows
from ._encoder import TabularEncoder, is_frame, needs_encoding
from ._file_chunks import CsvChunks, NpyChunks, open_chunks
from ._files import (
    guess_format,
    load_csv,
    load_mnist_idx,
    load_npz,
    open_text,
    sniff_delimiter,
)
from ._named import (
    DATASETS,
    check_dataset,
    data_dir,
    load_a9a,
    load_data,
    load_dataset,
    load_mnist10k,
)
from ._svmlight import FeatureCountError, SvmlightChunks, load_svmlight
from ._synthetic import iter_nonlinear_chunks, make_nonlinear_problem, make_synthetic_problem
from ._table import MISSING_MARKERS, Table, has_header, load_table

__all__ = [
    "TabularEncoder", "is_frame", "needs_encoding",
    "DATASETS", "data_dir", "check_dataset", "FeatureCountError", "sniff_delimiter",
    "load_svmlight", "load_csv", "load_npz", "load_a9a",
    "load_mnist_idx", "load_mnist10k", "load_dataset", "load_data", "guess_format",
    "make_synthetic_problem", "make_nonlinear_problem", "iter_nonlinear_chunks",
    "ChunkedDataset", "ArrayChunks", "NpyChunks", "CsvChunks", "SvmlightChunks",
    "NonlinearChunks", "open_chunks", "default_chunk_rows", "random_rows",
    "Table", "load_table", "has_header", "MISSING_MARKERS", "open_text",
]
