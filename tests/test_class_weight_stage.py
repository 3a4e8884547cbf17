"""The search's class-weight stage: with ``class_weight="auto"`` on imbalanced classes the
grid's best gamma is cross-validated again with the classes balanced, and the refit takes
whichever scored higher, with the weights it was scored with."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from kernelscale import KernelClassifierCV, NystromKernelRidgeClassifier
from kernelscale.model_selection._class_weight_stage import IMBALANCE
from kernelscale.solvers import balanced_class_factors

SMALL = dict(families="falkon", n_components=100, cv=3, gamma_factors=[0.5, 2.0],
             alphas=[1.0, 10.0, 100.0],
             learn_widths="none", random_state=0)


def _data(weights, n=1500, seed=0):
    return make_classification(n_samples=n, n_features=6, n_informative=4, weights=weights,
                               flip_y=0.02, class_sep=0.8, random_state=seed)


def _stage(search):
    return [r for r in search.stages_ if r.stage == "class weights"]


@pytest.mark.parametrize("scoring", ["roc_auc", "accuracy"])
def test_imbalanced_classes_get_both_weightings_scored_and_the_refit_takes_the_winner(scoring):
    X, y = _data([0.95, 0.05])
    search = KernelClassifierCV(scoring=scoring, **SMALL).fit(X, y)
    (record,) = _stage(search)
    assert record.outcome == "done"
    balanced = [i for i, p in enumerate(search.cv_results_["params"])
                if p.get("class_weight") == "balanced"]
    unweighted = [i for i, p in enumerate(search.cv_results_["params"])
                  if p.get("class_weight") != "balanced"]
    assert balanced and unweighted
    means = search.cv_results_["mean_test_score"]
    # the balanced configurations are the grid's best gamma, every alpha
    assert len({search.cv_results_["params"][i]["gamma"] for i in balanced}) == 1
    assert len(balanced) == len({search.cv_results_["params"][i]["alpha"] for i in unweighted})
    chosen = "balanced" if means[balanced].max() > means[unweighted].max() else None
    assert search.best_params_["class_weight"] == chosen
    assert search.best_estimator_.class_weight == chosen
    assert search.cv_results_["params"][search.best_index_]["class_weight"] == chosen
    assert f"kept {'balanced' if chosen else 'none'}" in record.note


def test_balanced_weights_win_a_ranking_score_on_a_rare_class():
    # 3% positives: the unweighted least-squares fit spends itself on the common class
    X, y = _data([0.97, 0.03], n=3000, seed=1)
    search = KernelClassifierCV(scoring="roc_auc", **SMALL).fit(X, y)
    assert search.best_params_["class_weight"] == "balanced"
    assert "classes balanced" in search.family_choice_
    # the refit is the model scored: balanced, and its decision values those of a model
    # fitted with the best parameters and "balanced"
    model = search.best_estimator_
    assert model.class_weight == "balanced"
    twin = NystromKernelRidgeClassifier(**model.get_params()).fit(X, y)
    np.testing.assert_allclose(twin.decision_function(X[:50]), model.decision_function(X[:50]),
                               rtol=1e-6, atol=1e-8)


def test_the_stage_weighs_the_folds_with_the_refits_balanced_factors():
    X, y = _data([0.9, 0.1])
    search = KernelClassifierCV(scoring="roc_auc", **SMALL).fit(X, y)
    best = dict(search.best_params_, class_weight="balanced")
    factors = balanced_class_factors(np.bincount(y).astype(float))
    model = NystromKernelRidgeClassifier(
        n_components=best["n_components"], gamma=best["gamma"], alpha=best["alpha"],
        dtype="float64", class_weight={0: factors[0], 1: factors[1]}, random_state=0)
    balanced = NystromKernelRidgeClassifier(**{**model.get_params(), "class_weight": "balanced"})
    # "balanced" on every row is exactly the stage's per-class factors
    np.testing.assert_allclose(model.fit(X, y).decision_function(X),
                               balanced.fit(X, y).decision_function(X), rtol=1e-10)


def test_balanced_classes_skip_the_stage_and_add_no_parameter():
    X, y = _data([0.5, 0.5])
    search = KernelClassifierCV(**SMALL).fit(X, y)
    (record,) = _stage(search)
    assert record.outcome == "skipped" and "not needed" in record.note
    assert "class_weight" not in search.best_params_
    assert "param_class_weight" not in search.cv_results_
    assert search.best_estimator_.class_weight is None


@pytest.mark.parametrize("given", [None, "balanced"])
def test_a_given_class_weight_is_kept_and_the_stage_does_not_run(given):
    X, y = _data([0.95, 0.05])
    search = KernelClassifierCV(class_weight=given, **SMALL).fit(X, y)
    assert not _stage(search)
    assert search.best_estimator_.class_weight == given
    assert "param_class_weight" not in search.cv_results_


def test_the_imbalance_rule():
    # a rarest class at its threshold share is balanced enough: no stage work
    n = 1200
    rare = int(IMBALANCE * n / 2)
    X, _ = _data([0.5, 0.5], n=n)
    y = np.r_[np.zeros(n - rare, dtype=int), np.ones(rare, dtype=int)]
    search = KernelClassifierCV(**SMALL).fit(X, y)
    assert _stage(search)[0].outcome == "skipped"
    y = np.r_[np.zeros(n - rare + 40, dtype=int), np.ones(rare - 40, dtype=int)]
    search = KernelClassifierCV(**SMALL).fit(X, y)
    assert _stage(search)[0].outcome == "done"


def test_the_kernel_is_a_column_of_cv_results():
    X, y = _data([0.5, 0.5])
    search = KernelClassifierCV(**SMALL).fit(X, y)
    assert set(search.cv_results_["param_kernel"]) == {"rbf"}


def test_a_grid_shrunk_to_a_subsample_is_weighed_on_that_subsample(monkeypatch):
    # as when the time shrinks the grid: its scores on a subsample, none on every row
    from kernelscale.model_selection import _search, _stages

    rows = 1200

    def shrunk_grid(search, state, sched):
        _stages._new_unit_curve(state, "falkon", sched)
        with sched.stage("grid (falkon)") as run:
            notes = []
            _stages._subsample_grid(search, state, "falkon", state.space, rows, None, notes)
            run.note = "; ".join(notes)
    monkeypatch.setattr(_search, "grid", shrunk_grid)
    X, y = _data([0.94, 0.06], n=2400, seed=2)
    search = KernelClassifierCV(scoring="roc_auc", **SMALL).fit(X, y)
    (record,) = _stage(search)
    assert record.outcome == "done" and f"on {rows} rows" in record.note, record.note
    params = search.cv_results_["params"]
    balanced = [p for p in params if p.get("class_weight") == "balanced"]
    assert balanced and len(balanced) < len(params)
    # the refit on a subsample takes the winner of those records, with its weights
    means = search.cv_results_["mean_test_score"]
    winner = params[int(np.argmax(means))]
    assert search.best_estimator_.class_weight == winner["class_weight"]
