"""Per-feature kernel widths (issue 35): ``gamma`` as one width per feature, everywhere.

The kernel ``exp(-sum_d gamma_d (x_d - y_d)^2)`` is the isotropic RBF kernel (gamma 1)
on columns scaled by ``sqrt(gamma_d)`` (Laplacian: by ``gamma_d``); every kernel,
map and estimator with per-feature widths must equal its isotropic self on the
rescaled columns.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

import kernelscale as ks
from kernelscale.kernels import RBF, Laplacian, make_kernel, pairwise_kernel

RNG = np.random.default_rng(0)
WIDTHS = np.array([1.0, 0.0, 0.3, 0.05, 2.0, 0.5])


def _data(n=300):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0,
                               random_state=0)
    return X, y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernels_equal_the_isotropic_kernel_on_rescaled_columns(dtype):
    X, Y = RNG.standard_normal((40, 6)).astype(dtype), RNG.standard_normal((25, 6)).astype(dtype)
    tol = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(RBF(WIDTHS).gram(X, Y),
                               rbf_kernel(X * np.sqrt(WIDTHS), Y * np.sqrt(WIDTHS), gamma=1.0),
                               atol=tol)
    np.testing.assert_allclose(Laplacian(WIDTHS).gram(X, Y),
                               laplacian_kernel(X * WIDTHS, Y * WIDTHS, gamma=1.0), atol=tol)
    # the search's trick: every gamma is one exp of the distances
    D = RBF(WIDTHS).distances(X, Y, dtype=np.float64)
    np.testing.assert_allclose(RBF(WIDTHS).from_distances(D, 0.5),
                               RBF(0.5 * WIDTHS).gram(X, Y, dtype=np.float64), atol=1e-12)


def test_sparse_inputs_with_per_feature_widths():
    X = sp.random(40, 300, density=0.05, random_state=0, format="csr")
    widths = RNG.uniform(0, 1, 300)
    reference = rbf_kernel(X.multiply(np.sqrt(widths)).tocsr(), gamma=1.0)
    np.testing.assert_allclose(RBF(widths).gram(X), reference, atol=1e-12)
    np.testing.assert_allclose(RBF(widths).gram(X, X.toarray()), reference, atol=1e-12)
    # the second argument kept sparse under a small budget
    np.testing.assert_allclose(pairwise_kernel(X, X, gamma=widths, memory_budget=2**14),
                               reference, atol=1e-12)


@pytest.mark.parametrize("params", [{}, {"sampling": "orthogonal"}, {"sampling": "structured"},
                                    {"kind": "sincos"}, {"kernel": "laplacian"}])
def test_random_fourier_features_are_the_isotropic_map_of_rescaled_columns(params):
    X = RNG.standard_normal((50, 6))
    scaled = X * (WIDTHS if params.get("kernel") == "laplacian" else np.sqrt(2 * WIDTHS))
    iso = {"gamma": 1.0} if params.get("kernel") == "laplacian" else {"gamma": 0.5}
    ours = ks.RandomFourierFeatures(n_components=64, gamma=WIDTHS, random_state=0,
                                    dtype="float64", **params).fit_transform(X)
    theirs = ks.RandomFourierFeatures(n_components=64, random_state=0, dtype="float64",
                                      **iso, **params).fit_transform(scaled)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_nystroem_with_widths_is_its_kernel():
    X = RNG.standard_normal((200, 6))
    Z = ks.Nystroem(n_components=200, gamma=WIDTHS, random_state=0,
                    dtype="float64").fit_transform(X)
    np.testing.assert_allclose(Z @ Z.T, RBF(WIDTHS).gram(X), atol=1e-8)


ESTIMATORS = [
    lambda g: ks.KernelSVC(gamma=g),
    lambda g: ks.KernelSVR(gamma=g),
    lambda g: ks.KernelOneClassSVM(gamma=g, nu=0.3),
    lambda g: ks.NystromKernelRidgeClassifier(gamma=g, n_components=100, dtype="float64",
                                              random_state=0),
    lambda g: ks.NystromKernelRidge(gamma=g, n_components=100, dtype="float64",
                                    random_state=0),
    lambda g: ks.ApproxKernelSVC(gamma=g, n_components=100, dtype="float64", random_state=0),
    lambda g: ks.KernelLogisticRegression(gamma=g, n_components=100, dtype="float64",
                                          random_state=0),
]


@pytest.mark.parametrize("make", ESTIMATORS, ids=lambda f: type(f(1.0)).__name__)
def test_estimators_with_widths_equal_isotropic_on_rescaled_columns(make):
    X, y = _data()
    if isinstance(make(1.0), (ks.KernelSVR, ks.NystromKernelRidge)):
        X, y = make_regression(n_samples=300, n_features=6, noise=0.1, random_state=0)
        y = y / y.std()
    ours = make(WIDTHS)
    theirs = make(1.0)
    ours.fit(X, y) if not isinstance(ours, ks.KernelOneClassSVM) else ours.fit(X)
    scaled = X * np.sqrt(WIDTHS)
    theirs.fit(scaled, y) if not isinstance(theirs, ks.KernelOneClassSVM) else theirs.fit(scaled)
    method = "decision_function" if hasattr(ours, "decision_function") else "predict"
    np.testing.assert_allclose(getattr(ours, method)(X), getattr(theirs, method)(scaled),
                               atol=1e-4)


def test_a_model_with_widths_survives_its_file(tmp_path):
    X, y = _data()
    model = ks.KernelSVC(gamma=WIDTHS).fit(X, y)
    ks.save_model(model, tmp_path / "m.ksm")
    again = ks.load_model(tmp_path / "m.ksm")
    np.testing.assert_array_equal(again.kernel_.gamma, WIDTHS)
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("gamma, match", [
    (np.ones(5), "5 per-feature widths but the data have 6 features"),
    (np.r_[-1.0, np.ones(5)], "finite and >= 0; width 0"),
    (np.r_[np.nan, np.ones(5)], "finite and >= 0"),
    (np.zeros(6), "all 0"),
    # a 2-D gamma is a metric (issue 45): a square matrix, or one clear error
    (np.ones((2, 3)), "The metric must be a square d x d matrix, got shape"),
    (np.ones((1, 2, 3)), "1-D"),
])
def test_bad_widths_are_one_clear_error(gamma, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        ks.KernelSVC(gamma=gamma).fit(X, y)


@pytest.mark.parametrize("kernel", ["polynomial", "linear"])
def test_widths_need_a_shift_invariant_kernel(kernel):
    X, y = _data()
    with pytest.raises(ValueError, match="shift-invariant kernel"):
        make_kernel(kernel, X, gamma=WIDTHS)
    if kernel == "polynomial":
        with pytest.raises(ValueError, match="shift-invariant kernel"):
            ks.KernelSVC(kernel=kernel, gamma=WIDTHS).fit(X, y)
