"""KernelLogisticRegression, ApproxKernelPCA and ApproxKernelKMeans."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits, make_blobs, make_circles
from sklearn.decomposition import KernelPCA
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import adjusted_rand_score

from kernelscale import ApproxKernelKMeans, ApproxKernelPCA, KernelLogisticRegression, Nystroem

# tests run the solvers a few iterations
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


@pytest.fixture(scope="module")
def mapped(digits):
    X, _ = digits
    nys = Nystroem(n_components=150, gamma=0.05, dtype="float64", random_state=0)
    return nys, nys.fit_transform(X)


@pytest.mark.parametrize("binary", [False, True])
def test_logistic_equals_sklearn_on_the_same_features(digits, mapped, binary):
    X, y = digits
    y = (y > 4).astype(int) if binary else y
    nys, Z = mapped
    sk = LogisticRegression(C=10.0, tol=1e-10, max_iter=10_000).fit(Z, y)
    ours = KernelLogisticRegression(feature_map=nys, C=10.0, tol=1e-9, max_iter=10_000)
    ours.fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(Z), atol=1e-5)
    np.testing.assert_allclose(ours.decision_function(X), sk.decision_function(Z), atol=1e-3)


def test_newton_cg_agrees_with_lbfgs(digits, mapped):
    X, y = digits
    nys, _ = mapped
    kw = {"feature_map": nys, "C": 10.0, "max_iter": 1000}
    lbfgs = KernelLogisticRegression(tol=1e-9, **kw).fit(X, y)
    newton = KernelLogisticRegression(solver="newton-cg", tol=1e-8, **kw).fit(X, y)
    np.testing.assert_allclose(newton.predict_proba(X), lbfgs.predict_proba(X), atol=5e-4)
    assert newton.n_iter_ < lbfgs.n_iter_


def test_ovr_probabilities_and_weights(digits, mapped):
    X, y = digits
    nys, _ = mapped
    clf = KernelLogisticRegression(feature_map=nys, multiclass="ovr", C=10.0).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert clf.coef_.shape == (10, nys.n_components) and clf.score(X, y) > 0.97
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X[:5])), proba[:5])
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(axis=1)])


def test_logistic_float32_default_and_sparse(digits):
    X, y = digits
    clf = KernelLogisticRegression(n_components=300, C=10.0, random_state=0)
    clf.fit(X[:1400], y[:1400])
    assert clf.score(X[1400:], y[1400:]) > 0.9  # the last digits are the hard ones
    clf_sp = KernelLogisticRegression(n_components=300, C=10.0, random_state=0)
    clf_sp.fit(sp.csr_matrix(X[:1400]), y[:1400])
    np.testing.assert_allclose(clf_sp.predict_proba(X[1400:]), clf.predict_proba(X[1400:]),
                               atol=1e-3)


def test_logistic_errors(digits):
    X, y = digits
    with pytest.raises(NotFittedError):
        KernelLogisticRegression().predict_proba(X)
    with pytest.raises(ValueError, match="C=0 is not valid"):
        KernelLogisticRegression(C=0).fit(X, y)
    with pytest.raises(ValueError, match="multiclass"):
        KernelLogisticRegression(multiclass="ovo").fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        KernelLogisticRegression(solver="sag").fit(X, y)
    with pytest.raises(ValueError, match="one class|2 classes"):
        KernelLogisticRegression().fit(X, np.ones(len(X)))
    clf = KernelLogisticRegression(n_components=20, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :10])


def test_pca_with_all_landmarks_equals_exact_kernel_pca():
    X, _ = make_circles(n_samples=300, factor=0.3, noise=0.05, random_state=0)
    exact = KernelPCA(n_components=4, kernel="rbf", gamma=2.0).fit(X)
    ours = ApproxKernelPCA(n_components=4, map_components=300, gamma=2.0, dtype="float64",
                           random_state=0).fit(X)
    X_new = np.random.default_rng(0).uniform(-1, 1, size=(40, 2))
    a, b = exact.transform(X_new), ours.transform(X_new)
    signs = np.sign(np.sum(a * b, axis=0))
    np.testing.assert_allclose(b * signs, a, atol=1e-6)
    np.testing.assert_allclose(ours.explained_variance_, exact.eigenvalues_ / 299, rtol=1e-6)
    assert np.all(np.diff(ours.explained_variance_) <= 0)
    assert 0 < ours.explained_variance_ratio_.sum() <= 1


def test_pca_fit_transform_equals_transform(digits):
    X, _ = digits
    pca = ApproxKernelPCA(n_components=5, map_components=200, random_state=0)
    np.testing.assert_allclose(pca.fit_transform(X), pca.transform(X), atol=1e-4)
    assert pca.components_.shape == (5, 200)


def test_pca_errors(digits):
    X, _ = digits
    with pytest.raises(ValueError, match="n_components=50 is more than"):
        ApproxKernelPCA(n_components=50, map_components=20).fit(X)
    with pytest.raises(NotFittedError):
        ApproxKernelPCA().transform(X)


def test_kmeans_separates_rings_that_kmeans_cannot():
    X, y = make_circles(n_samples=600, factor=0.3, noise=0.05, random_state=0)
    ours = ApproxKernelKMeans(n_clusters=2, n_components=200, gamma=10.0, random_state=0)
    assert adjusted_rand_score(y, ours.fit_predict(X)) > 0.95
    plain = KMeans(n_clusters=2, n_init=3, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, plain) < 0.1
    np.testing.assert_array_equal(ours.predict(X), ours.labels_)
    assert ours.transform(X).shape == (600, 2)
    assert ours.score(X) == pytest.approx(-ours.inertia_, rel=1e-4)


def test_linear_kernel_kmeans_equals_kmeans():
    X, y = make_blobs(n_samples=500, centers=4, random_state=0)
    ours = ApproxKernelKMeans(n_clusters=4, kernel="linear", n_components=500,
                              dtype="float64", random_state=0).fit(X)
    plain = KMeans(n_clusters=4, n_init=3, random_state=0).fit(X)
    # the linear map is an isometry of the data: same partition, same inertia
    assert adjusted_rand_score(plain.labels_, ours.labels_) > 0.99
    assert ours.inertia_ == pytest.approx(plain.inertia_, rel=1e-6)


def test_kmeans_errors(digits):
    X, _ = digits
    with pytest.raises(ValueError, match="n_clusters"):
        ApproxKernelKMeans(n_clusters=0).fit(X)
    with pytest.raises(ValueError, match="more than the"):
        ApproxKernelKMeans(n_clusters=10).fit(X[:5])
    with pytest.raises(NotFittedError):
        ApproxKernelKMeans().predict(X)
