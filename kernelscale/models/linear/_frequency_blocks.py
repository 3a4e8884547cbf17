"""The per-iteration random Fourier blocks of :class:`DoublySGDSVC`, regenerated from seeds.

Block ``t`` of a fitted model is drawn from the seed ``(seed_, t)``, so the
model stores only coefficients. A :class:`FrequencyBlocks` keeps the blocks it
has drawn while they fit the memory budget; it belongs to whoever created it
(a fit, or one ``predict`` call), never to the estimator, so that prediction
does not mutate a model that several threads may use at once.
"""

from __future__ import annotations

import math

import numpy as np

from ..._validation import dense_rows, iter_row_blocks

__all__ = ["FrequencyBlocks"]


class FrequencyBlocks:
    """Frequency blocks of one model: drawn on demand, kept while they fit ``memory_budget``.

    Parameters
    ----------
    seed : int
        The model's ``seed_``.
    n_features : int
    block_size : int
        Frequencies per block (each gives a cosine and a sine feature).
    kernel : {"rbf", "laplacian"}
    gamma : float
    memory_budget : int
        Bytes for the kept blocks and the temporaries of one evaluation.
    """

    def __init__(self, seed, n_features, block_size, kernel, gamma, memory_budget):
        self.seed, self.n_features, self.block_size = seed, n_features, block_size
        self.kernel, self.gamma, self.memory_budget = kernel, gamma, memory_budget
        self._kept = []

    def block(self, t):
        """Frequencies of block ``t`` (n_features x block_size, float32), from its seed."""
        rng = np.random.default_rng([self.seed, t])
        shape = (self.n_features, self.block_size)
        if self.kernel == "rbf":
            W = rng.standard_normal(shape) * math.sqrt(2.0 * self.gamma)
        else:
            W = rng.standard_cauchy(shape) * self.gamma
        return W.astype(np.float32)

    def frequencies(self, start, stop):
        """Frequencies of blocks ``start:stop`` side by side (kept while they fit the budget)."""
        d, r = self.n_features, self.block_size
        kept = self._kept
        for t in range(len(kept), stop):
            if (t + 1) * d * r * 4 > self.memory_budget:
                break
            kept.append(self.block(t))
        if stop <= start:
            return np.empty((d, 0), np.float32)
        return np.hstack([kept[t] if t < len(kept) else self.block(t) for t in range(start, stop)])

    def features(self, Xb, start, stop):
        """``[cos(X W), sin(X W)]`` of blocks ``start:stop``, per block, scaled (float32)."""
        r = self.block_size
        n_blocks = stop - start
        proj = (Xb @ self.frequencies(start, stop)).reshape(Xb.shape[0], n_blocks, r)
        out = np.empty((Xb.shape[0], n_blocks, 2 * r), dtype=np.float32)
        np.cos(proj, out=out[:, :, :r])
        np.sin(proj, out=out[:, :, r:])
        # each block alone estimates the kernel: k_t(x, y) = phi_t(x) . phi_t(y)
        out *= np.float32(1.0 / math.sqrt(r))
        return out.reshape(Xb.shape[0], n_blocks * 2 * r)

    def function(self, Xb, coef, intercept):
        """``f(Xb)`` for the coefficient blocks ``coef`` (float64, n x n_problems)."""
        n_blocks = coef.shape[0]
        out = np.zeros((Xb.shape[0], coef.shape[2]))
        if n_blocks == 0:
            return out + intercept
        width = 2 * self.block_size
        per_block = 4 * (Xb.shape[0] * width * 2 + self.n_features * self.block_size)
        chunk = max(1, int(self.memory_budget // max(per_block, 1)))
        for start in range(0, n_blocks, chunk):
            stop = min(start + chunk, n_blocks)
            phi = self.features(Xb, start, stop)
            out += phi @ coef[start:stop].reshape(-1, coef.shape[2]).astype(np.float32)
        return out + intercept

    def row_blocks(self, X, width):
        per_row = 4 * (X.shape[1] + 3 * width)
        return iter_row_blocks(X.shape[0], per_row, self.memory_budget,
                               what="a block of features")

    def all_values(self, X, coef):
        """``f(x_i)`` without intercept for every row of ``X`` (float64, n x problems)."""
        out = np.empty((X.shape[0], coef.shape[2]))
        for start, stop in self.row_blocks(X, 2 * self.block_size * max(coef.shape[0], 1)):
            out[start:stop] = self.function(dense_rows(X, start, stop, np.float32), coef, 0.0)
        return out

    def block_values(self, X, t):
        """Block ``t``'s features of every row of ``X`` (float32, n x 2 block_size)."""
        out = np.empty((X.shape[0], 2 * self.block_size), dtype=np.float32)
        for start, stop in self.row_blocks(X, 2 * self.block_size):
            out[start:stop] = self.features(dense_rows(X, start, stop, np.float32), t, t + 1)
        return out

    def scores(self, X, coef, intercept):
        """``f(X)`` for every row, mapped in row blocks under the budget (float64)."""
        out = np.empty((X.shape[0], coef.shape[2]))
        per_row = 4 * (X.shape[1] + 4 * coef.shape[1])
        for start, stop in iter_row_blocks(X.shape[0], per_row, self.memory_budget,
                                           what="a block of random features"):
            out[start:stop] = self.function(dense_rows(X, start, stop, np.float32), coef,
                                            intercept)
        return out
