"""Loaders: IDX (MNIST) files, svmlight index dtype, the seed 000 problem."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from kernelscale.datasets import load_mnist_idx, load_svmlight, make_synthetic_problem


def write_idx(path, magic, array, *, compress=False, cut=0):
    header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in array.shape)
    raw = header + array.astype(np.uint8).tobytes()
    raw = raw[: len(raw) - cut]
    (gzip.open if compress else open)(path, "wb").write(raw)
    return path


@pytest.fixture
def idx_pair(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(5, 4, 3))
    labels = rng.integers(0, 10, size=5)
    return images, labels, tmp_path


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_idx_round_trip(idx_pair, compress):
    images, labels, tmp = idx_pair
    suffix = ".gz" if compress else ""
    X, y = load_mnist_idx(write_idx(tmp / f"img{suffix}", 2051, images, compress=compress),
                          write_idx(tmp / f"lab{suffix}", 2049, labels, compress=compress))
    assert X.dtype == np.float32 and X.shape == (5, 12)
    np.testing.assert_allclose(X, images.reshape(5, -1) / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(y, labels)


def test_mnist_idx_errors(idx_pair):
    images, labels, tmp = idx_pair
    img, lab = write_idx(tmp / "img", 2051, images), write_idx(tmp / "lab", 2049, labels)
    with pytest.raises(ValueError, match="wrong IDX magic number 2049"):
        load_mnist_idx(lab, lab)
    with pytest.raises(ValueError, match="truncated or corrupt"):
        load_mnist_idx(write_idx(tmp / "cut", 2051, images, cut=7), lab)
    with pytest.raises(ValueError, match="5 images but .* 4 labels"):
        load_mnist_idx(img, write_idx(tmp / "lab4", 2049, labels[:4]))
    with pytest.raises(FileNotFoundError, match="No IDX file"):
        load_mnist_idx(tmp / "missing", lab)
    (tmp / "bad.gz").write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="cannot be read as gzip"):
        load_mnist_idx(tmp / "bad.gz", lab)


def test_svmlight_indices_are_int32(tmp_path):
    path = tmp_path / "tiny.svm"
    path.write_text("1 1:0.5 3:1\n-1 2:2\n")
    X, y = load_svmlight(path, n_features=4)
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, 1, 0], [0, 2, 0, 0]])
    np.testing.assert_array_equal(y, [1, -1])


def test_synthetic_problem_is_standardized():
    X_train, X_test, y_train, y_test = make_synthetic_problem(2000)
    assert X_train.shape == (1500, 20) and X_test.shape == (500, 20)
    np.testing.assert_allclose(X_train.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(X_train.std(axis=0), 1.0, rtol=1e-12)
    assert set(np.unique(y_train)) == {0, 1}


# --- svmlight, CSV, npz, named data, the nonlinear generator ---------------------------------

from kernelscale.datasets import (  # noqa: E402
    guess_format,
    iter_nonlinear_chunks,
    load_csv,
    load_data,
    load_npz,
    make_nonlinear_problem,
)


@pytest.mark.parametrize(
    "text, message",
    [
        ("+1 1:0.5\n-1 2:abc\n", r"line 2: '2:abc' is not of the form integer-index:number"),
        ("+1 1:0.5\n+1 1:1\n-1 2:2 x\n", r"line 3: 'x' is not of the form index:value"),
        ("+1 3:0.5 1:1\n", r"line 1: feature indices are not sorted"),
        ("+1 1:0.5\nyes 2:2\n", r"line 2: label 'yes' is not a number"),
    ],
)
def test_malformed_svmlight_names_the_line(tmp_path, text, message):
    path = tmp_path / "bad.svm"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_svmlight(path)


def test_svmlight_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="No svmlight file"):
        load_svmlight(tmp_path / "nope.svm")


def test_csv_header_inferred_label_by_name_and_position(tmp_path):
    path = tmp_path / "toy.csv"
    path.write_text("a,label,b\n1,cat,2\n3,dog,4.5\n\n5,cat,6\n")
    X, y = load_csv(path, label_column="label")
    np.testing.assert_array_equal(X, [[1, 2], [3, 4.5], [5, 6]])
    assert y.tolist() == ["cat", "dog", "cat"]
    X2, y2 = load_csv(path, label_column=1)
    np.testing.assert_array_equal(X2, X)
    assert y2.tolist() == y.tolist()


def test_csv_numeric_labels_and_no_header(tmp_path):
    path = tmp_path / "toy.csv"
    path.write_text("0.5,1,1\n2,0,0\n1,1,2\n")
    X, y = load_csv(path)
    assert X.shape == (3, 2) and y.dtype == np.int64 and y.tolist() == [1, 0, 2]
    path.write_text("0.5,1,0.25\n2,0,1\n")
    assert load_csv(path)[1].dtype == np.float64
    X, y = load_csv(path, label_column=None)
    assert X.shape == (2, 3) and y is None


def test_csv_gzip_and_tab(tmp_path):
    path = tmp_path / "toy.tsv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("x\ty\tclass\n1\t2\ta\n3\t4\tb\n")
    X, y = load_data(path)
    assert X.shape == (2, 2) and y.tolist() == ["a", "b"]


@pytest.mark.parametrize(
    "text, kwargs, message",
    [
        ("a,b,y\n1,2,0\n3,x,1\n", {}, r"line 3, column b: 'x' is not a number"),
        ("1,2,0\n3,4\n", {}, r"line 2: 2 fields where the first line has 3"),
        ("a,b,y\n1,2,0\n", {"label_column": "target"}, r"no column named 'target'"),
        ("1,2,0\n", {"label_column": 5}, r"label_column=5 is out of range for 3 columns"),
        ("a,b,y\n", {}, r"no data rows"),
        ("1,2,0\n", {"label_column": "y"}, r"names a column but the file has no header line"),
    ],
)
def test_csv_errors(tmp_path, text, kwargs, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_csv(path, **kwargs)


def test_npz_round_trip_and_errors(tmp_path):
    X = np.arange(12.0).reshape(4, 3)
    np.savez(tmp_path / "d.npz", X=X, y=np.array([0, 1, 0, 1]))
    X2, y2 = load_npz(tmp_path / "d.npz")
    np.testing.assert_array_equal(X2, X)
    assert y2.tolist() == [0, 1, 0, 1]
    np.savez(tmp_path / "noX.npz", data=X)
    with pytest.raises(ValueError, match="no array named 'X'"):
        load_npz(tmp_path / "noX.npz")
    np.savez(tmp_path / "short.npz", X=X, y=np.array([0, 1]))
    with pytest.raises(ValueError, match="X has 4 rows but y has 2 labels"):
        load_npz(tmp_path / "short.npz")
    (tmp_path / "junk.npz").write_bytes(b"this is not a zip file")
    with pytest.raises(ValueError, match="not a valid .npz archive"):
        load_npz(tmp_path / "junk.npz")


def test_load_data_paths_and_names(tmp_path):
    assert [guess_format(p) for p in ("a.csv", "a.CSV.bz2", "a.npz", "a9a", "x.svm.gz")] == \
        ["csv", "csv", "npz", "svmlight", "svmlight"]
    with pytest.raises(FileNotFoundError, match="named data sets: a9a, mnist10k"):
        load_data(tmp_path / "missing.svm")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        load_data(tmp_path)
    with pytest.raises(ValueError, match="Unknown data format"):
        load_data(tmp_path, format="parquet")
    with pytest.raises(ValueError, match="Unknown split 'valid' of a9a"):
        load_data("a9a:valid")
    path = tmp_path / "t.svm"
    path.write_text("+1 1:1\n-1 2:1\n")
    X, y = load_data(path, n_features=5)
    assert X.shape == (2, 5) and y.dtype == np.int64 and y.tolist() == [1, -1]
    # the suffix is overridden by format=
    csv_named_svm = tmp_path / "t.txt"
    csv_named_svm.write_text("1,2,0\n3,4,1\n")
    assert load_data(csv_named_svm, format="csv")[0].shape == (2, 2)


@pytest.mark.data
def test_named_splits(a9a):
    X, y = load_data("a9a:test")
    assert X.shape == a9a[2].shape and set(y.tolist()) == {-1, 1}


def test_nonlinear_problem_chunks_equal_in_memory():
    X, y = make_nonlinear_problem(70_000, random_state=3)
    assert X.shape == (70_000, 28) and X.dtype == np.float32
    assert 0.45 < y.mean() < 0.55
    chunks = list(iter_nonlinear_chunks(70_000, 9_999, random_state=3))
    assert [len(c[0]) for c in chunks] == [9_999] * 7 + [7]
    np.testing.assert_array_equal(np.concatenate([c[0] for c in chunks]), X)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), y)
    X_other, _ = make_nonlinear_problem(100, random_state=4)
    assert not np.allclose(X_other, X[:100])
    with pytest.raises(ValueError, match="n_informative"):
        make_nonlinear_problem(10, n_informative=40)


def test_nonlinear_problem_needs_a_kernel():
    from kernelscale import ApproxKernelSVC, LinearSVC

    X, y = make_nonlinear_problem(8000, random_state=1)
    linear = LinearSVC(random_state=0).fit(X[:6000], y[:6000]).score(X[6000:], y[6000:])
    kernel = ApproxKernelSVC(n_components=500, random_state=0).fit(
        X[:6000], y[:6000]).score(X[6000:], y[6000:])
    assert kernel > linear + 0.03, (linear, kernel)
