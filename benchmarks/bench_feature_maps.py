"""Feature maps on a9a, same run as scikit-learn's RBFSampler and Nystroem.

Measures (medians over --repeats interleaved runs):

1. Nystroem(2000) fit + transform of the a9a training set (32,561 x 123, sparse):
   kernelscale vs sklearn (on the float64 CSR that ``load_svmlight_file`` gives,
   and on the same data cast to float32), with the relative kernel error of each.
2. RFF transform time at D = 2000: kernelscale vs sklearn's RBFSampler.
3. Landmark sampling: uniform vs leverage vs k-means error at several m (mean
   and standard error over seeds).

Every error is measured on 2,000 held-out rows of a9a.t (the maps are fitted on
a9a): on the fitted rows, uniform Nystrom reproduces its own landmarks exactly.
4. Error vs D for every map (plot).

Usage::

    python benchmarks/bench_feature_maps.py [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from _common import RESULTS, machine, save, timed
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.kernel_approximation import RBFSampler

from kernelscale import Nystroem, RandomFourierFeatures, kernel_approximation_error
from kernelscale.bench import plot_approx, run_approx_experiment
from kernelscale.datasets import load_a9a
from kernelscale.kernels import resolve_gamma

EVAL_SEED = 12345  # independent of the maps' seeds 0..repeats-1


def error(X_eval, fmap, gamma):
    """Relative kernel error on held-out rows (a9a.t), never on the fitted rows."""
    return kernel_approximation_error(X_eval, fmap, kernel="rbf", gamma=gamma,
                                      n_samples=2000, random_state=EVAL_SEED)


def compare(name, X, X_eval, gamma, contenders, repeats, step):
    """Time ``step(make(seed), X)`` for each contender, interleaved, ``repeats`` times."""
    runs = {label: {"seconds": [], "errors": []} for label, _ in contenders}
    for seed in range(repeats):
        for label, make in contenders:
            data = X.astype(np.float32) if label.endswith("float32 input") else X
            fmap, seconds = timed(step, make(seed), data)
            runs[label]["seconds"].append(seconds)
            runs[label]["errors"].append(error(X_eval, fmap, gamma))
    summary = {label: {"median_seconds": float(np.median(r["seconds"])),
                       "median_error": float(np.median(r["errors"])), **r}
               for label, r in runs.items()}
    ours = summary["kernelscale"]["median_seconds"]
    print(f"\n## {name}")
    print("| implementation | median s | speed-up of kernelscale | relative kernel error |")
    print("|---|---|---|---|")
    for label, s in summary.items():
        print(f"| {label} | {s['median_seconds']:.3f} | {s['median_seconds'] / ours:.1f}x "
              f"| {s['median_error']:.5f} |")
    return summary


def fit_transform(fmap, X):
    fmap.fit(X).transform(X)
    return fmap


def transform_only(fmap, X):
    fmap.transform(X)
    return fmap


def landmark_study(X, X_eval, gamma, sizes, seeds):
    print("\n## Landmark sampling (mean +- standard error over seeds)")
    print("| m | uniform | leverage | kmeans | leverage fit s | kmeans fit s |")
    print("|---|---|---|---|---|---|")
    rows = []
    for m in sizes:
        row = {"m": m}
        for sampling in ("uniform", "leverage", "kmeans"):
            errors, fits = [], []
            for seed in seeds:
                fmap, seconds = timed(Nystroem(n_components=m, gamma=gamma, sampling=sampling,
                                               random_state=seed).fit, X)
                errors.append(error(X_eval, fmap, gamma))
                fits.append(seconds)
            row[sampling] = {"mean": float(np.mean(errors)),
                             "sem": float(np.std(errors) / np.sqrt(len(errors))),
                             "errors": errors, "median_fit_seconds": float(np.median(fits))}
        rows.append(row)
        cells = [f"{row[s]['mean']:.5f} +- {row[s]['sem']:.5f}"
                 for s in ("uniform", "leverage", "kmeans")]
        print(f"| {m} | {' | '.join(cells)} "
              f"| {row['leverage']['median_fit_seconds']:.2f} "
              f"| {row['kmeans']['median_fit_seconds']:.2f} |")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="fewer sizes and seeds")
    args = parser.parse_args(argv)

    X, _, X_test, _ = load_a9a()
    gamma = resolve_gamma("scale", X)
    info = machine()
    print(f"machine: {info}")
    print(f"a9a train {X.shape}, nnz/row {X.nnz / X.shape[0]:.1f}, gamma='scale' = {gamma:.5f}")

    nystroem = compare(
        "Nystroem(2000): fit + transform of a9a train", X, X_test, gamma,
        [("kernelscale", lambda s: Nystroem(n_components=2000, gamma=gamma, random_state=s)),
         ("sklearn", lambda s: SkNystroem(n_components=2000, gamma=gamma, random_state=s)),
         ("sklearn, float32 input",
          lambda s: SkNystroem(n_components=2000, gamma=gamma, random_state=s))],
        args.repeats, fit_transform,
    )
    rff = compare(
        "RFF, D = 2000: transform of a9a train (maps fitted beforehand)", X, X_test, gamma,
        [("kernelscale", lambda s: RandomFourierFeatures(
              n_components=2000, gamma=gamma, random_state=s).fit(X)),
         ("kernelscale orthogonal sin/cos", lambda s: RandomFourierFeatures(
              n_components=2000, gamma=gamma, kind="sincos", sampling="orthogonal",
              random_state=s).fit(X)),
         ("sklearn", lambda s: RBFSampler(n_components=2000, gamma=gamma, random_state=s).fit(X)),
         ("sklearn, float32 input", lambda s: RBFSampler(
              n_components=2000, gamma=gamma, random_state=s).fit(X))],
        args.repeats, transform_only,
    )
    sizes = (250, 1000) if args.quick else (250, 500, 1000, 2000)
    seeds = range(3) if args.quick else range(5)
    landmarks = landmark_study(X, X_test, gamma, sizes, seeds)

    d_sizes = (128, 512, 2048) if args.quick else (128, 256, 512, 1024, 2048, 4096)
    maps = ("rff", "rff-sincos", "orf", "sorf", "nystroem", "nystroem-leverage", "nystroem-kmeans")
    records = run_approx_experiment(X, X_test, maps=maps, sizes=d_sizes, gamma=gamma, repeats=1)
    plot = RESULTS / "feature_maps_a9a.png"
    RESULTS.mkdir(exist_ok=True)
    plot_approx(records, plot, title=f"a9a train (32,561 x 123), rbf gamma={gamma:.4f}")
    print(f"\n## Error vs D on a9a (plot: {plot.relative_to(RESULTS.parent.parent)})")
    print("| map | " + " | ".join(str(d) for d in d_sizes) + " |")
    print("|---|" + "---|" * len(d_sizes))
    for name in maps:
        errs = [r["error"] for r in records if r["map"] == name]
        print(f"| {name} | " + " | ".join(f"{e:.4f}" for e in errs) + " |")
    path = save("feature_maps_a9a", {
        "machine": info, "command": " ".join(["python"] + sys.argv), "gamma": gamma,
        "nystroem_2000": nystroem, "rff_2000": rff, "landmarks": landmarks,
        "error_vs_D": records,
    })
    print(f"\nrecords: {path}")


if __name__ == "__main__":
    main()
