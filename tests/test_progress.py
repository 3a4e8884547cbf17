"""Long fits show a progress bar under verbose=1 or set_config(show_progress=True), else none."""

import pytest
from sklearn.datasets import make_classification

from kernelscale import (
    ApproxKernelSVC,
    DoublySGDSVC,
    KernelLogisticRegression,
    KernelSVC,
    LinearSVC,
    NystromKernelRidgeClassifier,
    config_context,
)

# the bars are tested on fits stopped early on purpose
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

X, y = make_classification(n_samples=300, n_features=6, n_classes=3, n_informative=4,
                           random_state=0)

MODELS = [
    (NystromKernelRidgeClassifier, {"n_components": 50, "random_state": 0}, "CG"),
    (KernelSVC, {}, "KernelSVC problems"),
    (LinearSVC, {"solver": "newton"}, "LinearSVC"),
    (ApproxKernelSVC, {"n_components": 50, "random_state": 0}, "ApproxKernelSVC"),
    (DoublySGDSVC, {"max_iter": 20, "random_state": 0}, "DoublySGDSVC"),
    (KernelLogisticRegression, {"n_components": 50, "random_state": 0}, "KernelLogistic"),
]


@pytest.mark.parametrize("cls, params, name", MODELS, ids=[m[0].__name__ for m in MODELS])
def test_bar_under_verbose_or_config_and_silence_otherwise(cls, params, name, capfd):
    cls(**params).fit(X, y)
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""
    cls(verbose=1, **params).fit(X, y)
    err = capfd.readouterr().err
    assert name in err and "%|" in err
    with config_context(show_progress=True):
        cls(**params).fit(X, y)
    assert name in capfd.readouterr().err


def test_falkon_bar_shows_the_residual(capfd):
    NystromKernelRidgeClassifier(n_components=50, verbose=1, random_state=0).fit(X, y)
    assert "residual" in capfd.readouterr().err


def test_verbose_two_prints_lines_not_a_bar(capfd):
    NystromKernelRidgeClassifier(n_components=50, verbose=2, random_state=0).fit(X, y)
    out = capfd.readouterr()
    assert "[FALKON] iter" in out.out and "%|" not in out.err
