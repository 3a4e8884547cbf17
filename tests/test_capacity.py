"""FALKON's centres chosen by the time left (issue 35, item 3): grown while they score
better on the first fold and the measured cost fits the budget."""

from __future__ import annotations

import time

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from kernelscale.model_selection._capacity import grow_centres, kept_centres


class _Fake(ClassifierMixin, BaseEstimator):
    """A model whose fold score is a given function of its centres, fitting in a given time."""

    def __init__(self, m=1, score=None, seconds=None):
        self.m, self.score_of, self.seconds = m, score, seconds

    def fit(self, X, y, sample_weight=None):
        time.sleep(self.seconds(self.m))
        self.classes_ = np.array([0.0, 1.0])
        return self

    def predict(self, X):
        correct = int(round(self.score_of(self.m) * len(X)))
        return np.r_[np.zeros(correct), np.ones(len(X) - correct)]


def _grow(score, seconds, *, budget, refit_seconds=0.01, m=100, memory_budget=2**30,
          step_seconds=lambda m, rows: 0.0):
    X, y = np.zeros((10000, 3)), np.zeros(10000)
    fold = (np.arange(8000), np.arange(8000, 10000))
    steps = []
    chosen = grow_centres(lambda k: _Fake(k, score, seconds), X, y, None, fold, score(m),
                          m=m, scoring="accuracy", task="classifier",
                          end=time.perf_counter() + budget, refit_seconds=refit_seconds,
                          memory_budget=memory_budget, log=steps.append,
                          step_seconds=step_seconds)
    return chosen, steps


def test_centres_grow_while_they_score_better():
    chosen, steps = _grow(lambda m: min(0.9, 0.5 + m / 2000), lambda m: 0.0, budget=30)
    assert [s["n_components"] for s in steps] == [200, 400, 800, 1600]
    assert [s["kept"] for s in steps] == [True, True, True, False]
    assert chosen == 800  # 1600 scored no better than 800


def test_no_step_the_time_left_cannot_pay_for():
    # a refit of 1 s predicts a fold fit of 0.8 s at m, 1.6 s at 2m, plus 2 s of refit
    chosen, steps = _grow(lambda m: m / 1e4, lambda m: 0.0, budget=2.0, refit_seconds=1.0)
    assert chosen == 100 and steps == []
    # measured steps: each doubles the measured fit, so the steps stop before the end
    chosen, steps = _grow(lambda m: m / 1e5, lambda m: m * 2e-4, budget=1.5,
                          refit_seconds=0.02)
    assert 0 < len(steps) < 10


def test_memory_caps_the_centres():
    m = kept_centres(10000, 3, 64 * 2**20)
    # K(X, C) float32 for 10,000 rows beside its m x m factors within 64 MiB
    assert 4 * (10000 * m + m * m) <= 64 * 2**20 < 4 * (10000 * 2 * m + 4 * m * m)
    # recomputing the blocks, only the m x m factors bound them
    most = kept_centres(10000, 3, 64 * 2**20, kept=False)
    assert 4 * most * most <= 64 * 2**20 < 4 * 4 * most * most
    chosen, _ = _grow(lambda m: m / 1e5, lambda m: 0.0, budget=30, memory_budget=16 * 2**20)
    assert chosen <= kept_centres(10000, 3, 16 * 2**20, kept=False)


def test_centres_past_the_kept_kernel_are_priced_by_recomputation():
    # 8 MiB keeps K(X, C) for 10,000 rows up to ~200 centres: the doubling from 100 to 200
    # is priced as kept, the one past it as the kept fits' cost plus RECOMPUTE_STEPS
    # builds of K(X, C), one step as the probe measures it
    from kernelscale.model_selection._capacity import RECOMPUTE_STEPS

    budget = 8 * 2**20
    kept = kept_centres(10000, 3, budget)
    assert 100 <= kept < 400 <= kept_centres(10000, 3, budget, kept=False)
    probed = []

    def step(m, rows):
        probed.append((m, rows))
        return m * 5e-4
    # fits of m * 2e-4 s: 0.04 s at 200 centres predicts (0.08 + 20 x 0.2) x 2.25 = 9.2 s
    # for 400, which 3 s left do not pay for
    chosen, steps = _grow(lambda m: m / 1e4, lambda m: m * 2e-4, budget=3.0,
                          refit_seconds=0.05, memory_budget=budget, step_seconds=step)
    assert chosen == 200 and [s["n_components"] for s in steps] == [200]
    assert probed == [(400, 8000)]  # the fold's training rows, at the doubling's centres
    # with the time to pay for it, the recomputed doubling is tried (and measured: the
    # next one is priced from it, without the probe)
    probed.clear()
    chosen, steps = _grow(lambda m: m / 1e4, lambda m: m * 2e-4, budget=4.0 * RECOMPUTE_STEPS,
                          refit_seconds=0.05, memory_budget=budget, step_seconds=step)
    assert [s["n_components"] for s in steps] == [200, 400, 800] and chosen == 800
    assert probed == [(400, 8000)]


def test_a_cheap_recomputation_is_tried_where_the_time_left_pays_for_it():
    # regression (1e6 rows, 10 minutes): past the ~1,300 kept centres the first doubling was
    # priced at 20x the kept fit's linear part (1,116 s for a 40-47 s fold fit and its
    # refit), and no doubling was tried with 352 s left. Priced by its measured step, a
    # recomputed doubling the time left pays for is tried: here 0.08 s of kept work and
    # 20 steps of 2 ms, (0.08 + 0.04) x 2.25 = 0.27 s, with 1.5 s left (20x the linear part:
    # 3.6 s)
    budget = 8 * 2**20
    chosen, steps = _grow(lambda m: m / 1e4, lambda m: m * 2e-4, budget=1.5,
                          refit_seconds=0.05, memory_budget=budget,
                          step_seconds=lambda m, rows: 2e-3)
    assert [s["n_components"] for s in steps][:2] == [200, 400] and chosen >= 400


def test_the_probe_times_a_block_of_the_models_kernel(monkeypatch):
    from kernelscale import NystromKernelRidge
    from kernelscale.model_selection import _capacity
    from kernelscale.models import LocalKernelRegressor

    # a clock that moves 1 s a reading: each timed block "takes" 1 s, so the step's
    # seconds are the probe's scaling alone (no timing in the assertions)
    ticks = iter(range(10**6))
    monkeypatch.setattr(_capacity, "now", lambda: float(next(ticks)))
    X = np.random.default_rng(0).normal(size=(3000, 6))
    model = NystromKernelRidge(kernel="laplacian", gamma=0.5)
    # 1,000 centres: a block of min(3000, 2**22 // 1000) = 3,000 rows, scaled to the rows
    assert _capacity.recomputed_step_seconds(model, X, 100_000, 1000) == \
        pytest.approx(100_000 / 3000)
    # local models are timed by their leaves' model
    assert _capacity.recomputed_step_seconds(LocalKernelRegressor(model), X, 1_000_000,
                                             1000) == pytest.approx(1_000_000 / 3000)
    # more centres than rows: every row in the block and the centres, scaled to m
    assert _capacity.recomputed_step_seconds(model, X[:500], 1000, 2000) == \
        pytest.approx(1000 / 500 * 2000 / 500)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_search_grows_falkon_within_its_time_budget():
    from kernelscale import KernelClassifierCV
    from kernelscale.datasets import make_nonlinear_problem

    X, y = make_nonlinear_problem(3000, random_state=1)
    search = KernelClassifierCV(families=["falkon"], gamma_factors=[1.0], cv=3,
                                time_budget=120, random_state=0).fit(X, y)
    # the cap (the fold's 2,000 training rows) ends the doubling long before the budget
    # (ample: a cold numba cache puts its compilation in the measured refit)
    steps = search.capacity_
    assert steps and steps[0]["n_components"] == 2 * search.cv_results_["params"][0][
        "n_components"]
    kept = [s["n_components"] for s in steps if s["kept"]]
    m = kept[-1] if kept else search.cv_results_["params"][0]["n_components"]
    assert search.best_params_["n_components"] == m == search.best_estimator_.n_components_
    assert "the time left grew FALKON's centres" in search.family_choice_
    # without a time budget the grid's centres are refitted, as scored
    plain = KernelClassifierCV(families=["falkon"], gamma_factors=[1.0], alphas=[1.0], cv=3,
                               n_components=None, random_state=0).fit(X[:600], y[:600])
    assert plain.capacity_ is None


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_exact_svm_challenges_another_family_where_its_cost_fits(monkeypatch):
    # the rule leaves the exact SVM above EXACT_MAX_ROWS; with time left, its measured cost
    # lets it challenge the winner on the first fold, and it is refitted if it wins
    from kernelscale import KernelClassifierCV
    from kernelscale.datasets import make_nonlinear_problem
    from kernelscale.model_selection import _choice

    monkeypatch.setattr(_choice, "EXACT_MAX_ROWS", 1000)
    X, y = make_nonlinear_problem(4000, random_state=5)
    search = KernelClassifierCV(gamma_factors=[1.0], alphas=[1e3], cv=3, time_budget=60,
                                learn_widths=False, random_state=0).fit(X, y)
    step = search.challenger_
    winner = int(np.argmin(search.cv_results_["rank_test_score"]))
    assert search.cv_results_["params"][winner]["family"] == "falkon"
    assert 1.5 <= step["exponent"] <= 2.5 and step["score"] is not None
    assert step["won"] == (step["score"] > step["winner_score"])
    if step["won"]:  # an over-smoothed FALKON (alpha 1e3) loses to the exact SVM
        assert search.best_params_["family"] == "exact-svm"
        assert type(search.best_estimator_).__name__ == "KernelSVC"
        assert "was refitted" in search.family_choice_
    assert step["won"]
    # too little time left for it: said, in numbers
    from kernelscale.model_selection import _refit

    def too_slow(*args, log, **kwargs):
        log({"predicted_fold_s": 123.0, "predicted_refit_s": 456.0, "exponent": 2.0,
             "measured_rows": [1500, 3000], "score": None, "seconds": None, "won": False})
        return False
    monkeypatch.setattr(_refit, "exact_challenger", too_slow)
    slow = KernelClassifierCV(gamma_factors=[1.0], alphas=[1e3], cv=3, time_budget=60,
                              learn_widths=False, random_state=0).fit(X, y)
    assert slow.challenger_["score"] is None and slow.best_params_["family"] == "falkon"
    assert ("the exact SVM was not fitted on every row: its cost measured on up to 3000 rows "
            "(~n^2.00) predicted 123 s for the first fold and 456 s for the refit, past the "
            "time left") in slow.family_choice_
    # no time budget, or families given: no challenger
    assert KernelClassifierCV(families=["falkon"], gamma_factors=[1.0], alphas=[1e3], cv=3,
                              time_budget=60, random_state=0).fit(X, y).challenger_ is None


def test_an_unaffordable_challenger_is_not_fitted():
    from kernelscale.model_selection._capacity import exact_challenger

    X, y = np.zeros((10000, 3)), np.r_[np.zeros(5000), np.ones(5000)]
    fold = (np.arange(8000), np.arange(8000, 10000))
    class Linear(_Fake):  # fits in 1e-4 s per row
        def fit(self, X, y, sample_weight=None):
            time.sleep(1e-4 * len(X))
            self.classes_ = np.array([0.0, 1.0])
            return self

    steps = []
    won = exact_challenger(lambda: Linear(1, lambda m: 1.0), X, y, None, fold, 0.5,
                           scoring=None, task="classifier", end=time.perf_counter() + 1.2,
                           seed=0, log=steps.append)
    # fits of 1,500 and 3,000 rows (0.15 s, 0.3 s) measure n^1, taken as n^1.5 (small fits
    # are their overhead): the fold's fit predicted at 1.3 s, past the time left
    assert not won and steps[0]["score"] is None
    assert steps[0]["measured_rows"] == [1500, 3000]
    assert steps[0]["exponent"] == 1.5
    assert steps[0]["predicted_fold_s"] == pytest.approx(0.3 * (8000 / 3000) ** 1.5, rel=0.2)


def test_small_fits_overhead_does_not_predict_a_large_fit_cheap():
    # regression (1e6 rows): two small fits dominated by overhead measured n^1, which
    # predicted 80 s for the first fold's 800,000 rows; the exact SVM then ran for hours
    from kernelscale.model_selection._capacity import exact_challenger

    class Quadratic(_Fake):  # 0.05 s of overhead, then quadratic in the rows
        def fit(self, X, y, sample_weight=None):
            assert len(X) <= 100_000, "fitted on the fold: hours at this cost"
            time.sleep(0.05 + 1e-9 * len(X) ** 2)
            self.classes_ = np.array([0.0, 1.0])
            return self

    n = 1_000_000
    X, y = np.zeros((n, 1), dtype=np.float32), np.r_[np.zeros(n // 2), np.ones(n // 2)]
    fold = (np.arange(800_000), np.arange(800_000, n))
    steps = []
    won = exact_challenger(lambda: Quadratic(1, lambda m: 1.0), X, y, None, fold, 0.5,
                           scoring=None, task="classifier", end=time.perf_counter() + 60,
                           seed=0, log=steps.append)
    assert not won and steps[0]["score"] is None
    # the old two fits predicted 16 s for the fold (n^1 from the overhead); the growth is
    # now taken as at least n^1.5, and further fits measure past the overhead
    assert steps[0]["exponent"] >= 1.5 and steps[0]["predicted_fold_s"] > 20


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_halving_at_scale_screens_the_families_and_challenges_with_the_screened_svm(
        monkeypatch):
    # beyond EXACT_MAX_ROWS halving is on by default: the exact SVM's whole grid is
    # screened beside FALKON's on one subsample, FALKON's gammas are halved on growing
    # subsamples, and the challenger is the exact SVM at its screened best
    from kernelscale import KernelClassifierCV, KernelRegressorCV
    from kernelscale.datasets import make_nonlinear_problem
    from kernelscale.model_selection import _choice, _search, _stages

    monkeypatch.setattr(_choice, "EXACT_MAX_ROWS", 1000)
    monkeypatch.setattr(_search, "EXACT_MAX_ROWS", 1000)
    monkeypatch.setattr(_stages, "EXACT_SCREEN_ROWS", 1500)
    X, y = make_nonlinear_problem(4500, random_state=5)
    search = KernelClassifierCV(gamma_factors=[0.25, 1.0, 4.0], alphas=[1e-3, 1e3], cv=3,
                                n_components=200, time_budget=120, learn_widths=False,
                                random_state=0).fit(X, y)
    stages = {(r["stage"], r["family"]) for r in search.halving_}
    assert stages == {("families", "exact-svm"), ("families", "falkon"), ("gammas", "falkon")}
    screen = {r["family"]: r for r in search.halving_ if r["stage"] == "families"}
    assert screen["exact-svm"]["rows"] == 1500 and screen["exact-svm"]["gammas"] == 3
    assert "screened on 1500 rows" in search.family_choice_
    # FALKON's gammas: 3 screened on 4500 / 3 rows, 1 cross-validated on every row
    assert len({p["gamma"] for p in search.cv_results_["params"]}) == 1
    best = screen["exact-svm"]["best_params"]
    step = search.challenger_
    if best["C"] != 1.0 or best["gamma"] != search.cv_results_["params"][0]["gamma"]:
        assert step["params"] == best
        assert "on the family screen" in search.family_choice_
    assert step["score"] is not None
    # at most EXACT_MAX_ROWS rows, or a regressor: no family screen
    small = KernelClassifierCV(gamma_factors=[1.0], alphas=[1.0], cv=3,
                               random_state=0).fit(X[:900], y[:900])
    assert small.halving_ is None
    reg = KernelRegressorCV(gamma_factors=[0.25, 1.0, 4.0], alphas=[1.0], cv=3,
                            n_components=200, learn_widths=False,
                            random_state=0).fit(X, y.astype(float))
    assert {r["stage"] for r in reg.halving_} == {"gammas"}


def test_the_cubic_cost_of_many_centres_is_predicted_from_the_measured_fits():
    # regression (Beijing, 306k rows, 5 minutes): doubling the centres was priced at twice
    # the last fit, but the m x m factorisations grow 8x a doubling; from two measured fits
    # fit_seconds solves a m + b m^3, so a fit of 4.1 s (1,600 centres) after 0.51 s (800)
    # is predicted at ~4 s, past the time left, and not started
    from kernelscale.model_selection._capacity import fit_seconds

    def cubic(m):
        return (m / 100) ** 3 * 1e-3

    assert fit_seconds([(400, cubic(400)), (800, cubic(800))], 1600) == pytest.approx(
        cubic(1600), rel=0.01)
    chosen, steps = _grow(lambda m: m / 1e4, cubic, budget=5.0, refit_seconds=cubic(100) * 1.25,
                          memory_budget=2**30)
    assert [s["n_components"] for s in steps] == [200, 400, 800] and chosen == 800


def test_the_kept_kernel_is_priced_in_the_fits_dtype_and_the_folds_budget():
    # regression (Beijing, 306k rows): a float64 winner's K(X, C) holds twice the bytes,
    # and the fold's fit has the budget less its copy of the rows; both were priced as a
    # float32 fit with the whole budget, so a doubling that recomputes its kernel blocks
    # was started as if kept, and ran minutes past the budget
    from kernelscale.model_selection._capacity import grow_centres

    X, y = np.zeros((10000, 3)), np.zeros(10000)
    fold = (np.arange(8000), np.arange(8000, 10000))
    for options in ({"itemsize": 8}, {"fold_budget": 2 * 2**20}):
        steps = []
        grow_centres(lambda k: _Fake(k, lambda m: m / 1e4, lambda m: m * 2e-4), X, y, None,
                     fold, 0.01, m=100, scoring="accuracy", task="classifier",
                     end=time.perf_counter() + 3.0, refit_seconds=0.05,
                     memory_budget=8 * 2**20, log=steps.append,
                     step_seconds=lambda m, rows: m * 5e-4, **options)
        # float32 with the whole budget keeps ~200 centres (the step to 200 is taken, see
        # above); here fewer are kept, so the first doubling is priced as recomputed
        assert steps == [], options


def test_local_models_price_the_kept_kernel_of_their_largest_leaf():
    # regression (Beijing, 4 leaves of ~76,000 rows, 10 minutes): each leaf's fit holds its
    # own K(X, C), one leaf at a time; priced as one fit over every row, the doubling to
    # 4,000 centres was priced as recomputing its blocks (438 s) and not taken, 426 s left
    X, y = np.zeros((10000, 3)), np.zeros(10000)
    fold = (np.arange(8000), np.arange(8000, 10000))
    for model_rows, taken in ((None, False), (2000, True)):
        steps = []
        grow_centres(lambda k: _Fake(k, lambda m: m / 1e4, lambda m: m * 2e-4), X, y, None,
                     fold, 0.01, m=100, scoring="accuracy", task="classifier",
                     end=time.perf_counter() + 3.0, refit_seconds=0.05,
                     memory_budget=8 * 2**20, log=steps.append, itemsize=8,
                     model_rows=model_rows, step_seconds=lambda m, rows: m * 5e-4)
        assert bool(steps) == taken, (model_rows, steps)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_grown_refit_past_the_time_left_falls_back_to_fewer_centres(monkeypatch):
    # regression (Beijing, 5 minutes): 8,000 centres per leaf scored, their refit on every
    # row stopped by the budget's end, and every doubling was lost with it; the refit is now
    # of the most centres whose refit (priced from their fold fit) fits the time left
    from kernelscale import KernelRegressorCV
    from kernelscale.model_selection import _refit

    def grown(make_model, X, y, sample_weight, fold, scored, *, m, log, on_kept, **kwargs):
        for centres, seconds in ((2 * m, 0.01), (4 * m, 1e5)):  # the second's refit: days
            log({"n_components": centres, "score": scored + 0.01, "seconds": seconds,
                 "kept": True})
            on_kept(None, seconds)
        return 4 * m
    monkeypatch.setattr(_refit, "grow_centres", grown)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(3000, 2))
    y = np.sin(6 * X[:, 0]) + X[:, 1]
    search = KernelRegressorCV(families="falkon", gamma_factors=[1.0], alphas=[1e-3], cv=3,
                               learn_widths="none", time_budget=60, random_state=0).fit(X, y)
    m = search.cv_results_["params"][0]["n_components"]
    (growth,) = [r for r in search.stages_ if r.stage == "growth"]
    assert f"the refit with {4 * m} centres is predicted past the time left: {2 * m} " \
           "refitted" in growth.note, growth.line()
    assert search.best_params_["n_components"] == 2 * m == search.best_estimator_.n_components_
    assert search.model_origin_ == "growth"
