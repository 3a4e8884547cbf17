"""Learned per-feature kernel widths (issue 35, item 2): the hold-out loss, its
gradient, and ``KernelWidths`` finding the features that matter."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from kernelscale import KernelWidths, learn_widths
from kernelscale.datasets import make_nonlinear_problem
from kernelscale.kernels import RBF, Laplacian
from kernelscale.solvers import holdout_loss
from kernelscale.solvers._widths import width_statistics, width_statistics_l1

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_width_statistics_is_the_weighted_sum_it_names(kernel):
    X, Z = RNG.standard_normal((30, 4)), RNG.standard_normal((7, 4))
    K, a, b = RNG.random((30, 7)), RNG.standard_normal((30, 2)), RNG.standard_normal((7, 2))
    differences = X[:, None, :] - Z[None, :, :]
    distance = differences ** 2 if kernel == "rbf" else np.abs(differences)
    brute = np.einsum("ij,ijd->d", K * (a @ b.T), distance)
    statistics = width_statistics if kernel == "rbf" else width_statistics_l1
    np.testing.assert_allclose(statistics(X, Z, K, a, b), brute, rtol=1e-10)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("targets", [1, 3])
def test_holdout_loss_gradient_matches_finite_differences(targets, kernel):
    d = 5
    X_t, X_v = RNG.standard_normal((80, d)), RNG.standard_normal((40, d))
    Y_t, Y_v = RNG.standard_normal((80, targets)), RNG.standard_normal((40, targets))
    Z = X_t[:15]
    theta = np.r_[np.log(RNG.uniform(0.05, 0.5, d)), np.log(0.3)]
    loss, grad, beta = holdout_loss(theta, X_t, Y_t, X_v, Y_v, Z, kernel=kernel)
    step = 1e-6
    numeric = np.array([
        (holdout_loss(theta + step * e, X_t, Y_t, X_v, Y_v, Z, gradient=False,
                      kernel=kernel)[0]
         - holdout_loss(theta - step * e, X_t, Y_t, X_v, Y_v, Z, gradient=False,
                        kernel=kernel)[0])
        / (2 * step) for e in np.eye(d + 1)])
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-9)
    # the loss is the validation error of the ridge it names
    widths = np.exp(theta[:d])
    if kernel == "rbf":
        K_t = rbf_kernel(X_t * np.sqrt(widths), Z * np.sqrt(widths), gamma=1)
        K_z = rbf_kernel(Z * np.sqrt(widths), gamma=1)
    else:
        K_t = laplacian_kernel(X_t * widths, Z * widths, gamma=1)
        K_z = laplacian_kernel(Z * widths, gamma=1)
    reference = np.linalg.solve(K_t.T @ K_t + np.exp(theta[d]) * K_z, K_t.T @ Y_t)
    np.testing.assert_allclose(beta, reference, rtol=1e-6, atol=1e-8)


@pytest.fixture(scope="module")
def nonlinear():
    X, y = make_nonlinear_problem(5000, random_state=0)
    return X, y, KernelWidths(n_components=200, random_state=0).fit(X, y)


def test_the_informative_features_get_the_largest_widths(nonlinear):
    _, _, widths = nonlinear
    top = set(np.argsort(widths.feature_relevance_)[::-1][:6])
    assert top == set(range(6)), widths.feature_relevance_
    # the noise columns are switched off, not merely ranked lower
    assert widths.feature_relevance_[6:].sum() < 0.05
    assert widths.loss_ < widths.initial_loss_
    assert widths.gamma_.shape == (28,) and np.all(widths.gamma_ > 0)
    np.testing.assert_allclose(widths.feature_relevance_.sum(), 1.0)


def test_learned_widths_beat_the_isotropic_kernel(nonlinear):
    from kernelscale import NystromKernelRidgeClassifier

    X, y, widths = nonlinear
    X_test, y_test = make_nonlinear_problem(3000, random_state=0, rows_seed=1)
    learned = NystromKernelRidgeClassifier(gamma=widths.gamma_, n_components=500,
                                           random_state=0).fit(X, y).score(X_test, y_test)
    isotropic = NystromKernelRidgeClassifier(n_components=500, random_state=0).fit(X, y)
    assert learned > isotropic.score(X_test, y_test) + 0.03


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_regression_widths_and_transform(kernel):
    X = RNG.standard_normal((1500, 4))
    y = np.sin(2 * X[:, 1]) + 0.05 * RNG.standard_normal(1500)
    widths = KernelWidths(n_components=80, kernel=kernel, random_state=0).fit(X, y)
    assert np.argmax(widths.feature_relevance_) == 1
    assert widths.penalty_ > 0 and widths.n_iter_ == len(widths.history_)
    # transform: the isotropic kernel (gamma 1) on its columns is the learned kernel
    isotropic, Kernel = (rbf_kernel, RBF) if kernel == "rbf" else (laplacian_kernel, Laplacian)
    np.testing.assert_allclose(isotropic(widths.transform(X[:50]), gamma=1.0),
                               Kernel(widths.gamma_).gram(X[:50], dtype=np.float64), atol=1e-10)
    np.testing.assert_array_equal(learn_widths(X, y, n_components=80, kernel=kernel,
                                               random_state=0), widths.gamma_)


def test_reproducible_under_random_state():
    X, y = make_nonlinear_problem(2000, random_state=1)
    a = KernelWidths(n_components=60, max_iter=5, random_state=3).fit(X, y).gamma_
    b = KernelWidths(n_components=60, max_iter=5, random_state=3).fit(X, y).gamma_
    c = KernelWidths(n_components=60, max_iter=5, random_state=4).fit(X, y).gamma_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_time_budget_and_early_stopping_end_the_optimisation(monkeypatch):
    import itertools

    from kernelscale import _clock

    X, y = make_nonlinear_problem(8000, random_state=0)
    # a fake clock for the widths: every reading 0.25 s after the last
    ticks = itertools.count(0.0, 0.25)
    monkeypatch.setattr(_clock, "_now", lambda: next(ticks))
    widths = KernelWidths(n_components=100, max_iter=1000, patience=1000, time_budget=1.0,
                          random_state=0).fit(X[:3000], y[:3000])
    # a few readings per iteration: the clock passes 1 s within 4 iterations (patience
    # and max_iter would have let it run on)
    assert 1 <= widths.n_iter_ <= 4 and widths.history_[-1]["seconds"] >= 1.0
    monkeypatch.undo()
    # patience=1: stops at the first iteration that does not improve the stopping loss
    patient = KernelWidths(n_components=60, patience=1, max_iter=200, random_state=0)
    patient.fit(X[:2000], y[:2000])
    losses = [h["stop_loss"] for h in patient.history_]
    assert patient.n_iter_ < 200 and losses[-1] >= min(losses[:-1] + [patient.initial_loss_]) * \
        (1 - patient.tol)


def test_memory_budget_reduces_the_subsample_and_says_so():
    X, y = make_nonlinear_problem(3000, random_state=0)
    with pytest.warns(UserWarning, match=r"learns on \d+ rows instead of 3000.*memory_budget >="):
        KernelWidths(n_components=50, max_iter=2, memory_budget="1M", random_state=0).fit(X, y)


@pytest.mark.parametrize("params, X_rows, match", [
    ({"time_budget": "soon"}, 200, "time_budget"),
    ({"validation_fraction": 1.5}, 200, "validation_fraction"),
    ({"n_components": 0}, 200, "n_components"),
    ({}, 5, "at least 10 rows"),
])
def test_bad_input_is_one_clear_error(params, X_rows, match):
    X, y = RNG.standard_normal((X_rows, 3)), RNG.integers(0, 2, X_rows)
    with pytest.raises(ValueError, match=match):
        KernelWidths(**params).fit(X, y)


# the search with learned widths (learn_widths on KernelClassifierCV / KernelRegressorCV)

@pytest.fixture(scope="module")
def small_problem():
    X, y = make_nonlinear_problem(3000, random_state=2)
    X_test, y_test = make_nonlinear_problem(2000, random_state=2, rows_seed=1)
    return X, y, X_test, y_test


SMALL_SEARCH = {"families": ["falkon"], "n_components": 150, "gamma_factors": [0.5, 1.0, 2.0],
                "alphas": [0.03, 0.3, 3.0], "cv": 3, "random_state": 0}


def test_the_search_with_learned_widths_refits_what_it_scored(small_problem):
    from sklearn.base import clone

    from kernelscale import KernelClassifierCV

    X, y, X_test, y_test = small_problem
    learned = KernelClassifierCV(learn_widths="diagonal", **SMALL_SEARCH).fit(X, y)
    isotropic = KernelClassifierCV(learn_widths=False, **SMALL_SEARCH).fit(X, y)
    assert isotropic.widths_ is None and learned.widths_ is not None
    gamma = learned.best_params_["gamma"]
    factor = learned.cv_results_["params"][learned.best_index_]["gamma"]
    np.testing.assert_allclose(gamma, factor * learned.widths_.gamma_)
    assert set(np.argsort(learned.feature_relevance_)[::-1][:6]) == set(range(6))
    assert learned.score(X_test, y_test) > isotropic.score(X_test, y_test) + 0.03
    # best_params_ is the whole configuration: refitting it gives the same model
    again = clone(learned.best_estimator_).fit(X, y)
    np.testing.assert_allclose(again.decision_function(X_test),
                               learned.decision_function(X_test), atol=1e-5)


def test_exact_svm_multiclass_refit_with_learned_widths():
    from kernelscale import KernelClassifierCV

    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 5))
    y = np.digitize(np.sin(2 * X[:, 0]) + X[:, 1], [-0.7, 0.7])  # 3 classes, 2 features
    search = KernelClassifierCV(families=["exact-svm"], learn_widths="diagonal", cv=3,
                                gamma_factors=[1.0], Cs=[1.0], random_state=0).fit(X, y)
    assert search.best_params_["gamma"].shape == (5,)
    # the refit's matrix came from the scaled columns: it is the scored kernel
    assert abs(search.best_estimator_.score(X, y) - search.score(X, y)) == 0
    assert search.best_score_ > 0.8


def test_regression_search_learns_widths_and_the_default_stays_off_below_its_rows():
    from kernelscale import KernelRegressorCV

    X = RNG.standard_normal((800, 4))
    y = np.sin(2 * X[:, 1]) + 0.05 * RNG.standard_normal(800)
    params = {**{k: v for k, v in SMALL_SEARCH.items() if k != "families"}, "n_components": 80}
    search = KernelRegressorCV(learn_widths=True, **params).fit(X, y)
    assert np.argmax(search.feature_relevance_) == 1 and search.best_score_ > 0.9
    assert KernelRegressorCV(**params).fit(X, y).widths_ is None  # "auto" below 5,000 rows


def test_widths_the_time_cannot_pay_for_are_skipped_and_said(small_problem, monkeypatch):
    # issue 44: a budget too short for the widths was an error after seconds of work; now
    # the move that learns them is granted a share of the time left, and where they cannot
    # be learned in it they are skipped (stages_ says so) and a model is kept
    from kernelscale import KernelClassifierCV
    from kernelscale.model_selection import _run

    X, y, _, _ = small_problem
    monkeypatch.setattr(_run, "LEARN_SHARE", 1e-9)
    search = KernelClassifierCV(learn_widths="diagonal", time_budget=60,
                                **SMALL_SEARCH).fit(X, y)
    widths = [r for r in search.stages_ if r.stage == "learn diagonal"]
    assert widths[0].outcome == "skipped" and "was not learned in the" in widths[0].note
    assert search.widths_ is None
    assert search.predict(X).shape == y.shape


def test_tune_prints_and_draws_the_widths(tmp_path, capsys, small_problem):
    from kernelscale.cli import main

    X, y, _, _ = small_problem
    np.savez(tmp_path / "d.npz", X=X[:600], y=y[:600])
    assert main(["tune", str(tmp_path / "d.npz"), "-o", str(tmp_path / "m.ksm"),
                 "--families", "falkon", "--learn-widths", "diagonal", "--cv", "2",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "kernel widths learned in" in out and "x the learned widths" in out
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  x")]
    # 10 listed, the rest summed; on 600 rows the first few are informative ones
    assert len(listed) == 10 and set(listed[:3]) <= {f"x{j}" for j in range(6)}, out
    assert "widths written to" in out and (tmp_path / "m.widths.png").stat().st_size > 1000


@pytest.mark.parametrize("family", ["exact-svm", "falkon"])
def test_the_tuned_classifier_offers_calibrated_probabilities(family):
    from sklearn.metrics import brier_score_loss

    from kernelscale import KernelClassifierCV

    X, y = make_nonlinear_problem(1500, random_state=4)
    X_test, y_test = make_nonlinear_problem(1500, random_state=4, rows_seed=1)
    search = KernelClassifierCV(families=[family], probability=True, gamma_factors=[1.0],
                                Cs=[1.0], alphas=[1.0], cv=3, random_state=0).fit(X, y)
    proba = search.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all((proba >= 0) & (proba <= 1))
    # calibrated: better than the constant's Brier score, and agrees with predict mostly
    assert brier_score_loss(y_test, proba[:, 1]) < 0.8 * brier_score_loss(
        y_test, np.full(len(y_test), y.mean()))
    assert np.mean(search.classes_[proba.argmax(axis=1)] == search.predict(X_test)) > 0.95
    assert not hasattr(KernelClassifierCV(), "predict_proba")
