"""Exact kernels: agreement with scikit-learn, dtypes, memory budget, errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import pairwise as skp

from kernelscale import MemoryBudgetError, config_context
from kernelscale.kernels import (
    iter_kernel_blocks,
    kernel_diagonal,
    laplacian_kernel,
    linear_kernel,
    pairwise_kernel,
    polynomial_kernel,
    rbf_kernel,
    resolve_gamma,
)

RNG = np.random.default_rng(42)
X = RNG.normal(size=(300, 12)) + 3.0  # an offset makes the RBF expansion cancel
Y = RNG.normal(size=(70, 12)) + 3.0

CASES = [
    ("linear", {}, lambda a, b: skp.linear_kernel(a, b)),
    ("polynomial", {"gamma": 0.1, "degree": 3, "coef0": 1.5},
     lambda a, b: skp.polynomial_kernel(a, b, gamma=0.1, degree=3, coef0=1.5)),
    ("rbf", {"gamma": 0.07}, lambda a, b: skp.rbf_kernel(a, b, gamma=0.07)),
    ("laplacian", {"gamma": 0.07}, lambda a, b: skp.laplacian_kernel(a, b, gamma=0.07)),
]


@pytest.mark.parametrize("kernel, params, reference", CASES, ids=[c[0] for c in CASES])
def test_matches_sklearn_float64(kernel, params, reference):
    K = pairwise_kernel(X, Y, kernel, **params)
    assert K.dtype == np.float64
    np.testing.assert_allclose(K, reference(X, Y), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("kernel, params, reference", CASES, ids=[c[0] for c in CASES])
def test_float32_in_float32_out(kernel, params, reference):
    K = pairwise_kernel(X.astype(np.float32), Y.astype(np.float32), kernel, **params)
    assert K.dtype == np.float32
    np.testing.assert_allclose(K, reference(X, Y), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kernel, params, reference", CASES, ids=[c[0] for c in CASES])
def test_sparse_input_matches_dense(kernel, params, reference):
    Xs = sp.random(200, 40, density=0.005, random_state=0, format="csr")  # sparse path
    Xd = sp.random(200, 40, density=0.3, random_state=1, format="csr")  # densified path
    for M in (Xs, Xd):
        np.testing.assert_allclose(
            pairwise_kernel(M, M[:30], kernel, **params),
            reference(M.toarray(), M[:30].toarray()), rtol=1e-6, atol=1e-12,
        )


@pytest.mark.parametrize("kernel", ["linear", "polynomial", "rbf", "laplacian"])
def test_blocking_does_not_change_the_result(kernel):
    whole = pairwise_kernel(X, Y, kernel, gamma=0.05)
    blocked = pairwise_kernel(X, Y, kernel, gamma=0.05, memory_budget=8 * 12 * 3 * 7)
    np.testing.assert_allclose(blocked, whole, rtol=1e-12)
    rows = [b for _, _, b in iter_kernel_blocks(X, Y, kernel, gamma=0.05, memory_budget=50_000)]
    assert len(rows) > 1
    np.testing.assert_allclose(np.vstack(rows), whole, rtol=1e-12)


def test_named_helpers():
    np.testing.assert_allclose(linear_kernel(X, Y), X @ Y.T)
    np.testing.assert_allclose(rbf_kernel(X, Y, gamma=0.1), skp.rbf_kernel(X, Y, gamma=0.1))
    np.testing.assert_allclose(
        laplacian_kernel(X, Y, gamma=0.1), skp.laplacian_kernel(X, Y, gamma=0.1)
    )
    np.testing.assert_allclose(
        polynomial_kernel(X, Y, gamma=0.1, degree=2, coef0=0.0),
        skp.polynomial_kernel(X, Y, gamma=0.1, degree=2, coef0=0.0),
    )


def test_gamma_scale_and_auto_follow_sklearn_convention():
    assert resolve_gamma("scale", X) == pytest.approx(1.0 / (X.shape[1] * X.var()))
    assert resolve_gamma("auto", X) == pytest.approx(1.0 / X.shape[1])
    Xs = sp.csr_matrix(X)
    assert resolve_gamma("scale", Xs) == pytest.approx(resolve_gamma("scale", X))
    assert resolve_gamma("scale", np.ones((5, 3))) == 1.0  # zero variance
    np.testing.assert_allclose(
        rbf_kernel(X, Y), skp.rbf_kernel(X, Y, gamma=1.0 / (12 * X.var()))
    )


def test_callable_kernel_and_its_errors():
    K = pairwise_kernel(X, Y, lambda a, b, c=1.0: c * a @ b.T, kernel_params={"c": 2.0})
    np.testing.assert_allclose(K, 2.0 * X @ Y.T)
    with pytest.raises(ValueError, match="returned shape"):
        pairwise_kernel(X, Y, lambda a, b: a @ a.T)
    with pytest.raises(ValueError, match="NaN or infinite"):
        pairwise_kernel(X, Y, lambda a, b: np.full((len(a), len(b)), np.nan))


def test_kernel_diagonal():
    for kernel in ("linear", "polynomial", "rbf", "laplacian"):
        np.testing.assert_allclose(
            kernel_diagonal(X, kernel, gamma=0.1),
            np.diag(pairwise_kernel(X, kernel=kernel, gamma=0.1)), rtol=1e-10,
        )
    np.testing.assert_allclose(
        kernel_diagonal(X[:5], lambda a, b: a @ b.T), np.sum(X[:5] ** 2, axis=1)
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kernel": "rbff"}, "Unknown kernel='rbff'"),
        ({"gamma": 0.0}, "gamma must be .* > 0"),
        ({"gamma": -1.0}, "gamma must be .* > 0"),
        ({"gamma": "sometimes"}, "Unknown gamma='sometimes'"),
        ({"kernel": "polynomial", "degree": 0}, "degree must be an integer >= 1"),
        ({"kernel": "rbf", "kernel_params": {"a": 1}}, "only used with a callable"),
    ],
)
def test_bad_parameters_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pairwise_kernel(X, Y, **kwargs)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="same number of columns"):
        pairwise_kernel(X, Y[:, :5])
    with pytest.raises(ValueError, match="NaN"):
        pairwise_kernel(np.where(X > 4, np.nan, X))
    with pytest.raises(ValueError, match="infinity"):
        pairwise_kernel(np.where(X > 4, np.inf, X))
    with pytest.raises(ValueError, match="Expected 2D array"):
        pairwise_kernel(X[0])
    with pytest.raises(ValueError, match="0 sample"):
        pairwise_kernel(np.empty((0, 3)))


def test_budget_too_small_for_one_row():
    with pytest.raises(MemoryBudgetError, match="raise memory_budget to at least"):
        pairwise_kernel(X, Y, memory_budget=10)
    with config_context(memory_budget=10):
        with pytest.raises(MemoryBudgetError):
            pairwise_kernel(X, Y)


def test_peak_memory_respects_budget(peak_memory):
    big = RNG.normal(size=(20_000, 50))
    landmarks = big[:200].copy()
    out = np.empty((20_000, 200))
    budget = 2**20
    with peak_memory() as meter:
        pairwise_kernel(big, landmarks, gamma=0.02, memory_budget=budget, out=out)
    # temporaries of the blocks + the prepared landmarks (80 KB) and small change
    assert meter.peak < budget + 200_000
    with peak_memory() as meter:
        pairwise_kernel(big, landmarks, gamma=0.02, memory_budget=64 * 2**20, out=out)
    assert meter.peak > 4 * budget  # the budget, not luck, kept the first call small


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_narrow_kernels_in_float32_have_no_subnormal_values(kernel):
    # a narrow kernel in float32 underflows; subnormal values slow every later GEMM
    # several times on x86, so values below sqrt(tiny) are exactly 0 instead
    from sklearn.metrics import pairwise

    from kernelscale import Nystroem
    from kernelscale.kernels import make_kernel, tiny_floor

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(300, 60)), rng.normal(size=(200, 60))
    gamma = 0.8 if kernel == "rbf" else 1.4  # typical exponents near float32 underflow
    prepared = make_kernel(kernel, gamma=gamma).prepare(Y, np.float32)
    K = np.empty((300, 200), dtype=np.float32)
    prepared.evaluate(X.astype(np.float32), K)
    tiny = np.finfo(np.float32).tiny
    assert np.sum((K != 0) & (np.abs(K) < tiny)) == 0
    assert np.sum(K == 0) > 0 and np.all(K[K != 0] >= tiny_floor(np.float32))
    exact = getattr(pairwise, f"{kernel}_kernel")(X, Y, gamma=gamma)
    np.testing.assert_allclose(K, exact, atol=2e-7, rtol=1e-4)
    Z = Nystroem(n_components=150, kernel=kernel, gamma=gamma, random_state=0).fit(Y) \
        .transform(X)
    assert Z.dtype == np.float32 and np.sum((Z != 0) & (np.abs(Z) < tiny)) == 0


@pytest.mark.parametrize("in_place", [False, True], ids=["out", "in-place"])
def test_float32_exp_of_exponents_is_within_1e7_of_float64(in_place):
    # the vectorised float32 exp of the RBF / Laplacian blocks: every exponent in
    # [exp_floor, 0] (both ends included), exactly 0 below the floor, exact at 0
    from kernelscale.kernels._compiled import exp_floor
    from kernelscale.kernels._exp import exp_block32

    floor = exp_floor(np.float32)
    rng = np.random.default_rng(3)
    D = np.concatenate([np.linspace(0.0, -floor, 6995), rng.uniform(0, 120, 3000),
                        [0.0, -floor, np.nextafter(-floor, np.float32(np.inf)), np.inf]])
    D = D.astype(np.float32).reshape(-1, 11)  # 11 columns: the SIMD loops' remainders too
    out = D.copy() if in_place else np.full_like(D, np.nan)
    got = exp_block32(out if in_place else D, -1.0, floor, out)
    exponent = -D.astype(np.float64)
    inside = exponent >= floor
    reference = np.where(inside, np.exp(exponent), 0.0)
    assert np.all(got[~inside] == 0.0) and np.all(got[inside] > 0.0)
    rel = np.abs(got[inside] - reference[inside]) / reference[inside]
    assert rel.max() < 1.2e-7  # numpy's own float32 exp: ~2e-7 on the same points
    assert np.all(got[D == 0] == 1.0)


def test_float32_rbf_block_matches_float64_expansion():
    # the fused exponent + exp pass against the float64 exp of the same float32
    # exponents (the unfused pass's); the expansion's own rounding is not the exp's
    from kernelscale.kernels._compiled import exp_floor, rbf_exponent
    from kernelscale.kernels._exp import rbf_exp32

    rng = np.random.default_rng(4)
    A = (0.3 * rng.normal(size=(97, 23))).astype(np.float32)
    B = A[:61] + np.float32(0.01)
    xs, ys = np.einsum("ij,ij->i", A, A), np.einsum("ij,ij->i", B, B)
    dots = A @ B.T
    got = dots.copy()
    rbf_exp32(got, xs, ys, exp_floor(np.float32))
    exponent = dots.copy()
    rbf_exponent(exponent, xs, ys, exp_floor(np.float32))
    np.testing.assert_allclose(got, np.exp(exponent.astype(np.float64)), rtol=1.2e-7, atol=0)


def test_a_kernel_without_sparse_products_cannot_be_prepared_sparse():
    import scipy.sparse as sp

    from kernelscale.kernels import Laplacian
    from kernelscale.kernels._base import SparsePreparedKernel

    with pytest.raises(ValueError, match="has no sparse products"):
        SparsePreparedKernel(Laplacian(1.0), sp.eye(3, format="csr"), np.float64)
