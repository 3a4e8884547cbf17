"""ApproxKernelSVR / ApproxKernelOneClassSVM and their linear solvers."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVR

from kernelscale import (
    ApproxKernelOneClassSVM,
    ApproxKernelSVR,
    KernelOneClassSVM,
    KernelSVR,
    Nystroem,
)
from kernelscale._constraints import InvalidParameterError
from kernelscale.solvers import dual_cd_svr, linear_one_class, smo_one_class
from kernelscale.solvers._dual_cd_svr import svr_primal_objective


def _data(n=800, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] ** 2 + 0.05 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.5])
def test_dual_cd_svr_reaches_liblinear_objective(loss, epsilon):
    X, y = _data()
    Z = Nystroem(n_components=60, gamma=0.3, random_state=0, dtype="float64").fit_transform(X)
    C = np.full(len(y), 1.0)
    coef, b, _, converged = dual_cd_svr(Z, y, C, epsilon, loss=loss, tol=1e-6, max_iter=20000)
    ref = LinearSVR(C=1.0, epsilon=epsilon, loss=loss, tol=1e-6, max_iter=20000,
                    dual=True, random_state=0).fit(Z, y)
    ours = svr_primal_objective(coef, b, Z, y, C, epsilon, loss=loss)
    theirs = svr_primal_objective(ref.coef_, ref.intercept_[0], Z, y, C, epsilon, loss=loss)
    assert converged
    assert ours <= theirs * (1 + 1e-4)


def test_dual_cd_svr_without_intercept_and_zero_weights():
    X, y = _data(seed=1)
    C = np.where(np.arange(len(y)) % 4 == 0, 0.0, 2.0)
    coef, b, _, _ = dual_cd_svr(X, y, C, 0.1, bias=0.0, tol=1e-8, max_iter=5000)
    assert b == 0.0
    keep = C > 0
    ref, *_ = dual_cd_svr(X[keep], y[keep], C[keep], 0.1, bias=0.0, tol=1e-8, max_iter=5000)
    np.testing.assert_allclose(coef, ref, atol=1e-3)


@pytest.mark.parametrize("nu", [0.05, 0.3, 0.9])
def test_linear_one_class_equals_smo_on_the_feature_kernel(nu):
    X, _ = _data(n=500, seed=2)
    Z = Nystroem(n_components=40, gamma=0.3, random_state=0, dtype="float64").fit_transform(X)
    r = linear_one_class(Z, nu, tol=1e-6)
    s = smo_one_class(np.ascontiguousarray(Z @ Z.T, dtype=np.float32), nu, tol=1e-6)
    K = Z @ Z.T
    ours, ref = Z @ r["coef"] + r["intercept"], K @ s["alpha"] + s["intercept"]
    np.testing.assert_allclose(ours, ref, atol=1e-3 * np.abs(K @ s["alpha"]).max())
    assert r["alpha"].sum() == pytest.approx(nu * len(Z))


def test_approx_svr_close_to_exact():
    X, y = _data(n=1500, seed=3)
    train, test = slice(0, 1200), slice(1200, None)
    exact = KernelSVR(C=5.0, epsilon=0.05, gamma=0.3).fit(X[train], y[train])
    # the same loss: as accurate; its square (a different model at the same C): close
    for loss, slack in (("epsilon_insensitive", 0.005), ("squared_epsilon_insensitive", 0.03)):
        approx = ApproxKernelSVR(n_components=600, C=5.0, epsilon=0.05, gamma=0.3, loss=loss,
                                 random_state=0, max_iter=20000).fit(X[train], y[train])
        assert approx.score(X[test], y[test]) >= exact.score(X[test], y[test]) - slack


def test_approx_one_class_close_to_exact():
    X, _ = _data(n=1500, seed=4)
    exact = KernelOneClassSVM(nu=0.1, gamma=0.3).fit(X)
    approx = ApproxKernelOneClassSVM(nu=0.1, gamma=0.3, n_components=400, random_state=0).fit(X)
    assert np.mean(exact.predict(X) == approx.predict(X)) >= 0.97
    assert np.mean(approx.predict(X) == -1) <= 0.1 + 0.02
    np.testing.assert_allclose(approx.score_samples(X) - approx.offset_[0],
                               approx.decision_function(X))


def test_approx_one_class_sample_weight_zero_drops_rows():
    X, _ = _data(n=400, seed=5)
    w = np.ones(len(X))
    w[::2] = 0.0
    a = ApproxKernelOneClassSVM(nu=0.2, n_components=50, random_state=0, tol=1e-6,
                                dtype="float64")
    weighted = a.fit(X, sample_weight=w).decision_function(X)
    # the same map (landmarks drawn from all rows), fitted only on the kept rows
    Z = a.feature_map_.transform(X)
    r = linear_one_class(Z[1::2], 0.2, tol=1e-6)
    np.testing.assert_allclose(weighted, Z @ r["coef"] + r["intercept"], atol=1e-4)


@pytest.mark.parametrize("estimator", [ApproxKernelOneClassSVM(nu=1.5),
                                       ApproxKernelSVR(epsilon=-1.0),
                                       ApproxKernelSVR(loss="hinge")])
def test_bad_parameters_are_refused(estimator):
    X, y = _data(n=30)
    with pytest.raises(InvalidParameterError):
        estimator.fit(X, y)


def test_svr_convergence_warning_names_the_fix():
    X, y = _data(n=300, seed=6)
    with pytest.warns(Warning, match="squared_epsilon_insensitive"):
        ApproxKernelSVR(n_components=50, C=100.0, max_iter=2, random_state=0,
                        loss="epsilon_insensitive").fit(X, y)


# ------------------------------------------------------------ chunked fits

def _wave(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    return X, np.sin(X[:, 0] + 0.5 * X[:, 1]) + 0.1 * rng.normal(size=n)


def _chunked_svr(**extra):
    return ApproxKernelSVR(feature_map="rff", n_components=64, gamma=0.2, C=2.0, epsilon=0.05,
                           tol=1e-8, max_iter=5000, dtype="float64", random_state=0, **extra)


# tol=1e-8 asks for float64's last digits: on some machines the streamed L-BFGS reaches
# them one line search short and says so; the assertions below hold either way
@pytest.mark.filterwarnings("ignore:ApproxKernelSVR. L-BFGS stopped:"
                            "sklearn.exceptions.ConvergenceWarning")
def test_streamed_svr_minimises_the_in_memory_primal():
    from kernelscale.datasets import ArrayChunks

    X, y = _wave()
    memory = _chunked_svr().fit(X, y)
    streamed = _chunked_svr().fit(ArrayChunks(X, y, chunk_rows=700))
    np.testing.assert_allclose(streamed.coef_, memory.coef_, rtol=0, atol=2e-3 * np.abs(
        memory.coef_).max())
    assert streamed.intercept_[0] == pytest.approx(memory.intercept_[0], abs=2e-3)
    Z = memory.feature_map_.transform(X)
    objective = [svr_primal_objective(m.coef_[0], m.intercept_[0], Z, y, np.full(len(y), 2.0),
                                      0.05, loss="squared_epsilon_insensitive")
                 for m in (memory, streamed)]
    assert objective[1] == pytest.approx(objective[0], rel=1e-6)
    assert streamed.score(X, y) == pytest.approx(memory.score(X, y), abs=1e-3)


def test_streamed_svr_needs_the_squared_loss():
    from kernelscale.datasets import ArrayChunks

    X, y = _wave(200)
    with pytest.raises(ValueError, match="squared_epsilon_insensitive"):
        _chunked_svr(loss="epsilon_insensitive").fit(ArrayChunks(X, y))


def test_chunked_fit_stopped_by_precision_does_not_blame_max_iter():
    # a tol float64 cannot reach: L-BFGS stops on its line search long before
    # max_iter, and the warning says so (it blamed max_iter until stop 27)
    from kernelscale.datasets import ArrayChunks

    X, y = _wave(300)
    model = ApproxKernelSVR(feature_map="rff", n_components=64, gamma=0.2, C=2.0,
                            epsilon=0.05, tol=1e-15, max_iter=10_000, dtype="float64",
                            random_state=0)
    with pytest.warns(ConvergenceWarning, match="no further decrease") as caught:
        model.fit(ArrayChunks(X, y, chunk_rows=100))
    assert model.n_iter_ < 10_000
    assert not any("within max_iter" in str(w.message) for w in caught)
