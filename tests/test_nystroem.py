"""Nystroem: exactness at m = n, stability, decompositions, samplers, errors."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.kernel_approximation import Nystroem as SkNystroem

from kernelscale import Nystroem, kernel_approximation_error, pairwise_kernel

KERNELS = [
    ("rbf", {"gamma": 0.05}),
    ("laplacian", {"gamma": 0.05}),
    ("polynomial", {"gamma": 0.05, "degree": 2, "coef0": 1.0}),
    ("linear", {}),
]


def gram(Z):
    Z = np.asarray(Z, dtype=np.float64)
    return Z @ Z.T


@pytest.mark.parametrize("decomposition", ["cholesky", "eigh"])
@pytest.mark.parametrize("kernel, params", KERNELS, ids=[k for k, _ in KERNELS])
def test_m_equals_n_reproduces_K(kernel, params, decomposition):
    X = np.random.default_rng(0).normal(size=(300, 8))
    ny = Nystroem(n_components=300, kernel=kernel, decomposition=decomposition,
                  dtype="float64", random_state=0, **params)
    K = pairwise_kernel(X, kernel=kernel, **params)
    error = np.linalg.norm(K - gram(ny.fit_transform(X))) / np.linalg.norm(K)
    assert error < 1e-6


def test_m_equals_n_reproduces_K_on_the_issue_data(gaussian_data):
    ny = Nystroem(n_components=1000, gamma=0.05, dtype="float64", random_state=0)
    assert kernel_approximation_error(gaussian_data, ny.fit(gaussian_data), n_samples=1000) < 1e-6


@pytest.mark.parametrize("decomposition", ["cholesky", "eigh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_duplicate_landmarks_never_give_nan(decomposition, dtype):
    rng = np.random.default_rng(0)
    base = rng.normal(size=(40, 5))
    X = np.vstack([base, base, base[:10]])  # every landmark set has duplicates
    ny = Nystroem(n_components=len(X), gamma=0.2, decomposition=decomposition,
                  dtype=dtype, random_state=0).fit(X)
    Z = ny.transform(X)
    assert np.all(np.isfinite(Z))
    assert ny.rank_ <= 40
    K = pairwise_kernel(X, gamma=0.2)
    assert np.linalg.norm(K - gram(Z)) / np.linalg.norm(K) < 1e-4


def test_float32_features_are_as_accurate_as_float64(gaussian_data):
    X = gaussian_data
    for m in (100, 400):
        e32 = kernel_approximation_error(X, Nystroem(n_components=m, gamma=0.05, random_state=0))
        e64 = kernel_approximation_error(
            X, Nystroem(n_components=m, gamma=0.05, dtype="float64", random_state=0)
        )
        assert e32 == pytest.approx(e64, rel=1e-3)


def test_cholesky_and_eigh_give_the_same_kernel_approximation(gaussian_data):
    X = gaussian_data
    common = {"n_components": 200, "gamma": 0.05, "dtype": "float64", "random_state": 1}
    chol = Nystroem(decomposition="cholesky", **common).fit(X)
    eig = Nystroem(decomposition="eigh", **common).fit(X)
    assert chol.decomposition_ == "cholesky" and eig.decomposition_ == "eigh"
    np.testing.assert_allclose(gram(chol.transform(X)), gram(eig.transform(X)), atol=1e-8)
    assert np.allclose(chol.normalization_, np.triu(chol.normalization_))


def test_agrees_with_sklearn_nystroem_on_the_same_landmarks():
    X = np.random.default_rng(3).normal(size=(500, 6))
    ours = Nystroem(n_components=120, gamma=0.1, dtype="float64", random_state=0).fit(X)
    theirs = SkNystroem(gamma=0.1, n_components=120, random_state=0).fit(
        X[np.sort(ours.component_indices_)]
    )
    # sklearn fitted on exactly our landmarks (m = its n) reproduces the same map
    np.testing.assert_allclose(gram(ours.transform(X)), gram(theirs.transform(X)), atol=1e-8)


def test_rank_truncation_is_the_best_rank_k_part_of_K_mm():
    X = np.random.default_rng(0).normal(size=(200, 5))
    ny = Nystroem(n_components=200, rank=15, gamma=0.1, dtype="float64", random_state=0).fit(X)
    assert ny.decomposition_ == "eigh" and ny.rank_ == 15
    assert ny.transform(X).shape == (200, 15)
    K = pairwise_kernel(X, gamma=0.1)
    s = np.linalg.eigvalsh(K)[::-1]
    np.testing.assert_allclose(ny.eigenvalues_, s[:15], rtol=1e-10)
    best = np.sqrt(np.sum(s[15:] ** 2))
    assert np.linalg.norm(K - gram(ny.transform(X))) == pytest.approx(best, rel=1e-6)
    greedy = Nystroem(n_components=200, rank=15, decomposition="cholesky", gamma=0.1,
                      dtype="float64", random_state=0).fit(X)
    assert greedy.rank_ == 15 and greedy.components_.shape == (15, 5)


def test_ridge_regularises_K_mm():
    X = np.random.default_rng(0).normal(size=(100, 4))
    ny = Nystroem(n_components=30, reg=0.5, gamma=0.2, dtype="float64", random_state=0).fit(X)
    L = X[ny.component_indices_]
    K_nm = pairwise_kernel(X, L, gamma=0.2)
    expected = K_nm @ np.linalg.solve(pairwise_kernel(L, gamma=0.2) + 0.5 * np.eye(30), K_nm.T)
    np.testing.assert_allclose(gram(ny.transform(X)), expected, atol=1e-10)


def test_n_components_larger_than_n_samples_is_clamped_with_a_warning():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.warns(UserWarning, match="using 20 landmarks"):
        ny = Nystroem(n_components=50).fit(X)
    assert ny.n_components_ == 20 and ny.transform(X).shape[1] <= 20


@pytest.mark.parametrize("sampling", ["uniform", "kmeans", "leverage"])
def test_samplers(sampling):
    X = np.random.default_rng(0).normal(size=(600, 6))
    ny = Nystroem(n_components=50, sampling=sampling, gamma=0.1, random_state=0).fit(X)
    if sampling == "kmeans":
        assert ny.component_indices_ is None
    else:
        assert len(np.unique(ny.component_indices_)) == len(ny.component_indices_)
        np.testing.assert_array_equal(X[ny.component_indices_], ny.components_)
    again = Nystroem(n_components=50, sampling=sampling, gamma=0.1, random_state=0).fit(X)
    np.testing.assert_array_equal(ny.transform(X), again.transform(X))
    assert kernel_approximation_error(X, ny) < 0.2


def test_kmeans_landmarks_on_large_sparse_input():
    X = sp.random(25_000, 30, density=0.2, format="csr", random_state=0)
    X.indices = X.indices.astype(np.int64)  # as scikit-learn's svmlight reader returns
    X.indptr = X.indptr.astype(np.int64)
    ny = Nystroem(n_components=40, sampling="kmeans", gamma=0.5, random_state=0).fit(X)
    assert ny.components_.shape == (40, 30)
    assert np.all(np.isfinite(ny.transform(X[:100])))


def test_callable_kernel():
    X = np.random.default_rng(0).normal(size=(200, 4))

    def my_rbf(A, B, gamma):
        return pairwise_kernel(A, B, gamma=gamma)

    ny_callable = Nystroem(kernel=my_rbf, kernel_params={"gamma": 0.3}, n_components=60,
                           dtype="float64", random_state=0).fit(X)
    ny_named = Nystroem(gamma=0.3, n_components=60, dtype="float64", random_state=0).fit(X)
    np.testing.assert_allclose(gram(ny_callable.transform(X)), gram(ny_named.transform(X)),
                               atol=1e-10)


def test_sparse_input_and_budgeted_blocks(peak_memory):
    X = sp.random(20_000, 60, density=0.1, format="csr", random_state=0)
    ny = Nystroem(n_components=300, gamma=0.5, random_state=0).fit(X)
    whole = ny.transform(X)
    np.testing.assert_allclose(whole[:50], ny.transform(X[:50].toarray()), atol=1e-5)
    ny.set_params(memory_budget=2**20)
    with peak_memory() as meter:
        blocked = ny.transform(X)
    np.testing.assert_allclose(blocked, whole, atol=1e-5)
    # temporaries <= budget; the prepared landmarks and factor (float32 copies) ~0.5 MB
    assert meter.peak - blocked.nbytes < 2**20 + 600_000


@pytest.mark.parametrize(
    "params, match",
    [
        ({"sampling": "random"}, r"sampling='random' is not valid"),
        ({"decomposition": "svd"}, r"decomposition='svd' is not valid"),
        ({"rank": 0}, r"rank=0 is not valid"),
        ({"rcond": 2.0}, r"rcond=2\.0 is not valid"),
        ({"reg": -1.0}, r"reg=\-1\.0 is not valid"),
        ({"kernel": "cosine"}, r"kernel='cosine' is not valid"),
        ({"kernel_params": {"a": 1}}, "only used with a callable"),
        ({"n_components": -3}, r"n_components=\-3 is not valid"),
    ],
)
def test_bad_parameters(params, match):
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match=match):
        Nystroem(**params).fit(X)


def test_degenerate_kernel_is_refused():
    with pytest.raises(ValueError, match="zero on its diagonal"):
        Nystroem(kernel="linear", n_components=5).fit(np.zeros((10, 3)))


def test_transform_with_wrong_feature_count():
    X = np.random.default_rng(0).normal(size=(30, 3))
    ny = Nystroem(n_components=10).fit(X)
    with pytest.raises(ValueError, match="X has 2 features"):
        ny.transform(X[:, :2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ny.transform(X).shape == (30, ny.rank_)
