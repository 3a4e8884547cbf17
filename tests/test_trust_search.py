"""Regression tests of the second trust round (issue 34): the search refits what it scored,
keeps what it scored when interrupted, never hangs; seeds, jitter, threads, sums, files.

Each test failed on the code before its fix (the issue's closing note says which
were checked by reverting). The memory budget's items are in ``test_memory_plans.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score

from kernelscale import (
    KernelClassifierCV,
    KernelRegressorCV,
    KernelSVC,
    NystromKernelRidgeClassifier,
    save_model,
)
from kernelscale.solvers import KernelRows
from kernelscale.solvers.smo import smo_dense


def _smooth_regression(n=6000, seed=0):
    """A smooth target where float32 FALKON at a tiny penalty loses the fit (float64 keeps it)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 3))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.3 * X[:, 2] + 0.05 * rng.standard_normal(n)
    return X[:5000], y[:5000], X[5000:], y[5000:]


# 1. ----------------------------------------------- the refit is the model that was scored

@pytest.fixture(scope="module")
def tuned_regression():
    X, y, X_test, y_test = _smooth_regression()
    n = X.shape[0]
    search = KernelRegressorCV(alphas=[n * 1e-9, n * 1e-7, n * 1e-5], gamma_factors=[0.5, 2],
                               n_components=600, cv=3, random_state=0).fit(X, y)
    return search, X, y, X_test, y_test


@pytest.mark.slow
def test_the_refit_scores_what_the_search_scored(tuned_regression):
    search, X, y, X_test, y_test = tuned_regression
    best = search.best_params_
    # the grid's winner is the tiny penalty, below float32's floor: refitted in float64
    assert best["alpha"] == pytest.approx(X.shape[0] * 1e-9)
    assert best["dtype"] == "float64"
    assert search.best_estimator_.dtype == "float64"
    # before the fix the float32 refit of that point scored 0.75 on held-out rows
    test = search.score(X_test, y_test)
    assert test > search.best_score_ - 0.01


@pytest.mark.slow
def test_a_fresh_fit_of_best_params_is_the_tuned_model(tuned_regression):
    search, X, y, X_test, y_test = tuned_regression
    fresh = clone(search.best_estimator_).fit(X, y)
    params = fresh.get_params()
    for name in ("gamma", "alpha", "n_components", "dtype"):  # gamma: per feature, learned
        np.testing.assert_array_equal(params[name], search.best_params_[name])
    np.testing.assert_array_equal(fresh.components_, search.best_estimator_.components_)
    assert fresh.score(X_test, y_test) == pytest.approx(search.score(X_test, y_test),
                                                        abs=1e-12)


def test_the_refit_uses_the_centres_the_grid_scored():
    # the grid draws its centres once from all rows; the refit draws the same rows
    X, y, _, _ = _smooth_regression(2000)
    search = KernelRegressorCV(gamma_factors=[1.0], n_components=50, cv=3,
                               random_state=3).fit(X, y)
    from kernelscale.feature_maps import select_landmarks
    from kernelscale.kernels import RBF

    seed = search.best_estimator_.random_state
    centres, _ = select_landmarks(X, 50, "uniform", np.random.RandomState(seed),
                                  kernel=RBF(1.0), memory_budget=2**26)
    np.testing.assert_array_equal(search.best_estimator_.components_, centres)


def test_float32_search_does_not_search_penalties_it_cannot_refit():
    X, y, X_test, y_test = _smooth_regression()
    n = X.shape[0]
    with pytest.warns(UserWarning, match="below float32's floor"):
        search = KernelRegressorCV(alphas=[n * 1e-9, n * 1e-7, n * 1e-5],
                                   gamma_factors=[0.5, 2], n_components=600, cv=3,
                                   dtype="float32", learn_widths=False,
                                   random_state=0).fit(X, y)
    assert {p["alpha"] for p in search.cv_results_["params"]} == {n * 1e-5}
    assert search.best_estimator_.dtype == "float32"
    assert search.score(X_test, y_test) > search.best_score_ - 0.01
    with pytest.raises(ValueError, match="Every alpha is below float32's floor"):
        KernelRegressorCV(alphas=[n * 1e-9], dtype="float32").fit(X, y)


@pytest.mark.slow
def test_the_leaderboard_says_when_the_best_is_on_the_grid_edge(tuned_regression):
    search = tuned_regression[0]
    assert "alpha=" in search.leaderboard()[-1] and "smallest tried" in search.leaderboard()[-1]


def test_classifier_search_refits_the_dtype_of_its_point():
    X, y = make_classification(600, n_features=5, random_state=0)
    search = KernelClassifierCV(families="falkon", alphas=[600 * 1e-8, 600 * 1e-2],
                                gamma_factors=[1.0], n_components=50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # CG at the tiny penalty
        search.fit(X, y)
    for p in search.cv_results_["params"]:
        assert p["dtype"] == ("float64" if p["alpha"] < 600 * 1e-5 else "float32")
    assert search.best_estimator_.dtype == search.best_params_["dtype"]


# 2. --------------------------------------------- Ctrl-C keeps every point scored so far

def test_ctrl_c_inside_the_only_family_keeps_its_scored_points(monkeypatch):
    from kernelscale.model_selection import _runner

    X, y = make_classification(300, n_features=4, random_state=0)
    real, closed = _runner._Loop._close, []

    def close(self, g):  # the only family's grid, interrupted as its third gamma ends
        if len(closed) == 2:
            raise KeyboardInterrupt
        closed.append(g)
        return real(self, g)
    monkeypatch.setattr(_runner._Loop, "_close", close)
    with pytest.warns(UserWarning, match="interrupted"):
        search = KernelClassifierCV(families="exact-svm", random_state=0).fit(X, y)
    assert not search.complete_
    assert len(search.cv_results_["params"]) == 2 * 7  # two gammas, 7 Cs each
    # issue 44: no refit after Ctrl-C: the model held when it came
    assert search.model_origin_ == "held"
    assert search.predict(X).shape == (300,)


# 3. ------------------------------------------------------------- no hang on a failure

def test_a_failing_grid_unit_drops_its_gamma_instead_of_hanging(monkeypatch):
    # issue 44: a worker error in one configuration drops it with a warning, not the
    # search (before, it was raised, after every other thread ended)
    import kernelscale.model_selection._exact as exact

    X, y = make_classification(400, n_features=4, random_state=0)
    real, calls = exact.solve_problem_path, []

    def failing(*args, **kwargs):
        # the last unit of the first gamma fails (a MemoryError under a tight budget):
        # its gamma never finishes, and the other thread waits for the next kernel slot
        calls.append(1)
        if len(calls) == 5:
            raise MemoryError("injected")
        return real(*args, **kwargs)

    monkeypatch.setattr(exact, "solve_problem_path", failing)
    # room for one gamma's kernel beside the distances and the threads' blocks, not two
    budget = exact.exact_svm_bytes(X.shape[0]) + 3 * 4 * 320 * 320
    outcome = []

    def run():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outcome.append(KernelClassifierCV(families="exact-svm", n_jobs=2,
                                              memory_budget=budget, random_state=0).fit(X, y))
        outcome.append([str(w.message) for w in caught])

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "the grid hung after a unit failed"
    search, messages = outcome
    assert any("failed (MemoryError: injected); its configurations are dropped" in m
               for m in messages)
    gammas = {p["gamma"] for p in search.cv_results_["params"]}
    assert len(gammas) == 6 and not search.complete_  # the first gamma's configurations
    assert search.predict(X).shape == (400,)


# 5. ------------------------------------------------------- random_state as scikit-learn

def test_search_takes_a_random_state_instance():
    X, y = make_classification(200, n_features=4, random_state=0)
    a = KernelClassifierCV(families="falkon", n_components=30, gamma_factors=[1.0],
                           random_state=np.random.RandomState(0)).fit(X, y)
    b = KernelClassifierCV(families="falkon", n_components=30, gamma_factors=[1.0],
                           random_state=np.random.RandomState(0)).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])


@pytest.mark.parametrize("value", [np.random.default_rng(0), -1, 2**32, 1.5])
def test_random_state_follows_scikit_learns_rule(value):
    X, y = make_classification(100, n_features=4, random_state=0)
    with pytest.raises(ValueError, match="random_state"):
        KernelSVC(random_state=value).fit(X, y)


def test_random_state_constraint_agrees_with_scikit_learn():
    from sklearn.utils._param_validation import make_constraint

    from kernelscale._constraints import NAMED

    ours = NAMED["random_state"][0]
    theirs = make_constraint("random_state")
    for value in [None, 0, 7, 2**32 - 1, 2**32, -1, 1.0, "0", np.random.RandomState(0),
                  np.random.default_rng(0)]:
        assert ours(value) == theirs.is_satisfied_by(value), value
    assert not ours(True)  # scikit-learn takes a bool as a seed; a bool here is a slip


# 6. ------------------------------------------------------------- FALKON's jitter grows

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_falkon_jitter_reaches_its_cap(dtype):
    from kernelscale.solvers.falkon import MAX_RELATIVE_JITTER, FalkonPreconditioner

    m = 1000
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    eigenvalues = np.linspace(2.0, 0.0, m)
    eigenvalues[-1] = -0.005  # factors only with a jitter of 1e-2 (the cap)
    K = (Q * (eigenvalues / eigenvalues.mean())) @ Q.T
    K = (K + K.T) / 2
    scale = float(np.mean(np.diag(K)))
    precond = FalkonPreconditioner(np.array(K, dtype=dtype), 1e-3, dtype)
    assert precond.jitter == pytest.approx(MAX_RELATIVE_JITTER * scale)
    with pytest.raises(ValueError, match=r"jitter of 0.01 times its mean diagonal \("):
        worse = K - 0.05 * np.eye(m)
        FalkonPreconditioner(np.array(worse, dtype=dtype), 1e-3, dtype)


# 7. ------------------------------------------- numba's workqueue layer from many threads

def test_exact_models_from_threads_on_the_workqueue_layer():
    # the workqueue layer aborts the process when two threads enter a parallel region
    script = textwrap.dedent("""
        import threading
        import numpy as np
        from sklearn.datasets import make_classification
        from kernelscale import KernelSVC
        import numba

        X, y = make_classification(1500, n_features=8, random_state=0)
        ref = KernelSVC().fit(X, y).decision_function(X)
        assert numba.threading_layer() == "workqueue"
        out = []

        def work():
            for _ in range(3):
                out.append(KernelSVC().fit(X, y).decision_function(X))

        threads = [threading.Thread(target=work) for _ in range(3)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert len(out) == 9 and all(np.allclose(o, ref, atol=1e-6) for o in out)
        print("ok")
    """)
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue", "NUMBA_NUM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


def test_parallel_guard_serialises_only_where_needed(monkeypatch):
    import time

    from kernelscale import _parallel

    active, most = [0], [0]
    lock = threading.Lock()

    def region(_):
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1

    guarded = _parallel.parallel_guard(region)
    monkeypatch.setattr(_parallel, "_learn_layer", lambda: None)
    known = _parallel._SAFE[0]
    try:
        for safe, expected in ((False, 1), (True, 3)):
            _parallel._SAFE[0] = safe
            most[0] = 0
            # an array at the size where the parallel code runs (below, the serial twin)
            big = np.empty(_parallel.SERIAL_BELOW)
            threads = [threading.Thread(target=guarded, args=(big,)) for _ in range(3)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            assert most[0] == expected
    finally:
        _parallel._SAFE[0] = known


# 8. ------------------------------------------------ gradients rebuilt with float64 sums

def test_kernel_row_products_sum_in_float64():
    from kernelscale.kernels import RBF

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3))
    rows = KernelRows(X, RBF(0.01), 2**26)
    coef = rng.uniform(0, 1e3, 300)  # large C: the sum of many large, similar terms
    K32 = np.empty((300, 300), dtype=np.float32)
    rows.compute(np.arange(300), K32)
    exact = K32.astype(np.float64) @ coef
    got = rows.cross(np.arange(300), np.arange(300), coef)
    # float32 sums were off by ~1e-5 relative here
    np.testing.assert_allclose(got, exact, rtol=1e-12)


def test_dense_warm_start_gradient_sums_in_float64():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 3))
    K = np.exp(-0.01 * ((X[:, None] - X[None]) ** 2).sum(-1)).astype(np.float32)
    y = np.where(rng.random(400) < 0.5, 1.0, -1.0)
    alpha = rng.uniform(0, 100, 400)
    alpha -= y * (y @ alpha) / 400  # keep sum y alpha = 0
    alpha = np.clip(alpha, 0, 100)
    r = smo_dense(K, y, np.full(400, 100.0), alpha0=alpha, max_iter=1, warn=False)
    r0 = smo_dense(K.astype(np.float64), y, np.full(400, 100.0), alpha0=alpha, max_iter=1,
                   warn=False)
    np.testing.assert_allclose(r["gradient"], r0["gradient"], rtol=1e-9, atol=1e-9)


# 9. ------------------------------------------------------------- silent nonsense in files

def test_save_model_refuses_an_unfitted_estimator(tmp_path):
    with pytest.raises(ValueError, match="not fitted"):
        save_model(NystromKernelRidgeClassifier(), tmp_path / "m.ksm")
    assert not (tmp_path / "m.ksm").exists()


def test_evaluate_warns_about_labels_the_model_never_saw(tmp_path, capsys):
    from kernelscale.cli import main

    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    train = np.column_stack([X, (X[:, 0] > 0).astype(int)])
    test = np.column_stack([X[:20], np.full(20, 7)])
    np.savetxt(tmp_path / "train.csv", train, delimiter=",", fmt="%.6g")
    np.savetxt(tmp_path / "test.csv", test, delimiter=",", fmt="%.6g")
    assert main(["fit", str(tmp_path / "train.csv"), "--model", "ridge", "-m", "20",
                 "-o", str(tmp_path / "m.ksm"), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "m.ksm"), str(tmp_path / "test.csv"),
                 "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "20 of 20 rows have labels the model never saw" in err and "7" in err


def test_r2_of_the_regression_fixture_is_not_trivial():
    # guards the fixture: a float32 refit of the tiny penalty is far off on it
    from kernelscale import NystromKernelRidge

    X, y, X_test, y_test = _smooth_regression()
    gamma = 0.5 / (3 * X.var())
    f32 = NystromKernelRidge(n_components=600, gamma=gamma, alpha=X.shape[0] * 1e-9,
                             random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the float32 fit breaks down
        f32.fit(X, y)
    f64 = clone(f32).set_params(dtype="float64").fit(X, y)
    assert r2_score(y_test, f64.predict(X_test)) - r2_score(y_test, f32.predict(X_test)) > 0.05


@pytest.mark.slow
def test_ctrl_c_during_kernelscale_tune_keeps_the_best_so_far(tmp_path, interruptible):
    # a real SIGINT to a real `kernelscale tune`, once its bar shows a scored gamma
    import select
    import signal
    import time

    X, y = make_classification(3000, n_features=8, random_state=0)
    np.savetxt(tmp_path / "train.csv", np.column_stack([X, y]), delimiter=",", fmt="%.6g")
    model = tmp_path / "m.ksm"
    process = subprocess.Popen(
        [sys.executable, "-m", "kernelscale.cli", "tune", str(tmp_path / "train.csv"),
         "--families", "exact-svm", "-o", str(model), "--heatmap", str(tmp_path / "h.png")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=interruptible)
    seen, start = b"", time.monotonic()
    while b"best 0." not in seen and time.monotonic() - start < 300:
        ready, _, _ = select.select([process.stderr], [], [], 1.0)
        if ready:
            chunk = os.read(process.stderr.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
    assert b"best 0." in seen, seen[-500:]
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, (seen + err)[-1500:]
    assert b"(stopped early)" in out and b"model written to" in out
    assert b"interrupted" in seen + err
    assert model.is_file()


def test_penalties_whose_float64_refit_cannot_keep_its_kernel_are_not_searched():
    # issue 35: at 1e6 rows the best alpha (1e-6 n) was refitted in float64 with K(X, C)
    # recomputed at every CG step: 600 s for a 10-minute search. Where the float64 refit
    # cannot keep K(X, C) in the budget, the search keeps to float32's floor
    from kernelscale.models.ridge import FLOAT32_PENALTY_FLOOR

    X, y, _, _ = _smooth_regression(3000)
    tight = KernelRegressorCV(n_components=200, gamma_factors=[1.0], cv=3,
                              memory_budget="5M", random_state=0).fit(X, y)
    alphas = np.array([p["alpha"] for p in tight.cv_results_["params"]])
    assert alphas.min() >= FLOAT32_PENALTY_FLOOR * len(y)
    assert "not searched: their float64 refit could not keep K(X, C)" in tight.family_choice_
    roomy = KernelRegressorCV(n_components=200, gamma_factors=[1.0], cv=3,
                              random_state=0).fit(X, y)
    assert min(p["alpha"] for p in roomy.cv_results_["params"]) < \
        FLOAT32_PENALTY_FLOOR * len(y)


def test_penalties_no_float32_fit_can_use_are_refused_before_the_widths(monkeypatch):
    # regression: with every alpha below float32's floor the search learned the widths
    # first (9 s on 5,000 rows) and only then said the alphas could not be used
    from kernelscale.model_selection._evaluator import Evaluator

    monkeypatch.setattr(Evaluator, "learn",
                        lambda *a, **k: pytest.fail("the widths were learned first"))
    X, y, _, _ = _smooth_regression()
    with pytest.raises(ValueError, match="Every alpha is below float32's floor"):
        KernelRegressorCV(alphas=[len(y) * 1e-9], dtype="float32").fit(X, y)
    with pytest.raises(ValueError, match="alphas holds"):
        KernelRegressorCV(alphas=[-1.0]).fit(X, y)


def test_small_arrays_run_the_serial_twin_with_the_same_results():
    """Below ``SERIAL_BELOW`` elements a guarded function runs its serial compilation (no
    parallel region to enter and wait on); its results are the parallel code's."""
    from kernelscale import _parallel
    from kernelscale.kernels._compiled import rbf_exponent

    serial = rbf_exponent.serial()
    assert serial is rbf_exponent.serial()  # compiled once
    assert not serial.targetoptions.get("parallel") and \
        rbf_exponent.dispatcher.targetoptions["parallel"]
    rng = np.random.default_rng(0)
    for n in (8, 300):  # 64 elements: the serial twin; 90,000: the parallel code
        block = -rng.random((n, n))
        x, y = rng.random(n), rng.random(n)
        want = block.copy()
        rbf_exponent.dispatcher(want, x, y, -1e300)
        got = block.copy()
        rbf_exponent(got, x, y, -1e300)
        np.testing.assert_array_equal(got, want)
        assert (n * n < _parallel.SERIAL_BELOW) == (n == 8)
