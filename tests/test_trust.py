"""Regression tests for the trust defects (wrong results, silent quality loss), one per item.

The command-line items are in ``test_trust_cli.py``. Each test failed on the code
before its fix (the closing note of the issue says which were checked by reverting).
"""

from __future__ import annotations

import pickle
import re
import threading
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

import kernelscale
from kernelscale import (
    ApproxKernelKMeans,
    ApproxKernelPCA,
    ApproxKernelSVC,
    DoublySGDSVC,
    KernelLogisticRegression,
    KernelSVC,
    LinearSVC,
    Nystroem,
    NystromKernelRidge,
    NystromKernelRidgeClassifier,
    config_context,
    get_config,
)
from kernelscale.datasets import ArrayChunks
from kernelscale.solvers._cg import conjugate_gradient

X, y = make_classification(n_samples=400, n_features=6, n_informative=4, random_state=0)


# 1. ------------------------------------------------ DoublySGDSVC predict is thread-safe

def test_doubly_sgd_prediction_does_not_mutate_and_is_thread_safe():
    # wide blocks make the threads overlap (before the fix: 40 of 40 results wrong, by 2.0,
    # so three rounds of four threads are as sure to see it as ten)
    Xw, yw = make_classification(n_samples=600, n_features=100, n_informative=10,
                                 random_state=0)
    model = DoublySGDSVC(max_iter=300, block_size=64, random_state=0).fit(Xw, yw)
    expected = model.decision_function(Xw)
    for _ in range(3):
        loaded = pickle.loads(pickle.dumps(model))
        before = set(vars(loaded))
        results = [None] * 4

        def work(k, loaded=loaded, results=results):
            results[k] = loaded.decision_function(Xw)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in results:
            np.testing.assert_array_equal(r, expected)
        assert set(vars(loaded)) == before  # predict added nothing to the estimator
        np.testing.assert_array_equal(loaded.predict(Xw), model.predict(Xw))


# 2. ------------------------------------ FALKON refuses alpha <= 0; CG breakdown is said

def test_falkon_refuses_a_zero_penalty():
    with pytest.raises(ValueError, match="alpha=0"):
        NystromKernelRidge(alpha=0, kernel="linear", dtype="float64").fit(X, y.astype(float))


def test_conjugate_gradient_reports_breakdown_not_max_iter():
    A = np.diag([1.0, -1.0, 2.0])  # indefinite: CG cannot go on
    b = np.ones((3, 2))
    _, _, converged, breakdown = conjugate_gradient(lambda P: A @ P, b, max_iter=50, tol=1e-10)
    assert not converged and breakdown.all() and breakdown.max() <= 3
    from kernelscale.models.ridge._falkon_settings import convergence_message

    text = convergence_message({"breakdown": breakdown, "converged": False,
                                "residuals": [np.ones(2)]}, 50, 1e-10, np.float32, 1e-3)
    assert "broke down" in text and "max_iter" not in text and "float64" in text


# 3. ----------------------------- gamma="scale" on features of huge magnitude: no silence

GAMMA_SCALE_MODELS = [
    KernelSVC(),
    ApproxKernelSVC(n_components=100, random_state=0),
    ApproxKernelSVC(feature_map="rff", n_components=300, random_state=0),
    NystromKernelRidgeClassifier(n_components=100, random_state=0),
    DoublySGDSVC(max_iter=100, random_state=0),
    KernelLogisticRegression(n_components=100, random_state=0),
]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # scale, not fit
@pytest.mark.parametrize("model", GAMMA_SCALE_MODELS, ids=lambda m: type(m).__name__)
def test_gamma_scale_is_right_on_huge_features_and_refuses_absurd_ones(model):
    base = kernelscale.models.__dict__[type(model).__name__](**model.get_params())
    expected = base.fit(X, y).predict(X)
    huge = type(model)(**model.get_params()).fit(X * 1e20, y)
    predicted = huge.predict(X * 1e20)
    assert len(np.unique(predicted)) == 2  # not one class
    assert np.mean(predicted == expected) >= 0.97
    with pytest.raises(ValueError, match="gamma='scale'"):
        type(model)(**model.get_params()).fit(X * 1e200, y)


@pytest.mark.parametrize("model", [
    KernelSVC(kernel="poly", degree=40, gamma=50.0, coef0=10.0),
    KernelSVC(kernel="linear"),
    NystromKernelRidgeClassifier(kernel="poly", degree=40, gamma=50.0, n_components=20),
], ids=["KernelSVC-poly", "KernelSVC-linear", "FALKON-poly"])
def test_an_overflowing_kernel_is_refused_not_fitted_to_one_class(model):
    data = X * 1e20 if model.kernel == "linear" else X  # ||x||^2 = 1e40 > float32's max
    with pytest.raises(ValueError, match="overflows float32"):
        model.fit(data, y)


def test_a_non_finite_fit_is_refused():
    from kernelscale._validation import check_finite_fit

    class Fitted:
        coef_ = np.array([[1.0, np.nan]])

    with pytest.raises(ValueError, match="coef_ is not finite"):
        check_finite_fit(Fitted(), "coef_")


# 4. ---------------------------------------------------- float64 FALKON is float64

@pytest.mark.parametrize("input_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_falkon_float64_equals_kernel_ridge_at_m_equals_n(input_dtype, kernel):
    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(500, 5)).astype(input_dtype)
    yr = np.sign(np.sin(2 * Xr[:, 0]) + 0.5 * Xr[:, 1])
    Xt = rng.normal(size=(100, 5)).astype(input_dtype)
    for alpha in (1e-1, 1e-3):
        ref = KernelRidge(alpha=alpha, kernel=kernel, gamma=0.1).fit(
            Xr.astype(np.float64), yr).predict(Xt.astype(np.float64))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no max_iter warning
            ours = NystromKernelRidge(n_components=500, alpha=alpha, kernel=kernel, gamma=0.1,
                                      dtype="float64", tol=1e-12, max_iter=300,
                                      random_state=0).fit(Xr, yr)
        np.testing.assert_allclose(ours.predict(Xt), ref, atol=1e-8)


# 5. -------------------------------------------- one polynomial kernel everywhere

def test_polynomial_defaults_are_scikit_learns_svc_defaults_everywhere():
    import inspect

    from kernelscale import kernels
    from kernelscale.cli import build_parser

    checked = 0
    for name in kernelscale.__all__:
        obj = getattr(kernelscale, name)
        if isinstance(obj, type) and hasattr(obj, "get_params") \
                and "coef0" in inspect.signature(obj).parameters:
            params = obj().get_params()
            assert (params["degree"], params["coef0"]) == (3, 0.0), name
            checked += 1
    assert checked >= 10
    for func in (kernels.pairwise_kernel, kernels.polynomial_kernel, kernels.kernel_diagonal,
                 kernels.iter_kernel_blocks, kernels.make_kernel):
        parameters = inspect.signature(func).parameters
        assert (parameters["degree"].default, parameters["coef0"].default) == (3, 0.0)
    assert (kernels.Polynomial().degree, kernels.Polynomial().coef0) == (3, 0.0)
    approx = build_parser().parse_args(["approx"])
    assert (approx.degree, approx.coef0) == (3, 0.0)


# 6. ---------------------------------------------- Nystroem: rank, error, warning

@pytest.mark.parametrize("d, gamma", [(2, 1.0), (3, 0.5), (3, 2.0), (5, 0.2), (10, 0.05)])
def test_nystroem_error_is_at_most_scikit_learns_on_low_dimensional_data(d, gamma):
    rng = np.random.default_rng(d)
    Xd, Xt = rng.normal(size=(3000, d)), rng.normal(size=(600, d))
    K = rbf_kernel(Xt, gamma=gamma)

    def error(Z):
        return np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)

    ref = error(SkNystroem(gamma=gamma, n_components=500, random_state=0).fit(Xd).transform(Xt))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rank warning, tested below
        ours = Nystroem(n_components=500, gamma=gamma, random_state=0).fit(Xd)
    assert ours.transform(Xt).dtype == np.float32
    assert error(ours.transform(Xt).astype(np.float64)) <= ref * (1 + 1e-3)


def test_nystroem_says_when_it_returns_fewer_features_than_asked():
    Xd = np.random.default_rng(0).normal(size=(4000, 3))
    with pytest.warns(UserWarning, match="span only .* independent directions") as caught:
        ny = Nystroem(n_components=1000, gamma=0.5, random_state=0).fit(Xd)
    assert ny.rank_ < 1000 and f"map has {ny.rank_} features" in str(caught[0].message)
    assert "most accurate at equal" not in Nystroem.__doc__.split("leverage")[1][:200]


def test_uniform_landmarks_are_distinct_rows():
    Xd = np.repeat(np.random.default_rng(0).normal(size=(150, 4)), 4, axis=0)  # 4 copies each
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ny = Nystroem(n_components=100, gamma=0.1, random_state=0).fit(Xd)
    assert ny.rank_ == 100 and len(np.unique(ny.components_, axis=0)) == 100


# 7. ---------------------------------------- the memory budget follows the machine

def test_default_budget_follows_the_machine_and_strings_are_accepted():
    from kernelscale._config import machine_memory_budget

    assert get_config()["memory_budget"] == machine_memory_budget() >= 256 * 2**20
    with config_context(memory_budget="1.5G"):
        assert get_config()["memory_budget"] == 3 * 2**29
    # a size string is a budget the fit keeps: K(X, C) of 3,000 x 200 (2.4 MB) is
    # recomputed under "1M", and the peak stays under it
    Xb, yb = make_classification(n_samples=3000, n_features=6, random_state=0)
    from conftest import PeakMemory


    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the recomputation notice
        NystromKernelRidgeClassifier(n_components=20, max_iter=2).fit(Xb[:100], yb[:100])
        with PeakMemory() as meter:
            model = NystromKernelRidgeClassifier(n_components=200, memory_budget="1M",
                                                 random_state=0).fit(Xb, yb)
    assert model.memory_plan_.choice == "recomputed" and model.memory_plan_.budget == 2**20
    assert meter.peak <= 2**20 + 2**20  # the budget and the planner's slack
    assert model.score(Xb, yb) > 0.8


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # max_iter=5
def test_falkon_says_when_the_budget_lowers_auto_centres_or_forces_recomputation():
    Xb, yb = make_classification(n_samples=3000, n_features=5, random_state=0)
    with pytest.warns(UserWarning) as caught:
        NystromKernelRidgeClassifier(memory_budget=3000 * 1200 * 4, max_iter=5,
                                     random_state=0).fit(Xb, yb)
    said = [str(w.message) for w in caught]
    # the floor of 1000 centres does not fit K(X, C) either: both are said
    assert any(re.search(r"uses \d+ centres .* memory_budget >= ", m) for m in said)
    assert any("recomputed at each of the" in m for m in said)
    with pytest.warns(UserWarning, match="recomputed at each of the .* memory_budget >= "):
        NystromKernelRidgeClassifier(n_components=500, memory_budget=2**21, max_iter=5,
                                     random_state=0).fit(Xb, yb)


# 8. -------------------------------- a stream that fits the budget is read once

class _Counting(ArrayChunks):
    passes = 0
    rereads = None  # the row source says whether each pass re-reads the data

    def _chunks(self):
        type(self).passes += 1
        yield from super()._chunks()


@pytest.mark.parametrize("budget, reads_once", [(None, True), (20_000, False)])
def test_streamed_falkon_reads_the_data_once_when_they_fit(budget, reads_once):
    _Counting.passes = 0
    data = _Counting(X, y, chunk_rows=100)
    model = NystromKernelRidgeClassifier(n_components=50, random_state=0,
                                         memory_budget=budget).fit(data)
    assert (_Counting.passes == 1) == reads_once, _Counting.passes
    assert data.rereads is (not reads_once)
    assert model.score(X, y) > 0.8


# 9. ---------------------------------------------- warnings give true advice

def test_convergence_advice_matches_the_parameters():
    Xw, yw = make_classification(n_samples=400, n_features=30, random_state=0)
    with pytest.warns(Warning) as caught:
        LinearSVC(max_iter=1).fit(Xw, yw)  # squared hinge; auto picks dual CD here
    text = str(caught[0].message)
    assert "loss='squared_hinge'" in text and "use loss='squared_hinge'" not in text
    with pytest.warns(Warning) as caught:
        LinearSVC(loss="hinge", max_iter=1).fit(Xw, yw)
    assert "use loss='squared_hinge'" in str(caught[0].message)


# 17-19. ------------------------------------------ scikit-learn conformance

def test_linear_kernel_svc_has_coef_like_svc():
    ours = KernelSVC(kernel="linear", tol=1e-6).fit(X, y)
    theirs = SVC(kernel="linear", tol=1e-6).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-4)
    assert not hasattr(KernelSVC().fit(X, y), "coef_")


@pytest.mark.parametrize("model", [ApproxKernelPCA(n_components=3, map_components=50),
                                   ApproxKernelKMeans(n_clusters=3, n_components=50)])
def test_unsupervised_models_name_their_output_features(model):
    names = model.fit(X).get_feature_names_out()
    width = model.transform(X[:2]).shape[1]
    assert len(names) == width and names[0] == f"{type(model).__name__.lower()}0"


def test_hard_margin_is_accepted_where_scikit_learn_accepts_it():
    Xs, ys = make_blobs(200, centers=2, random_state=0, cluster_std=0.6)
    ours = KernelSVC(C=np.inf, kernel="linear", tol=1e-6).fit(Xs, ys)
    theirs = SVC(C=np.inf, kernel="linear", tol=1e-6).fit(Xs, ys)
    np.testing.assert_allclose(ours.decision_function(Xs), theirs.decision_function(Xs),
                               atol=1e-4)
    KernelLogisticRegression(C=np.inf, n_components=20, max_iter=50).fit(Xs, ys)
    with pytest.raises(ValueError, match="C=inf is not valid"):  # as LinearSVC
        LinearSVC(C=np.inf).fit(Xs, ys)


NEGATIVE_WEIGHT_MODELS = [
    KernelSVC(), LinearSVC(), ApproxKernelSVC(n_components=20),
    NystromKernelRidgeClassifier(n_components=20), DoublySGDSVC(max_iter=5),
    KernelLogisticRegression(n_components=20),
    kernelscale.ApproxKernelRidgeClassifier(n_components=20),
]


@pytest.mark.parametrize("model", NEGATIVE_WEIGHT_MODELS, ids=lambda m: type(m).__name__)
def test_negative_sample_weights_are_refused_with_the_reason(model):
    weights = np.ones(len(y))
    weights[:3] = -1.0
    with pytest.raises(ValueError, match="3 negative entries; weights must be >= 0"):
        model.fit(X, y, sample_weight=weights)


# 25. ------------------------------------------ benchmark reports record the load

def test_bench_report_states_the_load_and_warns_when_busy(tmp_path):
    from kernelscale.bench import load_warning, machine_load

    load = machine_load()
    assert load["cores"] >= 1
    busy = {"load": {"before": 5.0, "after": 4.0, "cores": 2}}
    idle = {"load": {"before": 0.5, "after": 0.7, "cores": 2}}
    assert "busy" in load_warning(busy) and load_warning(idle) is None
