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
        (["approx", "--gamma", "-2"], "gamma must be > 0"),
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
