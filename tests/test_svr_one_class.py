"""KernelSVR and KernelOneClassSVM against scikit-learn's SVR / OneClassSVM (LIBSVM)."""

import numpy as np
import pytest
from sklearn.svm import SVR, OneClassSVM

from kernelscale import KernelOneClassSVM, KernelSVR
from kernelscale._constraints import InvalidParameterError
from kernelscale.kernels import make_kernel
from kernelscale.solvers import KernelRows
from kernelscale.solvers.smo import (
    PairedRows,
    dual_objective,
    one_class_start,
    smo_one_class,
    smo_regression,
)

# the kernel matrix held whole (default) and kernel rows through the LRU cache
PATHS = {"matrix": None, "rows": 100_000}
KERNELS = [("rbf", {"gamma": 0.3}), ("linear", {}),
           ("poly", {"degree": 2, "gamma": 0.5, "coef0": 1.0})]


def _regression(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    return X, y


def _svr_objective(d, K, y, epsilon):
    """LIBSVM's epsilon-SVR dual objective at coefficients ``d = a - a*``."""
    return 0.5 * d @ K @ d + epsilon * np.abs(d).sum() - y @ d


def _full_coef(model, n):
    coef = np.zeros(n)
    coef[model.support_] = model.dual_coef_.ravel()
    return coef


@pytest.mark.parametrize("path", ["matrix", pytest.param("rows", marks=pytest.mark.slow)])
@pytest.mark.parametrize("kernel,params", KERNELS)
@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0])
def test_svr_matches_libsvm(path, kernel, params, epsilon):
    X, y = _regression()
    ours = KernelSVR(C=2.0, epsilon=epsilon, kernel=kernel, tol=1e-5,
                     memory_budget=PATHS[path], **params).fit(X, y)
    ref = SVR(C=2.0, epsilon=epsilon, kernel=kernel, tol=1e-5, **params).fit(X, y)
    K = make_kernel(kernel, X, **params).gram(X, dtype=np.float64)
    obj_ours = _svr_objective(_full_coef(ours, len(y)), K, y, epsilon)
    obj_ref = _svr_objective(_full_coef(ref, len(y)), K, y, epsilon)
    assert abs(obj_ours - obj_ref) <= 1e-4 * abs(obj_ref)
    # the objective the solver reports is the model's
    assert ours.objective_ == pytest.approx(obj_ours, rel=1e-4, abs=1e-6)
    scale = np.abs(ref.predict(X)).max()
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), atol=2e-3 * scale)
    assert ours.fit_status_ == 0


def test_svr_dual_feasible_and_tube():
    X, y = _regression(seed=1)
    C = 3.0
    model = KernelSVR(C=C, epsilon=0.2, tol=1e-6).fit(X, y)
    d = model.dual_coef_.ravel()
    assert abs(d.sum()) < 1e-8  # the equality constraint sum(a - a*) = 0
    assert np.all(np.abs(d) <= C + 1e-12)
    residual = np.abs(y - model.predict(X))
    # points strictly inside the tube are not support vectors (KKT)
    inside = np.flatnonzero(residual < 0.2 - 1e-3)
    assert not np.intersect1d(inside, model.support_).size


def test_svr_sample_weight_matches_libsvm():
    X, y = _regression(seed=2)
    w = np.random.default_rng(0).uniform(0.2, 3.0, size=len(y))
    ours = KernelSVR(C=1.5, tol=1e-5, gamma=0.3).fit(X, y, sample_weight=w)
    ref = SVR(C=1.5, tol=1e-5, gamma=0.3).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), atol=2e-3)


def test_svr_precomputed_equals_kernel():
    X, y = _regression(seed=3)
    K = make_kernel("rbf", X, gamma=0.3).gram(X, dtype=np.float64)
    pre = KernelSVR(kernel="precomputed", tol=1e-6).fit(K, y)
    direct = KernelSVR(gamma=0.3, tol=1e-6).fit(X, y)
    np.testing.assert_allclose(pre.predict(K), direct.predict(X), atol=1e-4)


def test_svr_coef_for_linear_kernel():
    X, y = _regression(seed=4)
    model = KernelSVR(kernel="linear", tol=1e-6).fit(X, y)
    np.testing.assert_allclose(X @ model.coef_.ravel() + model.intercept_, model.predict(X),
                               atol=1e-4)
    with pytest.raises(AttributeError, match="linear kernel"):
        _ = KernelSVR().fit(X, y).coef_


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("nu", [0.05, 0.5, 0.95])
def test_one_class_matches_libsvm(path, nu):
    X, _ = _regression(seed=5)
    ours = KernelOneClassSVM(nu=nu, gamma=0.3, tol=1e-5, memory_budget=PATHS[path]).fit(X)
    ref = OneClassSVM(nu=nu, gamma=0.3, tol=1e-5).fit(X)
    scale = np.abs(ref.score_samples(X)).max()
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X),
                               atol=1e-4 * scale)
    np.testing.assert_allclose(ours.score_samples(X), ref.score_samples(X), atol=1e-4 * scale)
    np.testing.assert_allclose(ours.offset_, ref.offset_, rtol=1e-4)
    # free support vectors sit on the boundary (decision 0): compare the others
    clear = np.abs(ref.decision_function(X)) > 1e-3 * scale
    np.testing.assert_array_equal(ours.predict(X)[clear], ref.predict(X)[clear])
    assert ours.dual_coef_.sum() == pytest.approx(nu * len(X))
    assert np.all(ours.dual_coef_ <= 1.0)


def test_one_class_nu_one_keeps_every_row():
    # scikit-learn's OneClassSVM(nu=1) raises on a non-finite intercept here
    X, _ = _regression(seed=5)
    model = KernelOneClassSVM(nu=1.0, gamma=0.3).fit(X)
    np.testing.assert_array_equal(model.dual_coef_, 1.0)
    assert np.isfinite(model.offset_).all()


def test_one_class_nu_bounds_fraction_outside():
    X, _ = _regression(n=600, seed=6)
    for nu in (0.1, 0.3):
        model = KernelOneClassSVM(nu=nu, gamma=0.5).fit(X)
        outside = np.mean(model.predict(X) == -1)
        assert outside <= nu + 0.02
        assert model.support_.size >= nu * len(X) - 1


def test_one_class_sample_weight_matches_libsvm():
    X, _ = _regression(seed=7)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(X))
    ours = KernelOneClassSVM(nu=0.2, gamma=0.3, tol=1e-6).fit(X, sample_weight=w)
    ref = OneClassSVM(nu=0.2, gamma=0.3, tol=1e-6).fit(X, sample_weight=w)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X),
                               atol=1e-3)


def test_one_class_predict_labels_and_fit_predict():
    X, _ = _regression(seed=8)
    model = KernelOneClassSVM(nu=0.1)
    labels = model.fit_predict(X)
    assert set(np.unique(labels)) <= {-1, 1}
    np.testing.assert_array_equal(labels, model.predict(X))
    np.testing.assert_array_equal(model.predict(X), np.where(model.decision_function(X) > 0,
                                                              1, -1))


@pytest.mark.parametrize("nu", [1.5, 2.0])
def test_one_class_refuses_nu_above_one(nu):
    with pytest.raises(InvalidParameterError, match=r"nu=.* in \(0, 1\]"):
        KernelOneClassSVM(nu=nu).fit(np.ones((5, 2)))


@pytest.mark.parametrize("estimator", [KernelOneClassSVM(nu=0.0), KernelOneClassSVM(nu=-0.1),
                                       KernelSVR(epsilon=-0.1), KernelSVR(C=0.0)])
def test_out_of_range_parameters_are_refused(estimator):
    X, y = _regression(n=20)
    with pytest.raises(InvalidParameterError):
        estimator.fit(X, y)


def test_one_class_start_is_feasible():
    C = np.array([1.0, 0.5, 2.0, 0.0, 1.0])
    alpha = one_class_start(C, 0.6)
    assert alpha.sum() == pytest.approx(0.6 * C.sum())
    assert np.all((alpha >= 0) & (alpha <= C))
    np.testing.assert_allclose(one_class_start(np.ones(4), 0.3), [1.0, 0.2, 0.0, 0.0])


def test_paired_rows_duplicate_the_kernel():
    X, _ = _regression(n=40, seed=9)
    kernel = make_kernel("rbf", X, gamma=0.3)
    K = kernel.gram(X, dtype=np.float64)
    paired = PairedRows(KernelRows(X, kernel, 2**20))
    K2 = np.block([[K, K], [K, K]])
    rows = np.array([0, 41, 79, 5])
    out = np.empty((rows.size, 80), dtype=np.float32)
    np.testing.assert_allclose(paired.compute(rows, out), K2[rows], atol=1e-6)
    columns = np.array([3, 43, 10, 70])
    coef = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(paired.cross(rows, columns, coef), K2[np.ix_(rows, columns)] @ coef,
                               atol=1e-5)
    paired.set_columns(np.array([2, 42, 7]))
    out = np.empty((2, 3), dtype=np.float32)
    np.testing.assert_allclose(paired.compute(np.array([1, 60]), out),
                               K2[np.ix_([1, 60], [2, 42, 7])], atol=1e-6)


def test_solvers_agree_on_rows_and_matrix():
    X, y = _regression(n=200, seed=10)
    kernel = make_kernel("rbf", X, gamma=0.3)
    K = kernel.gram(X, dtype=np.float32)
    a = smo_regression(KernelRows(X, kernel, 2**20), y, np.full(200, 1.0), 0.1, tol=1e-6)
    b = smo_regression(K, y, np.full(200, 1.0), 0.1, tol=1e-6)
    assert a["objective"] == pytest.approx(b["objective"], rel=1e-6)
    c = smo_one_class(KernelRows(X, kernel, 2**20), 0.3, tol=1e-6)
    d = smo_one_class(K, 0.3, tol=1e-6)
    assert c["intercept"] == pytest.approx(d["intercept"], rel=1e-5)


def test_dual_objective_with_a_linear_term():
    Q = np.array([[2.0, 0.5], [0.5, 1.0]])
    alpha = np.array([0.3, 0.7])
    p = np.array([0.2, -1.5])
    G = Q @ alpha + p
    assert dual_objective(alpha, G, p) == pytest.approx(0.5 * alpha @ Q @ alpha + p @ alpha)
    assert dual_objective(alpha, Q @ alpha - 1) == pytest.approx(
        0.5 * alpha @ Q @ alpha - alpha.sum())
