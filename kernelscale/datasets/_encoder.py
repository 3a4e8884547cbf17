"""``TabularEncoder``: a real table (numbers, text, categories, booleans, dates, missing
cells) as the numeric matrix a kernel machine takes.

Kernel models need numbers on comparable scales. Real tables hold text and
category columns, booleans, dates and missing cells; one-hot encoding everything
that is not a number turns a date column into thousands of columns (one per day)
and a free-text id into one per row. This encoder reads each column for what it
is:

- numbers: kept (missing cells: the training median), standardised by default;
- booleans: 0 / 1;
- dates (datetime columns, or text that parses as ISO dates): the year, the day of
  the year and the weekday as cycles (sine and cosine: December 31 is next to
  January 1), and the time of day where there is one; never one-hot;
- text and categories: one-hot up to ``max_onehot`` values; beyond, warned about
  with the count and encoded compactly (each value's frequency in training, or an
  ordinal code) unless asked otherwise; declared orders (``ordinal``) as ranks.

Pandas is not needed: a DataFrame is read by its columns and dtypes, anything else
as an array (object arrays hold text). ``report_`` says, one line per kind of
column, what was done.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._constraints import Interval, Options, validate_params
from ._columns import (
    DATE_NAMES,
    DATE_SHARE,
    UNREADABLE,
    as_dates,
    as_numbers,
    date_features,
    is_frame,
    missing_cells,
    needs_encoding,
    table_columns,
)

__all__ = ["TabularEncoder", "is_frame", "needs_encoding"]

class TabularEncoder(TransformerMixin, BaseEstimator):
    """A table with numbers, text, categories, booleans, dates and missing cells, encoded
    as numbers for a kernel model.

    Parameters
    ----------
    max_onehot : int, default=200
        Text / category columns with at most this many values are one-hot encoded;
        above, ``high_cardinality`` says how (and a warning gives the count).
    high_cardinality : {"frequency", "ordinal", "onehot"}, default="frequency"
        Each value's share of the training rows; or an ordinal code (values in
        sorted order); or one-hot anyway.
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
        of a number (the most frequent value of text; an all-zero one-hot row),
        or an error naming every column with missing cells.
    scale : {"standard", None}, default="standard"
        Standardise the numeric, date, ordinal and frequency columns (their
        training mean and standard deviation): kernels compare columns on one
        scale. One-hot and boolean columns stay 0 / 1.
    unknown : {"ignore", "warn", "refuse"}, default="warn"
        A text value training never saw, at ``transform``: encoded as unknown
        (no category; frequency 0; ordinal -1), with a warning or silently, or
        refused.
    feature_names : list of str, default=None
        Names of an array's columns (a DataFrame's own are used).

    Attributes
    ----------
    feature_names_in_ : ndarray of str
        The input columns (a DataFrame's names, or ``x0``, ``x1``, ...).
    kinds_ : list of str
        Each input column's kind: "numeric", "boolean", "date" or "text".
    encodings_ : list of str
        How each was encoded ("numeric", "boolean", "date", "onehot", "ordinal",
        "frequency").
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
        "high_cardinality": [Options("frequency", "ordinal", "onehot")],
        "ordinal": [None, dict, list, tuple],
        "dates": [Options("auto", "never")],
        "missing": [Options("impute", "refuse")],
        "scale": [None, Options("standard")],
        "unknown": [Options("ignore", "warn", "refuse")],
        "feature_names": [None, list, tuple],
    }

    def __init__(self, *, max_onehot=200, high_cardinality="frequency", ordinal=None,
                 dates="auto", missing="impute", scale="standard", unknown="warn",
                 feature_names=None):
        self.max_onehot = max_onehot
        self.high_cardinality = high_cardinality
        self.ordinal = ordinal
        self.dates = dates
        self.missing = missing
        self.scale = scale
        self.unknown = unknown
        self.feature_names = feature_names

    # ------------------------------------------------------------------ fit

    def fit(self, X, y=None):
        """Read every column's kind and learn its encoding on these rows.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : TabularEncoder
        """
        validate_params(self)
        names, columns, dtypes = table_columns(X, self.feature_names)
        n_rows = len(columns[0]) if columns else np.shape(X)[0]
        if not columns:
            raise ValueError(f"Found array with 0 feature(s) (shape=({n_rows}, 0)) while a "
                             "minimum of 1 is required by TabularEncoder.")
        if n_rows == 0:
            raise ValueError(f"Found array with 0 sample(s) (shape=(0, {len(columns)})) while a "
                             "minimum of 1 is required by TabularEncoder.")
        self.feature_names_in_ = np.array(names, dtype=object)
        self.n_features_in_ = len(names)
        order = self._ordinal_orders(names)
        self.kinds_, self.encodings_, self._state = [], [], []
        gaps = {}
        for name, values, dtype in zip(names, columns, dtypes):
            values = np.asarray(values, dtype=object)
            missing = missing_cells(values)
            if missing.any():
                gaps[name] = int(missing.sum())
            kind, state = self._read(name, values, missing, dtype, order.get(name))
            self.kinds_.append(kind)
            self.encodings_.append(state["encoding"])
            self._state.append(state)
        if gaps and self.missing == "refuse":
            listing = ", ".join(f"{n} ({c})" for n, c in gaps.items())
            raise ValueError(f"missing values in {len(gaps)} column{'s' * (len(gaps) > 1)}: "
                             f"{listing}; impute them (missing='impute') or drop those rows.")
        self._fit_scale(columns)
        self.report_ = self._report(gaps)
        return self

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

    def _read(self, name, values, missing, dtype, order):
        """The column's kind and the state its encoding needs."""
        present = ~missing
        dtype_name = "" if dtype is None else str(dtype)
        odd = next((v for v in values[present] if isinstance(v, UNREADABLE)), None)
        if dtype_name.startswith(("complex", "timedelta", "period", "interval")) or \
                odd is not None:
            what = dtype_name if odd is None else type(odd).__name__
            example = values[present][0] if odd is None else odd
            complex_ = "Complex data not supported: " if "complex" in what else ""
            raise ValueError(f"{complex_}column {name!r} holds {what} values (e.g. "
                             f"{example!r}), which the encoder cannot read: convert it to "
                             "numbers, text or dates, or drop it.")
        if dtype_name.startswith(("bool", "boolean")) or (
                present.any() and all(isinstance(v, (bool, np.bool_)) for v in values[present])):
            mode = bool(np.mean([bool(v) for v in values[present]]) >= 0.5) if present.any() \
                else False
            return "boolean", {"encoding": "boolean", "fill": float(mode)}
        if dtype_name.startswith("datetime"):
            dates, _ = as_dates(values, present)
            return "date", self._date_state(dates)
        # a declared order or a category dtype is a category, even of numbers
        categorical = order is not None or dtype_name.startswith("category")
        numbers_ = None if categorical else as_numbers(values, present)
        if numbers_ is not None:
            median = float(np.nanmedian(numbers_)) if present.any() else 0.0
            return "numeric", {"encoding": "numeric", "fill": median}
        text = np.array([str(v).strip() if p else "" for v, p in zip(values, present)],
                        dtype=object)
        if self.dates == "auto" and order is None and present.any():
            dates, bad = as_dates(text, present)
            if len(bad) <= (1 - DATE_SHARE) * present.sum():
                if bad:
                    i = bad[0]
                    raise ValueError(f"column {name!r} holds dates, but row {i} holds "
                                     f"{values[i]!r}, which does not parse as one (YYYY-MM-DD, "
                                     "optionally with a time): fix or blank it.")
                return "date", self._date_state(dates)
        return "text", self._text_state(name, text, present, order, dtype_name)

    def _date_state(self, dates):
        with_time = bool(np.any((dates - dates.astype("datetime64[D]"))[~np.isnat(dates)]
                                .astype(np.int64)))
        features = date_features(dates, with_time)
        fill = np.nanmedian(features, axis=0) if np.any(~np.isnat(dates)) else \
            np.zeros(features.shape[1])
        return {"encoding": "date", "with_time": with_time, "fill": fill}

    def _text_state(self, name, text, present, order, dtype_name):
        values, counts = np.unique(text[present], return_counts=True)
        if order is not None or (self.ordinal and name in dict.fromkeys(self.ordinal or ())):
            ranks = list(order) if order else sorted(values.tolist())
            unlisted = sorted(set(values.tolist()) - set(ranks))
            if unlisted:
                raise ValueError(f"column {name!r} holds {', '.join(map(repr, unlisted[:5]))}, "
                                 f"not in its declared order {ranks}.")
            codes = {v: float(k) for k, v in enumerate(ranks)}
            mode = values[np.argmax(counts)] if values.size else ranks[0]
            return {"encoding": "ordinal", "codes": codes, "fill": codes[mode],
                    "values": len(ranks)}
        if values.size > self.max_onehot and self.high_cardinality != "onehot":
            warnings.warn(f"column {name!r} has {values.size} distinct values (more than "
                          f"max_onehot={self.max_onehot}): encoded as one "
                          f"{self.high_cardinality} column, not {values.size} one-hot ones "
                          "(high_cardinality='onehot' asks for them).", UserWarning,
                          stacklevel=4)
            if self.high_cardinality == "frequency":
                share = counts / max(int(counts.sum()), 1)
                codes = dict(zip(values.tolist(), share.tolist()))
                return {"encoding": "frequency", "codes": codes,
                        "fill": float(share.max()) if share.size else 0.0,
                        "values": int(values.size)}
            codes = {v: float(k) for k, v in enumerate(values.tolist())}
            mode = values[np.argmax(counts)]
            return {"encoding": "ordinal", "codes": codes, "fill": codes[mode],
                    "values": int(values.size)}
        # one-hot, categories by decreasing frequency (a missing cell: all zeros)
        categories = values[np.argsort(-counts, kind="stable")].tolist()
        return {"encoding": "onehot", "categories": categories, "values": len(categories)}

    # ------------------------------------------------------------ transform

    def _encode(self, columns, check_unknown):
        blocks, unknown = [], {}
        for j, (values, state) in enumerate(zip(columns, self._state)):
            values = np.asarray(values, dtype=object)
            missing = missing_cells(values)
            kind = state["encoding"]
            if missing.any() and self.missing == "refuse":
                raise ValueError(f"column {self.feature_names_in_[j]!r} has {missing.sum()} "
                                 "missing cells; the encoder was fitted with missing='refuse'.")
            if kind == "numeric":
                numbers_ = as_numbers(values, ~missing)
                if numbers_ is None:
                    bad = next(v for v, m in zip(values, missing) if not m and
                               as_numbers(np.array([v], dtype=object), np.ones(1, bool)) is None)
                    raise ValueError(f"column {self.feature_names_in_[j]!r} was numeric in "
                                     f"training; here it holds {bad!r}.")
                blocks.append(np.where(missing, state["fill"], numbers_)[:, None])
            elif kind == "boolean":
                blocks.append(np.array([state["fill"] if m else float(bool(v))
                                        for v, m in zip(values, missing)])[:, None])
            elif kind == "date":
                dates, bad = as_dates(values, ~missing)
                if bad:
                    raise ValueError(f"column {self.feature_names_in_[j]!r} holds dates, but "
                                     f"row {bad[0]} holds {values[bad[0]]!r}, which does not "
                                     "parse as one.")
                features = date_features(dates, state["with_time"])
                blocks.append(np.where(np.isnan(features), state["fill"], features))
            else:
                text = [str(v).strip() for v in values]
                if kind == "onehot":
                    index = {c: k for k, c in enumerate(state["categories"])}
                    block = np.zeros((len(text), len(index)))
                    for i, (t, m) in enumerate(zip(text, missing)):
                        k = index.get(t)
                        if k is not None and not m:
                            block[i, k] = 1.0
                        elif not m:
                            unknown.setdefault(self.feature_names_in_[j], set()).add(t)
                    blocks.append(block)
                else:
                    codes = state["codes"]
                    out = np.empty(len(text))
                    for i, (t, m) in enumerate(zip(text, missing)):
                        if m:
                            out[i] = state["fill"]
                        elif t in codes:
                            out[i] = codes[t]
                        else:
                            out[i] = 0.0 if kind == "frequency" else -1.0
                            unknown.setdefault(self.feature_names_in_[j], set()).add(t)
                    blocks.append(out[:, None])
        if unknown and check_unknown:
            self._unknown(unknown)
        return np.hstack(blocks) if blocks else np.empty((0, 0))

    def _unknown(self, unknown):
        listing = "; ".join(f"{name}: {', '.join(map(repr, sorted(values)[:3]))}"
                            f"{', ...' if len(values) > 3 else ''}"
                            for name, values in unknown.items())
        if self.unknown == "refuse":
            raise ValueError(f"values training never saw, in {listing}; the encoder was "
                             "fitted with unknown='refuse'.")
        if self.unknown == "warn":
            warnings.warn(f"values training never saw, encoded as unknown: {listing}",
                          UserWarning, stacklevel=4)

    def _scaledtable_columns(self):
        """Output columns standardised with ``scale="standard"`` (not one-hot, not boolean)."""
        out = []
        for state in self._state:
            kind = state["encoding"]
            width = self._width(state)
            out += [kind not in ("onehot", "boolean")] * width
        return np.array(out, dtype=bool)

    @staticmethod
    def _width(state):
        if state["encoding"] == "onehot":
            return len(state["categories"])
        if state["encoding"] == "date":
            return 7 if state["with_time"] else 5
        return 1

    def _fit_scale(self, columns):
        Z = self._encode(columns, check_unknown=False)
        self.n_features_out_ = Z.shape[1]
        self._mean = np.zeros(Z.shape[1])
        self._std = np.ones(Z.shape[1])
        if self.scale == "standard":
            chosen = self._scaledtable_columns()
            self._mean[chosen] = Z[:, chosen].mean(axis=0)
            std = Z[:, chosen].std(axis=0)
            self._std[chosen] = np.where(std > 0, std, 1.0)

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
        names, columns = self._aligned(X)
        Z = self._encode(columns, check_unknown=self.unknown != "ignore")
        return (Z - self._mean) / self._std

    def unknown_values(self, X):
        """``{column: sorted values}`` of the text values in ``X`` training never saw."""
        _, columns = self._aligned(X)
        out = {}
        for name, values, state in zip(self.feature_names_in_, columns, self._state):
            known = state.get("categories") or state.get("codes")
            if known is None:
                continue
            values = np.asarray(values, dtype=object)
            seen = set(known)
            new = {str(v).strip() for v, m in zip(values, missing_cells(values))
                   if not m and str(v).strip() not in seen}
            if new:
                out[str(name)] = sorted(new)
        return out

    def _aligned(self, X):
        """``X``'s columns in the training order (a DataFrame's by name)."""
        check_is_fitted(self, "kinds_")
        names, columns, _ = table_columns(X)
        if is_frame(X):
            absent = [n for n in self.feature_names_in_ if n not in names]
            if absent:
                raise ValueError(f"the table lacks the training columns "
                                 f"{', '.join(map(repr, absent))}.")
            columns = [columns[names.index(n)] for n in self.feature_names_in_]
        elif len(columns) != self.n_features_in_:
            raise ValueError(f"X has {len(columns)} features, but TabularEncoder is expecting "
                             f"{self.n_features_in_} features as input.")
        return names, columns

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing cells are imputed (or refused, by name)
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    def get_feature_names_out(self, input_features=None):
        """The output columns' names: ``name``, ``name=value`` (one-hot), ``name_year``, ..."""
        check_is_fitted(self, "kinds_")
        out = []
        for name, state in zip(self.feature_names_in_, self._state):
            kind = state["encoding"]
            if kind == "onehot":
                out += [f"{name}={c}" for c in state["categories"]]
            elif kind == "date":
                parts = DATE_NAMES + (("time_sin", "time_cos") if state["with_time"] else ())
                out += [f"{name}_{p}" for p in parts]
            else:
                out.append(str(name))
        return np.array(out, dtype=object)

    def _report(self, gaps):
        lines = []
        by_kind = {}
        for name, state in zip(self.feature_names_in_, self._state):
            by_kind.setdefault(state["encoding"], []).append((name, state))

        def listing(items, show):
            text = ", ".join(show(n, s) for n, s in items[:12])
            return text + (f", ... ({len(items)} in all)" if len(items) > 12 else "")

        described = {
            "numeric": ("numeric", lambda n, s: n),
            "boolean": ("boolean (0 / 1)", lambda n, s: n),
            "date": ("dates (year, day of year and weekday as cycles)",
                     lambda n, s: n + (" (with time of day)" if s["with_time"] else "")),
            "onehot": ("text one-hot", lambda n, s: f"{n} ({s['values']} values)"),
            "ordinal": ("text as ranks", lambda n, s: f"{n} ({s['values']} values)"),
            "frequency": ("text as its values' frequencies (many values)",
                          lambda n, s: f"{n} ({s['values']} values)"),
        }
        for kind, (title, show) in described.items():
            if kind in by_kind:
                lines.append(f"{title}: {len(by_kind[kind])} column"
                             f"{'s' * (len(by_kind[kind]) > 1)}: {listing(by_kind[kind], show)}")
        if gaps:
            lines.append("missing cells imputed: " + ", ".join(
                f"{n} ({c})" for n, c in list(gaps.items())[:12]))
        if self.scale == "standard":
            lines.append(f"{int(self._scaledtable_columns().sum())} of {self.n_features_out_} "
                         "columns standardised (one-hot and boolean columns stay 0 / 1)")
        return lines
