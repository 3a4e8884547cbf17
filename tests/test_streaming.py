"""Streaming on one machine: chunked readers, chunked fits, partial_fit, fit --stream."""

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from kernelscale import (
    ApproxKernelPCA,
    ApproxKernelRidge,
    ApproxKernelRidgeClassifier,
    ApproxKernelSVC,
    KernelLogisticRegression,
    KernelOneClassSVM,
    KernelSVC,
    KernelSVR,
    LinearSVC,
)
from kernelscale.datasets import (
    ArrayChunks,
    CsvChunks,
    NonlinearChunks,
    NpyChunks,
    SvmlightChunks,
    load_svmlight,
    make_nonlinear_problem,
    open_chunks,
)

# parity tests stop L-BFGS where the line search can go no further
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def problem():
    X, y = make_nonlinear_problem(6000, random_state=3)
    X_test, y_test = make_nonlinear_problem(2000, random_state=3, rows_seed=1)
    return X, y, X_test, y_test


def _relative(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


# ------------------------------------------------------------------ readers

def test_array_chunks_cover_the_rows_in_order():
    X = np.arange(50.0).reshape(25, 2)
    data = ArrayChunks(X, np.arange(25) % 3, chunk_rows=7)
    chunks = list(data)
    assert [len(c[0]) for c in chunks] == [7, 7, 7, 4]
    np.testing.assert_array_equal(np.vstack([c[0] for c in chunks]), X)
    assert data.classes().tolist() == [0, 1, 2]
    assert data.n_samples == 25
    Xh, yh = data.head(10)
    assert Xh.shape == (10, 2) and len(yh) == 10


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_chunk_rows_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="chunk_rows"):
        ArrayChunks(np.zeros((3, 2)), chunk_rows=bad)


@pytest.mark.parametrize("label_column", [-1, 0, None])
def test_npy_chunks_split_the_label_column(tmp_path, label_column):
    X, y = make_nonlinear_problem(1000)
    table = np.column_stack([X, y]) if label_column == -1 else (
        np.column_stack([y, X]) if label_column == 0 else X)
    path = tmp_path / "d.npy"
    np.save(path, table)
    data = NpyChunks(path, label_column=label_column, chunk_rows=300)
    Xs = np.vstack([c[0] for c in data])
    np.testing.assert_array_equal(Xs, X)
    if label_column is None:
        assert not data.has_labels
    else:
        np.testing.assert_array_equal(np.concatenate([c[1] for c in data]), y)
        assert data.classes().tolist() == [0, 1]


def test_npy_chunks_reject_bad_files(tmp_path):
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(ValueError, match="not a valid .npy"):
        NpyChunks(tmp_path / "junk.npy")
    np.save(tmp_path / "one.npy", np.zeros(5))
    with pytest.raises(ValueError, match="2-D numeric"):
        NpyChunks(tmp_path / "one.npy")
    np.save(tmp_path / "two.npy", np.zeros((5, 3)))
    with pytest.raises(ValueError, match="column names"):
        NpyChunks(tmp_path / "two.npy", label_column="label")
    with pytest.raises(FileNotFoundError):
        NpyChunks(tmp_path / "missing.npy")


def test_csv_chunks_match_the_whole_file_loader(tmp_path):
    from kernelscale.datasets import load_csv

    rng = np.random.default_rng(0)
    X = rng.normal(size=(53, 3))
    labels = np.where(rng.random(53) > 0.5, "cat", "dog")
    path = tmp_path / "d.csv"
    with open(path, "w") as fh:
        fh.write("a,b,label,c\n")
        for row, label in zip(X, labels):
            fh.write(f"{row[0]},{row[1]},{label},{row[2]}\n")
    data = CsvChunks(path, label_column="label", chunk_rows=10)
    Xs = np.vstack([c[0] for c in data])
    ys = np.concatenate([c[1] for c in data])
    X_all, y_all = load_csv(path, label_column="label")
    np.testing.assert_allclose(Xs, X_all)
    np.testing.assert_array_equal(ys, y_all)
    assert data.classes().tolist() == ["cat", "dog"]


def test_csv_chunks_name_the_bad_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("1,2,0\n3,4,1\n" * 10 + "5,x,1\n")
    with pytest.raises(ValueError, match="line 21, column 2: 'x' is not a number"):
        list(CsvChunks(path, chunk_rows=4))
    path.write_text("1,2,0\n3,4\n")
    with pytest.raises(ValueError, match="line 2: 2 fields"):
        list(CsvChunks(path, chunk_rows=4))


def test_svmlight_chunks_match_the_whole_file_loader(tmp_path):
    X, y = make_nonlinear_problem(700)
    X[np.abs(X) < 0.8] = 0.0
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(path))
    data = SvmlightChunks(path, chunk_rows=128)
    assert data.n_features == 28
    chunks = list(data)
    assert all(sp.issparse(c[0]) for c in chunks)
    X_all, y_all = load_svmlight(path)
    np.testing.assert_allclose(sp.vstack([c[0] for c in chunks]).toarray(), X_all.toarray())
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), y_all)


def test_svmlight_chunks_name_the_bad_line(tmp_path):
    path = tmp_path / "bad.svm"
    path.write_text("1 1:0.5 2:1\n" * 5 + "0 1:0.5 2:abc\n")
    with pytest.raises(ValueError, match="line 6"):
        list(SvmlightChunks(path, n_features=2, chunk_rows=4))


def test_nonlinear_chunks_equal_the_in_memory_problem():
    X, y = make_nonlinear_problem(3000, random_state=2)
    data = NonlinearChunks(3000, chunk_rows=1100, random_state=2)
    np.testing.assert_array_equal(np.vstack([c[0] for c in data]), X)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in data]), y)


def test_open_chunks_dispatches_by_suffix(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((4, 3)))
    (tmp_path / "b.csv").write_text("1,2,0\n")
    (tmp_path / "c.svm").write_text("1 1:1\n")
    np.savez(tmp_path / "d.npz", X=np.zeros((2, 2)))
    assert isinstance(open_chunks(tmp_path / "a.npy"), NpyChunks)
    assert isinstance(open_chunks(tmp_path / "b.csv"), CsvChunks)
    assert isinstance(open_chunks(tmp_path / "c.svm"), SvmlightChunks)
    with pytest.raises(ValueError, match="cannot be streamed"):
        open_chunks(tmp_path / "d.npz")
    with pytest.raises(ValueError, match="Unknown chunked format"):
        open_chunks(tmp_path / "a.npy", format="parquet")


# ------------------------------------------------------------ chunked fits

@pytest.mark.parametrize("chunk_rows", [500, 1777, 6000])
def test_streamed_ridge_equals_in_memory_ridge(problem, chunk_rows):
    X, y, X_test, y_test = problem
    make = lambda: ApproxKernelRidgeClassifier(  # noqa: E731
        feature_map="rff", n_components=128, gamma=0.02, dtype="float64", random_state=0)
    # the streamed map is fitted on the first rows: fit both maps on the same rows
    memory = make().fit(X, y)
    streamed = make().fit(ArrayChunks(X, y, chunk_rows=chunk_rows))
    assert _relative(streamed.coef_, memory.coef_) < 1e-6
    np.testing.assert_allclose(streamed.intercept_, memory.intercept_, atol=1e-8)
    assert streamed.score(X_test, y_test) == memory.score(X_test, y_test)


def test_streamed_ridge_regressor_and_partial_fit_are_exact(problem):
    X, y, _, _ = problem
    target = X[:, 0] ** 2 + np.sin(X[:, 1])
    make = lambda: ApproxKernelRidge(feature_map="rff", n_components=64,  # noqa: E731
                                     gamma=0.1, dtype="float64", random_state=0)
    memory = make().fit(X, target)
    streamed = make().fit(ArrayChunks(X, target, chunk_rows=900))
    assert _relative(streamed.coef_, memory.coef_) < 1e-6
    online = make()
    for start in range(0, len(X), 1000):
        online.partial_fit(X[start:start + 1000], target[start:start + 1000])
    # partial_fit fits its map on the first chunk: same RFF draws, so same model
    assert _relative(online.coef_, memory.coef_) < 1e-6
    assert online.predict(X[:5]).shape == (5,)


def test_ridge_classifier_partial_fit_equals_fit(problem):
    X, y, X_test, y_test = problem
    make = lambda: ApproxKernelRidgeClassifier(  # noqa: E731
        feature_map="rff", n_components=128, gamma=0.02, dtype="float64", random_state=0)
    memory = make().fit(X, y)
    online = make()
    for start in range(0, len(X), 1500):
        online.partial_fit(X[start:start + 1500], y[start:start + 1500], classes=[0, 1])
    assert _relative(online.coef_, memory.coef_) < 1e-6
    # fit after partial_fit starts again; partial_fit after fit goes on
    memory.partial_fit(X[:100], y[:100])
    assert not np.allclose(memory.coef_, online.coef_)


def test_partial_fit_errors(problem):
    X, y, _, _ = problem
    clf = ApproxKernelRidgeClassifier(feature_map="rff", n_components=16, random_state=0)
    with pytest.raises(ValueError, match="classes must be given"):
        clf.partial_fit(X[:100], y[:100])
    clf.partial_fit(X[:100], y[:100], classes=[0, 1])
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:100, :5], y[:100])
    with pytest.raises(ValueError, match="not among the classes"):
        clf.partial_fit(X[:10], np.full(10, 7))
    with pytest.raises(ValueError, match="differs from the first call"):
        clf.partial_fit(X[:10], y[:10], classes=[0, 1, 2])
    balanced = ApproxKernelSVC(feature_map="rff", n_components=16, class_weight="balanced")
    with pytest.raises(ValueError, match="balanced"):
        balanced.partial_fit(X[:100], y[:100], classes=[0, 1])


def test_streamed_squared_hinge_svm_matches_in_memory(problem):
    X, y, X_test, y_test = problem
    make = lambda: ApproxKernelSVC(feature_map="rff", n_components=128,  # noqa: E731
                                   gamma=0.02, C=1.0, tol=1e-6, max_iter=2000,
                                   random_state=0)
    memory = make().fit(X, y)
    streamed = make().fit(ArrayChunks(X, y, chunk_rows=1300))
    assert _relative(streamed.coef_, memory.coef_) < 2e-3
    assert abs(streamed.score(X_test, y_test) - memory.score(X_test, y_test)) <= 0.001


def test_streamed_linear_svc_on_sparse_svmlight_chunks(tmp_path):
    from sklearn.datasets import make_classification

    X, y = make_classification(800, 30, n_informative=10, n_classes=3, random_state=0)
    X[np.abs(X) < 0.5] = 0.0
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(path))
    memory = LinearSVC(C=0.5, tol=1e-6, max_iter=3000).fit(*load_svmlight(path))
    streamed = LinearSVC(C=0.5, tol=1e-6, max_iter=3000).fit(SvmlightChunks(path, chunk_rows=200))
    assert streamed.classes_.tolist() == [0, 1, 2]
    assert _relative(streamed.coef_, memory.coef_) < 5e-3
    assert np.mean(streamed.predict(X) == memory.predict(X)) > 0.99


def test_streamed_balanced_svm_counts_the_classes_first(problem):
    X, y, _, _ = problem
    keep = (y == 1) | (np.arange(len(y)) % 4 == 0)  # 1 : 4 imbalance
    make = lambda: ApproxKernelSVC(feature_map="rff", n_components=64,  # noqa: E731
                                   gamma=0.02, class_weight="balanced", tol=1e-6,
                                   max_iter=2000, random_state=0)
    memory = make().fit(X[keep], y[keep])
    streamed = make().fit(ArrayChunks(X[keep], y[keep], chunk_rows=700))
    assert _relative(streamed.coef_, memory.coef_) < 2e-3


def test_hinge_loss_cannot_be_streamed(problem):
    X, y, _, _ = problem
    with pytest.raises(ValueError, match="squared_hinge"):
        ApproxKernelSVC(loss="hinge", n_components=16).fit(ArrayChunks(X, y))


def test_streamed_logistic_regression_matches_in_memory(problem):
    X, y, X_test, _ = problem
    make = lambda: KernelLogisticRegression(feature_map="rff", n_components=64,  # noqa: E731
                                            gamma=0.02, C=10.0, tol=1e-8, random_state=0)
    memory = make().fit(X, y)
    streamed = make().fit(ArrayChunks(X, y, chunk_rows=2500))
    assert _relative(streamed.coef_, memory.coef_) < 1e-3
    np.testing.assert_allclose(streamed.predict_proba(X_test), memory.predict_proba(X_test),
                               atol=1e-3)


def test_streamed_kernel_pca_matches_in_memory(problem):
    X, _, X_test, _ = problem
    make = lambda: ApproxKernelPCA(n_components=3, feature_map="rff",  # noqa: E731
                                   map_components=64, dtype="float64", random_state=0)
    memory = make().fit(X)
    streamed = make().fit(ArrayChunks(X, chunk_rows=999))
    np.testing.assert_allclose(np.abs(streamed.transform(X_test)),
                               np.abs(memory.transform(X_test)), atol=1e-6)


def test_asgd_partial_fit_approaches_the_batch_svm():
    """Online SGD is for long streams: two passes over 40,000 rows come near the batch SVM."""
    X, y = make_nonlinear_problem(40_000, random_state=3)
    X_test, y_test = make_nonlinear_problem(4000, random_state=3, rows_seed=1)
    make = lambda: ApproxKernelSVC(feature_map="rff", n_components=128,  # noqa: E731
                                   gamma=0.02, C=1.0, random_state=0)
    batch = make().fit(X, y).score(X_test, y_test)
    online = make()
    for _ in range(2):
        for start in range(0, len(X), 5000):
            online.partial_fit(X[start:start + 5000], y[start:start + 5000], classes=[0, 1])
    assert online.score(X_test, y_test) >= batch - 0.015
    from kernelscale.models.linear._approx_svc import _SGD_BATCH

    assert online.n_iter_ == 2 * 8 * -(-5000 // _SGD_BATCH)  # mini-batches per chunk


@pytest.mark.parametrize("model", [KernelSVC, KernelSVR, KernelOneClassSVM])
@pytest.mark.parametrize("with_y", [True, False])
def test_models_that_need_memory_refuse_chunked_data(problem, model, with_y):
    # chunked data carry their labels: fit(chunks) alone (no y) gets the same
    # message, not Python's missing-argument error (a defect until stop 27)
    X, y, _, _ = problem
    with pytest.raises(TypeError, match="needs its data in memory"):
        model().fit(ArrayChunks(X, y), *([None] if with_y else []))


def test_exact_svms_still_require_y(problem):
    X, y, _, _ = problem
    for model in (KernelSVC, KernelSVR):
        with pytest.raises(ValueError, match="requires y"):
            model().fit(X[:50])


def test_fit_with_chunks_refuses_a_separate_y(problem):
    X, y, _, _ = problem
    with pytest.raises(ValueError, match="carries its own labels"):
        ApproxKernelRidgeClassifier().fit(ArrayChunks(X, y), y)


def test_streamed_fit_keeps_to_the_memory_budget():
    """Peak traced memory stays near the budget, far below the full feature matrix."""
    n, width = 60_000, 512  # features of all rows: 60k x 512 x 4 B = 123 MB
    data = NonlinearChunks(n, chunk_rows=4096)
    model = ApproxKernelRidgeClassifier(feature_map="rff", n_components=width, gamma=0.02,
                                        memory_budget=4 * 2**20, random_state=0)
    tracemalloc.start()
    try:
        model.fit(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # statistics (2 x 512^2 float64 = 4 MB), one chunk and its blocks, the map sample
    assert peak < 40 * 2**20, peak


# ------------------------------------------------------------------ the CLI

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "kernelscale.cli", *args],
                          capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_cli_fit_stream_equals_the_in_memory_fit(tmp_path, problem):
    X, y, _, _ = problem
    path = tmp_path / "train.npy"
    np.save(path, np.column_stack([X, y]))
    common = ["--model", "ridge", "--map", "rff", "-m", "64", "--gamma", "0.02",
              "--param", "dtype=float64"]
    streamed = _cli("fit", str(path), "--stream", "--chunk-rows", "1000", *common,
                    "-o", str(tmp_path / "s.ksm"))
    assert streamed.returncode == 0, streamed.stderr
    assert "streamed in chunks of 1000 rows" in streamed.stdout
    assert "pass 1" in streamed.stderr  # the progress bar
    memory = _cli("fit", str(path), *common, "-o", str(tmp_path / "m.ksm"), "--no-progress")
    assert memory.returncode == 0, memory.stderr
    accuracy = [line for line in streamed.stdout.splitlines() if "accuracy" in line]
    assert accuracy == [line for line in memory.stdout.splitlines() if "accuracy" in line]
    evaluated = _cli("evaluate", str(tmp_path / "s.ksm"), str(path))
    assert evaluated.returncode == 0, evaluated.stderr


@pytest.mark.slow
def test_cli_stream_errors(tmp_path, problem):
    X, y, _, _ = problem
    path = tmp_path / "train.npy"
    np.save(path, np.column_stack([X[:200], y[:200]]))
    out = _cli("fit", str(path), "--chunk-rows", "10", "-o", str(tmp_path / "m.ksm"))
    assert out.returncode == 2 and "--chunk-rows applies to --stream" in out.stderr
    out = _cli("fit", str(path), "--stream", "--model", "kernel-svc", "-o",
               str(tmp_path / "m.ksm"))
    assert out.returncode == 2 and "--stream is not available" in out.stderr
    out = _cli("fit", "a9a", "--stream", "-o", str(tmp_path / "m.ksm"))
    assert out.returncode == 2 and "--stream reads files" in out.stderr


def test_streamed_falkon_equals_in_memory_falkon(problem):
    from kernelscale import NystromKernelRidge, NystromKernelRidgeClassifier

    X, y, X_test, y_test = problem
    make = lambda: NystromKernelRidgeClassifier(  # noqa: E731
        n_components=200, gamma=0.02, alpha=1e-3, dtype="float64", max_iter=100, tol=1e-10,
        random_state=0)
    memory = make().fit(X, y)
    streamed = make().fit(ArrayChunks(X, y, chunk_rows=1400))
    # the centres are drawn from the same (all) rows with the same seed
    np.testing.assert_array_equal(streamed.components_, memory.components_)
    assert _relative(streamed.dual_coef_, memory.dual_coef_) < 1e-6
    assert streamed.score(X_test, y_test) == memory.score(X_test, y_test)
    target = np.sin(X[:, 0])
    reg = lambda: NystromKernelRidge(n_components=100, gamma=0.05, dtype="float64",  # noqa: E731
                                     random_state=0)
    assert _relative(reg().fit(ArrayChunks(X, target, chunk_rows=2500)).dual_coef_,
                     reg().fit(X, target).dual_coef_) < 1e-6


def test_streamed_falkon_intercept_centres_the_targets(problem):
    # (equal systems give equal iterates: 20 CG steps suffice to compare them)
    # a budget below the data's size: the fits stream (no in-memory shortcut), and their
    # centres come from the same sample of the stream
    from kernelscale import NystromKernelRidge, NystromKernelRidgeClassifier

    X, y = problem[0][:3000], problem[1][:3000]
    target = 8.0 + np.sin(X[:, 0].astype(np.float64))
    make = lambda intercept: NystromKernelRidge(  # noqa: E731
        n_components=100, gamma=0.05, dtype="float64", max_iter=20, tol=1e-10,
        fit_intercept=intercept, memory_budget=2**18, random_state=0)
    centred = make(True).fit(ArrayChunks(X, target, chunk_rows=500))
    assert centred.component_indices_ is None  # streamed
    np.testing.assert_allclose(centred.intercept_, [target.mean()], rtol=1e-12)
    # the intercept's model: the same fit on the targets less their mean
    plain = make(False).fit(ArrayChunks(X, target - target.mean(), chunk_rows=500))
    assert _relative(centred.dual_coef_, plain.dual_coef_) < 1e-6
    # a classifier's intercept: the mean of its +-1 column, from the stream's class totals;
    # the same fit as the regressor's on those +-1 targets
    clf = NystromKernelRidgeClassifier(
        n_components=100, gamma=0.05, dtype="float64", max_iter=20, tol=1e-10,
        fit_intercept=True, memory_budget=2**18, random_state=0)
    clf.fit(ArrayChunks(X, y, chunk_rows=500))
    signs = np.where(y == clf.classes_[1], 1.0, -1.0)
    reg = make(True).fit(ArrayChunks(X, signs, chunk_rows=500))
    np.testing.assert_allclose(clf.intercept_, reg.intercept_, rtol=1e-12)
    assert _relative(clf.dual_coef_, reg.dual_coef_) < 1e-6


def test_streamed_doubly_sgd_cycles_over_the_chunks(problem):
    from kernelscale import DoublySGDSVC

    X, y, X_test, y_test = problem
    model = DoublySGDSVC(gamma=0.02, C=10.0, max_iter=120, random_state=0)
    model.fit(ArrayChunks(X, y, chunk_rows=2000))
    assert model.n_iter_ == 120
    in_memory = DoublySGDSVC(gamma=0.02, C=10.0, max_iter=120, random_state=0).fit(X, y)
    assert model.score(X_test, y_test) >= in_memory.score(X_test, y_test) - 0.03


@pytest.mark.parametrize("make", [
    lambda: ApproxKernelRidgeClassifier(feature_map="rff", n_components=16, random_state=0),
    lambda: LinearSVC(),
    lambda: __import__("kernelscale").NystromKernelRidgeClassifier(n_components=20),
])
def test_nan_in_a_later_chunk_is_an_error(problem, make):
    X, y, _, _ = problem
    X = X.copy()
    X[-3, 2] = np.nan  # beyond the rows sampled for the map when the sample is small
    with pytest.raises(ValueError, match="NaN or infinity"):
        make().fit(ArrayChunks(X, y, chunk_rows=1000))


def test_streamed_kernel_kmeans_finds_the_in_memory_clusters():
    from sklearn.datasets import make_blobs
    from sklearn.metrics import adjusted_rand_score

    from kernelscale import ApproxKernelKMeans

    X, _ = make_blobs(5000, n_features=4, centers=4, cluster_std=1.0, random_state=0)
    make = lambda: ApproxKernelKMeans(n_clusters=4, feature_map="rff",  # noqa: E731
                                      n_components=64, gamma=0.05, random_state=0)
    memory = make().fit(X)
    streamed = make().fit(ArrayChunks(X, chunk_rows=700))
    assert adjusted_rand_score(memory.predict(X), streamed.predict(X)) > 0.99
    assert streamed.inertia_ == pytest.approx(memory.inertia_, rel=1e-3)
    assert not hasattr(streamed, "labels_")
    assert streamed.transform(X[:3]).shape == (3, 4)


def test_npy_map_sample_is_random_rows(tmp_path):
    """A file sorted by label still gives the map rows of both classes."""
    X, y = make_nonlinear_problem(3000)
    order = np.argsort(y, kind="stable")
    path = tmp_path / "sorted.npy"
    np.save(path, np.column_stack([X[order], y[order]]))
    data = NpyChunks(path, chunk_rows=500)
    Xs, ys = data.sample(400, random_state=0)
    assert Xs.shape == (400, 28) and set(ys.tolist()) == {0, 1}
    rows = np.sort(np.random.RandomState(0).choice(3000, 400, replace=False))
    np.testing.assert_array_equal(Xs, X[order][rows])
    assert set(data.head(400)[1].tolist()) == {0}  # the first rows are one class
