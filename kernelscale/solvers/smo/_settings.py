"""The SMO solvers' tuning constants, in one place, each with the measurement that chose it.

FALKON's solver has its own (``solvers/falkon/_settings.py``); these are SMO's. They are not
parameters of the estimators (none changes the model, only how fast it is reached);
the compiled loops read them as module constants (``TAU = SMO_SETTINGS.tau``), which
numba freezes at compile time.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._planner import SMO_BATCH_BYTES

__all__ = ["SMOSettings", "SMO_SETTINGS"]


@dataclass(frozen=True)
class SMOSettings:
    """How SMO works, not what it solves.

    Attributes
    ----------
    tau : float
        Stands in for a non-positive curvature ``k_ii + k_jj - 2 k_ij`` of a pair
        (LIBSVM's ``TAU``).
    shrink_fraction : float
        The working-set solver shrinks once this share of the active variables can
        go: each shrink compacts every cached row, and at 0.05 the compactions took a
        fifth of a 20,000-row fit (interleaved medians of 7, 0.05 -> 0.2: synthetic
        20k 0.92 -> 0.76 s, binary 10 x 14k 0.25 -> 0.21 s, 50,000 x 22 1.88 ->
        1.65 s; a9a, 75k rows: 5-9% less).
    compact_keep : float
        The dense solver compacts its block only once at most this share of the
        working variables is kept.
    copy_cost : float
        A compaction copies ``n_keep^2`` entries and saves each later update three
        passes over the variables set aside; the updates done so far stand for those
        to come, and a copied entry counts this many scanned ones. Without the test,
        on the 6,000-row imbalanced grid's largest gamma (4,800 variables, a third at
        0) compactions and the rebuilds they force took 45% of the solve; 2..16 all
        gave the same times there.
    parallel_gather : int
        Below this many entries a block is gathered by one thread: starting the
        parallel gather cost more than it saved on a small class pair's block (the
        26-class set's 1,200-row pairs).
    batch_bytes : int
        New kernel rows are computed this many bytes at a time: small enough that the
        batch is not a fresh allocation each fetch, large enough that the GEMM keeps
        its speed (each batch reads all prepared columns again: a9a's are 16 MB, and
        4 MB batches made its fits slower). The memory planner's
        ``SMO_BATCH_BYTES``, which counts it in every plan.
    progress_pairs : int
        With a progress monitor, the whole-matrix solver stops to report its gap
        every ``progress_pairs * n`` pair updates (at least 1,000); each stop ends
        its shrinking (the shrunk gradients are rebuilt) and the next call starts
        it afresh. On a noisy 6,000-row problem over its matrix (C = 100, ~30 n
        pair updates, medians of 3) the reports cost: 20 n 6% (2 reports), 5 n 11%
        (6), 2 n 24% (16), 1 n 70% (31); without a monitor the solver never stops.
    block_max_features : int
        Up to this many features a working set's ``q x q`` kernel block is computed
        (2 d flops an entry) rather than gathered from cached rows (a cache miss an
        entry: ~50 ns on the 14,000-row binary set's fit, where the GEMM costs ~5 ns
        at d = 10).
    """

    tau: float = 1e-12
    shrink_fraction: float = 0.2
    compact_keep: float = 0.8
    copy_cost: float = 4.0
    parallel_gather: int = 1 << 18
    batch_bytes: int = SMO_BATCH_BYTES
    block_max_features: int = 256
    progress_pairs: int = 20


#: the settings every SMO solver runs with
SMO_SETTINGS = SMOSettings()
