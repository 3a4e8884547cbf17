"""The search's kernel stage: RBF or the Laplacian kernel for FALKON, chosen on held-out
rows, and the refit on the raw columns with the kernel that was scored."""

from types import SimpleNamespace

import numpy as np
import pytest

from kernelscale import KernelClassifierCV, KernelRegressorCV, NystromKernelRidge
from kernelscale.kernels import RBF, Laplacian, Metric
from kernelscale.model_selection._first_model import raw_params
from kernelscale.model_selection._kernel_stage import laplacian_gamma_ref
from kernelscale.persistence import load_model, save_model

SMALL = dict(families="falkon", n_components=150, cv=3, gamma_factors=[0.25, 1.0, 4.0],
             random_state=0)


def _steps(n, seed):
    """A target of steps in discrete-valued columns (the Laplacian's kind of table)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, 4)).astype(float) + rng.uniform(-0.3, 0.3, (n, 4))
    y = (2 * np.floor(X[:, 0]) + 3 * (X[:, 1] > 2.5) + np.floor(np.abs(X[:, 2])) ** 1.5
         - (X[:, 3] > 3.5))
    return X, y


def _smooth(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n)


def _stage(search):
    return next(r for r in search.stages_ if r.stage == "kernel")


def test_laplacian_reference_is_one_over_the_mean_l1_distance():
    X = np.array([[0.0, 0.0], [1.0, 2.0]])
    # pairs are drawn with replacement: half the pairs are a row with itself on average
    ref = laplacian_gamma_ref(X, 0)
    rng = np.random.RandomState(0)
    first, second = rng.randint(0, 2, 4000), rng.randint(0, 2, 4000)
    assert ref == pytest.approx(1.0 / (3.0 * np.mean(first != second)))
    assert laplacian_gamma_ref(np.ones((5, 3)), 0) == 1.0  # equal rows: no division by 0


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("learned", ["widths", "metric"])
def test_raw_parameters_are_the_searched_kernel_on_the_raw_columns(kernel, learned):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    gamma = 0.7
    if learned == "widths":
        widths = np.array([0.5, 2.0, 0.1])
        search = SimpleNamespace(widths_=SimpleNamespace(gamma_=widths), kernel_metric_=None)
        searched = X * np.sqrt(widths)
    else:
        L = rng.normal(size=(3, 2))
        search = SimpleNamespace(widths_=None,
                                 kernel_metric_=SimpleNamespace(metric_=Metric(factor=L)))
        searched = X @ L
    cls = RBF if kernel == "rbf" else Laplacian
    params = raw_params(search, {"family": "falkon", "kernel": kernel, "gamma": gamma})
    on_raw = cls(params["gamma"]).gram(X, dtype=np.float64)
    assert np.allclose(on_raw, cls(gamma).gram(searched, dtype=np.float64), atol=1e-12)


def test_the_search_keeps_the_laplacian_where_it_scores_higher(tmp_path):
    X, y = _steps(1200, 1)
    search = KernelRegressorCV(**SMALL).fit(X, y)
    note = _stage(search).note
    assert "kept laplacian" in note, note
    assert search.best_params_["kernel"] == "laplacian"
    assert search.best_estimator_.kernel == "laplacian"
    assert "the laplacian kernel" in search.family_choice_
    # the refit is the model scored: the same parameters fitted from scratch
    params = {k: v for k, v in search.best_estimator_.get_params().items()}
    again = NystromKernelRidge(**params).fit(X, y)
    X_test, _ = _steps(200, 2)
    assert np.allclose(again.predict(X_test), search.predict(X_test))
    # a model file keeps the kernel and its per-feature gamma
    save_model(search.best_estimator_, tmp_path / "laplacian.ksm")
    loaded = load_model(tmp_path / "laplacian.ksm")
    assert loaded.kernel == "laplacian"
    assert np.array_equal(loaded.predict(X_test), search.predict(X_test))


def test_the_search_keeps_rbf_on_a_smooth_target():
    X, y = _smooth(1200, 1)
    search = KernelRegressorCV(**SMALL).fit(X, y)
    assert "kept rbf" in _stage(search).note
    assert search.best_params_["kernel"] == "rbf"
    assert search.best_estimator_.kernel == "rbf"


def test_the_stage_runs_for_the_falkon_family_alone():
    X, y = _smooth(300, 1)
    search = KernelClassifierCV(families="exact-svm", cv=3, gamma_factors=[1.0], Cs=[1.0],
                                random_state=0).fit(X, y > np.median(y))
    assert _stage(search).outcome == "skipped"
    assert "FALKON family alone" in _stage(search).note


def test_a_tight_budget_skips_the_stage_with_its_price():
    X, y = _steps(40_000, 1)
    search = KernelRegressorCV(families="falkon", time_budget=3, random_state=0).fit(X, y)
    stage = _stage(search)
    assert stage.outcome == "skipped"
    assert "skipped for time" in stage.note or "not needed" in stage.note


def test_a_rare_class_keeps_rbf_without_ranking_kernels_on_a_few_rows():
    X, y = _smooth(1500, 1)
    rare = y > np.quantile(y, 0.97)  # 45 rows of the rare class, ~15 held out
    search = KernelClassifierCV(**SMALL, alphas=[1.0, 10.0]).fit(X, rare)
    stage = _stage(search)
    assert stage.outcome == "skipped" and "of the rarest class" in stage.note
    assert search.best_params_["kernel"] == "rbf"


def test_a_classifier_with_enough_rows_of_each_class_ranks_the_kernels():
    X, y = _steps(1200, 1)
    search = KernelClassifierCV(**SMALL).fit(X, y > np.median(y))
    stage = _stage(search)
    assert stage.outcome == "done" and "kept" in stage.note
    assert search.best_params_["kernel"] in ("rbf", "laplacian")
    assert search.best_estimator_.kernel == search.best_params_["kernel"]


def test_where_no_subsample_fits_every_gamma_the_middle_gammas_are_compared(monkeypatch):
    from kernelscale.model_selection import _kernel_stage

    X, y = _steps(1200, 1)
    factors = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    # every gamma of both kernels priced at 14 x 1 s, 2 gammas at 4 x 1 s; the stage's
    # grant at a 60 s budget is 9 s, of which SIZED_SHARE (0.6) sizes it: 5.4 s
    monkeypatch.setattr(_kernel_stage, "predicted_unit", lambda state, rows: 1.0)
    search = KernelRegressorCV(**{**SMALL, "gamma_factors": factors, "time_budget": 60}).fit(
        X, y)
    note = _stage(search).note
    assert "the middle 2 gammas" in note and "(2 configurations" not in note, note
    assert "kept laplacian" in note
    # each kernel's grid: 2 gammas x the alphas
    n_alphas = len(search.cv_results_["params"]) // len(factors)
    assert f"({2 * n_alphas} configurations" in note
    # priced out even at 2 gammas: skipped with its price
    monkeypatch.setattr(_kernel_stage, "predicted_unit", lambda state, rows: 2.0)
    search = KernelRegressorCV(**{**SMALL, "gamma_factors": factors, "time_budget": 60}).fit(
        X, y)
    assert "skipped for time" in _stage(search).note
