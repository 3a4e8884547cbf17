"""The anytime search (issue 44): a model from the first seconds, every stage inside the
time the scheduler grants it, the budget kept whatever the machine's speed, nothing
scored lost to the clock, Ctrl-C or a failed configuration.

The clocks here are fake (``kernelscale._clock._now``): the tests assert on the time the
search saw, never on the wall clock, so a busy CI machine cannot fail them.
"""

from __future__ import annotations

import re
import time
import warnings

import numpy as np
import pytest

from kernelscale import KernelClassifierCV, KernelRegressorCV, _clock
from kernelscale.datasets import make_nonlinear_problem
from kernelscale.model_selection import _refit, _search, _stages, _state
from kernelscale.model_selection._schedule import CostCurve, Scheduler


class SlowClock:
    """The wall clock, ``factor`` times slower from when ``slow()`` is called: work after
    it appears to take ``factor`` times as long as the same work before."""

    def __init__(self):
        self.real0 = time.perf_counter()
        self.fake0 = 1000.0
        self.factor = 1.0

    def __call__(self):
        return self.fake0 + (time.perf_counter() - self.real0) * self.factor

    def slow(self, factor):
        now = self()
        self.real0, self.fake0, self.factor = time.perf_counter(), now, factor


@pytest.fixture(scope="module")
def compiled():
    """Both searches run once on a real clock, so that numba's one-time compiling (cached
    on disk after a fresh install's first search) is not read as the machine's speed: the
    3x slower clock below would make a compile of a few seconds look like ten. The grids'
    C / alpha paths on 2,000 rows and a float64 FALKON refit compile what 1,500 rows do
    not reach (the grid probe's paths: on a fresh install they compiled inside a 3x
    slower probe, 7.3 s of its 4 s)."""
    X, y = make_nonlinear_problem(2000, n_features=8, n_informative=4, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # first without a budget: a fresh install's compiling (~15 s) would be refused as
        # a budget too short for the first model
        KernelClassifierCV(gamma_factors=[1.0], Cs=[1.0, 10.0], learn_widths="none",
                           random_state=0).fit(X, y)
        KernelRegressorCV(families="falkon", gamma_factors=[1.0], alphas=[1e-4, 1.0],
                          learn_widths="none", random_state=0).fit(X, X[:, 0] * X[:, 1])
        X, y = X[:1500], y[:1500]
        KernelClassifierCV(time_budget=15.0, random_state=0).fit(X, y)
        KernelRegressorCV(time_budget=15.0, random_state=0).fit(X, X[:, 0] * X[:, 1])


@pytest.fixture
def slow_after_first_model(monkeypatch, compiled):
    """Every unit of work after the first model 3x slower than the first model measured."""
    clock = SlowClock()
    monkeypatch.setattr(_clock, "_now", clock)
    real = _search.first_model

    def first_then_slow(*args):
        real(*args)
        clock.slow(3.0)
    monkeypatch.setattr(_search, "first_model", first_then_slow)
    return clock


@pytest.mark.parametrize("task, rows, budget", [("classifier", 6000, 20.0),
                                                ("regressor", 8000, 24.0)])
def test_a_search_3x_slower_than_its_pilot_still_returns_within_the_budget(
        slow_after_first_model, task, rows, budget):
    clock = slow_after_first_model
    X, y = make_nonlinear_problem(rows, n_features=8, n_informative=4, random_state=0)
    if task == "regressor":
        y = X[:, 0] * X[:, 1] + np.sin(X[:, 2])
        search = KernelRegressorCV(time_budget=budget, random_state=0)
    else:
        search = KernelClassifierCV(time_budget=budget, random_state=0)
    began = clock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    took = clock() - began
    assert took <= budget * 1.05 + 2.0, [r.line() for r in search.stages_]
    assert search.predict(X[:10]).shape == (10,)
    assert search.best_estimator_ is not None and search.stages_[0].stage == "first model"
    # every stage's time was granted by the scheduler, and none ran past its grant
    for record in search.stages_:
        if record.outcome != "skipped":
            assert record.granted is not None, record.line()
            assert record.seconds <= record.granted + 2.0, record.line()


def test_every_stage_runs_inside_a_grant(monkeypatch):
    # no work of a time-budgeted search runs without a stop armed by the scheduler, but
    # the first model's first fit (the probe that says whether the budget can be met)
    calls = {"armed": 0, "unarmed": []}

    def armed(what):
        if _clock.current_stop() is None:
            calls["unarmed"].append(what)
        else:
            calls["armed"] += 1

    real_run, real_fit = _stages.run_family, _state.SearchState.fit_on

    def run_family(*args, **kwargs):
        armed(f"grid {args[0]}")
        return real_run(*args, **kwargs)

    def fit_on(self, model, rows):
        armed(f"fit on {rows.size} rows")
        return real_fit(self, model, rows)
    monkeypatch.setattr(_stages, "run_family", run_family)
    monkeypatch.setattr(_state.SearchState, "fit_on", fit_on)
    from kernelscale.models import NystromKernelRidge
    real_ridge = NystromKernelRidge.fit

    def ridge_fit(self, X, y, sample_weight=None, **kw):
        armed(f"NystromKernelRidge on {len(X)} rows")
        return real_ridge(self, X, y, sample_weight, **kw)
    monkeypatch.setattr(NystromKernelRidge, "fit", ridge_fit)
    X, _ = make_nonlinear_problem(4000, n_features=6, random_state=1)
    y = np.sin(X[:, 0]) + X[:, 1] ** 2
    search = KernelRegressorCV(time_budget=60, random_state=0).fit(X, y)
    # the one fit outside a grant is the first one, and it is inside the first model's
    # stage record
    assert len(calls["unarmed"]) == 2 and calls["armed"] > 5, calls
    assert calls["unarmed"][0].startswith("fit on")
    stages = [r.stage for r in search.stages_]
    assert stages[0] == "first model" and "refit" in stages and search.refit_rows_ == 4000


def test_ctrl_c_before_the_first_model_says_nothing_was_scored(monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(_state.SearchState, "fit_on", interrupt)
    X, y = make_nonlinear_problem(500, random_state=0)
    with pytest.raises(KeyboardInterrupt, match="before the first model: nothing was scored"):
        KernelClassifierCV().fit(X, y)


def test_a_failed_gamma_of_falkon_is_dropped_with_a_warning(monkeypatch):
    import kernelscale.model_selection._least_squares as least_squares
    import kernelscale.model_selection._search as search_module

    real, calls = least_squares.whitening, []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the second gamma of the grid on every row
            raise np.linalg.LinAlgError("injected")
        return real(*args, **kwargs)
    monkeypatch.setattr(least_squares, "whitening", failing)
    # the kernel stage's grids would make the first calls: the failure is the grid's
    monkeypatch.setattr(search_module, "choose_kernel",
                        lambda search, state, sched: sched.skip("kernel", "not run"))
    X, y = make_nonlinear_problem(600, random_state=0)
    with pytest.warns(UserWarning, match=r"gamma factor .* failed \(LinAlgError: injected\)"):
        search = KernelClassifierCV(families="falkon", n_components=50, gamma_factors=[1, 2, 4],
                                    alphas=[1.0, 10.0], random_state=0).fit(X, y)
    assert len({p["gamma"] for p in search.cv_results_["params"]}) == 2
    assert search.model_origin_ == "refit" and search.predict(X).shape == (600,)


def test_a_refit_the_time_left_cannot_pay_for_fits_the_first_folds_rows(monkeypatch):
    # the refit on every row predicted past the budget: the winner is fitted on the rows the
    # time pays for, scored on the first fold's held-out rows, and said
    monkeypatch.setattr(_refit, "refit_seconds", lambda *a, **k: 1e6)
    X, y = make_nonlinear_problem(3000, random_state=0)
    search = KernelClassifierCV(families="exact-svm", gamma_factors=[1.0], Cs=[1.0, 10.0],
                                time_budget=30, random_state=0).fit(X, y)
    refits = [r for r in search.stages_ if r.stage == "refit"]
    assert "the refit on every row is predicted at" in refits[0].note, refits[0].line()
    assert search.predict(X).shape == (3000,)
    if search.best_params_["C"] == 10.0:  # not the first model's C: fitted on a subsample
        assert search.model_origin_ == "refit on a subsample" and search.refit_rows_ < 3000
        assert "of the first fold's 2400 training rows" in refits[0].note
    else:  # the first model's configuration: its fit on 2,400 rows stands
        assert search.model_origin_ == "first model" and search.refit_rows_ == 2400


def test_cost_curves_and_the_scheduler_records():
    curve = CostCurve(1.0, 0.5, 1.5, fixed=1.0)
    curve.add(1000, 2.0)
    assert curve.predict(3000) == pytest.approx(4.0) and curve.largest(4.0) == 3000
    clock = [0.0]
    scheduler = Scheduler(10.0, 0.0)
    try:
        _clock._now, real = (lambda: clock[0]), _clock._now
        with scheduler.stage("grid", reserve=4.0) as run:
            assert run.until == pytest.approx(10.0 - 4.0 - 0.25)
            clock[0] = 7.0
            _clock.checkpoint()  # past the grant: the stage is stopped, what it did kept
            pytest.fail("not stopped")
        record = scheduler.records[-1]
        assert record.outcome == "stopped" and record.granted == pytest.approx(5.75)
    finally:
        _clock._now = real


def test_a_refit_that_cannot_end_in_time_leaves_the_grid_its_time(monkeypatch):
    # measured on 1e6 rows: a refit predicted at 440 s held 112 s for itself and the grid got
    # none; the search ended at 10 s of 120. Now the grid gets the time, the refit a share
    from types import SimpleNamespace

    from kernelscale.model_selection import _first_model

    clock = [0.0]
    monkeypatch.setattr(_clock, "_now", lambda: clock[0])
    sched = Scheduler(120.0, 0.0)
    curve = CostCurve(1.0, 0.7, 1.5)
    curve.add(4000, 1.4)
    state = SimpleNamespace(fit_curve=curve, n=1_000_000)
    clock[0] = 8.0  # 112 s left
    assert _first_model.refit_grant(state, sched) == pytest.approx(
        _first_model.REFIT_SUBSAMPLE_SHARE * 112.0)
    small = CostCurve(1.0, 0.7, 1.5)
    small.add(4000, 0.004)  # a refit of 1 s: reserved whole
    state.fit_curve = small
    assert _first_model.refit_grant(state, sched) == pytest.approx(
        _first_model.REFIT_SAFETY * small.predict(1_000_000))


def test_the_time_a_subsample_refit_leaves_fits_the_winner_on_every_row(monkeypatch):
    # the refit on every row first predicted past the budget (from small fits): the winner is
    # fitted on a subsample, that fit measured, and the time it shows is left pays for every row
    real, calls = _refit.refit_seconds, []

    def pessimistic_once(*args, **kwargs):
        calls.append(1)
        return 1e6 if len(calls) == 1 else real(*args, **kwargs)
    monkeypatch.setattr(_refit, "refit_seconds", pessimistic_once)
    X, y = make_nonlinear_problem(4000, n_features=8, n_informative=4, random_state=0)
    search = KernelRegressorCV(families="falkon", gamma_factors=[1.0], alphas=[1.0, 10.0],
                               n_components=200, time_budget=40, random_state=0).fit(X, y)
    refits = [r for r in search.stages_ if r.stage == "refit"]
    assert "the refit on every row is predicted at" in refits[0].note, refits[0].line()
    assert len(calls) >= 2, [r.line() for r in search.stages_]
    assert search.refit_rows_ == 4000, [r.line() for r in search.stages_]
    assert search.model_origin_.endswith("refitted"), search.model_origin_


def test_a_falkon_penalty_moves_to_other_rows_as_the_square_root():
    from kernelscale.model_selection._families import penalty_on_rows

    assert penalty_on_rows(1000, 1000) == 1.0
    assert penalty_on_rows(250, 1000) == pytest.approx(0.5)
    assert penalty_on_rows(4000, 1000) * penalty_on_rows(1000, 4000) == pytest.approx(1.0)
    assert penalty_on_rows(0, 1000) == 1.0  # no rows: nothing to scale


def test_a_refit_priced_at_most_of_the_time_left_is_secured_first(monkeypatch):
    # measured on Beijing with two busy loops: a refit predicted at 6 s with 6.1 s left ran
    # past its grant and the first model stood. A refit priced at over half the time left
    # is now preceded by the winner on a share of the rows, whatever its size
    real_refit, real_model_on = _search.refit, _refit.model_on

    def tight(search, state, sched):
        monkeypatch.setattr(_refit, "refit_seconds", lambda *a, **k: 0.6 * sched.left())
        return real_refit(search, state, sched)

    def stopped_on_every_row(search, state, point, rows, settings=None):
        model, params = real_model_on(search, state, point, rows, settings)
        if rows == state.n:  # the machine turned slower: the budget's end stops it
            def fit(*args, **kwargs):
                raise _clock.TimeUp()
            model.fit = fit
        return model, params

    monkeypatch.setattr(_search, "refit", tight)
    monkeypatch.setattr(_refit, "model_on", stopped_on_every_row)
    monkeypatch.setattr(_refit, "SECURE_SECONDS", 1e9)  # only the tight refit's rule
    X, y = make_nonlinear_problem(3000, n_features=8, n_informative=4, random_state=0)
    search = KernelRegressorCV(families="falkon", gamma_factors=[0.02, 0.25, 1.0], alphas=[1e-2],
                               n_components=100, learn_widths="none", time_budget=60,
                               random_state=0).fit(X, y)
    lines = [r.line() for r in search.stages_]
    secured, full = [r for r in search.stages_ if r.stage == "refit"]
    assert secured.outcome == "done" and "of the first fold's 2400 training rows" in \
        secured.note, lines
    assert full.outcome == "stopped", lines
    assert search.model_origin_ == "refit (secured first)", lines
    assert search.best_params_["gamma"] == search.cv_results_["params"][search.best_index_][
        "gamma"]


@pytest.mark.parametrize("n, sizes", [(20_000, "1 size"), (64_000, "2 sizes")])
def test_falkons_grid_probe_measures_a_second_larger_size_on_many_rows(monkeypatch, n, sizes):
    # one probe on 2,000 rows priced a gamma of Beijing's 305,734 rows at 83 s where it took
    # 23 s: the part that does not grow dominated it; a second on 16,000 rows prices the growth
    later = ("learn_metric", "choose_kernel", "screen", "grid", "weigh_classes", "refit",
             "challenge", "split_leaves", "grow", "average_leaves")
    for name in later:
        monkeypatch.setattr(_search, name,
                            lambda search, state, sched, name=name: sched.skip(name, "not run"))
    seen = {}
    real = _stages._probe_unit

    def probe(search, state, *args, **kwargs):
        real(search, state, *args, **kwargs)
        seen["curve"] = state.unit_curve
    monkeypatch.setattr(_stages, "_probe_unit", probe)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    search = KernelRegressorCV(families="falkon", n_components=50, learn_widths="none",
                               time_budget=60, random_state=0).fit(X, y)
    (record,) = [r for r in search.stages_ if r.stage == "grid probe"]
    curve = seen["curve"]
    assert [size for size, _ in curve.points] == \
        ([2000.0] if sizes == "1 size" else [2000.0, 16000.0]), record.line()
    assert "s on 2000 rows" in record.note
    if sizes == "2 sizes":
        assert "s on 16000 rows" in record.note and curve.low == 1.0
        # the larger fit's growing part, scaled as the rows at least
        (_, t1) = curve.points[-1]
        assert curve.predict(10 * 16000) >= curve.fixed + 10 * (t1 - curve.fixed) * (1 - 1e-9)


def test_the_grid_stops_at_its_halving_for_the_centres_only_where_that_round_is_dear():
    from types import SimpleNamespace as NS

    from kernelscale.model_selection._stages import LAST_ROUND_SHARE, _centres_first

    clock = _clock.now()

    def case(factors=(1.0,), screened_rows=101_911, n_components=None, families=("falkon",),
             predicted=21.9, left=38.2):
        search = NS(n_components=n_components)
        state = NS(families=list(families), screened=[{}], screened_rows=screened_rows,
                   n=305_734)
        run = NS(until=clock + left, left=lambda: left)
        return _centres_first(search, state, "falkon", NS(factors=list(factors)), predicted,
                              run)

    # Beijing at 2 minutes: one gamma left after a round on a third of the rows, its round
    # on every row 21.9 s of the 38.2 s left: the centres get them
    assert case()
    assert not case(left=21.9 / LAST_ROUND_SHARE + 1)  # a small share of the time left
    assert not case(factors=(1.0, 2.0))  # the round on every row still chooses a gamma
    assert not case(screened_rows=50_000)  # the halving's last round on too few rows
    assert not case(n_components=1000)  # the centres do not grow
    assert not case(families=("falkon", "exact-svm"))


def _halving_then_stopped(monkeypatch, then, stopped):
    """A FALKON search whose first model underfits what its halving finds, then
    its grid round on every row (or, ``then == "a larger subsample"``, with one gamma on
    every row priced past the time left, on a subsample) replaced by ``stopped``, and
    no refit."""
    if then == "a larger subsample":
        real = _stages.predicted_unit
        monkeypatch.setattr(_stages, "predicted_unit", lambda state, rows: 1e6
                            if rows == state.n else real(state, rows))
    monkeypatch.setattr(_stages, "_all_rows", stopped)
    monkeypatch.setattr(_stages, "_subsample_grid", stopped)
    monkeypatch.setattr(_search, "refit", lambda search, state, sched: sched.skip(
        "refit", "no time left"))
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(4000, 2))
    y = np.sin(15 * X[:, 0]) + np.cos(15 * X[:, 1])  # the first model's alpha=1 underfits
    search = KernelRegressorCV(families="falkon", halving=True,
                               gamma_factors=[1.0, 10.0, 30.0, 100.0, 300.0], alphas=[1e-3, 1.0],
                               n_components=100, learn_widths="none", time_budget=60,
                               random_state=0).fit(X, y)
    return search, X, [r.line() for r in search.stages_]


@pytest.mark.parametrize("then", ["every row", "a larger subsample"])
def test_the_halvings_best_is_held_as_a_model_before_the_grid_goes_on(monkeypatch, then):
    # diamonds with two busy loops at 2 minutes: the halving's best scored 0.9904 on 4,794
    # rows, the grid on more rows ran past its grant into the refit's, and the first model
    # (0.9522) stood. The halving's best is now fitted and held before the grid goes on
    def stopped(*args, **kwargs):
        raise _clock.TimeUp()

    search, X, lines = _halving_then_stopped(monkeypatch, then, stopped)
    (secured,) = [r for r in search.stages_ if r.stage == "secured"]
    assert secured.outcome == "done" and "of the first fold's 3200 training rows" in \
        secured.note, lines
    assert re.search("round on every row" if then == "every row" else r"round on \d+ rows",
                     secured.note), lines
    assert search.halving_, lines
    assert search.model_origin_ == "screen's winner", lines
    rows = search.halving_[-1]["rows"]
    assert search.refit_rows_ <= rows * 4 // 5, lines
    assert search.predict(X).shape == (4000,)


@pytest.mark.parametrize("then", ["every row", "a larger subsample"])
def test_the_held_fits_seconds_price_the_refits_reserve_in_the_grid(monkeypatch, then):
    # loaded diamonds: the grid kept 0.7 s for the refit, priced from the first model's
    # fits (a larger penalty, float32), ran to its grant's end, and the refit was then
    # predicted at 14.0 s: the held best on 3,835 rows stood. The held fit's measured
    # seconds now price the reserve the grid runs beside
    reserves = []

    def stopped(*args):
        reserves.append(next(a for a in args if isinstance(a, _stages.Deadline)).reserve)
        raise _clock.TimeUp()

    real_fit = _refit._fit_on_rows

    def slower_held_fit(*args):
        took = real_fit(*args)
        return took + 2.0 if args[-1] == "secured" else took  # a smaller penalty's CG
    monkeypatch.setattr(_refit, "_fit_on_rows", slower_held_fit)
    search, _, lines = _halving_then_stopped(monkeypatch, then, stopped)
    (grid,) = [r for r in search.stages_ if r.stage == "grid (falkon)"]
    # over 2 s on the fold's 3,200 rows, grown to 4,000, with REFIT_SAFETY
    assert reserves and reserves[0] >= 2.0 * 4000 / 3200 * _refit.REFIT_SAFETY, (reserves,
                                                                                  lines)
    raised = re.search(r"the refit's reserve raised to ([\d.]+) s", grid.note)
    assert raised, lines
    if then == "a larger subsample":  # the round's note names the reserve it ran beside
        assert f"beside the refit's {raised.group(1)} s" in grid.note, lines
    assert search.model_origin_ == "screen's winner", lines


def test_a_configurations_measured_refit_floors_its_price_only():
    from types import SimpleNamespace as NS

    from kernelscale.model_selection._first_model import refit_seconds

    curve = CostCurve(exponent=1.0, low=0.5, high=1.5)
    curve.add(800, 0.1)
    point = {"family": "falkon", "gamma": 0.5, "alpha": 1e-3, "n_components": 100,
             "dtype": "float32"}
    other = {**point, "alpha": 1e-2}
    state = NS(n=1000, folds=[(np.arange(800), np.arange(800, 1000))], fit_curve=curve,
               fit_family="falkon", fit_point=dict(other), measured_refit=None,
               settings=NS(probability=False, memory_budget=None),
               data=NS(X=np.zeros((1000, 4))))
    before = refit_seconds(state, [], point)
    assert before == pytest.approx(0.125 * _refit.REFIT_SAFETY)
    state.measured_refit = (dict(point), 40.0)
    assert refit_seconds(state, [], point) == pytest.approx(40.0 * _refit.REFIT_SAFETY)
    assert refit_seconds(state, [], other) == pytest.approx(before)


def test_the_warm_up_fit_is_dropped_once_and_the_later_fits_kept():
    # the first model's curve dropped its oldest point at every second one, so it only
    # ever held its latest fit and its growth was never measured
    curve = CostCurve(exponent=1.0, low=0.5, high=1.5, warmup=True)
    for rows, seconds in [(200, 3.0), (1000, 0.1), (2000, 0.2), (4000, 0.4)]:
        curve.add(rows, seconds)
    assert curve.points == [(1000.0, 0.1), (2000.0, 0.2), (4000.0, 0.4)]
    curve.add(8000, 0.4 * 2 ** 0.7)
    assert curve.growth == pytest.approx(0.7)


def _first_model_state(point, curve):
    from types import SimpleNamespace as NS

    return NS(n=100_000, fit_curve=curve, fit_family=point["family"], fit_point=dict(point))


def test_only_fits_of_the_first_models_cost_per_row_join_its_curve():
    # a float64 fit held on loaded diamonds replaced the first model's float32 point and
    # the refit priced from it counted float64 twice (21.7 s reserved, 1.4 s taken)
    first = {"family": "falkon", "kernel": "rbf", "gamma": 0.5, "alpha": 1e-3,
             "n_components": 2000, "dtype": "float32"}
    curve = CostCurve(exponent=1.0, low=0.7, high=1.5)
    curve.add(4000, 0.5)
    state = _first_model_state(first, curve)
    _refit._measured(state, {**first, "dtype": "float64"}, 8000, 3.0)
    _refit._measured(state, {**first, "n_components": 8000}, 8000, 3.0)
    assert curve.points == [(4000.0, 0.5)]
    _refit._measured(state, {**first, "gamma": 2.0, "alpha": 1e-5, "kernel": "laplacian"},
                     8000, 0.9)
    assert curve.points == [(4000.0, 0.5), (8000.0, 0.9)]
    svm = {"family": "exact-svm", "gamma": 0.5, "C": 1.0}
    svm_curve = CostCurve(exponent=2.0, low=1.5, high=2.5)
    _refit._measured(_first_model_state(svm, svm_curve), {**svm, "C": 10.0}, 1000, 1.0)
    assert svm_curve.points == []  # the exact SVM's iterations grow with C


def test_a_held_fit_grows_to_every_row_no_faster_than_the_first_models_fits_did():
    first = {"family": "falkon", "kernel": "rbf", "gamma": 0.5, "alpha": 1e-3,
             "n_components": 2000, "dtype": "float32"}
    curve = CostCurve(exponent=1.0, low=0.7, high=1.5)
    state = _first_model_state(first, curve)
    assert _refit._growth(state, first) == 1.0  # nothing measured: the family's power
    curve.add(4000, 0.5)
    curve.add(8000, 0.5 * 2 ** 0.8)
    assert _refit._growth(state, first) == pytest.approx(0.8)
    curve.add(16000, 0.5 * 2 ** 0.8 * 2 ** 1.4)
    assert _refit._growth(state, first) == 1.0  # never faster than the family's power
    svm = {"family": "exact-svm", "gamma": 0.5, "C": 1.0}
    assert _refit._growth(state, svm) == 2.0  # another family's fits do not tell


def test_a_refit_on_a_subsample_is_secured_on_a_share_of_its_rows_first(monkeypatch):
    # Beijing with two busy loops: the winner's fit on a subsample, sized from the first
    # model's fits (a cheaper penalty and kernel) at 3.3 s of the 5.5 s left, was stopped at
    # the budget's end and the first model stood. A share of its rows is fitted first
    monkeypatch.setattr(_refit, "refit_seconds", lambda *a, **k: 1e6)
    real_model_on = _refit.model_on

    def stopped_past_1000_rows(search, state, point, rows, settings=None):
        model, params = real_model_on(search, state, point, rows, settings)
        if rows > 1000:  # the machine turned slower: the budget's end stops it
            def fit(*args, **kwargs):
                raise _clock.TimeUp()
            model.fit = fit
        return model, params

    monkeypatch.setattr(_refit, "model_on", stopped_past_1000_rows)
    X, y = make_nonlinear_problem(3000, n_features=8, n_informative=4, random_state=0)
    search = KernelRegressorCV(families="falkon", gamma_factors=[0.02, 0.25, 1.0],
                               alphas=[1e-2], n_components=100, learn_widths="none",
                               time_budget=60, random_state=0).fit(X, y)
    lines = [r.line() for r in search.stages_]
    secured, sized = [r for r in search.stages_ if r.stage == "refit"][:2]
    assert "fitted on 360 of the first fold's 2400 training rows" in secured.note, lines
    assert sized.outcome == "stopped", lines
    # the secured fit was offered as the best: held where it scored above the first model
    assert search.model_origin_ == "refit on a subsample (secured first)", lines
    assert search.refit_rows_ == 360


def test_a_grid_round_on_a_subsample_is_sized_within_what_its_units_measured():
    # Beijing with two busy loops: a gamma on 162,598 rows, priced at 36 s from units on
    # 2,000 and 16,000 rows, ran past the 60 s left and scored nothing
    from types import SimpleNamespace as NS

    curve = CostCurve(exponent=1.0, low=0.8, high=1.5)
    curve.add(2000, 3.15)
    curve.add(16000, 5.08)
    state = NS(n=305_734, unit_curve=curve)
    assert curve.largest(36.0) > 150_000  # what the price alone would have sized
    assert _stages._affordable_rows(state, 36.0) == _stages.MOST_GROWTH * 16000
    assert _stages._affordable_rows(state, 4.0) == curve.largest(4.0)  # the price binds


def test_a_grid_round_on_a_subsample_runs_the_halvings_survivors_only(monkeypatch):
    # loaded diamonds: the halving kept 3 of 7 gammas, and the round on more rows ran all
    # 7 again (49 configurations in 40.8 s of the 42.3 s left)
    real_unit, real_grid = _stages.predicted_unit, _stages._subsample_grid
    monkeypatch.setattr(_stages, "predicted_unit", lambda state, rows: 1e6
                        if rows == state.n else real_unit(state, rows))
    spaces = []

    def recorded(search, state, family, space, *args):
        spaces.append(list(space.factors))
        return real_grid(search, state, family, space, *args)
    monkeypatch.setattr(_stages, "_subsample_grid", recorded)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(4000, 2))
    y = np.sin(15 * X[:, 0]) + np.cos(15 * X[:, 1])
    factors = [1.0, 10.0, 30.0, 100.0, 300.0]
    search = KernelRegressorCV(families="falkon", halving=True, gamma_factors=factors,
                               alphas=[1e-3, 1.0], n_components=100, learn_widths="none",
                               time_budget=60, random_state=0).fit(X, y)
    lines = [r.line() for r in search.stages_]
    assert search.halving_ and spaces, lines
    survivors = search.halving_[-1]
    assert len(spaces[0]) == survivors["kept"] < len(factors), (spaces, lines)
    assert search.predict(X).shape == (4000,)
