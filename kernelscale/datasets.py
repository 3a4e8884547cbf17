"""Data: the synthetic problems of the seeds and loaders for the real data sets.

Real data are never shipped with the package: loaders take a path, or find the
named data sets under a data directory (``data_dir=``, the ``KERNELSCALE_DATA``
environment variable, or ``../shared/datasets`` beside the project when present).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file, make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from ._validation import csr_int32

__all__ = [
    "data_dir", "load_svmlight", "load_a9a", "load_mnist_idx", "load_mnist10k",
    "make_seed000_problem",
]

_PROJECT_ROOT = Path(__file__).resolve().parent.parent


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
    except ValueError as exc:
        raise ValueError(f"{path}: not a valid svmlight file ({exc}).") from exc
    return csr_int32(X.tocsr()), y


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
