"""``TabularEncoder``: a real table (numbers, text, categories, booleans, dates, missing
cells) as the numeric matrix a kernel machine takes, composed from scikit-learn's
transformers.

Kernel models need numbers on comparable scales. This encoder reads each column for what
it is (:func:`._columns.column_kind`, pandas' vectorised parsers) and hands it to the
transformer that encodes that kind, in one ``ColumnTransformer``:

- numbers: ``SimpleImputer`` (the training median), ``StandardScaler``; with
  ``missing_indicator``, a ``MissingIndicator`` column beside each column with gaps;
- booleans: 0 / 1 (missing: the most frequent);
- dates (datetime columns, or text that parses as ISO dates): the year, the day of the
  year and the weekday as cycles (sine and cosine: December 31 is next to January 1), and
  the time of day where there is one; never one-hot;
- text and categories: ``OneHotEncoder`` up to ``max_onehot`` values (a missing or unseen
  value: no category); beyond, warned about with the count and encoded compactly
  (``high_cardinality``: each value's frequency in training, an ordinal code, or a
  cross-fitted ``TargetEncoder``); ``text`` chooses the encoding of every text column
  (the search tries them as moves); declared orders (``ordinal``) as ranks
  (``OrdinalEncoder``).

What stays hand-written, and why: reading a column's kind and its located errors
(scikit-learn's transformers take a column as given), the date parts (none encodes
dates), the frequency code (none counts values).
"""

from __future__ import annotations

import sys
import threading
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    OrdinalEncoder,
    StandardScaler,
    TargetEncoder,
)
from sklearn.utils.validation import check_is_fitted

from .._constraints import Interval, Options, validate_params
from ._columns import as_frame, column_kind, date_names, date_parts, is_frame, needs_encoding

__all__ = ["TabularEncoder", "is_frame", "needs_encoding"]


#: what a missing text cell becomes before a text encoder: a value no table holds
_MISSING = "\0missing"


def _as_text(X):
    """Text cells as strings, a missing cell as :data:`_MISSING` (module-level: pickled in
    model files)."""
    return pd.DataFrame(X).fillna(_MISSING).astype(str)


def _user_stacklevel():
    """The stack level of the first frame outside kernelscale and scikit-learn: a warning
    about the user's data points at the user's call (``predict``, ``score``), not at
    scikit-learn's wrappers."""
    frame, level = sys._getframe(1), 1
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not name.startswith(("kernelscale", "sklearn")):
            return level
        frame, level = frame.f_back, level + 1
    return level


# (file, line, message) of the unseen-value warnings shown: scikit-learn's check_array
# enters warnings.catch_warnings on every call, which clears Python's once-per-line record,
# so without this the same warning repeated on every predict
_SHOWN = set()
_SHOWN_LOCK = threading.Lock()


def _warn_once_per_line(message):
    """Warn about the user's data at the user's line, once per line and message."""
    level = _user_stacklevel()
    frame = sys._getframe(level - 1)
    key = (frame.f_code.co_filename, frame.f_lineno, message)
    with _SHOWN_LOCK:
        if key in _SHOWN:
            return
        _SHOWN.add(key)
    warnings.warn(message, UserWarning, stacklevel=level)


class _Frequency(TransformerMixin, BaseEstimator):
    """Each value's share of the training rows (unseen: 0; missing: the largest share)."""

    def fit(self, X, y=None):
        column = pd.Series(np.asarray(X, dtype=object).ravel())
        counts = column.dropna().value_counts(normalize=True)
        self.shares_ = counts.to_dict()
        self.fill_ = float(counts.max()) if len(counts) else 0.0
        return self

    def transform(self, X):
        column = pd.Series(np.asarray(X, dtype=object).ravel())
        out = column.map(self.shares_).astype("float64")
        out[column.isna().to_numpy()] = self.fill_
        return out.fillna(0.0).to_numpy()[:, None]


class _Dates(TransformerMixin, BaseEstimator):
    """A date column's parts (:func:`._columns.date_parts`), missing dates the median's."""

    def __init__(self, with_time=False):
        self.with_time = with_time

    def fit(self, X, y=None):
        parts = self._parts(X)
        self.fill_ = np.nan_to_num(np.nanmedian(parts, axis=0)) if np.isfinite(parts).any() \
            else np.zeros(parts.shape[1])
        return self

    def _parts(self, X):
        return date_parts(np.asarray(X).ravel().astype("datetime64[ns]"), self.with_time)

    def transform(self, X):
        parts = self._parts(X)
        return np.where(np.isnan(parts), self.fill_, parts)


class TabularEncoder(TransformerMixin, BaseEstimator):
    """A table with numbers, text, categories, booleans, dates and missing cells, encoded
    as numbers for a kernel model (scikit-learn's transformers, one per kind of column).

    Parameters
    ----------
    max_onehot : int, default=200
        Text / category columns with at most this many values are one-hot encoded;
        above, ``high_cardinality`` says how (and a warning gives the count).
    high_cardinality : {"frequency", "ordinal", "target", "onehot"}, default="frequency"
        Each value's share of the training rows; an ordinal code (values in sorted
        order); the target's mean for the value, cross-fitted
        (``sklearn.preprocessing.TargetEncoder``); or one-hot anyway.
    ordinal : dict or list, default=None
        Columns encoded as ranks: ``{name: [values in order]}`` (e.g. ``{"cut":
        ["Fair", "Good", "Very Good", "Premium", "Ideal"]}``), or a list of names
        ranked in sorted order.
    dates : {"auto", "never"}, default="auto"
        "auto": datetime columns, and text columns whose values parse as ISO dates
        (YYYY-MM-DD, with an optional time), become year, day of year and weekday
        (cycles); "never": such text is text.
    missing : {"impute", "refuse"}, default="impute"
        Missing cells (None, NaN, NaT, NA, empty, "NA", "?"): the training median
        of a number (the most frequent value of a boolean; no category for text),
        or an error naming every column with missing cells.
    scale : {"standard", None}, default="standard"
        Standardise the numeric, date, ordinal, frequency and target columns (their
        training mean and standard deviation): kernels compare columns on one scale.
        One-hot, boolean and indicator columns stay 0 / 1.
    unknown : {"ignore", "warn", "refuse"}, default="warn"
        A text value training never saw, at ``transform``: encoded as unknown (no
        category; frequency 0; ordinal -1), with a warning or silently, or refused.
    feature_names : list of str, default=None
        Names of an array's columns (a DataFrame's own are used).
    text : {"onehot", "ordinal", "target"}, default="onehot"
        How text columns of at most ``max_onehot`` values are encoded (declared
        orders stay ranks).
    missing_indicator : bool, default=False
        A 0 / 1 column beside each numeric column with missing cells in training,
        saying where they were (``sklearn.impute.MissingIndicator``).

    Attributes
    ----------
    feature_names_in_ : ndarray of str
        The input columns (a DataFrame's names, or ``x0``, ``x1``, ...).
    kinds_ : list of str
        Each input column's kind: "numeric", "boolean", "date" or "text".
    encodings_ : list of str
        How each was encoded ("numeric", "boolean", "date", "onehot", "ordinal",
        "frequency", "target").
    column_transformer_ : sklearn.compose.ColumnTransformer
        The fitted transformers.
    report_ : list of str
        One line per kind of column: what was encoded, how, and what was imputed.
    n_features_out_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.datasets import TabularEncoder
    >>> X = np.array([[1.5, "red", "2024-01-01"], [2.5, "blue", "2024-06-30"],
    ...               [None, "red", "2024-12-31"]], dtype=object)
    >>> encoder = TabularEncoder(scale=None).fit(X)
    >>> encoder.kinds_
    ['numeric', 'text', 'date']
    >>> encoder.transform(X).shape  # 1 number, 2 one-hot columns, 5 date columns
    (3, 8)
    """

    _parameter_constraints = {
        "max_onehot": [Interval("int", 1)],
        "high_cardinality": [Options("frequency", "ordinal", "target", "onehot")],
        "ordinal": [None, dict, list, tuple],
        "dates": [Options("auto", "never")],
        "missing": [Options("impute", "refuse")],
        "scale": [None, Options("standard")],
        "unknown": [Options("ignore", "warn", "refuse")],
        "feature_names": [None, list, tuple],
        "text": [Options("onehot", "ordinal", "target")],
        "missing_indicator": ["boolean"],
    }

    def __init__(self, *, max_onehot=200, high_cardinality="frequency", ordinal=None,
                 dates="auto", missing="impute", scale="standard", unknown="warn",
                 feature_names=None, text="onehot", missing_indicator=False):
        self.max_onehot = max_onehot
        self.high_cardinality = high_cardinality
        self.ordinal = ordinal
        self.dates = dates
        self.missing = missing
        self.scale = scale
        self.unknown = unknown
        self.feature_names = feature_names
        self.text = text
        self.missing_indicator = missing_indicator

    # ------------------------------------------------------------------ fit

    def fit(self, X, y=None):
        """Read every column's kind and fit its transformer on these rows.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
            The target, which target encoding (``text="target"`` or
            ``high_cardinality="target"``) needs; ignored otherwise.

        Returns
        -------
        self : TabularEncoder
        """
        self._fit(X, y)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """:meth:`fit`, then the rows encoded (target encodings cross-fitted, as
        ``TargetEncoder.fit_transform`` does).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None

        Returns
        -------
        X_encoded : ndarray of shape (n_samples, n_features_out_), float64
        """
        frame = self._fit(X, y, transform=True)
        return frame

    def _fit(self, X, y, transform=False):
        validate_params(self)
        frame = as_frame(X, self.feature_names)
        n_rows, n_columns = frame.shape
        if n_columns == 0:
            raise ValueError(f"Found array with 0 feature(s) (shape=({n_rows}, 0)) while a "
                             "minimum of 1 is required by TabularEncoder.")
        if n_rows == 0:
            raise ValueError(f"Found array with 0 sample(s) (shape=(0, {n_columns})) while a "
                             "minimum of 1 is required by TabularEncoder.")
        names = list(frame.columns)
        self.feature_names_in_ = np.array(names, dtype=object)
        self.n_features_in_ = len(names)
        orders = self._ordinal_orders(names)
        columns, self.kinds_, gaps = {}, [], {}
        for name in names:
            kind, values = column_kind(name, frame[name], dates=self.dates,
                                       declared=True if name in orders else None)
            columns[name] = values
            self.kinds_.append(kind)
            count = int(pd.isna(values).sum())
            if count:
                gaps[name] = count
        if gaps and self.missing == "refuse":
            listing = ", ".join(f"{n} ({c})" for n, c in gaps.items())
            raise ValueError(f"missing values in {len(gaps)} column{'s' * (len(gaps) > 1)}: "
                             f"{listing}; impute them (missing='impute') or drop those rows.")
        target = None
        if y is not None:
            target = np.asarray(y)
        transformers, self.encodings_, self._widths = self._plan(names, columns, orders,
                                                                 gaps, target)
        self._gaps = gaps
        data = pd.DataFrame(columns)
        self.column_transformer_ = ColumnTransformer(transformers, remainder="drop",
                                                     sparse_threshold=0.0)
        needs_y = any(e == "target" for e in self.encodings_)
        if needs_y and target is None:
            raise ValueError("target encoding (text='target' or high_cardinality='target') "
                             "needs y: fit(X, y).")
        Z = self.column_transformer_.fit_transform(data, target if needs_y else None)
        self.n_features_out_ = int(Z.shape[1])
        # each column's output width as fitted (a multiclass target encoding: one a class)
        spans = self.column_transformer_.output_indices_
        self._widths = [spans[f"t{j}"].stop - spans[f"t{j}"].start
                        for j in range(len(names))]
        self.report_ = self._report(gaps)
        return np.asarray(Z, dtype=np.float64) if transform else None

    def _ordinal_orders(self, names):
        if not self.ordinal:
            return {}
        given = dict(self.ordinal) if isinstance(self.ordinal, dict) else \
            dict.fromkeys(self.ordinal)
        unknown = [n for n in given if n not in names]
        if unknown:
            raise ValueError(f"ordinal names {', '.join(map(repr, unknown))}, not columns of "
                             f"the table (its columns: {', '.join(names[:20])}).")
        return given

    def _scaled(self, *steps):
        return Pipeline(list(steps) + ([("scale", StandardScaler())]
                                       if self.scale == "standard" else []))

    def _plan(self, names, columns, orders, gaps, target):
        """The ColumnTransformer's transformers, each column's encoding and width."""
        transformers, encodings, widths = [], [], []
        self._counts = {}  # a text column's distinct values (the report says them)
        for j, (name, kind) in enumerate(zip(names, self.kinds_)):
            values = columns[name]
            # transformer names of their own: a column's may hold "__", which scikit-learn's
            # parameter routing reserves
            tag = f"t{j}"
            if kind == "numeric":
                if np.isinf(values).any():
                    i = int(np.flatnonzero(np.isinf(values))[0])
                    raise ValueError(f"column {name!r} holds an infinite value (row {i}): "
                                     "replace it, or drop the row.")
                transformers.append((tag, self._scaled(
                    ("impute", SimpleImputer(strategy="median", keep_empty_features=True))),
                    [name]))
                encodings.append("numeric")
                widths.append(1)
                if self.missing_indicator and name in gaps:
                    transformers.append((f"{tag}m", MissingIndicator(), [name]))
            elif kind == "boolean":
                transformers.append((tag, SimpleImputer(strategy="most_frequent",
                                                        keep_empty_features=True), [name]))
                encodings.append("boolean")
                widths.append(1)
            elif kind == "date":
                with_time = bool(np.any(pd.DatetimeIndex(values).dropna().normalize()
                                        != pd.DatetimeIndex(values).dropna()))
                transformers.append((tag, self._scaled(("parts", _Dates(with_time))), [name]))
                encodings.append("date")
                widths.append(7 if with_time else 5)
            else:
                encoding, step, width = self._text_step(name, values, orders)
                transformers.append((tag, step, [name]))
                encodings.append(encoding)
                widths.append(width)
        return transformers, encodings, widths

    def _text_step(self, name, values, orders):
        present = pd.Series(values).dropna()
        counts = present.value_counts()
        self._counts[name] = int(counts.size)
        if name in orders:
            ranks = list(orders[name]) if orders[name] else sorted(counts.index.tolist())
            unlisted = sorted(set(counts.index) - set(ranks))
            if unlisted:
                raise ValueError(f"column {name!r} holds {', '.join(map(repr, unlisted[:5]))}, "
                                 f"not in its declared order {ranks}.")
            return "ordinal", self._ordinal(ranks, counts), 1
        encoding = self.text
        if counts.size > self.max_onehot and self.high_cardinality != "onehot":
            warnings.warn(f"column {name!r} has {counts.size} distinct values (more than "
                          f"max_onehot={self.max_onehot}): encoded as one "
                          f"{self.high_cardinality} column, not {counts.size} one-hot ones "
                          "(high_cardinality='onehot' asks for them).", UserWarning,
                          stacklevel=_user_stacklevel())
            encoding = self.high_cardinality
        if encoding == "frequency":
            return "frequency", self._scaled(("frequency", _Frequency())), 1
        if encoding == "ordinal":
            return "ordinal", self._ordinal(sorted(counts.index.tolist()), counts), 1
        if encoding == "target":
            # missing text is its own value for the target's mean
            fill = FunctionTransformer(_as_text, feature_names_out="one-to-one")
            return "target", self._scaled(("fill", fill), ("target", TargetEncoder())), 1
        # one-hot: categories by decreasing frequency; a missing or unseen value, none
        categories = counts.index.tolist()
        onehot = OneHotEncoder(categories=[np.array(categories, dtype=object)],
                               handle_unknown="ignore", sparse_output=False,
                               dtype=np.float64)
        fill = FunctionTransformer(_as_text, feature_names_out="one-to-one")
        return "onehot", Pipeline([("fill", fill), ("onehot", onehot)]), len(categories)

    def _ordinal(self, ranks, counts):
        mode = counts.index[0] if len(counts) else ranks[0]
        encoder = OrdinalEncoder(categories=[np.array(ranks, dtype=object)],
                                 handle_unknown="use_encoded_value", unknown_value=-1,
                                 encoded_missing_value=float(ranks.index(mode)))
        return self._scaled(("ranks", encoder))

    # ------------------------------------------------------------------ transform

    def transform(self, X):
        """The table encoded as numbers.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features_in_)
            The training table's columns (a DataFrame's by name, in any order).

        Returns
        -------
        X_encoded : ndarray of shape (n_samples, n_features_out_), float64
        """
        data = self._aligned(X)
        if self.unknown != "ignore":
            unknown = self._unknown_in(data)
            if unknown:
                listing = "; ".join(f"{name}: {', '.join(map(repr, values[:3]))}"
                                    f"{', ...' if len(values) > 3 else ''}"
                                    for name, values in unknown.items())
                if self.unknown == "refuse":
                    raise ValueError(f"values training never saw, in {listing}; the encoder "
                                     "was fitted with unknown='refuse'.")
                _warn_once_per_line(f"values training never saw, encoded as unknown: "
                                    f"{listing}")
        return np.asarray(self.column_transformer_.transform(data), dtype=np.float64)

    def _aligned(self, X):
        """``X``'s columns read as in training, in the training order (a DataFrame's by
        name)."""
        check_is_fitted(self, "kinds_")
        frame = as_frame(X)
        if is_frame(X):
            absent = [n for n in self.feature_names_in_ if n not in frame.columns]
            if absent:
                raise ValueError(f"the table lacks the training columns "
                                 f"{', '.join(map(repr, absent))}.")
            frame = frame[list(self.feature_names_in_)]
        elif frame.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {frame.shape[1]} features, but TabularEncoder is "
                             f"expecting {self.n_features_in_} features as input.")
        else:
            frame.columns = list(self.feature_names_in_)
        orders = self._ordinal_orders(list(self.feature_names_in_))
        columns = {}
        for name, kind in zip(self.feature_names_in_, self.kinds_):
            got, values = column_kind(name, frame[name], dates=self.dates,
                                      declared=True if name in orders else None)
            if kind == "numeric" and got != "numeric":
                bad = next(v for v in frame[name] if pd.isna(pd.to_numeric(
                    pd.Series([v]), errors="coerce")).all() and not pd.isna(v))
                raise ValueError(f"column {name!r} was numeric in training; here it holds "
                                 f"{bad!r}.")
            if kind == "text" and got != "text":
                values = pd.Series(values).map(
                    lambda v: None if pd.isna(v) else (f"{v:g}" if isinstance(v, float)
                                                       else str(v))).to_numpy(dtype=object)
            if kind == "date" and got != "date":
                raise ValueError(f"column {name!r} holds dates in training; here it holds "
                                 f"{frame[name].iloc[0]!r}.")
            if self.missing == "refuse" and pd.isna(values).any():
                raise ValueError(f"column {name!r} has {int(pd.isna(values).sum())} missing "
                                 "cells; the encoder was fitted with missing='refuse'.")
            columns[name] = values
        return pd.DataFrame(columns)

    def _steps(self):
        """``(column name, fitted step, encoding)`` of each input column."""
        fitted = self.column_transformer_.named_transformers_
        return [(name, fitted[f"t{j}"], encoding) for j, (name, encoding)
                in enumerate(zip(self.feature_names_in_, self.encodings_))]

    def _unknown_in(self, data):
        out = {}
        for name, step, encoding in self._steps():
            if encoding not in ("onehot", "ordinal"):
                continue
            known = self._known(step, encoding)
            column = pd.Series(data[name]).dropna()
            new = sorted(set(column[~column.isin(known)].astype(str)))
            if new:
                out[str(name)] = new
        return out

    @staticmethod
    def _known(step, encoding):
        last = step[-1] if encoding == "onehot" else step.named_steps["ranks"]
        return set(last.categories_[0].tolist())

    def unknown_values(self, X):
        """``{column: sorted values}`` of the text values in ``X`` training never saw."""
        return self._unknown_in(self._aligned(X))

    def get_feature_names_out(self, input_features=None):
        """The output columns' names: ``name``, ``name=value`` (one-hot), ``name_year``, ...,
        ``name_missing`` (a missing indicator)."""
        check_is_fitted(self, "kinds_")
        out = []
        for (name, step, encoding), width in zip(self._steps(), self._widths):
            if encoding == "onehot":
                out += [f"{name}={c}" for c in step[-1].categories_[0]]
            elif encoding == "date":
                out += date_names(name, width == 7)
            elif width > 1:  # a multiclass target encoding: one column a class
                out += [f"{name}_{k}" for k in range(width)]
            else:
                out.append(str(name))
            if self.missing_indicator and encoding == "numeric" and name in self._gaps:
                out.append(f"{name}_missing")
        return np.array(out, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing cells are imputed (or refused, by name)
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    def _report(self, gaps):
        by_kind = {}
        self._gaps = gaps
        for name, encoding, width in zip(self.feature_names_in_, self.encodings_,
                                         self._widths):
            by_kind.setdefault(encoding, []).append((name, width))

        def listing(items, show):
            text = ", ".join(show(n, w) for n, w in items[:12])
            return text + (f", ... ({len(items)} in all)" if len(items) > 12 else "")

        described = {
            "numeric": ("numeric", lambda n, w: n),
            "boolean": ("boolean (0 / 1)", lambda n, w: n),
            "date": ("dates (year, day of year and weekday as cycles)",
                     lambda n, w: n + (" (with time of day)" if w == 7 else "")),
            "onehot": ("text one-hot", lambda n, w: f"{n} ({w} values)"),
            "ordinal": ("text as ranks", lambda n, w: f"{n} ({self._counts[n]} values)"),
            "frequency": ("text as its values' frequencies (many values)",
                          lambda n, w: f"{n} ({self._counts[n]} values)"),
            "target": ("text as the target's mean per value (cross-fitted)",
                       lambda n, w: f"{n} ({self._counts[n]} values)"),
        }
        lines = []
        for kind, (title, show) in described.items():
            if kind in by_kind:
                lines.append(f"{title}: {len(by_kind[kind])} column"
                             f"{'s' * (len(by_kind[kind]) > 1)}: {listing(by_kind[kind], show)}")
        if gaps:
            lines.append("missing cells imputed: " + ", ".join(
                f"{n} ({c})" for n, c in list(gaps.items())[:12])
                + (" (with missing indicators)" if self.missing_indicator else ""))
        if self.scale == "standard":
            scaled = sum(w for e, w in zip(self.encodings_, self._widths)
                         if e not in ("onehot", "boolean"))
            lines.append(f"{scaled} of {self.n_features_out_} columns standardised (one-hot "
                         "and boolean columns stay 0 / 1)")
        return lines
