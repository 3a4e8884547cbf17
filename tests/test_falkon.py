"""NystromKernelRidge(Classifier): FALKON's preconditioned CG against exact kernel ridge."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, make_moons
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.kernel_ridge import KernelRidge

from kernelscale import MemoryBudgetError, NystromKernelRidge, NystromKernelRidgeClassifier
from kernelscale.datasets import data_dir, load_mnist10k
from kernelscale.models.ridge._falkon_settings import AUTO_PENALTY, auto_n_components
from kernelscale.solvers._cg import conjugate_gradient
from kernelscale.solvers.falkon import FalkonPreconditioner, normal_product, solve_triangular


@pytest.fixture
def regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=300)
    return X, y


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


EXACT = {"dtype": "float64", "tol": 1e-12, "max_iter": 200}


@pytest.mark.parametrize("kernel, params", [
    ("rbf", {"gamma": 0.2}),
    ("laplacian", {"gamma": 0.1}),
    ("polynomial", {"gamma": 0.2, "degree": 2, "coef0": 1.0}),
])
def test_all_centres_equal_exact_kernel_ridge(regression, kernel, params):
    X, y = regression
    exact = KernelRidge(alpha=0.5, kernel=kernel, **params).fit(X, y)
    ours = NystromKernelRidge(n_components=len(X), kernel=kernel, alpha=0.5, **params,
                              **EXACT).fit(X, y)
    X_new = np.random.default_rng(1).normal(size=(50, 5))
    np.testing.assert_allclose(ours.predict(X_new), exact.predict(X_new), atol=1e-4)
    assert ours.n_iter_ <= 5  # the preconditioner is exact for m = n


def test_sample_weight_matches_weighted_kernel_ridge(regression):
    X, y = regression
    w = np.random.default_rng(2).uniform(0.1, 3.0, size=len(y))
    exact = KernelRidge(alpha=0.5, kernel="rbf", gamma=0.2).fit(X, y, sample_weight=w)
    ours = NystromKernelRidge(n_components=len(X), alpha=0.5, gamma=0.2, **EXACT)
    ours.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), exact.predict(X), atol=1e-4)


@pytest.mark.parametrize("weighted", [False, True])
def test_fit_intercept_is_kernel_ridge_on_the_centred_targets(regression, weighted):
    # the property: the fitted intercept is the weighted mean, and the kernel part is
    # kernel ridge of what is left; far from the data the prediction is that mean
    X, y = regression
    y = y + 8.0
    w = np.random.default_rng(2).uniform(0.1, 3.0, size=len(y)) if weighted else None
    mean = np.average(y, weights=w)
    exact = KernelRidge(alpha=0.5, kernel="rbf", gamma=0.2).fit(X, y - mean, sample_weight=w)
    ours = NystromKernelRidge(n_components=len(X), alpha=0.5, gamma=0.2, fit_intercept=True,
                              **EXACT).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.intercept_, [mean], rtol=1e-12)
    X_new = np.random.default_rng(1).normal(size=(50, 5))
    np.testing.assert_allclose(ours.predict(X_new), exact.predict(X_new) + mean, atol=1e-4)
    far = np.full((1, 5), 1e3)
    assert ours.predict(far)[0] == pytest.approx(mean)
    plain = NystromKernelRidge(n_components=len(X), alpha=0.5, gamma=0.2, **EXACT).fit(X, y)
    assert plain.predict(far)[0] == pytest.approx(0.0, abs=1e-12)  # KernelRidge's model
    np.testing.assert_array_equal(plain.intercept_, [0.0])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_intercept_is_the_mean_of_its_plus_minus_columns(digits, n_classes):
    X, y = digits
    keep = y < n_classes
    X, y = X[keep], y[keep]
    weights = {c: w for c, w in zip(range(n_classes), [3.0, 1.0, 0.5])}
    make = lambda intercept: NystromKernelRidgeClassifier(  # noqa: E731
        n_components=len(X), gamma=0.02, alpha=0.5, fit_intercept=intercept,
        class_weight=weights, **EXACT).fit(X, y)
    centred, plain = make(True), make(False)
    w = np.array([weights[c] for c in y])
    Y = np.where(y[:, None] == np.arange(n_classes), 1.0, -1.0)
    Y = Y[:, 1:] if n_classes == 2 else Y
    np.testing.assert_allclose(centred.intercept_, np.average(Y, axis=0, weights=w),
                               rtol=1e-12)
    np.testing.assert_array_equal(plain.intercept_, np.zeros(Y.shape[1]))
    far = np.full((1, X.shape[1]), 1e3)  # far from every centre: the intercept
    np.testing.assert_allclose(np.ravel(centred.decision_function(far)), centred.intercept_)
    assert centred.score(X, y) >= plain.score(X, y) - 0.01


def test_multi_output_solves_each_target(regression):
    X, y = regression
    Y = np.column_stack([y, -2 * y + 1, np.cos(X[:, 3])])
    both = NystromKernelRidge(n_components=100, gamma=0.2, alpha=1.0, random_state=0,
                              **EXACT).fit(X, Y)
    assert both.predict(X).shape == (300, 3)
    for j in range(3):
        one = NystromKernelRidge(n_components=100, gamma=0.2, alpha=1.0, random_state=0,
                                 **EXACT).fit(X, Y[:, j])
        np.testing.assert_allclose(both.predict(X)[:, j], one.predict(X), atol=1e-8)


def test_nystrom_solution_is_the_normal_equations_solution(regression):
    """m < n: the CG answer equals a direct solve of (K_nm^T K_nm + alpha K_mm) b = K_nm^T y."""
    X, y = regression
    reg = NystromKernelRidge(n_components=60, gamma=0.2, alpha=0.3, random_state=0,
                             **EXACT).fit(X, y)
    from kernelscale.kernels import pairwise_kernel

    C = reg.components_
    K_nm = pairwise_kernel(X, C, gamma=0.2)
    K_mm = pairwise_kernel(C, gamma=0.2)
    direct = np.linalg.solve(K_nm.T @ K_nm + 0.3 * (K_mm + reg_jitter(reg) * np.eye(60)),
                             K_nm.T @ y)
    np.testing.assert_allclose(reg.dual_coef_.ravel(), direct, rtol=1e-5, atol=1e-6)


def reg_jitter(reg):
    # the penalty uses T^T T = K_mm + jitter I; in float64 the jitter is ~1e-14
    return np.finfo(float).eps * reg.n_components_


def test_float32_close_to_float64(regression):
    X, y = regression
    kw = {"n_components": 100, "gamma": 0.2, "alpha": 1.0, "random_state": 0, "tol": 1e-6}
    p32 = NystromKernelRidge(dtype="float32", **kw).fit(X, y).predict(X)
    p64 = NystromKernelRidge(dtype="float64", **kw).fit(X, y).predict(X)
    assert np.abs(p32 - p64).max() < 1e-3 * np.abs(p64).max()


def test_preconditioner_needs_far_fewer_iterations(regression):
    X, y = regression
    kw = {"n_components": 150, "gamma": 0.2, "alpha": 1e-3, "random_state": 0, "tol": 1e-6,
          "max_iter": 300, "dtype": "float64"}
    with_pc = NystromKernelRidge(**kw).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        without = NystromKernelRidge(preconditioner=False, **kw).fit(X, y)
    assert with_pc.n_iter_ < 100
    assert without.n_iter_ == 300
    assert with_pc.residuals_[-1, 0] <= 1e-6 < without.residuals_[-1, 0]


def test_kernel_kept_or_streamed_gives_the_same_answer(regression):
    X, y = regression
    kw = {"n_components": 80, "gamma": 0.2, "alpha": 1.0, "random_state": 0, "dtype": "float64",
          "tol": 1e-10}
    kept = NystromKernelRidge(**kw).fit(X, y)
    assert kept.memory_plan_.choice == "kept"
    # room for the 80 x 80 factors and a few rows of K(X, C), not all 300
    with pytest.warns(UserWarning, match="recomputed"):
        streamed = NystromKernelRidge(memory_budget=80_000, **kw).fit(X, y)
    assert streamed.memory_plan_.choice == "recomputed"
    np.testing.assert_allclose(streamed.predict(X), kept.predict(X), rtol=1e-8, atol=1e-8)
    with pytest.raises(MemoryBudgetError, match="m x m preconditioner"):
        NystromKernelRidge(memory_budget=20_000, **kw).fit(X, y)


def test_a_recomputed_kernel_checks_the_clock_at_every_block(regression, monkeypatch):
    # each CG step recomputes K(X, C) block by block; one check per step left ~4 s between
    # checks on 180k rows: a time budget's stop is now honoured at every block
    from kernelscale import _clock
    from kernelscale.kernels import RBF
    from kernelscale.solvers.falkon import _operator

    X, _ = regression
    calls = []
    monkeypatch.setattr(_operator, "checkpoint", lambda: calls.append(1))
    V = np.ones((10, 1))
    recomputed = _operator.KernelOperator(X, X[:10], RBF(gamma=0.2), "float64", 4_000,
                                          keep=False)
    calls.clear()  # the blocks are planned with a check each; each product checks again
    recomputed.normal_apply(V)
    assert len(recomputed.blocks) > 1
    assert len(calls) == len(recomputed.blocks)
    kept = _operator.KernelOperator(X, X[:10], RBF(gamma=0.2), "float64", 4_000, keep=True)
    calls.clear()
    kept.normal_apply(V)  # kept whole: the CG step's own check suffices
    assert not calls
    monkeypatch.setattr(_operator, "checkpoint", _clock.checkpoint)
    with _clock.stop_at(_clock.now() - 1.0), pytest.raises(_clock.TimeUp):
        recomputed.normal_apply(V)


def test_sparse_input_equals_dense(digits):
    X, y = digits
    kw = {"n_components": 200, "random_state": 0, "dtype": "float64", "tol": 1e-8}
    dense = NystromKernelRidgeClassifier(**kw).fit(X, y)
    sparse = NystromKernelRidgeClassifier(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), atol=1e-7)


@pytest.mark.parametrize("sampling", ["uniform", "leverage", "kmeans"])
def test_classifier_digits_accuracy(digits, sampling):
    X, y = digits
    clf = NystromKernelRidgeClassifier(n_components=300, sampling=sampling, random_state=0)
    clf.fit(X[:1400], y[:1400])
    assert clf.score(X[1400:], y[1400:]) > 0.95
    assert clf.decision_function(X[:3]).shape == (3, 10)


def test_classifier_binary_string_labels_and_class_weight():
    X, y = make_moons(n_samples=600, noise=0.15, random_state=0)
    labels = np.array(["no", "yes"])[y]
    clf = NystromKernelRidgeClassifier(n_components=100, gamma=2.0, random_state=0)
    clf.fit(X, labels)
    assert clf.predict(X[:5]).dtype == labels.dtype
    assert clf.score(X, labels) > 0.95
    assert clf.decision_function(X).shape == (600,)
    keep = np.flatnonzero((y == 1) | (np.arange(600) % 6 == 0))  # 1 : 6 imbalance
    plain = NystromKernelRidgeClassifier(n_components=100, gamma=2.0, alpha=30.0, random_state=0)
    balanced = NystromKernelRidgeClassifier(n_components=100, gamma=2.0, alpha=30.0,
                                            class_weight="balanced", random_state=0)
    minority = labels[keep] == "no"
    recall_plain = np.mean(plain.fit(X[keep], labels[keep]).predict(X[keep])[minority] == "no")
    recall_bal = np.mean(balanced.fit(X[keep], labels[keep]).predict(X[keep])[minority] == "no")
    assert recall_bal >= recall_plain


def test_auto_parameters():
    assert auto_n_components(100, 2**28, 4) == 100
    assert auto_n_components(8000, 2**29, 4) == int(7 * np.sqrt(8000) * np.log(8000))
    # K_nm and the m x m factors fit the budget
    m = auto_n_components(32_561, 2**28, 4)
    assert 4 * m * (32_561 + m) <= 2**28 < 4 * (m + 1) * (32_561 + m + 1)
    assert auto_n_components(10**7, 2**28, 4) == 1000  # the floor
    assert auto_n_components(10**6, 2**40, 4) == 10_000  # the cap
    X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    reg = NystromKernelRidge().fit(X, y)
    assert reg.n_components_ == 200 and reg.alpha_ == pytest.approx(AUTO_PENALTY * 200)


def test_verbose_prints_iterations(regression, capsys):
    X, y = regression
    NystromKernelRidge(n_components=50, verbose=2, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "[FALKON] iter    1" in out and "residual" in out and "centres=50" in out


def test_errors(regression):
    X, y = regression
    with pytest.raises(NotFittedError):
        NystromKernelRidge().predict(X)
    with pytest.raises(ValueError, match="alpha=-1.0 is not valid"):
        NystromKernelRidge(alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        NystromKernelRidge(alpha="big").fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        NystromKernelRidge(n_components="many").fit(X, y)
    with pytest.raises(ValueError, match="sampling"):
        NystromKernelRidge(sampling="random").fit(X, y)
    with pytest.raises(ValueError, match="kernel"):
        NystromKernelRidge(kernel="sigmoid").fit(X, y)
    with pytest.raises(TypeError, match="preconditioner"):
        NystromKernelRidge(preconditioner="yes").fit(X, y)
    with pytest.raises(ValueError, match="NaN|infinity"):
        NystromKernelRidge().fit(np.where(X > 2, np.nan, X), y)
    with pytest.raises(ValueError, match="inconsistent|samples"):
        NystromKernelRidge().fit(X, y[:-1])
    with pytest.raises(MemoryBudgetError, match="centres"):
        NystromKernelRidge(n_components=100, memory_budget=100).fit(X, y)
    with pytest.warns(UserWarning, match="larger than n_samples"):
        NystromKernelRidge(n_components=1000).fit(X, y)
    reg = NystromKernelRidge(n_components=20).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        reg.predict(X[:, :3])
    with pytest.raises(ValueError, match="2 classes|one class"):
        NystromKernelRidgeClassifier().fit(X, np.zeros(len(X)))


def test_indefinite_kernel_matrix_is_a_clear_error():
    with pytest.raises(ValueError, match="not positive definite"):
        FalkonPreconditioner(np.diag([1.0, -1.0]), 1e-3, np.float64)


def test_cholesky_jitter_makes_a_singular_matrix_factorisable():
    Z = np.random.default_rng(0).normal(size=(40, 3))
    K = Z @ Z.T  # rank 3
    pc = FalkonPreconditioner(K.copy(), 1e-3, np.float64)
    L = np.tril(pc.buffer, -1) + np.diag(pc.diag_T)  # T^T, below the diagonal
    np.testing.assert_allclose(L @ L.T, K + pc.jitter * np.eye(40), atol=1e-10)
    assert pc.jitter < 1e-6 * np.mean(np.diag(K))


@pytest.mark.parametrize("m", [3, 4, 9, 64])
def test_both_factors_share_one_buffer(m):
    rng = np.random.default_rng(m)
    Z = rng.normal(size=(m, 3))
    K = np.exp(-0.3 * ((Z[:, None] - Z[None]) ** 2).sum(-1))
    lam = 1e-2
    pc = FalkonPreconditioner(K.copy(), lam, np.float64)
    T = (np.tril(pc.buffer, -1) + np.diag(pc.diag_T)).T
    A = np.triu(pc.buffer, 1) + np.diag(pc.diag_A)
    np.testing.assert_allclose(T.T @ T, K + pc.jitter * np.eye(m), atol=1e-10)
    np.testing.assert_allclose(A.T @ A, T @ T.T / m + lam * np.eye(m), atol=1e-10)


def test_preconditioner_peak_memory_is_one_matrix(peak_memory):
    m = 600
    Z = np.random.default_rng(0).normal(size=(m, 5))
    K = np.exp(-0.1 * ((Z[:, None] - Z[None]) ** 2).sum(-1))
    one = m * m * 8
    with peak_memory() as meter:
        FalkonPreconditioner(K.copy(), 1e-3, np.float64)  # the copy is the buffer
    assert meter.peak < 1.1 * one
    with peak_memory() as meter:
        FalkonPreconditioner(K, 1e-3, np.float32)  # a float32 buffer, K kept
    assert meter.peak < 0.6 * one


def test_conjugate_gradient_solves_independent_columns():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 30))
    A = A @ A.T + 30 * np.eye(30)
    B = rng.normal(size=(30, 4))
    B[:, 2] = 0.0  # a zero right-hand side is solved at once
    x, history, converged, breakdown = conjugate_gradient(lambda P: A @ P, B, max_iter=100,
                                                          tol=1e-12)
    assert not breakdown.any()
    assert converged
    np.testing.assert_allclose(x, np.linalg.solve(A, B), atol=1e-9)


def test_preconditioner_is_exact_inverse_for_all_centres():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(50, 4))
    K = np.exp(-0.5 * ((Z[:, None] - Z[None]) ** 2).sum(-1))
    lam = 1e-3
    pc = FalkonPreconditioner(K.copy(), lam, np.float64)
    B = pc.apply(np.eye(50))
    H = K @ K / 50 + lam * (K + pc.jitter * np.eye(50))
    np.testing.assert_allclose(B.T @ H @ B, np.eye(50), atol=1e-6)


# Shapes that exercise the four-row / four-column blocks and their remainders,
# one target, more threads than rows, and fewer rows than a flush.
SKINNY_SHAPES = [(1, 1, 1), (3, 2, 1), (7, 5, 3), (64, 4, 2), (130, 9, 10), (517, 33, 4)]


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("n, m, t", SKINNY_SHAPES)
@pytest.mark.parametrize("with_v, with_y, with_w", [
    (True, False, False), (True, True, True), (False, True, False), (False, True, True),
])
def test_normal_product_matches_float64_gemm(dtype, rtol, n, m, t, with_v, with_y, with_w):
    rng = np.random.default_rng(n + m + t)
    K = rng.random((n, m))
    V = rng.normal(size=(m, t)) if with_v else None
    Y = rng.normal(size=(n, t)) if with_y else None
    w = rng.random(n) if with_w else None
    R = (K @ V if with_v else 0.0) + (Y if with_y else 0.0)
    expected = K.T @ (R * (w[:, None] if with_w else 1.0))
    out = normal_product(
        K.astype(dtype), None if V is None else V.astype(dtype),
        None if Y is None else Y.astype(dtype), None if w is None else w.astype(dtype),
    )
    assert out.dtype == np.float64 and out.shape == (m, t)
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-4), (np.float64, 1e-11)])
@pytest.mark.parametrize("m, t", [(1, 1), (2, 3), (5, 1), (8, 2), (67, 10), (300, 7)])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular_matches_lapack(dtype, rtol, m, t, trans, lower):
    rng = np.random.default_rng(m * 10 + t)
    A = rng.normal(size=(m, m))
    R = np.linalg.cholesky(A @ A.T / m + np.eye(m))  # lower, well conditioned
    R = R if lower else R.T
    noise = rng.normal(size=(m, m))
    other = np.triu(noise, 1) if lower else np.tril(noise, -1)  # the other triangle is ignored
    stored = np.tril(R, -1) + other if lower else np.triu(R, 1) + other
    stored += np.diag(rng.normal(size=m))  # and so is the stored diagonal
    B = rng.normal(size=(m, t))
    X = solve_triangular(stored.astype(dtype), B, lower=lower, trans=trans,
                         diag=np.diag(R).astype(dtype))
    assert X.dtype == dtype and X.shape == (m, t)
    np.testing.assert_allclose((R.T if trans else R) @ X, B, rtol=rtol, atol=rtol * np.abs(B).max())


mnist_missing = data_dir() is None or not (data_dir() / "t10k-images-idx3-ubyte.gz").exists()


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.skipif(mnist_missing, reason="MNIST-10k not found under ../shared/datasets")
def test_mnist10k_default_parameters_reach_the_issue_accuracy():
    X_train, y_train, X_test, y_test = load_mnist10k()
    clf = NystromKernelRidgeClassifier(random_state=0).fit(X_train, y_train)
    assert clf.score(X_test, y_test) >= 0.978


@pytest.mark.data
def test_a9a_accuracy_within_20_iterations(a9a):
    X_train, y_train, X_test, y_test = a9a
    n = X_train.shape[0]
    clf = NystromKernelRidgeClassifier(n_components=1000, alpha=1e-4 * n, max_iter=50,
                                       random_state=0)
    with np.errstate(all="raise"):
        clf.fit(X_train, y_train)
    # CG meets its tolerance by itself within 20 of the 50 iterations allowed
    assert clf.n_iter_ <= 20 and clf.residuals_[-1].max() <= clf.tol
    assert clf.score(X_test, y_test) >= 0.848
