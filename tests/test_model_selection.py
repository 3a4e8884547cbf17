"""KernelClassifierCV / KernelRegressorCV: shared work equals refitting from scratch."""

import re
import warnings

import numpy as np
import pytest
from scipy import linalg
from sklearn.datasets import make_blobs, make_classification, make_moons, make_regression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from kernelscale import KernelClassifierCV, KernelRegressorCV, NystromKernelRidgeClassifier, _clock
from kernelscale.kernels import RBF, Laplacian
from kernelscale.model_selection import SearchTimeError
from kernelscale.model_selection._evaluator import Evaluator
from kernelscale.model_selection._least_squares import falkon_grid, fold_statistics
from kernelscale.model_selection._space import SCORERS
from kernelscale.solvers import ridge_path


@pytest.fixture(scope="module")
def moons():
    return make_moons(300, noise=0.3, random_state=0)


def _folds(X, y, k=5):
    return list(StratifiedKFold(k, shuffle=True, random_state=0).split(X, y))


def _falkon_grid_problem(n, k=5):
    """A +-1 problem of ``n`` rows, its ``k`` folds and each fold's training weights."""
    X, y = make_classification(n, n_features=4, random_state=2)
    folds = _folds(X, y, k)
    weights = []
    for train, _ in folds:
        w = np.zeros(n)
        w[train] = 1.0
        weights.append(w)
    return X, np.where(y == 1, 1.0, -1.0)[:, None], weights, folds


@pytest.mark.parametrize("balanced", [False, True])
def test_fold_statistics_are_the_folds_own(balanced):
    rng = np.random.default_rng(0)
    K, Y = rng.normal(size=(90, 12)), rng.normal(size=(90, 2))
    y = rng.integers(0, 2, 90)
    folds = _folds(K, y, 3)
    weights = []
    for f, (train, _) in enumerate(folds):
        w = np.zeros(90)
        w[train] = 1.0 + (f * (y[train] == 1) if balanced else 0.5 * (y[train] == 1))
        weights.append(w)
    for (A, b), (train, _), w in zip(fold_statistics(K, Y, weights, folds, not balanced),
                                     folds, weights):
        Kt = K[train] * np.sqrt(w[train])[:, None]
        assert np.allclose(A, Kt.T @ Kt, rtol=1e-10, atol=1e-10)
        assert np.allclose(b, (K[train] * w[train, None]).T @ Y[train], atol=1e-10)


def test_ridge_path_solves_the_nystrom_system():
    rng = np.random.default_rng(1)
    X, C = rng.normal(size=(120, 3)), rng.normal(size=(15, 3))
    k = RBF(0.5)
    K_nm, K_mm = k.gram(X, C, dtype=np.float64), k.gram(C, dtype=np.float64)
    y = rng.normal(size=(120, 1))
    A, b = K_nm.T @ K_nm, K_nm.T @ y
    r, V = linalg.eigh(K_mm)
    basis = V / np.sqrt(r)
    for alpha, beta in zip([1e-3, 1.0], ridge_path(A, b, basis, [1e-3, 1.0])):
        direct = linalg.solve(A + alpha * K_mm, b, assume_a="pos")
        assert np.allclose(beta, direct, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("splits", ["folds", "one held-out part"])
@pytest.mark.parametrize("intercept", [False, True])
def test_falkon_grid_equals_each_fold_fitted_from_scratch(intercept, splits, kernel):
    X, y = make_classification(200, n_features=4, random_state=2)
    folds = _folds(X, y)
    if splits != "folds":
        # regression: one split's training rows are in no fold's validation rows, so its
        # statistics cannot be "every row minus the fold" (they were 0: a constant model)
        folds = folds[:1]
    Y = np.where(y == 1, 1.0, -1.0)[:, None] + (5.0 if intercept else 0.0)
    weights = []
    for train, _ in folds:
        w = np.zeros(200)
        w[train] = 1.0
        weights.append(w)
    got = []
    records, complete = falkon_grid(
        X, Y, weights, folds, gamma_ref=0.2, factors=[0.5, 2.0], alphas=[0.01, 1.0],
        n_components=30, random_state=0, score=lambda f, v: got.append((f, v)) or 0.0,
        memory_budget=2**26, intercept=intercept, kernel=kernel)
    assert complete and len(records) == 4
    assert len(got) == 2 * 2 * len(folds)
    assert {r["gamma"] for r in records} == {0.1, 0.4}
    centers = X[np.random.RandomState(0).choice(200, 30, replace=False)]
    for index, (f, values) in enumerate(got):
        train, val = folds[f]
        # records of one gamma come fold by fold, alpha by alpha within a fold
        unit, within = divmod(index, 2 * len(folds))
        gamma = [0.1, 0.4][unit]
        alpha = [0.01, 1.0][within % 2]
        k = (RBF if kernel == "rbf" else Laplacian)(gamma)
        K_nm, K_mm = k.gram(X[train], centers, dtype=np.float64), k.gram(centers,
                                                                        dtype=np.float64)
        # with an intercept: the fold's training mean, and ridge on what is left
        mean = Y[train].mean(axis=0) if intercept else 0.0
        beta = linalg.lstsq(K_nm.T @ K_nm + alpha * K_mm, K_nm.T @ (Y[train] - mean))[0]
        expected = k.gram(X[val], centers, dtype=np.float64) @ beta + mean
        # the statistics agree to 1e-10 (above); the solves differ by round-off
        assert np.allclose(values, expected, rtol=1e-5, atol=1e-5)


def test_exact_family_agrees_with_gridsearchcv_svc(moons):
    X, y = moons
    folds = _folds(X, y)
    search = KernelClassifierCV(families="exact-svm", gamma_factors=[0.5, 1, 2],
                                Cs=[0.1, 1, 10], cv=folds).fit(X, y)
    gamma_ref = 1 / (X.shape[1] * X.var())
    grid = GridSearchCV(SVC(), {"gamma": [gamma_ref * f for f in (0.5, 1, 2)],
                                "C": [0.1, 1, 10]}, cv=folds).fit(X, y)
    ours = {(round(p["gamma"], 8), p["C"]): s for p, s in
            zip(search.cv_results_["params"], search.cv_results_["mean_test_score"])}
    for p, s in zip(grid.cv_results_["params"], grid.cv_results_["mean_test_score"]):
        # at most one validation row per fold on the other side of a +-tol boundary
        assert abs(ours[(round(p["gamma"], 8), p["C"])] - s) <= 1 / 60 + 1e-12
    assert search.best_estimator_.C == search.best_params_["C"]
    assert set(grid.cv_results_) - set(search.cv_results_) <= {"param_gamma", "param_C"} or \
        {"params", "mean_test_score", "rank_test_score", "split4_test_score",
         "mean_fit_time"} <= set(search.cv_results_)
    assert search.score(X, y) > 0.85


def test_multiclass_search_and_refit_predicts_like_best_estimator():
    X, y = make_blobs(240, centers=3, cluster_std=2.5, random_state=0)
    search = KernelClassifierCV(families=["exact-svm", "falkon"], gamma_factors=[0.5, 2],
                                Cs=[1, 10], alphas=[0.1, 10], class_weight="balanced",
                                random_state=0).fit(X, y)
    assert len(search.cv_results_["params"]) == 8
    assert search.cv_results_["rank_test_score"][search.best_index_] == 1
    assert np.array_equal(search.predict(X), search.best_estimator_.predict(X))
    assert search.decision_function(X).shape == (240, 3)
    assert np.ma.is_masked(search.cv_results_["param_alpha"][0])
    assert "rank" in search.leaderboard(3)[0]


def test_regressor_search_and_auto_choice():
    X, y = make_regression(300, 4, noise=1.0, random_state=0)
    search = KernelRegressorCV(alphas=[1e-3, 1e-1], gamma_factors=[0.5, 1], n_components=40,
                               random_state=0).fit(X, y)
    assert search.best_params_["family"] == "falkon" and search.best_score_ > 0.9
    assert "Nystrom kernel ridge" in search.family_choice_
    Xc, yc = make_classification(200, n_features=4, random_state=0)
    search = KernelClassifierCV(gamma_factors=[1.0], Cs=[1.0], alphas=[1.0],
                                random_state=0).fit(Xc, yc)
    # a classifier's families race: both scored, the better refitted
    assert {p["family"] for p in search.cv_results_["params"]} == {"exact-svm", "falkon"}
    assert "race" in search.family_choice_


@pytest.mark.parametrize("params, match", [
    (dict(families=[]), "families is empty"),
    (dict(families=["svm"]), "Unknown families"),
    (dict(scoring="accurcy"), "Unknown scoring"),
    (dict(scoring="r2"), "does not score a classifier"),
    (dict(Cs=[]), "Cs is empty"),
    (dict(Cs=[1, -1]), "Cs holds -1"),
    (dict(gamma_factors=[0]), "gamma_factors holds 0"),
    (dict(alphas=[np.nan]), "alphas holds nan"),
    (dict(time_budget="soon"), "time_budget"),
    (dict(cv=10), "fewer than the cv=10 folds"),
])
def test_bad_input_is_one_clear_error_before_work(params, match, monkeypatch):
    X, y = make_classification(60, n_features=5, n_classes=3, n_informative=3,
                               n_redundant=0, weights=[0.6, 0.3, 0.1], random_state=0)
    for method in ("grid", "fit_folds", "fit", "learn"):
        monkeypatch.setattr(Evaluator, method, lambda *a, **k: pytest.fail("work started"))
    with pytest.raises(ValueError, match=match):
        KernelClassifierCV(**params).fit(X, y)


def test_f1_needs_two_classes():
    X, y = make_blobs(90, centers=3, random_state=0)
    with pytest.raises(ValueError, match="needs two classes"):
        KernelClassifierCV(scoring="f1").fit(X, y)


def test_a_budget_below_the_cheapest_model_is_refused_with_a_minimum_that_works(moons):
    # issue 44: refused after the first (smallest) model, before the search, with a
    # budget that then returns a model
    X, y = moons
    with pytest.raises(SearchTimeError, match=r"too short for the cheapest model: .* took "
                       r"[0-9.]+ s; give time_budget >= \d+s\.") as error:
        KernelClassifierCV(families="exact-svm", time_budget=1e-6).fit(X, y)
    least = int(re.search(r">= (\d+)s", str(error.value)).group(1))
    search = KernelClassifierCV(families="exact-svm", time_budget=least).fit(X, y)
    assert search.predict(X).shape == (300,)


def _fake_grid(monkeypatch, clock, per_gamma, fail_family=None):
    """Every grid's gamma takes ``per_gamma`` seconds on the fake ``clock`` (before the
    gamma's end is measured), nothing else takes any time; a grid of ``fail_family`` is
    interrupted (Ctrl-C)."""
    from kernelscale.model_selection import _runner

    real_close = _runner._Loop._close

    def close(self, g):
        clock[0] += per_gamma
        return real_close(self, g)
    monkeypatch.setattr(_runner._Loop, "_close", close)
    real = Evaluator.grid

    def grid(self, line, rows, factors, **kwargs):
        if line.family == fail_family:
            raise KeyboardInterrupt
        return real(self, line, rows, factors, **kwargs)
    monkeypatch.setattr(Evaluator, "grid", grid)


def test_time_budget_tries_gammas_nearest_the_scale_first(moons, monkeypatch):
    # issue 35: no gamma starts unless it (as long as the longest so far) ends within the
    # budget, the refit's reserve left; the gammas nearest "scale" go first. A fake clock:
    # every gamma takes 0.6 s, nothing else takes time
    X, y = moons
    clock = [0.0]
    monkeypatch.setattr(_clock, "_now", lambda: clock[0])
    _fake_grid(monkeypatch, clock, 0.6)
    search = KernelClassifierCV(families="exact-svm", time_budget=2.0).fit(X, y)
    gammas = [p["gamma"] / (1 / (2 * X.var())) for p in search.cv_results_["params"]]
    # 0.6 s, 1.2 s: the grid's third gamma (7 penalties) is not started; a local move
    # around the best (a gamma step at the 3 penalties beside the best's, or one penalty
    # past the edge), priced below it, may be
    assert gammas[:7] == pytest.approx([1.0] * 7)
    assert gammas[7:14] == pytest.approx([0.5] * 7), search.stages_
    assert len(gammas) - 14 <= 3 and all(
        r.stage in ("gamma step", "penalties") for r in search.stages_[1:]
        if r.stage not in ("hold", "refit", "ensemble", "refit on a subsample")
        and r.outcome == "done"), search.stages_
    assert clock[0] <= 2.0 and not search.complete_
    assert search.predict(X).shape == (300,)


def test_a_grant_with_a_reserve_keeps_back_the_most_an_earlier_grant_ran_past_its_end(
        monkeypatch):
    # the work after a stop's last checkpoint runs past the grant's end, out of the time
    # reserved after it: a fake clock
    from kernelscale.model_selection._schedule import SLACK, Scheduler

    clock = [0.0]
    monkeypatch.setattr(_clock, "_now", lambda: clock[0])
    sched = Scheduler(100.0)
    with sched.run("first", unarmed=True) as handle:  # not stopped: measured, not an overrun
        clock[0] = handle.deadline.end + 3.0
    assert sched.overrun == 0.0
    assert sched.deadline(5.0).end == pytest.approx(100.0 - SLACK - 5.0)
    with sched.run("grid", reserve=5.0) as handle:
        clock[0] = handle.deadline.end + 0.4
    assert sched.overrun == pytest.approx(0.4)
    assert sched.deadline(5.0).end == pytest.approx(100.0 - SLACK - 5.4)
    assert sched.deadline().end == pytest.approx(100.0 - SLACK)  # the last work's own


def test_a_move_that_runs_past_its_grant_leaves_the_best_s_refit_affordable(monkeypatch):
    # regression: on bio at 2 minutes a move stopped at its grant's end left 1.5 s for a
    # refit priced at 1.4 s, which the refit's own check (its price and the scheduler's
    # slack) found past the time left: the model held on 36,000 of 107,999 rows came
    # back. The reserve now covers that check, and what grants ran past their ends.
    import types

    from kernelscale.model_selection import _run
    from kernelscale.model_selection._schedule import Scheduler

    clock = [0.0]
    monkeypatch.setattr(_clock, "_now", lambda: clock[0])
    run = _run.SearchRun.__new__(_run.SearchRun)
    run.records = types.SimpleNamespace(best=lambda: "the best")
    run.ev = types.SimpleNamespace(n=1000)
    run.searcher = types.SimpleNamespace(racing=True)  # the race's reserve: the best's refit
    run.sched = Scheduler(120.0)
    run.refit_predicted = lambda record, rows: 2.0
    with run.sched.run("grid", reserve=100.0) as handle:  # an early grant 0.2 s past its end
        clock[0] = handle.deadline.end + 0.2
    with run.sched.run("gamma step", reserve=run.reserve()) as handle:  # the last: as far
        clock[0] = handle.deadline.end + 0.2
    assert run.sched.affordable(_run.REFIT_SAFETY * 2.0)


def test_ctrl_c_keeps_the_best_model_held(moons, monkeypatch):
    # issue 44: an interrupt keeps the best model fitted so far (no refit starts after
    # Ctrl-C); every configuration scored is in cv_results_
    X, y = moons
    clock = [0.0]
    monkeypatch.setattr(_clock, "_now", lambda: clock[0])
    _fake_grid(monkeypatch, clock, 0.01, fail_family="falkon")
    with pytest.warns(UserWarning, match="interrupted: keeping the best of the \\d+ "):
        search = KernelClassifierCV(families=["exact-svm", "falkon"]).fit(X, y)
    # the best on every row was held as its refit as soon as it was the best
    assert not search.complete_ and search.model_origin_ == "refit"
    assert search.refit_rows_ == 300 and search.predict(X).shape == (300,)
    assert {p["family"] for p in search.cv_results_["params"]} == {"exact-svm"}
    assert len(search.cv_results_["params"]) == 49
    assert [r.outcome for r in search.stages_][-1] == "interrupted"


def test_verbose_shows_a_bar_and_the_leaderboard(moons, capfd):
    X, y = moons
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelClassifierCV(families="exact-svm", verbose=1).fit(X, y)
        assert "best 0." in capfd.readouterr().err
        KernelClassifierCV(families="exact-svm", verbose=2).fit(X, y)
        assert "family=exact-svm" in capfd.readouterr().out


def test_refit_centres_are_the_searched_ones(moons, monkeypatch):
    # the centres the grid scored with are captured where it draws them
    import kernelscale.model_selection._least_squares as least_squares

    X, y = moons
    drawn = []
    real = least_squares.select_landmarks

    def spy(*args, **kwargs):
        drawn.append(real(*args, **kwargs)[0])
        return drawn[-1], None
    monkeypatch.setattr(least_squares, "select_landmarks", spy)
    search = KernelClassifierCV(families="falkon", n_components=25, random_state=3).fit(X, y)
    model = search.best_estimator_
    assert isinstance(model, NystromKernelRidgeClassifier) and model.n_components_ == 25
    # every grid (RBF, Laplacian) drew the same centres from the same rows and seed
    assert len(drawn) >= 1
    for centres in drawn:
        np.testing.assert_array_equal(model.components_,
                                      centres.astype(model.components_.dtype))


def test_halving_screens_gammas_on_subsamples():
    X, y = make_classification(3000, n_features=6, n_informative=4, random_state=0)
    search = KernelClassifierCV(families="exact-svm", halving=True, random_state=0).fit(X, y)
    rounds = search.halving_
    # 3000 / 9 is below the 500-row floor: 7 gammas on 1,000 rows, the best 3 on every row
    assert [r["rows"] for r in rounds] == [1000, 3000]
    assert rounds[0]["gammas"] == {"exact-svm": 7} and rounds[1]["gammas"] == {"exact-svm": 3}
    rows = search.cv_results_["n_resources"]
    assert list(np.unique(rows)) == [1000, 3000] and np.sum(rows == 3000) == 21
    assert search.refit_rows_ == 3000 and rows[search.best_index_] == 3000
    full = KernelClassifierCV(families="exact-svm", random_state=0).fit(X, y)
    assert search.best_score_ >= full.best_score_ - 0.005
    with pytest.raises(ValueError, match="halving=True"):
        KernelClassifierCV(halving=True, cv=_folds(X, y)).fit(X, y)


def test_falkon_grid_starts_no_eigendecomposition_that_would_end_past_its_stop(monkeypatch):
    # no checkpoint stops LAPACK: on 108,000 rows beside two busy loops a fold's m x m
    # eigendecomposition started before the grid's stop and ended 1.6 s past it, the
    # refit's whole reserve, and the model held on 4,000 rows came back. A fake clock:
    # each eigendecomposition (the whitening, every fold's path) takes 1 s, nothing else
    # any; the stop ends at 2.5 s: the whitening and the first fold end by 2 s, the
    # second fold would end at 3 s, so it does not start
    from kernelscale._clock import TimeUp, stop_at
    from kernelscale.model_selection import _least_squares

    X, Y, weights, folds = _falkon_grid_problem(300, 3)
    clock = [0.0]
    monkeypatch.setattr(_clock, "_now", lambda: clock[0])
    paths = []

    def slow(real):
        def call(*args, **kwargs):
            clock[0] += 1.0
            paths.append(real)
            return real(*args, **kwargs)
        return call
    monkeypatch.setattr(_least_squares, "whitening", slow(_least_squares.whitening))
    monkeypatch.setattr(_least_squares, "ridge_path", slow(_least_squares.ridge_path))
    with pytest.raises(TimeUp), stop_at(2.5):
        falkon_grid(X, Y, weights, folds, gamma_ref=0.2, factors=[1.0], alphas=[0.01, 1.0],
                    n_components=30, random_state=0, score=lambda f, v: 0.0,
                    memory_budget=2**26)
    assert clock[0] <= 2.5 and len(paths) == 2


@pytest.mark.parametrize("labels", [np.array([0, 1, 2]), np.array(["a", "bb", "c"])])
def test_accuracy_scorer_is_accuracy_score(labels):
    # the grid's accuracy skips scikit-learn's input checks; the value is the same
    rng = np.random.default_rng(0)
    y_true, y_pred = labels[rng.integers(0, 3, 97)], labels[rng.integers(0, 3, 97)]
    assert SCORERS["accuracy"][0](y_true, y_pred) == accuracy_score(y_true, y_pred)


def test_falkon_grid_blocks_are_small_enough_for_a_stop_to_be_honoured(monkeypatch):
    # blocks as large as the memory budget allowed left 5-7 s between checkpoints on 141,142
    # rows (a loaded search's grid ran 7.4 s past its grant): a block's work is now capped,
    # and the capped blocks give the same scores
    from kernelscale.model_selection import _least_squares

    X, Y, weights, folds = _falkon_grid_problem(600)

    def run():
        got = []
        falkon_grid(X, Y, weights, folds, gamma_ref=0.2, factors=[1.0], alphas=[0.01, 1.0],
                    n_components=30, random_state=0,
                    score=lambda f, v: got.append(v) or 0.0, memory_budget=2**26)
        return got

    calls = []
    real = _least_squares.checkpoint
    monkeypatch.setattr(_least_squares, "checkpoint",
                        lambda needed=0.0: calls.append(1) or real(needed))
    whole = run()
    few = len(calls)
    calls.clear()
    monkeypatch.setattr(_least_squares, "CHECK_FLOPS", 30 * (30 + 4) * 50)  # 256-row floor
    capped = run()
    # the statistics' pass and the scoring's pass each check at every block (3 of 256 rows)
    assert len(calls) >= few + 2 * 2, (few, len(calls))
    for a, b in zip(whole, capped):  # sums in another order: the solves' round-off
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
