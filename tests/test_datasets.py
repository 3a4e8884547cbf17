"""Loaders: IDX (MNIST) files, svmlight index dtype, the seed 000 problem."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from kernelscale.datasets import load_mnist_idx, load_svmlight, make_seed000_problem


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


def test_seed000_problem_is_standardized():
    X_train, X_test, y_train, y_test = make_seed000_problem(2000)
    assert X_train.shape == (1500, 20) and X_test.shape == (500, 20)
    np.testing.assert_allclose(X_train.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(X_train.std(axis=0), 1.0, rtol=1e-12)
    assert set(np.unique(y_train)) == {0, 1}
