"""File parsers: delimited text, NumPy .npz, MNIST's IDX files, and what they share.

Every parser reports a malformed file with the line (and column) at fault.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import zipfile
from pathlib import Path

import numpy as np

from ._frames import label_cells, numeric_block, read_frame, text_encoding

__all__ = [
    "load_csv", "load_npz", "load_mnist_idx", "guess_format", "open_text", "is_number",
    "label_position", "tidy_labels", "FORMATS", "sniff_delimiter", "check_columns",
    "check_finite_array",
]


def open_text(path):
    """Open a text file, decompressing .gz / .bz2 by suffix.

    A file whose first bytes are not text (an image, an archive, random bytes), or a
    corrupt compressed one, is refused in one line, instead of failing later as a
    malformed row; text that is not UTF-8 is read as Latin-1.
    """
    path = Path(path)
    encoding = text_encoding(path)
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding=encoding, errors="replace")
    if path.suffix == ".bz2":
        return io.TextIOWrapper(bz2.open(path, "rb"), encoding=encoding, errors="replace")
    return open(path, encoding=encoding, errors="replace", newline="")


def is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_csv(path, label_column=-1, *, header="infer", delimiter=",", dtype=np.float64):
    """Load a delimited text file (optionally .gz / .bz2) of numeric features and a label.

    Parameters
    ----------
    path : str or Path
        The file.
    label_column : int, str or None, default=-1
        Position (negative counts from the end) or header name of the label
        column; None when the file has no labels.
    header : {"infer", True, False}, default="infer"
        Whether the first line names the columns. "infer" treats it as a header
        when one of its feature fields is not a number.
    delimiter : str, default=","
        Field separator.
    dtype : numpy dtype, default=np.float64
        dtype of the feature matrix.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None
        Integer labels when every label is an integer, float labels when every
        label is a number, strings otherwise; None when ``label_column`` is None.

    Raises
    ------
    ValueError
        Naming the line and column of a field that is not a number, or of a row
        with the wrong number of fields.

    Examples
    --------
    >>> import tempfile, os
    >>> from kernelscale.datasets import load_csv
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "toy.csv")
    ...     _ = open(p, "w").write("x1,x2,label\\n0.5,1,cat\\n2,0,dog\\n")
    ...     X, y = load_csv(p, label_column="label")
    >>> X.shape, y.tolist()
    ((2, 2), ['cat', 'dog'])
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No CSV file at {str(path)!r}.")
    if header not in ("infer", True, False):
        raise ValueError(f"header must be 'infer', True or False, got {header!r}.")
    try:
        with open_text(path) as fh:
            first = next((f for f in csv.reader(fh, delimiter=delimiter)
                          if f and any(c.strip() for c in f)), None)
    except (UnicodeError, csv.Error, EOFError, OSError) as exc:
        raise ValueError(f"{path}: cannot be read as delimited text ({exc}).") from exc
    if first is None:
        raise ValueError(f"{path}: no data rows.")
    width = len(first)
    check_columns(first, delimiter, path)
    if isinstance(label_column, str) and header is not True and all(is_number(f) for f in first):
        raise ValueError(
            f"{path}: label_column={label_column!r} names a column but the file has no header "
            f"line (its first line is data: {delimiter.join(first)[:50]!r}); give the label "
            "column by position (e.g. -1 for the last).")
    label_at = label_position(label_column, first, width, path)
    feature_fields = [f for k, f in enumerate(first) if k != label_at]
    is_header = header is True or (header == "infer"
                                   and not all(is_number(f) for f in feature_fields))
    frame = read_frame(path, delimiter=delimiter, header=is_header)
    if frame.empty:
        raise ValueError(f"{path}: no data rows.")
    if frame.shape[1] != width:
        raise ValueError(f"{path}, line 2: {frame.shape[1]} fields where the first line has "
                         f"{width}; every row needs the same number of columns.")
    features = [k for k in range(width) if k != label_at]
    names = [first[k].strip() if is_header else k + 1 for k in features]
    X = numeric_block(frame.iloc[:, features], path, 2 if is_header else 1, names,
                      delimiter=delimiter, width=width)
    if label_at is None:
        return X.astype(dtype, copy=False), None
    labels = label_cells(frame.iloc[:, label_at], path, 2 if is_header else 1,
                         delimiter=delimiter, width=width)
    return X.astype(dtype, copy=False), tidy_labels(labels)


def sniff_delimiter(path):
    """The field separator of a delimited text file: ``,``, ``;``, tab or ``|``.

    Read off its first lines (csv.Sniffer); a comma when they do not tell.

    Examples
    --------
    >>> import tempfile, os
    >>> from kernelscale.datasets._files import sniff_delimiter
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "semi.csv")
    ...     _ = open(p, "w").write("a;b;y\\n1;2;0\\n3;4;1\\n")
    ...     sniff_delimiter(p)
    ';'
    """
    try:
        with open_text(path) as fh:
            sample = "".join(line for _, line in zip(range(20), fh))
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except (csv.Error, OSError, EOFError, UnicodeError):
        return ","


def check_columns(fields, delimiter, path):
    """Refuse a file whose lines are one field: the delimiter was not the file's."""
    if len(fields) == 1:
        line = fields[0]
        other = next((d for d in (";", "\t", "|", ",") if d != delimiter and d in line), None)
        hint = f"; it looks separated by {other!r}" if other else ""
        raise ValueError(f"{path}: every field of its first line is one column when split by "
                         f"{delimiter!r}{hint}; pass the separator (--delimiter, or delimiter=) "
                         "or check the format.")


def label_position(label_column, fields, width, path):
    if label_column is None:
        return None
    if isinstance(label_column, str):
        names = [f.strip() for f in fields]
        if label_column not in names:
            raise ValueError(f"{path}: no column named {label_column!r} in the header "
                             f"({', '.join(names[:10])}{', ...' if width > 10 else ''}).")
        return names.index(label_column)
    position = int(label_column)
    if not -width <= position < width:
        raise ValueError(f"{path}: label_column={label_column} is out of range for "
                         f"{width} columns.")
    return position % width


def tidy_labels(y):
    """Labels as integers when they all are, else floats when numbers, else strings."""
    y = np.asarray(y)
    if y.dtype.kind == "O":  # text cells as objects (pandas' columns)
        y = y.astype(str)
    if y.dtype.kind in "US":
        if not all(is_number(v) for v in y):
            return y.astype(str)
        y = y.astype(np.float64)
    if y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        return y.astype(np.int64)
    return y


def load_npz(path):
    """Load ``X`` (and ``y`` when present) from a NumPy ``.npz`` file.

    Parameters
    ----------
    path : str or Path
        An archive written by ``np.savez(path, X=X, y=y)``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No .npz file at {str(path)!r}.")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not a valid .npz archive (not a zip file); write it with "
                         "np.savez(path, X=X, y=y).")
    try:
        with np.load(path, allow_pickle=False) as archive:
            if "X" not in archive:
                raise ValueError(f"{path}: no array named 'X' (found "
                                 f"{', '.join(archive.files) or 'none'}); write it with "
                                 "np.savez(path, X=X, y=y).")
            X = archive["X"]
            y = archive["y"] if "y" in archive else None
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: not a valid .npz archive ({exc}).") from exc
    if X.ndim != 2:
        raise ValueError(f"{path}: X must be 2-D, got shape {X.shape}.")
    check_finite_array(X, path)
    if y is not None and len(y) != len(X):
        raise ValueError(f"{path}: X has {len(X)} rows but y has {len(y)} labels.")
    return X, y


_IDX_MAGIC = {2049: 1, 2051: 3}  # labels: 1-D, images: 3-D (count, rows, cols); uint8


def _read_idx(path, expected_magic):
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No IDX file at {str(path)!r}.")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            raw = fh.read()
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: cannot be read as {'gzip' if opener is gzip.open else 'a file'} "
                         f"({exc}).") from exc
    magic = int.from_bytes(raw[:4], "big") if len(raw) >= 4 else -1
    if magic != expected_magic:
        raise ValueError(
            f"{path}: wrong IDX magic number {magic} (expected {expected_magic}: "
            f"{'labels' if expected_magic == 2049 else 'images'}); is this the right file?"
        )
    n_dims = _IDX_MAGIC[magic]
    header = 4 + 4 * n_dims
    dims = [int.from_bytes(raw[4 + 4 * k: 8 + 4 * k], "big") for k in range(n_dims)]
    size = int(np.prod(dims))
    if len(raw) != header + size:
        raise ValueError(f"{path}: the header announces {dims} ({size} bytes of data) but the "
                         f"file holds {len(raw) - header}; the file is truncated or corrupt.")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims)


def load_mnist_idx(images, labels):
    """Load MNIST-format IDX files (optionally gzipped) as pixel rows in [0, 1] and labels.

    Parameters
    ----------
    images : str or Path
        IDX3 image file (magic 2051).
    labels : str or Path
        IDX1 label file (magic 2049).

    Returns
    -------
    X : ndarray of shape (n_images, rows * cols), float32
        Pixels divided by 255.
    y : ndarray of shape (n_images,), int64
    """
    pixels = _read_idx(images, 2051)
    y = _read_idx(labels, 2049).astype(np.int64)
    if len(pixels) != len(y):
        raise ValueError(f"{images} holds {len(pixels)} images but {labels} holds {len(y)} "
                         "labels; they must come from the same set.")
    return pixels.reshape(len(pixels), -1).astype(np.float32) / np.float32(255.0), y


FORMATS = ("auto", "svmlight", "csv", "npz", "npy")


def guess_format(path):
    """The data format :func:`load_data` reads ``path`` as: "csv", "npz", "npy" or "svmlight".

    Examples
    --------
    >>> from kernelscale.datasets import guess_format
    >>> guess_format("train.csv.gz"), guess_format("a9a.t"), guess_format("x.npy")
    ('csv', 'svmlight', 'npy')
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2"):
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    if last in (".csv", ".tsv"):
        return "csv"
    if last in (".npz", ".npy"):
        return last[1:]
    return "svmlight"


def check_finite_array(X, where, first_row=0):
    """Raise naming the row and column of the first NaN / infinite entry of numeric ``X``."""
    X = np.asarray(X)
    if X.dtype.kind != "f":
        return
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        row, column = bad[0]
        raise ValueError(f"{where}: row {first_row + int(row)}, column {int(column)} is "
                         f"{X[row, column]} (NaN or infinity); remove or impute those values.")
