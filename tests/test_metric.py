"""Learned metrics (issue 45): the metric kernels equal the isotropic kernel on ``X L``,
in every kernel, map and estimator; AGOP's gradients are the predictor's; the Recursive
Feature Machine finds a planted subspace the diagonal widths cannot."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import subspace_angles
from sklearn.base import clone

from kernelscale import (
    ApproxKernelSVC,
    KernelClassifierCV,
    KernelRegressorCV,
    KernelSVC,
    KernelSVR,
    Nystroem,
    NystromKernelRidge,
    RandomFourierFeatures,
    load_model,
    save_model,
)
from kernelscale.kernels import RBF, Exponential, Laplacian, Metric, make_kernel
from kernelscale.model_selection import KernelMetric, KernelWidths
from kernelscale.solvers import gradient_outer_product
from kernelscale.solvers._agop import predictor_gradients


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(60, 5)), rng.normal(size=(25, 5))
    A = rng.normal(size=(5, 5))
    return X, Y, A @ A.T / 5, rng.normal(size=(5, 2))


def _quadratic(X, Y, M):
    D = X[:, None, :] - Y[None, :, :]
    return np.einsum("ijk,kl,ijl->ij", D, M, D)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [False, True])
def test_metric_kernels_are_the_isotropic_kernel_on_x_l(data, dtype, sparse):
    X, Y, M, L = data
    Xin = sp.csr_matrix(X) if sparse else X
    tol = 5e-6 if dtype == np.float32 else 1e-12
    metric = Metric(matrix=M)
    np.testing.assert_allclose(RBF(metric).gram(Xin, Y, dtype=dtype),
                               np.exp(-_quadratic(X, Y, M)), atol=tol)
    np.testing.assert_allclose(Exponential(metric).gram(Xin, Y, dtype=dtype),
                               np.exp(-np.sqrt(_quadratic(X, Y, M))), atol=tol)
    factor = Metric(factor=L)
    XL, YL = X @ L, Y @ L
    np.testing.assert_allclose(RBF(factor).gram(Xin, Y, dtype=dtype),
                               RBF(1.0).gram(XL, YL, dtype=np.float64), atol=tol)
    np.testing.assert_allclose(Laplacian(factor).gram(Xin, Y, dtype=dtype),
                               Laplacian(1.0).gram(XL, YL, dtype=np.float64), atol=tol)


def test_a_diagonal_metric_is_per_feature_widths(data):
    X, Y, _, _ = data
    widths = np.array([0.5, 0.0, 2.0, 0.1, 1.0])
    np.testing.assert_allclose(RBF(np.diag(widths)).gram(X, Y, dtype=np.float64),
                               RBF(widths).gram(X, Y, dtype=np.float64), atol=1e-12)


def test_the_exponential_kernel_is_positive_definite_and_scaled_like_rbf(data):
    X, _, _, _ = data
    K = Exponential(0.7).gram(X, dtype=np.float64)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    np.testing.assert_allclose(K, np.exp(-np.sqrt(0.7) * D), atol=1e-12)
    distances = Exponential(0.7).distances(X, dtype=np.float64)
    np.testing.assert_allclose(Exponential(0.7).from_distances(distances, 4.0),
                               Exponential(2.8).gram(X, dtype=np.float64), atol=1e-12)


@pytest.mark.parametrize("bad, match", [
    (np.ones((3, 2)), "square"),
    (np.array([[1.0, 2.0], [0.0, 1.0]]), "symmetric"),
    (np.array([[1.0, 0.0], [0.0, -1.0]]), "positive semi-definite"),
    (np.array([[np.nan, 0.0], [0.0, 1.0]]), "finite"),
    (np.zeros((2, 2)), "is 0"),
])
def test_a_bad_metric_is_one_clear_error(bad, match):
    with pytest.raises(ValueError, match=match):
        Metric(matrix=bad)


def test_a_metric_needs_a_shift_invariant_kernel_and_matching_features(data):
    X, _, M, _ = data
    for kernel in ("polynomial", "linear"):
        with pytest.raises(ValueError, match="A metric needs a shift-invariant kernel"):
            make_kernel(kernel, X, gamma=Metric(matrix=M))
    with pytest.raises(ValueError, match="metric is for 5 features but the data have 3"):
        KernelSVC(gamma=Metric(matrix=M)).fit(X[:, :3], np.arange(60) % 2)


@pytest.mark.parametrize("make", [
    lambda g: KernelSVC(gamma=g),
    lambda g: KernelSVR(gamma=g),
    lambda g: NystromKernelRidge(gamma=g, n_components=40, dtype="float64", random_state=0),
    lambda g: ApproxKernelSVC(gamma=g, n_components=40, random_state=0),
    lambda g: ApproxKernelSVC(feature_map="rff", gamma=g, n_components=64, random_state=0),
], ids=["KernelSVC", "KernelSVR", "NystromKernelRidge", "ApproxKernelSVC", "rff"])
def test_every_estimator_with_a_metric_is_the_isotropic_one_on_x_l(make, data):
    X, _, _, L = data
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5))
    metric = Metric(factor=L)
    XL = metric.transform(X)
    target = np.sin(XL[:, 0]) + XL[:, 1]
    model = make(metric)
    y = target if "SVR" in type(model).__name__ or "Ridge" in type(model).__name__ else \
        (target > np.median(target)).astype(int)
    ours = make(metric).fit(X, y)
    iso = make(1.0).fit(XL, y)
    value = "decision_function" if hasattr(ours, "decision_function") else "predict"
    np.testing.assert_allclose(getattr(ours, value)(X[:30]), getattr(iso, value)(XL[:30]),
                               atol=1e-4)


@pytest.mark.parametrize("sampling", ["iid", "orthogonal", "structured"])
def test_feature_maps_draw_their_frequencies_in_the_metrics_coordinates(sampling):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 6))
    metric = Metric(factor=0.3 * rng.normal(size=(6, 3)))
    ours = RandomFourierFeatures(n_components=96, gamma=metric, sampling=sampling,
                                 random_state=0, dtype=None).fit(X).transform(X)
    iso = RandomFourierFeatures(n_components=96, gamma=1.0, sampling=sampling,
                                random_state=0, dtype=None).fit(metric.transform(X))
    np.testing.assert_allclose(ours, iso.transform(metric.transform(X)), atol=1e-10)
    landmarks = Nystroem(n_components=30, gamma=metric, random_state=0).fit(X).transform(X)
    iso = Nystroem(n_components=30, gamma=1.0, random_state=0).fit(metric.transform(X))
    np.testing.assert_allclose(landmarks, iso.transform(metric.transform(X)), atol=1e-6)


def test_rff_approximates_the_exponential_kernel():
    X = np.random.default_rng(3).normal(size=(200, 4))
    Z = RandomFourierFeatures(n_components=20000, kernel="exponential", gamma=0.3,
                              random_state=0, dtype=None).fit_transform(X)
    assert np.abs(Z @ Z.T - Exponential(0.3).gram(X, dtype=np.float64)).max() < 0.05


def test_a_model_with_a_metric_saves_and_loads(tmp_path, data):
    X, _, M, _ = data
    y = np.arange(60) % 2
    model = KernelSVC(gamma=Metric(matrix=M)).fit(X, y)
    save_model(model, tmp_path / "m.ksm")
    loaded = load_model(tmp_path / "m.ksm")
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    assert loaded.get_params()["gamma"] == model.get_params()["gamma"]


@pytest.mark.parametrize("kernel, k", [("rbf", RBF(1.0)), ("exponential", Exponential(1.0))])
def test_gradients_are_the_predictors(kernel, k):
    rng = np.random.default_rng(4)
    X, C, beta = rng.normal(size=(6, 3)), rng.normal(size=(9, 3)), rng.normal(size=(9, 2))
    grads = predictor_gradients(X, C, beta, kernel)
    step = 1e-6
    for j in range(3):
        e = np.zeros(3)
        e[j] = step
        numeric = (k.gram(X + e, C, dtype=np.float64) @ beta
                   - k.gram(X - e, C, dtype=np.float64) @ beta) / (2 * step)
        np.testing.assert_allclose(grads[:, :, j], numeric.T, atol=1e-7)
    G = gradient_outer_product(X, C, beta, kernel, memory_budget=4096)
    np.testing.assert_allclose(G, sum(g.T @ g for g in grads) / 6, atol=1e-12)
    assert np.linalg.eigvalsh(G).min() > -1e-12


def _planted(n, seed, d=20):
    directions = np.linalg.qr(np.random.default_rng(0).normal(size=(d, 2)))[0]
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    P = X @ directions
    f = np.sin(2 * P[:, 0]) + np.cos(1.5 * P[:, 1]) * P[:, 0]
    return X, (f > 0.3).astype(int), directions


@pytest.mark.slow
def test_agop_finds_a_planted_subspace_the_widths_cannot():
    # the must-show: AGOP's top-2 directions span the planted ones (largest
    # principal angle < 10 degrees) and its model beats the diagonal widths' by >= 2 points
    X, y, directions = _planted(12000, 1)
    X_test, y_test, _ = _planted(5000, 2)
    metric = KernelMetric(n_components=500, random_state=0).fit(X, y)
    angles = np.degrees(subspace_angles(metric.directions_[:2].T, directions))
    assert angles.max() < 10.0, angles
    assert metric.best_round_ > 0 and metric.loss_ < metric.initial_loss_
    widths = KernelWidths(n_components=500, random_state=0).fit(X, y)
    from kernelscale import NystromKernelRidgeClassifier

    def score(gamma):
        return NystromKernelRidgeClassifier(gamma=gamma, n_components=1000,
                                            random_state=0).fit(X, y).score(X_test, y_test)
    assert score(metric.metric_) >= score(widths.gamma_) + 0.02


def test_kernel_metric_structures_and_its_readable_directions():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 4))
    y = np.sin(X[:, 0] - X[:, 1])
    full = KernelMetric(n_components=150, n_rounds=2, random_state=0).fit(X, y)
    top = full.directions_[0]
    assert abs(top[0] + top[1]) < 0.2 and abs(top[0]) > 0.6  # x0 - x1, read off
    assert full.feature_relevance_[[0, 1]].sum() > 0.8
    assert full.transform(X).shape == (1500, full.metric_.rank)
    diagonal = KernelMetric(structure="diagonal", n_components=150, n_rounds=2,
                            random_state=0).fit(X, y)
    M = diagonal.metric_.matrix
    if diagonal.best_round_ > 0:
        assert np.allclose(M, np.diag(np.diag(M)))
    wide = KernelMetric(structure="low-rank", n_components=100, n_rounds=1,
                        random_state=0).fit(rng.normal(size=(600, 70)), rng.normal(size=600))
    if wide.best_round_ > 0:
        assert wide.metric_.rank == 16 + 70


def test_kernel_metric_keeps_its_best_when_the_time_ends(monkeypatch):
    import itertools

    from kernelscale import _clock

    ticks = itertools.count(0.0, 0.5)
    monkeypatch.setattr(_clock, "_now", lambda: next(ticks))
    X = np.random.default_rng(6).normal(size=(800, 3))
    metric = KernelMetric(n_components=50, n_rounds=20, time_budget=2.0,
                          random_state=0).fit(X, X[:, 0] ** 2)
    assert 1 <= metric.n_iter_ < 20 and len(metric.history_) == metric.n_iter_ + 1


def test_the_search_refits_the_metric_it_scored():
    X, y, _ = _planted(6000, 3)
    search = KernelClassifierCV(families="falkon", learn_widths="agop", n_components=300,
                                gamma_factors=[0.5, 1.0, 2.0], alphas=[1.0, 10.0], cv=3,
                                random_state=0).fit(X, y)
    assert search.kernel_metric_ is not None
    gamma = search.best_params_["gamma"]
    factor = search.cv_results_["params"][search.best_index_]["gamma"]
    assert isinstance(gamma, Metric)
    np.testing.assert_allclose(gamma.matrix, factor * search.kernel_metric_.metric_.matrix,
                               rtol=1e-10)
    again = clone(search.best_estimator_).fit(X, y)
    np.testing.assert_allclose(again.decision_function(X[:100]),
                               search.decision_function(X[:100]), atol=1e-5)
    reg = KernelRegressorCV(learn_widths="none", n_components=100, gamma_factors=[1.0],
                            random_state=0).fit(X[:2000], X[:2000, 0] * X[:2000, 1])
    assert reg.kernel_metric_ is None and reg.widths_ is None
