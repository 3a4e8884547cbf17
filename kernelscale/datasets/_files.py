"""File parsers: svmlight / LIBSVM, delimited text, NumPy .npz and MNIST's IDX files.

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
from sklearn.datasets import load_svmlight_file

from .._validation import csr_int32

__all__ = [
    "load_svmlight", "load_csv", "load_npz", "load_mnist_idx", "guess_format", "open_text",
    "svmlight_line_problem", "is_number", "label_position", "tidy_labels", "FORMATS",
]


def load_svmlight(path, n_features=None, *, dtype=np.float64):
    """Load an svmlight / LIBSVM file (optionally .gz or .bz2) as CSR + labels.

    Parameters
    ----------
    path : str or Path
        The file.
    n_features : int, default=None
        Number of columns; None infers it from the largest index present (pass
        it for a test split whose last columns happen to be empty).
    dtype : numpy dtype, default=np.float64
        dtype of the feature matrix.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> import tempfile, os
    >>> from kernelscale.datasets import load_svmlight
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "toy.svm")
    ...     _ = open(p, "w").write("+1 1:0.5 3:1\\n-1 2:2\\n")
    ...     X, y = load_svmlight(p)
    >>> X.shape, y.tolist()
    ((2, 3), [1.0, -1.0])
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No svmlight file at {str(path)!r}.")
    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, dtype=dtype)
    except (ValueError, OSError, EOFError) as exc:
        where = first_bad_svmlight_line(path)
        raise ValueError(f"{path}: not a valid svmlight file"
                         f"{': ' + where if where else ''} ({exc}).") from exc
    return csr_int32(X.tocsr()), y


def open_text(path):
    """Open a text file, decompressing .gz / .bz2 by suffix."""
    path = Path(path)
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    if path.suffix == ".bz2":
        return io.TextIOWrapper(bz2.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace", newline="")


def first_bad_svmlight_line(path):
    """Describe the first line sklearn's parser rejects, for an error message (or None)."""
    try:
        with open_text(path) as fh:
            for number, line in enumerate(fh, start=1):
                reason = svmlight_line_problem(line)
                if reason:
                    text = line.strip()
                    return f"line {number}: {reason} in {text[:60]!r}"
    except (OSError, EOFError, ValueError) as exc:
        return f"cannot be read ({exc})"
    return None


def svmlight_line_problem(line):
    tokens = line.split("#", 1)[0].split()
    if not tokens:
        return None
    try:
        float(tokens[0])
    except ValueError:
        return f"label {tokens[0]!r} is not a number"
    last = -1
    for token in tokens[1:]:
        index, sep, value = token.partition(":")
        if not sep:
            return f"{token!r} is not of the form index:value"
        if index == "qid":
            continue
        try:
            index, value = int(index), float(value)
        except ValueError:
            return f"{token!r} is not of the form integer-index:number"
        if index <= last:
            return "feature indices are not sorted and unique"
        last = index
    return None


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
    rows, labels, names, width, label_at = [], [], None, None, None
    try:
        with open_text(path) as fh:
            for number, fields in enumerate(csv.reader(fh, delimiter=delimiter), start=1):
                if not fields or all(not f.strip() for f in fields):
                    continue
                if width is None:
                    width = len(fields)
                    label_at = label_position(label_column, fields, width, path)
                    feature_fields = [f for k, f in enumerate(fields) if k != label_at]
                    is_header = header is True or (
                        header == "infer" and not all(is_number(f) for f in feature_fields))
                    if isinstance(label_column, str) and not is_header:
                        raise ValueError(f"{path}: label_column={label_column!r} names a column "
                                         "but the file has no header line.")
                    if is_header:
                        names = [f.strip() for f in fields]
                        continue
                if len(fields) != width:
                    raise ValueError(f"{path}, line {number}: {len(fields)} fields where the "
                                     f"first line has {width}; every row needs the same "
                                     "number of columns.")
                values = []
                for k, field in enumerate(fields):
                    if k == label_at:
                        labels.append(field.strip())
                        continue
                    try:
                        values.append(float(field))
                    except ValueError:
                        column = names[k] if names else k + 1
                        raise ValueError(f"{path}, line {number}, column {column}: "
                                         f"{field!r} is not a number.") from None
                rows.append(values)
    except (UnicodeError, csv.Error, EOFError, OSError) as exc:
        raise ValueError(f"{path}: cannot be read as delimited text ({exc}).") from exc
    if not rows:
        raise ValueError(f"{path}: no data rows.")
    X = np.asarray(rows, dtype=dtype)
    return X, (None if label_at is None else tidy_labels(np.asarray(labels)))


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
