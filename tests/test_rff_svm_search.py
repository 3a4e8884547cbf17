"""The random-Fourier-feature SVM family of the model search: one projection for every
gamma, warm-started paths, and a refit that draws the searched features again."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification
from sklearn.model_selection import StratifiedKFold

from kernelscale import ApproxKernelSVC, KernelClassifierCV
from kernelscale.feature_maps import RandomFourierFeatures
from kernelscale.model_selection import CLASSIFIER_FAMILIES
from kernelscale.model_selection._features import rff_svm_grid


@pytest.mark.parametrize("n_classes", [2, 3])
def test_grid_equals_each_fold_fitted_from_scratch(n_classes, fold_svm_values):
    X, y = make_classification(240, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=n_classes, random_state=1)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    classes, y_index = np.unique(y, return_inverse=True)
    got = {}
    records, complete = rff_svm_grid(
        X, y_index, classes, np.ones(240), folds, gamma_ref=0.2, factors=[0.5, 2.0],
        Cs=[10.0, 0.1, 1.0], n_components=64, class_weight=None, random_state=7,
        score=lambda f, v: got.setdefault(len(got), (f, v)) and 0.0, memory_budget=2**26)
    assert complete and [r["C"] for r in records[:3]] == [0.1, 1.0, 10.0]
    assert {r["n_components"] for r in records} == {64}
    for index, (_f, values) in got.items():
        unit, within = divmod(index, 15)
        fold, c = divmod(within, 3)
        gamma, C = [0.1, 0.4][unit], [0.1, 1.0, 10.0][c]
        # the map the refit would draw (same seed), fitted on the fold from scratch
        Z = RandomFourierFeatures(n_components=64, gamma=gamma, random_state=7,
                                  dtype="float64").fit(X).transform(X)
        train, val = folds[fold]
        expected = fold_svm_values(Z, y, train, val, C)
        # float32 projections rescaled per gamma against the map's float64 ones
        assert np.allclose(values, expected, atol=2e-3, rtol=1e-3)


def test_search_refits_the_searched_features():
    X, y = make_blobs(300, centers=3, cluster_std=3.0, random_state=0)
    search = KernelClassifierCV(families=["rff-svm", "exact-svm"], gamma_factors=[0.5, 2],
                                Cs=[0.3, 3], n_components=100, random_state=0).fit(X, y)
    families = [p["family"] for p in search.cv_results_["params"]]
    assert families.count("rff-svm") == 4 and families.count("exact-svm") == 4
    forced = KernelClassifierCV(families="rff-svm", gamma_factors=[1.0], Cs=[1.0],
                                n_components=100, random_state=0).fit(X, y)
    model = forced.best_estimator_
    assert isinstance(model, ApproxKernelSVC)
    assert isinstance(model.feature_map_, RandomFourierFeatures)
    assert model.feature_map_.n_components_ == 100
    assert np.array_equal(forced.predict(X), model.predict(X))
    # the refit draws the frequencies the search used: W = sqrt(2 gamma) W0
    W0 = np.random.RandomState(model.random_state).standard_normal((2, 100))
    gamma = forced.best_params_["gamma"]
    assert np.allclose(model.feature_map_.random_weights_, np.sqrt(2 * gamma) * W0)
    assert forced.best_score_ > 0.55


def test_family_is_listed_and_refuses_a_budget_too_small():
    assert "rff-svm" in CLASSIFIER_FAMILIES
    X, y = make_blobs(200, centers=2, random_state=0)
    with pytest.raises(ValueError, match=r"rff-svm family's shared arrays .* n_components <= "):
        KernelClassifierCV(families="rff-svm", n_components=5000, memory_budget="1M").fit(X, y)
