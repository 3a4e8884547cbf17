"""``kernelscale.patch_sklearn()``: scikit-learn's classes, kernelscale's fits.

The patched classes must keep scikit-learn's names, signatures and fitted attributes,
give scikit-learn's models (to SMO's tolerance), say where each fit ran, fall back with
one logged line, and ``unpatch_sklearn`` must put back the very objects it replaced.
"""

from __future__ import annotations

import importlib
import inspect
import logging

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, make_classification, make_regression

import kernelscale
from kernelscale import patch
from kernelscale.patch import _libsvm

pytestmark = [
    # scikit-learn's code warns of LIBLINEAR's iterations and of probability's deprecation
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    pytest.mark.filterwarnings("ignore:Attribute `probA_`:FutureWarning"),
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
]

ROUTED = {name: modules for name, (modules, _) in patch._routing.ROUTES.items()}


@pytest.fixture
def originals():
    """scikit-learn's own classes, captured before any patch."""
    kernelscale.unpatch_sklearn()
    found = {name: importlib.import_module(modules[0]).__dict__[name]
             for name, modules in ROUTED.items()}
    yield found
    kernelscale.unpatch_sklearn()


@pytest.fixture
def patched(originals):
    kernelscale.patch_sklearn()
    patch.reset_fit_counts()
    yield originals
    kernelscale.unpatch_sklearn()


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


def _routed(name):
    return getattr(importlib.import_module(ROUTED[name][0]), name)


def test_unpatch_restores_the_very_objects(originals):
    kernelscale.patch_sklearn()
    assert kernelscale.sklearn_is_patched()
    for name, modules in ROUTED.items():
        for module in modules:
            assert getattr(importlib.import_module(module), name) is not originals[name]
    kernelscale.unpatch_sklearn()
    assert not kernelscale.sklearn_is_patched()
    for name, modules in ROUTED.items():
        for module in modules:
            assert getattr(importlib.import_module(module), name) is originals[name]


def test_patching_twice_and_one_name(originals):
    kernelscale.patch_sklearn("SVC")
    kernelscale.patch_sklearn("SVC")
    assert kernelscale.sklearn_is_patched("SVC")
    assert kernelscale.sklearn_is_patched(return_map=True)["SVR"] is False
    kernelscale.unpatch_sklearn("SVC")
    assert importlib.import_module("sklearn.svm").SVC is originals["SVC"]
    with pytest.raises(ValueError, match="does not patch"):
        kernelscale.patch_sklearn("GaussianProcessClassifier")


def test_context_manager(originals):
    import sklearn.svm

    with kernelscale.sklearn_patched("SVC"):
        assert sklearn.svm.SVC is not originals["SVC"]
    assert sklearn.svm.SVC is originals["SVC"]


@pytest.mark.parametrize("name", list(ROUTED))
def test_patched_classes_keep_scikit_learns_face(patched, name):
    ours, theirs = _routed(name), patched[name]
    assert ours.__name__ == theirs.__name__ and issubclass(ours, theirs)
    assert inspect.signature(ours) == inspect.signature(theirs)
    assert ours().get_params() == theirs().get_params()


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly", "sigmoid", "precomputed"])
@pytest.mark.parametrize("binary", [False, True])
def test_svc_is_scikit_learns_model(patched, iris, kernel, binary):
    X, y = iris
    if binary:
        y = (y > 0).astype(int)
    X_fit = X @ X.T if kernel == "precomputed" else X
    ours = _routed("SVC")(kernel=kernel).fit(X_fit, y)
    theirs = patched["SVC"](kernel=kernel).fit(X_fit, y)
    assert patch.fit_counts()["SVC"] == {"kernelscale": 1, "scikit-learn": 0}
    np.testing.assert_array_equal(ours.predict(X_fit), theirs.predict(X_fit))
    np.testing.assert_allclose(ours.decision_function(X_fit), theirs.decision_function(X_fit),
                               atol=2e-3 * np.abs(theirs.decision_function(X_fit)).max())
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    assert ours.support_.dtype == theirs.support_.dtype == np.int32
    assert ours.dual_coef_.shape == theirs.dual_coef_.shape
    assert ours.support_vectors_.shape == theirs.support_vectors_.shape


def test_svc_decision_function_is_float64_exact(patched, iris):
    """scikit-learn's own prediction reads the stored model: the 1e-6 its tests ask."""
    X, y = iris
    clf = _routed("SVC")(kernel="linear").fit(X, y)
    manual = X @ clf.coef_.T + clf.intercept_
    ovo = _routed("SVC")(kernel="linear", decision_function_shape="ovo").fit(X, y)
    np.testing.assert_allclose(ovo.decision_function(X), manual, rtol=1e-10, atol=1e-10)
    assert clf.coef_.shape == (3, 4)


def test_break_ties_and_probability(patched, iris):
    X, y = iris
    clf = _routed("SVC")(break_ties=True).fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(clf.decision_function(X), 1))
    with pytest.warns(FutureWarning):
        prob = _routed("SVC")(probability=True, random_state=0).fit(X, y)
    with pytest.warns(FutureWarning):
        ref = patched["SVC"](probability=True, random_state=0).fit(X, y)
    np.testing.assert_allclose(prob.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_allclose(prob.predict_proba(X), ref.predict_proba(X), atol=0.05)
    assert prob.probA_.shape == ref.probA_.shape == (3,)


def test_sparse_fit_keeps_sparse_attributes_and_the_dense_model(patched, iris):
    X, y = iris
    # a float gamma: "scale" is computed by two formulas on dense and sparse X
    dense = _routed("SVC")(gamma=0.5).fit(X, y)
    sparse = _routed("SVC")(gamma=0.5).fit(sp.csr_matrix(X), y)
    assert sp.issparse(sparse.support_vectors_) and sp.issparse(sparse.dual_coef_)
    np.testing.assert_array_equal(dense.dual_coef_, sparse.dual_coef_.toarray())
    np.testing.assert_array_equal(dense.support_vectors_, sparse.support_vectors_.toarray())
    lin = _routed("SVC")(kernel="linear").fit(sp.csr_matrix(X), y)
    assert sp.issparse(lin.coef_)


def test_svr_and_one_class_are_scikit_learns(patched, iris):
    X, _ = iris
    target = X[:, 0] * 2.0 - X[:, 2]
    ours = _routed("SVR")(C=3.0, epsilon=0.05).fit(X, target)
    theirs = patched["SVR"](C=3.0, epsilon=0.05).fit(X, target)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-3)
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    assert isinstance(ours.n_iter_, int)
    oc = _routed("OneClassSVM")(nu=0.2, gamma=0.5).fit(X)
    ref = patched["OneClassSVM"](nu=0.2, gamma=0.5).fit(X)
    np.testing.assert_allclose(oc.decision_function(X), ref.decision_function(X), atol=1e-3)
    np.testing.assert_allclose(oc.offset_, ref.offset_, atol=1e-3)
    counts = patch.fit_counts()
    assert counts["SVR"]["kernelscale"] == 1 and counts["OneClassSVM"]["kernelscale"] == 1


def test_large_problems_take_kernelscales_own_estimators(patched, monkeypatch):
    """Past the float64 matrix, the native float32 fit, converted to LIBSVM's layout."""
    monkeypatch.setattr(_libsvm, "FLOAT64_MATRIX_BYTES", 8 * 100**2)
    X, y = make_classification(400, 6, n_informative=4, n_classes=3, random_state=0)
    for labels in (y, (y > 0).astype(int)):
        ours = _routed("SVC")(C=2.0).fit(X, labels)
        theirs = patched["SVC"](C=2.0).fit(X, labels)
        assert (ours.predict(X) == theirs.predict(X)).mean() > 0.99
        np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                                   atol=0.02)
    Xr, yr = make_regression(300, 5, noise=0.1, random_state=0)
    ours = _routed("SVR")(C=100.0).fit(Xr, yr / 50)
    theirs = patched["SVR"](C=100.0).fit(Xr, yr / 50)
    np.testing.assert_allclose(ours.predict(Xr), theirs.predict(Xr), atol=0.01)


def test_sample_weights_as_libsvm_treats_them(patched, iris):
    X, y = iris
    weights = np.where(np.arange(150) % 3 == 0, -1.0, 1.0)
    ours = _routed("SVC")(kernel="linear").fit(X, y, sample_weight=weights)
    theirs = patched["SVC"](kernel="linear").fit(X, y, sample_weight=weights)
    # scikit-learn counts support_ within the rows of positive weight (LIBSVM's problem)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_array_equal(ours.support_vectors_, theirs.support_vectors_)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-3)
    with pytest.raises(ValueError, match="all samples have zero or negative weights"):
        _routed("SVC")().fit(X, y, sample_weight=np.zeros(150))
    one_class = np.where(y == 0, 1.0, 0.0)
    with pytest.raises(ValueError, match="belong to the same class"):
        _routed("SVC")().fit(X, y, sample_weight=one_class)


def test_huge_values_raise_as_scikit_learn_does(patched):
    X = np.finfo(np.float64).max * np.random.RandomState(0).uniform(size=(10, 2))
    with pytest.raises(ValueError, match="not finite"):
        _routed("SVC")().fit(X, np.arange(10) % 2)


def test_fallback_logs_one_line_and_verbose_prints(patched, iris, caplog, capsys):
    X, y = iris
    with caplog.at_level(logging.INFO, logger="kernelscale"):
        weights = np.ones(len(y))
        weights[0] = -1.0
        _routed("LinearSVC")().fit(X, y, sample_weight=weights)
    lines = [r.getMessage() for r in caplog.records if r.name == "kernelscale"]
    assert len(lines) == 1 and "negative sample weights" in lines[0]
    kernelscale.patch_sklearn(verbose=True)
    _routed("SVC")().fit(X, y)
    assert "[kernelscale] SVC.fit: kernelscale (float64 kernel matrix, one thread, 150 rows)" \
        in \
        capsys.readouterr().out


def test_linear_svc_is_liblinears_model(patched):
    X, y = make_classification(600, 10, n_informative=6, n_classes=3, random_state=0)
    for params in ({}, {"dual": True, "max_iter": 5000}, {"loss": "hinge", "max_iter": 5000},
                   {"fit_intercept": False}):
        ours = _routed("LinearSVC")(random_state=0, **params).fit(X, y)
        theirs = patched["LinearSVC"](random_state=0, **params).fit(X, y)
        assert (ours.predict(X) == theirs.predict(X)).mean() > 0.98
        np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=0.02)
    assert patch.fit_counts()["LinearSVC"]["kernelscale"] == 4


def test_kernel_approximations_are_scikit_learns_features(patched, iris):
    X, _ = iris
    for name, params in [("RBFSampler", {"gamma": 0.3, "n_components": 50}),
                         ("PolynomialCountSketch", {"n_components": 64, "coef0": 1.0}),
                         ("PolynomialCountSketch", {"n_components": 64}),
                         ("Nystroem", {"n_components": 30, "kernel": "rbf"}),
                         ("Nystroem", {"n_components": 30, "kernel": "poly"})]:
        ours = _routed(name)(random_state=0, **params).fit(X)
        theirs = patched[name](random_state=0, **params).fit(X)
        np.testing.assert_allclose(ours.transform(X), theirs.transform(X), rtol=1e-6,
                                   atol=1e-8)
        np.testing.assert_allclose(ours.transform(sp.csr_matrix(X)), theirs.transform(X),
                                   rtol=1e-6, atol=1e-8)
        assert ours.transform(X.astype(np.float32)).dtype == \
            theirs.transform(X.astype(np.float32)).dtype
    counts = patch.fit_counts()
    assert counts["Nystroem"]["scikit-learn"] == 0 and counts["RBFSampler"]["kernelscale"]


@pytest.mark.parametrize("kernel", ["linear", "rbf", "laplacian", "poly", "sigmoid"])
def test_kernel_ridge_is_scikit_learns(patched, kernel):
    X, y = make_regression(120, 4, noise=0.1, random_state=0)
    X /= 4
    ours = _routed("KernelRidge")(kernel=kernel, alpha=0.5).fit(X, y)
    theirs = patched["KernelRidge"](kernel=kernel, alpha=0.5).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-7, atol=1e-8)
    assert patch.fit_counts()["KernelRidge"] == {"kernelscale": 1, "scikit-learn": 0}


@pytest.mark.slow
def test_scikit_learns_own_tests_pass_with_the_patch(tmp_path):
    """scikit-learn's test modules with the patch on: >= 95% each, the rest listed."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "sklearn_tests.py"
    out = subprocess.run([sys.executable, str(script), "--check", "--out",
                          str(tmp_path / "sklearn_tests.json")],
                         capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]


@pytest.mark.parametrize("params", [{"penalty": "l1", "dual": False},
                                    {"multi_class": "crammer_singer"},
                                    {"penalty": "l1", "dual": False, "fit_intercept": False},
                                    {"multi_class": "crammer_singer", "class_weight": "balanced"}])
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_svc_l1_and_crammer_singer_run_on_kernelscale_as_liblinear(params, sparse):
    """LIBLINEAR's L1 coordinate descent and Crammer-Singer dual, re-implemented: the same
    optimum as scikit-learn's LIBLINEAR (objectives within 1e-3 relative; same predictions
    on 99% of the rows), run by kernelscale (no fallback)."""
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC as Original

    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    X = sp.csr_matrix(X) if sparse else X
    want = Original(tol=1e-6, max_iter=20_000, random_state=0, **params).fit(X, y)
    with kernelscale.sklearn_patched():
        from sklearn.svm import LinearSVC

        patch.reset_fit_counts()
        got = LinearSVC(tol=1e-6, max_iter=20_000, random_state=0, **params).fit(X, y)
        assert patch.fit_counts()["LinearSVC"] == {"kernelscale": 1, "scikit-learn": 0}

    def objective(model):
        W = np.c_[model.coef_, model.intercept_] if model.fit_intercept else model.coef_
        scores = X @ model.coef_.T + model.intercept_
        if params.get("penalty") == "l1":
            margins = np.where(y[:, None] == np.arange(3), 1.0, -1.0) * scores
            return np.abs(W).sum() + np.sum(np.maximum(0, 1 - margins) ** 2)
        truth = scores[np.arange(len(y)), y]
        hinge = np.max(scores + (np.arange(3) != y[:, None]) - truth[:, None], axis=1)
        weight = np.bincount(y)[y] if params.get("class_weight") else np.ones(len(y))
        return 0.5 * np.sum(W ** 2) + np.sum(hinge * len(y) / (3 * weight))

    assert objective(got) <= objective(want) * (1 + 1e-3)
    assert np.mean(got.predict(X) == want.predict(X)) >= 0.99
    assert got.coef_.shape == want.coef_.shape and got.n_iter_ > 0
    if params.get("penalty") == "l1":
        assert np.sum(got.coef_ == 0) >= 1  # L1 leaves some weights at zero


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly", "sigmoid"])
@pytest.mark.parametrize("sparse", [False, True])
def test_prediction_is_libsvms_on_the_same_model(patched, iris, kernel, sparse):
    """``predict`` / ``decision_function`` computed by kernelscale's kernels in blocks
    give LIBSVM's values (1e-9 relative) and its predictions wherever a value is not a
    rounding's width from 0 (a tie LIBSVM's summation order would break its own way)."""
    from sklearn.svm._base import BaseLibSVM

    X, y = iris
    X = sp.csr_matrix(X) if sparse else X
    models = [_routed("SVC")(kernel=kernel).fit(X, y),
              _routed("SVC")(kernel=kernel).fit(X, (y == 1).astype(int)),
              _routed("SVR")(kernel=kernel).fit(X, iris[0][:, 0]),
              _routed("OneClassSVM")(kernel=kernel, gamma=0.1).fit(X)]
    kind = "_sparse" if sparse else "_dense"
    for model in models:
        rows = model._validate_for_predict(X)
        ours = getattr(model, kind + "_decision_function")(rows)
        theirs = getattr(BaseLibSVM, kind + "_decision_function")(model, rows)
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9 * np.abs(theirs).max())
        labels = getattr(model, kind + "_predict")(rows)
        want = getattr(BaseLibSVM, kind + "_predict")(model, rows)
        clear = np.abs(theirs).min(axis=1) > 1e-9
        np.testing.assert_allclose(labels[clear], want[clear], rtol=1e-9)


def test_prediction_holds_its_kernel_blocks_within_the_memory_budget(patched, peak_memory):
    """``predict`` computes K(X, SV) in blocks the planner sizes: its peak stays within the
    budget and what it returns, where the whole (20,000 x n_SV) float64 block is ~100x the
    budget."""
    from kernelscale import config_context
    from kernelscale._planner import SLACK_BYTES

    X, y = make_classification(3000, 10, flip_y=0.2, random_state=0)
    model = _routed("SVC")().fit(X, y)
    X_test = np.random.default_rng(0).standard_normal((20_000, 10))
    budget = 2 * 2**20
    whole = X_test.shape[0] * model.support_vectors_.shape[0] * 8
    assert whole > 50 * budget
    with config_context(memory_budget=budget):
        model.decision_function(X_test[:100])  # compiled, loaded: not the path's memory
        with peak_memory() as meter:
            values = model.decision_function(X_test)
    assert meter.peak <= budget + values.nbytes + X_test.nbytes + SLACK_BYTES


def test_a_memory_budget_below_the_float64_matrix_sends_the_fit_to_the_planned_estimator(
        patched, capsys):
    """The float64 matrix is held only where the memory budget has room for it; otherwise
    the fit is the native estimator's, whose plan keeps the budget."""
    from kernelscale import config_context

    X, y = make_classification(2000, 10, random_state=0)
    kernelscale.patch_sklearn(verbose=True)
    with config_context(memory_budget="16M"):  # the 2000 x 2000 float64 matrix is 32 MB
        _routed("SVC")().fit(X, y)
    assert "float32 kernel rows, 2000 rows" in capsys.readouterr().out
    _routed("SVC")().fit(X, y)
    assert "float64 kernel matrix, 2000 rows" in capsys.readouterr().out
