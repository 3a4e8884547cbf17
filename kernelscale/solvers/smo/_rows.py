"""Kernel rows of the exact SVM: computed in batches by GEMM, kept in an LRU cache of slots."""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from ..._parallel import parallel_guard
from ..._validation import MemoryBudgetError, iter_row_blocks
from ._compiled import rows_dot
from ._settings import SMO_SETTINGS

__all__ = ["KernelRows", "RowCache"]

_CHUNK_BYTES = SMO_SETTINGS.batch_bytes
_BLOCK_MAX_FEATURES = SMO_SETTINGS.block_max_features


class KernelRows:
    """Kernel rows ``k(x_i, X[columns])`` for any set of rows, computed in batches.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features), or the Gram matrix
        The training data, or with ``kernel="precomputed"`` the square training
        Gram matrix.
    kernel : kernelscale.kernels.Kernel or "precomputed"
    memory_budget : int
        Bytes for the temporaries of one batch of rows.
    densify : bool, default=None
        Keep a sparse ``X`` as a dense float32 working copy (what a memory plan
        decided); None: where that copy fits ``memory_budget``.

    Rows are kept once in the kernel's float32 working representation (scaled,
    shifted) when they fit the budget, so every batch of kernel rows is a gather
    and one GEMM; a sparse matrix too large to densify stays sparse.
    """

    def __init__(self, X, kernel, memory_budget, *, densify=None):
        self.kernel = kernel
        self.precomputed = isinstance(kernel, str) and kernel == "precomputed"
        self.memory_budget = memory_budget
        self.n = X.shape[0]
        self.n_features = X.shape[1]
        self._full = None
        if self.precomputed:
            self.X = X
        elif not sp.issparse(X) or (densify if densify is not None
                                    else X.shape[0] * X.shape[1] * 4 <= memory_budget):
            self._full = kernel.prepare(X, np.float32)
            self.X = self._full.Yw
        else:
            self.X = X.tocsr()
        self.set_columns(np.arange(self.n))
        self.evaluated = 0  # kernel rows computed so far (for the verbose report)

    def _prepared(self, columns):
        if self._full is not None:
            return self._full.subset(columns)
        return self.kernel.prepare(self.X[columns], np.float32)

    def _evaluate(self, prepared, rows, out):
        if self._full is not None:
            prepared.evaluate_work(self.X[rows], out)
        else:
            prepared.evaluate(self.X[rows], out)

    def _row_bytes(self, n_columns):
        return 4 * (n_columns + 2 * self.n_features)

    def set_columns(self, columns):
        """Make rows cover ``X[columns]`` (in that order) from now on."""
        self.columns = np.asarray(columns, dtype=np.intp)
        self._kernel = None if self.precomputed else self._prepared(self.columns)

    def compute(self, rows, out):
        """Write ``k(X[rows], X[columns])`` into ``out``.

        ``out`` is C-contiguous float32 of shape ``(len(rows), len(columns))``.
        """
        rows = np.asarray(rows, dtype=np.intp)
        width = self.columns.size
        per_row = self._row_bytes(width)
        for start, stop in iter_row_blocks(rows.size, per_row, self.memory_budget,
                                           what="a kernel row"):
            chunk = rows[start:stop]
            if self.precomputed:
                out[start:stop, :width] = self.X[np.ix_(chunk, self.columns)]
            else:
                # callers pass C-contiguous rows of exactly this width
                self._evaluate(self._kernel, chunk, out[start:stop])
        self.evaluated += rows.size
        return out

    def block(self, indices):
        """``k(X[indices], X[indices])`` (float32) when computing it beats reading it from rows.

        A working set's ``q x q`` block gathered from cached rows is one cache
        miss per entry (the rows are far wider than the CPU cache); computed by
        one small GEMM it costs ``2 d`` flops an entry. Returns None where the
        gather is the cheaper (many features, a precomputed or sparse matrix).
        Its float32 rounding may differ from the cached rows' in the last bit:
        the block only steers the sub-problem, and the outer loop's stopping
        test reads the gradient the cached rows keep.

        Parameters
        ----------
        indices : ndarray of int
            Variables (rows of ``X``).

        Returns
        -------
        block : ndarray of shape (len(indices), len(indices)), float32, or None
        """
        if self._full is None or self.precomputed or self.n_features > _BLOCK_MAX_FEATURES:
            return None
        indices = np.asarray(indices, dtype=np.intp)
        out = np.empty((indices.size, indices.size), dtype=np.float32)
        self._full.subset(indices).evaluate_work(self.X[indices], out)
        return out

    def cross(self, rows, columns, coef):
        """Return ``k(X[rows], X[columns]) @ coef`` (float64), in row blocks."""
        rows = np.asarray(rows, dtype=np.intp)
        out = np.zeros(rows.size)
        if rows.size == 0 or columns.size == 0:
            return out
        if self.precomputed:
            for start, stop in iter_row_blocks(rows.size, 8 * columns.size, self.memory_budget,
                                               what="a kernel row"):
                block = self.X[np.ix_(rows[start:stop], columns)]
                rows_dot(block, coef, out[start:stop])
            return out
        kernel = self._prepared(columns)
        buffer = None  # one block's memory for every block (the first is the largest)
        for start, stop in iter_row_blocks(rows.size, self._row_bytes(columns.size),
                                           self.memory_budget, what="a kernel row"):
            if buffer is None:
                buffer = np.empty((stop - start, columns.size), dtype=np.float32)
            block = buffer[: stop - start]
            self._evaluate(kernel, rows[start:stop], block)
            rows_dot(block, coef, out[start:stop])  # float32 rows, float64 sums
        return out


class RowCache:
    """Kernel rows in a fixed pool of slots, evicted least recently used first.

    Parameters
    ----------
    rows : KernelRows
    cache_bytes : int
        Size of the pool. It must hold at least two rows.
    batch_bytes : int, default=16 MiB
        New rows not landing in consecutive slots are computed this many bytes
        at a time into one buffer, then scattered.
    """

    def __init__(self, rows, cache_bytes, batch_bytes=_CHUNK_BYTES):
        n = rows.n
        n_slots = int(cache_bytes // (4 * max(n, 1)))
        if n_slots < 2:
            raise MemoryBudgetError(
                f"cache_size={cache_bytes / 2**20:.3g} MB cannot hold two kernel rows of "
                f"{n} float32 values ({8 * n / 2**20:.3g} MB); raise cache_size to at least "
                f"{np.ceil(8 * n / 2**20 * 100) / 100:.2f} MB (ideally hundreds of rows)."
            )
        self.rows = rows
        self.n_slots = min(n_slots, n)
        self.storage = np.empty((self.n_slots, n), dtype=np.float32)
        self.slot_of = np.full(n, -1, dtype=np.intp)
        self.index_of = np.full(self.n_slots, -1, dtype=np.intp)
        self.last_used = np.zeros(self.n_slots, dtype=np.int64)
        self.clock = 0
        self.width = n  # valid columns of every stored row
        self.hits = 0
        self.misses = 0
        self._scratch = np.empty(0, dtype=np.float32)
        self.batch_bytes = int(batch_bytes)

    @property
    def holds_all(self):
        """True when every row fits: nothing is ever evicted."""
        return self.n_slots >= self.rows.n

    def whole(self):
        """None: rows are computed as the working sets ask for them (never a whole matrix)."""
        return None

    def fetch(self, indices):
        """Return the slots holding the rows of ``indices`` (computing the missing ones)."""
        self.clock += 1
        slots = self.slot_of[indices]
        missing = np.flatnonzero(slots < 0)
        self.hits += indices.size - missing.size
        self.misses += missing.size
        if missing.size:
            free = np.flatnonzero(self.index_of < 0)
            need = missing.size - free.size
            if need > 0:
                # protect the slots this call already uses from eviction
                age = self.last_used.copy()
                age[slots[slots >= 0]] = np.iinfo(np.int64).max
                taken = self.index_of >= 0
                candidates = np.flatnonzero(taken)
                victims = candidates[np.argpartition(age[candidates], need - 1)[:need]]
                self.slot_of[self.index_of[victims]] = -1
                self.index_of[victims] = -1
                free = np.concatenate([free, victims])
            new_slots = free[: missing.size]
            new_indices = indices[missing]
            order = np.argsort(new_slots)
            new_slots, new_indices = new_slots[order], new_indices[order]
            self._compute_into(new_indices, new_slots)
            self.slot_of[new_indices] = new_slots
            self.index_of[new_slots] = new_indices
            slots = self.slot_of[indices]
        self.last_used[slots] = self.clock
        return slots

    def _compute_into(self, indices, slots):
        # one batch (one GEMM) for all missing rows, then scattered into their slots
        width = self.width
        lo = slots[0]
        if slots[-1] - lo + 1 == slots.size and width == self.storage.shape[1]:
            self.rows.compute(indices, self.storage[lo : lo + slots.size])
            return
        # the batch goes through one buffer kept across fetches: a fresh one per
        # fetch cost its page faults every time (tens of MB at n = 50,000), and
        # numpy's fancy-indexed copy into the slots ran on one thread
        step = min(slots.size, max(1, int(self.batch_bytes // (4 * width))))
        if self._scratch.size < step * width:
            self._scratch = np.empty(step * width, dtype=np.float32)
        for start in range(0, slots.size, step):
            stop = min(start + step, slots.size)
            buf = self._scratch[: (stop - start) * width].reshape(stop - start, width)
            self.rows.compute(indices[start:stop], buf)
            _scatter_rows(self.storage, slots[start:stop], buf)

    def columns_of(self, variables):
        """Columns of the stored rows that hold the variables (their own indices)."""
        return variables

    def clear(self):
        """Forget every row."""
        self.slot_of[:] = -1
        self.index_of[:] = -1

    def restart(self, width):
        """Forget every row; rows computed from now on have ``width`` columns."""
        self.clear()
        self.width = int(width)

    def compact(self, keep, forget=None):
        """Keep only the columns at positions ``keep`` (increasing) of every stored row.

        ``forget``: variables whose rows are dropped instead (shrunk ones: no
        working set reads their rows before the next unshrink, which recomputes
        full rows), so that their slots are free and not copied.
        """
        if forget is not None:
            forget = np.asarray(forget, dtype=np.intp)
            slots = self.slot_of[forget]
            slots = slots[slots >= 0]
            self.slot_of[self.index_of[slots]] = -1
            self.index_of[slots] = -1
        used = np.flatnonzero(self.index_of >= 0)
        _compact_rows(self.storage, used, np.asarray(keep, dtype=np.intp))
        self.width = keep.size


@parallel_guard
@numba.njit(parallel=True, cache=True)
def _scatter_rows(data, slots, rows):  # pragma: no cover - compiled
    width = rows.shape[1]
    for k in numba.prange(slots.size):
        dst = data[slots[k]]
        src = rows[k]
        for j in range(width):
            dst[j] = src[j]


@parallel_guard
@numba.njit(parallel=True, cache=True)
def _compact_rows(data, slots, keep):  # pragma: no cover - compiled
    # keep is increasing with keep[k] >= k, so an in-place forward gather is safe
    for s in numba.prange(slots.size):
        row = data[slots[s]]
        for k in range(keep.size):
            row[k] = row[keep[k]]
