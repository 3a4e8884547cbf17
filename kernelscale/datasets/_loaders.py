"""Whole-file loaders, the named data sets and the synthetic problems."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import os
import zipfile
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file, make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from .._validation import csr_int32

__all__ = [
    "DATASETS", "data_dir", "load_svmlight", "load_csv", "load_npz", "load_a9a",
    "load_mnist_idx", "load_mnist10k", "load_dataset", "load_data", "guess_format",
    "make_seed000_problem", "make_nonlinear_problem", "iter_nonlinear_chunks",
]

_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def data_dir(path=None):
    """Return the directory holding the named data sets, or None if there is none.

    Parameters
    ----------
    path : str or Path, default=None
        Explicit directory; used as is (it must exist).

    Returns
    -------
    directory : Path or None
        ``path``, else ``$KERNELSCALE_DATA``, else the first existing of
        ``./../shared/datasets`` and ``<project root>/../shared/datasets``.

    Examples
    --------
    >>> from kernelscale.datasets import data_dir
    >>> d = data_dir()
    >>> d is None or d.is_dir()
    True
    """
    if path is not None:
        path = Path(path)
        if not path.is_dir():
            raise FileNotFoundError(f"Data directory {str(path)!r} does not exist.")
        return path
    env = os.environ.get("KERNELSCALE_DATA")
    if env:
        return data_dir(env)
    for candidate in (Path.cwd().parent / "shared" / "datasets",
                      _PROJECT_ROOT.parent / "shared" / "datasets"):
        if candidate.is_dir():
            return candidate
    return None


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
        where = _first_bad_svmlight_line(path)
        raise ValueError(f"{path}: not a valid svmlight file"
                         f"{': ' + where if where else ''} ({exc}).") from exc
    return csr_int32(X.tocsr()), y


def _open_text(path):
    """Open a text file, decompressing .gz / .bz2 by suffix."""
    path = Path(path)
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    if path.suffix == ".bz2":
        return io.TextIOWrapper(bz2.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace", newline="")


def _first_bad_svmlight_line(path):
    """Describe the first line sklearn's parser rejects, for an error message (or None)."""
    try:
        with _open_text(path) as fh:
            for number, line in enumerate(fh, start=1):
                reason = _svmlight_line_problem(line)
                if reason:
                    text = line.strip()
                    return f"line {number}: {reason} in {text[:60]!r}"
    except (OSError, EOFError, ValueError) as exc:
        return f"cannot be read ({exc})"
    return None


def _svmlight_line_problem(line):
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


def _is_number(text):
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
        with _open_text(path) as fh:
            for number, fields in enumerate(csv.reader(fh, delimiter=delimiter), start=1):
                if not fields or all(not f.strip() for f in fields):
                    continue
                if width is None:
                    width = len(fields)
                    label_at = _label_position(label_column, fields, width, path)
                    feature_fields = [f for k, f in enumerate(fields) if k != label_at]
                    is_header = header is True or (
                        header == "infer" and not all(_is_number(f) for f in feature_fields))
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
    return X, (None if label_at is None else _tidy_labels(np.asarray(labels)))


def _label_position(label_column, fields, width, path):
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


def _tidy_labels(y):
    """Labels as integers when they all are, else floats when numbers, else strings."""
    y = np.asarray(y)
    if y.dtype.kind in "US":
        if not all(_is_number(v) for v in y):
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


def load_a9a(data_directory=None):
    """Load the a9a (UCI Adult) train and test splits, 123 binary features.

    Parameters
    ----------
    data_directory : str or Path, default=None
        Directory with files ``a9a`` and ``a9a.t``; None uses :func:`data_dir`.

    Returns
    -------
    X_train, y_train, X_test, y_test
        CSR matrices of shape (32561, 123) and (16281, 123), labels in {-1, +1}.
    """
    directory = data_dir(data_directory)
    if directory is None:
        raise FileNotFoundError(
            "No data directory: set KERNELSCALE_DATA to the folder holding a9a and a9a.t."
        )
    X_train, y_train = load_svmlight(directory / "a9a", n_features=123)
    X_test, y_test = load_svmlight(directory / "a9a.t", n_features=123)
    return X_train, y_train, X_test, y_test


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


def load_mnist10k(data_directory=None):
    """MNIST-10k as the benchmarks use it: the 10,000 test images, pixels / 255,
    the first 8,000 for training and the last 2,000 for testing.

    Returns
    -------
    X_train, y_train, X_test, y_test
        float32 arrays of shape (8000, 784) / (2000, 784) and int labels 0..9.
    """
    directory = data_dir(data_directory)
    if directory is None:
        raise FileNotFoundError(
            "No data directory: set KERNELSCALE_DATA to the folder holding "
            "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz."
        )
    X, y = load_mnist_idx(directory / "t10k-images-idx3-ubyte.gz",
                          directory / "t10k-labels-idx1-ubyte.gz")
    return X[:8000], y[:8000], X[8000:], y[8000:]


def make_seed000_problem(n_samples=100_000, *, random_state=0, split_random_state=42):
    """The synthetic classification problem of the blog post (seed 000), standardized.

    ``make_classification(n_samples, random_state=random_state)`` (20 features,
    2 informative), split 75/25 with ``split_random_state``, then standardized
    with statistics of the training part.

    Parameters
    ----------
    n_samples : int, default=100_000
        Total rows before the split.
    random_state : int, default=0
        Seed of ``make_classification``.
    split_random_state : int, default=42
        Seed of ``train_test_split``.

    Returns
    -------
    X_train, X_test, y_train, y_test : ndarray
        float64 features and int labels in {0, 1}.

    Examples
    --------
    >>> from kernelscale.datasets import make_seed000_problem
    >>> X_train, X_test, y_train, y_test = make_seed000_problem(1000)
    >>> X_train.shape, X_test.shape
    ((750, 20), (250, 20))
    """
    X, y = make_classification(n_samples=n_samples, random_state=random_state)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, random_state=split_random_state
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


DATASETS = {
    "a9a": (load_a9a, "UCI Adult, svmlight files a9a / a9a.t, 123 binary features"),
    "mnist10k": (load_mnist10k, "MNIST test set, first 8,000 train / last 2,000 test"),
}
"""Named data sets found under :func:`data_dir`: name -> (loader, description)."""


def load_dataset(name, data_directory=None):
    """Load a named data set's train and test splits.

    Parameters
    ----------
    name : {"a9a", "mnist10k"}
        See :data:`DATASETS`.
    data_directory : str or Path, default=None
        Where its files are; None uses :func:`data_dir`.

    Returns
    -------
    X_train, y_train, X_test, y_test
    """
    if name not in DATASETS:
        raise ValueError(f"Unknown data set {name!r}; named data sets: {', '.join(DATASETS)}.")
    return DATASETS[name][0](data_directory)


_FORMATS = ("auto", "svmlight", "csv", "npz", "npy")


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


def load_data(source, *, format="auto", n_features=None, label_column=-1, delimiter=None,
              data_directory=None):
    """Load ``(X, y)`` from a file or a named split, as the command line does.

    Parameters
    ----------
    source : str or Path
        A path, or a named data set's split: ``"a9a"`` / ``"a9a:train"``,
        ``"a9a:test"``, ``"mnist10k"``, ``"mnist10k:test"`` (a path that exists
        wins over a name).
    format : {"auto", "svmlight", "csv", "npz", "npy"}, default="auto"
        "auto" decides by suffix: ``.csv`` / ``.tsv`` CSV, ``.npz`` / ``.npy`` NumPy
        (a ``.npy`` file holds the label in ``label_column``),
        anything else svmlight (each optionally ``.gz`` / ``.bz2``).
    n_features : int, default=None
        Columns of an svmlight file (pass the training width for a test file).
    label_column : int, str or None, default=-1
        CSV or ``.npy`` label column (see :func:`load_csv`).
    delimiter : str, default=None
        CSV separator; None means "," (tab for ``.tsv``).
    data_directory : str or Path, default=None
        Where named data sets live; None uses :func:`data_dir`.

    Returns
    -------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None
        Integral labels as int64 (svmlight's ``+1`` / ``-1`` become ``1`` / ``-1``).
    """
    if format not in _FORMATS:
        raise ValueError(f"Unknown data format {format!r}; choose from {', '.join(_FORMATS)}.")
    text = str(source)
    name, _, split = text.partition(":")
    if not Path(text).exists() and name in DATASETS:
        if split not in ("", "train", "test"):
            raise ValueError(f"Unknown split {split!r} of {name}; use {name}:train or "
                             f"{name}:test.")
        X_train, y_train, X_test, y_test = load_dataset(name, data_directory)
        X, y = (X_test, y_test) if split == "test" else (X_train, y_train)
        return X, _tidy_labels(y)
    path = Path(text)
    if not path.exists():
        raise FileNotFoundError(f"No such file: {text!r} (named data sets: "
                                f"{', '.join(DATASETS)}, e.g. a9a:test).")
    if path.is_dir():
        raise IsADirectoryError(f"{text!r} is a directory; pass a data file.")
    kind = guess_format(path) if format == "auto" else format
    if kind == "svmlight":
        X, y = load_svmlight(path, n_features=n_features)
    elif kind == "csv":
        if delimiter is None:
            delimiter = "\t" if ".tsv" in [s.lower() for s in path.suffixes] else ","
        X, y = load_csv(path, label_column=label_column, delimiter=delimiter)
    elif kind == "npy":
        from ._chunked import NpyChunks

        data = NpyChunks(path, label_column)
        X, y = data.head(data.n_samples)
    else:
        X, y = load_npz(path)
    return X, (None if y is None else _tidy_labels(y))


_CHUNK = 65_536  # rows per independently seeded block of the nonlinear generator


def _nonlinear_function(n_informative, n_components, random_state):
    rng = np.random.default_rng([random_state, 0x5EED])
    W = rng.normal(scale=1.0 / np.sqrt(n_informative), size=(n_informative, n_components))
    b = rng.uniform(0, 2 * np.pi, size=n_components)
    a = rng.normal(size=n_components) / np.sqrt(n_components)
    # threshold at the median of the score, so that the classes are balanced
    calibration = rng.normal(size=(20_000, n_informative))
    threshold = float(np.median(np.cos(calibration @ W + b) @ a))
    return W, b, a, threshold


def _nonlinear_block(block, rows, function, n_features, n_informative, flip_y, random_state,
                     rows_seed):
    W, b, a, threshold = function
    rng = np.random.default_rng([random_state, block] if rows_seed is None
                                else [random_state, block, rows_seed])
    X = rng.normal(size=(rows, n_features))
    y = (np.cos(X[:, :n_informative] @ W + b) @ a > threshold).astype(np.int64)
    flip = rng.random(rows) < flip_y
    y[flip] = 1 - y[flip]
    return X.astype(np.float32), y


def iter_nonlinear_chunks(n_samples, chunk_rows=_CHUNK, *, n_features=28, n_informative=6,
                          n_components=20, flip_y=0.05, random_state=0, rows_seed=None):
    """Yield ``(X, y)`` chunks of :func:`make_nonlinear_problem` without holding all rows.

    The rows do not depend on ``chunk_rows``: they are generated in fixed blocks
    seeded by ``(random_state, block)`` and re-cut, so a streamed data set equals
    the in-memory one.

    Parameters
    ----------
    n_samples : int
        Total rows.
    chunk_rows : int, default=65536
        Rows per yielded chunk (the last one may be shorter).
    n_features, n_informative, n_components, flip_y, random_state, rows_seed
        As in :func:`make_nonlinear_problem`.

    Yields
    ------
    X : ndarray of shape (rows, n_features), float32
    y : ndarray of shape (rows,), int64 in {0, 1}
    """
    if n_samples < 1 or chunk_rows < 1:
        raise ValueError(f"n_samples and chunk_rows must be >= 1, got {n_samples}, {chunk_rows}.")
    if not 1 <= n_informative <= n_features:
        raise ValueError(f"Need 1 <= n_informative <= n_features, got {n_informative} and "
                         f"{n_features}.")
    function = _nonlinear_function(n_informative, n_components, random_state)
    pending_X, pending_y, pending, produced, block = [], [], 0, 0, 0
    while produced < n_samples:
        while pending < min(chunk_rows, n_samples - produced):
            rows = min(_CHUNK, n_samples - produced - pending)
            X, y = _nonlinear_block(block, rows, function, n_features, n_informative, flip_y,
                                    random_state, rows_seed)
            pending_X.append(X)
            pending_y.append(y)
            pending += rows
            block += 1
        X, y = np.concatenate(pending_X), np.concatenate(pending_y)
        take = min(chunk_rows, n_samples - produced)
        yield X[:take], y[:take]
        pending_X, pending_y, pending = [X[take:]], [y[take:]], len(X) - take
        produced += take


def make_nonlinear_problem(n_samples=100_000, *, n_features=28, n_informative=6,
                           n_components=20, flip_y=0.05, random_state=0, rows_seed=None):
    """A synthetic nonlinear binary problem of any size, for scaling runs (HIGGS-like width).

    Features are standard normal; the label is the sign of a fixed random smooth
    function of the first ``n_informative`` features (a sum of ``n_components``
    random cosines, thresholded at its median so that the classes are balanced),
    with a fraction ``flip_y`` of labels flipped. A linear model reaches about
    0.76 test accuracy on it, an RBF-kernel model approaches ``1 - flip_y``.

    Parameters
    ----------
    n_samples : int, default=100_000
    n_features : int, default=28
    n_informative : int, default=6
    n_components : int, default=20
        Cosines in the decision function.
    flip_y : float, default=0.05
        Fraction of labels flipped at random (the Bayes error).
    random_state : int, default=0
        Seeds both the function and the rows.
    rows_seed : int, default=None
        Draws other rows of the same problem (a held-out set): rows are seeded
        by ``(random_state, block, rows_seed)`` when given.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float32
    y : ndarray of shape (n_samples,), int64 in {0, 1}

    Examples
    --------
    >>> from kernelscale.datasets import make_nonlinear_problem
    >>> X, y = make_nonlinear_problem(1000)
    >>> X.shape, X.dtype.name, sorted(set(y.tolist()))
    ((1000, 28), 'float32', [0, 1])
    """
    chunks = list(iter_nonlinear_chunks(
        n_samples, _CHUNK, n_features=n_features, n_informative=n_informative,
        n_components=n_components, flip_y=flip_y, random_state=random_state,
        rows_seed=rows_seed))
    return np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])
