"""Reading a table's columns for :class:`TabularEncoder`: a DataFrame's or an array's
columns, their missing cells, and their values as numbers or dates."""

from __future__ import annotations

import numbers

import numpy as np

from ._table import MISSING_MARKERS

__all__ = ["is_frame", "needs_encoding", "table_columns", "missing_cells", "as_numbers",
           "as_dates", "date_features", "DATE_NAMES", "DATE_SHARE", "UNREADABLE"]

#: a text column counts as dates when at least this share of its values parse as dates
DATE_SHARE = 0.95
#: cell values no encoding reads (a column of them is refused, named)
UNREADABLE = (list, tuple, dict, set, frozenset, bytes, bytearray, complex, np.complexfloating)


def is_frame(X):
    """Whether ``X`` is a DataFrame (pandas or alike: ``columns`` and ``dtypes``)."""
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def needs_encoding(X):
    """Whether ``X`` is a table a numeric check would refuse: a DataFrame with a column that
    is not a plain number (text, category, boolean, date) or holds missing cells, or an
    object array."""
    if is_frame(X):
        for name in X.columns:
            column = X[name]
            kind = str(column.dtype)
            if not (kind.startswith(("int", "uint", "float", "Int", "UInt", "Float"))):
                return True
            if bool(column.isna().any()):
                return True
        return False
    return isinstance(X, np.ndarray) and X.dtype == object


def table_columns(X, feature_names=None):
    """``(names, [column values as a 1-D array], [pandas dtype or None])``."""
    if is_frame(X):
        names = [str(c) for c in X.columns]
        return names, [X.iloc[:, j] for j in range(X.shape[1])], \
            [X.dtypes.iloc[j] for j in range(X.shape[1])]
    if hasattr(X, "tocsr") or hasattr(X, "toarray"):
        raise TypeError("Sparse data was passed to TabularEncoder, but dense data is required "
                        "(a DataFrame or an array of rows): sparse input is not supported.")
    array = np.asarray(X, dtype=object) if not isinstance(X, np.ndarray) else X
    if array.ndim != 2:
        raise ValueError(f"TabularEncoder takes a 2-D table (a DataFrame or an array of "
                         f"rows), got shape {np.shape(array)}. Reshape your data either using "
                         "array.reshape(-1, 1) if it has a single feature or "
                         "array.reshape(1, -1) if it holds a single row.")
    names = [f"x{j}" for j in range(array.shape[1])]
    if feature_names is not None:
        if len(feature_names) != array.shape[1]:
            raise ValueError(f"feature_names has {len(feature_names)} names for "
                             f"{array.shape[1]} columns.")
        names = [str(n) for n in feature_names]
    return names, [array[:, j] for j in range(array.shape[1])], [None] * array.shape[1]


def missing_cells(values):
    """Which cells are missing: None / NaN / NaT / pandas NA, or a missing marker string."""
    out = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if v is None:
            out[i] = True
        elif isinstance(v, str):
            out[i] = v.strip().lower() in MISSING_MARKERS
        else:
            try:
                out[i] = bool(v != v)  # NaN, NaT and pandas' NA compare unequal
            except (TypeError, ValueError):
                out[i] = str(v) in ("<NA>", "NaT")
    return out


def as_numbers(values, present):
    """The values as float64 (NaN where missing), or None if one present value is not a
    number."""
    out = np.full(len(values), np.nan)
    for i in np.flatnonzero(present):
        v = values[i]
        if isinstance(v, (bool, np.bool_)):
            return None
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            return None
    return out


def as_dates(values, present):
    """The values as datetime64[s] (NaT where missing) and the positions that did not parse."""
    out = np.full(len(values), np.datetime64("NaT"), dtype="datetime64[s]")
    bad = []
    for i in np.flatnonzero(present):
        v = values[i]
        try:
            if hasattr(v, "to_datetime64"):
                out[i] = v.to_datetime64()
            elif isinstance(v, (np.datetime64,)):
                out[i] = v
            elif isinstance(v, str) and len(v.strip()) >= 8 and v.strip()[:4].isdigit():
                out[i] = np.datetime64(v.strip().replace(" ", "T"), "s")
            elif hasattr(v, "isoformat") and not isinstance(v, numbers.Number):
                out[i] = np.datetime64(v.isoformat(), "s")
            else:
                bad.append(i)
        except (ValueError, TypeError, OverflowError):
            bad.append(i)
    return out, bad


def date_features(dates, with_time):
    """Year, day of year (as a cycle), weekday (as a cycle) and the time of day (a cycle,
    where the column has times): one row per date, NaN where missing."""
    missing = np.isnat(dates)
    days = dates.astype("datetime64[D]")
    years = days.astype("datetime64[Y]")
    year = years.astype(np.int64) + 1970.0
    doy = (days - years).astype(np.int64).astype(np.float64)  # 0..365
    weekday = ((days.astype(np.int64) + 3) % 7).astype(np.float64)  # Monday 0
    angle_y, angle_w = 2 * np.pi * doy / 365.25, 2 * np.pi * weekday / 7.0
    parts = [year, np.sin(angle_y), np.cos(angle_y), np.sin(angle_w), np.cos(angle_w)]
    if with_time:
        seconds = (dates - days).astype(np.int64).astype(np.float64)
        angle_t = 2 * np.pi * seconds / 86400.0
        parts += [np.sin(angle_t), np.cos(angle_t)]
    out = np.column_stack(parts)
    out[missing] = np.nan
    return out


DATE_NAMES = ("year", "day_of_year_sin", "day_of_year_cos", "weekday_sin", "weekday_cos")
