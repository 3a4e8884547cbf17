"""``kernelscale tune``: find the best kernel model for a data file, save it, draw the grid."""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

from ._options import (
    DATASET_NAMES,
    add_data_options,
    add_task_option,
    positive_int,
)
from ._table import add_table_options

__all__ = ["add_parser", "run"]



def _families(text):
    """"auto" or a comma list of names (checked against the search's families, without
    importing the library here: :func:`check_families_option`)."""
    from ._options import ParserError

    names = [t.strip() for t in text.split(",") if t.strip()]
    if names == ["auto"]:
        return "auto"
    if not names:
        raise ParserError(f"--families: unknown {text!r}; give 'auto' or a comma list of "
                          "the search's families")
    return names


def check_families_option(families, task):
    """One line for a family the search does not know (for the task), before the data."""
    from ..model_selection import CLASSIFIER_FAMILIES, REGRESSOR_FAMILIES

    known = REGRESSOR_FAMILIES if task == "regression" else CLASSIFIER_FAMILIES
    if families == "auto":
        return
    unknown = [n for n in families if n not in known]
    if unknown:
        what = "a regression is searched with" if task == "regression" else "give"
        raise ValueError(f"--families: unknown {unknown} for a {task}: {what} 'auto' or a "
                         f"comma list of {', '.join(known)}.")


def add_parser(subparsers):
    p = subparsers.add_parser(
        "tune", help="search families, gamma and C / alpha by cross-validation; save the best",
        description=(
            "Cross-validate a grid of kernel models on TRAIN (a file or a named data set: "
            f"{', '.join(DATASET_NAMES)}), sharing the work across the grid, refit the best "
            "on all rows and write it (-o). Classes or a regression, as the target (or "
            "--task) says. Prints the leaderboard, the test accuracy (R^2, RMSE, MAE for a "
            "regression) with --test, and draws the CV score over (gamma, C or alpha) per "
            "family as a PNG."),
    )
    p.add_argument("train", metavar="TRAIN", help="training data (file or a9a, mnist10k)")
    p.add_argument("--test", metavar="TEST", help="held-out data to report accuracy on")
    p.add_argument("--families", type=_families, default="auto",
                   help="auto, or a comma list of the search's families: exact-svm, falkon, "
                        "nystrom-svm, rff-svm (default: auto)")
    p.add_argument("--time-budget", default=None, metavar="DURATION",
                   help="search time, e.g. 90s, 10m, 1h (default: the whole grid)")
    p.add_argument("--cv", type=positive_int, default=5, help="folds (default: 5)")
    p.add_argument("--halving", choices=("auto", "yes", "no"), default="auto",
                   help="screen the gammas on growing subsamples first, fit the survivors on "
                        "all rows; beyond 20,000 rows also screen the exact SVM's grid on "
                        "5,000 of them (auto: beyond 20,000 rows)")
    p.add_argument("--learn-widths", choices=("auto", "yes", "no", "diagonal", "agop"),
                   default="auto",
                   help="learn the kernel's metric first: one width per feature (diagonal), "
                        "a full metric by AGOP (agop), or both, the better on held-out rows "
                        "kept (auto: from 5,000 rows of 2-200 dense features on; yes: always); "
                        "prints the features by relevance and the metric's top directions, "
                        "and draws them as a PNG")
    p.add_argument("--log-target", choices=("auto", "yes", "no"), default="auto",
                   help="a regression's lines may be fitted on the log of its target, scored "
                        "on the target as given and kept where they score higher (auto: a "
                        "positive target spanning an order of magnitude and less skewed in "
                        "its log; yes: any positive target)")
    p.add_argument("--scoring", default=None,
                   help="score to maximise (default: accuracy; r2 for a regression)")
    p.add_argument("--scale", choices=("minmax", "standard"), default=None,
                   help="scale every feature on TRAIN first and store the scaling in the "
                        "model file (as fit --scale; default: none for arrays and svmlight "
                        "files; a CSV with a header is standardised by its encoder, as in "
                        "the Python API)")
    p.add_argument("--n-jobs", type=int, default=1, help="threads (default: 1; -1: all)")
    p.add_argument("--seed", type=int, default=0, help="random_state (default: 0)")
    p.add_argument("--top", type=positive_int, default=10, help="leaderboard rows (default: 10)")
    p.add_argument("--heatmap", default=None, metavar="PNG",
                   help="where to draw the CV scores (default: next to -o, .heatmap.png)")
    p.add_argument("-o", "--output", required=True, metavar="MODEL",
                   help="model file to write (the refitted best model)")
    add_task_option(p)
    add_table_options(p)
    add_data_options(p)
    p.set_defaults(func=run)


#: seconds kept, of a --time-budget, for what follows the search (scoring --test, writing
#: the model file, drawing the heatmap): 1.1-2.4 s on the airline and weather CSVs
AFTER_SEARCH_SECONDS = 2.5


def process_age():
    """Seconds since this process started (0 where the system does not say)."""
    import psutil

    try:
        return max(0.0, time.time() - psutil.Process().create_time())
    except (psutil.Error, OSError):  # pragma: no cover - no process table here
        return 0.0


def search_budget(args, started):
    """The search's share of ``--time-budget``: the whole command's wall time, less what
    reading the data took (since ``started``) and the time kept for writing; one line
    where nothing is left."""
    from .._config import parse_duration

    if args.time_budget is None:
        return None
    whole = parse_duration(args.time_budget, "--time-budget")
    spent = time.perf_counter() - started
    left = whole - spent - min(AFTER_SEARCH_SECONDS, 0.1 * whole)
    if left <= 0:
        raise ValueError(f"--time-budget {args.time_budget} is too short for the cheapest model: "
                         f"reading the data took {spent:.1f} s of it and the search has none "
                         f"left; give a budget of at least "
                         f"{int(2 * spent + AFTER_SEARCH_SECONDS + 1)}s.")
    return left


def make_search(args, task, time_budget=None):
    """The search the options describe, for ``task`` (``time_budget``: its seconds, the
    command's budget less what loading took; None: ``--time-budget`` as given)."""
    from ..model_selection import KernelClassifierCV, KernelRegressorCV

    if time_budget is None:
        time_budget = args.time_budget
    options = dict(families=args.families, cv=args.cv, scoring=args.scoring,
                   time_budget=time_budget, n_jobs=args.n_jobs,
                   halving={"auto": "auto", "yes": True, "no": False}[args.halving],
                   learn_widths={"auto": "auto", "yes": True, "no": False, "diagonal": "diagonal",
                                 "agop": "agop"}[args.learn_widths],
                   random_state=args.seed)
    check_families_option(args.families, task)
    if task == "regression":
        return KernelRegressorCV(**options, log_target={"auto": "auto", "yes": True,
                                                        "no": False}[args.log_target])
    return KernelClassifierCV(**options)


def run(args):
    import numpy as np
    from sklearn.pipeline import make_pipeline

    from .._config import parse_duration
    from .._constraints import validate_params
    from ..model_selection import FAMILIES
    from ._heatmap import draw_heatmap
    from ._output import (
        budget,
        check_output_path,
        describe,
        format_quality,
        print_warnings,
        quality,
        save_fit,
        stages,
    )
    from ._table import encoded_names, with_preprocessing
    from ._task import infer_task
    from ._widths_plot import draw_metric, draw_widths, metric_lines, widths_lines
    from .fit import load_test, load_training, with_scaling

    # --time-budget is the whole command's wall time, the interpreter's start and the
    # imports included where it runs as a command (6 s of them beside two busy loops: a
    # 2-minute run took 127 s)
    started = time.perf_counter() - (process_age() if getattr(args, "launched", False)
                                     else 0.0)
    output = check_output_path(args.output, "-o")
    heatmap = check_output_path(args.heatmap, "--heatmap") if args.heatmap else \
        Path(output).with_suffix(".heatmap.png")
    if args.time_budget is not None:
        parse_duration(args.time_budget, "--time-budget")
    task, _ = infer_task(None, args.task)
    validate_params(make_search(args, task))  # a bad value before any data is read
    spec = {"format": args.format or "auto",
            "label_column": -1 if args.label_column is None else args.label_column,
            "delimiter": args.delimiter}
    with budget(args), stages(args.no_progress) as advance:
        advance("loading training data")
        start = time.perf_counter()
        X, y, prep, record = load_training(args, spec)
        if prep is not None:  # the search runs on the encoded columns (fitted on them)
            X = prep.transform(X)
        load_s = time.perf_counter() - start
        if args.test:
            X_test, y_test = load_test(args, spec, X, prep, record)
            if prep is not None:
                X_test = prep.transform(X_test)
        task, note = infer_task(y, args.task)
        if note:
            print(f"kernelscale: {'warning' if task == 'classification' else 'task'}: {note}",
                  file=sys.stderr, flush=True)
        if task != "regression" and args.log_target != "auto":
            raise ValueError(f"--log-target {args.log_target} applies to a regression (a "
                             f"{task}'s labels have no log): drop it, or give --task "
                             "regression.")
        search = make_search(args, task, search_budget(args, started))
        advance("searching")
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaled = with_scaling(args, search, X).fit(X, y)
        fit_s = time.perf_counter() - start
        # the model file holds the fitted scaling before the refitted best
        model = with_preprocessing(prep, search.best_estimator_ if scaled is search else
                                   make_pipeline(scaled[0], search.best_estimator_))
        advance("scoring and writing")
        X_eval, y_eval = (X_test, y_test) if args.test else (X, y)
        scored = model if prep is None else model[-1]  # X_eval is encoded already
        scores = quality(scored, y_eval, scored.predict(X_eval))
        args.model = FAMILIES[search.best_params_["family"]].cli_model
        save_fit(args, model, output, scores,
                 {"load_s": load_s, "fit_s": fit_s},
                 {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]), **record})
        scoring = search.scoring or ("r2" if task == "regression" else "accuracy")
        if len(search.cv_results_["params"]):
            draw_heatmap(search.cv_results_, heatmap, scoring=scoring,
                         title=f"{Path(str(args.train)).name}: {scoring} "
                               f"over {search.n_splits_} folds (best outlined in red)")
        else:
            heatmap = None
        widths_png = None
        names = encoded_names(prep, record)
        png = Path(output).with_name(Path(output).stem + ".widths.png")
        learned_file = None
        if search.kernel_metric_ is not None:
            widths_png = draw_metric(search.kernel_metric_, png, names,
                                     title=f"{Path(str(args.train)).name}: learned kernel metric")
            # fit --gamma FILE reuses it (the metric of the encoded columns)
            learned_file = Path(output).with_name(Path(output).stem + ".metric.npy")
            np.save(learned_file, search.kernel_metric_.metric_.matrix)
        elif search.widths_ is not None:
            widths_png = draw_widths(search.widths_, png, names,
                                     title=f"{Path(str(args.train)).name}: learned kernel widths")
            learned_file = Path(output).with_name(Path(output).stem + ".widths.txt")
            learned_file.write_text("\n".join(f"{g:.9g}" for g in search.widths_.gamma_) + "\n")
    print_warnings(caught)
    print(f"train: {args.train}: {describe(X, y, task)}")
    print(f"families: {search.family_choice_}")
    for record in search.stages_:  # where the time went, stage by stage
        print(f"stage {record.line()}")
    budget_text = "" if args.time_budget is None else \
        f" of the {parse_duration(args.time_budget):.0f} s budget (the command: " \
        f"{time.perf_counter() - started:.1f} s, reading the data {load_s:.1f} s)"
    print(f"time used: {search.budget_used_:.1f} s by the search{budget_text}")
    done = len(search.cv_results_["params"])
    print(f"searched {done} configurations x {search.n_splits_} folds in "
          f"{search.search_time_:.1f} s{'' if search.complete_ else ' (stopped early)'}; "
          f"refit {search.refit_time_:.1f} s")
    if any(r.outcome == "interrupted" for r in search.stages_):
        print(f"stopped early: best of {search.n_scored_} scored (Ctrl-C); the model is the "
              f"{search.model_origin_} on {search.refit_rows_} rows")
    for r in search.halving_ or []:
        lines = ", ".join(f"{line} ({count} gammas)" for line, count in r["gammas"].items())
        print(f"race on {r['rows']} rows: {lines}")
    for line, note in (search.lines_ or {}).items():
        if note.startswith("retired"):
            print(f"line {line}: {note}")
    if search.kernel_metric_ is not None:
        print("\n".join(metric_lines(search.kernel_metric_, names)))
    elif search.widths_ is not None:
        print("\n".join(widths_lines(search.widths_, names)))
    for line in search.leaderboard(args.top):
        print(line)
    best = dict(search.best_params_)
    learned = "metric" if search.kernel_metric_ is not None else \
        ("widths" if search.widths_ is not None else None)
    if best.get("leaf_widths"):
        best["gamma"] = "each leaf's own widths"
    elif learned and search.best_index_ is not None:
        best["gamma"] = (f"{search.cv_results_['params'][search.best_index_]['gamma']:.3g} x "
                         f"the learned {learned}")
    scored_rows = (search.cv_results_["n_resources"][search.best_index_]
                   if search.best_index_ is not None else search.refit_rows_)
    print(f"best: {best} (CV {search.best_score_:.4f} on {scored_rows} rows; "
          f"{search.model_origin_} on {search.refit_rows_} rows)")
    if search.ensemble_ is not None:
        weights = search.ensemble_["weights"]
        for member, weight in zip(search.ensemble_["members"], weights):
            print(f"  ensemble member (weight {weight}/{sum(weights)}): {member}")
    print(f"{'test' if args.test else 'training'} {format_quality(scores)}")
    print(f"model written to {output}")
    if heatmap is not None:
        print(f"heatmap written to {heatmap}")
    if widths_png is not None:
        print(f"widths written to {widths_png}")
    if learned_file is not None:
        print(f"learned {'metric' if learned_file.suffix == '.npy' else 'widths'} written to "
              f"{learned_file} (fit --gamma {learned_file.name} reuses them)")
    return 0
