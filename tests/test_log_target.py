"""A regressor's target searched on its log (issue 62: tables as a user has them).

A price, a count or a run time spreads over orders of magnitude: its errors on the
largest values rule a fit on the target as given, and a smooth function of the columns
is often a smooth function of its log. The search tries the log as one more dimension of
its space, scores every line on the target as given, and keeps whichever scores higher.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.compose import TransformedTargetRegressor
from sklearn.metrics import r2_score

from kernelscale import KernelRegressorCV, load_model, save_model
from kernelscale.model_selection._cost import CostModel
from kernelscale.model_selection._evaluator import Evaluator
from kernelscale.model_selection._inputs import SearchData, SearchSettings, SearchSpace
from kernelscale.model_selection._records import Line
from kernelscale.model_selection._space import make_folds, wants_log_target


def _prices(n=600, seed=0):
    """A target over three orders of magnitude: exp of a smooth function of 3 columns."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    y = np.exp(1.5 * np.sin(1.5 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=n))
    return X, y


def _targets(search):
    """``param_target`` of each row of ``cv_results_`` (None: the target as given)."""
    column = search.cv_results_.get("param_target")
    if column is None:
        return [None] * len(search.cv_results_["params"])
    return [None if masked else value
            for value, masked in zip(column.data, np.ma.getmaskarray(column))]


def _search(**params):
    return KernelRegressorCV(gamma_factors=[0.5, 1.0, 2.0], n_components=80,
                             learn_widths=False, random_state=0, **params)


def test_a_target_over_orders_of_magnitude_is_searched_on_its_log_and_scored_as_given():
    X, y = _prices()
    search = _search().fit(X, y)
    targets = _targets(search)
    assert "log" in targets and None in targets  # both lines scored
    assert search.best_params_["target"] == "log"
    assert "log target tried" in search.family_choice_
    model = search.best_estimator_
    assert isinstance(model, TransformedTargetRegressor)
    # its folds' scores are R^2 on y as given: the configuration refitted on each fold
    # (its centres drawn from the fold's rows, not the grid's) scores about the same there,
    # and otherwise on log y
    folds = make_folds(5, X, y, None, None, 0)
    raw, logged = [], []
    for train, val in folds:
        fitted = clone(model).fit(X[train], y[train])
        raw.append(r2_score(y[val], fitted.predict(X[val])))
        logged.append(r2_score(np.log(y[val]), np.log(fitted.predict(X[val]))))
    assert abs(np.mean(raw) - search.best_score_) < 0.01
    assert abs(np.mean(logged) - search.best_score_) > 0.02
    # and it beats every line fitted on y as given
    as_given = [s for s, t in zip(search.cv_results_["mean_test_score"], targets) if t is None]
    assert search.best_score_ > max(as_given)


def test_a_log_lines_out_of_fold_predictions_are_kept_on_the_target_as_given():
    # the ensemble averages every line's out-of-fold predictions: a log line's must be on
    # the one target, or averaging them with the others' would be meaningless
    X, y = _prices(400)
    folds = make_folds(4, X, y, None, None, 0)
    space = SearchSpace([1.0], 1.0 / (X.shape[1] * X.var()), 40, alphas=[1e-3, 1e-1])
    settings = SearchSettings("r2", 2**28, 1e-3, 1, 0, None, float(len(y)))
    ev = Evaluator("regressor", SearchData(X, y, np.ones(len(y))), folds, space, settings,
                   CostModel(rates={"gemm": 1e-10, "eigh": 1e-9, "exp": 1e-9}), 0)
    records, complete = ev.grid(Line("falkon", target="log"), len(y), [1.0])
    assert complete and len(records) == 2
    for record in records:
        assert record.params["target"] == "log"
        np.testing.assert_allclose(ev.oof_scores(len(y), record.oof), record.scores,
                                   atol=1e-4)
        assert np.all(record.oof > 0)


def test_a_target_not_positive_narrow_or_not_skewed_is_searched_as_given():
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(300, 2))
    centred = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=300)
    for y in (centred, centred + 10.0):  # values below 0; positive but not skewed
        search = _search().fit(X, y)
        assert "target" not in search.best_params_
        assert all(t is None for t in _targets(search))
        assert "log target" not in search.family_choice_
    # skewed, but spanning less than an order of magnitude: the log is all but affine
    narrow = 1.0 + np.exp(0.5 * np.random.default_rng(2).normal(size=2000))
    assert narrow.max() < 10 * narrow.min()
    assert wants_log_target("auto", narrow) == (False, "")
    assert wants_log_target("auto", np.exp(2 * np.random.default_rng(2).normal(size=2000)))[0]
    X2, prices = _prices(300)
    assert "target" not in _search(log_target=False).fit(X2, prices).best_params_


def test_log_target_true_on_a_target_with_values_below_zero_is_one_clear_error():
    with pytest.raises(ValueError, match="log_target=True needs a positive target"):
        _search(log_target=True).fit(np.ones((20, 2)), np.linspace(-1, 1, 20))
    assert wants_log_target(True, np.linspace(1, 2, 50)) == \
        (True, "the log target tried (log_target=True)")
    assert wants_log_target(False, np.exp(np.linspace(0, 9, 50))) == (False, "")


def test_a_log_target_model_comes_back_from_its_file_predicting_the_same(tmp_path):
    X, y = _prices(300)
    search = _search().fit(X, y)
    assert search.best_params_["target"] == "log"
    path = tmp_path / "model.ksm"
    save_model(search, path)
    np.testing.assert_array_equal(load_model(path).predict(X), search.predict(X))
