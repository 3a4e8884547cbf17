"""Command line: ``kernelscale approx`` (and, as they land, fit / predict / bench).

Every command prints one-line errors (``kernelscale: error: ...``) and exits with
status 2 on bad input, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from tqdm.auto import tqdm

from . import __version__
from .bench.approx import DEFAULT_MAPS, DEFAULT_SIZES, plot_approx, run_approx_experiment
from .datasets import make_seed000_problem
from .feature_maps import FEATURE_MAPS

__all__ = ["main"]


def _int_list(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _name_list(text):
    names = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [n for n in names if n not in FEATURE_MAPS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown map(s) {', '.join(unknown) or repr(text)}; "
            f"choose from {', '.join(FEATURE_MAPS)}"
        )
    return names


def _gamma(text):
    if text in ("scale", "auto"):
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"gamma must be 'scale', 'auto' or a number, got {text!r}"
        ) from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"gamma must be > 0, got {text!r}")
    return value


def _add_approx(subparsers):
    p = subparsers.add_parser(
        "approx",
        help="kernel approximation error and transform time of each feature map vs D",
        description=(
            "Fit every feature map at several sizes D on the training part of a built-in "
            "synthetic problem (the seed-000 make_classification set-up, standardized), "
            "and print the relative kernel approximation error ||K - ZZ^T||_F / ||K||_F "
            "on its held-out part, and the fit and transform times (medians over "
            "--repeats draws)."
        ),
    )
    p.add_argument("--kernel", choices=tuple(DEFAULT_MAPS), default="rbf")
    p.add_argument("--maps", type=_name_list, default=None,
                   help="comma-separated map names (default: all maps for the kernel)")
    p.add_argument("--sizes", type=_int_list, default=list(DEFAULT_SIZES),
                   help="comma-separated sizes D (default: %(default)s)")
    p.add_argument("--n-samples", type=int, default=5000,
                   help="rows generated; 75%% fit the maps, 25%% measure the error "
                        "(default: %(default)s)")
    p.add_argument("--gamma", type=_gamma, default="scale")
    p.add_argument("--degree", type=int, default=2,
                   help="polynomial degree (default: %(default)s)")
    p.add_argument("--coef0", type=float, default=1.0,
                   help="polynomial constant (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=3,
                   help="draws per map and size (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="base random seed (default: %(default)s)")
    p.add_argument("--plot", metavar="FILE", help="write a PNG of error and time vs D")
    p.add_argument("--json", metavar="FILE", help="write the records as JSON")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=_run_approx)


def _run_approx(args):
    if args.n_samples < 8:
        raise ValueError(f"--n-samples must be at least 8, got {args.n_samples}.")
    if args.repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {args.repeats}.")
    X, X_test, _, _ = make_seed000_problem(args.n_samples, random_state=args.seed)
    maps = args.maps or DEFAULT_MAPS[args.kernel]
    with tqdm(total=len(maps) * len(args.sizes), desc="approx", unit="map",
              disable=args.no_progress, file=sys.stderr) as bar:
        records = run_approx_experiment(
            X, X_test, kernel=args.kernel, maps=maps, sizes=args.sizes, gamma=args.gamma,
            degree=args.degree, coef0=args.coef0, repeats=args.repeats,
            random_state=args.seed, progress=bar.update,
        )
    print(f"kernel={args.kernel} gamma={records[0]['gamma']:.4g} data: seed000 synthetic, "
          f"fit on {X.shape[0]} x {X.shape[1]}, error on {X_test.shape[0]} held-out rows "
          f"(median of {args.repeats} draws)")
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


def build_parser():
    """Return the ``kernelscale`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="kernelscale",
        description="Kernel machines at scale: random features, Nystrom, fast solvers.",
    )
    parser.add_argument("--version", action="version", version=f"kernelscale {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_approx(subparsers)
    return parser


def main(argv=None):
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError, MemoryError) as exc:
        print(f"kernelscale: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
