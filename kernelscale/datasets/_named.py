"""The named data sets (a9a, MNIST-10k) found under a data directory, and ``load_data``."""

from __future__ import annotations

import os
from pathlib import Path

from ._file_chunks import NpyChunks
from ._files import (
    FORMATS,
    check_finite_array,
    guess_format,
    load_csv,
    load_mnist_idx,
    load_npz,
    sniff_delimiter,
    tidy_labels,
)
from ._svmlight import load_svmlight

__all__ = ["DATASETS", "data_dir", "check_dataset", "load_a9a", "load_mnist10k", "load_dataset",
           "load_data"]

# name -> (files it needs, where they come from)
_SOURCES = {
    "a9a": (("a9a", "a9a.t"), "LIBSVM's copy of UCI Adult, "
            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html#a9a"),
    "mnist10k": (("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
                 "the MNIST test set, http://yann.lecun.com/exdb/mnist/ (or any mirror)"),
}

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


def check_dataset(name, data_directory=None):
    """Return the directory holding the files of the named data set, or say what is missing.

    Parameters
    ----------
    name : {"a9a", "mnist10k"}
    data_directory : str or Path, default=None
        None uses :func:`data_dir`.

    Returns
    -------
    directory : Path

    Raises
    ------
    FileNotFoundError
        Naming the files that are missing, where they come from, and where to put them.

    Examples
    --------
    >>> from kernelscale.datasets import check_dataset
    >>> try:
    ...     check_dataset("a9a", "/")
    ... except FileNotFoundError as exc:
    ...     print(str(exc)[:44])
    a9a is not in '/': it needs the files a9a an
    """
    if name not in _SOURCES:
        raise ValueError(f"Unknown data set {name!r}; named data sets: {', '.join(_SOURCES)}.")
    files, origin = _SOURCES[name]
    directory = data_dir(data_directory)
    where = f"in {str(directory)!r}" if directory is not None else \
        "in any data directory (none was found)"
    if directory is not None and all((directory / f).is_file() for f in files):
        return directory
    raise FileNotFoundError(
        f"{name} is not {where}: it needs the files {' and '.join(files)} ({origin}); put "
        "them in one folder and point KERNELSCALE_DATA (or --data-dir) at it, or place them "
        "in ../shared/datasets beside the project.")


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
    directory = check_dataset("a9a", data_directory)
    X_train, y_train = load_svmlight(directory / "a9a", n_features=123)
    X_test, y_test = load_svmlight(directory / "a9a.t", n_features=123)
    return X_train, y_train, X_test, y_test


def load_mnist10k(data_directory=None):
    """MNIST-10k as the benchmarks use it: the 10,000 test images, pixels / 255,
    the first 8,000 for training and the last 2,000 for testing.

    Returns
    -------
    X_train, y_train, X_test, y_test
        float32 arrays of shape (8000, 784) / (2000, 784) and int labels 0..9.
    """
    directory = check_dataset("mnist10k", data_directory)
    X, y = load_mnist_idx(directory / "t10k-images-idx3-ubyte.gz",
                          directory / "t10k-labels-idx1-ubyte.gz")
    return X[:8000], y[:8000], X[8000:], y[8000:]


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
        CSV separator; None detects it (comma, semicolon, tab or bar; tab for
        ``.tsv``).
    data_directory : str or Path, default=None
        Where named data sets live; None uses :func:`data_dir`.

    Returns
    -------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None
        Integral labels as int64 (svmlight's ``+1`` / ``-1`` become ``1`` / ``-1``).
    """
    if format not in FORMATS:
        raise ValueError(f"Unknown data format {format!r}; choose from {', '.join(FORMATS)}.")
    text = str(source)
    name, _, split = text.partition(":")
    if not Path(text).exists() and name in DATASETS:
        if split not in ("", "train", "test"):
            raise ValueError(f"Unknown split {split!r} of {name}; use {name}:train or "
                             f"{name}:test.")
        X_train, y_train, X_test, y_test = load_dataset(name, data_directory)
        X, y = (X_test, y_test) if split == "test" else (X_train, y_train)
        return X, tidy_labels(y)
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
            delimiter = "\t" if ".tsv" in [s.lower() for s in path.suffixes] \
                else sniff_delimiter(path)
        X, y = load_csv(path, label_column=label_column, delimiter=delimiter)
    elif kind == "npy":
        data = NpyChunks(path, label_column)
        X, y = data.head(data.n_samples)
        check_finite_array(X, path)
    else:
        X, y = load_npz(path)
    return X, (None if y is None else tidy_labels(y))
