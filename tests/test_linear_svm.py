"""LinearSVC: the primal optimum against liblinear, solver agreement, weights, labels, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import svm as sk_svm
from sklearn.datasets import load_digits, make_classification
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.class_weight import compute_sample_weight

from kernelscale import LinearSVC


def primal_objective(coef, intercept, X, y_pm, C, loss, intercept_scaling=1.0):
    """LIBLINEAR's primal: the intercept is a regularized weight on a constant feature."""
    w_bias = np.asarray(intercept).ravel()[0] / intercept_scaling
    margin = y_pm * (X @ coef.ravel() + intercept[0])
    slack = np.maximum(0.0, 1.0 - margin)
    losses = slack if loss == "hinge" else slack**2
    return 0.5 * (coef.ravel() @ coef.ravel() + w_bias**2) + float(np.sum(C * losses))


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(n_samples=600, n_features=20, n_informative=8,
                               flip_y=0.05, random_state=0)
    return X, y


def reference_objective(X, y, C, loss, **kw):
    ref = sk_svm.LinearSVC(C=C, loss=loss, dual=True, tol=1e-10, max_iter=1_000_000,
                           random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref.fit(X, y)
    return primal_objective(ref.coef_, ref.intercept_, X, 2.0 * y - 1, C, loss)


@pytest.mark.parametrize(
    "loss, solver",
    [("squared_hinge", "newton"), ("squared_hinge", "lbfgs"), ("squared_hinge", "dual_cd"),
     ("hinge", "dual_cd")],
)
@pytest.mark.parametrize("C", [0.05, 1.0])
def test_reaches_liblinear_objective(binary, loss, solver, C):
    X, y = binary
    clf = LinearSVC(C=C, loss=loss, solver=solver, tol=1e-6, max_iter=100_000,
                    random_state=0).fit(X, y)
    ours = primal_objective(clf.coef_, clf.intercept_, X, 2.0 * y - 1, C, loss)
    ref = reference_objective(X, y, C, loss)
    assert ours <= ref * (1 + 1e-5)
    assert ours >= ref * (1 - 1e-5)  # the reference is an optimum too


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("tol", [1e-2, 1e-4])
def test_dual_cd_stops_on_a_certified_duality_gap(binary, loss, sparse, tol):
    from kernelscale.solvers import dual_cd

    X, y = binary
    y_pm = 2.0 * y - 1
    C = np.full(len(y), 0.7)
    Xs = sp.csr_matrix(X) if sparse else X
    w, a, n_iter, converged = dual_cd(Xs, y_pm, C, loss=loss, tol=tol, max_iter=100_000)
    assert converged
    diag = np.zeros(len(y)) if loss == "hinge" else 0.5 / C
    np.testing.assert_allclose(w, np.r_[X.T @ (a * y_pm), a @ y_pm], atol=1e-9)
    primal = primal_objective(w[:-1], w[-1:], X, y_pm, C, loss)
    dual = a.sum() - 0.5 * w @ w - 0.5 * np.sum(diag * a**2)
    optimum = reference_objective(X, y, 0.7, loss)
    assert dual <= optimum * (1 + 1e-9) <= primal * (1 + 1e-9)  # weak duality
    # Whichever rule stopped it (the gap or LIBLINEAR's projected gradients),
    # the objective is within the tolerance of the optimum at these sizes.
    assert primal - optimum <= tol * primal


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("sparse", [False, True])
def test_dual_cd_zero_sample_weight_equals_dropping_the_rows(binary, loss, sparse):
    X, y = binary
    weights = np.ones(len(y))
    weights[:60] = 0.0
    Xs = sp.csr_matrix(X) if sparse else X
    params = dict(loss=loss, solver="dual_cd", tol=1e-4, max_iter=100_000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by zero, no ConvergenceWarning
        weighted = LinearSVC(**params).fit(Xs, y, sample_weight=weights)
    dropped = LinearSVC(**params).fit(Xs[60:], y[60:])
    objective = [primal_objective(m.coef_, m.intercept_, X[60:], 2.0 * y[60:] - 1, 1.0, loss)
                 for m in (weighted, dropped)]
    np.testing.assert_allclose(objective[0], objective[1], rtol=2e-4)


def test_auto_solver_follows_rows_per_feature():
    from kernelscale.models.linear._linear_svc import resolve_solver

    def shaped(n, d):  # only the shape matters: a view of one zero, no memory
        return np.broadcast_to(np.zeros(1), (n, d))

    tall, short = shaped(2000, 100), shaped(1999, 100)
    assert resolve_solver("auto", "squared_hinge", tall) == "newton"
    assert resolve_solver("auto", "squared_hinge", short) == "dual_cd"
    assert resolve_solver("auto", "hinge", tall) == "dual_cd"
    wide = shaped(200_000, 5000)
    assert resolve_solver("auto", "squared_hinge", wide) == "lbfgs"
    assert resolve_solver("auto", "squared_hinge", sp.csr_matrix((200_000, 5000))) == "dual_cd"


def test_solvers_agree_on_the_minimiser(binary):
    X, y = binary
    fits = [LinearSVC(C=0.5, solver=s, tol=1e-8, max_iter=20_000, random_state=0).fit(X, y)
            for s in ("newton", "lbfgs", "dual_cd")]
    for other in fits[1:]:
        np.testing.assert_allclose(other.coef_, fits[0].coef_, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(other.intercept_, fits[0].intercept_, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_subgradient_is_a_slow_but_real_descent(binary, loss):
    X, y = binary
    C = 0.05
    best = reference_objective(X, y, C, loss)
    clf = LinearSVC(C=C, loss=loss, solver="subgradient", max_iter=300).fit(X, y)
    ours = primal_objective(clf.coef_, clf.intercept_, X, 2.0 * y - 1, C, loss)
    start = float(len(y) * C)  # P(0): every margin is 0, every loss is 1
    assert best <= ours < best + 0.1 * (start - best)


@pytest.mark.parametrize("solver", ["newton", "dual_cd"])
def test_sparse_equals_dense(binary, solver):
    X, y = binary
    X = np.where(np.abs(X) > 1.0, X, 0.0)
    dense = LinearSVC(solver=solver, tol=1e-8, max_iter=20_000, random_state=0).fit(X, y)
    sparse = LinearSVC(solver=solver, tol=1e-8, max_iter=20_000, random_state=0).fit(
        sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=1e-5, atol=1e-6)


def test_integer_sample_weight_equals_repeated_rows(binary):
    X, y = binary
    reps = np.random.default_rng(0).integers(0, 4, size=len(y))
    weighted = LinearSVC(solver="newton", tol=1e-10).fit(X, y, sample_weight=reps)
    repeated = LinearSVC(solver="newton", tol=1e-10).fit(np.repeat(X, reps, axis=0),
                                                         np.repeat(y, reps))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_class_weight_dict_and_balanced_match_liblinear(loss):
    X, y = make_classification(n_samples=500, n_features=10, weights=[0.85], random_state=1)
    for class_weight in ({0: 1.0, 1: 4.0}, "balanced"):
        ours = LinearSVC(loss=loss, class_weight=class_weight, tol=1e-8, max_iter=50_000,
                         random_state=0).fit(X, y)
        ref = sk_svm.LinearSVC(loss=loss, class_weight=class_weight, tol=1e-10,
                               max_iter=1_000_000, random_state=0).fit(X, y)
        C_i = compute_sample_weight(class_weight, y)
        ours_p = primal_objective(ours.coef_, ours.intercept_, X, 2.0 * y - 1, C_i, loss)
        ref_p = primal_objective(ref.coef_, ref.intercept_, X, 2.0 * y - 1, C_i, loss)
        assert ours_p == pytest.approx(ref_p, rel=1e-5)
    # the minority class gains recall from balancing
    plain = LinearSVC().fit(X, y)
    balanced = LinearSVC(class_weight="balanced").fit(X, y)
    assert (balanced.predict(X)[y == 1] == 1).mean() > (plain.predict(X)[y == 1] == 1).mean()


def test_multiclass_digits_one_vs_rest_matches_liblinear():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    ours = LinearSVC(C=0.1, tol=1e-8).fit(X, y)
    ref = sk_svm.LinearSVC(C=0.1, tol=1e-10, max_iter=100_000, random_state=0).fit(X, y)
    assert ours.coef_.shape == (10, 64) and ours.intercept_.shape == (10,)
    assert ours.decision_function(X).shape == (len(y), 10)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=2e-4)
    assert np.mean(ours.predict(X) == ref.predict(X)) > 0.998
    assert ours.score(X, y) > 0.97


@pytest.mark.parametrize("solver", ["newton", "dual_cd"])
def test_string_labels_and_two_class_decision_sign(binary, solver):
    X, y = binary
    labels = np.array(["no", "yes"])[y]
    clf = LinearSVC(solver=solver, random_state=0).fit(X, labels)
    assert list(clf.classes_) == ["no", "yes"]
    scores = clf.decision_function(X)
    assert scores.shape == (len(y),)
    np.testing.assert_array_equal(clf.predict(X), np.where(scores > 0, "yes", "no"))
    assert clf.score(X, labels) > 0.85


def test_float32_input_is_not_upcast(peak_memory):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100_000, 100), dtype=np.float32)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    for solver in ("newton", "dual_cd"):
        with peak_memory() as meter, warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # 50 passes: memory is the point
            LinearSVC(solver=solver, max_iter=50).fit(X, y)
        # a float64 copy alone would be 2 * X.nbytes
        assert meter.peak < 0.5 * X.nbytes, (solver, meter.peak)


def test_no_intercept():
    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    clf = LinearSVC(fit_intercept=False, tol=1e-8).fit(X, y)
    np.testing.assert_array_equal(clf.intercept_, [0.0])
    ref = sk_svm.LinearSVC(fit_intercept=False, tol=1e-10, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-3, atol=1e-5)


def test_max_iter_reached_warns(binary):
    X, y = binary
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        LinearSVC(loss="hinge", max_iter=1, tol=1e-12).fit(X, y)


def test_verbose_reports(binary, capsys):
    X, y = binary
    LinearSVC(verbose=2).fit(X, y)
    out = capsys.readouterr().out
    assert "iteration 1" in out and "solved by newton" in out


@pytest.mark.parametrize(
    "params, y_change, match",
    [
        ({}, "one_class", "at least 2 classes"),
        ({}, "short", "inconsistent numbers of samples"),
        ({}, "nan_y", "NaN"),
        ({"C": 0.0}, None, "C"),
        ({"C": -1.0}, None, "C"),
        ({"loss": "log"}, None, "loss"),
        ({"solver": "sgd"}, None, "solver"),
        ({"loss": "hinge", "solver": "newton"}, None, "differentiable"),
        ({"class_weight": "auto"}, None, "class_weight"),
        ({"class_weight": {7: 2.0}}, None, "not in y"),
        ({"max_iter": 0}, None, "max_iter"),
    ],
)
def test_bad_input_raises_clear_errors(binary, params, y_change, match):
    X, y = binary
    y = y.astype(float)
    if y_change == "one_class":
        y = np.zeros_like(y)
    elif y_change == "short":
        y = y[:-1]
    elif y_change == "nan_y":
        y[3] = np.nan
    with pytest.raises(ValueError, match=match):
        LinearSVC(**params).fit(X, y)


def test_nan_in_X_and_feature_mismatch(binary):
    X, y = binary
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LinearSVC().fit(bad, y)
    with pytest.raises(NotFittedError):
        LinearSVC().predict(X)
    clf = LinearSVC().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :5])


@pytest.mark.data
@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_a9a_objective_within_1e3_of_liblinear(a9a, loss):
    X, y, _, _ = a9a
    ours = LinearSVC(loss=loss, random_state=0).fit(X, y)
    ref = sk_svm.LinearSVC(loss=loss, random_state=0, max_iter=10_000).fit(X, y)
    y_pm = np.where(y > 0, 1.0, -1.0)
    ours_p = primal_objective(ours.coef_, ours.intercept_, X, y_pm, 1.0, loss)
    ref_p = primal_objective(ref.coef_, ref.intercept_, X, y_pm, 1.0, loss)
    assert ours_p <= ref_p * (1 + 1e-3)


def test_newton_rebuilds_a_hessian_that_lost_definiteness():
    # regression: at a large C, rows entering / leaving the active set one by one
    # cancelled H's small directions and cho_factor raised mid-search (a9a, C = 100)
    from kernelscale.solvers import squared_hinge_newton

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 8))
    y = np.where(Z[:, 0] + 0.3 * rng.normal(size=300) > 0, 1.0, -1.0)
    C = np.full(300, 100.0)
    expected, _, ok = squared_hinge_newton(Z, y, C, tol=1e-10, memory_budget=2**24)
    broken = -np.eye(9)  # what the drift leaves: not positive definite
    got, _, ok2 = squared_hinge_newton(Z, y, C, tol=1e-10, memory_budget=2**24,
                                       hessian_all=broken)
    assert ok and ok2 and np.allclose(got, expected, atol=1e-8)
