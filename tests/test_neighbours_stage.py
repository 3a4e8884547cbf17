"""The search's neighbours stage: where the exact SVM won the challenge, its C and gamma
are moved on the first fold while each move scores higher and the time left pays for
the fit and the refit; the best is refitted and held."""

import re

import numpy as np
import pytest

from kernelscale import KernelClassifierCV
from kernelscale.datasets import make_nonlinear_problem
from kernelscale.model_selection import _choice, _neighbours_stage
from kernelscale.model_selection._neighbours_stage import (
    MOVES,
    NEIGHBOUR_FITS,
    neighbour_seconds,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

# an over-smoothed FALKON (alpha 1e3) loses the challenge to the exact SVM at C=1
CHALLENGED = dict(gamma_factors=[1.0], alphas=[1e3], cv=3, learn_widths=False, random_state=0)


@pytest.fixture
def data(monkeypatch):
    monkeypatch.setattr(_choice, "EXACT_MAX_ROWS", 1000)
    return make_nonlinear_problem(4000, random_state=5)


def _stage(search):
    return [r for r in search.stages_ if r.stage == "challenger's neighbours"]


def _moves(note):
    """``[(what, score)]`` of the moves scored, in order."""
    return [(m.group(1), float(m.group(2)))
            for m in re.finditer(r"(C=[\d.e+-]+|gamma x [\d.e+-]+): ([\d.]+) in", note)]


def test_neighbour_prices_grow_with_c_and_gamma_and_never_fall():
    at = {"C": 1.0, "gamma": 0.5}
    assert neighbour_seconds(2.0, at, {"C": 10.0, "gamma": 0.5}) == pytest.approx(
        2.0 * np.sqrt(10.0))
    assert neighbour_seconds(2.0, at, {"C": 1.0, "gamma": 2.0}) == pytest.approx(4.0)
    assert neighbour_seconds(2.0, at, {"C": 0.1, "gamma": 0.25}) == 2.0


def test_a_winning_challengers_c_and_gamma_move_while_they_score_higher(data):
    X, y = data
    search = KernelClassifierCV(time_budget=60, **CHALLENGED).fit(X, y)
    step = search.challenger_
    assert step["won"]
    (record,) = _stage(search)
    moves = _moves(record.note)
    assert 1 <= len(moves) <= NEIGHBOUR_FITS, record.line()
    # a move is made from the best so far: each kept one scored higher than the one
    # held before it, and the first that did not ends its direction
    held, ended = step["score"], 0
    for _, score in moves:
        ended += score <= held  # a move that does not score higher ends its direction
        held = max(held, score)
    assert ended <= 2 * len(MOVES), record.line()
    if held > step["score"]:
        # the model held is the move that scored highest (a move is kept only where it
        # scored higher than the one held)
        what = max(moves, key=lambda m: m[1])[0]
        ref = search.cv_results_["params"][0]["gamma"]  # gamma_factors=[1.0]
        if what.startswith("C="):
            assert search.best_params_["C"] == pytest.approx(float(what[2:]), rel=1e-3)
        else:
            assert search.best_params_["gamma"] / ref == pytest.approx(
                float(what.split()[-1]), rel=1e-2)
        assert search.model_origin_ == "challenger's neighbour", record.line()
        assert "refitted on every row" in record.note
        assert (search.best_params_["C"], search.best_params_["gamma"]) != \
            (step["params"]["C"], step["params"]["gamma"])
        assert search.best_estimator_.C == search.best_params_["C"]
        assert "the exact SVM at C=" in search.family_choice_
    else:
        assert search.model_origin_ == "challenger"
    assert search.predict(X[:10]).shape == (10,)


def test_every_move_past_the_time_left_is_skipped_and_the_challenger_stands(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(_neighbours_stage, "neighbour_seconds", lambda *a: 1e6)
    search = KernelClassifierCV(time_budget=60, **CHALLENGED).fit(X, y)
    (record,) = _stage(search)
    assert record.outcome == "shrunk" and record.note.count("skipped for time") == 2 * len(MOVES)
    assert search.model_origin_ == "challenger" and not search.complete_


def test_no_budget_no_win_or_no_exact_family_no_moves(data):
    X, y = data
    plain = KernelClassifierCV(**CHALLENGED).fit(X[:1500], y[:1500])
    assert _stage(plain)[0].note.startswith("not needed")
    falkon = KernelClassifierCV(families=["falkon"], time_budget=60, **CHALLENGED).fit(X, y)
    assert _stage(falkon)[0].outcome == "skipped" and falkon.model_origin_ != "challenger"


def test_ctrl_c_in_a_move_keeps_the_challenger(data, monkeypatch):
    X, y = data

    class Interrupted:
        def fit(self, *args, **kwargs):
            raise KeyboardInterrupt

    monkeypatch.setattr(_neighbours_stage, "classifier_model", lambda *a: Interrupted())
    with pytest.warns(UserWarning, match="Search interrupted"):
        search = KernelClassifierCV(time_budget=60, **CHALLENGED).fit(X, y)
    assert _stage(search)[0].outcome == "interrupted"
    assert search.model_origin_ == "challenger"
    assert np.mean(search.predict(X) == y) > 0.8
