"""The svmlight / LIBSVM format: the whole-file parser, its chunked reader, line diagnostics."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

from .._validation import csr_int32
from ._chunks import ChunkedDataset
from ._files import open_text, tidy_labels

__all__ = ["load_svmlight", "SvmlightChunks", "FeatureCountError", "svmlight_line_problem"]


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
    open_text(path).close()  # a binary file is refused in one line (not as a bad line)
    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, dtype=dtype)
    except (ValueError, OSError, EOFError) as exc:
        if n_features is not None and "n_features" in str(exc):
            largest = _largest_index(path)
            raise FeatureCountError(path, largest, n_features) from None
        where = first_bad_svmlight_line(path)
        # the line at fault says it all; sklearn's own text only when none was found
        raise ValueError(f"{path}: not a valid svmlight file: " +
                         (where if where else f"{exc}") + ".") from None
    if not np.all(np.isfinite(X.data)) or not np.all(np.isfinite(y)):
        where = first_bad_svmlight_line(path)
        raise ValueError(f"{path}: {where or 'a value is NaN or infinite'}; remove or impute "
                         "those values.")
    return csr_int32(X.tocsr()), y


class FeatureCountError(ValueError):
    """A data file with more feature columns than expected (a model's, for predict)."""

    def __init__(self, path, found, expected):
        self.path, self.found, self.expected = path, found, expected
        super().__init__(f"{path} has {found} features (its largest feature index), more than "
                         f"the {expected} expected.")


def _largest_index(path):
    largest = 0
    with open_text(path) as fh:
        for line in fh:
            for token in line.split("#", 1)[0].split()[1:]:
                index, sep, _ = token.partition(":")
                if sep and index.isdigit():
                    largest = max(largest, int(index))
    return largest


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
        label = float(tokens[0])
    except ValueError:
        return f"label {tokens[0]!r} is not a number"
    if not np.isfinite(label):
        return f"label {tokens[0]!r} is not a finite number"
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
        if not np.isfinite(value):
            return f"feature {index} is {value} (NaN or infinity)"
        if index <= last:
            return "feature indices are not sorted and unique"
        last = index
    return None


_INDEX = re.compile(rb"(\d+):")


class SvmlightChunks(ChunkedDataset):
    """An svmlight / LIBSVM file (optionally .gz / .bz2) read as CSR chunks.

    Parameters
    ----------
    path : str or Path
    n_features : int, default=None
        Columns; None finds the largest index with one pass over the file.
    chunk_rows : int, default=100_000
    zero_based : {"auto", True, False}, default="auto"
        Whether indices start at 0; "auto" decides for the whole file (one pass),
        as :func:`load_svmlight` does, so every chunk is read the same way.
    """

    def __init__(self, path, n_features=None, chunk_rows=100_000, zero_based="auto"):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"No svmlight file at {str(self.path)!r}.")
        if zero_based not in ("auto", True, False):
            raise ValueError(f"zero_based must be 'auto', True or False, got {zero_based!r}.")
        super().__init__(chunk_rows)
        if zero_based == "auto" or n_features is None:
            # one pass over the indices: a chunk without index 0 must not be read
            # one-based when the file is zero-based (as a whole-file load decides)
            smallest, largest = self._index_range()
            if zero_based == "auto":
                zero_based = smallest == 0
            if n_features is None:
                n_features = largest + 1 if zero_based else largest
        self.zero_based = bool(zero_based)
        self.n_features = int(n_features)

    def _describe(self):
        return repr(str(self.path))

    def _lines(self):
        import bz2
        import gzip

        opener = {".gz": gzip.open, ".bz2": bz2.open}.get(self.path.suffix, open)
        with opener(self.path, "rb") as fh:
            yield from fh

    def _index_range(self):
        smallest, largest = None, 0
        try:
            for line in self._lines():
                found = _INDEX.findall(line.split(b"#", 1)[0])
                if found:
                    values = [int(v) for v in found]
                    largest = max(largest, max(values))
                    low = min(values)
                    smallest = low if smallest is None else min(smallest, low)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{self.path}: cannot be read ({exc}).") from exc
        if smallest is None:
            raise ValueError(f"{self.path}: no features found; is this an svmlight file?")
        return smallest, largest

    def _chunks(self):
        lines, first = [], 1
        try:
            for number, line in enumerate(self._lines(), start=1):
                if not line.strip():
                    continue
                if not lines:
                    first = number
                lines.append(line if line.endswith(b"\n") else line + b"\n")
                if len(lines) == self.chunk_rows:
                    yield self._parse(lines, first)
                    lines = []
        except (OSError, EOFError) as exc:
            raise ValueError(f"{self.path}: cannot be read ({exc}).") from exc
        if lines:
            yield self._parse(lines, first)

    def _parse(self, lines, first):
        try:
            X, y = load_svmlight_file(io.BytesIO(b"".join(lines)), n_features=self.n_features,
                                      zero_based=self.zero_based)
        except ValueError as exc:
            self._raise_bad_line(lines, first, exc)
        if not (np.all(np.isfinite(X.data)) and np.all(np.isfinite(y))):
            self._raise_bad_line(lines, first, None)
        return csr_int32(X.tocsr()), tidy_labels(y)

    def _raise_bad_line(self, lines, first, exc):
        """Name the first line at fault (sklearn's own message only when none is found)."""
        for offset, line in enumerate(lines):
            text = line.decode("utf-8", "replace")
            problem = svmlight_line_problem(text)
            limit = self.n_features - (1 if self.zero_based else 0)
            if problem is None and any(int(v) > limit
                                       for v in _INDEX.findall(line.split(b"#", 1)[0])):
                problem = f"a feature index exceeds n_features={self.n_features}"
            if problem:
                raise ValueError(f"{self.path}: not a valid svmlight file: line "
                                 f"{first + offset}: {problem} in {text.strip()[:60]!r}.")
        raise ValueError(f"{self.path}: not a valid svmlight file ({exc}).")
