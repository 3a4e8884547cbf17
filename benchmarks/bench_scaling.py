"""Scaling: fit time and peak memory from 1e5 to 1e7 rows, in memory, streamed and on Dask.

The problem is :func:`kernelscale.datasets.make_nonlinear_problem` (28 features,
HIGGS-like width), written once per size to a ``.npy`` file (features and label
in one float32 array) that every mode reads. The model is
``ApproxKernelRidgeClassifier(feature_map="rff", n_components=1024, gamma=0.01)``:

- ``memory``: the file loaded whole, ``fit(X, y)`` (the 1024-wide float32
  features are held at once: 4 GB at 1e6 rows, 40 GB at 1e7, so 1e7 is skipped);
- ``stream``: ``fit(open_chunks(path))`` under the default 256 MiB budget;
- ``dask``: ``fit(X, y)`` with ``X`` a dask array whose blocks the workers read
  from the file, on a ``LocalCluster`` of 2 worker processes x 1 thread;
- ``sklearn-sgd``: the scikit-learn peer for data that does not fit:
  ``RBFSampler(1024)`` fitted on 20,000 rows and ``SGDClassifier(loss="hinge")``
  trained by ``partial_fit`` chunk by chunk (one epoch), tuned as ours was: its
  ``alpha`` and ``average`` chosen by ``--tune-sgd`` on a held-out split of the
  same problem (``SGD_ALPHA``, ``SGD_AVERAGE`` below; our batch size was chosen on
  this problem too);
- ``asgd`` (with ``--modes asgd,sklearn-sgd --name scaling_online``): the like-for-like
  online kernelscale model, ``ApproxKernelSVC(feature_map="rff", n_components=1024)``
  trained by ``partial_fit`` chunk by chunk (one epoch of averaged SGD).

Each measurement runs in a fresh subprocess so that its peak RSS is its own
(for dask: the client plus both workers' peaks). Accuracy is on 100,000
held-out rows of the same problem. Sizes up to 1e6 are medians of ``--repeats``
runs; 1e7 runs once per mode (several minutes each).

Run: ``python benchmarks/bench_scaling.py [--sizes 1e5,1e6,1e7] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, load_line, machine_state, save  # noqa: E402

MODES = ("memory", "stream", "dask", "sklearn-sgd")
ONLINE_MODES = ("asgd", "sklearn-sgd")  # the online pair, run with --modes asgd,sklearn-sgd
N_TEST = 100_000
# chosen by ``--tune-sgd`` (1e6 rows, one epoch, held-out split rows_seed=2);
# see benchmarks/HISTORY.md
SGD_ALPHA = 1e-7
SGD_AVERAGE = True
CHUNK = 200_000
GAMMA = 0.01
D = 1024


def _estimator():
    from kernelscale import ApproxKernelRidgeClassifier

    return ApproxKernelRidgeClassifier(feature_map="rff", n_components=D, gamma=GAMMA,
                                       alpha=1.0, random_state=0)


def _data_file(folder, n):
    from kernelscale.datasets import iter_nonlinear_chunks

    path = Path(folder) / f"nonlinear_{n}.npy"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp.npy")
    out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(n, 29))
    start = 0
    for X, y in iter_nonlinear_chunks(n, 1 << 18):
        out[start:start + len(X), :28] = X
        out[start:start + len(X), 28] = y
        start += len(X)
    out.flush()
    del out
    os.replace(tmp, path)
    return path


def _test_set():
    from kernelscale.datasets import make_nonlinear_problem

    return make_nonlinear_problem(N_TEST, rows_seed=1)


def _peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _read_rows(path, start, stop):
    array = np.load(path, mmap_mode="r")
    return np.array(array[start:stop, :28]), np.array(array[start:stop, 28]).astype(np.int64)


def _run_one(mode, path):
    """Fit in this process; print a JSON record."""
    X_test, y_test = _test_set()
    extra = {}
    if mode == "memory":
        array = np.load(path)
        X, y = np.ascontiguousarray(array[:, :28]), array[:, 28].astype(np.int64)
        del array
        start = time.perf_counter()
        model = _estimator().fit(X, y)
        fit_s = time.perf_counter() - start
        accuracy = model.score(X_test, y_test)
    elif mode == "stream":
        from kernelscale.datasets import open_chunks

        data = open_chunks(path, chunk_rows=CHUNK)
        start = time.perf_counter()
        model = _estimator().fit(data)
        fit_s = time.perf_counter() - start
        accuracy = model.score(X_test, y_test)
    elif mode == "dask":
        import dask
        import dask.array as da
        from distributed import Client, LocalCluster

        n = np.load(path, mmap_mode="r").shape[0]
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit="8GiB") as cluster, \
                Client(cluster) as client:
            bounds = [(s, min(s + CHUNK, n)) for s in range(0, n, CHUNK)]
            parts = [dask.delayed(_read_rows)(str(path), s, e) for s, e in bounds]
            X = da.concatenate([da.from_delayed(p[0], (e - s, 28), np.float32)
                                for p, (s, e) in zip(parts, bounds)])
            y = da.concatenate([da.from_delayed(p[1], (e - s,), np.int64)
                                for p, (s, e) in zip(parts, bounds)])
            start = time.perf_counter()
            model = _estimator().fit(X, y)
            fit_s = time.perf_counter() - start
            accuracy = model.score(X_test, y_test)
            workers = client.run(_peak_rss_mib)
            extra["workers_peak_rss_mib"] = sorted(workers.values())
            extra["worker_blas_threads"] = sorted(client.run(
                lambda dask_worker: getattr(dask_worker, "kernelscale_blas_threads", None)
            ).values())
    elif mode == "asgd":
        from kernelscale import ApproxKernelSVC
        from kernelscale.datasets import open_chunks

        data = open_chunks(path, chunk_rows=CHUNK)
        start = time.perf_counter()
        model = ApproxKernelSVC(feature_map="rff", n_components=D, gamma=GAMMA, C=1.0,
                                random_state=0)
        for X, y in data:
            model.partial_fit(X, y, classes=[0, 1])
        fit_s = time.perf_counter() - start
        accuracy = model.score(X_test, y_test)
    else:
        from sklearn.kernel_approximation import RBFSampler
        from sklearn.linear_model import SGDClassifier

        from kernelscale.datasets import open_chunks

        data = open_chunks(path, chunk_rows=CHUNK)
        start = time.perf_counter()
        sample, _ = data.head(20_000)
        sampler = RBFSampler(gamma=GAMMA, n_components=D, random_state=0).fit(sample)
        model = SGDClassifier(loss="hinge", alpha=SGD_ALPHA, average=SGD_AVERAGE,
                              random_state=0)
        for X, y in data:
            model.partial_fit(sampler.transform(X), y, classes=[0, 1])
        fit_s = time.perf_counter() - start
        accuracy = float(np.mean(model.predict(sampler.transform(X_test)) == y_test))
    peak = _peak_rss_mib() + sum(extra.get("workers_peak_rss_mib", []))
    print(json.dumps({"fit_s": fit_s, "accuracy": float(accuracy), "peak_rss_mib": peak,
                      **extra}))


def tune_sgd(folder, n=1_000_000):
    """Choose the peer's ``alpha`` and ``average`` on a held-out split (one epoch each)."""
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.linear_model import SGDClassifier

    from kernelscale.datasets import make_nonlinear_problem, open_chunks

    path = _data_file(folder, n)
    X_val, y_val = make_nonlinear_problem(50_000, rows_seed=2)
    data = open_chunks(path, chunk_rows=CHUNK)
    sample, _ = data.head(20_000)
    sampler = RBFSampler(gamma=GAMMA, n_components=D, random_state=0).fit(sample)
    Z_val = sampler.transform(X_val)
    scores = {}
    for average in (False, True):
        for alpha in (1e-7, 1e-6, 1e-5, 1e-4):
            model = SGDClassifier(loss="hinge", alpha=alpha, average=average, random_state=0)
            for X, y in data:
                model.partial_fit(sampler.transform(X), y, classes=[0, 1])
            key = f"alpha={alpha:g}, average={average}"
            scores[key] = float(model.score(Z_val, y_val))
            print(f"  {key}: held-out {scores[key]:.4f}", flush=True)
    best = max(scores, key=scores.get)
    print(f"best: {best} ({scores[best]:.4f})")
    save("scaling_sgd_tuning", {"n": n, "scores": scores, "best": best,
                                "command": " ".join(sys.argv)})
    return scores


def _measure(mode, path):
    out = subprocess.run([sys.executable, __file__, "--worker", mode, str(path)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{mode} on {path} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _plot(summary, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for mode in dict.fromkeys(MODES + ONLINE_MODES):
        points = [(int(n), s[mode]) for n, s in summary.items() if mode in s]
        if not points:
            continue
        ns = [p[0] for p in points]
        axes[0].loglog(ns, [p[1]["fit_s"] for p in points], "o-", label=mode)
        axes[1].semilogx(ns, [p[1]["peak_rss_mib"] / 1024 for p in points], "o-", label=mode)
    axes[0].set(xlabel="training rows n", ylabel="fit time (s)",
                title="Fit time, RFF D=1024 (log-log)")
    axes[1].axhline(4.0, color="grey", ls="--", lw=1, label="4 GB")
    axes[1].set(xlabel="training rows n", ylabel="peak RSS (GB)", title="Peak memory",
                ylim=(0, None))
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6,1e7")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--data-dir", default="/tmp/kernelscale-scaling",
                        help="where the .npy data files are written (reused across runs)")
    parser.add_argument("--name", default="scaling",
                        help="results/<name>.json and results/<name>.png")
    parser.add_argument("--replot", action="store_true",
                        help="redraw results/<name>.png from results/<name>.json and stop")
    parser.add_argument("--tune-sgd", action="store_true",
                        help="choose the scikit-learn peer's alpha and averaging, then stop")
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tune_sgd:
        Path(args.data_dir).mkdir(parents=True, exist_ok=True)
        return tune_sgd(args.data_dir)
    if args.worker:
        return _run_one(args.worker[0], Path(args.worker[1]))
    if args.replot:
        saved = json.loads((RESULTS / f"{args.name}.json").read_text())
        return _plot(saved["summary"], RESULTS / f"{args.name}.png")
    Path(args.data_dir).mkdir(parents=True, exist_ok=True)
    state = machine_state()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    modes = args.modes.split(",")
    summary = {}
    for n in sizes:
        path = _data_file(args.data_dir, n)
        repeats = args.repeats if n <= 1_000_000 else 1
        runs = {mode: [] for mode in modes if not (mode == "memory" and n > 1_000_000)}
        for r in range(repeats):
            for mode in runs:
                record = _measure(mode, path)
                runs[mode].append(record)
                print(f"n={n} repeat {r} {mode}: {record}", flush=True)
        summary[str(n)] = {
            mode: {key: float(np.median([rec[key] for rec in records]))
                   for key in ("fit_s", "accuracy", "peak_rss_mib")} | {"runs": records}
            for mode, records in runs.items()}
    slopes = {}
    for mode in modes:
        points = [(int(n), s[mode]["fit_s"]) for n, s in summary.items() if mode in s]
        if len(points) >= 2:
            slopes[mode] = float(np.polyfit(np.log([p[0] for p in points]),
                                            np.log([p[1] for p in points]), 1)[0])
    print("\n| n | mode | fit s | peak RSS GB | accuracy | time vs sklearn-sgd |")
    print("|---|---|---|---|---|---|")
    for n, s in summary.items():
        peer = s.get("sklearn-sgd", {}).get("fit_s")
        for mode, rec in s.items():
            ratio = f"{peer / rec['fit_s']:.1f}x" if peer else "-"
            print(f"| {int(n):.0e} | {mode} | {rec['fit_s']:.1f} | "
                  f"{rec['peak_rss_mib'] / 1024:.2f} | {rec['accuracy']:.4f} | {ratio} |")
    print("\nlog-log slope of fit time vs n:",
          ", ".join(f"{m} {v:.3f}" for m, v in slopes.items()))
    plot = RESULTS / f"{args.name}.png"
    RESULTS.mkdir(exist_ok=True)
    _plot(summary, plot)
    after = machine_state()
    print(load_line(state, after))
    out = save(args.name, {"machine": state, "load_after": after, "sizes": sizes,
                           "summary": summary, "slopes": slopes, "command": " ".join(sys.argv)})
    print(f"results: {out}, plot: {plot}")


if __name__ == "__main__":
    main()
