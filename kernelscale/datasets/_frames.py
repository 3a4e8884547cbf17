"""Delimited text read by pandas (its C parser), with the located one-line errors a user
needs.

pandas reads a CSV in a fraction of a second where a reader in Python takes many (60,000
rows x 117 columns: 0.2 s against 11 s); what it says of a bad file is a parser's, or a
traceback. This module keeps pandas' speed and says, in one line, what is wrong and where:
a binary file, a corrupt compressed one, ragged rows (the line), a header alone, a cell
that is not a number in a column of numbers (its line and column), an infinity. Text that
is not UTF-8 is read as Latin-1 (Windows' tables), with a warning.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["MISSING_MARKERS", "read_frame", "text_encoding", "located_numbers", "NA_VALUES",
           "parse_errors", "numeric_block", "label_cells"]

#: cells read as missing (compared without case or surrounding blanks)
MISSING_MARKERS = frozenset({"", "na", "n/a", "nan", "null", "none", "?"})
#: the markers as pandas' parser compares them (exact: every case a table writes)
NA_VALUES = sorted({v for m in MISSING_MARKERS for v in (m, m.upper(), m.title())})
#: bytes of a file's start read to tell text from binary
_SNIFF_BYTES = 8192
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def _start(path):
    """The first bytes of the file's text (decompressed by its suffix), or one line saying
    why they cannot be read."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
                if len(names) != 1:
                    raise ValueError(f"{path}: a zip archive of {len(names)} files; give one "
                                     "holding a single CSV.")
                with archive.open(names[0]) as raw:
                    return raw.read(_SNIFF_BYTES)
        with _OPENERS.get(suffix, open)(path, "rb") as raw:
            return raw.read(_SNIFF_BYTES)
    except (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile) as exc:
        kind = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zip": "zip"}.get(suffix, "")
        what = f"a corrupt {kind} file" if kind else "unreadable"
        raise ValueError(f"{path}: cannot be read: {what} ({exc}).") from None


def text_encoding(path):
    """``"utf-8"`` or, for text that is not UTF-8, ``"latin-1"``; one line for a file that
    is not text at all (NUL bytes, or mostly control characters)."""
    start = _start(path)
    if b"\0" in start:
        raise ValueError(f"{path}: not a text / CSV file (its first bytes are binary); give a "
                         "delimited text, svmlight, .npy or .npz file.")
    try:
        text, encoding = start.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        # a cut multi-byte character at the sniff's end is still UTF-8
        if exc.start >= len(start) - 3:
            text, encoding = start[:exc.start].decode("utf-8"), "utf-8"
        else:
            text, encoding = start.decode("latin-1"), "latin-1"
    control = sum(1 for c in text if ord(c) < 32 and c not in "\t\n\r\f\v")
    if control > max(1, len(text) // 20):
        raise ValueError(f"{path}: not a text / CSV file (its first bytes are binary); give a "
                         "delimited text, svmlight, .npy or .npz file.")
    return encoding


_RAGGED = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def read_frame(path, *, delimiter=",", header=True, chunksize=None, usecols=None):
    """The CSV at ``path`` as a DataFrame (or an iterator of them, ``chunksize`` rows each).

    Missing markers (:data:`MISSING_MARKERS`, any case) are NaN; compression follows the
    suffix (.gz, .bz2, .xz, .zip). Errors are one line naming the file and the line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("a,b\\n1,NA\\n2,x\\n")
    >>> read_frame(path).shape
    (2, 2)
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No CSV file at {str(path)!r}.")
    encoding = text_encoding(path)
    if encoding != "utf-8":
        warnings.warn(f"{path} is not UTF-8 text: read as Latin-1.", UserWarning,
                      stacklevel=3)
    try:
        return pd.read_csv(path, sep=delimiter, header=0 if header else None,
                           na_values=NA_VALUES, keep_default_na=False, skipinitialspace=True,
                           encoding=encoding, low_memory=False, chunksize=chunksize,
                           usecols=usecols, skip_blank_lines=True, engine="c")
    except Exception as exc:  # noqa: BLE001 (every parser error is one line)
        raise parse_errors(exc, path) from None


def parse_errors(exc, path):
    """The one-line error of a pandas parsing failure (raise it), or ``exc`` itself where
    it is not one."""
    if isinstance(exc, pd.errors.EmptyDataError):
        return ValueError(f"{path}: the file is empty.")
    if isinstance(exc, pd.errors.ParserError):
        ragged = _RAGGED.search(str(exc))
        if ragged:
            expected, line, saw = ragged.groups()
            return ValueError(f"{path}: line {line} has {saw} fields, the first line "
                              f"{expected}; every row needs the same number of columns.")
        return ValueError(f"{path}: cannot be read as delimited text ({exc}).")
    if isinstance(exc, (EOFError, OSError, zlib.error, lzma.LZMAError, UnicodeError)):
        return ValueError(f"{path}: cannot be read ({type(exc).__name__}: {exc}).")
    return exc


def numeric_block(frame, path, first_line, names=None, *, delimiter=",", width=None):
    """A frame of numbers as a float64 array, or one line naming the line and column of a
    cell that is not a finite number (missing cells included; a line with fewer fields
    than the first, which pandas reads as missing cells, is said as such)."""
    located_numbers(frame, path, first_line, strict=True, names=names)
    X = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        row, k = int(bad[0][0]), int(bad[0][1])
        line = first_line + row
        fields = _fields_on(path, line, delimiter)
        if width is not None and fields is not None and fields != width:
            raise ValueError(f"{path}, line {line}: {fields} fields where the first line has "
                             f"{width}; every row needs the same number of columns.")
        column = names[k] if names is not None else frame.columns[k]
        raise ValueError(f"{path}, line {line}, column {column}: {str(X[row, k])!r} is NaN "
                         "or infinite (or missing); remove or impute those values.")
    return X


def label_cells(column, path, first_line, *, delimiter=",", width=None):
    """A label column's cells as stripped text, or one line naming a row without its label
    (a line with fewer fields than the first, said as such)."""
    gone = np.flatnonzero(column.isna().to_numpy())
    if gone.size:
        line = first_line + int(gone[0])
        fields = _fields_on(path, line, delimiter)
        if width is not None and fields is not None and fields != width:
            raise ValueError(f"{path}, line {line}: {fields} fields where the first line has "
                             f"{width}; every row needs the same number of columns.")
        raise ValueError(f"{path}, line {line}: the label is missing; drop the rows without "
                         "one.")
    return column.astype(str).str.strip().to_numpy()


def _fields_on(path, line, delimiter):
    """The number of fields on the file's line ``line`` (1-based), or None."""
    import csv
    import io

    path = Path(path)
    try:
        raw = _OPENERS.get(path.suffix.lower(), open)(path, "rb")
        with io.TextIOWrapper(raw, encoding=text_encoding(path), errors="replace") as handle:
            for number, fields in enumerate(csv.reader(handle, delimiter=delimiter), start=1):
                if number == line:
                    return len(fields)
    except (OSError, ValueError, csv.Error):
        return None
    return None


def located_numbers(frame, path, first_line, *, strict=False, names=None):
    """Refuse, naming the line and column, a column of numbers with a cell that is not one
    (at most half of its present cells are not: a data error, not a text column) or an
    infinite cell. ``strict``: every column must be numbers.

    ``first_line``: the file's line number of the frame's first row (2 under a header);
    ``names``: the columns' names in the messages (the frame's own where None).
    """
    for j, key in enumerate(frame.columns):
        column = frame[key]
        name = key if names is None else names[j]
        if pd.api.types.is_numeric_dtype(column.dtype) and \
                not pd.api.types.is_bool_dtype(column.dtype):
            values = column.to_numpy(dtype=np.float64, na_value=np.nan)
            infinite = np.flatnonzero(np.isinf(values))
            if infinite.size:
                i = int(infinite[0])
                raise ValueError(f"{path}: line {first_line + i}, column {name}: "
                                 f"{str(values[i])!r} is infinite; remove or impute it.")
            continue
        present = column.notna().to_numpy()
        numbers = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(present & np.isnan(numbers))
        if bad.size and (strict or 2 * bad.size <= present.sum()):
            i = int(bad[0])
            raise ValueError(f"{path}: line {first_line + i}, column {name}: "
                             f"{str(column.iloc[i]).strip()!r} is not a number"
                             + ("." if strict else " (the column's other cells are; mark a "
                                "missing cell NA, or drop the column)."))
