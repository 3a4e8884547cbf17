"""The Nystrom SVM family of the model search: shared features, warm-started paths."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification
from sklearn.model_selection import StratifiedKFold

from kernelscale import ApproxKernelSVC, KernelClassifierCV
from kernelscale.feature_maps import Nystroem
from kernelscale.model_selection import CLASSIFIER_FAMILIES
from kernelscale.model_selection._features import nystrom_svm_grid


def _folds(X, y, k=5):
    return list(StratifiedKFold(k, shuffle=True, random_state=0).split(X, y))


@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_grid_equals_each_fold_fitted_from_scratch(n_classes, class_weight,
                                                   fold_svm_values):
    X, y = make_classification(240, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=n_classes, weights=None if n_classes > 2 else [0.7],
                               random_state=1)
    folds = _folds(X, y)
    classes, y_index = np.unique(y, return_inverse=True)
    got = {}
    records, complete = nystrom_svm_grid(
        X, y_index, classes, np.ones(240), folds, gamma_ref=0.2, factors=[0.5, 2.0],
        Cs=[10.0, 0.1, 1.0], n_components=40, class_weight=class_weight, random_state=7,
        score=lambda f, v: got.setdefault(len(got), (f, v)) and 0.0, memory_budget=2**26)
    assert complete and [r["C"] for r in records[:3]] == [0.1, 1.0, 10.0]
    assert all(len(r["scores"]) == 5 for r in records)
    for index, (f, values) in got.items():
        unit, within = divmod(index, 15)
        fold, c = divmod(within, 3)
        assert fold == f
        gamma, C = [0.1, 0.4][unit], [0.1, 1.0, 10.0][c]
        # cold fits on the fold's rows of the same map (the same landmarks: same draw)
        Z = Nystroem(n_components=40, gamma=gamma, decomposition="eigh", rcond=1e-12,
                     random_state=7, dtype="float64").fit(X).transform(X)
        train, val = folds[f]
        expected = fold_svm_values(Z, y, train, val, C, class_weight)
        # the reference is the exact minimiser; the warm path stops within its
        # relative gradient tolerance (1e-6) of it, on float32 features
        assert np.allclose(values, expected, atol=1e-4, rtol=1e-4)


def test_search_refits_the_searched_map_and_predicts_through_it():
    X, y = make_blobs(300, centers=3, cluster_std=3.0, random_state=0)
    search = KernelClassifierCV(families=["nystrom-svm", "falkon"], gamma_factors=[0.5, 2],
                                Cs=[0.3, 3], alphas=[1.0], n_components=30,
                                random_state=0).fit(X, y)
    assert len(search.cv_results_["params"]) == 6
    families = {p["family"] for p in search.cv_results_["params"]}
    assert families == {"nystrom-svm", "falkon"}
    nystrom = [i for i, p in enumerate(search.cv_results_["params"])
               if p["family"] == "nystrom-svm"]
    assert all(search.cv_results_["param_n_components"][i] == 30 for i in nystrom)
    assert np.ma.is_masked(search.cv_results_["param_alpha"][nystrom[0]])
    forced = KernelClassifierCV(families="nystrom-svm", gamma_factors=[1.0], Cs=[1.0],
                                n_components=30, random_state=0).fit(X, y)
    model = forced.best_estimator_
    assert isinstance(model, ApproxKernelSVC) and model.feature_map_.rank_ <= 30
    assert np.array_equal(forced.predict(X), model.predict(X))
    # the refit's landmarks are the ones the search drew (same rows, same seed)
    seed = model.random_state
    drawn = np.random.RandomState(seed).choice(300, 30, replace=False)
    assert np.array_equal(np.sort(model.feature_map_.component_indices_), np.sort(drawn))
    # scikit-learn's SVC() scores 0.62 in 5-fold CV on these overlapping blobs
    assert forced.best_score_ > 0.55 and search.best_score_ >= forced.best_score_ - 0.02


def test_family_is_listed_and_checked_by_name():
    assert "nystrom-svm" in CLASSIFIER_FAMILIES
    X, y = make_blobs(60, centers=2, random_state=0)
    with pytest.raises(ValueError, match="nystrom-svn"):
        KernelClassifierCV(families=["nystrom-svn"]).fit(X, y)


def test_memory_budget_too_small_says_what_would_fit():
    from kernelscale._planner import nystrom_svm_bytes

    X, y = make_blobs(400, centers=2, random_state=0)
    search = KernelClassifierCV(families="nystrom-svm", n_components=100,
                                memory_budget=nystrom_svm_bytes(400, 50))
    with pytest.raises(ValueError, match="n_components <= 50"):
        search.fit(X, y)
