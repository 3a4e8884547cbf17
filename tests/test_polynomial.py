"""Polynomial-kernel maps: unbiasedness, convergence, parity with scikit-learn, errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.kernel_approximation import PolynomialCountSketch

from kernelscale import RandomMaclaurin, TensorSketch, kernel_approximation_error
from kernelscale.kernels import polynomial_kernel

MAPS = [RandomMaclaurin, TensorSketch]


def mean_error(cls, X, n_components, seeds=range(3), **params):
    return np.mean([
        kernel_approximation_error(X, cls(n_components=n_components, random_state=s, **params),
                                   n_samples=500, random_state=0)
        for s in seeds
    ])


@pytest.mark.parametrize("cls", MAPS)
@pytest.mark.parametrize("degree, coef0", [(2, 1.0), pytest.param(3, 0.5, marks=pytest.mark.slow),
                                           pytest.param(2, 0.0, marks=pytest.mark.slow)])
def test_unbiased(cls, degree, coef0):
    X = np.random.default_rng(0).normal(size=(15, 4)) / 2
    K = polynomial_kernel(X, gamma=0.5, degree=degree, coef0=coef0)
    estimates = [
        (lambda Z: Z @ Z.T)(cls(n_components=8, degree=degree, gamma=0.5, coef0=coef0,
                                dtype="float64", random_state=s).fit_transform(X))
        for s in range(4000)
    ]
    bias = np.abs(np.mean(estimates, axis=0) - K).max()
    assert bias < 0.05 * np.abs(K).max()


@pytest.mark.parametrize("cls", MAPS)
def test_error_shrinks_like_inverse_sqrt_D(cls):
    X = np.random.default_rng(0).normal(size=(500, 10))
    params = {"degree": 2, "gamma": 0.1, "coef0": 1.0}
    small = mean_error(cls, X, 128, **params)
    large = mean_error(cls, X, 2048, **params)
    assert 2.8 < small / large < 5.5  # sqrt(16) = 4


def test_tensorsketch_matches_sklearn_polynomial_count_sketch():
    X = np.random.default_rng(1).normal(size=(500, 10))
    ours = mean_error(TensorSketch, X, 1024, degree=2, gamma=0.1, coef0=1.0)
    theirs = np.mean([
        kernel_approximation_error(
            X, PolynomialCountSketch(n_components=1024, degree=2, gamma=0.1, coef0=1.0,
                                     random_state=s),
            kernel="polynomial", gamma=0.1, degree=2, coef0=1.0, n_samples=500, random_state=0)
        for s in range(3)
    ])
    assert ours == pytest.approx(theirs, rel=0.25)


@pytest.mark.parametrize("cls", MAPS)
def test_sparse_dtype_and_determinism(cls):
    X = sp.random(100, 30, density=0.1, format="csr", random_state=0)
    a = cls(n_components=32, random_state=0, dtype="float64").fit(X)
    np.testing.assert_allclose(a.transform(X), a.transform(X.toarray()), atol=1e-12)
    b = cls(n_components=32, random_state=0, dtype="float64").fit(X)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    assert cls(n_components=32).fit_transform(X).dtype == np.float32


@pytest.mark.parametrize("cls", MAPS)
@pytest.mark.parametrize(
    "params, match",
    [
        ({"coef0": -1.0}, r"coef0=\-1\.0 is not valid"),
        ({"degree": 0}, r"degree=0 is not valid"),
        ({"n_components": 0}, r"n_components=0 is not valid"),
        ({"gamma": 0.0}, r"gamma=0\.0 is not valid"),
    ],
)
def test_bad_parameters(cls, params, match):
    with pytest.raises(ValueError, match=match):
        cls(**params).fit(np.ones((5, 2)))
