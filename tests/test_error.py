"""kernel_approximation_error: definition, unfitted maps, foreign transformers."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import RBFSampler
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from kernelscale import Nystroem, RandomFourierFeatures, kernel_approximation_error
from kernelscale.kernels import pairwise_kernel


def test_matches_its_definition():
    X = np.random.default_rng(0).normal(size=(200, 5))
    rff = RandomFourierFeatures(n_components=64, gamma=0.2, dtype="float64", random_state=0).fit(X)
    Z = rff.transform(X)
    K = pairwise_kernel(X, gamma=0.2)
    expected = np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)
    assert kernel_approximation_error(X, rff, n_samples=200) == pytest.approx(expected)


def test_unfitted_map_is_fitted_on_a_clone():
    X = np.random.default_rng(0).normal(size=(100, 4))
    ny = Nystroem(n_components=100, gamma=0.3, dtype="float64", random_state=0)
    assert kernel_approximation_error(X, ny) < 1e-6
    with pytest.raises(NotFittedError):
        check_is_fitted(ny)


def test_foreign_transformer_needs_the_kernel_named():
    X = np.random.default_rng(0).normal(size=(100, 4))
    sampler = RBFSampler(gamma=0.3, n_components=2000, random_state=0).fit(X)
    assert kernel_approximation_error(X, sampler, kernel="rbf", gamma=0.3) < 0.1
    with pytest.raises(ValueError, match="pass kernel="):
        kernel_approximation_error(X, StandardScaler().fit(X))


def test_subsampling_is_seeded_and_bounded():
    X = np.random.default_rng(0).normal(size=(3000, 4))
    rff = RandomFourierFeatures(n_components=32, random_state=0).fit(X)
    a = kernel_approximation_error(X, rff, n_samples=300, random_state=1)
    b = kernel_approximation_error(X, rff, n_samples=300, random_state=1)
    assert a == b
    with pytest.raises(ValueError, match="n_samples must be >= 1"):
        kernel_approximation_error(X, rff, n_samples=0)
