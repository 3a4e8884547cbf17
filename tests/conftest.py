"""Shared fixtures: small data sets, the real-data directory, a peak-memory meter."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from kernelscale.datasets import data_dir


@pytest.fixture
def gaussian_data():
    """1000 x 20 standard Gaussian rows: the data of the issue's convergence checks."""
    return np.random.default_rng(0).standard_normal((1000, 20))


@pytest.fixture
def a9a():
    """The a9a train/test splits, or a skip when ../shared/datasets is absent."""
    directory = data_dir()
    if directory is None or not (directory / "a9a").is_file():
        pytest.skip("a9a not found: set KERNELSCALE_DATA or provide ../shared/datasets")
    from kernelscale.datasets import load_a9a

    return load_a9a(directory)


@pytest.fixture
def mnist10k():
    """MNIST-10k (8,000 train / 2,000 test, pixels / 255), or a skip when absent."""
    directory = data_dir()
    if directory is None or not (directory / "t10k-images-idx3-ubyte.gz").is_file():
        pytest.skip("MNIST-10k not found: set KERNELSCALE_DATA or provide ../shared/datasets")
    from kernelscale.datasets import load_mnist10k

    return load_mnist10k(directory)


class PeakMemory:
    """Peak bytes allocated (numpy buffers included) inside a ``with`` block."""

    def __enter__(self):
        tracemalloc.start()
        tracemalloc.reset_peak()
        self._base = tracemalloc.get_traced_memory()[0]
        return self

    def __exit__(self, *exc):
        self.peak = tracemalloc.get_traced_memory()[1] - self._base
        tracemalloc.stop()
        return False


@pytest.fixture
def peak_memory():
    return PeakMemory


@pytest.fixture
def fold_svm_values():
    """The reference of the feature-SVM grids: a fold's linear SVM refitted from scratch
    on the map's features (``Z``), its validation decision values as columns."""
    from kernelscale import LinearSVC

    def values(Z, y, train, val, C, class_weight=None):
        model = LinearSVC(C=C, solver="newton", class_weight=class_weight,
                          tol=1e-10).fit(Z[train], y[train])
        scores = model.decision_function(Z[val])
        return scores[:, None] if scores.ndim == 1 else scores
    return values

# tests/data holds fixtures (and the script that wrote them), not tests
collect_ignore = ["data"]


@pytest.fixture
def interruptible():
    """``Popen``'s ``preexec_fn`` for a child that a test interrupts: SIGINT back to its
    default, so the child's Python turns it into KeyboardInterrupt (a shell that starts
    the suite in the background ignores SIGINT, and children inherit that)."""
    import signal

    return lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
