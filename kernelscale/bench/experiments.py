"""The source documents' experiments (shared/SPEC.md section 4), kernelscale beside scikit-learn.

Each builder returns an :class:`~kernelscale.bench._runner.Experiment`;
``quick`` shrinks it to a smoke run of a minute or two, ``full`` grows it to the
source document's size where that differs from the default.
"""

from __future__ import annotations

import numpy as np
from sklearn import svm
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.kernel_approximation import RBFSampler
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ..datasets import check_dataset, load_a9a, load_mnist10k, make_synthetic_problem
from ..kernels import resolve_gamma
from ..models import ApproxKernelSVC, KernelSVC, LinearSVC, NystromKernelRidgeClassifier
from ._runner import KERNELSCALE, SKLEARN, Experiment, Method

__all__ = ["EXPERIMENTS", "build_experiment", "check_experiment_data"]


def _ours_map(model):
    return model.feature_map_


def _their_map(model):
    return model[0]


def _sweep_methods(gamma, C, *, kmeans=False, rff=True):
    ours = [Method(
        "kernelscale Nystroem + LinearSVC", KERNELSCALE, "nystroem",
        lambda D, s: ApproxKernelSVC(feature_map="nystroem", n_components=D, gamma=gamma, C=C,
                                     random_state=s),
        _ours_map,
    )]
    if kmeans:
        ours.append(Method(
            "kernelscale Nystroem (k-means landmarks) + LinearSVC", KERNELSCALE,
            "nystroem-kmeans",  # no scikit-learn peer: not paired in speed-ups
            lambda D, s: ApproxKernelSVC(feature_map="nystroem-kmeans", n_components=D,
                                         gamma=gamma, C=C, random_state=s),
            _ours_map,
        ))
    theirs = [Method(
        "scikit-learn Nystroem + LinearSVC", SKLEARN, "nystroem",
        lambda D, s: make_pipeline(SkNystroem(gamma=gamma, n_components=D, random_state=s),
                                   svm.LinearSVC(C=C, random_state=s)),
        _their_map,
    )]
    if rff:
        ours.append(Method(
            "kernelscale RFF + LinearSVC", KERNELSCALE, "rff",
            lambda D, s: ApproxKernelSVC(feature_map="rff", n_components=D, gamma=gamma, C=C,
                                         random_state=s),
            _ours_map,
        ))
        theirs.append(Method(
            "scikit-learn RBFSampler + LinearSVC", SKLEARN, "rff",
            lambda D, s: make_pipeline(RBFSampler(gamma=gamma, n_components=D, random_state=s),
                                       svm.LinearSVC(C=C, random_state=s)),
            _their_map,
        ))
    return ours + theirs


def _references(gamma, C, *, exact_rows=None, ovo=False, falkon=True, linear_C=None):
    linear_C = C if linear_C is None else linear_C
    shape = "ovo" if ovo else "ovr"
    refs = [
        Method("scikit-learn SVC (exact RBF)", SKLEARN, "exact",
               lambda s: svm.SVC(C=C, gamma=gamma), rows=exact_rows),
        Method("kernelscale KernelSVC (exact RBF)", KERNELSCALE, "exact",
               lambda s: KernelSVC(C=C, gamma=gamma, multiclass=shape),
               rows=exact_rows),
        Method(f"scikit-learn LinearSVC (C={linear_C:g})", SKLEARN, "linear",
               lambda s: svm.LinearSVC(C=linear_C, random_state=s)),
        Method(f"kernelscale LinearSVC (C={linear_C:g})", KERNELSCALE, "linear",
               lambda s: LinearSVC(C=linear_C, random_state=s)),
    ]
    if falkon:
        refs.append(Method(
            "kernelscale NystromKernelRidgeClassifier (defaults)", KERNELSCALE, "falkon",
            lambda s: NystromKernelRidgeClassifier(gamma=gamma, random_state=s),
        ))
    return refs


def _exact_note(rows, n):
    if rows is None or rows >= n:
        return []
    return [f"The exact SVMs (scikit-learn SVC and kernelscale KernelSVC) are fitted on a "
            f"random subsample of {rows} of the {n} training rows (the same rows for both) "
            "to keep the run short; every other model uses all rows."]


def synthetic(*, quick=False, full=False, data_dir=None, seed=0, exact_rows=None):
    """The blog post (seed 000): ``make_classification``, exact vs linear vs RFF vs Nystrom,
    D = 20..600."""
    n = 100_000 if full else (6_000 if quick else 20_000)
    X_train, X_test, y_train, y_test = make_synthetic_problem(n)
    gamma = resolve_gamma("scale", X_train)
    sizes = [20, 100, 600] if quick else [20, 50, 100, 200, 400, 600]
    return Experiment(
        name="synthetic", title="synthetic problem of the blog post (seed 000)",
        data=(X_train, y_train, X_test, y_test),
        data_description=(f"make_classification(n_samples={n}, random_state=0), 75/25 split "
                          "(random_state=42), standardized" +
                          ("" if full else "; the source document uses 100,000 rows "
                           "(`--full`)")),
        sizes=sizes, sweep=_sweep_methods(gamma, 1.0),
        references=_references(gamma, 1.0, exact_rows=exact_rows),
        gamma=gamma, notes=_exact_note(exact_rows, len(y_train)), seed=seed,
    )


def adult(*, quick=False, full=False, data_dir=None, seed=0, exact_rows=None):
    """Seed 001: a9a (UCI Adult), accuracy and time vs components, exact and linear lines."""
    X_train, y_train, X_test, y_test = load_a9a(data_dir)
    gamma = resolve_gamma("scale", X_train)
    sizes = [100, 300, 1000] if quick else [100, 200, 500, 1000, 2000]
    if exact_rows is None and quick:
        exact_rows = 8000
    return Experiment(
        name="adult", title="a9a (UCI Adult)",
        data=(X_train, y_train, X_test, y_test),
        data_description="a9a train / a9a.t test (LIBSVM files), 123 binary features, sparse",
        sizes=sizes, sweep=_sweep_methods(gamma, 1.0),
        references=_references(gamma, 1.0, exact_rows=exact_rows),
        gamma=gamma, notes=_exact_note(exact_rows, len(y_train)), seed=seed,
    )


def mnist(*, quick=False, full=False, data_dir=None, seed=0, exact_rows=None):
    """Seed 002: MNIST-10k one-vs-rest, landmarks 50..2000, uniform vs k-means."""
    X_train, y_train, X_test, y_test = load_mnist10k(data_dir)
    gamma = resolve_gamma("scale", X_train)
    sizes = [50, 200, 1000] if quick else [50, 100, 200, 500, 1000, 2000]
    if exact_rows is None and quick:
        exact_rows = 4000
    return Experiment(
        name="mnist", title="MNIST-10k",
        data=(X_train, y_train, X_test, y_test),
        data_description="MNIST test set, pixels / 255, first 8,000 train / last 2,000 test, "
                         "10 classes (one-vs-rest for the linear SVMs)",
        sizes=sizes, sweep=_sweep_methods(gamma, 10.0, kmeans=True, rff=False),
        references=_references(gamma, 10.0, exact_rows=exact_rows, ovo=True, linear_C=0.1),
        gamma=gamma,
        notes=["C = 10 for the kernel models (exact and approximate), C = 0.1 for the linear "
               "SVMs on raw pixels (liblinear converges slowly at C = 10). KernelSVC uses "
               "one-vs-one like SVC."] + _exact_note(exact_rows, len(y_train)),
        seed=seed,
    )


def narrow_kernel(*, quick=False, full=False, data_dir=None, seed=0, exact_rows=None):
    """Seed 003: standardized a9a, gamma = 0.2: linear, exact, Nystrom(400), RFF(1000)."""
    X_train, y_train, X_test, y_test = load_a9a(data_dir)
    n_train, n_test = (3000, 4000) if quick else (10_000, None)
    rng = np.random.default_rng([seed, 3])
    train = np.sort(rng.choice(X_train.shape[0], n_train, replace=False))
    X_train, y_train = X_train[train].toarray(), y_train[train]
    if n_test is not None:
        test = np.sort(rng.choice(X_test.shape[0], n_test, replace=False))
        X_test, y_test = X_test[test], y_test[test]
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test.toarray())
    gamma = 0.2
    sizes = [50, 200, 400, 1000] if quick else [50, 100, 200, 400, 1000, 2000]
    return Experiment(
        name="narrow-kernel", title="narrow kernel: standardized a9a, gamma = 0.2 (seed 003)",
        data=(X_train, y_train, X_test, y_test),
        data_description=(f"a9a, a random {n_train}-row training sample and "
                          f"{'a ' + str(n_test) + '-row sample of' if n_test else 'all of'} "
                          "a9a.t, standardized with the training sample's statistics"),
        sizes=sizes, sweep=_sweep_methods(gamma, 1.0),
        references=_references(gamma, 1.0, exact_rows=exact_rows, falkon=False),
        gamma=gamma, train_accuracy=True, seed=seed,
        highlight={"nystroem": 400, "rff": 1000},
        notes=["The source document's table: linear SVM, exact RBF SVM, Nystrom with 400 "
               "landmarks and random Fourier features with D = 1000, train and test accuracy "
               "and the kernel approximation error of each map.",
               "gamma = 0.2 on 123 standardized features is the document's choice, kept for "
               "the reproduction; it is a narrow kernel (compare the exact SVM's train and test "
               "accuracy with the linear SVM's); the `a9a` experiment uses gamma = 'scale'."],
    )


EXPERIMENTS = {
    "synthetic": (synthetic, "make_classification problem of the blog post, seed 000 "
                             "(no download; the default)"),
    "adult": (adult, "a9a (UCI Adult), accuracy and time vs components (seed 001)"),
    "mnist": (mnist, "MNIST-10k, landmarks 50..2000, uniform vs k-means (seed 002)"),
    "narrow-kernel": (narrow_kernel, "standardized a9a, gamma = 0.2: error vs D, train / test "
                                     "accuracy (seed 003)"),
}


def build_experiment(name, **options):
    """Return the :class:`Experiment` called ``name`` (see :data:`EXPERIMENTS`).

    Parameters
    ----------
    name : {"synthetic", "adult", "mnist", "narrow-kernel"}
    **options
        ``quick``, ``full``, ``data_dir``, ``seed``, ``exact_rows``.
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"Unknown experiment {name!r}; choose from {', '.join(EXPERIMENTS)}.")
    return EXPERIMENTS[name][0](**options)


# experiment -> the named data sets it reads
_DATA = {"synthetic": (), "adult": ("a9a",), "mnist": ("mnist10k",), "narrow-kernel": ("a9a",)}


def check_experiment_data(name, data_dir=None):
    """Raise (before any work) when the data an experiment reads are missing.

    The error says which files to put where, and where they come from.
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"Unknown experiment {name!r}; choose from {', '.join(EXPERIMENTS)}.")
    for dataset in _DATA[name]:
        check_dataset(dataset, data_dir)
