"""Local models: ``LocalKernelRegressor`` (one model per leaf along one column). The
search's local models (a move of its searcher) are tested with the search
(``tests/test_search.py``)."""

import numpy as np
import pytest
from sklearn.pipeline import Pipeline

from kernelscale import (
    KernelWidths,
    LocalKernelRegressor,
    NystromKernelRidge,
    load_model,
    save_model,
)
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
