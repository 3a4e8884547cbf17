"""The exact family's grid engine: the compiled path of solves, the queue of units
shared by threads across gammas, and the rows reordered by class for one-vs-one."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification, make_moons
from sklearn.model_selection import StratifiedKFold

from kernelscale import KernelSVC
from kernelscale.model_selection._exact import exact_svm_grid
from kernelscale.model_selection._exact_rows import exact_svm_rows_grid
from kernelscale.solvers.smo import DenseWorkspace, smo_dense, smo_dense_path


@pytest.fixture(scope="module")
def moons():
    return make_moons(300, noise=0.3, random_state=0)


def _accuracy(y_val, classes):
    def score(f, values):
        if values.shape[1] == 1:
            labels = (values[:, 0] > 0).astype(int)
        else:
            from kernelscale.solvers import combine_scores
            labels = combine_scores(values, len(classes), "ovo")
        return float(np.mean(classes[labels] == y_val[f]))
    return score


def test_path_equals_one_solve_per_C_and_fold():
    X, y = make_classification(200, n_features=6, random_state=0)
    y_pm = np.where(y > 0, 1.0, -1.0)
    K = np.exp(-0.2 * ((X[:, None] - X[None]) ** 2).sum(-1)).astype(np.float32)
    weights = np.ones((2, 200))
    weights[0, :50] = 0.0  # fold 0 leaves the first 50 rows out
    weights[1, 150:] = 0.0
    Cs = np.array([0.1, 1.0, 10.0])
    path = smo_dense_path(K, y_pm, weights, Cs, tol=1e-5)
    for f in range(2):
        live = weights[f] > 0
        Kf = K[np.ix_(live, live)].copy()
        for c, C in enumerate(Cs):
            ref = smo_dense(Kf, y_pm[live], np.full(live.sum(), C), tol=1e-5)
            assert abs(path["objective"][f, c] - ref["objective"]) <= 1e-5 * abs(ref["objective"])
            assert np.all(path["alpha"][f, c][~live] == 0)
            assert path["intercept"][f, c] == pytest.approx(ref["intercept"], abs=1e-3)
    assert path["converged"].all() and (path["n_iter"] > 0).all()


def test_path_on_rows_of_a_larger_matrix_equals_the_path_on_their_block():
    # a class pair of a matrix shared by all pairs: the folds' blocks are cut
    # from the whole matrix at the pair's rows, with no copy of the pair's block
    X, y = make_classification(120, n_features=5, random_state=1)
    K = np.exp(-0.3 * ((X[:, None] - X[None]) ** 2).sum(-1)).astype(np.float32)
    rows = np.sort(np.random.default_rng(0).choice(120, 70, replace=False))
    y_pm = np.where(y[rows] > 0, 1.0, -1.0)
    weights = np.ones((2, 70))
    weights[0, :20] = 0.0
    weights[1, 50:] = 0.5
    Cs = np.array([0.3, 3.0])
    on_rows = smo_dense_path(K, y_pm, weights, Cs, rows=rows)
    on_block = smo_dense_path(K[np.ix_(rows, rows)].copy(), y_pm, weights, Cs)
    for key in ("alpha", "intercept", "objective", "n_iter"):
        np.testing.assert_array_equal(on_rows[key], on_block[key])
    with pytest.raises(ValueError, match="row indices of K"):
        smo_dense_path(K, y_pm, weights, Cs, rows=rows + 60)


def _blob_problem(n, seed, dtype=np.float32):
    # well separated: most variables end at 0, so shrinking compacts the block
    X, y = make_blobs(n, centers=2, cluster_std=2.0, random_state=seed)
    K = np.exp(-0.1 * ((X[:, None] - X[None]) ** 2).sum(-1)).astype(dtype)
    weights = np.ones((3, n))
    for f in range(3):
        weights[f, f::3] = 0.0
    return K, np.where(y > 0, 1.0, -1.0), weights


def test_a_workspace_kept_across_calls_changes_no_result():
    # one thread's scratch memory serves problem after problem, growing for a
    # larger one and kept for a smaller one; float64 kernels get their own
    work = DenseWorkspace()
    Cs = np.array([0.1, 1.0, 100.0])
    problems = [_blob_problem(300, 0), _blob_problem(450, 1), _blob_problem(200, 2),
                _blob_problem(250, 3, np.float64)]
    kept = None
    for K, y_pm, weights in problems:
        shared = smo_dense_path(K, y_pm, weights, Cs, workspace=work)
        own = smo_dense_path(K, y_pm, weights, Cs)
        for key in ("alpha", "intercept", "objective", "n_iter"):
            np.testing.assert_array_equal(shared[key], own[key])
        buffers = work.buffers(K.shape[0] * 2 // 3, K.dtype)
        assert buffers[0].dtype == K.dtype and buffers[0].size >= (K.shape[0] * 2 // 3) ** 2
        if K.shape[0] == 200:  # after the 450-row problem: nothing new allocated
            assert all(a is b for a, b in zip(buffers, kept))
        kept = buffers
    fold, compact = DenseWorkspace().buffers(100, np.float32)
    assert fold.size == 100 * 100 and compact.size == 80 * 80


def test_compacting_solves_equal_libsvm_objectives():
    # every fold shrinks (most alphas at 0), so the compacted block serves most updates
    from sklearn.svm import SVC
    K, y_pm, weights = _blob_problem(600, 4, np.float64)
    path = smo_dense_path(K, y_pm, weights, np.array([1.0, 10.0]), tol=1e-4)
    for f in range(3):
        live = weights[f] > 0
        Kf = K[np.ix_(live, live)]
        for c, C in enumerate((1.0, 10.0)):
            ref = SVC(C=C, kernel="precomputed", tol=1e-4).fit(Kf, y_pm[live])
            a = np.zeros(live.sum())
            a[ref.support_] = np.abs(ref.dual_coef_.ravel())
            v = a * y_pm[live]
            assert path["objective"][f, c] == pytest.approx(0.5 * v @ Kf @ v - a.sum(), rel=1e-4)


def test_path_needs_increasing_Cs():
    with pytest.raises(ValueError, match="increasing"):
        smo_dense_path(np.eye(2), np.array([1.0, -1.0]), np.ones((1, 2)), np.array([1.0, 0.1]))
    with pytest.raises(ValueError, match="> 0"):
        smo_dense_path(np.eye(2), np.array([1.0, -1.0]), np.ones((1, 2)), np.array([0.0, 1.0]))


def test_path_starts_from_the_scaled_solution_where_it_is_better():
    # K = I with C < 1 puts every alpha at its bound: the solution at 0.1 scaled
    # to 0.5 is the optimum there, where keeping it would need n / 2 updates
    y = np.tile([1.0, -1.0], 20)
    path = smo_dense_path(np.eye(40), y, np.ones((1, 40)), np.array([0.1, 0.5, 0.5]))
    assert path["n_iter"][0, 0] == 20
    assert path["n_iter"][0, 1] == 0 and path["n_iter"][0, 2] == 0
    np.testing.assert_allclose(path["alpha"][0, 1], 0.5)


def _grid(X, y, n_jobs, multiclass="ovo", budget=2**30):
    classes, y_index = np.unique(y, return_inverse=True)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    y_val = [y[val] for _, val in folds]
    return exact_svm_grid(
        X, y_index, classes, np.ones(len(y)), folds, gamma_ref=1 / (X.shape[1] * X.var()),
        factors=[0.5, 1.0, 2.0], Cs=[0.3, 3.0], class_weight=None, multiclass=multiclass,
        tol=1e-3, score=_accuracy(y_val, classes), memory_budget=budget, n_jobs=n_jobs), folds


@pytest.mark.parametrize("centers", [2, 4])
def test_threads_give_the_same_grid(centers):
    X, y = make_blobs(240, centers=centers, cluster_std=3.0, random_state=0)
    (one, complete_one), _ = _grid(X, y, 1)
    (two, complete_two), _ = _grid(X, y, 2)
    assert complete_one and complete_two and len(one) == len(two) == 6
    for a, b in zip(one, two):
        assert (a["gamma"], a["C"]) == (b["gamma"], b["C"])
        assert a["scores"] == b["scores"] and a["n_iter"] == b["n_iter"]


def test_one_vs_one_grid_scores_are_each_folds_own_fit():
    # labels interleaved, so that sorting the rows by class really moves them
    X, y = make_blobs(300, centers=4, cluster_std=2.5, random_state=1)
    (records, _), folds = _grid(X, y, 2)
    for record in records:
        for f, (train, val) in enumerate(folds):
            model = KernelSVC(C=record["C"], gamma=record["gamma"]).fit(X[train], y[train])
            # at most one validation row on the other side of a +-tol boundary
            assert abs(record["scores"][f] - model.score(X[val], y[val])) <= 1 / len(val) + 1e-12


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_kernel_per_gamma_when_the_distances_do_not_fit(n_jobs):
    X, y = make_blobs(240, centers=3, cluster_std=3.0, random_state=0)
    (shared, _), folds = _grid(X, y, n_jobs)
    # 4 n^2 + the threads' fold blocks <= budget < 8 n^2: one kernel at a time, each its
    # own GEMM
    (own, complete), _ = _grid(X, y, n_jobs, budget=400_000)
    assert complete
    for a, b in zip(shared, own):
        for f, (_, val) in enumerate(folds):
            assert abs(a["scores"][f] - b["scores"][f]) <= 1 / len(val) + 1e-12


def test_the_threads_fold_blocks_count_against_the_budget():
    # binary, 240 rows, 3 folds: the kernel is 230 KB, each thread's fold block and
    # compaction buffer 4 (160^2 + 128^2) = 168 KB

    from kernelscale._planner import exact_grid_plan
    from kernelscale.solvers import workspace_bytes
    X, y = make_blobs(240, centers=2, cluster_std=4.0, random_state=0)
    one, each = 4 * 240**2, 4 * (160**2 + 128**2)
    (free, _), folds = _grid(X, y, 2, multiclass="ovr")

    def threads_keep(budget):
        plan = exact_grid_plan(240, each, 2, budget)
        return plan.threads, plan.choice == "distances"
    assert threads_keep(2 * one + 2 * each) == (2, True)
    assert threads_keep(2 * one + 2 * each - 1) == (2, False)
    assert threads_keep(one + 2 * each) == (2, False)
    assert threads_keep(one + 2 * each - 1) == (1, False)
    assert exact_grid_plan(240, each, 2, one + each - 1).choice == "rows"
    with pytest.warns(UserWarning, match=rf"runs 1 thread.*>= {(one + 2 * each) // 1024}"):
        (tight, complete), _ = _grid(X, y, 2, multiclass="ovr", budget=one + 2 * each - 1)
    assert complete
    # each gamma's kernel is then its own GEMM (float32 rounding apart from the distances')
    for a, b in zip(free, tight):
        for f, (_, val) in enumerate(folds):
            assert abs(a["scores"][f] - b["scores"][f]) <= 1 / len(val) + 1e-12
    from kernelscale.solvers import fold_svm_problems
    classes, y_index = np.unique(y, return_inverse=True)
    problems = fold_svm_problems(y_index, classes, np.ones(240), [tr for tr, _ in folds],
                                 None, "ovr")
    assert workspace_bytes(problems, 240) == each


def test_the_search_keeps_the_matrix_only_where_one_thread_copy_fits_too(moons):
    # regression: the search chose the matrix grid at 4 n^2 bytes, and one thread's fold
    # blocks (4.2 n^2 more on 5 folds) then ran it over the budget
    import warnings

    from kernelscale import KernelClassifierCV
    from kernelscale._config import format_bytes
    from kernelscale.model_selection._exact import exact_grid_bytes, exact_matrix_bytes
    X, y = moons
    classes, y_index = np.unique(y, return_inverse=True)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    least, shared = exact_grid_bytes(y_index, classes, np.ones(len(y)), folds, None, "ovr")
    # 240 training rows a fold: the block and its largest compaction, float32
    assert least == exact_matrix_bytes(300) + 4 * (240**2 + 192**2)
    assert shared == least + exact_matrix_bytes(300)
    search = dict(families="exact-svm", gamma_factors=[0.5, 2], Cs=[1, 10], cv=folds,
                  random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelClassifierCV(memory_budget=least, **search).fit(X, y)
    with pytest.warns(UserWarning, match=rf"fold blocks need .*>= {format_bytes(least)} holds"):
        KernelClassifierCV(memory_budget=least - 1, **search).fit(X, y)


def _rows_grid(X, y, budget):
    classes, y_index = np.unique(y, return_inverse=True)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    y_val = [y[val] for _, val in folds]
    return exact_svm_rows_grid(
        X, y_index, classes, np.ones(len(y)), folds, gamma_ref=1 / (X.shape[1] * X.var()),
        factors=[0.5, 1.0, 2.0], Cs=[0.3, 3.0], class_weight=None, multiclass="ovo",
        tol=1e-3, score=_accuracy(y_val, classes), memory_budget=budget)


@pytest.mark.parametrize("centers", [2, 4])
@pytest.mark.parametrize("budget", [350_000, 100_000])  # every row cached; a few dozen
def test_row_cache_grid_equals_the_matrix_grid(centers, budget):
    X, y = make_blobs(240, centers=centers, cluster_std=3.0, random_state=0)
    (matrix, _), folds = _grid(X, y, 1)
    rows, complete = _rows_grid(X, y, budget)
    assert complete and len(rows) == len(matrix)
    for a, b in zip(matrix, rows):
        assert (a["gamma"], a["C"]) == (b["gamma"], b["C"])
        # the two solvers stop within tol of the same optimum: a row at most may flip
        for f, (_, val) in enumerate(folds):
            assert abs(a["scores"][f] - b["scores"][f]) <= 1 / len(val) + 1e-12


def test_search_over_the_budget_shares_a_row_cache(moons):
    from kernelscale import KernelClassifierCV
    X, y = moons
    with pytest.warns(UserWarning, match="cache shared by the folds"):
        small = KernelClassifierCV(families="exact-svm", gamma_factors=[0.5, 2], Cs=[1, 10],
                                   memory_budget="300K", random_state=0).fit(X, y)
    full = KernelClassifierCV(families="exact-svm", gamma_factors=[0.5, 2], Cs=[1, 10],
                              random_state=0).fit(X, y)
    # the same folds: each fold's score within one validation row of the shared matrix's
    for k in range(5):
        assert np.allclose(small.cv_results_[f"split{k}_test_score"],
                           full.cv_results_[f"split{k}_test_score"], atol=1 / 60 + 1e-12)
    assert small.best_params_ == full.best_params_


def test_search_budget_below_two_rows_is_one_clear_error(moons):
    from kernelscale import KernelClassifierCV
    X, y = moons
    with pytest.raises(Exception, match=r"cannot hold two kernel rows of \d+ values .* give "
                                        r"memory_budget >= "):
        KernelClassifierCV(families="exact-svm", memory_budget="2K").fit(X, y)


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
def test_kernel_svc_threads_solve_the_same_problems(multiclass):
    X, y = make_blobs(300, centers=4, cluster_std=2.5, random_state=0)
    one = KernelSVC(multiclass=multiclass).fit(X, y)
    two = KernelSVC(multiclass=multiclass, n_jobs=2).fit(X, y)
    assert np.array_equal(one.support_, two.support_)
    assert np.array_equal(one.dual_coef_, two.dual_coef_)
    assert np.array_equal(one.intercept_, two.intercept_)
