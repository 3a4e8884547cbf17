"""Kernel approximation error and transform time of every feature map, vs size D."""

from __future__ import annotations

import time

import numpy as np
from matplotlib.figure import Figure

from ..feature_maps import FEATURE_MAPS, kernel_approximation_error, make_feature_map
from ..kernels import check_kernel, resolve_gamma

__all__ = ["DEFAULT_MAPS", "run_approx_experiment", "plot_approx"]

DEFAULT_MAPS = {
    "rbf": ("rff", "rff-sincos", "orf", "sorf", "nystroem", "nystroem-leverage"),
    "laplacian": ("rff", "rff-sincos", "nystroem", "nystroem-leverage"),
    "polynomial": ("maclaurin", "tensorsketch", "nystroem", "nystroem-leverage"),
}
DEFAULT_SIZES = (64, 128, 256, 512, 1024, 2048)
_EVAL_SEED = 2_147_483_629


def _map_params(name, kernel, gamma, degree, coef0):
    params = {"gamma": gamma}
    takes_degree = FEATURE_MAPS[name][0].__name__ != "RandomFourierFeatures"
    if kernel == "polynomial" and takes_degree:
        params.update(degree=degree, coef0=coef0)
    return params


def _timed(func, *args):
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def run_approx_experiment(
    X, X_eval=None, *, kernel="rbf", maps=None, sizes=DEFAULT_SIZES, gamma="scale", degree=3,
    coef0=0.0, repeats=3, n_eval=2000, random_state=0, progress=None,
):
    """Measure each map's relative kernel error and fit / transform time at each size.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Data the maps are fitted on and transform (timed).
    X_eval : {ndarray, sparse matrix} of shape (n_eval_samples, n_features), default=None
        Held-out rows the error is measured on. Measuring on the fitted rows
        flatters Nystrom (its landmarks are reproduced exactly), so pass a test
        split; None falls back to ``X``.
    kernel : {"rbf", "laplacian", "polynomial"}, default="rbf"
    maps : sequence of str, default=None
        Names from :data:`kernelscale.feature_maps.FEATURE_MAPS`; None uses
        :data:`DEFAULT_MAPS` for the kernel.
    sizes : sequence of int
        Feature counts ``D`` (landmark counts for Nystrom).
    gamma : {"scale", "auto"} or float, default="scale"
        Resolved once on ``X`` so that every map approximates the same kernel.
    degree, coef0 : int, float
        Polynomial kernel parameters.
    repeats : int, default=3
        Independent draws per (map, size): the error and times are medians.
    n_eval : int, default=2000
        Rows sampled to form the exact Gram matrix.
    random_state : int, default=0
        Base seed; draw ``r`` uses ``random_state + r``.
    progress : callable, default=None
        Called with no argument after each (map, size); e.g. a tqdm bar's update.

    Returns
    -------
    records : list of dict
        One per (map, size): ``map``, ``kernel``, ``gamma``, ``n_components``,
        ``n_features_out``, ``error`` (median), ``errors``, ``fit_seconds`` and
        ``transform_seconds`` (medians), ``n_samples`` (fitted rows), ``n_eval``.
    """
    kernel = check_kernel(kernel)
    gamma = resolve_gamma(gamma, X)
    X_eval = X if X_eval is None else X_eval
    maps = DEFAULT_MAPS[kernel] if maps is None else tuple(maps)
    records = []
    for name in maps:
        params = _map_params(name, kernel, gamma, degree, coef0)
        for size in sizes:
            errors, fits, transforms, width = [], [], [], None
            for r in range(repeats):
                fmap = make_feature_map(
                    name, kernel=kernel, n_components=int(size),
                    random_state=random_state + r, **params,
                )
                _, fit_s = _timed(fmap.fit, X)
                fmap.transform(X[:2])  # untimed: compiles numba kernels on first use
                Z, transform_s = _timed(fmap.transform, X)
                width = Z.shape[1]
                # the evaluation sample's seed is decoupled from the maps' seeds:
                # shared seeds would make uniform landmarks and sample coincide
                errors.append(kernel_approximation_error(
                    X_eval, fmap, n_samples=n_eval, random_state=_EVAL_SEED,
                ))
                fits.append(fit_s)
                transforms.append(transform_s)
            records.append({
                "map": name, "kernel": kernel, "gamma": gamma, "n_components": int(size),
                "n_features_out": int(width), "error": float(np.median(errors)),
                "errors": [float(e) for e in errors],
                "fit_seconds": float(np.median(fits)),
                "transform_seconds": float(np.median(transforms)),
                "n_samples": int(X.shape[0]), "n_eval": int(min(n_eval, X_eval.shape[0])),
            })
            if progress is not None:
                progress()
    return records


def plot_approx(records, path, *, title=None):
    """Plot error vs D and transform time vs D (log-log) from ``records``; save a PNG.

    Parameters
    ----------
    records : list of dict
        Output of :func:`run_approx_experiment`.
    path : str or Path
        Where to write the PNG.
    title : str, default=None
        Figure title; None describes the kernel and data size.
    """
    fig = Figure(figsize=(12, 4.8), layout="constrained")
    ax_err, ax_time = fig.subplots(1, 2)
    names = list(dict.fromkeys(r["map"] for r in records))
    for name in names:
        rows = sorted((r for r in records if r["map"] == name), key=lambda r: r["n_components"])
        sizes = [r["n_components"] for r in rows]
        ax_err.plot(sizes, [r["error"] for r in rows], marker="o", label=name)
        ax_time.plot(sizes, [r["transform_seconds"] for r in rows], marker="o", label=name)
    sizes = np.array(sorted({r["n_components"] for r in records}), dtype=float)
    anchor = max(r["error"] for r in records if r["n_components"] == sizes[0])
    ax_err.plot(sizes, anchor * np.sqrt(sizes[0] / sizes), "k--", lw=1,
                label=r"$\propto 1/\sqrt{D}$")
    for ax, ylabel in ((ax_err, r"relative error $\|K - ZZ^T\|_F / \|K\|_F$"),
                       (ax_time, "transform time (s, median)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("number of features D (landmarks m for Nystroem)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    first = records[0]
    ax_err.set_title("kernel approximation error")
    ax_time.set_title(f"transform time, {first['n_samples']} rows")
    fig.suptitle(title or f"{first['kernel']} kernel, gamma={first['gamma']:.4g}")
    fig.savefig(path, dpi=110)
    return path
