"""Dask: fits and predictions on dask arrays equal the in-memory ones, on a LocalCluster."""

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from kernelscale import (
    ApproxKernelPCA,
    ApproxKernelRidge,
    ApproxKernelRidgeClassifier,
    ApproxKernelSVC,
    ApproxKernelSVR,
    KernelLogisticRegression,
    KernelSVC,
    LinearSVC,
    RandomFourierFeatures,
)
from kernelscale.datasets import make_nonlinear_problem

# parity tests run the solvers a few iterations
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    """Two in-process workers (threads): fast to start, real scheduler and transfers."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def problem():
    X, y = make_nonlinear_problem(6000, random_state=4)
    X_test, y_test = make_nonlinear_problem(2000, random_state=4, rows_seed=1)
    return X, y, X_test, y_test


def _dask(X, y=None, rows=1100):
    Xd = da.from_array(X, chunks=(rows, X.shape[1]))
    return Xd if y is None else (Xd, da.from_array(y, chunks=rows))


def _relative(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def test_importing_kernelscale_does_not_import_dask():
    code = "import sys, kernelscale; print('dask' in sys.modules, 'distributed' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False"]


def test_dask_ridge_equals_in_memory(client, problem):
    X, y, X_test, y_test = problem
    make = lambda: ApproxKernelRidgeClassifier(  # noqa: E731
        feature_map="rff", n_components=128, gamma=0.02, dtype="float64", random_state=0)
    memory = make().fit(X, y)
    distributed_fit = make().fit(*_dask(X, y))
    assert _relative(distributed_fit.coef_, memory.coef_) < 1e-6
    pred = distributed_fit.predict(_dask(X_test))
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), memory.predict(X_test))
    scores = distributed_fit.decision_function(_dask(X_test))
    np.testing.assert_allclose(scores.compute(), memory.decision_function(X_test), atol=1e-8)


@pytest.mark.slow
def test_dask_ridge_regressor_multi_output(client, problem):
    X, _, _, _ = problem
    Y = np.column_stack([X[:, 0] ** 2, np.cos(X[:, 1])])
    make = lambda: ApproxKernelRidge(feature_map="rff", n_components=64,  # noqa: E731
                                     gamma=0.1, dtype="float64", random_state=0)
    memory = make().fit(X, Y)
    Xd = _dask(X)
    Yd = da.from_array(Y, chunks=(1100, 2))
    with pytest.raises(ValueError, match="1-D"):
        make().fit(Xd, Yd)  # multi-output dask targets are not supported: say so
    single = make().fit(Xd, da.from_array(Y[:, 0], chunks=1100))
    assert _relative(single.coef_[0], make().fit(X, Y[:, 0]).coef_[0]) < 1e-6
    assert memory.coef_.shape == (2, 64)


@pytest.mark.slow
def test_dask_float32_ridge_is_close(client, problem):
    X, y, _, _ = problem
    make = lambda: ApproxKernelRidgeClassifier(  # noqa: E731
        feature_map="rff", n_components=128, gamma=0.02, random_state=0)
    assert _relative(make().fit(*_dask(X, y)).coef_, make().fit(X, y).coef_) < 1e-4


@pytest.mark.slow
def test_dask_squared_hinge_svm_matches_in_memory(client, problem):
    X, y, X_test, y_test = problem
    make = lambda: ApproxKernelSVC(feature_map="rff", n_components=128,  # noqa: E731
                                   gamma=0.02, tol=1e-6, max_iter=2000, random_state=0)
    memory = make().fit(X, y)
    distributed_fit = make().fit(*_dask(X, y))
    assert abs(distributed_fit.score(X_test, y_test) - memory.score(X_test, y_test)) <= 0.001
    assert _relative(distributed_fit.coef_, memory.coef_) < 2e-3


@pytest.mark.slow
def test_dask_squared_svr_matches_in_memory(client, problem):
    X = problem[0]
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1]
    make = lambda: ApproxKernelSVR(feature_map="rff", n_components=64, gamma=0.02,  # noqa: E731
                                   C=2.0, epsilon=0.05, tol=1e-6, max_iter=5000,
                                   dtype="float64", random_state=0)
    memory = make().fit(X, y)
    distributed_fit = make().fit(*_dask(X, y))
    assert _relative(distributed_fit.coef_, memory.coef_) < 2e-3
    np.testing.assert_allclose(distributed_fit.predict(X[:200]), memory.predict(X[:200]),
                               atol=2e-3)


@pytest.mark.slow
def test_dask_linear_svc_multiclass(client):
    from sklearn.datasets import make_classification

    X, y = make_classification(1500, 12, n_informative=6, n_classes=3, random_state=1)
    memory = LinearSVC(C=0.3, tol=1e-6, max_iter=3000).fit(X, y)
    distributed_fit = LinearSVC(C=0.3, tol=1e-6, max_iter=3000).fit(*_dask(X, y, rows=400))
    assert _relative(distributed_fit.coef_, memory.coef_) < 5e-3
    assert np.mean(distributed_fit.predict(X) == memory.predict(X)) > 0.99


@pytest.mark.slow
def test_dask_logistic_and_predict_proba(client, problem):
    X, y, X_test, _ = problem
    make = lambda: KernelLogisticRegression(feature_map="rff", n_components=64,  # noqa: E731
                                            gamma=0.02, C=10.0, tol=1e-8, random_state=0)
    memory = make().fit(X, y)
    distributed_fit = make().fit(*_dask(X, y))
    proba = distributed_fit.predict_proba(_dask(X_test))
    np.testing.assert_allclose(proba.compute(), memory.predict_proba(X_test), atol=1e-3)


@pytest.mark.slow
def test_dask_feature_map_and_pca_transform(client, problem):
    X, _, X_test, _ = problem
    fmap = RandomFourierFeatures(n_components=32, gamma=0.1, random_state=0).fit(X)
    Z = fmap.transform(_dask(X_test, rows=300))
    assert isinstance(Z, da.Array) and Z.shape == (2000, 32)
    # float32 features: their last bit depends on how BLAS splits the product across
    # its threads, and OpenBLAS ignores the workers' thread limit (set from a worker
    # thread of this in-process cluster) once the main thread has set one
    np.testing.assert_allclose(Z.compute(), fmap.transform(X_test), rtol=1e-6, atol=2e-6)
    pca = ApproxKernelPCA(n_components=2, feature_map="rff", map_components=32,
                          dtype="float64", random_state=0)
    memory = pca.fit(X).transform(X_test)
    distributed_fit = ApproxKernelPCA(n_components=2, feature_map="rff", map_components=32,
                                      dtype="float64", random_state=0).fit(_dask(X))
    np.testing.assert_allclose(np.abs(distributed_fit.transform(_dask(X_test)).compute()),
                               np.abs(memory), atol=1e-6)


def test_dask_errors(client, problem):
    X, y, _, _ = problem
    model = ApproxKernelRidgeClassifier(feature_map="rff", n_components=16, random_state=0)
    model.fit(*_dask(X, y))
    with pytest.raises(ValueError, match="features"):
        model.predict(_dask(X[:, :5]))
    with pytest.raises(ValueError, match="one entry per row"):
        model.fit(_dask(X), da.from_array(y[:-1], chunks=1000))
    with pytest.raises(ValueError, match="at least 2 classes"):
        model.fit(*_dask(X, np.zeros(len(X), dtype=int)))
    with pytest.raises(TypeError, match="needs its data in memory"):
        KernelSVC().fit(*_dask(X, y))


def _slow_rows(X, block, delay):
    time.sleep(delay)
    return X[block]


@pytest.mark.slow
def test_worker_processes_and_a_killed_worker(problem):
    """Two worker processes; one dies mid-fit; Dask recomputes its blocks; same result."""
    import dask

    X, y, _, _ = problem
    make = lambda: ApproxKernelRidgeClassifier(  # noqa: E731
        feature_map="rff", n_components=64, gamma=0.02, dtype="float64", random_state=0)
    memory = make().fit(X, y)
    blocks = [slice(s, s + 500) for s in range(0, len(X), 500)]
    parts = [da.from_delayed(dask.delayed(_slow_rows)(X, b, 0.4), (500, X.shape[1]), X.dtype)
             for b in blocks]
    Xd = da.concatenate(parts)
    yd = da.from_array(y, chunks=500)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        threads = c.run(lambda dask_worker: dask_worker.kernelscale_blas_threads
                        if hasattr(dask_worker, "kernelscale_blas_threads") else None)
        assert all(v is None for v in threads.values())  # nothing set before kernelscale runs
        from kernelscale.sources import set_worker_blas_threads

        set_worker_blas_threads(c)  # before the killer starts: the kill lands in the passes
        pids = c.run(__import__("os").getpid)
        victim = sorted(pids)[0]

        def kill():
            time.sleep(2.0)  # the map sample is drawn; the statistics pass is running
            __import__("os").kill(pids[victim], __import__("signal").SIGKILL)

        killer = threading.Thread(target=kill)
        killer.start()
        fitted = make().fit(Xd, yd)
        killer.join()
        assert _relative(fitted.coef_, memory.coef_) < 1e-6
        c.wait_for_workers(2, timeout=60)
        assert pids[victim] not in c.run(__import__("os").getpid).values()  # it did die
        blas = c.run(lambda dask_worker: getattr(dask_worker, "kernelscale_blas_threads", None))
        assert all(v is not None and v >= 1 for v in blas.values())


@pytest.mark.slow
def test_dask_falkon_equals_in_memory(client, problem):
    """With every row sampled for the centres, the distributed CG equals the local one."""
    from kernelscale import NystromKernelRidge, NystromKernelRidgeClassifier

    X, y, X_test, _ = problem
    make = lambda: NystromKernelRidgeClassifier(  # noqa: E731
        n_components=200, gamma=0.02, alpha=1e-3, dtype="float64", max_iter=100, tol=1e-10,
        random_state=0)
    memory = make().fit(X, y)
    fitted = make().fit(*_dask(X, y))
    np.testing.assert_array_equal(fitted.components_, memory.components_)
    assert _relative(fitted.dual_coef_, memory.dual_coef_) < 1e-6
    np.testing.assert_array_equal(fitted.predict(_dask(X_test)).compute(),
                                  memory.predict(X_test))
    target = np.sin(X[:, 0])
    reg = lambda: NystromKernelRidge(n_components=100, gamma=0.05, dtype="float64",  # noqa: E731
                                     random_state=0)
    assert _relative(reg().fit(_dask(X), da.from_array(target, chunks=1100)).dual_coef_,
                     reg().fit(X, target).dual_coef_) < 1e-6


@pytest.mark.slow
def test_dask_doubly_sgd_trains_block_by_block(client, problem):
    from kernelscale import DoublySGDSVC

    X, y, X_test, y_test = problem
    model = DoublySGDSVC(gamma=0.02, C=10.0, max_iter=60, random_state=0).fit(*_dask(X, y))
    assert model.n_iter_ == 60 and model.score(X_test, y_test) > 0.7


@pytest.mark.slow
def test_dask_kernel_kmeans(client):
    from sklearn.datasets import make_blobs
    from sklearn.metrics import adjusted_rand_score

    from kernelscale import ApproxKernelKMeans

    X, _ = make_blobs(3000, n_features=4, centers=3, cluster_std=1.0, random_state=1)
    make = lambda: ApproxKernelKMeans(n_clusters=3, feature_map="rff",  # noqa: E731
                                      n_components=64, gamma=0.05, random_state=0)
    memory = make().fit(X)
    fitted = make().fit(_dask(X, rows=500))
    labels = fitted.labels_
    assert isinstance(labels, da.Array)
    assert adjusted_rand_score(memory.labels_, labels.compute()) > 0.99
    distances = fitted.transform(_dask(X, rows=500))
    np.testing.assert_allclose(distances.compute(), fitted.transform(X), rtol=1e-5)
