"""``kernelscale bench``: the source documents' experiments, kernelscale beside scikit-learn."""

from __future__ import annotations

from ._options import EXPERIMENT_NAMES, positive_int

__all__ = ["add_parser", "run"]

_DESCRIPTIONS = {
    "synthetic": "make_classification problem of the blog post (no download; the default)",
    "adult": "a9a (UCI Adult), accuracy and time vs components",
    "mnist": "MNIST-10k, landmarks 50..2000, uniform vs k-means",
    "narrow-kernel": "standardized a9a with gamma = 0.2: error vs D, train / test accuracy",
}


def add_parser(subparsers):
    listing = "; ".join(f"{name}: {_DESCRIPTIONS[name]}" for name in EXPERIMENT_NAMES)
    p = subparsers.add_parser(
        "bench", help="run a benchmark experiment, kernelscale beside scikit-learn",
        description=(
            "Run the source documents' experiments with kernelscale models and the "
            "scikit-learn peers side by side, and write report.md, results.json and PNG "
            f"plots into OUT/EXPERIMENT/. Experiments: {listing}; all runs every one."
        ),
    )
    p.add_argument("experiment", nargs="?", default="synthetic",
                   choices=(*EXPERIMENT_NAMES, "all"), metavar="EXPERIMENT",
                   help=f"{', '.join(EXPERIMENT_NAMES)} or all (default: %(default)s)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="fewer sizes and smaller subsamples: a smoke run of a few minutes")
    size.add_argument("--full", action="store_true",
                      help="synthetic at the source document's 100,000 rows")
    p.add_argument("--out", default="kernelscale-report", metavar="DIR",
                   help="output folder (default: %(default)s)")
    p.add_argument("--repeats", type=positive_int, default=3,
                   help="runs per model; tables show medians (default: %(default)s)")
    p.add_argument("--exact-rows", type=positive_int, default=None,
                   help="fit the exact SVMs on a subsample of this many training rows "
                        "(default: all; --quick: adult 8000, mnist 4000)")
    p.add_argument("--seed", type=int, default=0, help="base random seed (default: %(default)s)")
    p.add_argument("--data-dir", default=None,
                   help="folder of a9a and MNIST (default: $KERNELSCALE_DATA or "
                        "../shared/datasets)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def run(args):
    import sys
    from pathlib import Path

    from tqdm.auto import tqdm

    from ..bench import (
        build_experiment,
        check_experiment_data,
        highlights,
        run_experiment,
        write_report,
    )
    from ._output import command_line

    names = list(EXPERIMENT_NAMES) if args.experiment == "all" else [args.experiment]
    for name in names:  # every data set is checked before the first experiment starts
        check_experiment_data(name, args.data_dir)
    command = command_line(args)
    for name in names:
        experiment = build_experiment(name, quick=args.quick, full=args.full,
                                      data_dir=args.data_dir, seed=args.seed,
                                      exact_rows=args.exact_rows)
        with tqdm(total=experiment.n_runs(args.repeats), desc=name, unit="fit",
                  disable=args.no_progress, file=sys.stderr) as bar:
            def progress(text, bar=bar):
                bar.set_postfix_str(text[-60:], refresh=False)
                bar.update()

            result = run_experiment(experiment, repeats=args.repeats, progress=progress,
                                    command=command)
        paths = write_report(result, Path(args.out) / name)
        print(f"# {name}: {result['title']} ({result['wall_s']:.0f} s)")
        print("\n".join(highlights(result)))
        print(f"report: {paths['report']}")
        print("plots: " + ", ".join(str(v) for k, v in paths.items()
                                    if k not in ("report", "results")))
    return 0
