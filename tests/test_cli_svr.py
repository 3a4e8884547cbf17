"""``kernelscale fit --model svr | one-class``, ``--scale``, their predict / evaluate, errors.

Run in-process (``kernelscale.cli.main``): ``tests/test_cli.py`` covers the subprocess path.
"""

import contextlib
import io
import json
import types

import numpy as np
import pytest
from sklearn.svm import SVR

from kernelscale import load_model
from kernelscale.cli import main


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "--no-progress"])
    return types.SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("svr")
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(500, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=500)
    inside = np.where(np.linalg.norm(X, axis=1) < 1.2, 1, -1)
    paths = {}
    for name, target in (("reg", y), ("oc", inside)):
        for part, rows in (("train", slice(0, 400)), ("test", slice(400, 500))):
            path = root / f"{name}_{part}.csv"
            np.savetxt(path, np.c_[X[rows], target[rows]], delimiter=",")
            paths[f"{name}_{part}"] = path
    return root, X, y, paths


def test_svr_fit_matches_the_api_and_evaluates(files):
    root, X, y, paths = files
    model_path = root / "svr.ksm"
    result = run("fit", str(paths["reg_train"]), "--test", str(paths["reg_test"]), "--model",
                 "svr", "-C", "5", "--epsilon", "0.05", "--gamma", "1", "--cv", "3",
                 "-o", str(model_path))
    assert result.returncode == 0, result.stderr
    assert "cross-validation R^2 (3 folds)" in result.stdout
    model = load_model(model_path)
    ref = SVR(C=5, epsilon=0.05, gamma=1.0).fit(X[:400], y[:400])
    np.testing.assert_allclose(model.predict(X[400:]), ref.predict(X[400:]), atol=5e-3)
    residual = y[400:] - model.predict(X[400:])
    r2 = 1 - residual @ residual / np.sum((y[400:] - y[400:].mean()) ** 2)
    assert f"test R^2: {r2:.4f}" in result.stdout
    report = root / "eval.json"
    result = run("evaluate", str(model_path), str(paths["reg_test"]), "--json", str(report))
    assert result.returncode == 0, result.stderr
    assert json.loads(report.read_text())["r2"] == pytest.approx(r2, abs=1e-6)
    result = run("predict", str(model_path), str(paths["reg_test"]))
    values = np.array([float(v) for v in result.stdout.split()])
    np.testing.assert_allclose(values, model.predict(X[400:]), rtol=1e-12)


def test_one_class_fit_predict_evaluate(files):
    root, X, _, paths = files
    model_path = root / "oc.ksm"
    result = run("fit", str(paths["oc_train"]), "--test", str(paths["oc_test"]), "--model",
                 "one-class", "--nu", "0.1", "-o", str(model_path))
    assert result.returncode == 0, result.stderr
    assert "test inlier fraction:" in result.stdout and "accuracy:" in result.stdout
    model = load_model(model_path)
    result = run("predict", str(model_path), str(paths["oc_test"]), "--decision-values")
    rows = [line.split() for line in result.stdout.splitlines()]
    np.testing.assert_array_equal([int(r[0]) for r in rows], model.predict(X[400:]))
    np.testing.assert_allclose([float(r[1]) for r in rows], model.decision_function(X[400:]),
                               rtol=1e-5, atol=1e-6)
    result = run("evaluate", str(model_path), str(paths["oc_test"]))
    assert result.returncode == 0 and "inlier fraction:" in result.stdout


@pytest.mark.parametrize("model, flag", [("approx-svr", "--epsilon"),
                                         ("approx-one-class", "--nu")])
def test_approximate_forms_fit(files, model, flag):
    root, _, _, paths = files
    data = "reg" if model == "approx-svr" else "oc"
    result = run("fit", str(paths[f"{data}_train"]), "--test", str(paths[f"{data}_test"]),
                 "--model", model, flag, "0.1", "-m", "100", "--seed", "1",
                 "-o", str(root / f"{model}.ksm"))
    assert result.returncode == 0, result.stderr
    model_obj = load_model(root / f"{model}.ksm")
    assert model_obj.feature_map_.n_components == 100 and model_obj.random_state == 1
    assert ("R^2" if data == "reg" else "inlier fraction") in result.stdout


@pytest.mark.parametrize("args, message", [
    (["--model", "one-class", "--nu", "1.5"], "nu=1.5 is not valid; it must be a float in (0, 1]"),
    (["--model", "svr", "--epsilon", "-1"], "epsilon must be >= 0"),
    (["--model", "one-class", "--cv", "3"], "a one-class model has no labels"),
    (["--model", "one-class", "--epsilon", "0.1"], "--epsilon does not apply to --model "
                                                   "one-class"),
    (["--model", "kernel-svc", "--nu", "0.2"], "--nu does not apply"),
])
def test_bad_options_are_one_line_errors(files, args, message):
    root, _, _, paths = files
    result = run("fit", str(paths["oc_train"]), *args, "-o", str(root / "x.ksm"))
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert "loading training data" not in result.stderr  # refused before any work


@pytest.mark.parametrize("scale", ["minmax", "standard"])
def test_scaling_is_stored_in_the_model_file(files, scale):
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    from kernelscale import KernelSVR

    root, X, y, _ = files
    # features on very different scales: unscaled, gamma="scale" would see only the last
    Xs = X * np.array([1.0, 1e-3, 1.0, 1e3])
    train, test = root / f"scaled_{scale}_train.csv", root / f"scaled_{scale}_test.csv"
    np.savetxt(train, np.c_[Xs[:400], y[:400]], delimiter=",")
    np.savetxt(test, np.c_[Xs[400:], y[400:]], delimiter=",")
    model_path = root / f"scaled_{scale}.ksm"
    result = run("fit", str(train), "--model", "svr", "--scale", scale, "-o", str(model_path))
    assert result.returncode == 0, result.stderr
    model = load_model(model_path)
    scaler = MinMaxScaler((-1, 1)) if scale == "minmax" else StandardScaler()
    by_hand = KernelSVR().fit(scaler.fit_transform(Xs[:400]), y[:400])
    expected = by_hand.predict(scaler.transform(Xs[400:]))
    np.testing.assert_allclose(model.predict(Xs[400:]), expected, rtol=1e-6, atol=1e-6)
    result = run("predict", str(model_path), str(test))
    np.testing.assert_allclose([float(v) for v in result.stdout.split()], expected,
                               rtol=1e-6, atol=1e-6)


def test_scale_with_stream_is_refused(files):
    root, _, _, paths = files
    result = run("fit", str(paths["oc_train"]), "--model", "approx-svc", "--scale", "minmax",
                 "--stream", "-o", str(root / "x.ksm"))
    assert result.returncode == 2 and "--scale needs the data in memory" in result.stderr


def test_fit_stream_approx_svr_scores_like_the_in_memory_fit(files):
    root, _, _, paths = files
    common = ["--model", "approx-svr", "--map", "rff", "-m", "64", "--gamma", "1.0",
              "--param", "dtype=float64", "--param", "tol=1e-7", "--param", "max_iter=3000",
              "--test", str(paths["reg_test"])]
    streamed = run("fit", str(paths["reg_train"]), "--stream", "--chunk-rows", "90", *common,
                   "-o", str(root / "stream.ksm"))
    assert streamed.returncode == 0, streamed.stderr
    assert "streamed in chunks of 90 rows" in streamed.stdout
    assert "numeric targets" in streamed.stdout
    memory = run("fit", str(paths["reg_train"]), *common, "-o", str(root / "memory.ksm"))
    assert memory.returncode == 0, memory.stderr

    def scores(out):
        line = next(line for line in out.stdout.splitlines() if line.startswith("test R^2"))
        return [float(part.split(": ")[1]) for part in line[len("test "):].split(", ")]

    np.testing.assert_allclose(scores(streamed), scores(memory), atol=2e-3)
    assert scores(streamed)[0] > 0.8
    model, header = load_model(root / "stream.ksm", return_header=True)
    meta = header["metadata"]
    assert type(model).__name__ == "ApproxKernelSVR"
    assert meta["r2"] == pytest.approx(scores(streamed)[0], abs=1e-4)
