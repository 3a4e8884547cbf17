"""The command line, run as a user would (subprocess)."""

import json
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "kernelscale.cli", *args],
        capture_output=True, text=True, timeout=300,
    )


def test_approx_prints_table_and_writes_plot_and_records(tmp_path):
    plot, records = tmp_path / "err.png", tmp_path / "records.json"
    result = run("approx", "--sizes", "16,64", "--repeats", "1", "--n-samples", "600",
                 "--maps", "rff,orf,nystroem", "--plot", str(plot), "--json", str(records),
                 "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "error on 150 held-out rows" in result.stdout
    lines = [line for line in result.stdout.splitlines() if line.startswith(("rff", "orf", "nys"))]
    assert len(lines) == 6
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(records.read_text())
    assert {r["map"] for r in data} == {"rff", "orf", "nystroem"}
    # more features, less error
    for name in ("rff", "orf", "nystroem"):
        small, large = (r["error"] for r in data if r["map"] == name)
        assert large < small


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["laplacian", "polynomial"])
def test_approx_other_kernels(kernel):
    result = run("approx", "--kernel", kernel, "--sizes", "32", "--repeats", "1",
                 "--n-samples", "400", "--no-progress")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["approx", "--maps", "rff,magic"], "unknown map(s) magic"),
        (["approx", "--sizes", "0,4"], "expected positive integers"),
        (["approx", "--gamma", "-2"], "gamma must be 'scale', 'auto' or > 0"),
        (["approx", "--kernel", "polynomial", "--maps", "orf", "--sizes", "8"],
         "approximates the rbf kernel"),
        (["approx", "--n-samples", "3"], "--n-samples must be at least 8"),
    ],
)
def test_bad_arguments_give_one_line_errors(args, message):
    result = run(*args, "--no-progress")
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_help_and_version():
    assert run("--help").returncode == 0
    assert "kernelscale 0.1.0" in run("--version").stdout
    assert "approx" in run("approx", "--help").stdout


# --- fit / predict / evaluate / bench ---------------------------------------------------------

import numpy as np  # noqa: E402

from kernelscale.cli import main  # noqa: E402


def one_line_error(result):
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("kernelscale: error: "), result.stderr
    return lines[0]


@pytest.mark.slow
@pytest.mark.data
def test_fit_predict_evaluate_round_trip_on_a9a_equals_the_api(a9a, tmp_path):
    from kernelscale import ApproxKernelSVC

    X_train, y_train, X_test, y_test = a9a
    model, preds = tmp_path / "a9a.ksm", tmp_path / "pred.txt"
    fit = run("fit", "a9a", "--test", "a9a:test", "--model", "approx-svc", "-m", "300",
              "-o", str(model), "--no-progress")
    assert fit.returncode == 0, fit.stderr
    api = ApproxKernelSVC(n_components=300, random_state=0).fit(X_train, y_train)
    api_pred = api.predict(X_test)
    expected = f"test accuracy: {np.mean(api_pred == y_test):.4f}"
    assert expected in fit.stdout
    predict = run("predict", str(model), "a9a:test", "-o", str(preds), "--no-progress")
    assert predict.returncode == 0, predict.stderr
    lines = preds.read_text().splitlines()
    assert lines == [str(int(v)) for v in api_pred]  # "-1" / "1", the training labels' type
    evaluate = run("evaluate", str(model), "a9a:test", "--no-progress",
                   "--json", str(tmp_path / "eval.json"))
    assert evaluate.returncode == 0, evaluate.stderr
    assert f"accuracy: {np.mean(api_pred == y_test):.4f}" in evaluate.stdout
    report = json.loads((tmp_path / "eval.json").read_text())
    assert np.sum(report["confusion_matrix"]) == len(y_test)
    assert report["labels"] == ["-1", "1"]


def write_csv(path, X, y, header=True):
    lines = ["f1,f2,f3,label"] if header else []
    lines += [",".join(f"{v:.6f}" for v in row) + (f",{label}" if label is not None else "")
              for row, label in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")


def test_csv_string_labels_round_trip(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4, "outer", "inner")
    train, test, bare = tmp_path / "train.csv", tmp_path / "test.csv", tmp_path / "bare.csv"
    write_csv(train, X[:300], y[:300])
    write_csv(test, X[300:], y[300:])
    write_csv(bare, X[300:], [None] * 100, header=False)
    model = tmp_path / "m.ksm"
    assert main(["fit", str(train), "--test", str(test), "--model", "kernel-svc", "-C", "10",
                 "-o", str(model), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "2 classes (inner, outer)" in out
    accuracy = float(out.split("test accuracy: ")[1].split()[0])
    assert accuracy > 0.9
    # the label column may be left out at predict time
    assert main(["predict", str(model), str(bare), "--no-progress"]) == 0
    predicted = capsys.readouterr().out.split()
    assert set(predicted) <= {"inner", "outer"} and len(predicted) == 100
    assert np.mean(np.array(predicted) == y[300:]) == pytest.approx(accuracy)
    assert main(["evaluate", str(model), str(test), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"accuracy: {accuracy:.4f}" in out and "inner" in out


@pytest.mark.parametrize("model, extra", [
    ("linear-svc", ["-C", "0.5"]),
    ("approx-svc", ["--map", "rff", "-m", "64", "--gamma", "0.5"]),
    ("ridge", ["-m", "64", "--alpha", "0.1"]),
    ("falkon", ["-m", "64"]),
    ("logistic", ["-m", "64", "--max-iter", "50"]),
    ("dsgd", ["--max-iter", "50", "--param", "batch_size=64"]),
])
def test_every_model_fits_from_the_command_line(tmp_path, capsys, model, extra):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    out = tmp_path / "m.ksm"
    assert main(["fit", str(tmp_path / "d.npz"), "--model", model, *extra, "-o", str(out),
                 "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "training accuracy:" in text and out.is_file()
    from kernelscale import load_model, read_model_header

    header = read_model_header(out)
    assert header["metadata"]["model"] == model
    assert header["metadata"]["data"]["n_features"] == 3
    assert load_model(out).predict(X).shape == (300,)


def test_bad_paths_and_corrupt_models_give_one_line_errors(tmp_path):
    missing = run("fit", str(tmp_path / "nope.svm"), "-o", str(tmp_path / "m.ksm"),
                  "--no-progress")
    assert "No such file" in one_line_error(missing)
    (tmp_path / "junk.ksm").write_bytes(b"\x00\x01garbage" * 10)
    (tmp_path / "d.svm").write_text("+1 1:1\n-1 2:1\n")
    corrupt = run("predict", str(tmp_path / "junk.ksm"), str(tmp_path / "d.svm"),
                  "--no-progress")
    assert "not a kernelscale model file" in one_line_error(corrupt)
    no_model = run("evaluate", str(tmp_path / "none.ksm"), str(tmp_path / "d.svm"),
                   "--no-progress")
    assert "No model file" in one_line_error(no_model)


def test_truncated_model_and_wrong_width(tmp_path, capsys):
    X = np.random.default_rng(0).normal(size=(120, 4))
    np.savez(tmp_path / "d.npz", X=X, y=(X[:, 0] > 0).astype(int))
    np.savez(tmp_path / "narrow.npz", X=X[:, :3], y=(X[:, 0] > 0).astype(int))
    model = tmp_path / "m.ksm"
    assert main(["fit", str(tmp_path / "d.npz"), "--model", "linear-svc", "-o", str(model),
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["predict", str(model), str(tmp_path / "narrow.npz"), "--no-progress"]) == 2
    assert "has 3 features but the model was trained on 4" in capsys.readouterr().err
    model.write_bytes(model.read_bytes()[:-20])
    assert main(["predict", str(model), str(tmp_path / "d.npz"), "--no-progress"]) == 2
    assert "truncated" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--model", "kernel-svc", "--map", "rff"], "--map does not apply to --model kernel-svc"),
    (["--model", "linear-svc", "-m", "10"], "-m does not apply"),
    (["--param", "colour=red"], "has no parameter 'colour'"),
    (["--param", "C=-1"], "C"),
    (["--model", "approx-svc", "--loss", "cubic"], "loss"),
])
def test_fit_option_errors(tmp_path, capsys, args, message):
    X = np.random.default_rng(0).normal(size=(60, 3))
    np.savez(tmp_path / "d.npz", X=X, y=(X[:, 0] > 0).astype(int))
    assert main(["fit", str(tmp_path / "d.npz"), *args, "-o", str(tmp_path / "m.ksm"),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kernelscale: error: ") and message in err
    assert not (tmp_path / "m.ksm").exists()


def test_fit_output_and_data_errors(tmp_path, capsys):
    (tmp_path / "bad.csv").write_text("a,b,y\n1,2,0\n1,oops,1\n")
    assert main(["fit", str(tmp_path / "bad.csv"), "-o", str(tmp_path / "m.ksm"),
                 "--no-progress"]) == 2
    assert "line 3, column b: 'oops' is not a number" in capsys.readouterr().err
    (tmp_path / "one.csv").write_text("1,2,0\n3,4,0\n5,6,0\n")
    assert main(["fit", str(tmp_path / "one.csv"), "-o", str(tmp_path / "m.ksm"),
                 "--no-progress"]) == 2
    assert "class" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "one.csv"), "-o", str(tmp_path / "no" / "m.ksm"),
                 "--no-progress"]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_quick_writes_report_and_plots(tmp_path):
    result = run("bench", "synthetic", "--quick", "--repeats", "1", "--out", str(tmp_path),
                 "--no-progress")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "synthetic"
    for name in ("accuracy_vs_features.png", "time_vs_features.png",
                 "approx_error_vs_features.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = (out / "report.md").read_text()
    assert "kernelscale bench synthetic" in report and "speed-up vs scikit-learn" in report
    data = json.loads((out / "results.json").read_text())
    assert data["experiment"] == "synthetic" and len(data["records"]) == 5 + 4 * 3
    assert "Most accurate kernelscale approximate model" in result.stdout


def captured_error(capsys):
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("kernelscale: error: "), lines
    return lines[0]


def test_bench_errors(capsys, tmp_path):
    assert main(["bench", "covtype"]) == 2
    assert "invalid choice" in captured_error(capsys)
    assert main(["bench", "--quick", "--full"]) == 2
    assert "not allowed with" in captured_error(capsys)
    assert main(["bench", "adult", "--data-dir", "/nonexistent/dir", "--no-progress"]) == 2
    assert "does not exist" in captured_error(capsys)
    # every experiment's data are checked before the first one starts
    assert main(["bench", "all", "--data-dir", str(tmp_path), "--no-progress",
                 "--out", str(tmp_path / "out")]) == 2
    message = captured_error(capsys)
    assert "a9a is not in" in message and "libsvmtools" in message and "KERNELSCALE_DATA" in message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["fit", "predict", "evaluate", "bench"])
def test_subcommand_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: kernelscale " + command in capsys.readouterr().out


def test_the_parsers_names_are_the_librarys():
    """The parser lists names without importing the library; they must stay the same."""
    import kernelscale
    from kernelscale.bench import EXPERIMENTS
    from kernelscale.cli import _options
    from kernelscale.datasets import DATASETS
    from kernelscale.feature_maps import FEATURE_MAPS
    from kernelscale.kernels import KERNELS

    assert _options.MAP_NAMES == tuple(FEATURE_MAPS)
    assert set(_options.KERNEL_NAMES) == set(KERNELS)
    assert _options.EXPERIMENT_NAMES == tuple(EXPERIMENTS)
    assert _options.DATASET_NAMES == tuple(DATASETS)
    for name, (cls, _) in _options.MODELS.items():
        assert name == "auto" or hasattr(kernelscale, cls), name
    from kernelscale.model_selection import FAMILIES

    # tune saves each family's refit as the fit --model its registry entry names
    assert all(family.cli_model in _options.MODELS for family in FAMILIES.values())


def test_help_is_fast_and_lists_defaults():
    # fast means nothing heavy is imported to answer it (a wall-clock limit is flaky
    # on a shared machine)
    import subprocess
    import sys

    code = ("import sys; from kernelscale.cli import main\n"
            "try:\n    main(['fit', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('heavy:', [m for m in ('sklearn', 'numba', 'scipy', 'matplotlib') "
            "if m in sys.modules])")
    quick = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "heavy: []" in quick.stdout, quick.stdout[-300:] + quick.stderr[-300:]
    result = run("fit", "--help")
    assert result.returncode == 0
    for text in ("default: approx-svc", "default: 1000", "default: squared_hinge",
                 "default: rbf", "default: scale"):
        assert text in " ".join(result.stdout.split()), text
