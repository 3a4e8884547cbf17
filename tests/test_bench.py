"""The benchmark runner and report: medians, pairing with scikit-learn, files and plots."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn import svm
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.pipeline import make_pipeline

from kernelscale import ApproxKernelSVC, LinearSVC
from kernelscale.bench import (
    EXPERIMENTS,
    Experiment,
    Method,
    build_experiment,
    run_experiment,
    write_report,
)
from kernelscale.datasets import make_synthetic_problem

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def result():
    X_train, X_test, y_train, y_test = make_synthetic_problem(1200)
    gamma = 0.05
    experiment = Experiment(
        name="toy", title="toy problem", data=(X_train, y_train, X_test, y_test),
        data_description="make_classification(1200)", sizes=[10, 40],
        sweep=[
            Method("kernelscale Nystroem", "kernelscale", "nystroem",
                   lambda D, s: ApproxKernelSVC(n_components=D, gamma=gamma, random_state=s),
                   lambda m: m.feature_map_),
            Method("scikit-learn Nystroem", "scikit-learn", "nystroem",
                   lambda D, s: make_pipeline(SkNystroem(gamma=gamma, n_components=D,
                                                         random_state=s),
                                              svm.LinearSVC(random_state=s)),
                   lambda m: m[0]),
        ],
        references=[
            Method("scikit-learn SVC", "scikit-learn", "exact",
                   lambda s: svm.SVC(gamma=gamma), rows=300),
            Method("kernelscale LinearSVC", "kernelscale", "linear",
                   lambda s: LinearSVC(random_state=s)),
        ],
        gamma=gamma, train_accuracy=True, n_eval=200, notes=["a note"],
        highlight={"nystroem": 40},
    )
    calls = []
    res = run_experiment(experiment, repeats=3, progress=calls.append, command="test run")
    assert len(calls) == experiment.n_runs(3) == 3 * (2 + 2 * 2)
    # interleaved: every model's first run comes before any second run
    assert all(c.startswith("run 1/3") for c in calls[:6])
    return res


@pytest.mark.slow
def test_records_hold_medians_of_every_run(result):
    assert result["repeats"] == 3 and result["command"] == "test run"
    assert len(result["records"]) == 2 + 2 * 2
    for record in result["records"]:
        assert len(record["runs"]) == 3
        for key in ("accuracy", "fit_s", "predict_s", "total_s", "train_accuracy"):
            assert record[key] == pytest.approx(np.median([r[key] for r in record["runs"]]))
        assert 0.5 < record["accuracy"] <= 1.0
    exact = next(r for r in result["records"] if r["family"] == "exact")
    assert exact["train_rows"] == 300 and "approx_error" not in exact
    sweep = [r for r in result["records"] if r["kind"] == "sweep"]
    assert {r["size"] for r in sweep} == {10, 40}
    # the same map at the same size: both libraries' errors are measured alike,
    # and more landmarks give a smaller error
    for label in ("kernelscale Nystroem", "scikit-learn Nystroem"):
        small, large = (next(r for r in sweep if r["label"] == label and r["size"] == s)
                        for s in (10, 40))
        assert 0 < large["approx_error"] < small["approx_error"] < 1.5
        assert large["n_features_out"] == 40


@pytest.mark.slow
def test_report_files_and_ratios(result, tmp_path):
    paths = write_report(result, tmp_path / "out")
    assert set(paths) == {"report", "results", "accuracy", "time", "error"}
    for key in ("accuracy", "time", "error"):
        assert paths[key].read_bytes()[:8] == PNG
    assert json.loads(paths["results"].read_text())["records"] == json.loads(
        json.dumps(result["records"]))
    report = paths["report"].read_text()
    assert "Command: `test run`" in report and "- a note" in report
    assert "## The source document's configuration" in report
    assert "median of 3 run(s)" in report
    ours = next(r for r in result["records"]
                if r["label"] == "kernelscale Nystroem" and r["size"] == 40)
    theirs = next(r for r in result["records"]
                  if r["label"] == "scikit-learn Nystroem" and r["size"] == 40)
    row = next(line for line in report.splitlines()
               if line.startswith("| kernelscale Nystroem, D=40 |"))
    assert f"{theirs['total_s'] / ours['total_s']:.1f}x" in row
    assert f"{100 * (ours['accuracy'] - theirs['accuracy']):+.2f}" in row
    for image in ("accuracy_vs_features.png", "time_vs_features.png",
                  "approx_error_vs_features.png"):
        assert f"]({image})" in report


def test_experiment_registry():
    assert list(EXPERIMENTS) == ["synthetic", "adult", "mnist", "narrow-kernel"]
    with pytest.raises(ValueError, match="Unknown experiment 'covtype'"):
        build_experiment("covtype")
    quick = build_experiment("synthetic", quick=True)
    assert quick.sizes == [20, 100, 600] and quick.data[0].shape == (4500, 20)
    default = build_experiment("synthetic", exact_rows=1000)
    assert default.data[0].shape == (15000, 20) and max(default.sizes) == 600
    assert "subsample of 1000" in default.notes[0]
    labels = {m.library for m in default.sweep + default.references}
    assert labels == {"kernelscale", "scikit-learn"}


@pytest.mark.data
def test_real_data_experiments_build(a9a, mnist10k):
    a9a_quick = build_experiment("adult", quick=True)
    assert a9a_quick.data[0].shape == (32561, 123)
    assert any("subsample of 8000" in n for n in a9a_quick.notes)
    mnist = build_experiment("mnist")
    assert mnist.sizes[0] == 50 and mnist.sizes[-1] == 2000
    assert any("k-means" in m.label for m in mnist.sweep)
    seed003 = build_experiment("narrow-kernel", quick=True)
    assert seed003.gamma == 0.2 and seed003.highlight == {"nystroem": 400, "rff": 1000}
    X = seed003.data[0]
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-9)
