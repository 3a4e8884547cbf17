"""Synthetic problems: the blog post's classification set and a nonlinear problem of any size."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

__all__ = ["make_synthetic_problem", "make_nonlinear_problem", "iter_nonlinear_chunks"]


def make_synthetic_problem(n_samples=100_000, *, random_state=0, split_random_state=42):
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
    >>> from kernelscale.datasets import make_synthetic_problem
    >>> X_train, X_test, y_train, y_test = make_synthetic_problem(1000)
    >>> X_train.shape, X_test.shape
    ((750, 20), (250, 20))
    """
    X, y = make_classification(n_samples=n_samples, random_state=random_state)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, random_state=split_random_state
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


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
