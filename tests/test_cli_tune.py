"""``kernelscale tune`` and ``fit --model auto``, run as a user would (subprocess)."""

import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import make_moons


def run(*args):
    return subprocess.run([sys.executable, "-m", "kernelscale.cli", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tune")
    X, y = make_moons(400, noise=0.25, random_state=0)
    for name, rows in (("train", slice(0, 300)), ("test", slice(300, None))):
        np.savetxt(folder / f"{name}.csv", np.column_stack([X[rows], y[rows]]), delimiter=",",
                   header="a,b,label", comments="")
    return folder


def test_tune_prints_leaderboard_saves_model_and_heatmap(data):
    model, heatmap = data / "best.ksm", data / "grid.png"
    result = run("tune", str(data / "train.csv"), "--test", str(data / "test.csv"),
                 "--families", "exact-svm,falkon", "-o", str(model), "--heatmap", str(heatmap),
                 "--no-progress", "--top", "5")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # both families race on every row (7 x 7 each), and the Laplacian, a neighbour of the
    # best line, with its best third of the gammas (3 x 7)
    assert "searched 119 configurations x 5 folds" in out
    assert out.count("family=") == 5 and "test accuracy: 0.9" in out
    assert heatmap.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    predicted = run("evaluate", str(model), str(data / "test.csv"))
    assert predicted.returncode == 0, predicted.stderr


def test_tune_errors_are_one_line(data):
    for args, message in [(["--families", "svm"], "unknown"),
                          (["--time-budget", "soon"], "--time-budget"),
                          (["--cv", "500"], "fewer than the cv=500 folds")]:
        result = run("tune", str(data / "train.csv"), "-o", str(data / "x.ksm"), *args)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_tune_tries_a_regressions_target_on_its_log_unless_told_not_to(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(400, 2))
    y = np.exp(1.5 * np.sin(1.5 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=400))
    np.savetxt(tmp_path / "times.csv", np.column_stack([X, y]), delimiter=",",
               header="a,b,seconds", comments="")
    for option, log in (("auto", True), ("no", False)):
        result = run("tune", str(tmp_path / "times.csv"), "--task", "regression",
                     "--learn-widths", "no", "--log-target", option, "--no-progress",
                     "-o", str(tmp_path / f"{option}.ksm"))
        assert result.returncode == 0, result.stderr
        best = next(line for line in result.stdout.splitlines() if line.startswith("best:"))
        assert ("'target': 'log'" in best) is log, best
    wrong = run("tune", str(tmp_path / "times.csv"), "--task", "classification",
                "--log-target", "yes", "-o", str(tmp_path / "c.ksm"))
    assert wrong.returncode == 2 and "--log-target yes applies to a regression" in \
        wrong.stderr and "Traceback" not in wrong.stderr, wrong.stderr


def test_fit_model_auto_says_what_it_chose(data):
    result = run("fit", str(data / "train.csv"), "--test", str(data / "test.csv"),
                 "--model", "auto", "-o", str(data / "auto.ksm"), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "model auto: 300 rows x 2 features, 2 classes: the exact SVM" in result.stderr
    assert "KernelSVC" in result.stdout


@pytest.mark.slow
def test_tune_nystrom_svm_family_saves_a_model_predict_reads(data):
    model = data / "nystrom.ksm"
    result = run("tune", str(data / "train.csv"), "--test", str(data / "test.csv"),
                 "--families", "nystrom-svm", "-o", str(model), "--no-progress", "--top", "3")
    assert result.returncode == 0, result.stderr
    assert "searched 49 configurations x 5 folds" in result.stdout
    assert result.stdout.count("family=nystrom-svm") == 3 and "test accuracy: 0.9" in result.stdout
    evaluated = run("evaluate", str(model), str(data / "test.csv"))
    assert evaluated.returncode == 0 and "ApproxKernelSVC" in evaluated.stdout, evaluated.stderr


@pytest.mark.slow
def test_predict_writes_probabilities_and_decision_values(data):
    model = data / "proba.ksm"
    fitted = run("fit", str(data / "train.csv"), "--model", "kernel-svc", "--param",
                 "probability=True", "-o", str(model), "--no-progress")
    assert fitted.returncode == 0, fitted.stderr
    result = run("predict", str(model), str(data / "test.csv"), "--probability",
                 "--no-progress")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "labels 0 1" and len(lines) == 101
    rows = np.array([[float(v) for v in line.split()] for line in lines[1:]])
    assert np.allclose(rows[:, 1:].sum(axis=1), 1.0, atol=1e-5)
    values = run("predict", str(model), str(data / "test.csv"), "--decision-values",
                 "--no-progress")
    assert values.returncode == 0 and len(values.stdout.splitlines()) == 100
    plain = data / "plain.ksm"
    assert run("fit", str(data / "train.csv"), "--model", "kernel-svc", "-o", str(plain),
               "--no-progress").returncode == 0
    refused = run("predict", str(plain), str(data / "test.csv"), "--probability")
    assert refused.returncode == 2 and "probability=True" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.slow
def test_fit_cv_prints_cross_validation_accuracy(data):
    result = run("fit", str(data / "train.csv"), "--model", "kernel-svc", "--cv", "4",
                 "-o", str(data / "cv.ksm"), "--no-progress")
    assert result.returncode == 0, result.stderr
    line = [s for s in result.stdout.splitlines() if s.startswith("cross-validation")][0]
    assert line.startswith("cross-validation accuracy (4 folds): 0.9")
    for args, message in [(["--cv", "1"], "K >= 2"), (["--cv", "400"], "fewer than the folds")]:
        bad = run("fit", str(data / "train.csv"), "-o", str(data / "x.ksm"), *args)
        assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow
def test_sigint_after_the_first_model_writes_a_model_predict_uses(tmp_path, interruptible):
    # issue 44: Ctrl-C 5 s after the first model held keeps the best model held: the
    # model file is written, exit 0, "stopped early: best of N scored"
    import signal
    import threading
    import time

    from kernelscale.datasets import make_nonlinear_problem

    X, y = make_nonlinear_problem(20_000, n_features=10, random_state=0)
    np.savez(tmp_path / "train.npz", X=X, y=y)
    model = tmp_path / "m.ksm"
    process = subprocess.Popen(
        [sys.executable, "-m", "kernelscale.cli", "tune", str(tmp_path / "train.npz"),
         "--time-budget", "10m", "--learn-widths", "no", "-o", str(model)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    seen = threading.Event()
    errors = []

    def watch():
        for line in process.stderr:
            errors.append(line)
            if "hold: done" in line:
                seen.set()
    reader = threading.Thread(target=watch, daemon=True)
    reader.start()
    try:
        assert seen.wait(120), "".join(errors)
        time.sleep(5)
        process.send_signal(signal.SIGINT)
        # stderr is the reader's alone (communicate() would close it under the reader);
        # the few lines of stdout fit the pipe until the process ends
        process.wait(timeout=120)
        out = process.stdout.read()
    finally:
        process.kill()
    reader.join(10)
    assert process.returncode == 0, "".join(errors)
    assert "stopped early: best of " in out and "scored (Ctrl-C)" in out
    predicted = run("predict", str(model), str(tmp_path / "train.npz"), "-o",
                    str(tmp_path / "p.txt"))
    assert predicted.returncode == 0, predicted.stderr
    assert len((tmp_path / "p.txt").read_text().split()) == 20_000


def test_tune_refuses_a_budget_below_the_cheapest_model_and_bad_durations(data):
    for budget, message in [("-5", "--time-budget must be positive"),
                            ("0", "positive"),
                            ("soon", "a duration such as"),
                            ("0.000001", "too short for the cheapest model")]:
        result = run("tune", str(data / "train.csv"), "-o", str(data / "x.ksm"),
                     "--time-budget", budget, "--no-progress")
        assert result.returncode == 2 and message in result.stderr, result.stderr
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith("kernelscale: error: ") and message in last, result.stderr
        assert "Traceback" not in result.stderr


def test_the_budget_counts_the_commands_start_not_a_callers_process(data):
    """Regression: the budget's clock started after the imports, so a 2-minute command beside
    two busy loops took 127 s of wall time. A launched command counts its process's age; a
    caller's ``main([...])`` late in a long process does not."""
    script = ("import sys, time; time.sleep(3); from kernelscale.cli import main; "
              f"sys.argv = ['kernelscale', 'tune', {str(data / 'train.csv')!r}, '-o', "
              f"{str(data / 'y.ksm')!r}, '--time-budget', '2s', '--no-progress']; "
              "sys.exit(main())")
    launched = subprocess.run([sys.executable, "-c", script], capture_output=True,
                              text=True, timeout=300)
    assert launched.returncode == 2 and "too short for the cheapest model" in launched.stderr
    called = subprocess.run([sys.executable, "-c", script.replace(
        "sys.exit(main())", "sys.exit(main(sys.argv[1:]))")], capture_output=True,
        text=True, timeout=300)
    assert called.returncode == 0, called.stderr
