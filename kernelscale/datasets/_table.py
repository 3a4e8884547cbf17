"""``load_table``: a CSV with a header as named columns, numeric or text, with missing cells.

Real CSVs mix numbers, dates, categories and "NA". :func:`load_csv` reads numeric
matrices fast and refuses anything else at its first bad cell; this reader keeps
every column by name, tells numeric columns from text ones and marks missing
cells, so that a caller can select, drop, encode and impute (the command line
does, with scikit-learn's ``ColumnTransformer``) instead of failing one column
at a time.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field

import numpy as np

from ._files import is_number, label_position, open_text, tidy_labels

__all__ = ["Table", "load_table", "has_header", "MISSING_MARKERS"]

#: cells read as missing (compared without case or surrounding blanks)
MISSING_MARKERS = frozenset({"", "na", "n/a", "nan", "null", "none", "?"})


@dataclass
class Table:
    """A CSV's columns by name.

    Attributes
    ----------
    names : list of str
        The feature columns, in the file's order (or the order asked for).
    columns : list of ndarray
        One per name: float64 with NaN where missing (``kinds[j] == "numeric"``),
        or object holding str and NaN where missing ("text").
    kinds : list of str
    y : ndarray or None
        The label column (integers, floats or strings), or None.
    label : str or None
        Its name.
    others : list of str
        The file's columns that are neither features nor the label.
    """

    names: list
    columns: list
    kinds: list
    y: object = None
    label: object = None
    others: list = field(default_factory=list)

    @property
    def n_rows(self):
        return len(self.columns[0]) if self.columns else (0 if self.y is None else len(self.y))

    def missing(self):
        """``{name: count}`` of the columns with missing cells."""
        out = {}
        for name, column, kind in zip(self.names, self.columns, self.kinds):
            count = int(np.isnan(column).sum()) if kind == "numeric" else \
                int(sum(1 for v in column if not isinstance(v, str)))
            if count:
                out[name] = count
        return out

    def to_array(self):
        """The features as one array: float64 when every column is numeric, else object."""
        if all(k == "numeric" for k in self.kinds):
            return np.column_stack(self.columns) if self.columns else \
                np.empty((self.n_rows, 0))
        out = np.empty((self.n_rows, len(self.names)), dtype=object)
        for j, column in enumerate(self.columns):
            out[:, j] = column
        return out


def _listing(names):
    return ", ".join(names[:30]) + (f", ... ({len(names)} in all)" if len(names) > 30 else "")


def _check_names(asked, header, flag, path):
    unknown = [n for n in asked if n not in header]
    if unknown:
        raise ValueError(f"{flag}: {path} has no column {', '.join(map(repr, unknown))}; its "
                         f"columns: {_listing(header)}.")


def _parse(values, name, path):
    """A column's cells as ``(array, kind)``.

    A column of numbers with a few cells that are not (at most half of them) is
    a data error, located, rather than a text column; infinities too.
    """
    missing = [v.strip().lower() in MISSING_MARKERS for v in values]
    numbers = np.full(len(values), np.nan)
    bad = []
    for i, (v, gone) in enumerate(zip(values, missing)):
        if gone:
            continue
        try:
            numbers[i] = float(v)
        except ValueError:
            bad.append(i)
    present = len(values) - sum(missing)
    if bad and 2 * len(bad) <= present:
        i = bad[0]
        raise ValueError(f"{path}: line {i + 2}, column {name}: {values[i].strip()!r} is not a "
                         f"number (the column's other cells are; mark a missing cell NA, or "
                         f"--drop-columns {name}).")
    if bad:
        text = np.empty(len(values), dtype=object)
        for i, (v, gone) in enumerate(zip(values, missing)):
            text[i] = np.nan if gone else v.strip()
        return text, "text"
    infinite = np.flatnonzero(np.isinf(numbers))
    if infinite.size:
        i = int(infinite[0])
        raise ValueError(f"{path}: line {i + 2}, column {name}: {values[i].strip()!r} is "
                         "infinite.")
    return numbers, "numeric"


def has_header(path, delimiter=","):
    """Whether the CSV's first line names its columns: a cell that is neither a number
    nor a missing marker (:func:`load_csv`'s "infer", but a first row of data with "NA"
    cells is data).

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


def load_table(path, *, label=-1, columns=None, drop_columns=(), delimiter=",",
               need_label=True):
    """Read a CSV whose first line names its columns.

    Parameters
    ----------
    path : str or Path
        The file (optionally .gz / .bz2).
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
    with open_text(path) as handle:
        rows = list(csv.reader(handle, delimiter=delimiter))
    rows = [r for r in rows if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"{path}: the file is empty.")
    header = [c.strip() for c in rows[0]]
    if len(set(header)) != len(header):
        twice = sorted({n for n in header if header.count(n) > 1})
        raise ValueError(f"{path}: the header names {', '.join(map(repr, twice))} more than "
                         "once; give every column its own name.")
    width = len(header)
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            raise ValueError(f"{path}: line {number} has {len(row)} fields, the header "
                             f"{width}.")
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
    body = rows[1:]
    if not body:
        raise ValueError(f"{path}: no data rows (only the header line).")
    parsed = [_parse([r[header.index(n)] for r in body], n, path) for n in names]
    y = None
    if label is not None:
        cells = [r[header.index(label)].strip() for r in body]
        gone = [i + 2 for i, v in enumerate(cells) if v.lower() in MISSING_MARKERS]
        if gone:
            raise ValueError(f"{path}: the label column {label!r} is missing on "
                             f"{len(gone)} rows (lines {', '.join(map(str, gone[:5]))}"
                             f"{', ...' if len(gone) > 5 else ''}); drop those rows.")
        y = tidy_labels(np.array(cells))
    others = [c for c in header if c not in names and c != label]
    return Table(names=names, columns=[c for c, _ in parsed], kinds=[k for _, k in parsed],
                 y=y, label=label, others=others)
