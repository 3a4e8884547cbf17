"""The ensemble's members grown (:mod:`kernelscale.model_selection._members`): once the
moves around the best are spent, the members the ensemble averages with it get the
centres the best got, while that raises the ensemble's out-of-fold score."""

from __future__ import annotations

import numpy as np
import pytest

from kernelscale import KernelRegressorCV
from kernelscale.model_selection._cost import CostModel
from kernelscale.model_selection._evaluator import Evaluator
from kernelscale.model_selection._inputs import SearchData, SearchSettings, SearchSpace
from kernelscale.model_selection._moves import _Local
from kernelscale.model_selection._records import Line, Record, Records
from kernelscale.model_selection._searcher import Searcher
from kernelscale.model_selection._space import make_folds

N = 600
RBF, LAPLACIAN = Line("falkon"), Line("falkon", kernel="laplacian")


def _searcher(best_m=400, member_m=50, member_noise=0.3, seed=0, others=()):
    """A searcher whose moves around its best (RBF, ``best_m`` centres, every row) are
    spent, beside a Laplacian line scored at ``member_m`` centres: two records whose
    out-of-fold errors are independent, so that their average scores above either."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=N)
    folds = make_folds(3, X, y, None, None, 0)
    space = SearchSpace([1.0], 1.0 / 3.0, 50, alphas=[1e-3, 1e-1, 1e1])
    settings = SearchSettings("r2", 2**28, 1e-3, 1, 0, None, float(N))
    ev = Evaluator("regressor", SearchData(X, y, np.ones(N)), folds, space, settings,
                   CostModel(rates={"gemm": 1e-10, "eigh": 1e-9, "exp": 1e-9}), 0)
    records = Records(oof_bytes=2**28)

    def record(line, m, noise):
        oof = (y + noise * rng.normal(size=N))[:, None].astype(np.float32)
        return Record(line, N, 1.0, 1e-1, m, {}, ev.oof_scores(N, oof), np.full(3, 0.01),
                      np.zeros(3), oof)
    best = record(RBF, best_m, 0.2)
    records.add([best, record(LAPLACIAN, member_m, member_noise)])
    records.add([record(line, member_m, member_noise) for line in others])
    searcher = Searcher(ev, records, [N], families=["falkon"], factors=[1.0], laplacian=True)
    for line in (LAPLACIAN,) + tuple(others):
        searcher._add(line, [1.0])
    searcher.racing = False
    assert records.best() is best
    searcher._local[(best.line, best.rows)] = _Local(gamma_done=True, penalty_done=True,
                                                     centres_done=True, draws_done=True)
    return searcher, records, best


def test_a_member_of_the_ensemble_gets_its_centres_doubled_up_to_the_best():
    searcher, records, best = _searcher()
    move = searcher._local_moves(lambda seconds: True)
    assert move.stage == "member" and move.line == LAPLACIAN
    assert move.n_components == 100 and move.factors == [1.0]
    assert move.penalties == [1e-3, 1e-1, 1e1]  # its penalty and its neighbours
    # doubled no further than the best's centres
    searcher, _, _ = _searcher(best_m=150, member_m=100)
    assert searcher._local_moves(lambda seconds: True).n_components == 150


def test_a_member_as_large_as_the_best_or_unaffordable_is_not_grown():
    searcher, _, _ = _searcher(best_m=100, member_m=100)
    assert searcher._local_moves(lambda seconds: True) is None
    searcher, _, _ = _searcher()
    assert searcher._local_moves(lambda seconds: False) is None


def test_a_members_growth_ends_where_the_ensemble_did_not_rise():
    searcher, records, best = _searcher()
    move = searcher._local_moves(lambda seconds: True)
    # the larger member scored: no better than noise of its own, the ensemble no higher
    rng = np.random.default_rng(5)
    worse = (best.oof[:, 0] + 3.0 * rng.normal(size=N))[:, None].astype(np.float32)
    grown = Record(LAPLACIAN, N, 1.0, 1e-1, move.n_components, {},
                   searcher.evaluator.oof_scores(N, worse), np.full(3, 0.01), np.zeros(3),
                   worse)
    records.add([grown])
    searcher.observe(move, [grown])
    assert searcher._members[LAPLACIAN].done
    assert searcher._local_moves(lambda seconds: True) is None


def test_a_member_that_raises_the_ensemble_grows_again():
    searcher, records, best = _searcher()
    move = searcher._local_moves(lambda seconds: True)
    rng = np.random.default_rng(6)
    y = searcher.evaluator.data.y
    better = (y + 0.2 * rng.normal(size=N))[:, None].astype(np.float32)
    grown = Record(LAPLACIAN, N, 1.0, 1e-1, move.n_components, {},
                   searcher.evaluator.oof_scores(N, better), np.full(3, 0.01), np.zeros(3),
                   better)
    records.add([grown])
    searcher.observe(move, [grown])
    assert not searcher._members[LAPLACIAN].done
    again = searcher._local_moves(lambda seconds: True)
    assert again.stage == "member" and again.n_components == 200


@pytest.mark.slow
def test_a_search_with_time_left_grows_the_ensembles_members():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(3000, 4))
    y = np.sin(2 * X[:, 0]) * np.cos(X[:, 1]) + 0.5 * np.abs(X[:, 2]) \
        + 0.05 * rng.normal(size=3000)
    search = KernelRegressorCV(families="falkon", time_budget=60, learn_widths=False,
                               random_state=0).fit(X, y)
    members = [r for r in search.stages_ if r.stage == "member"]
    assert members, [(r.stage, r.note) for r in search.stages_]
    assert search.predict(X[:5]).shape == (5,)


def test_a_member_is_grown_only_where_the_time_pays_for_the_ensembles_refits():
    # regression: a member was priced at its folds and its own refit, and diamonds at 10
    # minutes grew one to 4,315 centres in 47.5 s of 48.1 s: the 19.5 s left paid for no
    # ensemble of its members
    other = Line("falkon", kernel="laplacian", n_leaves=2)
    searcher, records, best = _searcher(others=(other,))
    move = searcher._local_moves(lambda seconds: True)
    assert move.stage == "member"
    ev = searcher.evaluator
    # each refit at its own folds' measured fits, grown to every row (and to its centres)
    own = records.at(N, move.line)[0]
    mine = ev.refit_price(own, ev.n, move.n_components)
    assert mine > ev.predict(move.line, "fit", ev.n, move.n_components)
    rest = [line for line in (LAPLACIAN, other) if line != move.line]
    theirs = sum(ev.refit_price(records.at(N, line)[0], ev.n) for line in rest)
    assert theirs > 0

    def fresh():
        return _searcher(others=(other,))[0]
    # its folds and its own refit, not the other member's: not grown (a cheaper member
    # may be)
    short = fresh()._local_moves(lambda s: s <= move.predicted + mine + 0.5 * theirs)
    assert short is None or short.line != move.line
    paid = fresh()._local_moves(lambda s: s <= move.predicted + mine + theirs)
    assert paid is not None and paid.line == move.line


def test_the_reserve_keeps_the_ensembles_refits_once_the_race_is_done():
    # the final model is the ensemble where the records select one: its members' refits
    # are reserved beside the best's (on bio at 2 minutes the local moves took the time to
    # the end, and the ensemble's refits, 1.5 s each, found none left)
    from kernelscale.model_selection._run import REFIT_SAFETY, SearchRun
    from kernelscale.model_selection._schedule import SLACK, Scheduler

    searcher, records, best = _searcher()
    run = SearchRun(None, searcher.evaluator, records, searcher, Scheduler(1000.0),
                    probability=False)
    alone = REFIT_SAFETY * run.refit_predicted(best, N) + SLACK
    searcher.racing = True  # the race's records are on fewer rows than its end's
    assert run.reserve() == pytest.approx(alone)
    searcher.racing = False
    assert searcher.selection(N).kept
    member = records.at(N, LAPLACIAN)[0]
    assert run.reserve() == pytest.approx(alone + REFIT_SAFETY * run.refit_predicted(member, N))
    # an ensemble that would not be kept reserves nothing
    searcher, records, best = _searcher(member_noise=3.0)
    run = SearchRun(None, searcher.evaluator, records, searcher, Scheduler(1000.0),
                    probability=False)
    assert not searcher.selection(N).kept
    assert run.reserve() == pytest.approx(REFIT_SAFETY * run.refit_predicted(best, N) + SLACK)


def test_the_selection_is_made_once_for_the_same_candidates():
    # a member move's proposal, its observation and the search's reserve ask for it in
    # turn: a classifier's selection scores each candidate on its own
    searcher, records, best = _searcher()
    first = searcher.selection(N)
    assert searcher.selection(N) is first
    other = Line("falkon", kernel="laplacian", n_leaves=2)
    oof = (records.best().oof + 0.5).astype(np.float32)
    records.add([Record(other, N, 1.0, 1e-1, 50, {}, searcher.evaluator.oof_scores(N, oof),
                        np.full(3, 0.01), np.zeros(3), oof)])
    assert searcher.selection(N) is not first
