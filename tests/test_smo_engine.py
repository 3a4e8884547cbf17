"""SMO is one decomposition around one pair solver (issue 37).

:func:`smo` picks the working set: the whole problem when its store holds the
problem's matrix, batches of rows otherwise; every working set is solved by the
same compiled pair solver, with the same violation and shrinking rules.
"""

import importlib
import tracemalloc

import numpy as np
import pytest

from kernelscale.kernels import make_kernel
from kernelscale.solvers import KernelRows
from kernelscale.solvers.smo import MatrixCache, MatrixRows, RowCache, smo, smo_dense, smo_one_class

compiled = importlib.import_module("kernelscale.solvers.smo._dense_compiled")
dense = importlib.import_module("kernelscale.solvers.smo._dense")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 5))
    y = np.sign(X[:, 0] * X[:, 1] + 0.4 * rng.normal(size=600))
    kernel = make_kernel("rbf", X, gamma=0.3)
    return X, y, kernel, kernel.gram(X, dtype=np.float32)


def test_smo_over_a_matrix_is_the_pair_solver_on_the_whole_problem(problem):
    X, y, _, K = problem
    rows = MatrixRows(K, y.size, 2**24)
    got = smo(rows, MatrixCache(rows), y, np.full(y.size, 5.0), tol=1e-4)
    ref = smo_dense(K, y, np.full(y.size, 5.0), tol=1e-4)
    np.testing.assert_array_equal(got["alpha"], ref["alpha"])
    assert got["intercept"] == ref["intercept"]
    assert got["n_iter"] == ref["n_iter"] and got["converged"]


def test_the_whole_problem_and_working_sets_reach_one_optimum(problem):
    X, y, kernel, K = problem
    C = np.full(y.size, 5.0)
    rows = KernelRows(X, kernel, 2**24)
    batched = smo(rows, RowCache(rows, 2**20), y, C, tol=1e-5, working_set_size=64)
    matrix = MatrixRows(K, y.size, 2**24)
    whole = smo(matrix, MatrixCache(matrix), y, C, tol=1e-5)
    assert whole["objective"] == pytest.approx(batched["objective"], rel=1e-6)
    assert whole["intercept"] == pytest.approx(batched["intercept"], abs=1e-3)


def test_one_class_on_a_matrix_reports_its_gap(problem, monkeypatch):
    X, _, _, _ = problem
    kernel = make_kernel("rbf", X, gamma=3.0)  # ~1,800 pair updates
    K = kernel.gram(X, dtype=np.float32)
    plain = smo_one_class(K, 0.3, tol=1e-5)
    # a report every 1,000 pair updates: the bar moves while the solver runs
    monkeypatch.setattr(dense, "_PROGRESS_PAIRS", 0)
    seen = []
    watched = smo_one_class(K, 0.3, tol=1e-5, monitor=lambda *a: seen.append(a))
    assert len(seen) >= 2, "the whole-matrix solver reported once, at the end"
    assert seen[-1][1] < 1e-5 and all(report[2] == X.shape[0] for report in seen)
    assert watched["objective"] == pytest.approx(plain["objective"], rel=1e-7)
    np.testing.assert_allclose(watched["alpha"].sum(), 0.3 * X.shape[0])
    # the same problem through the row cache, by working sets
    rows = KernelRows(X, kernel, 2**24)
    cached = smo_one_class(rows, 0.3, tol=1e-5, cache_bytes=2**20)
    assert plain["objective"] == pytest.approx(cached["objective"], rel=1e-6)


def test_the_whole_matrix_route_compacts_only_inside_its_budget(problem):
    # regression: smo_dense grew a 0.64 n^2 compaction buffer no memory plan counted;
    # through smo the buffer is the rows' temporaries budget, and a smaller block than
    # would fit it is simply not compacted
    X, y, _, K = problem
    n = y.size
    C = np.full(n, 0.5)  # most variables at the bound: shrinking compacts

    def peak(work_bytes):
        alpha, G = np.zeros(n), np.full(n, -1.0)
        tracemalloc.start()
        dense.solve_whole(K, y, alpha, G, C, np.full(n, -1.0), tol=1e-4, max_iter=10**7,
                          work_bytes=work_bytes)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak, 0.5 * float(alpha @ (G - 1.0))

    free, objective_free = peak(None)
    held, objective_held = peak(0)
    assert free > 0.25 * n * n * K.itemsize, "the free run never compacted: a weak test"
    assert held < 0.05 * n * n * K.itemsize
    assert objective_held == pytest.approx(objective_free, rel=1e-6)


def _be_shrunk(F, up, low, C, g_up, g_low):
    """LIBSVM's ``be_shrunk``, written out in numpy."""
    only_up = up & ~low
    only_low = low & ~up
    return (C <= 0) | (~up & ~low) | (only_up & (-F > g_low)) | (only_low & (F > g_up))


@pytest.mark.parametrize("seed", range(5))
def test_one_shrinking_rule_and_one_violation(seed):
    rng = np.random.default_rng(seed)
    n = 200
    y = rng.choice([-1.0, 1.0], n)
    C = rng.choice([0.0, 1.0, 2.0], n, p=[0.1, 0.6, 0.3])
    alpha = np.minimum(C, rng.choice([0.0, 0.5, 5.0], n))
    F = rng.normal(size=n)
    up, low = np.empty(n, bool), np.empty(n, bool)
    compiled.set_flags(y, alpha, C, up, low, n)
    np.testing.assert_array_equal(up, np.where(y > 0, alpha < C, alpha > 0))
    np.testing.assert_array_equal(low, np.where(y > 0, alpha > 0, alpha < C))
    g_up, g_low = compiled.violation_bounds(F, up, low, n)
    assert g_up == F[up].max() and g_low == (-F[low]).max()
    keep = np.empty(n, bool)
    kept = compiled.shrink_marks(F, up, low, C, n, g_up - 0.5, g_low - 0.5, keep)
    np.testing.assert_array_equal(~keep, _be_shrunk(F, up, low, C, g_up - 0.5, g_low - 0.5))
    assert kept == keep.sum()
