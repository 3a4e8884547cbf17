"""Model files: round trip, header, atomic writes, and clear errors for bad files."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import joblib
import numpy as np
import pytest
from sklearn.datasets import make_classification

import kernelscale
from kernelscale import (
    ApproxKernelSVC,
    KernelSVC,
    LinearSVC,
    ModelFileError,
    NystromKernelRidgeClassifier,
    load_model,
    read_model_header,
    save_model,
)
from kernelscale.persistence import FORMAT_VERSION, MAGIC


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(300, n_features=8, random_state=0)
    return X, np.where(y == 1, "yes", "no")


@pytest.mark.parametrize("make", [
    lambda: LinearSVC(random_state=0),
    lambda: ApproxKernelSVC(n_components=50, random_state=0),
    lambda: KernelSVC(),
    lambda: NystromKernelRidgeClassifier(n_components=50, random_state=0),
])
def test_round_trip_predicts_the_same(tmp_path, data, make):
    X, y = data
    model = make().fit(X, y)
    path = tmp_path / "m.ksm"
    header = save_model(model, path, metadata={"note": "toy", "rows": 300})
    again, read = load_model(path, return_header=True)
    assert type(again) is type(model)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    assert read == header == read_model_header(path)
    assert read["format_version"] == FORMAT_VERSION
    assert read["kernelscale_version"] == kernelscale.__version__
    assert read["estimator"] == type(model).__name__
    assert read["metadata"] == {"note": "toy", "rows": 300}


def test_write_is_atomic(tmp_path, data):
    X, y = data
    path = tmp_path / "m.ksm"
    save_model(LinearSVC(random_state=0).fit(X, y), path)
    before = path.read_bytes()

    class Unpicklable(LinearSVC):
        def __reduce__(self):
            raise pickle.PicklingError("cannot pickle this")

    with pytest.raises(pickle.PicklingError):
        save_model(Unpicklable(random_state=0).fit(X, y), path)
    assert path.read_bytes() == before, "a failed write must leave the old file intact"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ksm"], "temporary file left"
    fitted = LinearSVC(random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="JSON-serializable"):
        save_model(fitted, path, metadata={"bad": object()})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ksm"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save_model(fitted, tmp_path / "no" / "dir" / "m.ksm")


@pytest.fixture
def model_file(tmp_path, data):
    X, y = data
    path = tmp_path / "m.ksm"
    save_model(LinearSVC(random_state=0).fit(X, y), path)
    return path


def _rewrite_header(path, **changes):
    raw = path.read_bytes()
    first = raw.index(b"\n", len(MAGIC)) + 1
    header = json.loads(raw[len(MAGIC):first])
    header.update(changes)
    path.write_bytes(MAGIC + json.dumps(header).encode() + b"\n" + raw[first:])


def test_foreign_files_are_refused_before_unpickling(tmp_path, data):
    X, y = data
    joblib.dump(LinearSVC().fit(X, y), tmp_path / "plain.joblib")
    with pytest.raises(ModelFileError, match="not a kernelscale model file.*plain pickle"):
        load_model(tmp_path / "plain.joblib")
    (tmp_path / "text.txt").write_text("hello\n")
    with pytest.raises(ModelFileError, match="not a kernelscale model file"):
        load_model(tmp_path / "text.txt")
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(ModelFileError, match="not a kernelscale model file"):
        load_model(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="No model file"):
        load_model(tmp_path / "missing.ksm")
    with pytest.raises(IsADirectoryError):
        load_model(tmp_path)


def test_truncated_and_corrupt_files(model_file):
    raw = model_file.read_bytes()
    model_file.write_bytes(raw[:-10])
    with pytest.raises(ModelFileError, match="truncated"):
        load_model(model_file)
    flipped = bytearray(raw)
    flipped[-5] ^= 0xFF
    model_file.write_bytes(bytes(flipped))
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_model(model_file)
    model_file.write_bytes(raw + b"extra")
    with pytest.raises(ModelFileError, match="too long"):
        load_model(model_file)
    model_file.write_bytes(MAGIC + b"{not json\n" + raw)
    with pytest.raises(ModelFileError, match="header is corrupt"):
        load_model(model_file)


def test_newer_format_and_other_versions(model_file):
    _rewrite_header(model_file, format_version=FORMAT_VERSION + 1, kernelscale_version="9.0")
    with pytest.raises(ModelFileError, match="written by kernelscale 9.0.*Upgrade"):
        load_model(model_file)
    _rewrite_header(model_file, format_version=FORMAT_VERSION, kernelscale_version="0.0.1")
    with pytest.warns(UserWarning, match="written by kernelscale 0.0.1"):
        load_model(model_file)


def test_unreadable_payload_with_a_valid_checksum(tmp_path):
    import hashlib

    payload = b"\x80\x04this is not a pickle"
    header = {"format": "kernelscale-model", "format_version": FORMAT_VERSION,
              "kernelscale_version": kernelscale.__version__, "payload_bytes": len(payload),
              "payload_sha256": hashlib.sha256(payload).hexdigest()}
    path = tmp_path / "odd.ksm"
    path.write_bytes(MAGIC + json.dumps(header).encode() + b"\n" + payload)
    with pytest.raises(ModelFileError, match="cannot be read"):
        load_model(path)


OLD_MODELS = Path(__file__).resolve().parent / "data" / "models_0_1"


@pytest.mark.parametrize("name", sorted(p.stem for p in OLD_MODELS.glob("*.ksm")))
def test_model_files_written_before_the_family_packages_still_load(name):
    # issue 37 moved the estimators into models/svm, linear, ridge and unsupervised: the
    # files of kernelscale 0.1.0 name the old modules (tests/data/models_0_1/make.py)
    import numpy as np

    expected = np.load(OLD_MODELS / "expected.npz")
    model = load_model(OLD_MODELS / f"{name}.ksm")
    X = expected["X"]
    got = model.predict(X) if hasattr(model, "predict") else model.transform(X)
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), expected[name],
                               rtol=1e-6, atol=1e-9)
