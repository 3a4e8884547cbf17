"""Regression tests for the command line's trust defects: every error one line, said early."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from kernelscale.cli import main


def one_line(capsys):
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("kernelscale: error: "), lines
    return lines[0]


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=120) > 0).astype(int)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    return tmp_path, X, y


# 10. every CLI error is one line and exit status 2, argparse's included

@pytest.mark.parametrize("args, message", [
    (["-C", "-1"], "C must be > 0"),
    (["-C", "abc"], "C must be a number"),
    (["--gamma", "wide"], "'wide' is none of these"),
    (["-m", "0"], "expected a positive integer"),
    (["--memory-budget", "-5G"], "memory budget must be positive"),
    (["--model", "nonsense"], "invalid choice"),
])
def test_option_errors_are_one_line(data, capsys, args, message):
    tmp, _, _ = data
    assert main(["fit", str(tmp / "d.npz"), "-o", str(tmp / "m.ksm"), *args,
                 "--no-progress"]) == 2
    assert message in one_line(capsys)


# 11. output paths are checked before the work

def test_output_paths_are_checked_before_any_work(data, capsys, monkeypatch):
    import kernelscale.datasets

    tmp, _, _ = data
    assert main(["fit", str(tmp / "d.npz"), "-o", str(tmp / "m.ksm"), "--model", "ridge",
                 "-m", "20", "--no-progress"]) == 0
    capsys.readouterr()

    def never(*args, **kwargs):
        raise AssertionError("the data were loaded before the output path was checked")

    monkeypatch.setattr(kernelscale.datasets, "load_data", never)
    assert main(["predict", str(tmp / "m.ksm"), "a9a:test", "-o", str(tmp / "no" / "p.txt"),
                 "--no-progress"]) == 2
    assert "does not exist" in one_line(capsys)
    assert main(["evaluate", str(tmp / "m.ksm"), "a9a:test", "--json", str(tmp),
                 "--no-progress"]) == 2
    assert "is a directory" in one_line(capsys)


# 12. more features in a svmlight file than the model: said as such

def test_predict_names_a_feature_count_mismatch(tmp_path, capsys):
    (tmp_path / "train.svm").write_text("".join(f"{i % 2} 1:{i} 2:{i * 0.5}\n"
                                                for i in range(40)))
    (tmp_path / "wide.svm").write_text("1 1:1 2:2 3:4\n0 1:0.5 4:1\n")
    assert main(["fit", str(tmp_path / "train.svm"), "--model", "ridge", "-m", "10",
                 "-o", str(tmp_path / "m.ksm"), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "m.ksm"), str(tmp_path / "wide.svm"),
                 "--no-progress"]) == 2
    message = one_line(capsys)
    assert "has 4 features but the model was trained on 2" in message
    assert "not a valid svmlight" not in message


# 13. CSV: the delimiter is detected; a name needs a header; evaluate needs labels

def test_semicolon_csv_is_read(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    lines = ["a;b;label"] + [f"{u:.4f};{v:.4f};{int(u > 0)}" for u, v in X]
    (tmp_path / "semi.csv").write_text("\n".join(lines) + "\n")
    assert main(["fit", str(tmp_path / "semi.csv"), "--model", "ridge", "-m", "20",
                 "--label-column", "label", "-o", str(tmp_path / "m.ksm"),
                 "--no-progress"]) == 0
    assert "2 features" in capsys.readouterr().out


def test_headerless_csv_with_a_named_label_column(tmp_path, capsys):
    (tmp_path / "bare.csv").write_text("1,2,0\n3,4,1\n")
    assert main(["fit", str(tmp_path / "bare.csv"), "--label-column", "label",
                 "-o", str(tmp_path / "m.ksm"), "--no-progress"]) == 2
    message = one_line(capsys)
    assert "has no header line" in message and "the header (" not in message


def test_evaluate_says_a_label_column_is_needed(data, capsys):
    tmp, X, _ = data
    assert main(["fit", str(tmp / "d.npz"), "--model", "ridge", "-m", "20",
                 "-o", str(tmp / "m.ksm"), "--no-progress"]) == 0
    np.savetxt(tmp / "bare.csv", X, delimiter=",")
    capsys.readouterr()
    assert main(["evaluate", str(tmp / "m.ksm"), str(tmp / "bare.csv"), "--no-progress"]) == 2
    assert "no label column" in one_line(capsys)
    assert main(["predict", str(tmp / "m.ksm"), str(tmp / "bare.csv"), "--no-progress"]) == 0


# 14. NaN / inf and malformed lines: file, line and column, no Python internals

@pytest.mark.parametrize("name, text, expected", [
    ("inf.csv", "a,b,y\n1,2,0\n3,inf,1\n", "line 3, column b: 'inf' is infinite"),
    ("nan.csv", "1,2,0\n3,nan,1\n", "line 2, column 2: 'nan' is NaN or infinite"),
    ("inf.svm", "1 1:1 2:2\n0 1:inf\n", "line 2: feature 1 is inf"),
    ("short.svm", "1 1:1\n0 2\n", "line 2: '2' is not of the form index:value"),
])
def test_bad_values_are_located(tmp_path, capsys, name, text, expected):
    (tmp_path / name).write_text(text)
    assert main(["fit", str(tmp_path / name), "-o", str(tmp_path / "m.ksm"),
                 "--no-progress"]) == 2
    message = one_line(capsys)
    assert expected in message, message
    assert "HistGradientBoosting" not in message and "unpack" not in message


# 15. a missing named data set says where it comes from and where to put it

def test_missing_named_data_set(tmp_path, capsys):
    assert main(["fit", "mnist10k", "--data-dir", str(tmp_path), "-o",
                 str(tmp_path / "m.ksm"), "--no-progress"]) == 2
    message = one_line(capsys)
    assert "t10k-images-idx3-ubyte.gz" in message and "yann.lecun.com" in message
    assert "KERNELSCALE_DATA" in message


# 16. --help: every default, every option explained, and fast

def test_help_shows_defaults_and_answers_fast():
    # fast: answering imports nothing heavy (no wall-clock limit on a shared machine)
    code = ("import runpy, sys\nsys.argv = ['kernelscale', '--help']\n"
            "try:\n    runpy.run_module('kernelscale.cli', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print('heavy:', [m for m in ('sklearn', 'numba', 'scipy') if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert "COMMAND" in result.stdout and "heavy: []" in result.stdout
    approx = subprocess.run([sys.executable, "-m", "kernelscale.cli", "approx", "--help"],
                            capture_output=True, text=True, check=True).stdout
    flat = " ".join(approx.split())
    assert "the kernel to approximate (default: rbf)" in flat
    assert "kernel scale: scale, auto or a number (default: scale)" in flat
    fit = " ".join(subprocess.run([sys.executable, "-m", "kernelscale.cli", "fit", "--help"],
                                  capture_output=True, text=True, check=True).stdout.split())
    for text in ("(default: 1000 for approx-svc / ridge / logistic, auto for falkon)",
                 "(default: squared_hinge)", "50 CG iterations for falkon", "auto = 1e-6 n"):
        assert text in fit, text


# 8. a streamed fit says whether it kept the data or re-reads the file each pass

@pytest.mark.parametrize("budget, said", [("1G", "read once, then kept in memory"),
                                          ("1K", "every pass re-read the file")])
def test_streamed_fit_says_how_it_read_the_file(data, capsys, budget, said):
    tmp, X, y = data
    np.save(tmp / "d.npy", np.column_stack([X, y]))
    assert main(["fit", str(tmp / "d.npy"), "--stream", "--chunk-rows", "30", "--model",
                 "falkon", "-m", "20", "--memory-budget", budget, "-o", str(tmp / "m.ksm"),
                 "--no-progress"]) == 0
    assert said in capsys.readouterr().out
