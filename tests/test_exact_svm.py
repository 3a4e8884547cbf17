"""KernelSVC (SMO) against LIBSVM, and the doubly stochastic gradient SVM."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_blobs, make_classification, make_moons
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel
from sklearn.svm import SVC

from kernelscale import DoublySGDSVC, KernelSVC, MemoryBudgetError
from kernelscale.kernels import make_kernel
from kernelscale.solvers import KernelRows
from kernelscale.solvers.smo import RowCache, smo


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(n_samples=400, n_features=8, random_state=0)
    return X, y


def _sklearn_dual_objective(svc, K):
    d = svc.dual_coef_.ravel()
    Ksv = K[np.ix_(svc.support_, svc.support_)]
    return 0.5 * d @ Ksv @ d - np.abs(d).sum()


KERNELS = {
    "rbf": (dict(kernel="rbf", gamma=0.1), dict(kernel="rbf", gamma=0.1)),
    "linear": (dict(kernel="linear"), dict(kernel="linear")),
    "polynomial": (dict(kernel="polynomial", gamma=0.1, degree=3, coef0=1.0),
                   dict(kernel="poly", gamma=0.1, degree=3, coef0=1.0)),
    "laplacian": (dict(kernel="laplacian", gamma=0.1),
                  dict(kernel=lambda A, B: laplacian_kernel(A, B, gamma=0.1))),
    "callable": (dict(kernel=lambda A, B: rbf_kernel(A, B, gamma=0.2)),
                 dict(kernel="rbf", gamma=0.2)),
    # not positive semi-definite: SMO's guard of a non-positive curvature, as LIBSVM's
    "sigmoid": (dict(kernel="sigmoid", gamma=0.01, coef0=-0.5),
                dict(kernel="sigmoid", gamma=0.01, coef0=-0.5)),
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_decision_function_matches_libsvm(binary, name):
    X, y = binary
    ours, theirs = KERNELS[name]
    a = KernelSVC(C=2.0, tol=1e-5, **ours).fit(X, y)
    b = SVC(C=2.0, tol=1e-5, **theirs).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-3)
    assert set(a.support_) == set(b.support_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_precomputed_matches_libsvm(binary):
    X, y = binary
    K = rbf_kernel(X, gamma=0.1)
    a = KernelSVC(kernel="precomputed", tol=1e-5).fit(K, y)
    b = SVC(kernel="precomputed", tol=1e-5).fit(K, y)
    np.testing.assert_allclose(a.decision_function(K[:50]), b.decision_function(K[:50]),
                               atol=1e-3)
    assert a.support_vectors_.shape[0] == 0
    with pytest.raises(ValueError, match="square"):
        KernelSVC(kernel="precomputed").fit(K[:, :10], y)


@pytest.mark.parametrize("block", ["computed", "gathered"])
@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("cache_mb", [64, 0.02])
@pytest.mark.parametrize("working_set_size", [2, 16, 1024])
def test_dual_objective_any_cache_and_working_set(binary, shrinking, cache_mb,
                                                  working_set_size, block, monkeypatch):
    """Every configuration (evictions, column compaction, q = 2 i.e. plain SMO,
    working-set blocks computed by GEMM or gathered from the cached rows)
    reaches LIBSVM's dual objective."""
    from kernelscale.solvers.smo import _rows

    if block == "gathered":
        monkeypatch.setattr(_rows, "_BLOCK_MAX_FEATURES", 0)
    X, y = binary
    a = KernelSVC(gamma=0.1, tol=1e-4, shrinking=shrinking, cache_size=cache_mb,
                  working_set_size=working_set_size).fit(X, y)
    b = SVC(gamma=0.1, tol=1e-4).fit(X, y)
    K = rbf_kernel(X, gamma=0.1)
    ref = _sklearn_dual_objective(b, K)
    assert abs(a.objective_[0] - ref) <= 1e-5 * abs(ref)
    # the reported objective is the objective of the returned alphas
    d = a.dual_coef_.ravel()
    Ks = K[np.ix_(a.support_, a.support_)]
    assert abs(0.5 * d @ Ks @ d - np.abs(d).sum() - a.objective_[0]) <= 1e-5 * abs(ref)


def test_row_cache_rows_through_chunks_and_evictions(monkeypatch):
    # new rows are computed a few at a time into one reused buffer and copied to
    # scattered slots: every row fetched must be the kernel's row, whatever the
    # slots' order, chunking or evictions
    from kernelscale.solvers.smo import _rows

    monkeypatch.setattr(_rows, "_CHUNK_BYTES", 1)  # the minimum chunk of 8 rows
    X, _ = make_classification(n_samples=120, n_features=5, random_state=2)
    kernel = make_kernel("rbf", X)
    rows = KernelRows(X, kernel, 2**24)
    cache = RowCache(rows, 4 * 120 * 40)  # 40 slots: evictions from the third fetch on
    reference = kernel.gram(X, dtype=np.float32)
    rng = np.random.default_rng(0)
    for _ in range(12):
        indices = rng.choice(120, size=int(rng.integers(1, 30)), replace=False)
        slots = cache.fetch(indices)
        np.testing.assert_allclose(cache.storage[slots], reference[indices], rtol=2e-6, atol=1e-7)
    assert cache.misses > 120  # rows were evicted and computed again


def test_working_set_block_is_the_kernel_block():
    from kernelscale.solvers.smo import _rows

    X, _ = make_classification(n_samples=150, n_features=6, random_state=3)
    for name in ("rbf", "polynomial", "laplacian"):
        kernel = make_kernel(name, X)
        rows = KernelRows(X, kernel, 2**24)
        indices = np.array([7, 140, 3, 99, 3 + 50, 0])
        block = rows.block(indices)
        reference = kernel.gram(X[indices], X[indices], dtype=np.float64)
        assert block.dtype == np.float32 and block.shape == (6, 6)
        np.testing.assert_allclose(block, reference, rtol=1e-5, atol=1e-6)
    # SVR's doubled variables i and i + n share point i: the points' block
    from kernelscale.solvers.smo import PairedRows

    paired = PairedRows(KernelRows(X, kernel, 2**24))
    np.testing.assert_array_equal(paired.block(indices + np.array([150, 0, 150, 0, 0, 150])),
                                  rows.block(indices))
    # many features, or a precomputed matrix: gathered from the rows instead
    assert KernelRows(X, "precomputed", 2**24).block(indices) is None
    wide = np.random.default_rng(0).normal(size=(20, _rows._BLOCK_MAX_FEATURES + 1))
    assert KernelRows(wide, make_kernel("rbf", wide), 2**24).block(indices[:2]) is None


def test_compaction_forgets_the_rows_of_shrunk_variables():
    # a shrunk variable's row is never read before the next unshrink (which starts
    # from full rows again): its slot is freed, and every kept row is compacted
    X, _ = make_classification(n_samples=60, n_features=4, random_state=4)
    kernel = make_kernel("rbf", X)
    rows = KernelRows(X, kernel, 2**24)
    cache = RowCache(rows, 4 * 60 * 20)
    fetched = np.array([5, 17, 2, 40, 33, 9])
    cache.fetch(fetched)
    keep = np.array([0, 2, 5, 9, 17, 21, 33, 50])  # positions = variables (no permutation)
    cache.compact(keep, forget=np.array([40, 2, 58]))  # 58 was never cached
    assert cache.slot_of[40] == cache.slot_of[2] == -1
    assert np.sum(cache.index_of >= 0) == 4 and cache.width == keep.size
    reference = kernel.gram(X, dtype=np.float32)
    for v in (5, 17, 33, 9):
        np.testing.assert_allclose(cache.storage[cache.slot_of[v], :keep.size],
                                   reference[v, keep], rtol=2e-6, atol=1e-7)
    free = np.flatnonzero(cache.index_of < 0)
    assert free.size == cache.n_slots - 4  # the forgotten slots are free for new rows


def test_gradient_update_on_compacted_rows_equals_the_gathered_one():
    # the contiguous update (rows compacted to the active set) against the general
    # one through a column index, here the identity
    from kernelscale.solvers.smo._compiled import update_gradient

    rng = np.random.default_rng(5)
    data = rng.random((9, 2500)).astype(np.float32)
    slots = np.array([4, 0, 7, 2])
    coef, y = rng.normal(size=4), np.where(rng.random(2500) < 0.5, 1.0, -1.0)
    G0 = rng.normal(size=2500)
    a, b = G0.copy(), G0.copy()
    update_gradient(a, y, data, slots, coef, np.arange(2500), 2100)
    update_gradient(b, y, data, slots, coef, None, 2100)
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    expected = G0[:2100] + y[:2100] * (coef @ data[slots, :2100].astype(np.float64))
    np.testing.assert_allclose(b[:2100], expected, rtol=1e-12, atol=1e-12)
    assert np.array_equal(b[2100:], G0[2100:])  # inactive positions untouched


def test_solver_kkt_conditions():
    X, y = make_classification(n_samples=300, random_state=1)
    y = np.where(y == 1, 1.0, -1.0)
    C = np.full(y.size, 0.5)
    rows = KernelRows(X, make_kernel("rbf", X), 2**24)
    res = smo(rows, RowCache(rows, 2**20), y, C, tol=1e-6)
    alpha = res["alpha"]
    assert abs(alpha @ y) < 1e-9
    assert np.all(alpha >= 0) and np.all(alpha <= C)
    f = rbf_kernel(X, gamma=make_kernel("rbf", X).gamma) @ (alpha * y) + res["intercept"]
    margin = y * f
    free = (alpha > 1e-8) & (alpha < C - 1e-8)
    np.testing.assert_allclose(margin[free], 1.0, atol=1e-4)
    assert np.all(margin[alpha <= 1e-8] >= 1 - 1e-4)
    assert np.all(margin[alpha >= C - 1e-8] <= 1 + 1e-4)


def test_multiclass_digits_ovr_and_ovo():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    Xtr, ytr, Xte, yte = X[:1200], y[:1200], X[1200:], y[1200:]
    ovr = KernelSVC(C=10.0, multiclass="ovr").fit(Xtr, ytr)
    assert ovr.decision_function(Xte).shape == (len(Xte), 10)
    assert ovr.dual_coef_.shape == (10, ovr.support_.size)
    assert ovr.n_support_.sum() == ovr.support_.size
    assert ovr.score(Xte, yte) > 0.95
    ovo = KernelSVC(C=10.0, decision_function_shape="ovo", tol=1e-4).fit(Xtr, ytr)
    ref = SVC(C=10.0, decision_function_shape="ovo", tol=1e-4).fit(Xtr, ytr)
    assert ovo.decision_function(Xte).shape == (len(Xte), 45)
    np.testing.assert_allclose(ovo.decision_function(Xte), ref.decision_function(Xte),
                               atol=2e-3)
    assert np.mean(ovo.predict(Xte) == ref.predict(Xte)) > 0.99
    # the default: one-vs-one training, one score per class as SVC computes it
    default = KernelSVC(C=10.0, tol=1e-4).fit(Xtr, ytr)
    svc = SVC(C=10.0, tol=1e-4).fit(Xtr, ytr)
    assert default.decision_function(Xte).shape == (len(Xte), 10)
    np.testing.assert_allclose(default.decision_function(Xte), svc.decision_function(Xte),
                               atol=2e-3)
    # tied votes go to the first class, as in LIBSVM; break_ties=True: the arg-max
    np.testing.assert_array_equal(default.predict(Xte), svc.predict(Xte))
    tied = KernelSVC(C=10.0, tol=1e-4, break_ties=True).fit(Xtr, ytr)
    np.testing.assert_array_equal(
        tied.predict(Xte), tied.classes_[np.argmax(tied.decision_function(Xte), 1)])
    with pytest.raises(ValueError, match="multiclass='ovo'"):
        KernelSVC(multiclass="ovr", decision_function_shape="ovo").fit(Xtr, ytr)


def test_string_labels_class_and_sample_weights(binary):
    X, y = binary
    labels = np.array(["no", "yes"])[y]
    clf = KernelSVC(gamma=0.1).fit(X, labels)
    assert set(clf.predict(X)) <= {"no", "yes"}
    # C scaled by a constant sample weight is the same model as a larger C
    a = KernelSVC(gamma=0.1, C=1.0, tol=1e-5).fit(X, y, sample_weight=np.full(len(y), 3.0))
    b = KernelSVC(gamma=0.1, C=3.0, tol=1e-5).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-4)
    # class weights match LIBSVM's
    cw = {0: 0.5, 1: 2.0}
    c = KernelSVC(gamma=0.1, class_weight=cw, tol=1e-5).fit(X, y)
    d = SVC(gamma=0.1, class_weight=cw, tol=1e-5).fit(X, y)
    np.testing.assert_allclose(c.decision_function(X), d.decision_function(X), atol=1e-3)
    # "balanced" on an imbalanced problem recovers the minority class
    Xi, yi = make_classification(n_samples=400, weights=[0.9], random_state=3)
    plain = KernelSVC(C=0.1).fit(Xi, yi)
    balanced = KernelSVC(C=0.1, class_weight="balanced").fit(Xi, yi)
    minority = yi == 1
    assert (balanced.predict(Xi)[minority] == 1).mean() > (plain.predict(Xi)[minority] == 1).mean()


def test_sparse_input_equals_dense(binary):
    import scipy.sparse as sp

    X, y = binary
    a = KernelSVC(gamma=0.1).fit(sp.csr_matrix(X), y)
    b = KernelSVC(gamma=0.1).fit(X, y)
    np.testing.assert_allclose(a.decision_function(sp.csr_matrix(X)), b.decision_function(X),
                               atol=1e-5)


def test_errors_and_warnings(binary, capsys):
    X, y = binary
    with pytest.raises(MemoryBudgetError, match="cache_size"):
        # the cache serves the solver only when the kernel matrix is over the budget
        KernelSVC(cache_size=1e-5, memory_budget="1M").fit(X, y)
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        KernelSVC(memory_budget=100).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        KernelSVC(max_iter=3).fit(X, y)
    for bad, match in [(dict(C=0), "C=0 is not valid"), (dict(kernel="chi2"), "kernel"),
                       (dict(decision_function_shape="ova"), "decision_function_shape"),
                       (dict(solver="libsvm"), "solver"), (dict(max_iter=0), "max_iter"),
                       (dict(working_set_size=1), "working_set_size")]:
        with pytest.raises(ValueError, match=match):
            KernelSVC(**bad).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        KernelSVC().fit(X, np.zeros(len(y)))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KernelSVC().fit(Xn, y)
    with pytest.raises(NotFittedError):
        KernelSVC().predict(X)
    clf = KernelSVC(verbose=2).fit(X, y)  # verbose=1 is a progress bar (test_progress)
    # one binary problem reads its rows through the cache (fewer than the matrix has)
    assert "[KernelSVC] problem 1: 400 samples" in capsys.readouterr().out
    X3, y3 = make_blobs(150, centers=3, random_state=0)
    KernelSVC(verbose=2).fit(X3, y3)
    # several problems share the matrix
    assert "[SMO] problem 1 on the 150-row kernel matrix" in capsys.readouterr().out
    KernelSVC(verbose=2, memory_budget="1M").fit(X, y)  # the cached-rows solver
    assert "[SMO] outer" in capsys.readouterr().out
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])


def test_subgradient_solver_for_comparison():
    X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sub = KernelSVC(solver="subgradient", gamma=2.0, max_iter=300).fit(X, y)
    smo_fit = KernelSVC(gamma=2.0).fit(X, y)
    assert sub.score(X, y) > 0.9
    assert 0 < sub.n_iter_[0] < 300  # its own stopping rule ended it, not max_iter
    assert smo_fit.score(X, y) >= sub.score(X, y) - 0.02


# ---------------------------------------------------------------- doubly SGD


def test_doubly_sgd_learns_a_nonlinear_boundary():
    X, y = make_moons(n_samples=600, noise=0.15, random_state=0)
    clf = DoublySGDSVC(C=10.0, gamma=2.0, max_iter=300, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.95
    assert clf.coef_.shape == (300, 64, 1)  # memory O(iterations x block)


@pytest.mark.parametrize("loss", ["hinge", "log_loss"])
def test_doubly_sgd_multiclass_and_losses(loss):
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    clf = DoublySGDSVC(C=10.0, loss=loss, max_iter=300, eta0=5.0, random_state=0)
    clf.fit(X[:1200], y[:1200])
    assert clf.decision_function(X[1200:]).shape == (len(X) - 1200, 10)
    assert clf.score(X[1200:], y[1200:]) > 0.9


def test_doubly_sgd_is_reproducible_and_pickles_without_frequencies():
    X, y = make_moons(n_samples=300, noise=0.1, random_state=1)
    a = DoublySGDSVC(gamma=2.0, max_iter=60, random_state=7).fit(X, y)
    b = DoublySGDSVC(gamma=2.0, max_iter=60, random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    blob = pickle.dumps(a)
    assert len(blob) < a.coef_.nbytes * 3 + 100_000  # the frequencies are not stored
    c = pickle.loads(blob)
    np.testing.assert_allclose(c.decision_function(X), a.decision_function(X), rtol=1e-6)


def test_doubly_sgd_partial_fit_streams():
    X, y = make_blobs(n_samples=3000, centers=[[0, 0], [3, 3]], random_state=0)
    labels = np.array(["a", "b"])[y]
    clf = DoublySGDSVC(gamma=0.5, batch_size=100, random_state=0)
    for start in range(0, 3000, 500):
        clf.partial_fit(X[start:start + 500], labels[start:start + 500], classes=["a", "b"])
    assert clf.n_iter_ == 30
    assert clf.score(X, labels) > 0.95
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X[:10], np.array(["c"] * 10))
    with pytest.raises(ValueError, match="classes must be given"):
        DoublySGDSVC().partial_fit(X, labels)


def test_doubly_sgd_cached_values_equal_direct_evaluation():
    """fit switches to kept training values after one pass; the iterates are the same
    as with the batch evaluation that partial_fit uses."""
    X, y = make_moons(n_samples=256, noise=0.1, random_state=0)
    clf = DoublySGDSVC(gamma=2.0, max_iter=40, batch_size=64, random_state=0).fit(X, y)
    blocks = clf._state["blocks"]
    direct = blocks.all_values(X.astype(np.float32), clf._state["coef"])
    f = blocks.function(X.astype(np.float32), clf._state["coef"], 0.0)
    np.testing.assert_allclose(direct, f, rtol=1e-5, atol=1e-6)


def test_doubly_sgd_errors():
    X, y = make_moons(n_samples=100, random_state=0)
    for bad, match in [(dict(kernel="polynomial"), "kernel"), (dict(loss="squared"), "loss"),
                       (dict(eta0=0), "eta0"), (dict(batch_size=0), "batch_size"),
                       (dict(C=-1), "C=-1 is not valid")]:
        with pytest.raises(ValueError, match=match):
            DoublySGDSVC(**bad).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        DoublySGDSVC().fit(X, np.ones(len(y)))


# ---------------------------------------------------------------- real data


@pytest.mark.data
@pytest.mark.slow
def test_a9a_matches_libsvm_accuracy(a9a):
    X_train, y_train, X_test, y_test = a9a
    clf = KernelSVC(C=1.0).fit(X_train, y_train)
    # SVC(C=1, gamma="scale") on this split: 0.85056, 11784 support vectors
    assert abs(clf.score(X_test, y_test) - 0.85056) <= 0.001
    assert abs(clf.support_.size - 11784) <= 0.01 * 11784


@pytest.mark.data
def test_mnist_ovo_matches_libsvm_accuracy(mnist10k):
    X_train, y_train, X_test, y_test = mnist10k
    clf = KernelSVC(C=10.0).fit(X_train, y_train)  # one-vs-one, LIBSVM's way
    assert clf.score(X_test, y_test) >= 0.9795  # SVC: 0.9815
