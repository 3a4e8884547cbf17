"""The search as one optimizer (issue 62): one evaluator, one searcher, one cost model, one
clock, and an ensemble of the best.

The clocks here are fake where time matters (``kernelscale._clock._now``): the tests
assert on the time the search saw, never on the wall clock, so that a busy machine
cannot fail them.
"""

from __future__ import annotations

import dataclasses
import time
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_moons, make_regression
from sklearn.model_selection import KFold

from kernelscale import (
    KernelClassifierCV,
    KernelRegressorCV,
    LocalKernelRegressor,
    _clock,
    load_model,
    save_model,
)
from kernelscale.datasets import make_nonlinear_problem
from kernelscale.model_selection import _run, _runner
from kernelscale.model_selection._cost import MOST_POWER, CostModel, largest_within
from kernelscale.model_selection._ensemble import select_ensemble
from kernelscale.model_selection._evaluator import Evaluator, rung_sizes
from kernelscale.model_selection._records import Line, Record, Records, paired_gain
from kernelscale.model_selection._search import fold_order
from kernelscale.model_selection._space import make_folds, row_order
from kernelscale.models import WeightedEnsembleClassifier, WeightedEnsembleRegressor


class FakeClock:
    """A clock that moves only when told (``advance``) or, after ``slow(factor)``, as the
    wall clock times ``factor``."""

    def __init__(self):
        self.value, self.factor, self.real0 = 1000.0, 0.0, time.perf_counter()

    def __call__(self):
        return self.value + (time.perf_counter() - self.real0) * self.factor

    def advance(self, seconds):
        self.value += seconds

    def slow(self, factor):
        self.value, self.real0, self.factor = self(), time.perf_counter(), factor


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(_clock, "_now", fake)
    return fake


def _gamma_seconds(monkeypatch, clock, seconds):
    """Every grid's gamma takes ``seconds`` of the fake clock (before its end is measured)."""
    real = _runner._Loop._close

    def close(self, g):
        clock.advance(seconds)
        return real(self, g)
    monkeypatch.setattr(_runner._Loop, "_close", close)


FALKON_LINE = Line("falkon")


def _record(scores, rows=100, line=FALKON_LINE, factor=1.0, penalty=1.0, oof=None):
    scores = np.asarray(scores, dtype=float)
    return Record(line, rows, factor, penalty, None, {"family": line.family}, scores,
                  scores * 0, scores * 0, oof)


# ------------------------------------------------------------------ the parts

def test_the_cost_model_splits_overhead_and_work_and_grows_no_faster_than_its_bound():
    cost = CostModel(rates={"gemm": 1e-9, "eigh": 1e-9, "exp": 1e-9})
    assert cost.predict("k", {"gemm": 3e9}) == pytest.approx(3.0)  # unmeasured: its price
    cost.observe("k", {"gemm": 1e9}, 2.0)
    assert cost.predict("k", {"gemm": 1e9}) == pytest.approx(2.0)
    assert cost.predict("k", {"gemm": 3e9}) == pytest.approx(1.0 + 3.0)  # half overhead
    cost.observe("k", {"gemm": 4e9}, 5.0)  # 1 s of overhead, 1 s per 1e9
    overhead, rate, power = cost.line("k")
    assert overhead == pytest.approx(1.0) and rate == pytest.approx(1e0 / 1.0) and power >= 1
    # a kind that grows much faster than its operations is priced at the bound, no faster
    cost.observe("svm", {"gemm": 1e9}, 1.0)
    cost.observe("svm", {"gemm": 3e9}, 30.0)
    assert cost.line("svm")[2] == pytest.approx(MOST_POWER)
    assert 3960 <= largest_within(lambda r: cost.predict("k", {"gemm": r * 1e6}), 5.0, 1,
                                  100_000) <= 4000


def test_the_best_record_is_the_most_rows_mean_or_a_clearly_better_smaller_one():
    records = Records(oof_bytes=0)
    big = _record([0.90, 0.91, 0.90], rows=9000)
    lucky = _record([0.99, 0.85, 0.95], rows=1000, factor=2.0)  # mean 0.93, se 0.041
    records.add([big, lucky])
    assert records.best() is big
    clear = _record([0.95, 0.95, 0.95], rows=1000, factor=4.0)
    records.add([clear])
    assert records.best() is clear
    assert list(records.keys()) == pytest.approx([big.mean, lucky.mean - lucky.se, 0.95])
    gain, se = paired_gain(_record([0.9, 0.8]), _record([0.85, 0.75]))
    assert gain == pytest.approx(0.05) and se == pytest.approx(0.0)


def test_a_smaller_ones_score_is_debited_what_the_configurations_promoted_from_it_lost():
    # bio beside two busy loops (stop 72): the race reached 36,000 rows on one line only,
    # which lost 0.0098 there; a 4,000-row record less its standard error outranked it
    records = Records(oof_bytes=0)
    promoted = [_record([0.997, 0.996, 0.9966], rows=4000, factor=f) for f in (1.0, 2.0)]
    on_most = [_record([0.987, 0.986, 0.9874], rows=36000, factor=f) for f in (1.0, 2.0)]
    lucky = _record([0.9962, 0.9958, 0.9960], rows=4000, factor=4.0)
    records.add(promoted + on_most + [lucky])
    lost = np.mean([p.mean - m.mean for p, m in zip(promoted, on_most)])
    assert records.debits() == {4000: pytest.approx(lost)}
    assert records.best() is on_most[0]
    assert records.keys()[-1] == pytest.approx(lucky.mean - lucky.se - lost)
    # where the promoted ones gained on more rows, nothing is credited
    records = Records(oof_bytes=0)
    records.add([_record([0.90] * 3, rows=4000), _record([0.93] * 3, rows=36000),
                 _record([0.925] * 3, rows=4000, factor=4.0)])
    assert records.debits() == {4000: 0.0}
    assert records.best().rows == 36000


def test_out_of_fold_predictions_are_kept_within_their_bytes_best_first():
    oof = np.zeros((100, 2), dtype=np.float32)
    records = Records(oof_bytes=2 * oof.nbytes)
    ranked = [_record([s, s], oof=oof.copy(), factor=s) for s in (0.7, 0.9, 0.8)]
    records.add(ranked)
    assert [r.oof is not None for r in ranked] == [False, True, True]


def test_rungs_are_nested_stratified_subsamples_and_every_row_has_the_searchs_folds():
    assert rung_sizes(100_000, 1_000, 3) == [1235, 3704, 11112, 33334, 100000]
    X, y = make_classification(3000, weights=[0.9, 0.1], random_state=0)
    search = KernelClassifierCV(families="falkon", gamma_factors=[1.0], alphas=[1.0],
                                halving=True, random_state=0).fit(X, y)
    rows = search.cv_results_["n_resources"]
    assert list(np.unique(rows)) == [1000, 3000]
    ev = _evaluator(X, y)
    small, _ = ev.rung(1000)
    large, _ = ev.rung(2000)
    assert np.isin(small, large).all()  # nested
    assert abs(y[small].mean() - y.mean()) < 0.01  # stratified
    index, folds = ev.rung(3000)
    assert index.size == 3000 and folds is ev.folds


def _evaluator(X, y, shuffle=True):
    from kernelscale.model_selection._inputs import SearchData, SearchSettings, SearchSpace
    from kernelscale.model_selection._space import make_folds

    classes, y_index = np.unique(y, return_inverse=True)
    data = SearchData(X, y, np.ones(len(y)), classes, y_index)
    folds = make_folds(3, X, y, y_index, classes, 0, shuffle=shuffle)
    space = SearchSpace([0.5, 1.0, 2.0], 1.0 / (X.shape[1] * X.var()), 50, Cs=[0.1, 1.0, 10.0],
                        alphas=[0.1, 10.0])
    settings = SearchSettings("accuracy", 2**28, 1e-3, 1, 0, None, float(len(y)))
    return Evaluator("classifier", data, folds, space, settings,
                     CostModel(rates={"gemm": 1e-10, "eigh": 1e-9, "exp": 1e-9}), 0,
                     shuffle=shuffle)


def _series(n=2_000, seed=4):
    """``n`` half-hours of three smooth readings, whose target's noise wanders slowly: a
    half-hour's neighbours share its noise, the later rows do not."""
    rng = np.random.RandomState(seed)
    t = np.arange(n)[:, None]
    X = np.sin(t / rng.uniform(20, 60, size=3) + rng.uniform(0, 6, size=3))
    X += 0.05 * rng.normal(size=(n, 3))
    noise = np.zeros(n)
    for i in range(1, n):
        noise[i] = 0.98 * noise[i - 1] + 0.1 * rng.normal()
    return X, np.sin(3 * X[:, 0]) * X[:, 1] + X[:, 2] ** 2 + noise


@pytest.mark.parametrize("sparse", [False, True])
def test_row_order_tells_rows_in_their_order_from_shuffled_ones(sparse):
    import scipy.sparse as sp

    walk = np.cumsum(np.random.RandomState(0).normal(size=(3_000, 4)), axis=0)
    walk[:, 3] = 7.0  # a constant column is left out, not divided by its zero spread
    X = sp.csr_matrix(walk) if sparse else walk
    ratio, z = row_order(X, 0, 2**28, block=500)
    assert ratio < 0.05 and z > 20
    assert np.allclose((ratio, z), row_order(X, 0, 2**28, block=10_000))  # blocks change nothing
    shuffled = np.random.RandomState(1).permutation(3_000)
    ratio, z = row_order(X[shuffled], 0, 2**28, block=500)
    assert abs(ratio - 1) < 0.1 and z < 3


def test_row_order_reads_the_rows_in_blocks_its_memory_budget_holds():
    import tracemalloc

    X = np.random.RandomState(0).normal(size=(6_000, 2_000)).astype(np.float32)  # 48 MB
    budget = 16 * 2**20
    tracemalloc.start()
    row_order(X, 0, budget)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= 1.1 * budget, peak / 2**20


def test_rows_in_an_order_of_their_own_get_contiguous_folds_and_the_others_shuffled_ones():
    X, y = _series()
    shuffle, why = fold_order(5, X, y, False, 0, 2**28)
    assert not shuffle and "contiguous blocks" in why and "shuffle=True" in why
    folds = make_folds(5, X, y, None, None, 0, shuffle=shuffle)
    assert all(np.array_equal(va, np.arange(va[0], va[-1] + 1)) for _, va in folds)
    order = np.random.RandomState(0).permutation(len(y))
    assert fold_order(5, X[order], y[order], False, 0, 2**28) == (True, "")
    by_target = np.argsort(y)  # sorted by the target: blocks would each lie past the others
    assert fold_order(5, X[by_target], y[by_target], False, 0, 2**28) == (True, "")
    # sorted in runs (diamonds' CSV: by price within each of its groups; stop 73), the
    # rows' order is the target's: blocks would each lie past the others too
    # (a price set mostly by one column: its rows are nearer their neighbours too)
    rng = np.random.RandomState(1)
    X2 = rng.uniform(size=(2_000, 3))
    price = X2[:, 0] + 0.1 * X2[:, 1]
    runs = np.concatenate([part[np.argsort(price[part])]
                           for part in np.array_split(rng.permutation(2_000), 8)])
    assert 0 < np.sum(np.diff(price[runs]) < 0) < 8 and row_order(X2[runs], 0, 2**28)[1] > 3
    assert fold_order(5, X2[runs], price[runs], False, 0, 2**28) == (True, "")
    assert fold_order(KFold(5), X, y, False, 0, 2**28) == (True, "")  # a splitter is as given
    labels = (y > np.median(y)).astype(int)
    assert not fold_order(5, X, labels, True, 0, 2**28)[0]
    ev = _evaluator(X, labels, shuffle=False)  # a subsample's folds are blocks too
    index, folds = ev.rung(900)
    assert np.all(np.diff(index) > 0)
    for _, va in folds:
        for value in (0, 1):  # each class's validation rows: one run of that class's rows
            mine = np.flatnonzero(labels[index] == value)
            at = np.flatnonzero(np.isin(mine, va))
            assert np.array_equal(at, np.arange(at[0], at[-1] + 1))


def test_a_search_on_rows_in_time_order_scores_the_later_rows_higher_than_shuffled_folds():
    # electricity (stop 72): shuffled folds put each half-hour's neighbours, its
    # near-twins, on both sides and preferred C = 316 (0.700 on the later half-hours);
    # contiguous folds prefer the smooth model the later rows reward
    X, y = _series()
    later = slice(1_500, None)
    blocks = KernelRegressorCV(random_state=0).fit(X[:1_500], y[:1_500])
    shuffled = KernelRegressorCV(random_state=0, cv=KFold(5, shuffle=True, random_state=0))
    shuffled.fit(X[:1_500], y[:1_500])
    assert "contiguous blocks" in blocks.family_choice_
    assert "contiguous" not in shuffled.family_choice_
    assert blocks.score(X[later], y[later]) > shuffled.score(X[later], y[later]) + 0.05
    # and what its folds measured is nearer what the later rows do
    assert abs(blocks.best_score_ - blocks.score(X[later], y[later])) < \
        abs(shuffled.best_score_ - shuffled.score(X[later], y[later]))


def test_the_evaluators_out_of_fold_predictions_are_what_its_scores_measured():
    X, y = make_moons(600, noise=0.3, random_state=0)
    ev = _evaluator(X, y)
    for family in ("exact-svm", "falkon"):
        records, complete = ev.grid(Line(family), 600, [1.0, 2.0])
        assert complete and len(records) == 2 * (3 if family == "exact-svm" else 2)
        for record in records:
            for (_, val), score in zip(ev.folds, record.scores):
                predicted = ev.data.classes[(record.oof[val, 0] > 0).astype(int)]
                assert np.mean(predicted == y[val]) == pytest.approx(score)


def test_a_fit_is_priced_at_no_more_than_a_grid_unit_of_one_penalty_on_its_rows():
    # regression: extrapolated from the held first model's one fit (0.06 s on 667 rows),
    # a refit on 2,000 rows with 1,184 centres was priced at 16.5 s where the grid had
    # fitted those centres on every fold in 1.0 s: the refit was skipped, and the model
    # held on a third of the rows came back
    X, y = make_moons(600, noise=0.3, random_state=0)
    ev = _evaluator(X, y)
    line = Line("falkon")
    ev.cost.observe(ev.kind(line, "fit"), ev.operations(line, "fit", 100, 20), 0.5)
    alone = ev.cost.predict(ev.kind(line, "fit"), ev.operations(line, "fit", 600, 200))
    assert ev.predict(line, "fit", 600, 200) == pytest.approx(alone)  # no grid measured
    ev.cost.observe(ev.kind(line, "grid"), ev.operations(line, "grid", 600, 200, 7), 1.0)
    unit = ev.cost.predict(ev.kind(line, "grid"), ev.operations(line, "grid", 600, 200))
    assert unit < alone
    assert ev.predict(line, "fit", 600, 200) == pytest.approx(unit)
    quick = Record(line, 600, 1.0, 1.0, 200, {}, np.full(3, 0.9), np.zeros(3), np.zeros(3))
    assert ev.refit_price(quick, 600) == pytest.approx(unit)
    assert ev.most_rows(quick, unit, 100, 600) == 600


def test_local_models_never_measured_are_priced_as_the_one_model_they_are_made_of():
    # regression: priced at the operations' calibrated speed alone, Beijing's first four
    # leaves at 2 minutes were predicted at 51 s a gamma and took 8 s, FALKON's own fits
    # measured all along
    X, y = make_moons(600, noise=0.3, random_state=0)
    ev = _evaluator(X, y)  # the prices do not ask the task
    one, leaves = Line("falkon"), Line("falkon", n_leaves=4)
    unmeasured = ev.predict(leaves, "fit", 600, 50)
    assert unmeasured == pytest.approx(ev.cost.work(ev.operations(leaves, "fit", 600, 50)))
    ev.cost.observe(ev.kind(one, "fit"), ev.operations(one, "fit", 300, 50), 1e-3)
    ev.cost.observe(ev.kind(one, "fit"), ev.operations(one, "fit", 600, 50), 2e-3)
    assert ev.priced_kind(leaves, "fit") == ev.kind(one, "fit")
    as_one = ev.cost.predict(ev.kind(one, "fit"), ev.operations(leaves, "fit", 600, 50))
    assert ev.predict(leaves, "fit", 600, 50) == pytest.approx(as_one)
    assert as_one != pytest.approx(unmeasured)
    # once the local models were measured, their own measurements price them
    ev.cost.observe(ev.kind(leaves, "fit"), ev.operations(leaves, "fit", 600, 50), 0.5)
    assert ev.priced_kind(leaves, "fit") == ev.kind(leaves, "fit")
    assert ev.predict(leaves, "fit", 600, 50) == pytest.approx(0.5, rel=1e-2)


def test_a_refit_is_priced_at_no_less_than_its_own_folds_fits_grown_to_its_rows():
    # regression: priced by the cost model's operations alone, which do not see what
    # makes one configuration's solver slower than another's, diamonds at 10 minutes grew
    # an ensemble's member for refits it then found past the time left
    X, y = make_moons(600, noise=0.3, random_state=0)
    ev = _evaluator(X, y)
    line = Line("falkon")
    ev.cost.observe(ev.kind(line, "fit"), ev.operations(line, "fit", 400, 100), 0.1)
    modelled = ev.predict(line, "fit", 600, 100)
    slow = Record(line, 300, 1.0, 1.0, 100, {}, np.full(3, 0.9), np.full(3, 5.0), np.zeros(3))
    growth = modelled / ev.predict(line, "fit", 200, 100)  # its folds fit 200 rows each
    assert growth >= 1.0
    assert ev.refit_price(slow, 600) == pytest.approx(5.0 * growth)
    assert ev.refit_price(slow, 600) > 10 * modelled
    cheap = Record(line, 300, 1.0, 1.0, 100, {}, np.full(3, 0.9), np.zeros(3), np.zeros(3))
    assert ev.refit_price(cheap, 600) == pytest.approx(modelled)
    # at twice the centres: grown as the cost model grows a fit with them too
    twice = ev.predict(line, "fit", 600, 200) / ev.predict(line, "fit", 200, 100)
    assert ev.refit_price(slow, 600, 200) == pytest.approx(5.0 * max(1.0, twice))
    assert ev.most_rows(slow, 5.0 * growth, 100, 600) == 600
    assert ev.most_rows(slow, 1.0, 100, 600) < 600


def test_a_configuration_fitted_by_the_evaluator_is_the_one_its_fold_fits_scored():
    X, y = make_regression(400, 3, noise=5.0, random_state=0)
    search = KernelRegressorCV(gamma_factors=[1.0], alphas=[1.0, 30.0], n_components=40,
                               halving=False, learn_widths=False, random_state=0).fit(X, y)
    record_params = search.cv_results_["params"][search.best_index_]
    model = search.best_estimator_
    assert model.alpha == record_params["alpha"] and model.gamma == record_params["gamma"]


def _two_classes(n=600):
    """Labels of two classes, their 5 folds and each row's true decision sign."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    folds = [(np.setdiff1d(np.arange(n), part), part) for part in np.array_split(
        rng.permutation(n), 5)]
    return y, np.array([0, 1]), folds, np.where(y == 1, 1.0, -1.0)


def test_ensemble_selection_keeps_only_an_ensemble_that_beats_the_best_beyond_the_noise():
    y, classes, folds, truth = _two_classes()
    # two members, each right on a different half of the rows: their average is better
    first = np.where(np.arange(600) < 300, truth, -truth * 0.2)[:, None]
    second = np.where(np.arange(600) >= 300, truth, -truth * 0.2)[:, None]
    records = [_record([0.6] * 5, rows=600, factor=f, oof=o.astype(np.float32))
               for f, o in ((1.0, first), (2.0, second))]
    chosen = select_ensemble(records, y, y, classes, folds, "accuracy")
    assert chosen.kept and sorted(chosen.weights) == [1, 1] and chosen.gain > 0.2
    same = select_ensemble([records[0], _record([0.6] * 5, rows=600, factor=3.0,
                                                oof=first.astype(np.float32))],
                           y, y, classes, folds, "accuracy")
    assert not same.kept


def test_ensemble_selection_climbs_past_an_addition_that_does_not_raise_the_score():
    # regression: the climb stopped at the first addition that scored no higher, and a
    # better member could end it early (california at 10 minutes: 0.8533 out of fold
    # with a 2,000-centre member, 0.8545 without it; climbing on, 0.8554)
    rng = np.random.default_rng(0)
    y = rng.normal(size=600)
    folds = list(KFold(5, shuffle=True, random_state=0).split(y[:, None]))
    # the mean of (y + 1) and (y - 4) scores lower than y + 1 (and y + 1 again no
    # higher); 2 : 1 of them, a bias of -2 / 3, scores higher
    high, low = (y + 1.0)[:, None], (y - 4.0)[:, None]
    records = [_record([0.5] * 5, rows=600, factor=f, oof=o.astype(np.float32))
               for f, o in ((1.0, high), (2.0, low))]
    chosen = select_ensemble(records, y, None, None, folds, "r2")
    assert chosen.weights == [2, 1] and chosen.kept
    assert chosen.gain > 0.4  # a squared bias of 1 down to 4 / 9, of y's unit variance
    # scored one candidate at a time (a score not of squared errors), the climb goes on
    # past its first stall for as many additions as it made before it (at least one)
    absolute = select_ensemble(records, y, None, None, folds, "neg_mean_absolute_error")
    assert absolute.weights == [2, 1] and absolute.kept


@pytest.mark.parametrize("scoring", ["r2", "neg_mean_squared_error",
                                     "neg_root_mean_squared_error"])
def test_the_climbs_squared_error_scores_at_once_are_one_at_a_time_s(monkeypatch, scoring):
    from kernelscale.model_selection import _ensemble

    rng = np.random.default_rng(2)
    y = 10.0 + rng.normal(size=500)  # an offset: the expansion must not cancel it away
    folds = list(KFold(5, shuffle=True, random_state=0).split(y[:, None]))
    records = [_record([0.5] * 5, rows=500, factor=float(j),
                       oof=(y + rng.normal(0.3 * j - 1.0, 0.5 + 0.1 * j, size=500))[:, None]
                       .astype(np.float32)) for j in range(8)]
    fast = select_ensemble(records, y, None, None, folds, scoring)
    monkeypatch.setattr(_ensemble._Squared, "of", classmethod(lambda cls, *a: None))
    slow = select_ensemble(records, y, None, None, folds, scoring)
    assert [id(m) for m in fast.members] == [id(m) for m in slow.members]
    assert fast.weights == slow.weights and len(fast.members) > 1
    np.testing.assert_allclose(fast.scores, slow.scores, rtol=1e-10)


def test_the_selections_roc_auc_is_scikit_learns():
    from sklearn.metrics import roc_auc_score

    from kernelscale.model_selection._space import score_values

    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, size=2000)
    for scores in (rng.normal(size=2000), np.round(rng.normal(size=2000), 1)):  # ties
        values = np.column_stack([-scores, scores])
        assert score_values("roc_auc", labels, values, np.array([0, 1])) == \
            pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    # one class present: scikit-learn's own answer (undefined, with its warning)
    with pytest.warns(Warning):
        assert np.isnan(score_values("roc_auc", np.zeros(10), np.zeros((10, 2)),
                                     np.array([0, 1])))


def test_another_draw_of_the_centres_is_never_the_best_and_ranks_last():
    records = Records(oof_bytes=10**9)
    base = _record([0.80] * 5, rows=600)
    lucky = _record([0.90] * 5, rows=600, line=dataclasses.replace(FALKON_LINE, draw=1))
    records.add([base, lucky])
    assert records.best() is base  # the luckiest of several draws is picked on noise
    keys = records.keys()
    assert keys[1] < keys[0]
    assert "draw 2" in lucky.line.describe()


def test_an_ensemble_takes_only_the_members_whose_refits_the_time_pays_for_in_one_pass():
    # regression: an ensemble the time could not pay for was selected again and again
    # without its costliest member, outside any grant: 28 s past a 2-minute budget (bio)
    y, classes, folds, truth = _two_classes()
    thirds = np.arange(600) // 200
    # three members, each right on its own third of the rows: the best of them, held
    # fitted already (no refit), a cheap one and a dear one
    records = [_record([0.6] * 5, rows=600, factor=float(k + 1),
                       oof=np.where(thirds == k, truth, -truth * 0.2)[:, None]
                       .astype(np.float32)) for k in range(3)]
    best, cheap, dear = records
    cost = {id(best): 0.0, id(cheap): 1.0, id(dear): 100.0}
    every = select_ensemble(records, y, y, classes, folds, "accuracy")
    assert every.kept and len(every.members) == 3
    chosen = select_ensemble(records, y, y, classes, folds, "accuracy",
                             cost=lambda m: cost[id(m)], affordable=lambda s: s <= 10.0)
    assert chosen.kept and dear not in chosen.members and best in chosen.members
    assert select_ensemble(records, y, y, classes, folds, "accuracy",
                           cost=lambda m: cost[id(m)] + 1.0, affordable=lambda s: False) is None
    # the budget's end stops the additions where they are: the first member alone
    stopped = select_ensemble(records, y, y, classes, folds, "accuracy", stop=lambda: True)
    assert len(stopped.members) == 1 and not stopped.kept


def _exact_svm_searcher(fits, penalties=(1.0, 10.0, 100.0), rungs=(300,),
                        families=("exact-svm",), **options):
    """A searcher over exact-SVM lines on 300 rows whose records are ``fits``:
    ``(penalty, seconds per fold, score)`` at gamma x 1 (or ``(line, rows, penalty,
    seconds per fold, score)``); its evaluator's cost model prices every piece of work at
    1 s on 300 rows, growing with the rows, blind to the penalty."""
    from kernelscale.model_selection._searcher import Searcher

    class Stub:
        n_splits = 3
        columns = {"none": None}

        def penalties(self, line):
            return list(penalties)

        def predict(self, line, kind, rows, *args, **kwargs):
            return rows / 300

        def data_for(self, line, rows):
            return None, None

    records = Records(oof_bytes=0)
    for fit in fits:
        line, rows, penalty, seconds, score = fit if len(fit) == 5 else \
            (Line("exact-svm"), 300) + tuple(fit)
        records.add([Record(line, rows, 1.0, penalty, None, {}, np.full(3, score),
                            np.full(3, seconds), np.zeros(3))])
    return Searcher(Stub(), records, list(rungs), families=list(families),
                    factors=[1.0], **options), records


def test_local_moves_are_priced_by_the_fit_times_their_penalties_measured():
    # regression: an exact SVM's C past the grid's edge was priced at the grid's mean
    # (21 s) and took 271 s, and a gamma step at C = 316 priced at 88 s ran 250 s with
    # nothing scored: the cost model's operations do not grow with C (electricity)
    searcher, records = _exact_svm_searcher(((1.0, 1.0, 0.7), (10.0, 2.0, 0.8),
                                             (100.0, 8.0, 0.9)))
    best = records.best()
    assert best.penalty == 100.0
    # the edge's 24 s of fits, grown 4x from its neighbour's 6 s
    line = best.line
    assert searcher._measured(line, 300, [1.0], [1000.0], None) == pytest.approx(96.0)
    # a gamma step both ways at the best's penalty and its neighbour: each gamma priced
    # at the nearest gamma's measured fits of each penalty
    step = searcher._local_move(best, "gamma step", [2.0, 0.5], [10.0, 100.0], "step")
    assert step.predicted == pytest.approx(2 * (6.0 + 24.0))
    # on more rows than measured: grown as the cost model grows a fit (3x on 3x the rows)
    assert searcher._measured(line, 900, [2.0], [100.0], None) == pytest.approx(72.0)
    # nothing measured on these rows or fewer: the cost model's price stands
    assert searcher._measured(line, 100, [2.0], [100.0], None) == 0.0
    # at the low edge the growth is inward: no smaller than the edge's own time
    searcher, low = _exact_svm_searcher(((1.0, 1.0, 0.9), (10.0, 2.0, 0.8)))
    assert searcher._measured(line, 300, [1.0], [0.1], None) == pytest.approx(3.0)


def test_more_centres_are_priced_from_the_fits_measured_at_fewer_grown_by_the_cost_model():
    # regression: more centres than any measured were priced by the cost model's
    # operations alone: california's 2 leaves at twice 2,000 centres at 11.2 s, and they
    # took 20.0 s, where one gamma at 2,000 had taken 5.3 s
    from kernelscale.model_selection._searcher import Searcher

    class Stub:  # a cost model that grows as the square of the centres, 1 s at 100
        n_splits = 3
        columns = {"none": None}

        def penalties(self, line):
            return [1.0]

        def predict(self, line, kind, rows, m=None, n_units=1, n_penalties=1):
            return n_units * (rows / 300) * (m / 100) ** 2

    for line in (Line("falkon"), Line("falkon", n_leaves=2)):
        records = Records(oof_bytes=0)
        records.add([Record(line, 300, 1.0, 1.0, 100, {}, np.full(3, 0.9), np.full(3, 3.0),
                            np.zeros(3))])
        searcher = Searcher(Stub(), records, [300], families=["falkon"], factors=[1.0])
        # 9 s measured at 100 centres, grown 4x to 200 (the cost model's 4 s alone)
        assert searcher._measured(line, 300, [1.0], [1.0], 200) == pytest.approx(36.0)
        move = searcher._local_move(records.best(), "centres", [1.0], [1.0], "more",
                                    n_components=200)
        assert move.predicted == pytest.approx(36.0)
        # fewer centres than measured: nothing measured there or below
        assert searcher._measured(line, 300, [1.0], [1.0], 50) == 0.0


def test_the_centres_grow_at_last_to_every_training_row_of_a_leaf():
    # regression: doubling past a leaf's training rows ended the centres' growth, and
    # california's 10-minute search stopped at 4,000 centres of 2 leaves' 5,504 rows with
    # 416 s left: the last step is every training row (kernel ridge itself)
    from kernelscale.model_selection._moves import _Local

    line = Line("falkon", n_leaves=2)
    searcher, records = _exact_svm_searcher(((line, 300, 1.0, 1.0, 0.9),),
                                            families=("falkon",))
    best = records.best()
    best.n_components = 64  # 2 x 64 is past the 100 training rows of each leaf
    move = searcher._centres(best, _Local())
    assert move is not None and move.n_components == 100 and move.line == line
    best.n_components = 100
    state = _Local()
    assert searcher._centres(best, state) is None and state.centres_done


def test_a_gamma_step_the_time_does_not_pay_for_is_tried_at_the_best_penalty_alone():
    # regression: on electricity a step at three penalties was past the time left (its
    # large C the slowest), and the search ended with 35 s of its 2 minutes unspent
    searcher, _ = _exact_svm_searcher(((1.0, 1.0, 0.7), (10.0, 2.0, 0.9), (100.0, 8.0, 0.8)))
    # both gammas at C = 1, 10, 100: 2 x (3 + 6 + 24) s; at C = 10 alone: 2 x 6 s
    move = searcher._local_moves(lambda seconds: seconds <= 20.0)
    assert move.stage == "gamma step" and move.penalties == [10.0]
    assert move.predicted == pytest.approx(12.0)
    assert searcher._local_moves(lambda seconds: seconds <= 100.0).penalties == \
        [1.0, 10.0, 100.0]


def test_more_rows_try_the_best_penalty_and_its_neighbours_and_then_the_edge_of_those():
    # regression: the rows move ran all seven of its line's penalties, and the 1e5-row
    # synthetic problem at 10 minutes never tried the exact SVM on every row (290 s left)
    grid = (0.1, 1.0, 10.0, 100.0, 1000.0)
    fits = [(0.1, 1.0, 0.6), (1.0, 1.0, 0.7), (10.0, 2.0, 0.9), (100.0, 8.0, 0.8),
            (1000.0, 30.0, 0.7)]
    searcher, records = _exact_svm_searcher(fits, grid, rungs=(300, 900))
    for state in searcher.lines.values():
        state.alive = False
    searcher.racing = False
    move = searcher._local_moves(lambda seconds: seconds <= 1000.0)
    assert move.stage == "rows" and move.rows == 900 and move.penalties == [1.0, 10.0, 100.0]
    assert move.predicted == pytest.approx(3 * 3 * (1.0 + 2.0 + 8.0))  # 3x the rows
    # not paid for: at the best's penalty alone
    alone = searcher._local_moves(lambda seconds: seconds <= 20.0)
    assert alone.stage == "rows" and alone.penalties == [10.0]
    assert alone.predicted == pytest.approx(3 * 3 * 2.0)
    # scored there at C = 10 alone, the best: the penalties past the edge of those tried
    # on its rows are the grid's next ones (both sides), not the grid's own edge
    records.add([Record(Line("exact-svm"), 900, 1.0, 10.0, None, {}, np.full(3, 0.92),
                        np.full(3, 6.0), np.zeros(3))])
    edge = searcher._local_moves(lambda seconds: seconds <= 1000.0)
    assert edge.stage == "penalties" and edge.rows == 900 and edge.penalties == [1.0, 100.0]


def test_local_models_the_time_does_not_pay_for_are_tried_at_the_best_gamma_alone():
    # regression: on Beijing at 2 minutes four leaves at gamma x 1 and x 2 were priced at
    # 57 s with 55 s left, and a gamma step with nothing to gain took the time where at
    # x 1 alone (stop 69) they had scored 0.9126 against 0.9078
    fits = [(Line("falkon"), 300, p, 1.0, score) for p, score in
            ((1.0, 0.7), (10.0, 0.9), (100.0, 0.8))]
    searcher, _ = _exact_svm_searcher(fits, families=("falkon",), leaves=True)
    both = searcher._local_moves(lambda seconds: seconds <= 10.0)
    # two gammas, each a fit of every fold on 200 rows (1 s on 300 rows, 2/3 s on 200)
    assert both.stage == "leaves" and both.factors == [1.0, 2.0]
    assert both.predicted == pytest.approx(2 * 3 * 2 / 3)
    alone = searcher._local_moves(lambda seconds: seconds <= 3.0)
    assert alone.stage == "leaves" and alone.factors == [1.0]
    assert alone.predicted == pytest.approx(3 * 2 / 3)
    assert alone.line.n_leaves == 4 and "alone" in alone.note


def test_a_revisit_tries_the_retired_lines_best_penalty_and_its_neighbours():
    # regression: Beijing at 10 minutes spent 54 s revisiting three lines at all seven of
    # their penalties, lines that scored 0.878-0.905 against the best's 0.921
    grid = (0.1, 1.0, 10.0, 100.0, 1000.0)
    other = Line("falkon")
    fits = [(Line("exact-svm"), 900, 10.0, 2.0, 0.95)] + \
        [(other, 300, p, s, score) for p, s, score in
         ((0.1, 1.0, 0.6), (1.0, 1.0, 0.8), (10.0, 2.0, 0.7), (100.0, 4.0, 0.6),
          (1000.0, 8.0, 0.5))]
    searcher, records = _exact_svm_searcher(fits, grid, rungs=(300, 900),
                                            families=("exact-svm", "falkon"))
    state = searcher.lines[other]
    state.alive, state.rung, state.note = False, 0, "retired on 300 rows"
    move = searcher._revisit(records.best(), lambda seconds: seconds <= 1000.0)
    assert move.stage == "revisit" and move.line == other and move.rows == 900
    assert move.penalties == [0.1, 1.0, 10.0]
    assert move.predicted == pytest.approx(3 * 3 * (1.0 + 1.0 + 2.0))


@pytest.mark.parametrize("third_on_900, retired, revisited", [
    (0.89, 0.85, False),   # no line gained on the lead: 0.05 behind stays retired
    (0.89, 0.90, True),    # level with the lead where it retired
    (0.915, 0.886, True),  # a line gained 0.015 on the lead: 0.014 behind may too
    (0.915, 0.85, False),  # 0.05 behind: more than any line caught up
])
def test_a_retired_line_is_revisited_only_within_what_the_lines_caught_up(third_on_900,
                                                                         retired, revisited):
    # regression: bio at 2 minutes spent its last 11.6 s revisiting the exact SVM,
    # retired 0.028 below the lead on 4,000 rows where no line had gained on the lead
    lead, third, other = Line("falkon"), Line("falkon", kernel="laplacian"), Line("exact-svm")
    fits = [(lead, 300, 1.0, 1.0, 0.90), (lead, 900, 1.0, 1.0, 0.92),
            (third, 300, 1.0, 1.0, 0.88), (third, 900, 1.0, 1.0, third_on_900),
            (other, 300, 1.0, 1.0, retired)]
    searcher, records = _exact_svm_searcher(fits, (1.0,), rungs=(300, 900),
                                            families=("falkon", "exact-svm"))
    state = searcher.lines[other]
    state.alive, state.rung, state.note = False, 0, "retired on 300 rows"
    best = records.best()
    assert best.line == lead and best.rows == 900
    move = searcher._revisit(best, lambda seconds: True)
    assert (move is not None and move.line == other) is revisited


def test_what_the_lines_caught_up_is_measured_against_the_line_that_leads_on_more_rows():
    # a line lucky on the smaller rung (0.95 there, 0.90 on more rows): measured against
    # the best of every line on each rung, every other line caught up 0.04-0.05; against
    # the line that leads on more rows, none gained
    lead, third, lucky, other = (Line("falkon"), Line("falkon", kernel="laplacian"),
                                 Line("falkon", balanced=True), Line("exact-svm"))
    fits = [(lead, 300, 1.0, 1.0, 0.90), (lead, 900, 1.0, 1.0, 0.92),
            (third, 300, 1.0, 1.0, 0.88), (third, 900, 1.0, 1.0, 0.89),
            (lucky, 300, 1.0, 1.0, 0.95), (lucky, 900, 1.0, 1.0, 0.90),
            (other, 300, 1.0, 1.0, 0.93)]
    searcher, records = _exact_svm_searcher(fits, (1.0,), rungs=(300, 900),
                                            families=("falkon", "exact-svm"))
    assert searcher.catch_up() == 0.0
    state = searcher.lines[other]
    state.alive, state.rung, state.note = False, 0, "retired on 300 rows"
    assert searcher._revisit(records.best(), lambda seconds: True) is None


@pytest.mark.parametrize("b_before, retired", [
    (0.86, True),   # 0.04 behind the lead on 300 rows, 0.07 on 900: no line caught up
    (0.78, False),  # it gained 0.05 a rung on the lead: 0.07 within two rungs of that
])
def test_the_race_retires_an_arm_further_behind_than_the_lines_caught_up(b_before, retired):
    # the best third alone kept an arm 0.0276 behind the lead (bio's exact SVM on 4,000
    # rows) where no line had gained on the lead from one rung to the next
    lines = {"a": Line("falkon"), "b": Line("falkon", kernel="laplacian"),
             "c": Line("falkon", balanced=True), "d": Line("exact-svm")}
    scores = {"a": (0.90, 0.92), "b": (b_before, 0.85), "c": (0.83, 0.84), "d": (0.82, 0.83)}
    fits = [(lines[k], rows, 1.0, 1.0, score) for k, pair in scores.items()
            for rows, score in zip((300, 900), pair)]
    searcher, records = _exact_svm_searcher(fits, (1.0,), rungs=(300, 900, 2700, 8100),
                                            families=("falkon", "exact-svm"))
    for line in lines.values():
        searcher._add(line, [1.0])
        searcher.lines[line].rung = 1
    searcher.round = 1
    assert searcher._promote(lambda seconds: True)
    b = searcher.lines[lines["b"]]
    assert b.alive is not retired
    if retired:
        assert "more than the lines caught up" in b.note and searcher.catch_up() == 0.0
    assert searcher.lines[lines["a"]].alive and not searcher.lines[lines["c"]].alive


def _falkon_rungs_searcher(curve, rungs=(300, 900, 2700), **options):
    """A FALKON searcher whose one line scored ``curve``: ``(rows, centres, fold
    scores)`` at gamma x 1 and penalty 1, with the race at the last rung scored."""
    searcher, records = _exact_svm_searcher((), penalties=(1.0,), rungs=rungs,
                                            families=("falkon",), **options)
    line = Line("falkon")
    for rows, m, scores in curve:
        records.add([Record(line, rows, 1.0, 1.0, m, {}, np.asarray(scores, float),
                            np.full(3, 1.0), np.zeros(3))])
    searcher.round = searcher.rungs.index(max(rows for rows, _, _ in curve))
    searcher.lines[line].rung = searcher.round
    return searcher, records


@pytest.mark.parametrize("below, m_below, stalled", [
    (0.797, 100, True),   # +0.003 at the same centres, within the 0.0058 standard error
    (0.780, 100, False),  # +0.02: the rows still pay
    (0.797, 80, False),   # the centres grew with the rows: no measure of the rows alone
])
def test_the_race_ends_where_more_rows_stopped_paying_at_the_same_centres(below, m_below,
                                                                          stalled):
    # regression: on Beijing at 2 minutes FALKON at 1,000 centres gained 0.0002 from
    # 33,971 to 101,912 rows, the race's last round to 305,734 rows took 26.5 s of the
    # 77 s left, and the centres were never grown
    searcher, records = _falkon_rungs_searcher(
        [(300, m_below, [below] * 3), (900, 100, [0.79, 0.80, 0.81])])
    best = records.best()
    assert best.rows == 900 and searcher.rows_stalled(best) is stalled
    promoted = searcher._promote(lambda seconds: True)
    assert promoted is not stalled
    assert ("ended" in searcher.log[-1]) is stalled
    if stalled:
        assert "within its standard error" in searcher.log[-1]["ended"]


@pytest.mark.parametrize("stalled", [True, False])
def test_capacity_comes_before_more_rows_where_the_rows_stopped_paying(stalled):
    searcher, records = _falkon_rungs_searcher(
        [(300, 100, [0.797 if stalled else 0.78] * 3), (900, 100, [0.79, 0.80, 0.81])],
        leaves=True, grow_centres=False)  # local models stand for capacity here
    searcher.racing = False
    move = searcher._local_moves(lambda seconds: True)
    assert move.stage == ("leaves" if stalled else "rows")
    assert move.rows == (900 if stalled else 2700)


@pytest.mark.filterwarnings("ignore:Conjugate gradient stopped at max_iter")
def test_weighted_ensembles_average_their_members_and_save(tmp_path):
    from kernelscale import KernelSVC, NystromKernelRidge, NystromKernelRidgeClassifier

    X, y = make_moons(300, noise=0.3, random_state=0)
    members = [KernelSVC(probability=True, random_state=0).fit(X, y),
               NystromKernelRidgeClassifier(n_components=40, probability=True,
                                            random_state=0).fit(X, y)]
    ensemble = WeightedEnsembleClassifier(members, weights=[1, 3], prefit=True).fit(X, y)
    expected = (members[0].predict_proba(X) + 3 * members[1].predict_proba(X)) / 4
    np.testing.assert_allclose(ensemble.predict_proba(X), expected)
    calibrated = WeightedEnsembleClassifier(
        members, weights=[1, 3], calibrations=[(np.array([-2.0]), np.array([0.0]))] * 2,
        prefit=True).fit(X, y)
    assert calibrated.score(X, y) > 0.85
    save_model(calibrated, tmp_path / "e.ksm")
    np.testing.assert_array_equal(load_model(tmp_path / "e.ksm").predict(X),
                                  calibrated.predict(X))
    Xr, yr = make_regression(200, 3, random_state=0)
    regs = [NystromKernelRidge(n_components=30, random_state=0).fit(Xr, yr),
            NystromKernelRidge(n_components=30, gamma=0.05, random_state=0).fit(Xr, yr)]
    average = WeightedEnsembleRegressor(regs, weights=[1, 1], prefit=True).fit(Xr, yr)
    np.testing.assert_allclose(average.predict(Xr), (regs[0].predict(Xr)
                                                     + regs[1].predict(Xr)) / 2)
    with pytest.raises(ValueError, match="weights must be 2 non-negative numbers"):
        WeightedEnsembleRegressor(regs, weights=[1, -1], prefit=True).fit(Xr, yr)


# ------------------------------------------------------------------ the search

@pytest.fixture(scope="module")
def compiled():
    """numba compiles its kernels once per install (cached on disk): a search on a real
    clock first, so that a fake clock does not read compiling as the machine's speed."""
    X, y = make_nonlinear_problem(1500, n_features=6, n_informative=3, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        KernelClassifierCV(gamma_factors=[1.0], Cs=[1.0], alphas=[1.0], learn_widths=False,
                           random_state=0).fit(X, y)
        KernelRegressorCV(time_budget=15.0, random_state=0).fit(X, X[:, 0] * X[:, 1])


@pytest.mark.parametrize("task, rows, budget", [
    pytest.param("classifier", 6000, 20.0, marks=pytest.mark.slow),
    ("regressor", 8000, 24.0)])
def test_a_search_3x_slower_than_its_first_move_still_ends_within_the_budget(
        monkeypatch, compiled, task, rows, budget):
    clock = FakeClock()
    clock.factor = 1.0
    monkeypatch.setattr(_clock, "_now", clock)
    real = _run.SearchRun.play

    def play(self, move, reserve, first=False):
        real(self, move, reserve, first)
        if first:
            clock.slow(3.0)  # every later piece of work 3x slower than the first measured
    monkeypatch.setattr(_run.SearchRun, "play", play)
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
    lines = [r.line() for r in search.stages_]
    assert took <= budget * 1.05 + 2.0, lines
    assert search.predict(X[:10]).shape == (10,)
    for record in search.stages_:  # every piece of work ran inside its grant
        if record.outcome != "skipped":
            assert record.granted is not None, record.line()
            assert record.seconds <= record.granted + 2.0, record.line()


@pytest.mark.filterwarnings("ignore:Conjugate gradient stopped at max_iter")
def test_every_piece_of_work_but_the_first_runs_under_an_armed_stop(monkeypatch):
    calls = {"armed": 0, "unarmed": []}
    real_grid, real_fit = Evaluator.grid, Evaluator.fit

    def note(what):
        if _clock.current_stop() is None or _clock.current_stop().end is None:
            calls["unarmed"].append(what)
        else:
            calls["armed"] += 1

    def grid(self, line, rows, *args, **kwargs):
        note(f"grid {line.describe()} on {rows}")
        return real_grid(self, line, rows, *args, **kwargs)

    def fit(self, record, rows, **kwargs):
        note(f"fit on {rows}")
        return real_fit(self, record, rows, **kwargs)
    monkeypatch.setattr(Evaluator, "grid", grid)
    monkeypatch.setattr(Evaluator, "fit", fit)
    X, _ = make_nonlinear_problem(2000, n_features=6, random_state=1)
    y = np.sin(X[:, 0]) + X[:, 1] ** 2
    search = KernelRegressorCV(time_budget=12, learn_widths=False,
                               random_state=0).fit(X, y)
    # the first grid (the budget's probe) runs to its end; all else under a stop
    assert calls["unarmed"][0].startswith("grid") and len(calls["unarmed"]) == 1, calls
    assert calls["armed"] > 3
    assert search.refit_rows_ == 2000 and search.model_origin_ in ("refit", "ensemble"), \
        [r.line() for r in search.stages_]


def test_ctrl_c_before_anything_scored_says_so(monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(Evaluator, "grid", interrupt)
    X, y = make_moons(300, random_state=0)
    with pytest.raises(KeyboardInterrupt, match="before the first model: nothing was scored"):
        KernelClassifierCV().fit(X, y)


def test_a_failed_gamma_is_dropped_with_a_warning(monkeypatch):
    import kernelscale.model_selection._least_squares as least_squares

    real, calls = least_squares.whitening, []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise np.linalg.LinAlgError("injected")
        return real(*args, **kwargs)
    monkeypatch.setattr(least_squares, "whitening", failing)
    X, y = make_moons(600, noise=0.3, random_state=0)
    with pytest.warns(UserWarning, match=r"gamma factor .* failed \(LinAlgError: injected\)"):
        search = KernelClassifierCV(families="falkon", n_components=50, gamma_factors=[1, 2, 4],
                                    alphas=[1.0, 10.0], learn_widths=False,
                                    random_state=0).fit(X, y)
    rbf = [p for p in search.cv_results_["params"] if p["kernel"] == "rbf"]
    assert len({p["gamma"] for p in rbf}) == 2 and not search.complete_
    assert search.predict(X).shape == (600,)


def test_the_best_scored_configuration_comes_back_when_its_refit_cannot(monkeypatch, clock):
    # issue 62's trap: the search had scored 0.95 and returned its first model (0.68).
    # Here the refit on every row is priced past the budget: the best configuration
    # comes back, fitted on the rows it was scored on (or on more the time pays for)
    _gamma_seconds(monkeypatch, clock, 0.5)
    real = Evaluator.predict

    def dear_refit(self, line, kind, rows, *args, **kwargs):
        if kind == "fit" and rows >= self.n:
            return 1e6
        return real(self, line, kind, rows, *args, **kwargs)
    monkeypatch.setattr(Evaluator, "predict", dear_refit)
    X, y = make_nonlinear_problem(6000, n_features=6, n_informative=3, random_state=0)
    search = KernelClassifierCV(time_budget=30, learn_widths=False, random_state=0).fit(X, y)
    best = int(np.argmin(search.cv_results_["rank_test_score"]))
    assert search.best_index_ == best
    # (or an ensemble of it and others, refitted on those rows): every row is priced
    # dear, and the most rows short of them are found to within 1%
    assert search.model_origin_ in ("held", "refit on a subsample", "ensemble")
    assert 0.99 * search.cv_results_["n_resources"][best] <= search.refit_rows_ < len(y), \
        [r.line() for r in search.stages_]
    refits = [r for r in search.stages_ if r.stage == "refit"]
    assert not refits or refits[-1].outcome in ("skipped", "done")


def test_the_best_on_every_row_is_held_as_its_refit_before_the_final_refit(monkeypatch,
                                                                           clock):
    # regression: the best on every row was left to the final refit alone; on california
    # beside two busy loops that refit was stopped at the budget's end and the model held
    # on a third of the rows came back (test R^2 0.806 for 0.860 idle). Here every final
    # fit is stopped as a busy machine's was: the best on every row, held as its refit
    # when it became the best, comes back
    from kernelscale._clock import TimeUp

    _gamma_seconds(monkeypatch, clock, 0.5)
    ending = []
    real_final, real_fit = _run.SearchRun.final, Evaluator.fit

    def final(self):
        ending.append(True)
        return real_final(self)

    def fit(self, *args, **kwargs):
        if ending:
            raise TimeUp("the budget's end")
        return real_fit(self, *args, **kwargs)
    monkeypatch.setattr(_run.SearchRun, "final", final)
    monkeypatch.setattr(Evaluator, "fit", fit)
    X, y = make_nonlinear_problem(6000, n_features=6, n_informative=3, random_state=0)
    search = KernelClassifierCV(time_budget=30, learn_widths=False, random_state=0).fit(X, y)
    assert search.cv_results_["n_resources"].min() < len(y)  # the race had subsamples
    best = int(np.argmin(search.cv_results_["rank_test_score"]))
    assert search.cv_results_["n_resources"][best] == len(y)
    assert search.model_origin_ == "refit" and search.refit_rows_ == len(y), \
        [r.line() for r in search.stages_]
    params = search.cv_results_["params"][best]
    assert search.best_estimator_.get_params()["gamma"] == pytest.approx(params["gamma"])
    assert search.predict(X).shape == (6000,)


def test_a_refit_short_of_every_row_stands_in_for_a_held_model_of_fewer_rows():
    # regression: a revisit overran its grant, the refit on every row no longer fitted,
    # and the model held on 14,384 rows stood although its configuration, the best, was
    # scored on every row (diamonds at 2 minutes): a refit on more rows than the held
    # model's, fewer than every row, stands in for it
    line = Line("falkon")

    def rec(rows, score, factor=1.0):
        return Record(line, rows, factor, 1e-3, 100, {}, np.full(3, score), np.ones(3),
                      np.zeros(3))
    records = Records(oof_bytes=0)
    small, big = rec(1000, 0.80), rec(9000, 0.85)
    other = rec(1000, 0.82, factor=2.0)
    records.add([small, big, other])
    run = _run.SearchRun(None, None, records, None, None, probability=False)
    assert run._least_rows(big) == 9000  # nothing held
    run.held = _run.Held(None, {}, small, 1000, "held", None, small.mean)
    assert run._least_rows(big) == 1001  # the best's own configuration, on fewer rows
    run.held = _run.Held(None, {}, other, 1000, "held", None, other.mean)
    # another configuration, which scored above the best's on the held model's rows: no
    # measurement says fewer rows of the best do better than it
    assert run._least_rows(big) == 9000
    records.add([rec(3000, 0.83)])
    # the best's configuration scored above it on more rows than the held model's: not
    # on no more rows, so still every row the best was scored on
    assert run._least_rows(big) == 9000
    run.held = _run.Held(None, {}, other, 3000, "held", None, other.mean)
    assert run._least_rows(big) == 3001


@pytest.mark.slow
def test_a_longer_budget_scores_more_configurations_on_more_rows(monkeypatch, clock):
    _gamma_seconds(monkeypatch, clock, 0.4)
    X, y = make_nonlinear_problem(9000, n_features=6, n_informative=3, random_state=0)
    runs = {}
    for budget in (8, 40):
        search = KernelClassifierCV(time_budget=budget, learn_widths=False,
                                    random_state=0).fit(X, y)
        runs[budget] = search
    short, long = runs[8], runs[40]
    assert long.n_scored_ > short.n_scored_
    assert long.cv_results_["n_resources"].max() >= short.cv_results_["n_resources"].max()


def test_the_race_retires_a_line_clearly_below_the_best_and_says_so():
    X, y = make_moons(900, noise=0.25, random_state=0)
    X = np.hstack([X, np.random.default_rng(0).normal(size=(900, 6)) * 3])  # noise columns
    search = KernelClassifierCV(gamma_factors=[0.5, 1, 2], Cs=[1, 10], alphas=[0.1, 10],
                                time_budget=60, learn_widths="diagonal",
                                random_state=0).fit(X, y)
    notes = search.lines_
    assert any(note.startswith("retired") for note in notes.values()), notes
    assert search.best_params_.get("metric") == "diagonal" or search.widths_ is None


def test_local_moves_step_the_gamma_past_the_grids_edge(monkeypatch):
    # the best gamma on the edge of the grid: a step beyond it is scored
    X, y = make_moons(800, noise=0.2, random_state=0)
    search = KernelClassifierCV(families="exact-svm", gamma_factors=[0.01, 0.02],
                                Cs=[1.0, 10.0], time_budget=30, learn_widths=False,
                                random_state=0).fit(X, y)
    factors = {round(p["gamma"] * 2 * X.var(), 6) for p in search.cv_results_["params"]}
    assert max(factors) > 0.02, factors
    assert any(r.stage == "gamma step" for r in search.stages_)


def test_a_gamma_step_scores_only_the_penalties_beside_the_best():
    # regression: a gamma step solved every penalty of the line (an exact SVM's largest C
    # the slowest solve: 34 s of a 2-minute budget for no configuration on electricity)
    import re

    X, y = make_moons(800, noise=0.2, random_state=0)
    Cs = np.logspace(-1, 3, 9)
    search = KernelClassifierCV(families="exact-svm", gamma_factors=[0.01, 0.02], Cs=Cs,
                                time_budget=30, learn_widths=False,
                                random_state=0).fit(X, y)
    steps = [r for r in search.stages_ if r.stage == "gamma step" and r.outcome == "done"]
    assert steps
    for record in steps:
        scored = int(re.search(r"(\d+) configurations scored", record.note).group(1))
        assert 1 <= scored <= 2 * 3, record.note


def test_a_budget_left_after_the_moves_buys_other_draws_of_the_best_centres():
    X, y = make_regression(1500, 5, noise=10.0, random_state=0)
    y = np.sin(y / 40.0)
    search = KernelRegressorCV(families="falkon", gamma_factors=[0.5, 1, 2],
                               alphas=[1e-3, 1e-1], n_components=100, learn_widths=False,
                               time_budget=40, random_state=0).fit(X, y)
    draws = [r for r in search.stages_ if r.stage == "draw"]
    assert draws, [(r.stage, r.note) for r in search.stages_]
    params = search.cv_results_["params"]
    drawn = [i for i, p in enumerate(params) if p.get("draw")]
    assert drawn and "draw" not in search.best_params_
    # another draw is the same configuration with other centres: other scores
    first = params[drawn[0]]
    base = [i for i, p in enumerate(params) if not p.get("draw") and all(
        p.get(k) == first.get(k) for k in ("gamma", "alpha", "n_components"))
        and search.cv_results_["n_resources"][i] == search.cv_results_["n_resources"][
            drawn[0]]]
    assert base
    assert search.cv_results_["mean_test_score"][drawn[0]] != \
        search.cv_results_["mean_test_score"][base[0]]
    assert search.predict(X[:5]).shape == (5,)


def test_a_regressors_local_models_are_a_move_kept_where_they_score_higher():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(6000, 3))
    y = np.sin(3 * X[:, 0] + 40 * X[:, 0] ** 3) + 0.3 * X[:, 1] + 0.01 * rng.normal(size=6000)
    search = KernelRegressorCV(time_budget=40, learn_widths=False, n_components=100,
                               random_state=0).fit(X, y)
    stages = [r.stage for r in search.stages_]
    assert "leaves" in stages, stages
    leaves = [p for p in search.cv_results_["params"] if p.get("n_leaves")]
    # four leaves first; while local models are the best, twice and half as many
    assert leaves and leaves[0]["n_leaves"] == 4
    assert all(p["n_leaves"] in (2, 4, 8, 16, 32, 64) for p in leaves)
    model = search.best_estimator_
    if search.best_params_.get("n_leaves"):
        assert isinstance(model, LocalKernelRegressor) or search.ensemble_ is not None


def test_a_dataframe_with_text_dates_and_missing_cells_is_searched_and_predicted():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 1200
    frame = pd.DataFrame({"x": rng.normal(size=n), "colour": rng.choice(["red", "blue"], n),
                          "day": pd.date_range("2024-01-01", periods=n, freq="h"),
                          "size": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n))})
    y = np.where(frame["x"] + (frame["colour"] == "red") > 0.5, "yes", "no")
    search = KernelClassifierCV(time_budget=20, random_state=0).fit(frame, y)
    assert search.encoder_ is not None and search.score(frame, y) > 0.85
    missing = pd.Series(y).where(rng.random(n) > 0.01)
    with pytest.raises(ValueError, match=r"y is missing on \d+ of 1200 rows: drop those rows"):
        KernelClassifierCV(time_budget=20).fit(frame, missing)


def test_the_held_ensemble_predicts_and_is_saved(tmp_path):
    X, y = make_nonlinear_problem(3000, n_features=8, n_informative=4, random_state=3)
    search = KernelClassifierCV(time_budget=30, random_state=0).fit(X, y)
    assert search.predict(X[:5]).shape == (5,)
    if search.ensemble_ is not None:  # kept only where it beat the best beyond the noise
        assert isinstance(search.best_estimator_, WeightedEnsembleClassifier)
        assert search.model_origin_ == "ensemble"
        assert len(search.ensemble_["weights"]) == len(search.ensemble_["params"]) >= 2
        assert search.predict_proba(X[:5]).shape == (5, 2)
    save_model(search.best_estimator_, tmp_path / "m.ksm")
    np.testing.assert_array_equal(load_model(tmp_path / "m.ksm").predict(X[:50]),
                                  search.predict(X[:50]))
