"""``kernelscale approx``: kernel approximation error and transform time of each map vs D."""

from __future__ import annotations

import json

from ._options import KERNEL_NAMES, int_list, map_list, positive_int
from ._options import gamma as gamma_type

__all__ = ["add_parser", "run"]

_SIZES = [64, 128, 256, 512, 1024, 2048]  # bench.approx.DEFAULT_SIZES


def add_parser(subparsers):
    p = subparsers.add_parser(
        "approx",
        help="kernel approximation error and transform time of each feature map vs D",
        description=(
            "Fit every feature map at several sizes D on the training part of the built-in "
            "synthetic problem (make_classification, standardized), and print the relative "
            "kernel approximation error ||K - ZZ^T||_F / ||K||_F on its held-out part, and "
            "the fit and transform times (medians over --repeats draws)."
        ),
    )
    # the linear kernel needs no map; the sigmoid kernel is not positive definite, so none exists
    approximable = tuple(k for k in KERNEL_NAMES if k not in ("linear", "sigmoid"))
    p.add_argument("--kernel", choices=approximable,
                   default="rbf", help="the kernel to approximate (default: %(default)s)")
    p.add_argument("--maps", type=map_list, default=None,
                   help="comma-separated map names (default: all maps for the kernel)")
    p.add_argument("--sizes", type=int_list, default=list(_SIZES),
                   help="comma-separated sizes D (default: %(default)s)")
    p.add_argument("--n-samples", type=positive_int, default=5000,
                   help="rows generated; 75%% fit the maps, 25%% measure the error "
                        "(default: %(default)s)")
    p.add_argument("--gamma", type=gamma_type, default="scale",
                   help="kernel scale: scale, auto or a number (default: %(default)s)")
    p.add_argument("--degree", type=positive_int, default=3,
                   help="polynomial degree (default: %(default)s)")
    p.add_argument("--coef0", type=float, default=0.0,
                   help="polynomial constant (default: %(default)s)")
    p.add_argument("--repeats", type=positive_int, default=3,
                   help="draws per map and size (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="base random seed (default: %(default)s)")
    p.add_argument("--plot", metavar="FILE", help="write a PNG of error and time vs D")
    p.add_argument("--json", metavar="FILE", help="write the records as JSON")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def run(args):
    from tqdm.auto import tqdm

    from ..bench.approx import DEFAULT_MAPS, plot_approx, run_approx_experiment
    from ..datasets import make_synthetic_problem
    from ._output import check_output_path

    if args.n_samples < 8:
        raise ValueError(f"--n-samples must be at least 8, got {args.n_samples}.")
    for flag, path in (("--plot", args.plot), ("--json", args.json)):
        if path:
            check_output_path(path, flag)
    X, X_test, _, _ = make_synthetic_problem(args.n_samples, random_state=args.seed)
    maps = args.maps or DEFAULT_MAPS[args.kernel]
    import sys

    with tqdm(total=len(maps) * len(args.sizes), desc="approx", unit="map",
              disable=args.no_progress, file=sys.stderr) as bar:
        records = run_approx_experiment(
            X, X_test, kernel=args.kernel, maps=maps, sizes=args.sizes, gamma=args.gamma,
            degree=args.degree, coef0=args.coef0, repeats=args.repeats,
            random_state=args.seed, progress=bar.update,
        )
    print(f"kernel={args.kernel} gamma={records[0]['gamma']:.4g} data: synthetic "
          f"make_classification, fit on {X.shape[0]} x {X.shape[1]}, error on "
          f"{X_test.shape[0]} held-out rows (median of {args.repeats} draws)")
    print(f"{'map':<18} {'D':>6} {'error':>9} {'fit s':>8} {'transform s':>12}")
    for r in records:
        print(f"{r['map']:<18} {r['n_features_out']:>6} {r['error']:>9.4f} "
              f"{r['fit_seconds']:>8.4f} {r['transform_seconds']:>12.4f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(records, fh, indent=1)
        print(f"records written to {args.json}")
    if args.plot:
        plot_approx(records, args.plot)
        print(f"plot written to {args.plot}")
    return 0
