"""The task on the command line: the target (or --task) decides classification or regression."""

import numpy as np
import pytest

from kernelscale import load_model
from kernelscale.cli import main
from kernelscale.cli._task import MANY_CLASSES, infer_task


def _final(model):
    """The estimator at the end of a model file's pipelines (a headed CSV is encoded first)."""
    while hasattr(model, "steps"):
        model = model[-1]
    return model


def _csv(path, y, n=160, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    y = y(X)
    fmt = "%d" if y.dtype.kind == "i" else "%.8g"
    np.savetxt(path, np.c_[X, y], delimiter=",", header="a,b,c,y", comments="",
               fmt=["%.8g"] * 3 + [fmt])
    return path


@pytest.fixture
def continuous(tmp_path):
    return _csv(tmp_path / "reg.csv", lambda X: X[:, 0] ** 2 + np.sin(X[:, 1]))


@pytest.fixture
def integers(tmp_path):  # a quantity with many integer values (a rating, a count)
    return _csv(tmp_path / "int.csv", lambda X: np.round(10 * X[:, 0] ** 2).astype(int))


@pytest.mark.parametrize("model", [None, "auto", "falkon"])
def test_a_float_target_fits_a_regression(continuous, tmp_path, capsys, model):
    out = tmp_path / "m.ksm"
    argv = ["fit", str(continuous), "-o", str(out), "--no-progress"]
    argv += [] if model is None else ["--model", model]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert "fractional values" in printed.err and "regression" in printed.err
    assert "training R^2" in printed.out and "numeric targets" in printed.out
    assert type(_final(load_model(out))).__name__ == "NystromKernelRidge"


def test_a_classifier_on_a_float_target_is_refused_in_one_line(continuous, tmp_path, capsys):
    assert main(["fit", str(continuous), "--model", "kernel-svc", "-o",
                 str(tmp_path / "m.ksm"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "kernel-svc is a classifier but the target is continuous" in err
    assert "--model svr" in err and not (tmp_path / "m.ksm").exists()


def test_many_integer_values_warn_and_task_regression_says_which(integers, tmp_path,
                                                                  capsys):
    out = tmp_path / "m.ksm"
    assert main(["fit", str(integers), "-o", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr()
    assert "distinct integer values" in printed.err and "--task regression" in printed.err
    assert type(_final(load_model(out))).__name__ == "ApproxKernelSVC"
    assert main(["fit", str(integers), "--task", "regression", "-o", str(out),
                 "--no-progress"]) == 0
    printed = capsys.readouterr()
    assert "distinct integer values" not in printed.err and "training R^2" in printed.out
    assert type(_final(load_model(out))).__name__ == "NystromKernelRidge"


def test_a_task_the_model_does_not_do_is_refused(continuous, tmp_path, capsys):
    assert main(["fit", str(continuous), "--model", "svr", "--task", "classification", "-o",
                 str(tmp_path / "m.ksm")]) == 2
    err = capsys.readouterr().err
    assert "--model svr does regression, not classification" in err
    assert "loading" not in err  # refused before the data are read


def test_infer_task_rules():
    assert infer_task(np.array([0.5, 1.5, 2.0]))[0] == "regression"
    assert infer_task(np.array([0.0, 1.0, 1.0]))[0] == "classification"
    assert infer_task(np.array(["a", "b"]))[0] == "classification"
    assert infer_task(np.arange(MANY_CLASSES))[1] is None
    assert "distinct integer values" in infer_task(np.arange(MANY_CLASSES + 1))[1]
    assert infer_task(np.array([0.5, 1.5]), "classification")[0] == "classification"
    assert infer_task(np.array([0.5, 1.5]), model="one-class")[0] == "outlier"
    assert infer_task(None, model="svr")[0] == "regression"
    with pytest.raises(ValueError, match="needs a numeric target"):
        infer_task(np.array(["a", "b"]), "regression")
    with pytest.raises(ValueError, match="does not apply to --model one-class"):
        infer_task(None, "regression", model="one-class")


def test_tune_searches_a_regression(continuous, tmp_path, capsys):
    out = tmp_path / "t.ksm"
    assert main(["tune", str(continuous), "--cv", "3", "--scale", "standard", "-o", str(out),
                 "--no-progress"]) == 0
    printed = capsys.readouterr()
    assert "training R^2" in printed.out and "RMSE" in printed.out
    assert "regression is searched with Nystrom kernel ridge" in printed.out
    model = load_model(out)  # the encoder and the scaling, fitted on TRAIN, before the best
    assert type(model).__name__ == "Pipeline"
    assert type(_final(model)).__name__ == "NystromKernelRidge"
    assert (tmp_path / "t.heatmap.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["evaluate", str(out), str(continuous)]) == 0
    assert "R^2" in capsys.readouterr().out


def test_tune_checks_the_heatmap_path_before_the_search(continuous, tmp_path, capsys):
    out = tmp_path / "t.ksm"
    assert main(["tune", str(continuous), "-o", str(out),
                 "--heatmap", str(tmp_path / "missing" / "h.png")]) == 2
    err = capsys.readouterr().err
    assert "--heatmap" in err and "does not exist" in err
    assert "loading" not in err and not out.exists()
