"""Writes the model files of tests/test_persistence.py's old-files check.

Run once, at commit 18064a0 (kernelscale 0.1.0, before issue 37 moved the estimators
into family packages): ``python tests/data/models_0_1/make.py``. The files and
``expected.npz`` (the input rows and each model's predictions then) are committed; a
later version must load every file and predict the same.
"""

from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import kernelscale as ks

HERE = Path(__file__).resolve().parent
X, y = make_classification(80, n_features=5, random_state=0)
t = X[:, 0] + np.sin(X[:, 1])
MODELS = {
    "kernel_svc": (ks.KernelSVC(), y),
    "kernel_svr": (ks.KernelSVR(), t),
    "kernel_one_class": (ks.KernelOneClassSVM(), None),
    "approx_svc": (ks.ApproxKernelSVC(n_components=20, random_state=0), y),
    "approx_svr": (ks.ApproxKernelSVR(n_components=20, random_state=0), t),
    "approx_one_class": (ks.ApproxKernelOneClassSVM(n_components=20, random_state=0), None),
    "approx_ridge": (ks.ApproxKernelRidge(n_components=20, random_state=0), t),
    "approx_ridge_classifier": (ks.ApproxKernelRidgeClassifier(n_components=20,
                                                               random_state=0), y),
    "falkon": (ks.NystromKernelRidge(n_components=20, random_state=0), t),
    "falkon_classifier": (ks.NystromKernelRidgeClassifier(n_components=20, random_state=0), y),
    "linear_svc": (ks.LinearSVC(), y),
    "logistic": (ks.KernelLogisticRegression(n_components=20, random_state=0), y),
    "doubly_sgd": (ks.DoublySGDSVC(max_iter=5, random_state=0), y),
    "pca": (ks.ApproxKernelPCA(n_components=2, map_components=20, random_state=0), None),
    "kmeans": (ks.ApproxKernelKMeans(n_clusters=2, n_components=20, random_state=0), None),
    "pipeline": (make_pipeline(StandardScaler(), ks.KernelSVC(probability=True,
                                                             random_state=0)), y),
}


def outputs(model):
    """What the model computes on ``X``: predictions, or the transform for PCA."""
    if hasattr(model, "predict"):
        return np.asarray(model.predict(X), dtype=np.float64)
    return np.asarray(model.transform(X), dtype=np.float64)


if __name__ == "__main__":
    expected = {"X": X}
    for name, (model, target) in MODELS.items():
        model.fit(X, target) if target is not None else model.fit(X)
        ks.save_model(model, HERE / f"{name}.ksm")
        expected[name] = outputs(model)
    np.savez(HERE / "expected.npz", **expected)
