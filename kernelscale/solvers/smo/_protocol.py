"""What :func:`smo` reads the kernel through: a source of kernel rows and a store of them.

LIBSVM's one ``Solver`` reads the kernel through an abstract ``QMatrix`` (``SVC_Q``,
``ONE_CLASS_Q``, ``SVR_Q``); here the same part is split in two, because the rows can
come from two places and be kept in two ways:

- a :class:`KernelRowSource` says what the kernel is over the solver's variables: how
  many there are, the block of a working set, a product with a kernel column block
  (for gradient rebuilds), and how many rows it computed. :class:`KernelRows` (rows of
  ``k(X, X)`` by GEMM), :class:`PairedRows` (SVR's ``2 n`` variables over ``n`` points)
  and :class:`MatrixRows` (a kernel matrix held whole) are the three.
- a :class:`RowStore` keeps rows for the solver: ``fetch`` gives the slots of
  ``storage`` that hold the variables' rows, ``columns_of`` which columns of a slot
  are the variables'. :class:`RowCache` (an LRU pool of computed rows) and
  :class:`MatrixCache` (the matrix itself: every row present) are the two.

A store that computes rows (:class:`ComputingRowStore`) reads them from a source that
can compute them (:class:`ComputedRows`) and may drop the columns of shrunk variables
(``compact``): only then does the solver ask the source to narrow its columns.
``tests/test_layers.py`` checks that every rows type implements its protocol.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["KernelRowSource", "ComputedRows", "RowStore", "ComputingRowStore"]


@runtime_checkable
class KernelRowSource(Protocol):
    """The kernel over the solver's variables."""

    #: the number of variables (``n``; SVR's ``2 n``)
    n: int
    #: kernel rows computed so far (reported by verbose solvers)
    evaluated: int
    #: bytes for the temporaries of :meth:`cross` (over a matrix held whole, of the
    #: pair solver's compacted blocks)
    memory_budget: int

    def block(self, variables: np.ndarray) -> np.ndarray | None:
        """The working set's kernel block (float32, ``len(variables)`` square), or None
        when the store's ``storage`` holds it and the solver gathers it from there."""

    def cross(self, rows: np.ndarray, columns: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``k(variables rows, variables columns) @ coef``, summed in float64."""


@runtime_checkable
class ComputedRows(KernelRowSource, Protocol):
    """A source that computes rows on demand, over a chosen set of columns."""

    def set_columns(self, columns: np.ndarray) -> None:
        """Rows computed from now on cover the variables ``columns`` only (shrinking)."""

    def compute(self, rows: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Write the rows of the variables ``rows`` into ``out`` (float32)."""


@runtime_checkable
class RowStore(Protocol):
    """Where the solver finds kernel rows."""

    #: True when every row is present (nothing is evicted or compacted)
    holds_all: bool
    #: the rows that can be held at once (bounds the working set)
    n_slots: int
    #: ``(slots, columns)`` float32: the storage the solver gathers blocks and
    #: gradient updates from
    storage: np.ndarray

    def fetch(self, indices: np.ndarray) -> np.ndarray:
        """The slots of ``storage`` holding the rows of the variables ``indices``."""

    def whole(self) -> np.ndarray | None:
        """The problem's whole kernel matrix (one row per variable) when the store is it:
        the working set is then the whole problem; None otherwise."""

    def columns_of(self, variables: np.ndarray) -> np.ndarray:
        """The columns of a slot that hold the variables."""

    def clear(self) -> None:
        """Forget every row held (a store holding all of them keeps them)."""


@runtime_checkable
class ComputingRowStore(RowStore, Protocol):
    """A store of computed rows, which may keep only the active variables' columns."""

    #: the valid columns of every stored row
    width: int

    def compact(self, keep: np.ndarray, forget: np.ndarray | None = None) -> None:
        """Keep only the columns at positions ``keep`` of every row; drop ``forget``'s rows."""

    def restart(self, width: int) -> None:
        """Forget every row; rows computed from now on have ``width`` columns."""
