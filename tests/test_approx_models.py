"""ApproxKernelSVC, ApproxKernelRidge(Classifier): agreement with scikit-learn on the same
features, one-vs-rest on digits, labels, blocks under a memory budget, errors, real data."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import linear_model, svm
from sklearn.datasets import load_digits, make_classification, make_moons, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from kernelscale import (
    ApproxKernelRidge,
    ApproxKernelRidgeClassifier,
    ApproxKernelSVC,
    MemoryBudgetError,
    Nystroem,
)
from kernelscale.datasets import data_dir, load_mnist10k
from kernelscale.feature_maps import FEATURE_MAPS
from kernelscale.solvers import RidgeStatistics, accumulate, solve_ridge

# hinge-loss dual CD on digits stops at max_iter
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return train_test_split(X / 16.0, y, test_size=0.3, random_state=0, stratify=y)


def test_svc_with_a_given_transformer_matches_the_sklearn_pipeline(digits):
    X_train, X_test, y_train, _ = digits
    mapper = SkNystroem(gamma=0.02, n_components=300, random_state=0)
    ours = ApproxKernelSVC(feature_map=mapper, C=1.0, tol=1e-8).fit(X_train, y_train)
    ref = make_pipeline(mapper, svm.LinearSVC(C=1.0, tol=1e-10, max_iter=100_000,
                                              random_state=0)).fit(X_train, y_train)
    assert ours.feature_map_ is not mapper  # cloned, the user's object stays unfitted
    assert ours.coef_.shape == (10, 300)
    np.testing.assert_allclose(ours.decision_function(X_test), ref.decision_function(X_test),
                               atol=2e-4)


@pytest.mark.parametrize("feature_map", ["nystroem", "nystroem-kmeans", "nystroem-leverage",
                                         "rff", "orf", "sorf"])
def test_svc_digits_multiclass_accuracy(digits, feature_map):
    X_train, X_test, y_train, y_test = digits
    clf = ApproxKernelSVC(feature_map=feature_map, n_components=512, gamma=0.02, C=10.0,
                          random_state=0).fit(X_train, y_train)
    scores = clf.decision_function(X_test)
    assert scores.shape == (len(y_test), 10)
    np.testing.assert_array_equal(clf.predict(X_test), clf.classes_[scores.argmax(axis=1)])
    assert clf.score(X_test, y_test) > 0.96


@pytest.mark.parametrize("class_weight", ["balanced", "balanced_binary"])
def test_hinge_loss_and_balanced_weights_multiclass(digits, class_weight):
    X_train, X_test, y_train, y_test = digits
    clf = ApproxKernelSVC(n_components=300, gamma=0.02, loss="hinge", class_weight=class_weight,
                          random_state=0).fit(X_train, y_train)
    assert clf.score(X_test, y_test) > 0.95


def test_polynomial_sketch_maps():
    # two rings: no linear model separates them (a held-out accuracy near 0.5), the
    # degree-2 polynomial kernel does (x1^2 + x2^2 is one of its features)
    from sklearn.datasets import make_circles

    X, y = make_circles(n_samples=1200, noise=0.05, factor=0.5, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    linear = svm.LinearSVC().fit(X_train, y_train).score(X_test, y_test)
    assert linear < 0.7
    for name in ("maclaurin", "tensorsketch"):
        clf = ApproxKernelSVC(feature_map=name, kernel="polynomial", degree=2, gamma=1.0,
                              coef0=1.0, n_components=300, random_state=0).fit(X_train, y_train)
        assert clf.score(X_test, y_test) > 0.95, name


def test_string_labels_and_binary_shapes():
    X, y = make_moons(n_samples=400, noise=0.15, random_state=0)
    labels = np.array(["left", "right"])[y]
    clf = ApproxKernelSVC(n_components=100, gamma=2.0, random_state=0).fit(X, labels)
    # the pivoted Cholesky keeps only the numerical rank of K_mm (2-D data: < 100)
    width = clf.feature_map_._n_features_out
    assert width <= 100 and clf.coef_.shape == (1, width) and clf.intercept_.shape == (1,)
    assert clf.decision_function(X).shape == (400,)
    assert set(clf.predict(X)) == {"left", "right"}
    assert clf.score(X, labels) > 0.95
    ridge = ApproxKernelRidgeClassifier(n_components=100, gamma=2.0, random_state=0)
    assert ridge.fit(X, labels).score(X, labels) > 0.95


def test_random_state_makes_fits_reproducible(digits):
    X_train, X_test, y_train, _ = digits
    a = ApproxKernelSVC(n_components=64, random_state=3).fit(X_train, y_train)
    b = ApproxKernelSVC(n_components=64, random_state=3).fit(X_train, y_train)
    np.testing.assert_array_equal(a.decision_function(X_test), b.decision_function(X_test))


def test_prediction_in_small_blocks_equals_one_block(digits):
    X_train, X_test, y_train, _ = digits
    params = dict(n_components=200, gamma=0.02, random_state=0, dtype="float64")
    big = ApproxKernelSVC(**params).fit(X_train, y_train)
    # the fitted model, predicting under a budget of a few rows per block
    small = copy.deepcopy(big).set_params(memory_budget=64 * 1024)
    np.testing.assert_allclose(small.decision_function(X_test), big.decision_function(X_test),
                               rtol=1e-9, atol=1e-9)
    # a fit under that budget cannot keep the features of every row: one clear error
    with pytest.raises(MemoryBudgetError, match=r"give memory_budget >= 2.6\dM"):
        ApproxKernelSVC(memory_budget=64 * 1024, **params).fit(X_train, y_train)


def test_budget_too_small_for_one_row_is_a_clear_error(digits):
    X_train, _, y_train, _ = digits
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        ApproxKernelSVC(n_components=200, memory_budget=100).fit(X_train, y_train)


def test_sparse_input(digits):
    X_train, X_test, y_train, y_test = digits
    dense = ApproxKernelSVC(n_components=200, gamma=0.02, random_state=0).fit(X_train, y_train)
    sparse = ApproxKernelSVC(n_components=200, gamma=0.02, random_state=0).fit(
        sp.csr_matrix(X_train), y_train)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X_test)),
                               dense.decision_function(X_test), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("Estimator", [ApproxKernelSVC, ApproxKernelRidgeClassifier])
def test_errors(Estimator, digits):
    X_train, X_test, y_train, _ = digits
    with pytest.raises(ValueError, match="feature_map='fourier' is not valid"):
        Estimator(feature_map="fourier").fit(X_train, y_train)
    with pytest.raises(TypeError, match="transformer"):
        Estimator(feature_map=object()).fit(X_train, y_train)
    with pytest.raises(ValueError, match="at least 2 classes"):
        Estimator().fit(X_train, np.zeros(len(y_train)))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Estimator().fit(X_train, y_train[:-1])
    bad = X_train.copy()
    bad[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        Estimator().fit(bad, y_train)
    with pytest.raises(NotFittedError):
        Estimator().predict(X_test)
    clf = Estimator(n_components=50, random_state=0).fit(X_train, y_train)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X_test[:, :10])


def test_svc_parameter_errors(digits):
    X_train, _, y_train, _ = digits
    for params, match in [({"C": 0}, "C"), ({"loss": "log"}, "loss"),
                          ({"solver": "smo"}, "solver"), ({"n_components": 0}, "n_components")]:
        with pytest.raises(ValueError, match=match):
            ApproxKernelSVC(**params).fit(X_train, y_train)
    with pytest.raises(ValueError, match="alpha"):
        ApproxKernelRidgeClassifier(alpha=-1.0).fit(X_train, y_train)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_ridge_equals_sklearn_ridge_on_the_same_features(fit_intercept):
    X, Y = make_regression(n_samples=500, n_features=8, n_targets=3, noise=5.0, random_state=0)
    weights = np.random.default_rng(0).uniform(0.2, 2.0, size=len(X))
    mapper = Nystroem(n_components=80, gamma=0.05, dtype="float64", random_state=0)
    ours = ApproxKernelRidge(feature_map=mapper, alpha=0.3, fit_intercept=fit_intercept)
    ours.fit(X, Y, sample_weight=weights)
    Z = mapper.fit(X).transform(X)
    ref = linear_model.Ridge(alpha=0.3, fit_intercept=fit_intercept).fit(
        Z, Y, sample_weight=weights)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.predict(X), ref.predict(Z), rtol=1e-7, atol=1e-6)
    y_one = Y[:, 0]
    single = ApproxKernelRidge(feature_map=mapper, alpha=0.3).fit(X, y_one)
    assert single.predict(X).shape == (500,)


def test_ridge_classifier_equals_sklearn_ridge_classifier(digits):
    X_train, X_test, y_train, _ = digits
    mapper = Nystroem(n_components=150, gamma=0.02, dtype="float64", random_state=0)
    ours = ApproxKernelRidgeClassifier(feature_map=mapper, alpha=0.5).fit(X_train, y_train)
    Z = mapper.fit(X_train).transform(X_train)
    ref = linear_model.RidgeClassifier(alpha=0.5).fit(Z, y_train)
    np.testing.assert_allclose(ours.decision_function(X_test),
                               ref.decision_function(mapper.transform(X_test)),
                               rtol=1e-6, atol=1e-8)


def test_ridge_statistics_do_not_depend_on_the_blocking():
    rng = np.random.default_rng(0)
    Z, Y, s = rng.standard_normal((1000, 30)), rng.standard_normal((1000, 2)), rng.random(1000)
    whole = solve_ridge(accumulate(Z, Y, s, 1 << 30), 0.1)
    blocked = solve_ridge(accumulate(Z, Y, s, 30 * 8 * 3 * 7), 0.1)  # 7-row blocks
    merged = RidgeStatistics(30, 2)
    for part in np.array_split(np.arange(1000), 5):
        merged.update(Z[part], Y[part], s[part])
    for coef, intercept in (blocked, solve_ridge(merged, 0.1)):
        np.testing.assert_allclose(coef, whole[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(intercept, whole[1], rtol=1e-10, atol=1e-12)


def test_every_named_map_is_accepted():
    X, y = make_classification(n_samples=200, n_features=6, random_state=0)
    for name in FEATURE_MAPS:
        kernel = "polynomial" if name in ("maclaurin", "tensorsketch") else "rbf"
        clf = ApproxKernelRidgeClassifier(feature_map=name, kernel=kernel, n_components=32,
                                          random_state=0).fit(X, y)
        assert clf.feature_map_.n_features_in_ == 6, name


mnist_missing = data_dir() is None or not (data_dir() / "t10k-images-idx3-ubyte.gz").exists()


@pytest.mark.data
@pytest.mark.skipif(mnist_missing, reason="MNIST-10k not found under ../shared/datasets")
def test_mnist10k_ridge_classifier_accuracy():
    X_train, y_train, X_test, y_test = load_mnist10k()
    clf = ApproxKernelRidgeClassifier(n_components=1000, alpha=0.1, random_state=0)
    assert clf.fit(X_train, y_train).score(X_test, y_test) >= 0.96


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.skipif(mnist_missing, reason="MNIST-10k not found under ../shared/datasets")
def test_mnist10k_svc_reaches_the_issue_accuracy():
    X_train, y_train, X_test, y_test = load_mnist10k()
    clf = ApproxKernelSVC(n_components=2000, C=10.0, random_state=0)
    assert clf.fit(X_train, y_train).score(X_test, y_test) >= 0.970


@pytest.mark.data
def test_a9a_svc_accuracy(a9a):
    X_train, y_train, X_test, y_test = a9a
    clf = ApproxKernelSVC(n_components=500, C=1.0, random_state=0).fit(X_train, y_train)
    assert clf.score(X_test, y_test) >= 0.845
