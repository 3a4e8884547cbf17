"""OpenBLAS's threaded SYRK / POTRF crash the process on large symmetric matrices
(float64 Cholesky of 16,000 Nystrom centres: SIGSEGV on 2 threads): such steps run on
one BLAS thread. The crash itself needs 2 GB matrices and minutes, so these tests check
the rule and that the large factorisations go through it."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import kernelscale._parallel as parallel
from kernelscale._parallel import SYMMETRIC_THREADS_BYTES, large_symmetric_blas
from kernelscale.solvers.falkon import _preconditioner


def _blas_threads():
    return max(info["num_threads"] for info in threadpool_info()
               if info["user_api"] == "blas")


def test_large_symmetric_matrices_run_on_one_blas_thread():
    before = _blas_threads()
    if before < 2:
        pytest.skip("BLAS runs on one thread here: nothing to limit")
    large = int(np.ceil(np.sqrt(SYMMETRIC_THREADS_BYTES / 8)))
    with large_symmetric_blas(large, 8):
        assert _blas_threads() == 1
    assert _blas_threads() == before
    with large_symmetric_blas(large - 1, 8), large_symmetric_blas(1000, 4):
        assert _blas_threads() == before  # below the size: BLAS keeps its threads
    # the crash sizes measured: float64 16,000 and float32 28,000 are above the rule
    assert 16_000 ** 2 * 8 >= SYMMETRIC_THREADS_BYTES
    assert 28_000 ** 2 * 4 >= SYMMETRIC_THREADS_BYTES


def test_falkon_factors_its_centres_through_the_rule(monkeypatch):
    if _blas_threads() < 2:
        pytest.skip("BLAS runs on one thread here: nothing to limit")
    monkeypatch.setattr(parallel, "SYMMETRIC_THREADS_BYTES", 1)
    seen = []
    lapack = _preconditioner._lapack

    def spy(name, W):
        routine = lapack(name, W)

        def call(*args, **kwargs):
            seen.append((name, _blas_threads()))
            return routine(*args, **kwargs)
        return call
    monkeypatch.setattr(_preconditioner, "_lapack", spy)
    rng = np.random.default_rng(0)
    A = rng.normal(size=(50, 5))
    _preconditioner.FalkonPreconditioner(A @ A.T + np.eye(50), 0.1, np.float64)
    assert {name for name, _ in seen} >= {"potrf", "lauum"}
    assert all(threads == 1 for _, threads in seen)
