"""Local models: ``LocalKernelRegressor`` (one model per leaf along one column) and the
search's leaves stage, which keeps them only where they score higher on the first fold."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.dummy import DummyRegressor
from sklearn.pipeline import Pipeline

from kernelscale import (
    KernelClassifierCV,
    KernelRegressorCV,
    KernelWidths,
    LocalKernelRegressor,
    NystromKernelRidge,
    load_model,
    save_model,
)
from kernelscale.model_selection import _average_stage, _leaves_stage
from kernelscale.models import leaf_thresholds, split_feature


def _steps(n=3000, seed=0):
    """A target whose sharpness changes along column 0: a finer kernel pays in its leaves."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.sin(3 * X[:, 0] + 40 * X[:, 0] ** 3) + 0.3 * X[:, 1] + 0.01 * rng.normal(size=n)
    return X, y


def _ridge(**params):
    return NystromKernelRidge(**{"n_components": 60, "gamma": 5.0, "alpha": 1e-3,
                                 "random_state": 0, "dtype": "float64", "max_iter": 300,
                                 **params})


@pytest.mark.parametrize("n_leaves", [1, 2, 3, 4, 7])
def test_leaf_thresholds_split_into_leaves_of_equal_weight(n_leaves):
    values = np.random.default_rng(0).normal(size=700)
    thresholds = leaf_thresholds(values, n_leaves)
    assert thresholds.size == n_leaves - 1
    counts = np.bincount(np.searchsorted(thresholds, values, side="right"))
    assert counts.size == n_leaves and counts.min() >= 700 // n_leaves - 1
    assert counts.max() <= 700 // n_leaves + 2


def test_leaf_thresholds_leave_no_leaf_empty_under_ties_and_weigh_as_repeats():
    values = np.array([0.0] * 10 + [1.0] * 3 + [2.0])
    thresholds = leaf_thresholds(values, 4)
    counts = np.bincount(np.searchsorted(thresholds, values, side="right"))
    assert counts.min() > 0 and counts.sum() == values.size
    # a weight of 3 is three copies of the row
    v = np.arange(6.0)
    w = np.array([1.0, 3.0, 1.0, 1.0, 1.0, 1.0])
    assert np.array_equal(leaf_thresholds(v, 2, w), leaf_thresholds(np.repeat(v, w.astype(int)), 2))


def test_split_feature_picks_the_column_the_target_varies_along():
    X, y = _steps()
    assert split_feature(X, y, 4)[0] == 0
    assert split_feature(X[:, ::-1], y, 4)[0] == 2
    # two targets: the sum of their spreads (a large second one along column 1 wins)
    assert split_feature(X, np.column_stack([y, 0.1 * X[:, 1]]), 4)[0] == 0
    assert split_feature(X, np.column_stack([y, 10 * X[:, 1]]), 4)[0] == 1


def test_each_leaf_is_its_own_model_on_its_rows_and_rows_are_routed_to_it():
    X, y = _steps(1200)
    model = LocalKernelRegressor(_ridge(), n_leaves=3, feature=0).fit(X, y)
    assert model.n_leaves_ == 3 and model.feature_ == 0
    leaves = model.apply(X)
    assert np.array_equal(np.bincount(leaves), model.leaf_rows_)
    prediction = model.predict(X)
    for leaf in range(3):
        rows = leaves == leaf
        alone = _ridge().fit(X[rows], y[rows])
        np.testing.assert_allclose(prediction[rows], alone.predict(X[rows]), rtol=1e-10)
        # routed by the column's value alone
        assert np.all((X[rows, 0] >= ([-np.inf] + list(model.thresholds_))[leaf]))


def test_leaves_fit_a_sharp_target_better_than_one_model_with_the_same_centres():
    X, y = _steps(4000)
    Xt, yt = _steps(2000, seed=1)
    one = _ridge(n_components=100).fit(X, y).score(Xt, yt)
    local = LocalKernelRegressor(_ridge(n_components=100, gamma=20.0), n_leaves=4).fit(X, y)
    assert local.score(Xt, yt) > one + 0.01


def test_centres_are_capped_at_each_leafs_rows_also_inside_a_pipeline():
    X, y = _steps(400)
    model = LocalKernelRegressor(_ridge(n_components=300), n_leaves=4).fit(X, y)
    assert [m.n_components_ for m in model.estimators_] == list(model.leaf_rows_)
    pipe = Pipeline([("widths", KernelWidths(n_components=300, random_state=0, max_iter=3)),
                     ("model", _ridge(n_components=300, gamma=1.0))])
    model = LocalKernelRegressor(pipe, n_leaves=4).fit(X, y, sample_weight=np.ones(400))
    assert [m[-1].n_components_ for m in model.estimators_] == list(model.leaf_rows_)


def test_sample_weight_reaches_each_leaf():
    X, y = _steps(800)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=800)
    model = LocalKernelRegressor(_ridge(), n_leaves=2, feature=0).fit(X, y, sample_weight=w)
    rows = model.apply(X) == 0
    alone = _ridge().fit(X[rows], y[rows], sample_weight=w[rows])
    np.testing.assert_allclose(model.estimators_[0].dual_coef_, alone.dual_coef_, rtol=1e-10)


def test_predict_does_not_change_the_model_and_model_files_keep_it(tmp_path):
    X, y = _steps(600)
    model = LocalKernelRegressor(_ridge(), n_leaves=2).fit(X, y)
    before = [m.dual_coef_.copy() for m in model.estimators_]
    first = model.predict(X)
    assert all(np.array_equal(a, m.dual_coef_) for a, m in zip(before, model.estimators_))
    save_model(model, tmp_path / "local.ksm")
    np.testing.assert_array_equal(load_model(tmp_path / "local.ksm").predict(X), first)


@pytest.mark.parametrize("params, message", [
    ({"feature": 5}, "feature=5 is not a column of X's 3"),
    ({"n_leaves": 0}, "n_leaves=0 is not valid"),
    ({"estimator": "ridge"}, "estimator='ridge' is not valid"),
])
def test_bad_parameters_fail_in_one_line(params, message):
    X, y = _steps(100)
    with pytest.raises(ValueError, match=message) as info:
        LocalKernelRegressor(**params).fit(X, y)
    assert "\n" not in str(info.value)


# the search's stage, on few rows: leaves of at least 300 rows

@pytest.fixture
def small_leaves(monkeypatch):
    """Leaves of at least 300 rows, not averaged with other leaf counts."""
    monkeypatch.setattr(_leaves_stage, "LEAF_MIN_ROWS", 300)
    monkeypatch.setattr(_average_stage, "AVERAGE_LEAF_COUNTS", ())


SEARCH = dict(families="falkon", cv=3, alphas=[1e-3, 1e-1], gamma_factors=[0.5, 1.0, 2.0],
              learn_widths="none", time_budget=60, random_state=0)


def _leaves_record(search):
    (record,) = [r for r in search.stages_ if r.stage == "leaves"]
    return record


def test_the_search_keeps_leaves_that_score_higher_and_refits_exactly_them(small_leaves):
    X, y = _steps(2400)
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    record = _leaves_record(search)
    assert record.outcome == "done", record.note
    best = search.best_estimator_
    assert isinstance(best, LocalKernelRegressor), search.family_choice_
    assert search.best_params_["n_leaves"] == best.n_leaves
    assert search.best_params_["leaf_feature"] == best.feature == 0
    assert "local models along column 0" in search.family_choice_
    # the leaves kept are the best scored
    kept = [s for s in search.leaves_ if s["kept"]][-1]
    assert kept["score"] == max(s["score"] for s in search.leaves_)
    assert kept["n_leaves"] == best.n_leaves
    grid_gamma = search.cv_results_["params"][search.best_index_]["gamma"]
    assert np.isclose(best.estimator.gamma, grid_gamma * kept["gamma_factor"])
    # the refit is the scored configuration, fitted from scratch on every row
    again = clone(best).fit(X, y)
    np.testing.assert_allclose(again.predict(X), search.predict(X), rtol=1e-9, atol=1e-12)
    # best_index_ stays the grid's configuration the leaves split
    assert search.best_index_ is not None


class _Constant(LocalKernelRegressor):
    """Leaves that predict the targets' mean: they never score higher."""

    def predict(self, X):
        return np.full(len(X), 0.0)


def test_leaves_that_do_not_score_higher_are_not_kept(small_leaves, monkeypatch):
    monkeypatch.setattr(_leaves_stage, "LocalKernelRegressor", _Constant)
    X, y = _steps(2400)
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    record = _leaves_record(search)
    # 4 leaves at 3 gamma factors, then 2 (8 leaves of its 1,600 rows are too small)
    assert record.outcome == "done" and len(search.leaves_) == 4
    assert not any(s["kept"] for s in search.leaves_)
    assert not isinstance(search.best_estimator_, LocalKernelRegressor)
    assert "n_leaves" not in search.best_params_
    assert "growth" in [r.stage for r in search.stages_]


def test_leaves_split_a_winner_refitted_on_every_row_by_way_of_a_subsample(small_leaves,
                                                                          monkeypatch):
    # the grid cross-validated on a subsample only (its time shrunk): the winner is fitted on
    # the first fold's training rows, scored, then refitted on every row; the leaves and the
    # growth build on it as on a refit (they were skipped, and the time left unspent)
    from kernelscale.model_selection import _search

    real = _search.grid

    def subsample_grid(search, state, sched):
        real(search, state, sched)
        state.screened, state.screened_rows, state.records = state.records, state.n, []
    monkeypatch.setattr(_search, "grid", subsample_grid)
    X, y = _steps(2400)
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    refits = [r for r in search.stages_ if r.stage == "refit"]
    assert "of the first fold's 1600 training rows" in refits[0].note, refits[0].line()
    assert "refitted on all 2400 rows" in refits[-1].note, refits[-1].line()
    record = _leaves_record(search)
    assert record.outcome == "done", record.line()
    assert isinstance(search.best_estimator_, LocalKernelRegressor), search.family_choice_
    (growth,) = [r for r in search.stages_ if r.stage == "growth"]
    assert "not needed" not in growth.note, growth.line()


def test_the_stage_says_why_it_did_not_run():
    X, y = _steps(600)
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    assert "no two leaves of 2000 rows" in _leaves_record(search).note
    Xc, yc = make_classification(n_samples=300, random_state=0)
    search = KernelClassifierCV(**SEARCH).fit(Xc, yc)
    assert "regressors" in _leaves_record(search).note
    search = KernelRegressorCV(**{**SEARCH, "time_budget": None}).fit(X, y)
    assert not isinstance(search.best_estimator_, LocalKernelRegressor)


def test_leaf_params_set_each_leafs_model_and_must_match_the_leaves():
    X, y = _steps(900)
    params = [{"gamma": 1.0}, {"gamma": 30.0}, {"gamma": np.array([5.0, 1.0, 1.0])}]
    model = LocalKernelRegressor(_ridge(), n_leaves=3, feature=0, leaf_params=params).fit(X, y)
    rows = model.apply(X) == 1
    alone = _ridge(gamma=30.0).fit(X[rows], y[rows])
    np.testing.assert_allclose(model.predict(X[rows]), alone.predict(X[rows]), rtol=1e-10)
    assert model.estimators_[0].gamma == 1.0
    with pytest.raises(ValueError, match="leaf_params has 2 entries for the 3 leaves made"):
        LocalKernelRegressor(_ridge(), n_leaves=3, leaf_params=params[:2]).fit(X, y)


def test_the_leaves_own_widths_are_learned_once_on_the_folds_leaf_rows(small_leaves):
    # below the median of column 0 the target follows column 1, above it column 2: each
    # leaf's own widths can ignore the other
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(2400, 3))
    y = np.where(X[:, 0] < 0.5, np.sin(9 * X[:, 1]), np.sin(9 * X[:, 2])) + 2 * X[:, 0]
    search = KernelRegressorCV(**{**SEARCH, "learn_widths": "diagonal"}).fit(X, y)
    assert search.widths_ is not None
    (own,) = [s for s in search.leaves_ if s.get("own_widths")]
    assert "skipped" not in own and np.isfinite(own["score"])
    # the widths of each of the 4 leaves of the first fold's training rows, each its own
    assert len(own["leaf_gammas"]) == 4
    for gamma in own["leaf_gammas"]:
        assert gamma.shape == (3,) and np.all(gamma > 0)
    assert not np.allclose(own["leaf_gammas"][0], own["leaf_gammas"][3])
    # kept here: refitted with those widths
    assert own["kept"] and search.best_params_["leaf_widths"]
    best = search.best_estimator_
    assert len(best.leaf_params) == 4 and all(
        np.array_equal(p["gamma"], g) for p, g in zip(best.leaf_params, own["leaf_gammas"]))
    for params, model in zip(best.leaf_params, best.estimators_):
        np.testing.assert_array_equal(model.gamma, params["gamma"])


def test_kernelscale_tune_writes_a_leaves_model_that_evaluate_reads(small_leaves, tmp_path,
                                                                     capsys, monkeypatch):
    from kernelscale.cli import main
    from kernelscale.model_selection import _search

    # the default gammas, with no grid edge: a gamma past it fits these steps without
    # leaves (0.9993 on the first fold), and this test is of a leaves model's file
    monkeypatch.setattr(_search, "past_edge", lambda search, state, sched: None)

    X, y = _steps(2400)
    Xt, yt = _steps(600, seed=1)
    for name, (A, b) in (("train", (X, y)), ("test", (Xt, yt))):
        np.savetxt(tmp_path / f"{name}.csv", np.column_stack([A, b]), delimiter=",",
                   header="a,b,c,target", comments="")
    model = tmp_path / "local.ksm"
    code = main(["tune", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"),
                 "--families", "falkon", "--time-budget", "60s", "--learn-widths", "no",
                 "-o", str(model), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "'n_leaves': " in out and "test R^2" in out, out
    assert isinstance(load_model(model)[-1] if isinstance(load_model(model), Pipeline)
                      else load_model(model), LocalKernelRegressor)
    assert main(["evaluate", str(model), str(tmp_path / "test.csv")]) == 0


class _Interrupted(LocalKernelRegressor):
    """Ctrl-C pressed during a leaves fit."""

    def fit(self, X, y, sample_weight=None):
        raise KeyboardInterrupt


def test_ctrl_c_in_the_leaves_stage_keeps_the_best_model_so_far(small_leaves, monkeypatch):
    monkeypatch.setattr(_leaves_stage, "LocalKernelRegressor", _Interrupted)
    X, y = _steps(2400)
    with pytest.warns(UserWarning, match="Search interrupted: keeping the best"):
        search = KernelRegressorCV(**SEARCH).fit(X, y)
    assert _leaves_record(search).outcome == "interrupted"
    assert isinstance(search.best_estimator_, NystromKernelRidge)
    assert search.model_origin_ == "refit" and not search.complete_
    assert np.all(np.isfinite(search.predict(X)))


# the average of local models: the held leaves and other leaf counts of the same model

@pytest.fixture
def small_average(monkeypatch):
    """Leaves of at least 300 rows, and a problem with room for 2 to 5 of them."""
    monkeypatch.setattr(_leaves_stage, "LEAF_MIN_ROWS", 300)
    return _steps(3000)


def _average_record(search):
    (record,) = [r for r in search.stages_ if r.stage == "average"]
    return record


def test_the_average_of_leaf_counts_is_kept_only_where_it_scores_higher(small_average,
                                                                        tmp_path):
    from sklearn.ensemble import VotingRegressor

    X, y = small_average
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    record = _average_record(search)
    assert record.outcome == "done", record.note
    tried = [s for s in search.leaves_ if s.get("averaged")]
    assert tried and all("score" in s for s in tried), record.note
    kept = [s for s in tried if s["kept"]]
    held = [s for s in search.leaves_ if not s.get("averaged") and s["kept"]][-1]
    best = search.best_estimator_
    if not kept:
        assert isinstance(best, LocalKernelRegressor)
        return
    # each kept member raised the average's first-fold score over the one before it
    scores = [s["score"] for s in kept]
    assert scores == sorted(scores) and scores[0] > held["score"]
    assert isinstance(best, VotingRegressor) and search.model_origin_ == "average"
    counts = search.best_params_["averaged_n_leaves"]
    assert counts[1:] == [s["n_leaves"] for s in kept]
    assert [m.n_leaves_ for m in best.estimators_] == counts
    np.testing.assert_allclose(
        search.predict(X), np.mean([m.predict(X) for m in best.estimators_], axis=0),
        rtol=1e-12)
    # the ensemble is the one its parameters make, refitted from scratch on every row
    again = clone(best).fit(X, y)
    np.testing.assert_allclose(again.predict(X), search.predict(X), rtol=1e-9, atol=1e-12)
    assert "averaged with the same split into" in search.family_choice_
    assert search.best_index_ is not None
    # a model file keeps it
    save_model(search.best_estimator_, tmp_path / "average.ksm")
    np.testing.assert_array_equal(load_model(tmp_path / "average.ksm").predict(X),
                                  search.predict(X))


def test_averages_that_do_not_score_higher_are_not_kept(small_average, monkeypatch):
    def worse(models, templates, X, y):  # an average that predicts a constant
        return DummyRegressor(strategy="constant", constant=0.0).fit(X, y)

    monkeypatch.setattr(_average_stage, "averaged", worse)
    X, y = small_average
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    tried = [s for s in search.leaves_ if s.get("averaged")]
    assert tried and not any(s["kept"] for s in tried)
    assert isinstance(search.best_estimator_, LocalKernelRegressor)
    assert "averaged_n_leaves" not in search.best_params_
    assert search.model_origin_ in ("leaves", "growth")


def test_the_average_says_why_it_did_not_run(small_average, monkeypatch):
    X, y = _steps(600)
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    assert "none won" in _average_record(search).note
    X, y = _steps(3000)
    # no time for any other leaf count: priced past the budget's end (every other
    # partition's work a million times the held one's)
    monkeypatch.setattr(_average_stage, "_scale", lambda *args: 1e6)
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    record = _average_record(search)
    assert any(s["kept"] for s in search.leaves_), search.family_choice_
    assert record.outcome == "shrunk" and "skipped for time" in record.note, record.note
    assert isinstance(search.best_estimator_, LocalKernelRegressor)


def test_ctrl_c_in_the_average_keeps_the_local_models(small_average, monkeypatch):
    def interrupted(models, templates, X, y):
        raise KeyboardInterrupt

    monkeypatch.setattr(_average_stage, "averaged", interrupted)
    X, y = small_average
    with pytest.warns(UserWarning, match="Search interrupted: keeping the best"):
        search = KernelRegressorCV(**SEARCH).fit(X, y)
    assert _average_record(search).outcome == "interrupted"
    assert isinstance(search.best_estimator_, LocalKernelRegressor)
    assert np.all(np.isfinite(search.predict(X)))


def test_the_budgets_end_inside_the_average_keeps_its_steps_so_far(small_average, monkeypatch):
    from kernelscale import _clock

    real, calls = _average_stage.averaged, []

    def stopped_at_the_second(models, templates, X, y):
        calls.append(len(models))
        if len(calls) == 2:
            raise _clock.TimeUp()
        return real(models, templates, X, y)

    monkeypatch.setattr(_average_stage, "averaged", stopped_at_the_second)
    X, y = small_average
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    assert _average_record(search).outcome == "stopped"
    tried = [s for s in search.leaves_ if s.get("averaged")]
    assert len(tried) == 1 and np.isfinite(tried[0]["score"]), search.leaves_
    assert np.all(np.isfinite(search.predict(X)))


def test_the_leaves_keep_time_for_the_first_doubling_of_their_centres():
    from types import SimpleNamespace as NS

    # Beijing at 2 minutes: the ladder's other gamma factors took the time, and the growth
    # of the leaves' centres (+0.0042 on the first fold) got none
    auto, fixed = NS(n_components=None), NS(n_components=1000)
    won, lost = {"leaves": {"n_leaves": 4}}, {"leaves": None}
    assert _leaves_stage._doubling(auto, won, 3.0, 1.25) == \
        pytest.approx(_leaves_stage.DOUBLING_COST * 3.0 * 2.25)
    assert _leaves_stage._doubling(auto, lost, 3.0, 1.25) == 0.0
    assert _leaves_stage._doubling(fixed, won, 3.0, 1.25) == 0.0


def test_a_doubling_the_time_left_cannot_keep_ends_the_ladder(small_leaves, monkeypatch):
    # leaves that won stop the ladder where the doubling of their centres would not fit
    monkeypatch.setattr(_leaves_stage, "_doubling",
                        lambda search, top, unit, growth: 0.0 if top["leaves"] is None else 1e6)
    X, y = _steps(2400)
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    record = _leaves_record(search)
    assert record.outcome == "shrunk" and len(search.leaves_) == 1, record.line()
    assert search.leaves_[0]["kept"] and isinstance(search.best_estimator_, LocalKernelRegressor)


def test_the_average_prices_leaves_that_cannot_keep_their_kernel_and_their_own_widths():
    from kernelscale.model_selection._capacity import RECOMPUTE_STEPS

    # regression (Beijing, 10 minutes): 3 leaves of ~102,000 rows at 8,000 centres recompute
    # K(X, C) at every step where the held 4 leaves of ~76,000 kept it; priced as kept, the
    # refit of the 3 leaves (their fold fit had taken 116 s) ran past the budget's end
    keeps = lambda rows, m: rows <= 80_000  # noqa: E731
    every = lambda rows, m: True  # noqa: E731
    assert _average_stage._scale(np.full(3, 1e5), np.full(4, 7.5e4), 8000, every) == \
        pytest.approx(1.0)  # the same kernel blocks in all, fewer factorisations
    assert _average_stage._scale(np.full(3, 1e5), np.full(4, 7.5e4), 8000, keeps) == \
        pytest.approx(RECOMPUTE_STEPS)
    # 8 leaves of a quarter the rows: their centres capped at their rows, half the blocks
    assert _average_stage._scale(np.full(8, 1000.0), np.full(4, 2000.0), 2000, keeps) == \
        pytest.approx(0.5)
    # own widths priced per leaf as the leaves stage measured them (its own-widths step less
    # a fit of the same leaves), never below the search's widths
    steps = [{"n_leaves": 4, "own_widths": False, "score": 0.91, "seconds": 3.0},
             {"n_leaves": 8, "own_widths": False, "score": 0.91, "seconds": 1.0},
             {"n_leaves": 4, "own_widths": True, "score": 0.92, "seconds": 48.0}]
    assert _average_stage._widths_per_leaf(steps, 4, 8.7) == pytest.approx(45.0 / 4)
    assert _average_stage._widths_per_leaf(steps, 4, 20.0) == 20.0
    assert _average_stage._widths_per_leaf(steps[:2], 4, 8.7) == 8.7


def test_a_partition_the_time_left_cannot_pay_for_does_not_end_the_average(small_average,
                                                                            monkeypatch):
    # regression (Beijing, 10 minutes): 3 leaves priced at 978.8 s ended the average, and
    # the cheaper 8, 2, 6 and 5 leaves were never tried with 300 s left
    real = _average_stage._scale
    monkeypatch.setattr(_average_stage, "_scale", lambda sizes, *args: 1e6 if len(sizes) == 3
                        else real(sizes, *args))
    X, y = small_average
    search = KernelRegressorCV(**SEARCH).fit(X, y)
    tried = [s for s in search.leaves_ if s.get("averaged")]
    record = _average_record(search)
    assert [s["n_leaves"] for s in tried if "skipped" in s] == [3], record.line()
    assert any("score" in s for s in tried), record.line()
    assert record.outcome == "shrunk" and "3 leaves skipped for time" in record.note


def test_a_leafs_own_widths_stop_at_their_seconds():
    from types import SimpleNamespace as NS

    # the average prices each leaf's own widths at WIDTHS_PER_LEAF_CAP times the leaves
    # stage's and gives them no more: their L-BFGS steps vary (Beijing: 23 s a leaf
    # against 11.4 s measured)
    X, y = _steps(1200)
    state = NS(data=NS(columns=X, y=y, sample_weight=np.ones(len(y))),
               settings=NS(random_state=0, memory_budget=2**28))
    rows = np.arange(1200)
    free = _leaves_stage.leaf_widths(state, rows, 0, 2, "rbf")
    assert len(free) == 2 and all(np.all(g > 0) for g in free)
    # not even a first step in the seconds given: no widths, the partition is passed over
    assert _leaves_stage.leaf_widths(state, rows, 0, 2, "rbf", seconds=1e-9) is None
