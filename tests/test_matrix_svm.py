"""The SVM on a kernel matrix held whole: distances reused across gamma, the dense
SMO, C paths warm-started along C, folds cut from one matrix (the grid search's engine)."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from kernelscale import KernelSVC
from kernelscale.kernels import RBF, Laplacian
from kernelscale.solvers import (
    combine_scores,
    ovo_votes,
    pairs,
    solve_svm_path,
    svm_decision_values,
)
from kernelscale.solvers.smo import smo_dense, submatrix


def _dual(alpha, y, K):
    v = alpha * y
    return 0.5 * v @ K @ v - alpha.sum()


@pytest.mark.parametrize("kernel, reference", [(RBF, rbf_kernel), (Laplacian, laplacian_kernel)])
@pytest.mark.parametrize("factor", [0.25, 1.0, 4.0])
def test_kernel_from_distances_is_the_scaled_kernel(kernel, reference, factor):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(70, 5)), rng.normal(size=(30, 5))
    k = kernel(0.3)
    for D, Z in ((k.distances(X, dtype=np.float64), X), (k.distances(X, Y, dtype=np.float64), Y)):
        assert np.allclose(k.from_distances(D, factor), reference(X, Z, gamma=0.3 * factor),
                           atol=1e-12)
    D = k.distances(X, dtype=np.float32, memory_budget=4096)  # many row blocks
    assert D.dtype == np.float32 and np.all(np.diag(D) == 0)
    assert np.allclose(k.from_distances(D, factor), reference(X, gamma=0.3 * factor), atol=1e-5)


def test_submatrix_cuts_rows_and_columns():
    K = np.arange(100, dtype=np.float32).reshape(10, 10)
    rows, cols = np.array([7, 2, 5]), np.array([1, 9])
    assert np.array_equal(submatrix(K, rows), K[np.ix_(rows, rows)])
    assert np.array_equal(submatrix(K, rows, cols), K[np.ix_(rows, cols)])


@pytest.mark.parametrize("C", [0.1, 1.0, 100.0])
def test_smo_dense_matches_libsvm(C):
    X, y = make_classification(n_samples=300, n_features=6, flip_y=0.1, random_state=1)
    K = rbf_kernel(X, gamma=0.2)
    y_pm = np.where(y == 1, 1.0, -1.0)
    res = smo_dense(K.astype(np.float32), y_pm, np.full(300, C), tol=1e-4)
    ref = SVC(C=C, gamma=0.2, tol=1e-4).fit(X, y)
    alpha_ref = np.zeros(300)
    alpha_ref[ref.support_] = np.abs(ref.dual_coef_.ravel())
    assert res["converged"]
    assert _dual(res["alpha"], y_pm, K) == pytest.approx(_dual(alpha_ref, y_pm, K), rel=1e-4)
    ours = K @ (res["alpha"] * y_pm) + res["intercept"]
    assert np.max(np.abs(ours - ref.decision_function(X))) < 2e-2


def test_smo_dense_warm_start_reaches_the_cold_solution():
    X, y = make_classification(n_samples=250, n_features=5, flip_y=0.05, random_state=2)
    K = rbf_kernel(X, gamma=0.3).astype(np.float32)
    y_pm = np.where(y == 1, 1.0, -1.0)
    warm = smo_dense(K, y_pm, np.full(250, 1.0), tol=1e-5)
    hot = smo_dense(K, y_pm, np.full(250, 10.0), tol=1e-5, alpha0=warm["alpha"],
                    gradient0=warm["gradient"])
    cold = smo_dense(K, y_pm, np.full(250, 10.0), tol=1e-5)
    assert hot["n_iter"] < cold["n_iter"]
    assert _dual(hot["alpha"], y_pm, K) == pytest.approx(_dual(cold["alpha"], y_pm, K), rel=1e-5)
    with pytest.raises(ValueError, match="alpha0"):
        smo_dense(K, y_pm, np.full(250, 0.5), alpha0=np.full(250, 1.0))


def test_ovo_votes_counts_pairs():
    rng = np.random.default_rng(3)
    n_classes = 5
    scores = rng.normal(size=(40, n_classes * (n_classes - 1) // 2))
    votes = np.zeros((40, n_classes))
    for p, (i, j) in enumerate(pairs(n_classes)):
        votes[:, i] += scores[:, p] > 0
        votes[:, j] += scores[:, p] <= 0
    assert np.array_equal(np.floor(ovo_votes(scores, n_classes) + 0.5), votes)


@pytest.mark.parametrize("n_classes", [3, 5])
def test_vote_counts_equal_the_rounded_votes_with_ties_and_zeros(n_classes):
    # the vote-only rule (one product) against the counts of ovo_votes, rounded:
    # zero scores vote for the second class, tied counts go to the first class
    from kernelscale.solvers import ovo_classes
    rng = np.random.default_rng(n_classes)
    scores = np.sign(rng.normal(size=(300, n_classes * (n_classes - 1) // 2)))
    scores[:30] = 0.0
    scores[30:60, ::2] = 0.0
    expected = np.argmax(np.rint(ovo_votes(scores, n_classes)), axis=1)
    assert np.array_equal(ovo_classes(scores, n_classes), expected)


@pytest.mark.parametrize("class_sorted", [True, False])
def test_ovo_layout_scores_equal_each_pairs_own_product(class_sorted):
    # one product per class (the layout) against K[rows, pair] @ (alpha y) + b per pair,
    # with the rows sorted by class (as the grid keeps them) or interleaved
    from kernelscale.solvers import OvoLayout
    X, y = make_blobs(n_samples=200, centers=4, cluster_std=3.0, random_state=2)
    if class_sorted:
        order = np.argsort(y, kind="stable")
        X, y = X[order], y[order]
    classes, y_index = np.unique(y, return_inverse=True)
    K = rbf_kernel(X, gamma=0.1).astype(np.float32)
    val = np.arange(0, 200, 4)
    train = np.setdiff1d(np.arange(200), val)
    Cs = [0.5, 5.0]
    problems, results = solve_svm_path(
        K, y_index, classes, np.ones(200), Cs=Cs, folds=[train],
        class_weight=None, multiclass="ovo", tol=1e-4)
    layout = OvoLayout(problems, len(classes))
    scores = layout.decision_values(K, val, results[0])
    assert scores.shape == (2, val.size, len(problems))
    for c in range(len(Cs)):
        for p, ((members, y_pm, _), res) in enumerate(zip(problems, results[0][c])):
            assert np.all(res["alpha"][np.isin(members, val)] == 0)
            own = K[np.ix_(val, members)].astype(np.float64) @ (res["alpha"] * y_pm)
            # float32 products against float64: agreement to float32 rounding
            np.testing.assert_allclose(scores[c, :, p], own + res["intercept"], atol=1e-4)
    given = svm_decision_values(K, val, problems, results[0], 4, "ovo", layout)
    np.testing.assert_array_equal(given[1], scores[1])


def test_binary_scores_read_only_the_columns_with_coefficients():
    # the product runs over the columns some coefficient uses; an all-zero path
    # (no column used) gives the intercepts alone
    X, y = make_classification(150, n_features=4, random_state=3)
    K = rbf_kernel(X, gamma=0.3).astype(np.float32)
    classes, y_index = np.unique(y, return_inverse=True)
    val = np.arange(0, 150, 5)
    train = np.setdiff1d(np.arange(150), val)
    problems, results = solve_svm_path(K, y_index, classes, np.ones(150), Cs=[0.1, 10.0],
                                       folds=[train], class_weight=None, multiclass="ovr",
                                       tol=1e-4)
    scores = svm_decision_values(K, val, problems, results[0], 2, "ovr")
    for c in range(2):
        res = results[0][c][0]
        own = K[val].astype(np.float64) @ (res["alpha"] * problems[0][1]) + res["intercept"]
        np.testing.assert_allclose(scores[c][:, 0], own, atol=1e-4)
    empty = [[{**results[0][0][0], "alpha": np.zeros(150), "intercept": 0.25}]]
    np.testing.assert_array_equal(svm_decision_values(K, val, problems, empty, 2, "ovr")[0],
                                  np.full((val.size, 1), 0.25))


@pytest.mark.parametrize("multiclass, class_weight",
                         [("ovo", None), ("ovr", None), ("ovo", "balanced")])
def test_path_over_folds_equals_fitting_each_fold(multiclass, class_weight):
    X, y = make_blobs(n_samples=240, centers=4, cluster_std=2.5, random_state=0)
    y[:10] = 0  # unequal class sizes, so that "balanced" matters
    classes, y_index = np.unique(y, return_inverse=True)
    K = rbf_kernel(X, gamma=0.1).astype(np.float32)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    Cs = [0.1, 1.0, 10.0]
    problems, results = solve_svm_path(
        K, y_index, classes, np.ones(len(y)), Cs=Cs, folds=[tr for tr, _ in folds],
        class_weight=class_weight, multiclass=multiclass, tol=1e-5, n_jobs=2)
    for f, (train, val) in enumerate(folds):
        scores = svm_decision_values(K, val, problems, results[f], len(classes), multiclass)
        for c, C in enumerate(Cs):
            ref = KernelSVC(C=C, gamma=0.1, multiclass=multiclass, class_weight=class_weight,
                            tol=1e-5, decision_function_shape=multiclass).fit(X[train], y[train])
            assert np.max(np.abs(scores[c] - ref.decision_function(X[val]))) < 5e-3
            labels = classes[combine_scores(scores[c], len(classes), multiclass)]
            assert np.mean(labels == ref.predict(X[val])) >= 0.98


def test_dense_and_working_set_kernel_svc_agree():
    X, y = make_blobs(n_samples=300, centers=3, cluster_std=3.0, random_state=1)
    dense = KernelSVC(gamma=0.2, tol=1e-5).fit(X, y)
    rows = KernelSVC(gamma=0.2, tol=1e-5, memory_budget="600K").fit(X, y)
    assert np.max(np.abs(dense.decision_function(X) - rows.decision_function(X))) < 5e-3
    K = rbf_kernel(X, gamma=0.2).astype(np.float32)
    given = KernelSVC(gamma=0.2, tol=1e-5).fit(X, y, kernel_matrix=K)
    assert np.allclose(given.decision_function(X), dense.decision_function(X), atol=1e-4)


def test_tied_votes_go_to_the_first_class_as_in_libsvm():
    # three classes, each pair's score makes a cycle: one vote each
    scores = np.array([[1.0, -0.5, 2.0], [-1.0, 0.5, -2.0]])
    from kernelscale.solvers import ovo_classes
    assert list(ovo_classes(scores, 3)) == [0, 0]
    assert list(ovo_classes(scores, 3, break_ties=True)) == [1, 2]
    X, y = make_blobs(600, centers=6, cluster_std=4.0, random_state=0)
    ours = KernelSVC(gamma=0.05, C=0.1, tol=1e-5).fit(X, y)
    ref = SVC(gamma=0.05, C=0.1, tol=1e-5).fit(X, y)
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.995
    tied = KernelSVC(gamma=0.05, C=0.1, tol=1e-5, break_ties=True).fit(X, y)
    assert np.array_equal(tied.predict(X), np.argmax(tied.decision_function(X), axis=1))


def test_only_shift_invariant_kernels_offer_distances():
    from kernelscale.kernels import Kernel, Polynomial, ShiftInvariantKernel
    assert isinstance(RBF(1.0), ShiftInvariantKernel) and RBF(1.0).shift_invariant
    assert not hasattr(Polynomial(gamma=1.0), "distances")
    with pytest.raises(TypeError, match="abstract"):
        Kernel()


def test_workspace_bytes_counts_a_block_copy_only_where_one_is_cut():
    from kernelscale.solvers import fold_svm_problems, workspace_bytes
    y_index = np.repeat(np.arange(4), 100)
    classes, ones = np.arange(4), np.ones(400)
    ovr = fold_svm_problems(y_index, classes, ones, [np.arange(400)], None, "ovr")
    ovo = fold_svm_problems(y_index, classes, ones, [np.arange(400)], None, "ovo")
    # one-vs-rest over every row is solved on the matrix itself: compactions only
    assert workspace_bytes(ovr, 400) == 4 * 320**2
    # a pair's 200 rows are cut from it, then compacted
    assert workspace_bytes(ovo, 400) == 4 * (200**2 + 160**2)
    # a row of weight 0 leaves the problem: its block is cut too
    weights = ones.copy()
    weights[0] = 0.0
    cut = fold_svm_problems(y_index, classes, weights, [np.arange(400)], None, "ovr")
    assert workspace_bytes(cut, 400) == 4 * (399**2 + 319**2)


def test_kernel_svc_on_its_matrix_runs_the_threads_whose_copies_fit():
    # regression: the matrix route took 8 n^2 bytes as its whole need, while each of
    # n_jobs threads also compacts a copy of its problem (0.64 n^2 entries for one-vs-rest)
    import warnings

    from kernelscale._config import format_bytes
    X, y = make_blobs(400, centers=4, random_state=0)
    n, each = 400, 4 * 320**2
    model = KernelSVC(multiclass="ovr", n_jobs=2).fit(X, y)
    reference = model.decision_function(X)
    # the planner's need with one thread: the matrix, one copy, the solver's vectors
    plan = model.memory_plan_
    assert plan.choice == "matrix" and plan.parts["kernel matrix"] == 4 * n * n
    assert plan.parts["thread copies"] == each
    one_thread = plan.total
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both = KernelSVC(multiclass="ovr", n_jobs=2, memory_budget=one_thread + each)
        assert np.array_equal(both.fit(X, y).decision_function(X), reference)
    need = format_bytes(one_thread + each)
    with pytest.warns(UserWarning, match=rf"runs 1 thread.*>= {need} would run them all"):
        one = KernelSVC(multiclass="ovr", n_jobs=2, memory_budget=one_thread + each - 1)
        one.fit(X, y)
    # the same problems on one thread: the same solution
    assert np.array_equal(one.decision_function(X), reference)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # below the matrix and one thread's copy: row caches, the same model within tol
        rows = KernelSVC(multiclass="ovr", n_jobs=2, memory_budget=one_thread - 1)
        assert rows.fit(X, y).memory_plan_.choice.startswith("row cache")
        assert np.abs(rows.decision_function(X) - reference).max() < 1e-2
