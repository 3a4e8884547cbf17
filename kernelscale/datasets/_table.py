"""``load_table``: a CSV with a header as named columns, numeric or text, with missing cells.

Real CSVs mix numbers, dates, categories and "NA". pandas reads them
(:func:`._frames.read_frame`); this reader keeps every column by name, tells numeric
columns from text ones, marks missing cells and refuses, located, a cell that is not a
number in a column of numbers, so that a caller can select, drop and encode
(:class:`TabularEncoder`, as the command line does) instead of failing one column at a
time.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._files import is_number, label_position, open_text, tidy_labels
from ._frames import MISSING_MARKERS, located_numbers, read_frame

__all__ = ["Table", "load_table", "has_header", "MISSING_MARKERS"]


@dataclass
class Table:
    """A CSV's columns by name.

    Attributes
    ----------
    frame : DataFrame
        The feature columns, in the file's order (or the order asked for).
    y : ndarray or None
        The label column (integers, floats or strings; a missing label None where
        allowed), or None.
    label : str or None
        Its name.
    others : list of str
        The file's columns that are neither features nor the label.
    dropped : int
        Rows left out for a missing label (``drop_missing_labels``).
    """

    frame: pd.DataFrame
    y: object = None
    label: object = None
    others: list = field(default_factory=list)
    dropped: int = 0

    @property
    def names(self):
        return [str(c) for c in self.frame.columns]

    @property
    def kinds(self):
        """Each column's kind: "numeric" or "text"."""
        return ["numeric" if pd.api.types.is_numeric_dtype(self.frame[c].dtype)
                and not pd.api.types.is_bool_dtype(self.frame[c].dtype) else "text"
                for c in self.frame.columns]

    @property
    def n_rows(self):
        return len(self.frame)

    def missing(self):
        """``{name: count}`` of the columns with missing cells."""
        counts = self.frame.isna().sum()
        return {str(name): int(count) for name, count in counts.items() if count}

    def to_array(self):
        """The features: a float64 array when every column is numeric, else the DataFrame
        (the encoder reads it by its columns)."""
        if all(k == "numeric" for k in self.kinds):
            return self.frame.to_numpy(dtype=np.float64) if len(self.frame.columns) else \
                np.empty((self.n_rows, 0))
        return self.frame


def _listing(names):
    return ", ".join(names[:30]) + (f", ... ({len(names)} in all)" if len(names) > 30 else "")


def _check_names(asked, header, flag, path):
    unknown = [n for n in asked if n not in header]
    if unknown:
        raise ValueError(f"{flag}: {path} has no column {', '.join(map(repr, unknown))}; its "
                         f"columns: {_listing(header)}.")


def has_header(path, delimiter=","):
    """Whether the CSV's first line names its columns: a cell that is neither a number
    nor a missing marker (a first row of data with "NA" cells is data).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("1.5,NA,0\\n2.5,3,1\\n")
    >>> has_header(path)
    False
    """
    with open_text(path) as handle:
        first = next(csv.reader(handle, delimiter=delimiter), [])
    return any(not is_number(c) and c.strip().lower() not in MISSING_MARKERS for c in first)


def _header(path, delimiter):
    with open_text(path) as handle:
        first = next((r for r in csv.reader(handle, delimiter=delimiter)
                      if r and any(c.strip() for c in r)), None)
    if first is None:
        raise ValueError(f"{path}: the file is empty.")
    header = [c.strip() for c in first]
    if len(set(header)) != len(header):
        twice = sorted({n for n in header if header.count(n) > 1})
        raise ValueError(f"{path}: the header names {', '.join(map(repr, twice))} more than "
                         "once; give every column its own name.")
    return header


def load_table(path, *, label=-1, columns=None, drop_columns=(), delimiter=",",
               need_label=True, drop_missing_labels=False):
    """Read a CSV whose first line names its columns.

    Parameters
    ----------
    path : str or Path
        The file (optionally .gz / .bz2 / .xz / .zip).
    label : str, int or None, default=-1
        The label column: a name, a position (negative from the end), or None.
        A named label missing from the file is allowed with ``need_label=False``
        (data to predict).
    columns : list of str, default=None
        The feature columns to keep, in this order; None keeps all but the
        label and ``drop_columns``.
    drop_columns : list of str, default=()
        Columns to leave out.
    delimiter : str, default=","
    need_label : bool, default=True
        With False, missing label cells are rows to predict (``y`` holds None there).
    drop_missing_labels : bool, default=False
        Leave out the rows whose label is missing (``dropped`` counts them) instead of
        refusing them.

    Returns
    -------
    table : Table

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("Date,t,wind,y\\n2008-12-01,13.4,W,0\\n2008-12-02,NA,E,1\\n")
    >>> table = load_table(path, label="y", drop_columns=["Date"])
    >>> table.names, table.kinds, table.missing()
    (['t', 'wind'], ['numeric', 'text'], {'t': 1})
    """
    header = _header(path, delimiter)
    width = len(header)
    if isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        label = header[label_position(label, header, width, path)]
    if label is not None and label not in header:
        if need_label:
            _check_names([label], header, "--label-column", path)
        label = None
    drop = list(drop_columns or ())
    _check_names(drop, header, "--drop-columns", path)
    if columns is not None:
        _check_names(list(columns), header, "--columns", path)
        names = [c for c in columns if c != label and c not in drop]
    else:
        names = [c for c in header if c != label and c not in drop]
    frame = read_frame(path, delimiter=delimiter)
    frame.columns = header
    if frame.empty:
        raise ValueError(f"{path}: no data rows (only the header line).")
    features = frame[names]
    located_numbers(features, path, first_line=2)
    y, dropped = None, 0
    if label is not None:
        cells = frame[label]
        gone = cells.isna().to_numpy()
        if gone.any() and need_label and not drop_missing_labels:
            lines = np.flatnonzero(gone) + 2
            raise ValueError(f"{path}: the label column {label!r} is missing on "
                             f"{int(gone.sum())} rows (lines {', '.join(map(str, lines[:5]))}"
                             f"{', ...' if len(lines) > 5 else ''}); drop those rows "
                             "(--drop-missing-labels).")
        if gone.any() and drop_missing_labels:
            features, cells = features[~gone], cells[~gone]
            dropped, gone = int(gone.sum()), np.zeros(int((~gone).sum()), dtype=bool)
            if len(features) == 0:
                raise ValueError(f"{path}: the label column {label!r} is missing on every "
                                 "row.")
        present = cells[~gone].astype(str).str.strip().to_numpy()
        y = tidy_labels(present)
        if gone.any():  # rows to predict: their label is None
            full = np.empty(len(cells), dtype=object)
            full[~gone] = y
            full[gone] = None
            y = full
    others = [c for c in header if c not in names and c != label]
    return Table(frame=features.reset_index(drop=True), y=y, label=label, others=others,
                 dropped=dropped)
