"""The search's edge stage: under a time budget with the default gamma factors, a best
gamma on an edge of the grid gets the gammas past it cross-validated, and the refit
takes whichever configuration scored highest."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from kernelscale import KernelClassifierCV, KernelRegressorCV
from kernelscale.model_selection import _edge_stage
from kernelscale.model_selection._edge_stage import EDGE_STEP, EDGE_STEPS, _edge_direction
from kernelscale.model_selection._space import DEFAULT_GAMMA_FACTORS

SMALL = dict(families="falkon", n_components=60, cv=3, alphas=[1e-2, 1.0],
             learn_widths="none", halving=False, random_state=0)


def _linear(n=400, d=3, seed=0):
    # a linear target: the smoother the kernel, the better, so the grid's best gamma is
    # its smallest
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X @ np.array([1.0, -2.0, 0.5]) + 0.01 * rng.standard_normal(n)


def _stage(search):
    return [r for r in search.stages_ if r.stage == "grid edge"]


def _rare(seed, class_sep):
    # 5% positives scored by ROC AUC: the class-weight stage chooses the weights
    return make_classification(n_samples=1500, n_features=4, n_informative=2, n_redundant=0,
                               weights=[0.95, 0.05], class_sep=class_sep, flip_y=0.0,
                               random_state=seed)


def _check_steps(search):
    """Each step past the (smallest) edge was taken only after the step before it scored
    higher than the one before that; the last is the first that did not, or the last
    allowed. Returns how many were taken."""
    gammas = np.array([p["gamma"] for p in search.cv_results_["params"]])
    means = search.cv_results_["mean_test_score"]
    ordered = [means[np.isclose(gammas, g)].max() for g in sorted(set(gammas))]
    past = len(ordered) - len(DEFAULT_GAMMA_FACTORS)  # ordered[past] is the grid's edge
    for i in range(past - 1, 0, -1):
        assert ordered[i] > ordered[i + 1]
    assert past == EDGE_STEPS or ordered[0] <= ordered[1]
    return past


def test_edge_direction():
    assert _edge_direction(0.125, [0.125, 1.0, 8.0]) == -1
    assert _edge_direction(8.0, [0.125, 1.0, 8.0]) == 1
    assert _edge_direction(1.0, [0.125, 1.0, 8.0]) == 0
    assert _edge_direction(1.0, [1.0]) == 0  # one gamma has no edge


def test_a_best_gamma_on_the_grids_edge_gets_the_gammas_past_it_scored():
    X, y = _linear()
    search = KernelRegressorCV(time_budget="2m", **SMALL).fit(X, y)
    (record,) = _stage(search)
    assert record.outcome == "done", record.note
    assert "is the smallest of the grid" in record.note
    gammas = np.array([p["gamma"] for p in search.cv_results_["params"]])
    grid = sorted(set(gammas))
    # the grid's 7 gammas and at least one past its smallest, each a step below the last
    past = grid[:len(grid) - len(DEFAULT_GAMMA_FACTORS)]
    assert 1 <= len(past) <= EDGE_STEPS
    edge = grid[len(past)]
    np.testing.assert_allclose(past[::-1], edge / EDGE_STEP ** np.arange(1, len(past) + 1))
    # every gamma past the edge is scored with every penalty, and the steps follow the rule
    assert all(np.sum(np.isclose(gammas, g)) == len(SMALL["alphas"]) for g in past)
    _check_steps(search)
    # the refit is the best configuration scored, past the edge or not
    means = search.cv_results_["mean_test_score"]
    assert search.best_index_ == int(np.argmax(means))
    assert search.best_params_["gamma"] == pytest.approx(gammas[search.best_index_])


def test_the_steps_go_on_while_each_scores_higher():
    X, y = _rare(2, 0.5)  # its best past the edge took more than one step
    search = KernelClassifierCV(time_budget="2m", scoring="roc_auc", **SMALL).fit(X, y)
    assert _check_steps(search) >= 2
    assert "past the grid's smallest" in search.family_choice_


def test_no_time_budget_or_a_given_grid_searches_the_grid_as_given():
    X, y = _linear()
    plain = KernelRegressorCV(**SMALL).fit(X, y)
    assert not _stage(plain)
    assert len({p["gamma"] for p in plain.cv_results_["params"]}) == len(DEFAULT_GAMMA_FACTORS)
    given = KernelRegressorCV(time_budget="2m", gamma_factors=[0.5, 1.0, 2.0], **SMALL).fit(X, y)
    assert not _stage(given)
    assert len({p["gamma"] for p in given.cv_results_["params"]}) == 3


def test_an_inside_best_is_not_extended():
    X, y = _rare(0, 1.0)
    search = KernelClassifierCV(time_budget="2m", scoring="roc_auc", **SMALL).fit(X, y)
    (record,) = _stage(search)
    assert record.outcome == "skipped"
    assert "inside the grid" in record.note
    assert len({p["gamma"] for p in search.cv_results_["params"]}) == len(DEFAULT_GAMMA_FACTORS)


def test_the_stage_is_skipped_when_one_gamma_past_the_edge_does_not_fit(monkeypatch):
    monkeypatch.setattr(_edge_stage, "predicted_unit", lambda state, rows: 1e6)
    X, y = _linear()
    search = KernelRegressorCV(time_budget="2m", **SMALL).fit(X, y)
    (record,) = _stage(search)
    assert record.outcome == "skipped"
    assert "skipped for time" in record.note and "smallest of the grid" in record.note
    assert len({p["gamma"] for p in search.cv_results_["params"]}) == len(DEFAULT_GAMMA_FACTORS)


def test_the_best_class_weights_carry_past_the_edge():
    # the class-weight stage balanced the best gamma, on the grid's edge: the gammas past
    # it are scored balanced
    X, y = _rare(2, 0.5)
    search = KernelClassifierCV(time_budget="2m", scoring="roc_auc", **SMALL).fit(X, y)
    (record,) = _stage(search)
    assert record.outcome == "done", record.note
    params = search.cv_results_["params"]
    grid = sorted({p["gamma"] for p in params})
    past = grid[:len(grid) - len(DEFAULT_GAMMA_FACTORS)]
    assert past
    assert {p["class_weight"] for p in params if p["gamma"] in past} == {"balanced"}
    assert search.best_params_["class_weight"] == "balanced"


# the smallest penalty's conjugate gradient stops at its iteration cap on these rows
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_halvings_survivor_on_the_grids_edge_is_extended():
    # the halving leaves one gamma on every row: its edge is the grid's, not the rows'
    X, y = _linear(n=6000)
    search = KernelRegressorCV(time_budget="2m", **{**SMALL, "halving": True}).fit(X, y)
    assert search.halving_, "the halving ran"
    (record,) = _stage(search)
    assert record.outcome == "done", record.note
    assert "is the smallest of the grid" in record.note
