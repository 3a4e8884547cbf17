"""Nystrom kernel ridge (FALKON) against exact kernel ridge, sklearn SVC and sklearn pipelines.

Experiments:

``exact``        m = n, float64, tiny tol: predictions vs sklearn ``KernelRidge`` (max
                 absolute difference) on a 2,000-row regression problem.
``mnist``        MNIST-10k (8,000 / 2,000): ``NystromKernelRidgeClassifier()`` with its
                 default parameters vs sklearn ``SVC(C=10, gamma="scale")``, interleaved,
                 medians of --repeats; then accuracy and fit+predict time vs m (plot).
``a9a``          a9a / a9a.t: ``NystromKernelRidgeClassifier(max_iter=20, alpha=1e-4 n)``
                 vs sklearn ``Nystroem(2000) + LinearSVC``.
``convergence``  MNIST-10k, m = 2,000: relative residual and test accuracy after every CG
                 iteration, with and without the preconditioner (plot).

Usage::

    python benchmarks/bench_falkon.py [--experiments exact mnist a9a convergence]
                                      [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
from _common import RESULTS, contest, fit_predict, machine, save, timed
from sklearn import svm
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline

from kernelscale import NystromKernelRidge, NystromKernelRidgeClassifier
from kernelscale.datasets import load_a9a, load_mnist10k
from kernelscale.kernels import resolve_gamma


def exact_experiment():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 10))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=2000)
    X_test = rng.normal(size=(500, 10))
    exact, exact_s = timed(KernelRidge(alpha=1.0, kernel="rbf", gamma=0.1).fit, X, y)
    ours, ours_s = timed(NystromKernelRidge(n_components=2000, alpha=1.0, gamma=0.1,
                                            dtype="float64", tol=1e-12, max_iter=100).fit, X, y)
    diff = float(np.abs(ours.predict(X_test) - exact.predict(X_test)).max())
    print("\n## m = n against exact kernel ridge (2,000 x 10, rbf gamma=0.1, alpha=1)")
    print(f"max |prediction difference| = {diff:.2e} after {ours.n_iter_} CG iterations "
          f"(fit {ours_s:.2f} s; sklearn KernelRidge {exact_s:.2f} s)")
    return {"max_abs_difference": diff, "n_iter": ours.n_iter_, "fit_s": ours_s,
            "sklearn_fit_s": exact_s}


def mnist_experiment(repeats, sizes):
    data = load_mnist10k()
    contenders = [
        ("kernelscale NystromKernelRidgeClassifier() (defaults)",
         lambda s: NystromKernelRidgeClassifier(random_state=s)),
        ("sklearn SVC(C=10)", lambda s: svm.SVC(C=10.0)),
    ]
    summary = contest("MNIST-10k: FALKON defaults vs exact SVC", contenders, data, repeats,
                      reference="sklearn SVC(C=10)")
    sweep = []
    for m in sizes:
        model, record = fit_predict(lambda m=m: NystromKernelRidgeClassifier(
            n_components=m, random_state=0), *data)
        record.update(n_centers=m, n_iter=model.n_iter_)
        sweep.append(record)
        print(f"  [sweep] m={m}: {record}", flush=True)
    print("\n## MNIST-10k: NystromKernelRidgeClassifier accuracy and time vs m")
    print("| m | accuracy | CG iterations | fit s | predict s |")
    print("|---|---|---|---|---|")
    for r in sweep:
        print(f"| {r['n_centers']} | {r['accuracy']:.4f} | {r['n_iter']} | {r['fit_s']:.2f} "
              f"| {r['predict_s']:.2f} |")
    _plot_sweep(sweep, summary["sklearn SVC(C=10)"])
    return {"contest": summary, "sweep": sweep}


def _plot_sweep(sweep, svc):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = [r["n_centers"] for r in sweep]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.plot(m, [r["accuracy"] for r in sweep], "o-", label="NystromKernelRidgeClassifier")
    ax1.axhline(svc["accuracy"], color="k", ls="--", label="sklearn SVC (exact)")
    ax1.set(xscale="log", xlabel="centres m", ylabel="test accuracy",
            title="MNIST-10k: accuracy vs centres")
    ax1.legend()
    ax2.plot(m, [r["total_s"] for r in sweep], "o-", label="NystromKernelRidgeClassifier")
    ax2.axhline(svc["total_s"], color="k", ls="--", label="sklearn SVC (exact)")
    ax2.axhline(svc["total_s"] / 3, color="grey", ls=":", label="1/3 of SVC's time")
    ax2.set(xscale="log", yscale="log", xlabel="centres m", ylabel="fit + predict seconds",
            title="MNIST-10k: time vs centres")
    ax2.legend()
    for ax in (ax1, ax2):
        ax.set_xticks(m, [str(v) for v in m], rotation=45)
        ax.minorticks_off()
    fig.tight_layout()
    path = RESULTS / "falkon_mnist_centres.png"
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def a9a_experiment(repeats):
    X_train, y_train, X_test, y_test = load_a9a()
    n = X_train.shape[0]
    gamma = resolve_gamma("scale", X_train)
    contenders = [
        ("kernelscale NystromKernelRidgeClassifier(alpha=1e-4 n, max_iter=20)",
         lambda s: NystromKernelRidgeClassifier(alpha=1e-4 * n, max_iter=20, random_state=s)),
        ("sklearn Nystroem(2000)+LinearSVC",
         lambda s: make_pipeline(SkNystroem(n_components=2000, gamma=gamma, random_state=s),
                                 svm.LinearSVC(C=1.0, random_state=s))),
    ]
    summary = contest("a9a: FALKON vs sklearn Nystroem(2000)+LinearSVC", contenders,
                      (X_train, y_train, X_test, y_test), repeats,
                      reference="sklearn Nystroem(2000)+LinearSVC")
    model = NystromKernelRidgeClassifier(alpha=1e-4 * n, max_iter=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_train, y_train)
    print(f"a9a: {model.n_components_} centres, {model.n_iter_} CG iterations")
    summary["n_centers"] = model.n_components_
    summary["n_iter"] = model.n_iter_
    return summary


def convergence_experiment(m=2000, maxiter=100):
    X_train, y_train, X_test, y_test = load_mnist10k()
    out = {}
    for label, pc in (("preconditioned", True), ("plain CG", False)):
        model = NystromKernelRidgeClassifier(n_components=m, preconditioner=pc, max_iter=maxiter,
                                             tol=1e-6, random_state=0)
        accuracy, seconds = [], []
        start = time.perf_counter()

        def track(iteration, beta, model=model, accuracy=accuracy, seconds=seconds,
                  start=start):
            seconds.append(time.perf_counter() - start)
            scores = model._test_kernel @ beta
            accuracy.append(float(np.mean(np.argmax(scores, axis=1) == y_test)))

        from kernelscale.kernels import pairwise_kernel

        rng = np.random.RandomState(0)
        idx = np.sort(rng.choice(len(X_train), size=m, replace=False))
        model._test_kernel = pairwise_kernel(X_test, X_train[idx],
                                             gamma=resolve_gamma("scale", X_train))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X_train, y_train, callback=track)
        assert np.array_equal(model.component_indices_, idx)
        out[label] = {"residual": model.residuals_.max(axis=1).tolist(), "accuracy": accuracy,
                      "n_iter": model.n_iter_}
        hits = [i + 1 for i, r in enumerate(out[label]["residual"]) if r <= 1e-3]
        print(f"{label}: residual {out[label]['residual'][-1]:.2e} after {model.n_iter_} "
              f"iterations; 1e-3 first reached at iteration {hits[0] if hits else 'never'}; "
              f"final accuracy {accuracy[-1]:.4f}", flush=True)
        out[label]["first_below_1e-3"] = hits[0] if hits else None
    _plot_convergence(out, m)
    return out


def _plot_convergence(out, m):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for label, rec in out.items():
        it = np.arange(1, len(rec["residual"]) + 1)
        ax1.plot(it, rec["residual"], label=label)
        ax2.plot(it, rec["accuracy"], label=label)
    ax1.set(yscale="log", xlabel="CG iteration", ylabel="largest relative residual",
            title=f"MNIST-10k, m={m}: CG residual")
    ax2.set(xlabel="CG iteration", ylabel="test accuracy", ylim=(0.8, 1.0),
            title=f"MNIST-10k, m={m}: test accuracy")
    ax1.legend()
    ax2.legend()
    fig.tight_layout()
    path = RESULTS / "falkon_convergence.png"
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", nargs="+",
                        default=["exact", "mnist", "a9a", "convergence"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[250, 500, 1000, 2000, 4000, 5626, 8000])
    args = parser.parse_args(argv)
    results = {"machine": machine(), "command": "python " + " ".join(sys.argv)}
    print(results["machine"])
    if "exact" in args.experiments:
        results["exact"] = exact_experiment()
    if "mnist" in args.experiments:
        results["mnist"] = mnist_experiment(args.repeats, args.sizes)
    if "a9a" in args.experiments:
        results["a9a"] = a9a_experiment(args.repeats)
    if "convergence" in args.experiments:
        results["convergence"] = convergence_experiment()
    previous = RESULTS / "falkon.json"
    if previous.exists():  # a partial run updates only the experiments it ran
        import json

        results = {**json.loads(previous.read_text()), **results}
    print(f"results: {save('falkon', results)}")


if __name__ == "__main__":
    main()
