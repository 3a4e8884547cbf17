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
    (KernelSVC, {}, "KernelSVC"),
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


@pytest.mark.parametrize("name", ["KernelSVR", "KernelOneClassSVM", "ApproxKernelOneClassSVM"])
def test_svr_and_one_class_show_a_bar_not_solver_lines(name, capfd):
    # regression: KernelSVR(verbose=1) printed one solver line per outer iteration (678 on
    # 193k rows) instead of a bar
    import numpy as np

    import kernelscale

    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(2000, 4))
    yr = np.sin(3 * Xr[:, 0]) + 0.1 * rng.normal(size=2000)
    cls = getattr(kernelscale, name)
    cls(verbose=1).fit(Xr, yr if name == "KernelSVR" else None)
    captured = capfd.readouterr()
    assert "outer" not in captured.out and name in captured.err and "%|" in captured.err
    cls(verbose=2).fit(Xr, yr if name == "KernelSVR" else None)
    assert "outer" in capfd.readouterr().out  # "[SMO] outer ..." / "[one-class] outer ..."


def test_convergence_bar_counts_the_way_to_tol():
    from kernelscale._progress import convergence_bar

    bar = convergence_bar("demo", verbose=0, tol=1e-3)
    for k, gap in enumerate([1.0, 0.1, 1e-2, 1e-3]):
        bar.monitor(16 * k, gap, 10)
    # from the first gap (1) to tol (1e-3): three decades, each a third of the bar
    assert bar.bar.n == 100
    bar = convergence_bar("demo", verbose=0, tol=1e-3)
    bar.monitor(0, 1.0, 10)
    bar.monitor(16, 0.1, 10)
    assert bar.bar.n == 33


def test_convergence_bar_shares_the_bar_between_problems():
    from kernelscale._progress import convergence_bar

    bar = convergence_bar("demo", verbose=0, tol=1e-3, parts=4)
    bar.monitor(0, 1.0, 10)
    bar.monitor(16, 1e-3, 10)
    assert bar.bar.n == 25  # the first of four problems solved
    bar.next_part()
    bar.monitor(0, 10.0, 10)  # the next problem's first gap starts its own scale
    assert bar.bar.n == 25
    for _ in range(3):
        bar.next_part()
    assert bar.bar.n == 100


def test_binary_kernel_svc_bar_counts_the_gap(capfd):
    # regression: a binary KernelSVC fit (one problem through the row cache) showed a bar
    # of one step that stayed at 0% until the fit was over
    import numpy as np

    Xb, yb = make_classification(n_samples=1500, n_features=6, random_state=0)
    KernelSVC(verbose=1).fit(Xb, yb)
    err = capfd.readouterr().err
    assert "KernelSVC" in err and "gap" in err and "%|" in err
    assert "problem 1/" not in err  # one problem: no problem count
    assert np.isfinite(KernelSVC().fit(Xb, yb).intercept_).all()


def test_approx_svr_bar_counts_passes_and_leaves_the_outcome(capfd):
    # regression: ApproxKernelSVR(verbose=1) was silent however long its dual CD ran
    import numpy as np

    from kernelscale import ApproxKernelSVR

    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(1500, 4))
    yr = np.sin(3 * Xr[:, 0]) + 0.1 * rng.normal(size=1500)
    params = {"n_components": 100, "random_state": 0}
    quiet = ApproxKernelSVR(**params).fit(Xr, yr)
    assert capfd.readouterr().err == ""
    shown = ApproxKernelSVR(verbose=1, **params).fit(Xr, yr)
    err = capfd.readouterr().err
    assert "ApproxKernelSVR" in err and "%|" in err and "gap" in err
    # run a pass per call for the bar, the solver visits the coordinates in the same order
    np.testing.assert_array_equal(quiet.coef_, shown.coef_)
    assert quiet.n_iter_ == shown.n_iter_ and quiet.intercept_ == shown.intercept_
