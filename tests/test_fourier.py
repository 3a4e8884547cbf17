"""Random Fourier features: convergence, parity with scikit-learn, variants, errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import RBFSampler

from kernelscale import RandomFourierFeatures, kernel_approximation_error


def mean_error(X, seeds=range(3), **params):
    return np.mean([
        kernel_approximation_error(
            X, RandomFourierFeatures(random_state=s, **params), n_samples=1000, random_state=0
        )
        for s in seeds
    ])


def test_rbf_error_shrinks_like_inverse_sqrt_D_and_matches_sklearn(gaussian_data):
    X = gaussian_data
    small = mean_error(X, n_components=512, gamma=0.05)
    large = mean_error(X, n_components=8192, gamma=0.05)
    assert 3.4 < small / large < 4.7  # sqrt(8192 / 512) = 4
    assert large == pytest.approx(0.058, rel=0.1)
    sklearn_large = np.mean([
        kernel_approximation_error(
            X, RBFSampler(gamma=0.05, n_components=8192, random_state=s),
            kernel="rbf", gamma=0.05, n_samples=1000, random_state=0,
        )
        for s in range(3)
    ])
    assert abs(large - sklearn_large) <= 0.1 * sklearn_large


@pytest.mark.parametrize("n_components", [256, 1024])
def test_orthogonal_and_structured_beat_iid(gaussian_data, n_components):
    X = gaussian_data
    seeds = range(4)
    iid = mean_error(X, seeds, n_components=n_components, gamma=0.05, kind="sincos")
    orf = mean_error(X, seeds, n_components=n_components, gamma=0.05, kind="sincos",
                     sampling="orthogonal")
    sorf = mean_error(X, seeds, n_components=n_components, gamma=0.05, kind="sincos",
                      sampling="structured")
    assert orf < 0.9 * iid
    assert sorf < 0.9 * iid
    assert sorf == pytest.approx(orf, rel=0.15)


def test_laplacian_converges(gaussian_data):
    X = gaussian_data
    small = mean_error(X, kernel="laplacian", n_components=256, gamma=0.02)
    large = mean_error(X, kernel="laplacian", n_components=4096, gamma=0.02)
    assert 3.0 < small / large < 5.3  # sqrt(16) = 4


@pytest.mark.parametrize("n_components", [1, 7, 64, 65])
@pytest.mark.parametrize("kind", ["cos", "sincos"])
@pytest.mark.parametrize("sampling", ["iid", "orthogonal", "structured"])
def test_shapes_scale_and_unbiasedness(kind, sampling, n_components):
    X = np.random.default_rng(1).normal(size=(40, 5))
    rff = RandomFourierFeatures(n_components=n_components, kind=kind, sampling=sampling,
                                gamma=0.1, dtype="float64", random_state=0)
    Z = rff.fit_transform(X)
    assert Z.shape == (40, n_components)
    assert np.all(np.isfinite(Z))
    # the self-similarity k(x, x) = 1 is estimated without bias by ||z(x)||^2
    if kind == "sincos" and n_components % 2 == 0:
        np.testing.assert_allclose(np.sum(Z**2, axis=1), 1.0, rtol=1e-12)


def test_sincos_odd_is_unbiased():
    X = np.random.default_rng(2).normal(size=(30, 4))
    K = np.exp(-0.2 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    estimates = [
        (lambda Z: Z @ Z.T)(RandomFourierFeatures(
            n_components=3, kind="sincos", gamma=0.2, dtype="float64", random_state=s
        ).fit_transform(X))
        for s in range(3000)
    ]
    assert np.abs(np.mean(estimates, axis=0) - K).max() < 0.05


def test_deterministic_under_random_state_and_seed_sensitive():
    X = np.random.default_rng(0).normal(size=(50, 6))
    for sampling in ("iid", "orthogonal", "structured"):
        a = RandomFourierFeatures(sampling=sampling, random_state=3).fit_transform(X)
        b = RandomFourierFeatures(sampling=sampling, random_state=3).fit_transform(X)
        c = RandomFourierFeatures(sampling=sampling, random_state=4).fit_transform(X)
        np.testing.assert_array_equal(a, b)
        assert not np.allclose(a, c)


def test_dtypes():
    X = np.random.default_rng(0).normal(size=(20, 3))
    assert RandomFourierFeatures().fit_transform(X).dtype == np.float32
    assert RandomFourierFeatures(dtype="float64").fit_transform(X).dtype == np.float64
    assert RandomFourierFeatures(dtype=None).fit_transform(X).dtype == np.float64
    assert RandomFourierFeatures(dtype=None).fit_transform(X.astype(np.float32)).dtype == np.float32
    Z32 = RandomFourierFeatures(random_state=0).fit_transform(X)
    Z64 = RandomFourierFeatures(dtype="float64", random_state=0).fit_transform(X)
    np.testing.assert_allclose(Z32, Z64, atol=1e-5)


@pytest.mark.parametrize("density", [0.002, 0.3])
@pytest.mark.parametrize("sampling", ["iid", "structured"])
def test_sparse_equals_dense(density, sampling):
    X = sp.random(300, 50, density=density, format="csr", random_state=0)
    rff = RandomFourierFeatures(n_components=64, sampling=sampling, gamma=0.5,
                                dtype="float64", random_state=0).fit(X)
    np.testing.assert_allclose(rff.transform(X), rff.transform(X.toarray()), atol=1e-12)


def test_blocked_transform_equals_whole_and_respects_budget(peak_memory):
    X = np.random.default_rng(0).normal(size=(20_000, 30))
    rff = RandomFourierFeatures(n_components=512, kind="sincos", random_state=0).fit(X)
    whole = rff.transform(X)
    rff.set_params(memory_budget=2**20)
    with peak_memory() as meter:
        blocked = rff.transform(X)
    np.testing.assert_allclose(blocked, whole, atol=1e-6)
    output = blocked.nbytes
    # one block's temporaries (<= budget) + model arrays cast to float32 (~60 KB)
    assert meter.peak - output < 2**20 + 100_000


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_components": 0}, r"n_components=0 is not valid"),
        ({"n_components": 2.5}, r"n_components=2\.5 is not valid"),
        ({"kernel": "polynomial"}, "shift-invariant"),
        ({"kernel": "laplacian", "sampling": "orthogonal"}, "rotation-invariant"),
        ({"kind": "tan"}, r"kind='tan' is not valid"),
        ({"sampling": "sobol"}, r"sampling='sobol' is not valid"),
        ({"gamma": -1.0}, r"gamma=\-1\.0 is not valid"),
        ({"dtype": "int32"}, r"dtype='int32' is not valid"),
    ],
)
def test_bad_parameters(params, match):
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises((ValueError, TypeError), match=match):
        RandomFourierFeatures(**params).fit(X)


def test_bad_input():
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(NotFittedError):
        RandomFourierFeatures().transform(X)
    rff = RandomFourierFeatures().fit(X)
    expected = "X has 4 features, but RandomFourierFeatures is expecting 3"
    with pytest.raises(ValueError, match=expected):
        rff.transform(np.ones((2, 4)))
    with pytest.raises(ValueError, match="NaN"):
        rff.transform(np.array([[np.nan, 0.0, 1.0]]))
    with pytest.raises(ValueError, match="Expected 2D array"):
        RandomFourierFeatures().fit(np.ones(5))
    with pytest.raises(ValueError, match="0 sample"):
        RandomFourierFeatures().fit(np.empty((0, 3)))


@pytest.mark.parametrize("params", [{"n_components": 20}, {"kind": "sincos",
                                                          "sampling": "structured"}])
def test_a_rows_features_do_not_depend_on_its_batch_or_the_thread_counts(params):
    """Regression: ``check_methods_subset_invariance`` (rtol 1e-7) failed once on a loaded
    machine. The paths a batch or the machine could change (BLAS's thread count, numba's,
    a product split across numba's threads while a solver holds BLAS) give every row the
    same float32 bits, in batches of one row up to all of them."""
    import numba
    from threadpoolctl import threadpool_limits

    from kernelscale.kernels import blas_on_numba_threads

    X = 3 * np.random.RandomState(0).uniform(size=(4000, 5))
    features = RandomFourierFeatures(random_state=0, **params).fit(X)
    whole = features.transform(X)
    threads = numba.get_num_threads()
    try:
        for blas, numba_threads, held in [(1, 1, False), (2, 2, False), (2, 2, True),
                                          (1, 2, True)]:
            numba.set_num_threads(min(numba_threads, numba.config.NUMBA_NUM_THREADS))
            with threadpool_limits(blas, user_api="blas"):
                with blas_on_numba_threads() if held else threadpool_limits(None):
                    for batch in (1, 2, 777, len(X)):
                        rows = slice(0, 40) if batch < 10 else slice(None)
                        parts = [features.transform(X[rows][lo:lo + batch])
                                 for lo in range(0, len(X[rows]), batch)]
                        np.testing.assert_array_equal(np.concatenate(parts), whole[rows])
    finally:
        numba.set_num_threads(threads)
