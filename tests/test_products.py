"""Kernel products on numba's threads: exact values, BLAS held at one thread and released."""

import threading

import numba
import numpy as np
import pytest
from sklearn.metrics import pairwise as skp
from threadpoolctl import threadpool_info

from kernelscale.kernels import _products, blas_on_numba_threads, gram_product, make_kernel
from kernelscale.solvers import KernelRows
from kernelscale.solvers.smo import RowCache, smo

RNG = np.random.default_rng(7)


def blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture
def parts_calls(monkeypatch):
    """Count the calls that go through the parts product."""
    calls = []
    real = _products._parts_gemm

    def spy(*args):
        calls.append(args[-1])
        return real(*args)

    monkeypatch.setattr(_products, "_parts_gemm", spy)
    return calls


needs_two_threads = pytest.mark.skipif(numba.get_num_threads() < 2,
                                       reason="the parts product needs two numba threads")


@needs_two_threads
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("n, m, d", [(300, 1000, 20), (257, 400, 123), (3, 40000, 7)])
def test_the_parts_product_is_the_matrix_product(parts_calls, dtype, rtol, n, m, d):
    X = RNG.normal(size=(n, d)).astype(dtype)
    Y = RNG.normal(size=(m, d)).astype(dtype)
    out = np.full((n, m), np.nan, dtype=dtype)
    with blas_on_numba_threads():
        gram_product(X, Y, out)
    assert parts_calls == [min(numba.get_num_threads(), n)]
    expected = X.astype(np.float64) @ Y.T.astype(np.float64)
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


@pytest.mark.parametrize("case", ["outside the hold", "small", "strided rows", "mixed dtypes",
                                  "one row", "no features"])
def test_other_products_fall_back_to_matmul(parts_calls, case):
    X = RNG.normal(size=(300, 20)).astype(np.float32)
    Y = RNG.normal(size=(1000, 20)).astype(np.float32)
    held = case != "outside the hold"
    if case == "small":
        X, Y = X[:10], Y[:10]
    elif case == "strided rows":
        X = X[::2]
    elif case == "mixed dtypes":
        Y = Y.astype(np.float64)
    elif case == "one row":
        X = X[:1]
    elif case == "no features":
        X, Y = X[:, :0], Y[:, :0]
    out = np.empty((X.shape[0], Y.shape[0]), dtype=np.result_type(X, Y))
    if held:
        with blas_on_numba_threads():
            gram_product(X, Y, out)
    else:
        gram_product(X, Y, out)
    assert parts_calls == []
    np.testing.assert_allclose(out, X @ Y.T, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("kernel, params, reference", [
    ("linear", {}, skp.linear_kernel),
    ("polynomial", {"gamma": 0.1, "degree": 3, "coef0": 1.0},
     lambda a, b: skp.polynomial_kernel(a, b, gamma=0.1, degree=3, coef0=1.0)),
    ("rbf", {"gamma": 0.05}, lambda a, b: skp.rbf_kernel(a, b, gamma=0.05)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_inside_the_hold_match_sklearn(kernel, params, reference, dtype):
    X = RNG.normal(size=(400, 15)) + 2.0
    Y = RNG.normal(size=(600, 15)) + 2.0
    with blas_on_numba_threads():
        K = make_kernel(kernel, X, **params).gram(X, Y, dtype=dtype)
    expected = reference(X, Y)
    tol = 2e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(K, expected, rtol=tol, atol=tol * np.abs(expected).max())


def test_the_hold_limits_blas_and_restores_it_nested_and_on_error():
    before = blas_threads()
    with blas_on_numba_threads():
        assert set(blas_threads()) == {1}
        with blas_on_numba_threads():
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {1}  # the outer hold still holds
    assert blas_threads() == before
    with pytest.raises(RuntimeError):
        with blas_on_numba_threads():
            raise RuntimeError("inside")
    assert blas_threads() == before
    assert _products._hold["owner"] is None


def test_the_first_holder_restores_blas_on_its_own_thread(parts_calls):
    # a second thread's hold shares the limit while it lasts, then its
    # products go back to BLAS's threads; nothing stays limited afterwards
    before = blas_threads()
    entered, first_left, second_may_leave = (threading.Event() for _ in range(3))
    seen = {}
    X = RNG.normal(size=(300, 20)).astype(np.float32)
    out = np.empty((300, 300), dtype=np.float32)

    def second():
        with blas_on_numba_threads():
            seen["while both hold"] = blas_threads()
            entered.set()
            first_left.wait(10)
            seen["after the first left"] = blas_threads()
            gram_product(X, X, out)
            second_may_leave.wait(10)

    thread = threading.Thread(target=second)
    with blas_on_numba_threads():
        thread.start()
        assert entered.wait(10)
    first_left.set()
    second_may_leave.set()
    thread.join(10)
    assert set(seen["while both hold"]) == {1}
    assert seen["after the first left"] == before
    assert parts_calls == []
    np.testing.assert_allclose(out, X @ X.T, rtol=1e-5, atol=1e-4)
    assert blas_threads() == before
    assert _products._hold["owner"] is None


def test_a_limit_that_does_not_take_leaves_the_products_on_blas(monkeypatch, parts_calls):
    class Ignored:
        def restore_original_limits(self):
            self.restored = True

    limiter = Ignored()

    class Controller:
        def limit(self, **_):
            return limiter

        def select(self, **_):
            return self

        def info(self):
            return [{"num_threads": 2}]

    monkeypatch.setitem(_products._hold, "controller", Controller())
    X = RNG.normal(size=(300, 20)).astype(np.float32)
    out = np.empty((300, 300), dtype=np.float32)
    with blas_on_numba_threads():
        gram_product(X, X, out)
    assert limiter.restored and parts_calls == []
    assert _products._hold["owner"] is None


def test_smo_solves_with_blas_at_one_thread():
    from kernelscale.kernels import RBF

    X = RNG.normal(size=(400, 6))
    y = np.where(X[:, 0] + 0.3 * RNG.normal(size=400) > 0, 1.0, -1.0)
    rows = KernelRows(X, RBF(0.2), 2**24)
    seen = []
    result = smo(rows, RowCache(rows, 2**22), y, np.ones(400),
                 monitor=lambda *_: seen.append(blas_threads()))
    assert result["converged"] and seen
    assert all(set(threads) == {1} for threads in seen)
    assert _products._hold["owner"] is None


def test_predict_from_many_threads_at_once_agrees_and_leaves_blas_as_it_was():
    from concurrent.futures import ThreadPoolExecutor

    from kernelscale.models import KernelSVC

    X = RNG.normal(size=(600, 8))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    X_test = RNG.normal(size=(3000, 8))
    model = KernelSVC(C=3.0).fit(X, y)
    expected = model.decision_function(X_test)
    before = blas_threads()
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: model.decision_function(X_test), range(8)))
    for scores in results:
        np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-5)
    assert blas_threads() == before
    assert _products._hold["owner"] is None
