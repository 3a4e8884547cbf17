"""Chunked data sets: a re-iterable stream of ``(X, y)`` row chunks, for data larger than memory.

Every data set yields ``(X, y)`` chunks of at most ``chunk_rows`` rows and can be
iterated again (each pass re-reads the source), which is what multi-pass
solvers need. Only one chunk is held at a time. The file readers are in
``_file_chunks``.
"""

from __future__ import annotations

import numpy as np

from .._validation import resolve_memory_budget
from ._synthetic import iter_nonlinear_chunks

__all__ = ["ChunkedDataset", "ArrayChunks", "NonlinearChunks", "default_chunk_rows",
           "random_rows"]


def default_chunk_rows(n_features, memory_budget=None):
    """Rows per chunk so that a chunk and its parsing temporaries fit ``memory_budget``.

    A chunk is budgeted at 4 float64 copies of its rows (parsing, casting, the
    mapped block's input), and kept between 1,000 and 1,000,000 rows.

    Examples
    --------
    >>> from kernelscale.datasets import default_chunk_rows
    >>> default_chunk_rows(28, 256 * 2**20)
    299593
    """
    budget = resolve_memory_budget(memory_budget)
    per_row = 4 * 8 * max(int(n_features), 1)
    return int(min(max(budget // per_row, 1_000), 1_000_000))


class ChunkedDataset:
    """A data set read as consecutive ``(X, y)`` chunks; iterate it once per pass.

    Subclasses implement ``_chunks()`` (a generator of ``(X, y)``) and set
    ``n_features``. ``y`` is None for unlabeled data.

    Attributes
    ----------
    n_features : int
        Columns of ``X``.
    chunk_rows : int
        Rows per chunk (the last chunk may be shorter).
    """

    has_labels = True
    _kernelscale_chunked = True  # recognised by the estimators without importing this module

    def __init__(self, chunk_rows):
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
                or chunk_rows < 1:
            raise ValueError(f"chunk_rows must be a positive integer, got {chunk_rows!r}.")
        self.chunk_rows = int(chunk_rows)
        self._classes = None
        self._n_samples = None

    def __iter__(self):
        count = 0
        for X, y in self._chunks():
            count += X.shape[0]
            yield X, y
        if count == 0:
            raise ValueError(f"{self!r} holds no rows.")
        self._n_samples = count

    def __repr__(self):
        return f"{type(self).__name__}({self._describe()}, chunk_rows={self.chunk_rows})"

    def _describe(self):
        return ""

    @property
    def n_samples(self):
        """Rows in the data set (counted by one pass when not known up front)."""
        if self._n_samples is None:
            for _ in self:
                pass
        return self._n_samples

    def head(self, n_rows):
        """The first ``n_rows`` rows (fewer if the data set is shorter) as ``(X, y)``."""
        import scipy.sparse as sp

        parts_X, parts_y, have = [], [], 0
        for X, y in self._chunks():
            take = min(X.shape[0], n_rows - have)
            parts_X.append(X[:take])
            parts_y.append(None if y is None else y[:take])
            have += take
            if have >= n_rows:
                break
        if not parts_X:
            raise ValueError(f"{self!r} holds no rows.")
        X = sp.vstack(parts_X, format="csr") if sp.issparse(parts_X[0]) \
            else np.concatenate(parts_X)
        y = None if parts_y[0] is None else np.concatenate(parts_y)
        return X, y

    def sample(self, n_rows, random_state=None):
        """Rows ``(X, y)`` to fit a feature map on.

        The first ``n_rows`` rows here, since a random sample of a text file would
        cost a full pass; readers that can read random rows cheaply override this.
        """
        return self.head(n_rows)

    def classes(self):
        """Sorted distinct labels (one pass over the data, cached)."""
        if not self.has_labels:
            raise ValueError(f"{self!r} has no labels; a classifier needs a label column.")
        if self._classes is None:
            seen = None
            for _, y in self:
                found = np.unique(y)
                seen = found if seen is None else np.union1d(seen, found)
            self._classes = seen
        return self._classes


def random_rows(n, n_rows, random_state=None):
    """Sorted indices of ``n_rows`` of ``n`` rows drawn at random (all rows when fewer).

    Examples
    --------
    >>> from kernelscale.datasets import random_rows
    >>> random_rows(5, 10).tolist()
    [0, 1, 2, 3, 4]
    """
    from sklearn.utils import check_random_state

    if n_rows >= n:
        return np.arange(n)
    return np.sort(check_random_state(random_state).choice(n, n_rows, replace=False))


class ArrayChunks(ChunkedDataset):
    """In-memory (or memory-mapped) arrays served in chunks.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), default=None
    chunk_rows : int, default=10_000

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale.datasets import ArrayChunks
    >>> data = ArrayChunks(np.zeros((25, 3)), np.arange(25) % 2, chunk_rows=10)
    >>> [X.shape[0] for X, _ in data], data.classes().tolist()
    ([10, 10, 5], [0, 1])
    """

    def __init__(self, X, y=None, chunk_rows=10_000):
        super().__init__(chunk_rows)
        if not hasattr(X, "shape") or len(X.shape) != 2:
            X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        if y is not None:
            y = np.asarray(y)
            if y.ndim != 1 or len(y) != X.shape[0]:
                raise ValueError(f"y must be 1-D with {X.shape[0]} labels, got shape {y.shape}.")
        self.X, self.y = X, y
        self.has_labels = y is not None
        self.n_features = X.shape[1]
        self._n_samples = X.shape[0]

    def _describe(self):
        return f"{self.X.shape[0]} x {self.n_features}"

    def sample(self, n_rows, random_state=None):
        """``n_rows`` rows drawn at random (all rows, in order, when there are fewer)."""
        rows = random_rows(self.X.shape[0], n_rows, random_state)
        return self.X[rows], (None if self.y is None else self.y[rows])

    def _chunks(self):
        for start in range(0, self.X.shape[0], self.chunk_rows):
            stop = start + self.chunk_rows
            yield self.X[start:stop], (None if self.y is None else self.y[start:stop])


class NonlinearChunks(ChunkedDataset):
    """:func:`make_nonlinear_problem` as a stream (no file; rows do not depend on the chunking).

    Parameters
    ----------
    n_samples : int
    chunk_rows : int, default=65536
    **params
        ``n_features``, ``n_informative``, ``n_components``, ``flip_y``,
        ``random_state`` of :func:`make_nonlinear_problem`.

    Examples
    --------
    >>> from kernelscale.datasets import NonlinearChunks
    >>> data = NonlinearChunks(1000, chunk_rows=400, random_state=1)
    >>> [X.shape for X, _ in data]
    [(400, 28), (400, 28), (200, 28)]
    """

    def __init__(self, n_samples, chunk_rows=65_536, **params):
        super().__init__(chunk_rows)
        self.params = params
        self.n_features = int(params.get("n_features", 28))
        self._n_samples = int(n_samples)
        self._classes = np.array([0, 1])

    def _describe(self):
        return f"{self._n_samples} rows"

    def _chunks(self):
        yield from iter_nonlinear_chunks(self._n_samples, self.chunk_rows, **self.params)
