"""Reading a table's columns for :class:`TabularEncoder`: what kind each column is, read
with pandas' vectorised parsers (numbers, dates, missing cells), and the one-line errors
for what no encoding reads."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["is_frame", "needs_encoding", "as_frame", "column_kind", "date_parts",
           "DATE_NAMES", "DATE_SHARE", "MISSING_TEXT"]

#: a text column counts as dates when at least this share of its values parse as dates
#: (the rest are then reported, not taken for text)
DATE_SHARE = 0.95
#: text cells read as missing, compared without case or surrounding blanks (the CSV
#: reader's markers: a table given as text has them too)
MISSING_TEXT = frozenset({"", "na", "n/a", "nan", "null", "none", "?", "<na>", "nat"})
#: the output columns of a date (and of its time of day, where it has one)
DATE_NAMES = ("year", "day_of_year_sin", "day_of_year_cos", "weekday_sin", "weekday_cos")
_TIME_NAMES = ("time_sin", "time_cos")
#: cell values no encoding reads (a column of them is refused, named)
_UNREADABLE = (list, tuple, dict, set, frozenset, bytes, bytearray, complex, np.complexfloating)


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
            if not pd.api.types.is_numeric_dtype(column.dtype) or \
                    pd.api.types.is_bool_dtype(column.dtype):
                return True
            if bool(column.isna().any()):
                return True
        return False
    return isinstance(X, np.ndarray) and X.dtype == object


def as_frame(X, feature_names=None):
    """``X`` as a DataFrame with string column names (a DataFrame's own, else ``x0``, ...
    or ``feature_names``)."""
    if is_frame(X):
        frame = X.copy(deep=False)
        frame.columns = [str(c) for c in X.columns]
        return frame
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
    return pd.DataFrame({name: array[:, j] for j, name in enumerate(names)})


def missing(column):
    """Which cells of a column are missing: NA / NaN / NaT / None, or a missing marker."""
    out = column.isna().to_numpy()
    if pd.api.types.is_object_dtype(column.dtype) or \
            pd.api.types.is_string_dtype(column.dtype):
        text = column.astype(str).str.strip().str.lower()
        out = out | text.isin(MISSING_TEXT).to_numpy()
    return out


def _refuse_unreadable(name, column, present):
    dtype = str(column.dtype)
    odd = None
    # pandas' C inference first: only a column of mixed kinds is read cell by cell
    mixed = ("mixed", "mixed-integer", "complex", "bytes", "unknown-array", "empty")
    if pd.api.types.is_object_dtype(column.dtype) and \
            pd.api.types.infer_dtype(column, skipna=True) in mixed:
        values = column[present]
        bad = values.map(lambda v: isinstance(v, _UNREADABLE))
        if bool(bad.any()):
            odd = values[bad.to_numpy()].iloc[0]
    if dtype.startswith(("complex", "timedelta", "period", "interval")) or odd is not None:
        what = dtype if odd is None else type(odd).__name__
        example = column[present].iloc[0] if odd is None else odd
        complex_ = "Complex data not supported: " if "complex" in what else ""
        raise ValueError(f"{complex_}column {name!r} holds {what} values (e.g. {example!r}), "
                         "which the encoder cannot read: convert it to numbers, text or "
                         "dates, or drop it.")


def column_kind(name, column, *, dates, declared):
    """``(kind, values)``: "numeric" (float64, NaN where missing), "boolean" (float64),
    "date" (datetime64[ns], NaT where missing) or "text" (object, None where missing).

    ``declared``: the column's declared order (a category, even of numbers).
    """
    gone = missing(column)
    present = ~gone
    _refuse_unreadable(name, column, present)
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype) or (
            pd.api.types.is_object_dtype(dtype) and present.any()
            and pd.api.types.infer_dtype(column[present], skipna=True) == "boolean"):
        values = column.where(present).astype("float64")
        return "boolean", values.to_numpy()
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "date", _dates(column).to_numpy()
    categorical = declared is not None or isinstance(dtype, pd.CategoricalDtype)
    if not categorical:
        if pd.api.types.is_numeric_dtype(dtype):
            return "numeric", column.astype("float64").to_numpy()
        numbers = pd.to_numeric(column.where(present), errors="coerce")
        if numbers.notna().sum() == present.sum():
            return "numeric", numbers.astype("float64").to_numpy()
    text = column.astype(object).where(present, None)
    text = text.map(lambda v: v if v is None else str(v).strip())
    if dates == "auto" and declared is None and present.any():
        parsed = pd.to_datetime(text, errors="coerce", format="ISO8601") \
            if _looks_like_dates(text[present]) else None
        if parsed is not None:
            bad = np.flatnonzero(present & parsed.isna().to_numpy())
            if len(bad) <= (1 - DATE_SHARE) * present.sum():
                if len(bad):
                    i = int(bad[0])
                    raise ValueError(f"column {name!r} holds dates, but row {i} holds "
                                     f"{column.iloc[i]!r}, which does not parse as one "
                                     "(YYYY-MM-DD, optionally with a time): fix or blank it.")
                return "date", _dates(parsed).to_numpy()
    return "text", text.to_numpy(dtype=object)


def _looks_like_dates(present_text):
    """Whether text cells look like ISO dates (four digits first, eight characters or more)."""
    sample = present_text.iloc[:1000]
    starts = sample.str.len().ge(8) & sample.str[:4].str.isdigit()
    return bool(starts.mean() >= DATE_SHARE)


def _dates(column):
    values = pd.to_datetime(column, errors="coerce")
    if getattr(values.dt, "tz", None) is not None:
        values = values.dt.tz_localize(None)
    return values


def date_parts(dates, with_time):
    """Year, day of year (as a cycle), weekday (as a cycle) and the time of day (a cycle,
    where the column has times): one row per date, NaN where missing.

    Examples
    --------
    >>> import numpy as np
    >>> days = np.array(["2023-12-31", "2024-01-01"], dtype="datetime64[ns]")
    >>> date_parts(days, False).shape
    (2, 5)
    """
    values = pd.DatetimeIndex(dates)
    gone = values.isna()
    year = values.year.to_numpy(dtype=np.float64)
    doy = values.day_of_year.to_numpy(dtype=np.float64) - 1.0  # 0..365
    weekday = values.day_of_week.to_numpy(dtype=np.float64)  # Monday 0
    angle_y, angle_w = 2 * np.pi * doy / 365.25, 2 * np.pi * weekday / 7.0
    parts = [year, np.sin(angle_y), np.cos(angle_y), np.sin(angle_w), np.cos(angle_w)]
    if with_time:
        seconds = (values - values.normalize()).total_seconds().to_numpy(dtype=np.float64)
        angle_t = 2 * np.pi * seconds / 86400.0
        parts += [np.sin(angle_t), np.cos(angle_t)]
    out = np.column_stack(parts)
    out[gone] = np.nan
    return out


def date_names(name, with_time):
    """The output columns' names of a date column."""
    parts = DATE_NAMES + (_TIME_NAMES if with_time else ())
    return [f"{name}_{p}" for p in parts]
