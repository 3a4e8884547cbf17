"""Chunked readers of files: 2-D ``.npy`` and delimited text, and ``open_chunks`` for any file."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ._chunks import ChunkedDataset, default_chunk_rows, random_rows
from ._files import (
    check_columns,
    check_finite_array,
    guess_format,
    is_number,
    label_position,
    open_text,
    sniff_delimiter,
    tidy_labels,
)
from ._frames import label_cells, numeric_block, parse_errors, read_frame
from ._svmlight import SvmlightChunks

__all__ = ["NpyChunks", "CsvChunks", "open_chunks"]


class NpyChunks(ChunkedDataset):
    """A 2-D ``.npy`` file read chunk by chunk; one column may hold the labels.

    Chunks are read with plain file reads (not a memory map, whose pages would
    count towards the process's resident memory until the whole file had been
    mapped in), so memory stays bounded by one chunk.

    Parameters
    ----------
    path : str or Path
    label_column : int or None, default=-1
        Column holding the labels (negative counts from the end); None: no labels.
    chunk_rows : int, default=None
        None sizes chunks from the memory budget (:func:`default_chunk_rows`).
    memory_budget : int, default=None
    """

    def __init__(self, path, label_column=-1, chunk_rows=None, memory_budget=None):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"No .npy file at {str(self.path)!r}.")
        shape, fortran, dtype, self._offset = self._header()
        if len(shape) != 2 or dtype.kind not in "fiub":
            raise ValueError(f"{self.path}: expected a 2-D numeric array, got shape "
                             f"{shape} of {dtype}.")
        if fortran:
            raise ValueError(f"{self.path}: the array is stored column-major (Fortran order), "
                             "which cannot be read by rows; save np.ascontiguousarray(array).")
        expected = self._offset + shape[0] * shape[1] * dtype.itemsize
        if self.path.stat().st_size < expected:
            raise ValueError(f"{self.path}: truncated .npy file ({self.path.stat().st_size} "
                             f"bytes, the header announces {expected}).")
        self.shape, self.file_dtype = shape, dtype
        width = shape[1]
        if isinstance(label_column, str):
            raise ValueError(f"{self.path}: a .npy file has no column names; give "
                             f"label_column as a position, not {label_column!r}.")
        self.label_at = label_position(label_column, None, width, self.path) \
            if label_column is not None else None
        self.has_labels = self.label_at is not None
        self.n_features = width - (1 if self.has_labels else 0)
        if self.n_features < 1:
            raise ValueError(f"{self.path}: no feature columns beside the label column.")
        self._columns = [k for k in range(width) if k != self.label_at]
        super().__init__(chunk_rows or default_chunk_rows(width, memory_budget))
        self._n_samples = shape[0]

    def _header(self):
        fmt = np.lib.format
        try:
            with open(self.path, "rb") as fh:
                version = fmt.read_magic(fh)
                reader = fmt.read_array_header_1_0 if version == (1, 0) \
                    else fmt.read_array_header_2_0
                shape, fortran, dtype = reader(fh)
                return shape, fortran, np.dtype(dtype), fh.tell()
        except (ValueError, OSError, EOFError) as exc:
            raise ValueError(f"{self.path}: not a valid .npy file ({exc}); write it with "
                             "np.save(path, array).") from exc

    def _describe(self):
        return repr(str(self.path))

    def sample(self, n_rows, random_state=None):
        """``n_rows`` rows drawn at random (all rows, in order, when there are fewer).

        They are read through a memory map that is closed again, touching only the
        pages that hold them: a file sorted by label still gives every class its
        share of landmarks.
        """
        rows = random_rows(self.shape[0], n_rows, random_state)
        array = np.load(self.path, mmap_mode="r")
        try:
            block = np.array(array[rows])
        finally:
            del array
        dtype = self.file_dtype if self.file_dtype.kind == "f" else np.float64
        X = np.ascontiguousarray(block[:, self._columns], dtype=dtype)
        y = None if self.label_at is None else tidy_labels(block[:, self.label_at])
        return X, y

    def _blocks(self, rows):
        width = self.shape[1]
        row_bytes = width * self.file_dtype.itemsize
        with open(self.path, "rb") as fh:
            for start in range(0, self.shape[0], rows):
                count = min(rows, self.shape[0] - start)
                fh.seek(self._offset + start * row_bytes)
                block = np.fromfile(fh, dtype=self.file_dtype, count=count * width)
                if block.size != count * width:
                    raise ValueError(f"{self.path}: truncated at row {start}.")
                yield block.reshape(count, width)

    def _chunks(self):
        dtype = self.file_dtype if self.file_dtype.kind == "f" else np.float64
        last = self.label_at is None or self.label_at == self.shape[1] - 1
        for k, block in enumerate(self._blocks(self.chunk_rows)):
            if last:
                X = np.ascontiguousarray(block[:, :self.n_features], dtype=dtype)
            else:
                X = np.ascontiguousarray(block[:, self._columns], dtype=dtype)
            check_finite_array(X, self.path, first_row=k * self.chunk_rows)
            y = None if self.label_at is None else tidy_labels(block[:, self.label_at])
            yield X, y

    def classes(self):
        if self._classes is None and self.has_labels:
            seen = None
            for block in self._blocks(self.chunk_rows):
                found = np.unique(block[:, self.label_at])
                seen = found if seen is None else np.union1d(seen, found)
            self._classes = tidy_labels(seen)
        return super().classes()


class CsvChunks(ChunkedDataset):
    """A delimited text file (optionally .gz / .bz2) read ``chunk_rows`` lines at a time.

    Parameters
    ----------
    path : str or Path
    label_column : int, str or None, default=-1
        As in :func:`load_csv`.
    delimiter : str, default=","
    header : {"infer", True, False}, default="infer"
    chunk_rows : int, default=None
        None sizes chunks from the memory budget.
    memory_budget : int, default=None
    """

    def __init__(self, path, label_column=-1, *, delimiter=",", header="infer",
                 chunk_rows=None, memory_budget=None):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"No CSV file at {str(self.path)!r}.")
        if header not in ("infer", True, False):
            raise ValueError(f"header must be 'infer', True or False, got {header!r}.")
        self.delimiter, self.header, self.label_column = delimiter, header, label_column
        first = self._first_line()
        if first is None:
            raise ValueError(f"{self.path}: no data rows.")
        width = len(first)
        check_columns(first, delimiter, self.path)
        if isinstance(label_column, str) and header is not True \
                and all(is_number(f) for f in first):
            raise ValueError(f"{self.path}: label_column={label_column!r} names a column but the "
                             f"file has no header line (its first line is data: "
                             f"{delimiter.join(first)[:50]!r}); give the label column by "
                             "position (e.g. -1 for the last).")
        self.label_at = label_position(label_column, first, width, self.path)
        features = [f for k, f in enumerate(first) if k != self.label_at]
        self.skip_header = header is True or (
            header == "infer" and not all(is_number(f) for f in features))
        self.names = [f.strip() for f in first] if self.skip_header else None
        self.width = width
        self.has_labels = self.label_at is not None
        self.n_features = width - (1 if self.has_labels else 0)
        self._label_kind = None
        super().__init__(chunk_rows or default_chunk_rows(width, memory_budget))

    def _describe(self):
        return repr(str(self.path))

    def _rows(self):
        with open_text(self.path) as fh:
            for number, fields in enumerate(csv.reader(fh, delimiter=self.delimiter), start=1):
                if fields and any(f.strip() for f in fields):
                    yield number, fields

    def _first_line(self):
        try:
            for _, fields in self._rows():
                return fields
        except (UnicodeError, csv.Error, EOFError, OSError) as exc:
            raise ValueError(f"{self.path}: cannot be read as delimited text ({exc}).") from exc
        return None

    def _chunks(self):
        # pandas' C parser, chunk by chunk; its errors said as one line, located
        reader = read_frame(self.path, delimiter=self.delimiter, header=self.skip_header,
                            chunksize=self.chunk_rows)
        line = 2 if self.skip_header else 1
        features = [k for k in range(self.width) if k != self.label_at]
        names = [self.names[k] if self.names else k + 1 for k in features]
        with reader:
            while True:
                try:
                    frame = next(reader)
                except StopIteration:
                    break
                except Exception as exc:  # noqa: BLE001 (a parser error is one line)
                    raise parse_errors(exc, self.path) from None
                if frame.shape[1] != self.width:
                    raise ValueError(f"{self.path}, line {line}: {frame.shape[1]} fields where "
                                     f"the first line has {self.width}; every row needs the "
                                     "same number of columns.")
                X = numeric_block(frame.iloc[:, features], self.path, line, names,
                                  delimiter=self.delimiter, width=self.width)
                y = None
                if self.has_labels:
                    raw = label_cells(frame.iloc[:, self.label_at], self.path, line,
                                      delimiter=self.delimiter, width=self.width)
                    y = self._labels(raw, [line, line + len(frame) - 1])
                line += len(frame)
                yield X, y

    def _labels(self, raw, numbers):
        y = tidy_labels(raw)
        kind = y.dtype.kind
        if self._label_kind is None:
            self._label_kind = kind
        elif kind != self._label_kind:
            order = "iuf"  # integers widen to floats; strings do not mix with numbers
            if kind in order and self._label_kind in order:
                y = y.astype(np.float64 if "f" in (kind, self._label_kind) else np.int64)
            else:
                raise ValueError(
                    f"{self.path}, lines {numbers[0]}-{numbers[-1]}: labels are "
                    f"{'text' if kind in 'US' else 'numbers'} here but were "
                    f"{'text' if self._label_kind in 'US' else 'numbers'} in earlier lines.")
        return y


def open_chunks(path, *, format="auto", chunk_rows=None, label_column=-1, n_features=None,
                delimiter=None, memory_budget=None):
    """Open a data file as a :class:`ChunkedDataset` (for streaming fits).

    Parameters
    ----------
    path : str or Path
    format : {"auto", "svmlight", "csv", "npy"}, default="auto"
        "auto" decides by suffix: ``.npy`` memory-mapped NumPy, ``.csv`` /
        ``.tsv`` text, anything else svmlight (text optionally ``.gz`` / ``.bz2``).
    chunk_rows : int, default=None
        Rows per chunk; None sizes chunks from ``memory_budget``.
    label_column : int, str or None, default=-1
        Label column of a CSV or ``.npy`` file.
    n_features : int, default=None
        Columns of an svmlight file.
    delimiter : str, default=None
        CSV separator; None means "," (tab for ``.tsv``).
    memory_budget : int, default=None

    Returns
    -------
    data : ChunkedDataset

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from kernelscale.datasets import open_chunks
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "data.npy")
    ...     np.save(path, np.column_stack([np.zeros((5, 2)), [0, 1, 0, 1, 1]]))
    ...     data = open_chunks(path, chunk_rows=2)
    ...     [(X.shape, y.tolist()) for X, y in data]
    [((2, 2), [0, 1]), ((2, 2), [0, 1]), ((1, 2), [1])]
    """
    formats = ("auto", "svmlight", "csv", "npy")
    if format not in formats:
        raise ValueError(f"Unknown chunked format {format!r}; choose from {', '.join(formats)}.")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No such file: {str(path)!r}.")
    suffixes = [s.lower() for s in path.suffixes]
    kind = format
    if kind == "auto":
        kind = guess_format(path)
    if kind == "npz":
        raise ValueError(f"{path}: .npz archives cannot be streamed (they are compressed "
                         "zip members); save X and y side by side with "
                         "np.save(path, np.column_stack([X, y])) and stream the .npy file.")
    if kind == "npy":
        return NpyChunks(path, label_column, chunk_rows, memory_budget)
    if kind == "csv":
        if delimiter is None:
            delimiter = "\t" if ".tsv" in suffixes else sniff_delimiter(path)
        return CsvChunks(path, label_column, delimiter=delimiter, chunk_rows=chunk_rows,
                         memory_budget=memory_budget)
    return SvmlightChunks(path, n_features, chunk_rows or 100_000)
